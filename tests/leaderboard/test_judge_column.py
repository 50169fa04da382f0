"""A judge-graded column end to end: an LF-Eval run submitted, built, and shown with its judge provenance."""

import json
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from koblex_tasks.leaderboard.cli import leaderboard_main
from koblex_tasks.solvers import standard_prompting
from koblex_tasks.tasks import koblex
from tests.audit.test_lf_eval_audit import _answer, judge_reply


def test_lf_eval_column_shows_judge_prompt_and_unscored_rate(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    model = get_model("mockllm/model", custom_outputs=lambda *a: _answer())
    judge = get_model("mockllm/model", custom_outputs=judge_reply)
    task = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), judge=True)
    [log] = inspect_eval(
        task,
        solver=standard_prompting(),
        model=model,
        model_roles={"grader": judge},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success"
    db, site = tmp_path / "board.sqlite", tmp_path / "site"
    assert leaderboard_main(["submit", "--db", str(db), log.location]) == 0
    assert leaderboard_main(["build", "--db", str(db), "--out", str(site), "--resamples", "200"]) == 0
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))["boards"][0]
    assert board["corpus_status"] == "partial"
    lf = next(m for m in board["metrics"] if m["metric"] == "lf_eval")
    assert lf["judge"]["models"] == ["mockllm/model"]
    [prompt] = lf["judge"]["prompts"]
    assert prompt.startswith("koblex/lf_eval@v1.en sha256:")
    [row] = lf["rows"].values()
    assert row["mean"] == 60.0 and row["unscored_rate"] == 0.0  # judge scores 9 and 3, x10
    provenance = board["runs"][0]["provenance"]
    assert provenance["judges"]["lf_eval"]["modes"] == {"logprobs": 2}
    page = (site / "index.html").read_text(encoding="utf-8")
    assert "koblex/lf_eval@v1.en" in page
