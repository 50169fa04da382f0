"""Replay of released LEGIT response files with a scripted judge, and the judge-label bridge to the audit."""

import json
from pathlib import Path

import pytest

from koblex_tasks.audit.legit.judge_labels import load_judge_labels_from_log
from koblex_tasks.audit.legit.labels import labeller_from_records
from koblex_tasks.data.legit.responses import infer_model_name, load_responses
from koblex_tasks.errors import DataError
from koblex_tasks.solvers.legit.replay import legit_replay
from koblex_tasks.tasks.legit.replay import run_legit_replay
from koblex_tasks.tasks.legit.task import legit
from tests.legit_helpers import ScriptedJudge, eval_one

EASY = "부산지방법원-2017구합23"
MEDIUM = "부산지방법원동부지원-2015가합938"


def test_replay_released_file_end_to_end(legit_shared, sample_file, sample_records, tmp_path) -> None:
    released = legit_shared / "released_responses" / "o3.jsonl"
    responses = load_responses(released)
    assert len(responses) == 25  # 20 sample docs + 5 lawyer-graded docs outside the sample
    judge = ScriptedJudge(sample_records, {(EASY, "1.1"): (True, False)})
    log = run_legit_replay(str(released), data=str(sample_file), grader=judge.model(), log_dir=str(tmp_path))
    assert log.status == "success"
    assert log.eval.model == "replay/o3"
    assert log.eval.task_args.get("responses") == str(released)
    assert log.eval.metadata["generator"] == "o3"
    assert len(log.samples) == 20  # restricted to documents present in both
    assert judge.total_calls == sum(len(r.issues) for r in sample_records)
    # the judge saw the released response as the TEXT
    assert any(f"<TEXT>\n{responses[EASY]}\n</TEXT>" in p for p in judge.prompts)
    scores = {s.id: s.scores["legit_rubric"].value["legit_score"] for s in log.samples}
    assert scores[EASY] == pytest.approx(5 + 3 * 2 / 3 + 2 * 3 / 3)  # 1.1 covered but wrong
    assert all(v == pytest.approx(10) for k, v in scores.items() if k != EASY)
    assert all(s.output.completion == responses[s.id] for s in log.samples)

    # bridge to the audit: one record per judged node, in the shape labeller_from_records wants
    records = list(load_judge_labels_from_log(log.location))
    assert len(records) == judge.total_calls
    row = next(r for r in records if r["doc_id"] == EASY and r["issue_id"] == "1.1")
    assert row == {
        "generator": "o3",
        "doc_id": EASY,
        "issue_id": "1.1",
        "contains_issue": True,
        "correct_conclusion": False,
        "score": pytest.approx(2 / 3),
    }
    labeller = labeller_from_records("judge mockllm", records)
    assert len(labeller) == judge.total_calls
    assert labeller[("o3", EASY, "")].score == 5
    renamed = list(load_judge_labels_from_log(log.location, generator="o3-renamed"))
    assert {r["generator"] for r in renamed} == {"o3-renamed"}


def _subset(released: Path, target: Path, docs: list[str], extra: dict | None = None) -> Path:
    rows = [json.loads(line) for line in released.read_text(encoding="utf-8").splitlines() if line.strip()]
    keep = [r for r in rows if r["doc_id"] in docs] + ([extra] if extra else [])
    target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in keep), encoding="utf-8")
    return target


def test_missing_response_names_the_doc(legit_shared, sample_file, sample_records, tmp_path) -> None:
    extra = {"doc_id": "없는법원-2099가합1", "response": "응답"}
    path = _subset(
        legit_shared / "released_responses" / "gpt-4.1.jsonl",
        tmp_path / "reasoning_tasks_x.jsonl",
        [EASY],
        extra,
    )
    assert infer_model_name(path) == "x"
    judge = ScriptedJudge(sample_records, {})
    # without restriction, a sample with no response is an error that names the document
    task = legit(data=str(sample_file), doc_ids=[EASY, MEDIUM])
    log = eval_one(task, tmp_path, "replay/x", judge.model(), solver=legit_replay(file=str(path)))
    assert (
        log.status == "error" and MEDIUM in log.error.message and "no response for doc" in log.error.message
    )
    # with restriction (run_legit_replay's default) only the answered document runs; the extra one is ignored
    log = run_legit_replay(str(path), data=str(sample_file), grader=judge.model(), log_dir=str(tmp_path))
    assert [s.id for s in log.samples] == [EASY]
    assert log.eval.metadata is not None
    with pytest.raises(RuntimeError, match="no response for doc '청주지방법원영동지원-2020가단4217'"):
        run_legit_replay(
            str(_subset(path, tmp_path / "one.jsonl", [EASY])),
            data=str(sample_file),
            grader=judge.model(),
            log_dir=str(tmp_path),
            restrict=False,
            limit=2,
        )
    with pytest.raises(ValueError, match="grader"):
        run_legit_replay(str(path), data=str(sample_file), grader=None, log_dir=str(tmp_path))


def test_response_file_is_read_strictly(tmp_path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"doc_id": "a", "response": "x"}\n{"doc_id": "a", "response": "y"}\n')
    with pytest.raises(DataError, match=r":2: duplicate doc_id 'a' \(first on line 1\)"):
        load_responses(path)
    path.write_text('{"doc_id": "a", "response": null}\n')
    with pytest.raises(DataError, match=r":1: field 'response' must be a string"):
        load_responses(path)
    path.write_text('{"response": "x"}\n')
    with pytest.raises(DataError, match=r":1: missing non-empty string field 'doc_id'"):
        load_responses(path)
