"""The retriever facade (task settings, async search off the loop) and the `search_statutes` tool."""

from pathlib import Path

import anyio
import pytest

from koblex_tasks.corpus.retriever import RetrieverSettings, get_retriever
from koblex_tasks.corpus.tool import search_statutes
from tests.conftest import TINY_STATUTES, statute_key


def test_retriever_is_built_once_per_settings(tiny_corpus: Path) -> None:
    settings = RetrieverSettings(corpus=str(tiny_corpus), tokenizer="official")
    first = get_retriever(settings)
    assert get_retriever(settings) is first
    assert get_retriever(RetrieverSettings(corpus=str(tiny_corpus), tokenizer="kiwi")) is not first
    described = first.describe()
    assert described["corpus"]["size"] == len(TINY_STATUTES) and described["reranker"] == {"name": "none"}


def test_async_search_runs_in_a_worker_thread(tiny_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    retriever = get_retriever(RetrieverSettings(corpus=str(tiny_corpus), tokenizer="official"))
    threads = []
    original = retriever.search

    def spy(query: str, k: int):
        threads.append(threading.current_thread())
        return original(query, k)

    monkeypatch.setattr(retriever, "search", spy)
    hits = anyio.run(retriever.asearch, "강도가 사람을 상해하거나", 2)
    assert hits[0].provision.key == statute_key(TINY_STATUTES[2])
    assert threads and threads[0] is not threading.main_thread()


def test_search_statutes_tool(tiny_corpus: Path) -> None:
    tool = search_statutes(settings={"corpus": str(tiny_corpus), "tokenizer": "official"}, k=2)
    text = anyio.run(tool, "재량권의 한계를 넘거나")
    assert text.startswith("[1] 행정소송법 27조")
    assert anyio.run(tool, "zzzz") == "No provision matched the query."


def test_settings_round_trip_ignores_unknown_keys() -> None:
    s = RetrieverSettings(corpus="x.jsonl", tokenizer="official", reranker="bge")
    assert RetrieverSettings.from_dict({**s.as_dict(), "future_field": 1}) == s
