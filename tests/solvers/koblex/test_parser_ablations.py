"""ParSeR's ablation switches change the retrieved lists as specified, and the retrieval funnel the log
records equals a hand computation on the tiny fixture corpus."""

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from koblex_tasks.scorers.koblex.funnel import rederive
from koblex_tasks.scorers.koblex.text import token_f1
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.tasks.koblex.task import koblex
from tests.conftest import TINY_STATUTES, statute_key
from tests.solvers.koblex.scripted import ScriptedModel, evidence_of, run_koblex, sample

# Two guesses for q2 (gold: 형법 337조 and 335조): the first matches 337조's words, the second 335조's.
GUESSES = ["형법 강도상해 강도가 사람을 상해하거나", "형법 준강도 절도가 폭행 또는 협박"]
GUESS_REPLY = "[" + ", ".join(f'"{g}"' for g in GUESSES) + "]"


def model(select_reply: str = "Answer: 1") -> ScriptedModel:
    return ScriptedModel(
        lambda kind, p: {"provisions": GUESS_REPLY, "select": select_reply}.get(kind, "Answer: 답")
    )


def run(tiny_questions: Path, tiny_corpus: Path, scripted: ScriptedModel | None = None, **switches):
    scripted = scripted or model()
    # the solver is the task's own (as `-T solver=` or the grid pass it), so the protocol record names it
    task = koblex(
        data=str(tiny_questions),
        corpus=str(tiny_corpus),
        reranker="none",
        solver=parser(k=4, l=2, **switches),
    )
    [log] = inspect_eval(
        task, model=scripted.model(), display="none", log_dir=str(tiny_corpus.parent / "logs")
    )
    assert log.status == "success", log.error
    return log, scripted


def test_default_records_both_stage_lists_and_the_guesses(tiny_questions: Path, tiny_corpus: Path) -> None:
    log, scripted = run(tiny_questions, tiny_corpus)
    ev = evidence_of(sample(log, "q2"))
    assert ev["staged"] and ev["guesses"] == GUESSES and ev["queries"] == GUESSES
    assert [len(keys) for keys in ev["first_stage"]] == [4, 4]
    # no reranker offline: the reranked top l is BM25's top l, and it is what selection saw
    assert ev["reranked"] == [keys[:2] for keys in ev["first_stage"]] == ev["retrieved"]
    assert len(scripted.of_kind("select")) == 4  # two queries on each of two samples
    assert log.eval.metadata["protocol"] != "paper"  # reranker "none" and k, l differ; the switches do not
    assert not {"rerank", "select", "queries", "equal_budget"} & set(log.eval.metadata["protocol"])


def test_select_false_takes_each_querys_top_candidate_without_a_call(
    tiny_questions: Path, tiny_corpus: Path
) -> None:
    log, scripted = run(tiny_questions, tiny_corpus, select=False)
    ev = evidence_of(sample(log, "q2"))
    assert ev["predicted"] == [keys[0] for keys in ev["retrieved"]]
    assert scripted.of_kind("select") == []
    assert log.eval.metadata["protocol"]["select"] == {"value": False, "paper": True}


def test_rerank_false_sends_bm25s_top_l(tiny_questions: Path, tiny_corpus: Path) -> None:
    log, _ = run(tiny_questions, tiny_corpus, rerank=False)
    ev = evidence_of(sample(log, "q2"))
    assert ev["retrieved"] == [keys[:2] for keys in ev["first_stage"]]
    assert log.eval.metadata["protocol"]["rerank"] == {"value": False, "paper": True}


def test_question_queries_send_the_question_once_or_an_equal_budget(
    tiny_questions: Path, tiny_corpus: Path
) -> None:
    log, scripted = run(tiny_questions, tiny_corpus, queries="question")
    s = sample(log, "q2")
    ev = evidence_of(s)
    question = s.metadata["background"] + s.metadata["question"]
    assert ev["queries"] == [question] and ev["guesses"] == []
    assert scripted.of_kind("provisions") == []  # no stage 1 without an equal budget
    log, scripted = run(tiny_questions, tiny_corpus, queries="question", equal_budget=True)
    ev = evidence_of(sample(log, "q2"))
    assert ev["queries"] == [question, question] and ev["guesses"] == GUESSES
    assert ev["first_stage"][0] == ev["first_stage"][1]
    assert len(scripted.of_kind("provisions")) == 2
    assert log.eval.metadata["protocol"]["equal_budget"] == {"value": True, "paper": False}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"queries": "both"}, "queries must be one of"),
        ({"equal_budget": True}, "equal_budget=True needs queries"),
        ({"k": 0}, "must be positive"),
        ({"l": 0}, "must be positive"),
    ],
)
def test_bad_switches_are_refused_when_built(args: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parser(**args)


def test_funnel_equals_a_hand_computation(tiny_questions: Path, tiny_corpus: Path) -> None:
    log, _ = run(tiny_questions, tiny_corpus)
    s = sample(log, "q2")
    ev = evidence_of(s)
    gold = {statute_key(TINY_STATUTES[2]), statute_key(TINY_STATUTES[3])}
    by_hand = {
        "gold_recall_bm25": len(gold & {k for keys in ev["first_stage"] for k in keys}) / 2,
        "gold_recall_rerank": len(gold & {k for keys in ev["reranked"] for k in keys}) / 2,
        "gold_recall_selected": len(gold & set(ev["predicted"])) / 2,
        "guess_overlap": sum(max(token_f1(g, t)[2] for t in gold) for g in GUESSES) / 2,
    }
    score = s.scores["retrieval_funnel"]
    assert score.value == pytest.approx(by_hand)
    assert by_hand["gold_recall_bm25"] == 1.0 and 0 < by_hand["guess_overlap"] < 1
    assert rederive(s, score, {}) == pytest.approx(by_hand)  # re-derivable from the log alone


def test_funnel_without_stage_lists_scores_only_what_applies(tiny_questions: Path, tiny_corpus: Path) -> None:
    from koblex_tasks.solvers.koblex.one_time_retrieval import one_time_retrieval

    scripted = model()
    log = run_koblex(one_time_retrieval(k=2), scripted.model(), tiny_questions, tiny_corpus)
    value = sample(log, "q2").scores["retrieval_funnel"].value
    assert value["gold_recall_selected"] in (0.0, 0.5, 1.0)
    assert all(value[k] != value[k] for k in ("gold_recall_bm25", "gold_recall_rerank", "guess_overlap"))
