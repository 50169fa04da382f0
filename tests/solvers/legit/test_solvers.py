"""The prediction prompts the evaluated model receives: the paper's, and the statute-RAG variant."""

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage
from inspect_ai.solver import Solver

from koblex_tasks.prompts import load_prompt
from koblex_tasks.solvers.legit.rag import legit_rag
from koblex_tasks.tasks.legit.task import legit
from tests.legit_helpers import CountingModel, ScriptedJudge

EASY = "부산지방법원-2017구합23"
OFFICIAL_SYSTEM_PROMPT = (
    "당신은 한국의 법률 전문가입니다. 주어진 사안과 청구취지를 잘 읽고 "
    "판결의 결과를 관련 법령/대법원 판례가 잘 드러나도록, "
    "가능한 주장/항변/재항변 등을 폭넓게 검토한 뒤 판결의 결과를 예측하세요."
)


def predict(
    task: Task, sample_records, tmp_path, solver: Solver | None = None
) -> tuple[EvalLog, list[ChatMessage]]:
    """Run `task` (with `solver`, if given) against a counting model; the log and the one prompt it saw."""
    evaluated = CountingModel()
    judge = ScriptedJudge(sample_records, {})
    [log] = inspect_eval(
        task,
        solver=solver,
        model=evaluated.model(),
        model_roles={"grader": judge.model()},
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    [messages] = evaluated.inputs
    return log, messages


def test_predict_prompt_is_the_papers(sample_file, sample_records, tmp_path) -> None:
    log, messages = predict(legit(data=str(sample_file), doc_ids=EASY), sample_records, tmp_path)
    assert [m.role for m in messages] == ["system", "user"]
    assert messages[0].text == OFFICIAL_SYSTEM_PROMPT == load_prompt("legit/system").text
    record = next(r for r in sample_records if r.doc_id == EASY)
    assert messages[1].text == record.question
    assert set(log.samples[0].metadata["prompts"]) == {"system", "predict"}


def test_rag_puts_retrieved_provisions_above_the_question(
    sample_file, sample_records, tiny_corpus, tmp_path
) -> None:
    task = legit(data=str(sample_file), doc_ids=EASY, corpus=str(tiny_corpus), tokenizer="official")
    log, messages = predict(task, sample_records, tmp_path, solver=legit_rag(k=2))
    assert messages[0].text == OFFICIAL_SYSTEM_PROMPT
    user = messages[1].text
    record = next(r for r in sample_records if r.doc_id == EASY)
    lines = user.split("\n\n", 1)[0].splitlines()
    assert len(lines) == 2 and all(line.startswith("- ") for line in lines)
    assert user == "".join(line + "\n" for line in lines) + "\n" + record.question
    retrieval = log.samples[0].metadata["legit_retrieval"]
    assert retrieval["k"] == 2 and len(retrieval["hits"]) == 2
    assert retrieval["settings"]["corpus"] == str(tiny_corpus)
    assert set(log.samples[0].metadata["prompts"]) == {"system", "rag"}


def test_rag_refuses_a_non_positive_k_when_built() -> None:
    with pytest.raises(ValueError, match="k must be positive"):
        legit_rag(k=0)
