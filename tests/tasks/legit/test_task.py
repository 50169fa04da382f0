"""The LEGIT task end to end with scripted offline models: grader refusal, scoring, retries, metrics."""

import math
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from koblex_tasks.data.legit.dataset import read_legit_file
from koblex_tasks.scorers.metrics import metric_values
from koblex_tasks.tasks.legit.task import legit
from tests.legit_helpers import CountingModel, ScriptedJudge

EASY = "부산지방법원-2017구합23"
MEDIUM = "부산지방법원동부지원-2015가합938"
HARD = "대전지방법원-2016가단7699"


def run(task, model, log_dir: Path, grader=None):
    roles = {"grader": grader} if grader is not None else None
    [log] = inspect_eval(task, model=model, model_roles=roles, display="none", log_dir=str(log_dir))
    return log


def metrics(log) -> dict[str, dict[str, float]]:
    return {s.name: metric_values(s) for s in log.results.scores}


def scored(log, name: str) -> int | None:
    return next(s.scored_samples for s in log.results.scores if s.name == name)


def test_refuses_without_grader_before_any_generation(tiny_legit, tmp_path) -> None:
    """Runs without the shared data: the refusal must hold wherever the task runs."""
    evaluated = CountingModel()
    log = run(legit(data=str(tiny_legit)), evaluated.model(), tmp_path)
    assert log.status == "error"
    assert "cannot be scored without a judge" in log.error.message
    assert "--model-role grader=" in log.error.message
    assert evaluated.calls == 0


def test_refusal_survives_a_replaced_solver(tiny_legit, tmp_path) -> None:
    """`--solver` replaces the main solver but not the task's setup step."""
    from koblex_tasks.solvers.legit.predict import legit_predict

    evaluated = CountingModel()
    [log] = inspect_eval(
        legit(data=str(tiny_legit)),
        solver=legit_predict(),
        model=evaluated.model(),
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "error" and evaluated.calls == 0


def test_scripted_judge_end_to_end(sample_file, sample_records, tmp_path) -> None:
    script = {
        (EASY, "1.1"): (True, False),
        (EASY, "1.2"): (False, False),
        (MEDIUM, ""): (False, True),
        (MEDIUM, "1.1.1"): (False, False),
        (HARD, "2.1"): (True, False),
        (HARD, "3"): (True, False),
        (HARD, "3.2"): (False, False),
        (HARD, "4"): (False, False),
    }
    expected = {
        "paper": {EASY: 5 + 4 / 3 + 1, MEDIUM: 8.75, HARD: 8.0},
        "official": {EASY: 2 / 3, MEDIUM: 3.75, HARD: 2.375},
    }
    for rule, totals in expected.items():
        judge = ScriptedJudge(sample_records, script)
        evaluated = CountingModel()
        task = legit(data=str(sample_file), rule=rule, doc_ids=[EASY, MEDIUM, HARD])
        log = run(task, evaluated.model(), tmp_path, judge.model())
        assert log.status == "success", log.error
        assert evaluated.calls == 3
        assert judge.total_calls == 4 + 5 + 9  # one call per node, root included
        by_doc = {s.id: s.scores["legit_rubric"] for s in log.samples}
        for doc, total in totals.items():
            assert by_doc[doc].value["legit_score"] == pytest.approx(total), (rule, doc)
            assert by_doc[doc].value["judge_failure_rate"] == 0
        meta = by_doc[EASY].metadata
        assert (
            meta["issues"]["1.1"]["contains_issue"] is True
            and meta["issues"]["1.1"]["correct_conclusion"] is False
        )
        assert meta["issues"]["1.1"]["raw"].startswith("<OUTPUT>{")
        assert meta["judge_usage"]["total_tokens"] == 4 * 15
        assert meta["judge_prompt"]["name"] == "legit/judge" and len(meta["judge_prompt"]["sha256"]) == 64
        assert meta["judge_model"] == "mockllm/model" and meta["rule"] == rule
        m = metrics(log)
        # one sample per difficulty: the paper's mean of difficulty means equals the plain mean here
        assert m["legit_score"]["mean"] == pytest.approx(sum(totals.values()) / 3)
        assert m["legit_score"]["grouped_easy"] == pytest.approx(totals[EASY])
        assert m["legit_score"]["grouped_hard"] == pytest.approx(totals[HARD])
        assert m["legit_score"]["grouped_difficulty_mean"] == pytest.approx(sum(totals.values()) / 3)
        assert scored(log, "legit_score") == 3
        assert set(m) == {"legit_score", "final_order", "coverage", "correctness", "judge_failure_rate"}
        assert set(m["coverage"]) == {
            "mean",
            "bootstrap_ci_lower",
            "bootstrap_ci_upper",
            "grouped_easy",
            "grouped_medium",
            "grouped_hard",
            "grouped_difficulty_mean",
        }


def test_unparsable_judge_is_retried_then_unscored(sample_file, sample_records, tmp_path) -> None:
    script = {
        (EASY, "1.2"): ["I cannot decide.", '{"contains_issue": "maybe"}', "still no"],  # never parsable
        (MEDIUM, "1"): [
            "garbled",
            '<OUTPUT>{"rationales": "ok", "contains_issue": true, "correct_conclusion": true}',
        ],
    }
    judge = ScriptedJudge(sample_records, script)
    task = legit(data=str(sample_file), doc_ids=[EASY, MEDIUM], judge_retries=2)
    log = run(task, CountingModel().model(), tmp_path, judge.model())
    assert log.status == "success", log.error
    assert judge.calls[(EASY, "1.2")] == 3  # 1 + 2 retries
    assert judge.calls[(MEDIUM, "1")] == 2  # parsed on the first retry
    by_doc = {s.id: s.scores["legit_rubric"] for s in log.samples}
    easy = by_doc[EASY]
    assert math.isnan(easy.value["legit_score"]) and math.isnan(easy.value["coverage"])
    assert easy.value["judge_failure_rate"] == pytest.approx(1 / 4)
    assert easy.reason == "grader_failed"
    issue = easy.metadata["issues"]["1.2"]
    assert issue["contains_issue"] is None and issue["attempts"] == 3 and issue["raw"] == "still no"
    assert issue["raw_retried"] == ["I cannot decide.", '{"contains_issue": "maybe"}']
    assert easy.metadata["issues"]["1"]["contains_issue"] is True  # other labels kept
    assert by_doc[MEDIUM].value["legit_score"] == pytest.approx(10.0)
    m = metrics(log)
    assert scored(log, "legit_score") == 1  # the unscored sample is left out, not averaged as 0
    assert m["legit_score"]["mean"] == pytest.approx(10.0)
    assert m["judge_failure_rate"]["mean"] == pytest.approx((1 / 4 + 0) / 2)
    assert m["judge_failure_rate"]["pooled_failure_rate"] == pytest.approx(1 / 9)


def test_task_filters_and_metadata(sample_file) -> None:
    task = legit(data=str(sample_file), difficulty="hard")
    assert len(task.dataset) == 4
    sample = task.dataset[0]
    assert sample.input == read_legit_file(sample_file)[16].question
    assert sample.metadata["difficulty"] == "hard" and sample.metadata["issues"][0]["id"] == ""
    assert task.metadata["benchmark"] == "legit" and len(task.metadata["dataset_sha256"]) == 64
    with pytest.raises(ValueError, match="rule"):
        legit(data=str(sample_file), rule="lenient")
    with pytest.raises(ValueError, match="difficulty"):
        legit(data=str(sample_file), difficulty="extreme")


def test_tiny_record_scores_offline(tiny_legit, tmp_path) -> None:
    """The whole pipeline without the shared data: root right, issue covered but wrong -> 5 + 2/1."""
    records = read_legit_file(tiny_legit)
    judge = ScriptedJudge(records, {(records[0].doc_id, "1"): (True, False)})
    log = run(legit(data=str(tiny_legit)), CountingModel().model(), tmp_path, judge.model())
    assert log.status == "success", log.error
    by_doc = {s.id: s.scores["legit_rubric"].value["legit_score"] for s in log.samples}
    assert by_doc == {records[0].doc_id: pytest.approx(7.0), records[1].doc_id: pytest.approx(7.0)}


def test_pooled_failure_rate_is_right_with_two_epochs(sample_file, sample_records, tmp_path) -> None:
    """The pooled rate is computed from the reduced per-sample values weighted by the (epoch-invariant)
    issue count in the sample metadata, so two epochs pool both epochs' judge failures."""
    n = {r.doc_id: len(r.issues) for r in sample_records}
    script = {
        (EASY, "1.2"): ["garbled", '<OUTPUT>{"contains_issue": true, "correct_conclusion": true}'],  # 1 of 2
        (MEDIUM, "1"): ["never json"],  # fails in both epochs
    }
    judge = ScriptedJudge(sample_records, script)
    task = legit(data=str(sample_file), doc_ids=[EASY, MEDIUM], judge_retries=0)
    [log] = inspect_eval(
        task,
        model=CountingModel().model(),
        model_roles={"grader": judge.model()},
        epochs=2,
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert judge.calls[(EASY, "1.2")] == 2 and judge.calls[(MEDIUM, "1")] == 2
    pooled = metrics(log)["judge_failure_rate"]["pooled_failure_rate"]
    assert pooled == pytest.approx(3 / (2 * (n[EASY] + n[MEDIUM])))
