"""LF-Eval's sensitivity variants: the judge's Context (gold / none / retrieved) and its expected output, each
changing only that part of the judge's input, recorded in the score and the protocol record."""

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.tasks.koblex.task import koblex
from tests.conftest import TINY_STATUTES, judge_reply
from tests.solvers.koblex.scripted import ScriptedModel

GUESS = '["형법 강도상해 강도가 사람을 상해하거나"]'


def judged(tiny_questions: Path, tiny_corpus: Path, **task_args) -> tuple[list[str], object]:
    seen: list[str] = []

    def judge(messages, *rest):
        seen.append(messages[-1].text)
        return judge_reply(messages, *rest)

    model = ScriptedModel(
        lambda kind, p: {"provisions": GUESS, "select": "Answer: 0"}.get(kind, "Answer: 답")
    )
    task = koblex(
        data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none", judge=True,
        solver=parser(k=3, l=2), **task_args,
    )  # fmt: skip
    [log] = inspect_eval(
        task, model=model.model(), model_roles={"grader": get_model("mockllm/model", custom_outputs=judge)},
        display="none", log_dir=str(tiny_corpus.parent / "logs"),
    )  # fmt: skip
    assert log.status == "success", log.error
    return seen, log


def test_paper_context_is_the_gold_provisions(tiny_questions: Path, tiny_corpus: Path) -> None:
    seen, log = judged(tiny_questions, tiny_corpus)
    assert any(TINY_STATUTES[3]["content"][:20] in p for p in seen)  # a gold provision of q2, as Context
    assert log.eval.metadata["protocol"].get("judge_context") is None


def test_judge_context_none_sends_no_provisions(tiny_questions: Path, tiny_corpus: Path) -> None:
    seen, log = judged(tiny_questions, tiny_corpus, judge_context="none", judge_reference=False)
    assert len(seen) == 2
    for prompt in seen:
        assert not any(row["content"][:20] in prompt for row in TINY_STATUTES)
        assert "정답은 소멸한다" not in prompt  # the reference answer is left out too
    score = log.samples[0].scores["lf_eval"]
    assert score.metadata["judge_context"] == "none" and score.metadata["judge_reference"] is False
    protocol = log.eval.metadata["protocol"]
    assert protocol["judge_context"] == {"value": "none", "paper": "gold"}
    assert protocol["judge_reference"] == {"value": False, "paper": True}


def test_judge_context_retrieved_sends_what_the_method_used(tiny_questions: Path, tiny_corpus: Path) -> None:
    seen, log = judged(tiny_questions, tiny_corpus, judge_context="retrieved")
    for sample in log.samples:
        used = sample.store["ProvisionEvidence:predicted"]
        prompt = next(p for p in seen if sample.metadata["question"] in p)
        assert all(key in prompt for key in used) and used


def test_an_unknown_judge_context_is_refused(tiny_questions: Path, tiny_corpus: Path) -> None:
    with pytest.raises(Exception, match="judge_context"):
        koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none", judge_context="all")
