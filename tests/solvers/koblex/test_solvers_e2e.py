"""Every KoBLEX solver end to end on a tiny corpus with a scripted model: calls made, evidence recorded."""

from pathlib import Path

import pytest
from inspect_ai.log import EvalLog

from koblex_tasks.solvers.koblex.chain_of_thought import chain_of_thought
from koblex_tasks.solvers.koblex.one_time_retrieval import one_time_retrieval
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.solvers.koblex.standard_prompting import standard_prompting
from koblex_tasks.tasks.koblex.task import koblex
from tests.conftest import TINY_STATUTES, statute_key
from tests.solvers.koblex.scripted import ScriptedModel, answer_of, evidence_of, run_koblex, sample

ROBBERY, QUASI = statute_key(TINY_STATUTES[2]), statute_key(TINY_STATUTES[3])
GUESSES = '["형법 (강도상해) 강도가 사람을 상해하거나 상해에 이르게 한때에는", "형법 (준강도) 절도가 재물의 탈환에 항거하거나 폭행"]'


def run(solver, model: ScriptedModel, questions: Path, corpus: Path, **task_args) -> EvalLog:
    log = run_koblex(solver, model.model(), questions, corpus, **task_args)
    assert log.status == "success", log.error
    return log


@pytest.mark.parametrize("tokenizer", ["official", "kiwi"])
def test_parser_pipeline(tiny_questions: Path, tiny_corpus: Path, tokenizer: str) -> None:
    model = ScriptedModel(
        lambda kind, p: {"provisions": GUESSES, "select": "Answer: 0"}.get(kind, "Answer: 처벌된다")
    )
    log = run(
        parser(k=100, l=10, official_selection_bug=False),
        model,
        tiny_questions,
        tiny_corpus,
        tokenizer=tokenizer,
    )
    s = sample(log, "q2")
    ev = evidence_of(s)
    assert ev["method"] == "parser" and ev["uses_retrieval"] is True
    assert len(ev["queries"]) == 2 and ev["queries"][0].startswith("형법 (강도상해)")
    assert ev["retrieved"][0][0] == ROBBERY and ev["retrieved"][1][0] == QUASI
    assert ev["predicted"] == [ROBBERY, QUASI]
    assert s.output.completion == "Answer: 처벌된다" and answer_of(s) == "처벌된다"
    assert s.scores["provision_match"].value["provision_em"] == 1.0
    # per sample: one provisions call, one selection per guess, one answer
    assert len(model.of_kind("provisions")) == 2 and len(model.of_kind("select")) == 4
    answer_prompt = next(p for p in model.of_kind("answer") if "강도가 상해" in p)
    assert ROBBERY in answer_prompt and QUASI in answer_prompt
    select_prompt = next(p for p in model.of_kind("select") if "강도가 상해" in p)
    assert "Candidates: \n0: " in select_prompt
    stages = {"parser_provisions", "parser_select", "parser_answer"}
    assert set(s.metadata["prompts"]) == stages | {f"{name}_system" for name in stages}
    assert len(s.metadata["prompts"]["parser_select"]["sha256"]) == 64


def test_parser_selection_bug_switch_and_fallbacks(tiny_questions: Path, tiny_corpus: Path) -> None:
    def reply(kind: str, prompt: str) -> str:
        if kind == "provisions":
            return GUESSES if "강도가 상해" in prompt else "no list here"
        if kind == "select":
            return (
                "Answer: 1" if "준강도" in prompt.rsplit("Candidates:", 1)[1].split("\n")[1] else "Answer: 0"
            )
        return "Answer: 답"

    fixed = sample(  # the paper's protocol (the original scripts): each guess its own list
        run(
            parser(),
            ScriptedModel(reply),
            tiny_questions,
            tiny_corpus,
            tokenizer="official",
        ),
        "q2",
    )
    buggy = sample(  # the refactored scripts' indexing
        run(
            parser(official_selection_bug=True),
            ScriptedModel(reply),
            tiny_questions,
            tiny_corpus,
            tokenizer="official",
        ),
        "q2",
    )
    ev_fixed, ev_buggy = evidence_of(fixed), evidence_of(buggy)
    assert ev_fixed["retrieved"] == ev_buggy["retrieved"]
    lists = ev_fixed["retrieved"]
    assert ev_fixed["predicted"] == [lists[0][0], lists[1][1]]  # each guess indexes its own candidates
    assert ev_buggy["predicted"] == [lists[0][0], lists[0][1]]  # refactored: always the first guess's list

    garbled = ScriptedModel(
        lambda kind, p: {"provisions": GUESSES, "select": "Answer: 제 생각엔 3번"}.get(kind, "답")
    )
    log = run(
        parser(official_selection_bug=False), garbled, tiny_questions, tiny_corpus, tokenizer="official"
    )
    ev = evidence_of(sample(log, "q2"))
    assert ev["counters"]["selection_fallbacks"] == 2
    assert ev["predicted"] == [lists[0][0], lists[1][0]]  # fallback to candidate 0, as in the paper

    # no list in the reply: the original scripts query with the question, the refactored ones with nothing
    q1 = evidence_of(sample(run(parser(), ScriptedModel(reply), tiny_questions, tiny_corpus), "q1"))
    assert q1["counters"]["provision_list_unparsed"] == 1
    assert q1["queries"] == ["운송물 인도 후 손해배상 청구는 언제 소멸하는가?"] and len(q1["predicted"]) == 1
    refactored = parser(official_scripts="refactored")
    q1 = evidence_of(sample(run(refactored, ScriptedModel(reply), tiny_questions, tiny_corpus), "q1"))
    assert q1["counters"] == {"provision_list_unparsed": 1, "guesses_without_candidates": 0}
    assert q1["predicted"] == []


def test_one_time_retrieval_fixed_and_gold_k(tiny_questions: Path, tiny_corpus: Path) -> None:
    model = ScriptedModel(lambda kind, p: "Answer: 처벌")
    log = run(one_time_retrieval(k=1), model, tiny_questions, tiny_corpus, tokenizer="kiwi")
    ev = evidence_of(sample(log, "q2"))
    assert len(ev["predicted"]) == 1 and ev["predicted"][0] in (ROBBERY, QUASI)
    assert ev["queries"] == [
        "배경 사실이다.강도가 상해를 입히면 어떤 처벌을 받는가?"
    ]  # background + question
    gold_k = run(
        one_time_retrieval(k="gold", cot=True),
        ScriptedModel(lambda k, p: "Reasoning: x Answer: y"),
        tiny_questions,
        tiny_corpus,
        tokenizer="kiwi",
    )
    ev2 = evidence_of(sample(gold_k, "q2"))
    assert len(ev2["predicted"]) == 2 and ev2["method"] == "cot_one_time_retrieval"
    assert answer_of(sample(gold_k, "q2")) == "y"


@pytest.mark.parametrize(("solver", "name"), [(standard_prompting(), "sp"), (chain_of_thought(), "cot")])
def test_closed_book_solvers_are_unscored_on_provisions(
    tiny_questions: Path, tiny_corpus: Path, solver, name
) -> None:
    model = ScriptedModel(lambda kind, p: "Reasoning: 단계. Answer: 정답은 소멸한다.")
    log = run(solver, model, tiny_questions, tiny_corpus)
    s = sample(log, "q1")
    assert answer_of(s) == "정답은 소멸한다."
    assert s.scores["token_f1"].value["token_f1"] == 1.0
    import math

    assert math.isnan(s.scores["provision_match"].value)
    assert s.scores["provision_match"].reason == "closed_book"
    system = {"sp": "sp_system", "cot": "cot_system"}[name]  # CoT: the vLLM script's own system text
    assert set(s.metadata["prompts"]) == {name, system}
    assert len(model.prompts) == 2 and all(k == "answer" for k, _ in model.prompts)
    prov = next(r for r in log.results.scores if r.name == "provision_f1")
    assert all(v.value != v.value for v in prov.metrics.values()) and prov.scored_samples == 0


def test_empty_answer_is_flagged_not_silent(tiny_questions: Path, tiny_corpus: Path) -> None:
    log = run(standard_prompting(), ScriptedModel(lambda kind, p: "Answer:"), tiny_questions, tiny_corpus)
    s = sample(log, "q1")
    assert s.scores["token_f1"].value == {"token_f1": 0.0, "empty_answer": 1.0}
    assert s.scores["token_f1"].explanation == "empty answer: scored 0"
    empty = next(r for r in log.results.scores if r.name == "empty_answer")
    assert next(iter(empty.metrics.values())).value == 1.0


def test_no_grader_means_deterministic_metrics_only(
    tiny_questions: Path, tiny_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import koblex_tasks.tasks.koblex.task as task_module

    warned: list[str] = []  # the task's own logger (a handler set up by an earlier eval may swallow records)
    monkeypatch.setattr(task_module.logger, "warning", lambda message, *a: warned.append(message % a))
    task = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none")
    assert any("LF-Eval is not computed" in w for w in warned)
    assert task.metadata["lf_eval"] == "not computed: no grader role bound"
    names = [s.__name__ if hasattr(s, "__name__") else str(s) for s in task.scorer]
    assert len(names) == 3  # provision match, token F1, the retrieval funnel
    judged = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none", judge=True)
    assert len(judged.scorer) == 4 and judged.metadata["lf_eval"] == "judge prompt deepeval (en)"
