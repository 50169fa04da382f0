"""A judge-graded column end to end: an LF-Eval run submitted, built, and shown with its judge provenance."""

import json
from pathlib import Path

from koblex_tasks.cli.leaderboard import leaderboard_main


def test_lf_eval_column_shows_judge_prompt_and_unscored_rate(judged_log: str, tmp_path: Path) -> None:
    db, site = tmp_path / "board.sqlite", tmp_path / "site"
    assert leaderboard_main(["submit", "--db", str(db), judged_log]) == 0
    assert leaderboard_main(["build", "--db", str(db), "--out", str(site), "--resamples", "200"]) == 0
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))["boards"][0]
    assert board["corpus_status"] == "full"  # closed book by evidence: no sample retrieves
    lf = next(m for m in board["metrics"] if m["metric"] == "lf_eval")
    assert lf["judge"]["models"] == ["mockllm/model"]
    [prompt] = lf["judge"]["prompts"]
    assert prompt.startswith("koblex/lf_eval@v2.en sha256:")
    [row] = lf["rows"].values()
    assert row["mean"] == 60.0 and row["unscored_rate"] == 0.0  # judge scores 9 and 3, x10
    provenance = board["runs"][0]["provenance"]
    assert provenance["judges"]["lf_eval"]["modes"] == {"logprobs": 2}
    page = (site / "index.html").read_text(encoding="utf-8")
    assert "koblex/lf_eval@v2.en" in page
