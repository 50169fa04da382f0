"""Replay of released LEGIT judge verdicts: stored scores reproduced bit for bit, hostile rows, the log's record."""

import json
import math
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog

from koblex_tasks.cli import main
from koblex_tasks.data.legit.verdicts import load_verdicts, split_verdict_name
from koblex_tasks.errors import DataError
from koblex_tasks.scorers.legit.arithmetic import rubric_score
from koblex_tasks.scorers.legit.rubric import REPLAYED_MODE, rederive
from koblex_tasks.scorers.legit.verdicts import read_row
from koblex_tasks.scorers.metrics import metric_values
from koblex_tasks.tasks.legit.replay import run_verdict_replay

EASY = "부산지방법원-2017구합23"  # ids "", 1, 1.1, 1.2
BLOCKED = "서울중앙지방법원-2022가단24276"  # "1" covered but wrong: the official rule zeroes the root


@pytest.fixture(scope="module")
def verdict_files(legit_shared: Path) -> list[Path]:
    files = sorted((legit_shared / "released_verdicts").glob("*.jsonl"))
    assert files, "no released verdict file in released_verdicts/"
    return files


@pytest.fixture(scope="module")
def released(verdict_files: list[Path]) -> Path:
    return next(f for f in verdict_files if "gpt-4.1_evaluator_gemini-2.0-flash-001" in f.name)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _scores(log: EvalLog) -> dict[str, object]:
    return {str(s.id): s.scores["legit_rubric"] for s in log.samples}


def test_every_released_row_reproduces_its_stored_score_exactly(verdict_files, record_by_id) -> None:
    """Pure arithmetic over every row of every file in released_verdicts/: the official rule with the script's
    arithmetic gives the stored total and every stored per-issue score, with float equality."""
    checked = 0
    for path in verdict_files:
        for row in load_verdicts(path).rows.values():
            ids = record_by_id(row.doc_id).issue_ids
            replayed = read_row(ids, row.evaluation_result)
            result = rubric_score(ids, replayed.labels, "official", official_script=True)
            assert result.legit_score == row.score, (path.name, row.doc_id)
            for issue_id, record in row.evaluation_result.items():
                assert result.issue_scores[issue_id] == record["score"], (row.doc_id, issue_id)
            checked += 1
    assert checked >= 6


def test_replay_log_reproduces_stored_scores_under_the_official_script(
    released, sample_file, tmp_path
) -> None:
    result = run_verdict_replay(
        str(released), data=str(sample_file), log_dir=str(tmp_path), rule="official", official_script=True
    )
    log = result.log
    stored = {r["doc_id"]: r["score"] for r in _rows(released)}
    scores = _scores(log)
    assert set(scores) == set(stored)
    for doc, score in scores.items():
        assert score.value["legit_score"] == stored[doc]  # bit for bit
        check = score.metadata["replayed_verdicts"]["stored_check"]
        assert "official" in check["reproduced_by"]
        assert rederive(next(s for s in log.samples if s.id == doc), score, log.eval.metadata) == {
            k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in score.value.items()
        }
    assert result.reproduced["official"] == len(stored) and not result.mismatches.get("official")
    # the official stats script's figures: per-difficulty mean of the stored scores, then their mean
    easy = sum(stored.values()) / len(stored)
    assert result.stored_means() == {"easy": pytest.approx(easy), "difficulty_mean": pytest.approx(easy)}
    assert result.means()["easy"] == pytest.approx(easy)
    log_metrics = {e.name: metric_values(e) for e in log.results.scores}
    assert result.means()["easy"] == pytest.approx(log_metrics["legit_score"]["grouped_easy"])
    assert result.headline["legit_score"] == pytest.approx(easy)


def test_paper_rule_by_default_and_the_log_names_the_replayed_judge(released, sample_file, tmp_path) -> None:
    result = run_verdict_replay(str(released), data=str(sample_file), log_dir=str(tmp_path))
    log = result.log
    assert log.status == "success"
    assert log.eval.model == "replay/gpt-4.1" and log.eval.solver == "koblex_tasks/legit_verdicts"
    assert [s.name for s in log.eval.scorers] == ["legit_rubric"]
    role = log.eval.model_roles["grader"]
    assert role.model == "replay/gemini-2.0-flash-001" and role.args["mode"] == REPLAYED_MODE
    assert role.args["verdicts"] == str(released) and len(role.args["sha256"]) == 64
    meta = log.eval.metadata
    assert meta["judge_model"] == "replay/gemini-2.0-flash-001" and meta["rule"] == "paper"
    assert meta["official_script"] is False and meta["replayed_verdicts"]["rows"] == 6
    assert meta["judge"]["mode"] == REPLAYED_MODE
    scores = _scores(log)
    blocked = scores[BLOCKED]
    assert blocked.metadata["judge_model"] == "replay/gemini-2.0-flash-001"
    assert blocked.metadata["mode"] == REPLAYED_MODE and blocked.metadata["rule"] == "paper"
    # paper rule: the root's correct conclusion counts, whatever the covered-but-wrong "1" below it
    assert blocked.value["legit_score"] == pytest.approx(5 + 2 / 3 + 5 / 3 + 2 / 3)
    assert blocked.metadata["replayed_verdicts"]["stored_check"]["reproduced_by"] == ["official"]
    assert result.reproduced == {"official": 6, "paper": 5}
    assert result.best_rule() == "official"
    # both rules from the same logged labels: the log's own (paper) and the official one, re-derived
    assert result.means("official")["easy"] == pytest.approx(sum(r["score"] for r in _rows(released)) / 6)
    assert result.means("paper")["easy"] > result.means("official")["easy"]
    lines = "\n".join(result.lines())
    assert "rule official 6/6" in lines and "rows lacking issues: 0" in lines


def test_leaderboard_accepts_the_replay_and_reads_the_judge(released, sample_file, tmp_path) -> None:
    from koblex_tasks.leaderboard.submission import load_submission

    log = run_verdict_replay(str(released), data=str(sample_file), log_dir=str(tmp_path)).log
    submission = load_submission(log.location, allow_subset=True)
    assert submission.benchmark == "legit" and submission.subset
    assert submission.provenance["judge_model"] == "replay/gemini-2.0-flash-001"
    assert submission.provenance["judges"]["legit_rubric"]["modes"] == {REPLAYED_MODE: 6}


def test_rederive_detects_tampering(released, sample_file, tmp_path) -> None:
    log = run_verdict_replay(str(released), data=str(sample_file), log_dir=str(tmp_path)).log
    sample = next(s for s in log.samples if s.id == EASY)
    score = sample.scores["legit_rubric"]
    params = log.eval.metadata
    assert rederive(sample, score, params) == score.value
    tampered = score.model_copy(deep=True)
    tampered.metadata["issues"]["1.2"]["contains_issue"] = True  # was False
    assert rederive(sample, tampered, params)["legit_score"] != score.value["legit_score"]
    # a score whose recorded rule contradicts the run's re-derives to unscored (so its number is refused)
    relabelled = score.model_copy(deep=True)
    relabelled.metadata["rule"] = "official"
    assert set(rederive(sample, relabelled, params).values()) == {None}


def _hostile(released: Path, tmp_path: Path) -> Path:
    rows = {r["doc_id"]: r for r in _rows(released)}
    missing = rows[EASY]
    del missing["evaluation_result"]["1.1"]  # the official judge's reply did not parse: the script skipped it
    missing["evaluation_result"]["1"]["score"] = 2 / 2 + 3 / 2  # what the script stores then: N = 2
    missing["score"] = 5 + 2.5
    extra = rows["청주지방법원영동지원-2020가단4217"]
    extra["evaluation_result"]["7"] = {"rationales": "?", "contains_issue": True, "correct_conclusion": True}
    non_bool = rows["수원지방법원-2013구단1137"]
    non_bool["evaluation_result"]["1"]["contains_issue"] = "true"
    return _write(
        tmp_path / "reasoning_tasks_gpt-4.1_evaluator_gemini-2.0-flash-001.jsonl", list(rows.values())
    )


def test_hostile_rows_get_the_documented_outcome(released, sample_file, tmp_path) -> None:
    path = _hostile(released, tmp_path)
    ours = run_verdict_replay(str(path), data=str(sample_file), log_dir=str(tmp_path / "paper"))
    by_doc = _scores(ours.log)
    # missing issue: unscored under our arithmetic (never rescaled), counted; the failure rate shows it
    missing = by_doc[EASY]
    assert math.isnan(missing.value["legit_score"]) and missing.reason == "grader_failed"
    assert missing.value["judge_failure_rate"] == pytest.approx(1 / 4)
    assert missing.metadata["replayed_verdicts"]["missing"] == ["1.1"]
    assert "no verdict for issues ['1.1']" in missing.explanation
    # an id outside the tree: the row is not this tree's, unscored under every rule
    extra = by_doc["청주지방법원영동지원-2020가단4217"]
    assert math.isnan(extra.value["legit_score"]) and extra.reason == "scoring_failed"
    assert extra.metadata["replayed_verdicts"]["extra"] == ["7"]
    # a non-boolean label is never guessed
    non_bool = by_doc["수원지방법원-2013구단1137"]
    assert math.isnan(non_bool.value["legit_score"])
    assert "not JSON booleans" in non_bool.metadata["replayed_verdicts"]["invalid"]["1"]
    assert (ours.lacking_issues, ours.invalid) == (1, 2)
    assert len(ours.scores["paper"]["easy"]) == 3 and ours.rows["easy"] == 6
    for sample in ours.log.samples:  # unscored rows re-derive as unscored too
        assert rederive(sample, sample.scores["legit_rubric"], ours.log.eval.metadata) == {
            k: (None if math.isnan(v) else v) for k, v in sample.scores["legit_rubric"].value.items()
        }

    script = run_verdict_replay(
        str(path),
        data=str(sample_file),
        log_dir=str(tmp_path / "script"),
        rule="official",
        official_script=True,
    )
    by_doc = _scores(script.log)
    # the official script's arithmetic: the missing issue is dropped and N shrinks, reproducing the stored 7.5
    assert by_doc[EASY].value["legit_score"] == 7.5
    assert by_doc[EASY].metadata["replayed_verdicts"]["stored_check"]["reproduced_by"] == [
        "paper",
        "official",
    ]
    assert math.isnan(by_doc["청주지방법원영동지원-2020가단4217"].value["legit_score"])
    mismatched = {m.doc_id for m in script.mismatches["official"]}
    assert mismatched == {
        "청주지방법원영동지원-2020가단4217",
        "수원지방법원-2013구단1137",
    }  # listed, not hidden
    assert "not reproduced by rule official" in "\n".join(script.lines())


def test_a_row_for_an_unknown_document_is_an_error_before_any_eval(released, sample_file, tmp_path) -> None:
    rows = _rows(released)
    rows.append({**rows[0], "doc_id": "없는법원-2099가합1"})
    path = _write(tmp_path / "reasoning_tasks_x_evaluator_y.jsonl", rows)
    with pytest.raises(DataError, match=r"1 row\(s\) grade documents that are not in .*없는법원-2099가합1"):
        run_verdict_replay(str(path), data=str(sample_file), log_dir=str(tmp_path / "logs"))
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda rows: rows.append(dict(rows[0])), r":7: duplicate doc_id .* \(first on line 1\)"),
        (lambda rows: rows[1].update(evaluator_model="gpt-4.1"), "more than one evaluator_model"),
        (lambda rows: rows[2].pop("evaluation_result"), r":3: field 'evaluation_result' must be an object"),
        (lambda rows: rows[0].update(score="8.3"), r":1: field 'score' must be a finite number"),
        (
            lambda rows: rows[0]["evaluation_result"].update({"1": True}),
            "verdict for issue '1' must be an object",
        ),
    ],
)
def test_verdict_files_are_read_strictly(released, tmp_path, mutate, message) -> None:
    rows = _rows(released)
    mutate(rows)
    with pytest.raises(DataError, match=message):
        load_verdicts(_write(tmp_path / "v.jsonl", rows))


def test_file_names_and_judges() -> None:
    assert split_verdict_name("reasoning_tasks_gpt-4.1_evaluator_gemini-2.0-flash-001.jsonl") == (
        "gpt-4.1",
        "gemini-2.0-flash-001",
    )
    assert split_verdict_name(
        "reasoning_tasks_gemma3-4b_evaluator_gemma3-27b_fullreward_evaluator_gemini-2.5-pro.jsonl"
    ) == ("gemma3-4b_evaluator_gemma3-27b_fullreward", "gemini-2.5-pro")
    assert split_verdict_name("reasoning_tasks_exaone3.5:32b_evaluator_gpt-4.1.jsonl") == (
        "exaone3.5:32b",
        "gpt-4.1",
    )
    assert split_verdict_name("mine.jsonl") == ("mine", None)


def test_cli_verdict_replay(released, sample_file, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["replay", "--verdicts", str(released), "--data", str(sample_file), "--log-dir", str(tmp_path)]
    assert main([*base, "--rule", "official", "--official"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("benchmark: legit  generator: gpt-4.1  judge: replay/gemini-2.0-flash-001")
    assert any("rule official 6/6" in line for line in out)
    headline = json.loads(out[-1])
    stored = [r["score"] for r in _rows(released)]
    assert headline["legit_score"] == pytest.approx(sum(stored) / len(stored))
    # --verdicts brings its own judge; a --grader is a usage error
    assert main([*base, "--grader", "koblexmock/judge"]) == 2
    assert "no --grader" in capsys.readouterr().err
    # a verdict file given without --verdicts and without a grader: the refusal says how to replay it
    assert main(["replay", str(released), "--data", str(sample_file), "--log-dir", str(tmp_path)]) == 2
    assert "or --verdicts" in capsys.readouterr().err


def test_cli_unknown_document_is_one_line(released, sample_file, tmp_path, capsys) -> None:
    rows = [*_rows(released), {**_rows(released)[0], "doc_id": "없는법원-2099가합1"}]
    path = _write(tmp_path / "v.jsonl", rows)
    assert (
        main(["replay", "--verdicts", str(path), "--data", str(sample_file), "--log-dir", str(tmp_path)]) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("koblex replay: error: ") and "없는법원-2099가합1" in err[0]
