"""`koblex(lang="en")` on an English article-level corpus, end to end with a scripted model: the model reads
English provision texts, the metrics compare article keys (a retrieved article holding a gold paragraph is a
hit; two gold paragraphs of one article are one gold article), the level is recorded; a corpus in the other
language is refused unless allowed; the hub path gets English-shaped rows."""

import json
import logging
from pathlib import Path

import pytest

from koblex_tasks.errors import SetupError
from koblex_tasks.scorers.koblex.provision_match import book_of, rederive
from koblex_tasks.solvers.koblex.ircot import ircot
from koblex_tasks.solvers.koblex.one_time_retrieval import one_time_retrieval
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.tasks.koblex.task import koblex
from tests.conftest import TINY_STATUTES, statute_key
from tests.english_data import (
    ARTICLES,
    CARRIER,
    DAMAGES,
    QUASI,
    QUESTIONS,
    ROBBERY,
    article_text,
    write_english,
)
from tests.solvers.koblex.scripted import ScriptedModel, evidence_of, run_koblex, sample

GUESSES = {  # ParSeR's parametric provisions per question (recognised by the question text)
    "carrier": '["Claims and obligations of a carrier terminate unless a judicial claim is made within one year"]',
    "damages": '["The right to claim damages from an unlawful act is extinguished by prescription in three years"]',
    "thief": '["A robber who inflicts bodily injury is punished by imprisonment for life", '
    '"A thief who uses violence to escape arrest is punished as a robber"]',
}


@pytest.fixture
def english(tmp_path: Path) -> tuple[Path, Path]:
    return write_english(tmp_path)


def asked(prompt: str) -> str:
    """The question a prompt asks (its last `Question:` line; candidates and context follow it)."""
    return prompt.rsplit("Question:", 1)[-1].split("\n", 1)[0]


def parametric(prompt: str) -> str:
    query = prompt.rsplit("Question:", 1)[-1]
    return next(guess for word, guess in GUESSES.items() if word in query)


def test_parser_scores_articles_and_shows_english_text(english: tuple[Path, Path]) -> None:
    questions, corpus = english
    model = ScriptedModel(
        lambda kind, p: {"provisions": parametric(p), "select": "Answer: 0"}.get(kind, "Answer: It ends.")
    )
    # each sub-query's own candidates (the official first-list indexing would pick from the first list twice)
    solver = parser(k=5, l=3, official_selection_bug=False)
    log = run_koblex(solver, model.model(), questions, corpus, lang="en", tokenizer="official")
    assert log.status == "success", log.error
    meta = log.eval.metadata or {}
    assert meta["provision_level"] == "article" and meta["language_mismatch"] is None
    assert meta["corpus"]["level"] == "article" and meta["corpus"]["language"] == "en"

    carrier, damages, thief = (sample(log, q) for q in ("e1", "e2", "e3"))
    assert evidence_of(carrier)["predicted"] == [CARRIER]  # identities: the Korean article keys
    assert carrier.scores["provision_match"].metadata["gold"] == [CARRIER]
    assert carrier.metadata["provision_level"] == "article"
    score = carrier.scores["provision_match"]
    assert score.value["provision_em"] == 1.0 and score.metadata["level"] == "article"
    # the gold never reaches a solver: it is the scorers' (the task's gold book), not the sample's
    assert "gold_provisions" not in carrier.metadata and "gold_keys" not in carrier.metadata

    # two gold paragraphs of article 766 are one gold article: one retrieved article is an exact match
    assert damages.scores["provision_match"].metadata["gold"] == [DAMAGES]
    assert damages.metadata["hop_count"] == 2  # the paper's hop split counts paragraphs
    dm = damages.scores["provision_match"]
    assert dm.value == {
        "provision_precision": 1.0,
        "provision_recall": 1.0,
        "provision_f1": 1.0,
        "provision_em": 1.0,
    }
    assert dm.metadata["n_gold"] == 1 and dm.metadata["matched"] == [DAMAGES]
    assert evidence_of(thief)["predicted"] == [ROBBERY, QUASI]
    assert thief.scores["provision_match"].value["provision_em"] == 1.0

    # the model saw English texts: the candidates and the answer's context, never a Korean key
    select = next(p for p in model.of_kind("select") if "carrier" in asked(p))
    assert f"0: {article_text(CARRIER)}" in select and CARRIER not in select
    answer = next(p for p in model.of_kind("answer") if "damages" in p.rsplit("Question:", 1)[-1])
    assert article_text(DAMAGES) in answer and DAMAGES not in answer
    for s in log.samples or []:  # every value is re-derived from the log
        assert rederive(s, s.scores["provision_match"], {}) == s.scores["provision_match"].value


def test_one_time_retrieval_takes_as_many_articles_as_gold_articles(english: tuple[Path, Path]) -> None:
    questions, corpus = english
    model = ScriptedModel(lambda kind, p: "Answer: It ends.")
    solver = one_time_retrieval(k="gold")
    log = run_koblex(solver, model.model(), questions, corpus, lang="en", tokenizer="official")
    assert log.status == "success", log.error
    damages = sample(log, "e2")
    ev = evidence_of(damages)
    assert ev["predicted"] == [DAMAGES]  # one gold article (of two gold paragraphs): one retrieved
    assert damages.scores["provision_match"].value["provision_em"] == 1.0
    prompt = next(p for p in model.prompts if "damages" in p[1].rsplit("Question:", 1)[-1])[1]
    assert article_text(DAMAGES) in prompt and DAMAGES not in prompt
    carrier = sample(log, "e1")
    assert evidence_of(carrier)["predicted"] == [CARRIER]
    assert carrier.scores["provision_match"].metadata["level"] == "article"


def test_multihop_solvers_show_texts_and_record_keys(english: tuple[Path, Path]) -> None:
    questions, corpus = english
    model = ScriptedModel(lambda kind, p: "So the final answer is: It ends.")
    # the prompt's own marker ends the chain (the vLLM script's marker bug would run all 8 steps)
    log = run_koblex(
        ircot(official_marker_bug=False), model.model(), questions, corpus, lang="en", tokenizer="official"
    )
    assert log.status == "success", log.error
    carrier = sample(log, "e1")
    assert evidence_of(carrier)["predicted"] == evidence_of(carrier)["retrieved"][0] == [CARRIER]
    assert carrier.scores["provision_match"].value["provision_em"] == 1.0
    step = next(p for _, p in model.prompts if "carrier" in p.rsplit("Question:", 1)[-1])
    assert article_text(CARRIER) in step and CARRIER not in step


def test_another_articles_retrieval_scores_zero_not_the_article(english: tuple[Path, Path]) -> None:
    questions, corpus = english
    model = ScriptedModel(
        lambda kind, p: {"provisions": GUESSES["thief"], "select": "Answer: 0"}.get(kind, "Answer: x")
    )
    # each sub-query's own candidates (the official first-list indexing would pick from the first list twice)
    solver = parser(k=5, l=3, official_selection_bug=False)
    log = run_koblex(solver, model.model(), questions, corpus, lang="en", tokenizer="official")
    carrier = sample(log, "e1")
    assert CARRIER not in evidence_of(carrier)["predicted"]
    assert carrier.scores["provision_match"].value["provision_recall"] == 0.0


def test_a_korean_corpus_for_english_questions_is_refused(
    english: tuple[Path, Path], tiny_corpus: Path
) -> None:
    questions, _ = english
    with pytest.raises(SetupError) as err:
        koblex(lang="en", data=str(questions), corpus=str(tiny_corpus), reranker="none")
    message = str(err.value)
    assert "lang='en' asks English questions" in message and f"{tiny_corpus} is Korean" in message
    assert "every provision would score 0" in message and "allow_language_mismatch=true" in message


def test_an_allowed_mismatch_warns_records_and_scores_in_the_corpus_language(
    tiny_questions: Path, tiny_corpus: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        task = koblex(
            lang="en",
            data=str(tiny_questions),
            corpus=str(tiny_corpus),
            reranker="none",
            allow_language_mismatch=True,
        )
    note = (task.metadata or {})["language_mismatch"]
    assert note.startswith("cross-lingual run") and "English questions, Korean statute corpus" in note
    assert note in caplog.text
    q2 = book_of(task.scorer[0]).get("q2")
    # the gold paragraphs compared as the Korean corpus names them; the judge's strings stay English
    assert list(q2.keys) == [statute_key(TINY_STATUTES[2]), statute_key(TINY_STATUTES[3])]
    assert list(q2.provisions) == ["ENG 형법 337조eng text", "ENG 형법 335조eng text"]
    assert (task.metadata or {})["provision_level"] == "paragraph"


def test_an_english_corpus_for_korean_questions_is_refused(tiny_questions: Path, tmp_path: Path) -> None:
    english_only = [
        {k: v for k, v in a.items() if k != "content"} | {"content": a["content_eng"]} for a in ARTICLES
    ]
    path = tmp_path / "english_only.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in english_only), encoding="utf-8")
    with pytest.raises(
        SetupError, match=r"lang='ko' asks Korean questions, but the statute corpus .* is English"
    ):
        koblex(lang="ko", data=str(tiny_questions), corpus=str(path), reranker="none")


def test_korean_runs_keep_paragraph_identities(tiny_questions: Path, tiny_corpus: Path) -> None:
    task = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none")
    assert (task.metadata or {})["provision_level"] == "paragraph"
    assert (task.metadata or {})["language_mismatch"] is None
    for s in task.dataset:
        assert book_of(task.scorer[0]).get(s.id).keys == book_of(task.scorer[0]).get(s.id).provisions


def test_article_corpus_needs_the_contexts_article_keys(english: tuple[Path, Path], tmp_path: Path) -> None:
    _, corpus = english
    rows = [
        dict(q, contexts=[{k: v for k, v in c.items() if k != "index"} for c in q["contexts"]])
        if q["id"] == "e2"
        else q
        for q in QUESTIONS
    ]
    path = tmp_path / "no_index.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(SetupError, match=rf"{path}:2: question 'e2': contexts\[0\] lacks a string 'index'"):
        koblex(lang="en", data=str(path), corpus=str(corpus), reranker="none")


def test_hub_path_gets_english_rows_for_english(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    # the local datasets cache is still asked; the hub is not dialled
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    shaped = {"JihyungL/KoBLEX-koblex": QUESTIONS, "JihyungL/KoBLEX-statute-eng": ARTICLES}
    seen = []

    def fake_load_dataset(repo: str, split: str, revision: str | None = None) -> list[dict]:
        seen.append((repo, split))
        return [dict(r) for r in shaped[repo]]

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    task = koblex(lang="en", reranker="none")
    assert seen == [("JihyungL/KoBLEX-koblex", "test"), ("JihyungL/KoBLEX-statute-eng", "corpus")]
    meta = task.metadata or {}
    assert (
        meta["provision_level"] == "article"
        and meta["corpus"]["source"] == "hf:JihyungL/KoBLEX-statute-eng@main"
    )
    assert [list(book_of(task.scorer[0]).get(s.id).keys) for s in task.dataset] == [
        [CARRIER],
        [DAMAGES],
        [ROBBERY, QUASI],
    ]
