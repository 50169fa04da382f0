"""`koblex judge-audit --lf-eval`: LF-Eval judge scores from a log against human ratings."""

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import GenerateConfig, Logprob, Logprobs, ModelOutput, TopLogprob, get_model

from koblex_tasks.audit.cli import judge_audit_main
from koblex_tasks.audit.ratings import load_ratings
from koblex_tasks.errors import DataError
from koblex_tasks.solvers import standard_prompting
from koblex_tasks.tasks import koblex
from koblex_tasks.testing.mock_provider import usage_for

JUDGE_SCORES = {"q1": "9", "q2": "3"}


def judge_reply(messages, tools, tool_choice, config: GenerateConfig) -> ModelOutput:
    prompt = messages[-1].text
    token = JUDGE_SCORES["q1" if "운송물" in prompt else "q2"]
    out = ModelOutput.from_content(model="judge", content=token)
    out.choices[0].logprobs = Logprobs(
        content=[Logprob(token=token, logprob=0.0, top_logprobs=[TopLogprob(token=token, logprob=0.0)])]
    )
    out.usage = usage_for(prompt, token)
    return out


@pytest.fixture
def judged_log(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> str:
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
    return log.location


def _answer() -> ModelOutput:
    out = ModelOutput.from_content(model="m", content="Answer: 소멸한다")
    out.usage = usage_for("x", "y")
    return out


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
