"""`koblex judge-audit` on eval logs: a judge's log vs lawyer-style labels, and two judges against each other."""

import csv
import json
from pathlib import Path

import pytest

from koblex_tasks.audit.legit.judge_labels import load_judge_labels_from_log
from koblex_tasks.audit.legit.labels import LABEL_COLUMNS
from koblex_tasks.cli.audit import judge_audit_main
from koblex_tasks.tasks.legit.replay import run_legit_replay
from tests.legit_helpers import ScriptedJudge

EASY = "부산지방법원-2017구합23"


def _labels_csv(path: Path, records: list[dict], flip: set[tuple[str, str]]) -> Path:
    """Two 'lawyer' groups copied from a judge's records; group 2 disagrees on the `flip` nodes."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(LABEL_COLUMNS)
        for group in (1, 2):
            for r in records:
                correct = r["correct_conclusion"] ^ (group == 2 and (r["doc_id"], r["issue_id"]) in flip)
                writer.writerow(
                    [
                        group,
                        r["generator"],
                        r["doc_id"],
                        r["issue_id"],
                        f"A{group}",
                        int(r["contains_issue"]),
                        int(correct),
                        r["score"],
                    ]
                )
    return path


def test_audit_of_judge_logs(
    legit_shared, sample_file, sample_records, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    released = legit_shared / "released_responses" / "o3.jsonl"
    strict = ScriptedJudge(sample_records, {(EASY, "1.1"): (True, False)})
    lenient = ScriptedJudge(sample_records, {})
    log_a = run_legit_replay(
        str(released), data=str(sample_file), grader=strict.model(), log_dir=str(tmp_path / "a")
    )
    log_b = run_legit_replay(
        str(released), data=str(sample_file), grader=lenient.model(), log_dir=str(tmp_path / "b")
    )
    records = list(load_judge_labels_from_log(log_a.location))
    labels = _labels_csv(tmp_path / "labels.csv", records, flip=set())

    code = judge_audit_main([str(labels), log_a.location, log_b.location, "--json", "--n-boot", "50"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    comparisons = report["comparisons"]
    # group1 vs group2, each group vs each judge (2 x 2), judge vs judge
    assert len(comparisons) == 1 + 4 + 1
    as_text = json.dumps(comparisons, ensure_ascii=False)
    assert "judge" in as_text and "o3.jsonl" not in str(labels)
    # the strict judge's log agrees perfectly with labels copied from it
    first_vs_strict = comparisons[1]
    shared = {b["label"]: b for b in first_vs_strict["binary"]}
    assert shared["contains_issue"]["raw_agreement"] == 1.0
    assert shared["correct_conclusion"]["raw_agreement"] == 1.0
    judge_vs_judge = comparisons[-1]
    disagreements = {b["label"]: b["units"] - b["agreements"] for b in judge_vs_judge["binary"]}
    assert disagreements["correct_conclusion"] == 1 and disagreements["contains_issue"] == 0


def test_unreadable_log_is_a_clear_error(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "l.csv"
    labels.write_text(
        "group,generator,doc_id,issue_id,annotator,contains_issue,correct_conclusion,score\n"
        "1,g,d,,A1,1,1,5\n2,g,d,,A4,1,1,5\n",
        encoding="utf-8",
    )
    assert judge_audit_main([str(labels), str(tmp_path / "judge.eval")]) == 2
    err = capsys.readouterr().err
    assert "judge.eval" in err and "Traceback" not in err


def test_cli_replays_legit_responses(
    legit_shared, sample_file, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`koblex replay` detects a LEGIT response file and refuses to score it without a judge."""
    from koblex_tasks.cli import main

    released = str(legit_shared / "released_responses" / "gpt-4.1.jsonl")
    assert main(["replay", released, "--data", str(sample_file), "--log-dir", str(tmp_path)]) == 2
    assert "pass --grader" in capsys.readouterr().err
    code = main(
        [
            "replay",
            released,
            "--data",
            str(sample_file),
            "--log-dir",
            str(tmp_path),
            "--grader",
            "koblexmock/judge",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("benchmark: legit  generator: gpt-4.1")
    headline = json.loads(out[-1])
    assert headline["legit_score"] == 10.0  # the scripted judge finds every issue covered and correct
