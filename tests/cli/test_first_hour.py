"""What a new user meets in the first hour, through the real commands: the mock answers the LEGIT Likert judge
(a mock Likert run scores), and LEGIT's `leaderboard submit` line says nothing of a statute corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from koblex_tasks.tasks.legit.mock import LIKERT_SCORE, legit_reply
from tests.cli.refusal import inspect_eval, koblex_cli

pytestmark = pytest.mark.slow
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def test_the_mock_answers_the_likert_prompt_in_its_format() -> None:
    from koblex_tasks.prompts import load_prompt
    from koblex_tasks.scorers.legit.likert import LIKERT_PROMPT

    template = load_prompt(LIKERT_PROMPT, "v1")
    answered = legit_reply(template.render(judgment="주문: 기각", response="기각될 것이다."))
    empty = legit_reply(template.render(judgment="주문: 기각", response=""))
    assert answered == f'{{"rationales": "scripted", "score": {LIKERT_SCORE}}}'
    assert empty == '{"rationales": "scripted", "score": 0}'


def test_a_legit_likert_mock_run_scores(shared_data: Path, tmp_path: Path) -> None:
    data = shared_data / "legit" / "legit_test_sample.jsonl"
    run = inspect_eval(
        "koblex_tasks/legit", "--model", "koblexmock/demo", "--model-role", "grader=koblexmock/judge",
        "-T", "likert=true", "-T", f"data={data}", "--limit", "2", cwd=tmp_path, env=OFFLINE,
    )  # fmt: skip
    assert run.returncode == 0, run.lines[-20:]
    (log,) = (tmp_path / "logs").glob("*.eval")
    header = read_eval_log(str(log), header_only=True)
    assert header.status == "success" and header.results is not None
    metrics = {s.name: s.metrics["mean"].value for s in header.results.scores if "mean" in s.metrics}
    assert metrics["likert_score"] == LIKERT_SCORE and metrics["likert_failure_rate"] == 0.0


def test_legit_submit_line_has_no_corpus_wording(shared_data: Path, tmp_path: Path) -> None:
    verdicts = (
        shared_data
        / "legit"
        / "released_verdicts"
        / "reasoning_tasks_gpt-4.1_evaluator_gemini-2.0-flash-001.jsonl"
    )
    data = shared_data / "legit" / "legit_test_sample.jsonl"
    replay = koblex_cli(
        "replay", "--verdicts", str(verdicts), "--data", str(data), "--log-dir", "logs", cwd=tmp_path
    )
    assert replay.returncode == 0, replay.lines[-20:]
    (log,) = (tmp_path / "logs").glob("*.eval")
    run = koblex_cli(
        "leaderboard", "submit", str(log), "--allow-subset", "--db", str(tmp_path / "db.sqlite"), cwd=tmp_path
    )
    assert run.returncode == 0 and run.line.startswith("stored run #1 ")
    assert "board 'legit · ko · rule=paper" in run.line and "corpus" not in run.line
