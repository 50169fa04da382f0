"""Tokenizers (per-word Kiwi analysis with its memo, content tags, the official regex tokenizer) and the fast
BM25 scoring paths (per-term sparse kernel, sampled top-k), each checked against a plain computation."""

import threading
from pathlib import Path

import bm25s
import numpy as np
import pytest

from koblex_tasks.corpus import bm25 as bm25_module
from koblex_tasks.corpus.bm25 import BM25Index, BM25Params, top_k
from koblex_tasks.corpus.statutes import load_statutes
from koblex_tasks.corpus.tokenizers import (
    KIWI_CONTENT_TAGS,
    KiwiTokenizer,
    OfficialTokenizer,
    get_tokenizer,
    is_content_tag,
)
from tests.conftest import TINY_STATUTES, statute_key

TEXTS = [statute_key(r) for r in TINY_STATUTES] + [
    "갑은 을에게 손해배상청구권을 행사할 수 있는가? 을은 갑에 대한 손해배상청구권은 소멸하였다고 주장한다.",
    "The Act applies to THE carrier; 운송인의 채권은 1년 이내에 소멸한다.",
    "",
    "   ",
    "걸어서 도와주고 고마운 일을 지었다",
]


@pytest.fixture(scope="module")
def kiwi() -> KiwiTokenizer:
    return KiwiTokenizer(num_workers=2)


def test_batch_single_and_fresh_instances_agree(kiwi: KiwiTokenizer) -> None:
    batch = kiwi.tokenize(TEXTS)
    assert [kiwi.tokenize([t])[0] for t in TEXTS] == batch
    assert KiwiTokenizer(num_workers=1).tokenize(list(reversed(TEXTS))) == list(reversed(batch))
    # per-word analysis: a text's terms are its words' terms, in order
    for text, terms in zip(TEXTS, batch, strict=True):
        assert terms == [t for word_terms in kiwi.analyse_words(text.split()) for t in word_terms]
    assert kiwi.tokenize([]) == []
    assert batch[TEXTS.index("")] == [] and batch[TEXTS.index("   ")] == []


def test_content_morphemes_only(kiwi: KiwiTokenizer) -> None:
    accusative, topic = kiwi.tokenize(["손해배상청구권을", "손해배상청구권은"])
    assert accusative == topic and accusative  # the particle is dropped, the noun kept
    terms = kiwi.tokenize(["걸어서 도와주고 고마운 일을 지었다"])[0]
    # irregular stems (VV-I, VA-I) count as verbs and adjectives; endings and particles never appear
    assert {"걷", "고맙", "일"} <= set(terms)
    assert not {"어서", "고", "을", "었", "다", "은"} & set(terms)
    assert all(t == t.lower() for t in kiwi.tokenize(["The CARRIER 운송인"])[0])


def test_every_term_has_a_content_tag(kiwi: KiwiTokenizer) -> None:
    words = " ".join(TEXTS).split()
    analysed = kiwi._kiwi.tokenize(words)
    for word, tokens, terms in zip(words, analysed, kiwi.analyse_words(words), strict=True):
        assert list(terms) == [t.form.lower() for t in tokens if is_content_tag(t.tag)], word


@pytest.mark.parametrize(
    ("tag", "content"),
    [
        *[("NNG", True), ("VV", True), ("VV-R", True), ("VV-I", True), ("VA-I", True), ("SN", True)],
        *[
            ("JKO", False),
            ("EF", False),
            ("XSV", False),
            ("XSA-I", False),
            ("W_SERIAL", False),
            ("SF", False),
        ],
    ],
)
def test_is_content_tag(tag: str, content: bool) -> None:
    assert is_content_tag(tag) is content
    assert ("NNG" in KIWI_CONTENT_TAGS) and ("JKO" not in KIWI_CONTENT_TAGS)


def test_memo_is_bounded_and_does_not_change_terms() -> None:
    small = KiwiTokenizer(num_workers=1, cache_size=8)
    reference = KiwiTokenizer(num_workers=1, cache_size=0).tokenize(TEXTS)
    assert small.tokenize(TEXTS) == reference  # more new words than the memo holds: none kept
    assert len(small._cache) == 0
    assert small.tokenize(["손해배상청구권을 행사"]) == KiwiTokenizer(num_workers=1).tokenize(
        ["손해배상청구권을 행사"]
    )
    assert 0 < len(small._cache) <= 8
    for text in TEXTS[:4]:
        small.tokenize([text])
        assert len(small._cache) <= 8
    assert small.tokenize(TEXTS) == reference


def test_concurrent_calls_agree(kiwi: KiwiTokenizer) -> None:
    expected = KiwiTokenizer(num_workers=1).tokenize(TEXTS)
    fresh = KiwiTokenizer(num_workers=2)
    results: list[list[list[str]]] = []

    def work(i: int) -> None:
        results.append(fresh.tokenize(TEXTS[i % len(TEXTS) :] + TEXTS[: i % len(TEXTS)]))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 6
    for result in results:
        assert sorted(map(tuple, result)) == sorted(map(tuple, expected))


def test_official_is_bm25s_tokenize_with_english_stopwords() -> None:
    official = OfficialTokenizer()
    assert official.tokenize(TEXTS) == bm25s.tokenize(
        TEXTS, stopwords="en", return_ids=False, show_progress=False
    )
    terms = official.tokenize(["The Act applies to THE carrier"])[0]
    assert "the" not in terms and "to" not in terms and "carrier" in terms and "act" in terms
    assert get_tokenizer("official").name == "official" and get_tokenizer("kiwi").name == "kiwi"
    with pytest.raises(ValueError, match="unknown tokenizer"):
        get_tokenizer("nope")


def test_version_enters_the_cache_key(tiny_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = load_statutes(str(tiny_corpus))
    tokenizer = KiwiTokenizer()
    assert tokenizer.config()["version"] == KiwiTokenizer.version >= 2
    key = BM25Index.key_for(corpus, tokenizer, BM25Params())
    monkeypatch.setattr(KiwiTokenizer, "version", KiwiTokenizer.version + 1)
    assert BM25Index.key_for(corpus, tokenizer, BM25Params()) != key


# --- scoring ----------------------------------------------------------------------------------------------


def _zipf_corpus(n_docs: int, seed: int = 0) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 40, n_docs)
    return [[f"t{x}" for x in rng.zipf(1.3, size=n) % 5000] for n in lengths]


class _Fixed:
    """A tokenizer over pre-split text (terms separated by spaces)."""

    name = "fixed"

    def config(self) -> dict[str, object]:
        return {"name": self.name}

    def tokenize(self, texts):
        return [t.split() for t in texts]


def _index_of(docs: list[list[str]], method: str = "lucene") -> BM25Index:
    retriever = bm25s.BM25(method=method)
    retriever.index(docs, show_progress=False)
    return BM25Index(retriever, _Fixed(), len(docs), "test", loaded_from_cache=False)


@pytest.mark.parametrize("method", ["lucene", "bm25l"])
def test_scores_equal_bm25s_get_scores(method: str) -> None:
    docs = _zipf_corpus(3000)
    index = _index_of(docs, method)
    rng = np.random.default_rng(1)
    for _ in range(25):
        query = [f"t{x}" for x in rng.zipf(1.3, size=rng.integers(1, 30)) % 6000]  # some unknown terms
        known = [index._vocab[t] for t in query if t in index._vocab]
        expected = index._retriever.get_scores(known) if known else np.zeros(len(docs))
        assert np.allclose(index.scores(query), expected, rtol=1e-5, atol=1e-6)
        hits = index.search_tokens(query, 50)
        order = sorted(np.flatnonzero(expected > 0), key=lambda i: (-expected[i], i))[:50]
        assert [h.index for h in hits] == order or np.allclose(
            [h.score for h in hits], expected[order], rtol=1e-5
        )  # float32 sums may swap exact ties' neighbours only


def test_search_many_equals_search() -> None:
    index = _index_of(_zipf_corpus(500))
    queries = ["t1 t2 t3", "t7 t7 t9", "zzz", "", "t4000 t1"]
    assert index.search_many(queries, 10) == [index.search(q, 10) for q in queries]
    assert index.search_many([], 10) == []


@pytest.mark.parametrize("n_positive", [5, 150, 5000, 200_000])
def test_sampled_top_k_equals_full_sort(n_positive: int) -> None:
    rng = np.random.default_rng(n_positive)
    n = 200_000
    assert n >= 4 * bm25_module._SAMPLE_SIZE  # the sampled path is taken
    scores = np.zeros(n, dtype=np.float32)
    positive = rng.choice(n, n_positive, replace=False)
    scores[positive] = rng.integers(1, 50, n_positive).astype(np.float32) / 7  # many exact ties
    for k in (1, 10, 100, 1000):
        expected = np.lexsort((np.arange(n), -scores))[:k]
        assert top_k(scores, k).tolist() == expected.tolist()
    small = scores[:1000]
    assert top_k(small, 5000).tolist() == np.lexsort((np.arange(1000), -small)).tolist()


def test_scoring_without_the_compiled_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    index = _index_of(_zipf_corpus(800))
    query = ["t1", "t2", "t2", "t30", "t400"]
    fast = index.scores(query)
    monkeypatch.setattr(bm25_module, "_csc_matvec", None)
    assert np.allclose(index.scores(query), fast, rtol=1e-6)


def test_chunked_tokenize_equals_one_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    from koblex_tasks.corpus import tokenizers

    texts = TEXTS * 3
    whole = KiwiTokenizer(num_workers=1, cache_size=0).tokenize(texts)
    monkeypatch.setattr(tokenizers, "_CHUNK", 2)
    assert KiwiTokenizer(num_workers=1, cache_size=0).tokenize(texts) == whole
    assert KiwiTokenizer(num_workers=1).tokenize(tuple(texts)) == whole
    assert KiwiTokenizer(num_workers=1).tokenize(t for t in texts) == whole
