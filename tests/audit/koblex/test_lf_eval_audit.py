"""`koblex judge-audit --lf-eval`: LF-Eval judge scores from a log against human ratings."""

import json
from pathlib import Path

import pytest

from koblex_tasks.audit.koblex.ratings import load_ratings
from koblex_tasks.cli.audit import judge_audit_main
from koblex_tasks.errors import DataError


def test_lf_eval_audit_json(judged_log: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("sample_id,rating\nq1,5\nq2,1\nq3,4\n", encoding="utf-8")
    assert judge_audit_main([str(ratings), judged_log, "--lf-eval", "--json"]) == 0
    [result] = json.loads(capsys.readouterr().out)["lf_eval"]
    assert (result["shared"], result["only_a_count"], result["unscored"]) == (2, 1, 0)
    assert result["pearson"]["n"] == 2
    assert judge_audit_main([str(ratings), judged_log, "--lf-eval"]) == 0
    assert "spearman" in capsys.readouterr().out


def test_ratings_csv_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("sample_id,rating\nq1,high\n", encoding="utf-8")
    with pytest.raises(DataError, match=":2: rating 'high' is not a number"):
        load_ratings(bad)
    bad.write_text("sample_id,rating\nq1,1\nq1,2\n", encoding="utf-8")
    with pytest.raises(DataError, match="rated twice"):
        load_ratings(bad)
    bad.write_text("id,score\n", encoding="utf-8")
    assert judge_audit_main([str(bad), "x.eval", "--lf-eval"]) == 2
    assert "missing column" in capsys.readouterr().err
