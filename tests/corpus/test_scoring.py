"""BM25 scoring: both kernels (numba, numpy) against a brute-force Lucene BM25, exactly, ties by position."""

import math
import threading
from collections import Counter

import numpy as np
import pytest

from koblex_tasks.corpus import scoring
from koblex_tasks.corpus.bm25 import BM25Index, BM25Params, Postings
from koblex_tasks.corpus.scoring import numpy_kernel, top_k
from koblex_tasks.corpus.tokenizers import encode_with
from tests.corpus.helpers import SplitTokenizer


def reference_scores(
    docs: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75
) -> list[float]:
    """Lucene BM25 in plain Python floats: for each distinct query term (first-seen order), times its count,
    idf = ln(1 + (N - df + 0.5) / (df + 0.5)) times tf / (tf + k1 (1 - b + b dl / avgdl))."""
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    df = Counter(t for d in docs for t in set(d))
    counts = Counter(query)
    scores = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for t, c in counts.items():
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf[t] / (tf[t] + k1 * (1 - b + b * len(d) / avgdl)) * c
        scores.append(s)
    return scores


def reference_top(docs: list[list[str]], query: list[str], k: int) -> list[tuple[int, float]]:
    """Top k of the reference, score descending, ties by corpus position ascending; positive scores only."""
    s = reference_scores(docs, query)
    return sorted(((i, v) for i, v in enumerate(s) if v > 0), key=lambda x: (-x[1], x[0]))[:k]


def _zipf_docs(n_docs: int, seed: int = 0, vocab: int = 3000) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [[f"t{x}" for x in rng.zipf(1.3, size=n) % vocab] for n in rng.integers(0, 30, n_docs)]


def _index(docs: list[list[str]]) -> BM25Index:
    encoded = encode_with(SplitTokenizer(), [" ".join(d) for d in docs])
    return BM25Index(Postings.build(encoded, BM25Params()), SplitTokenizer(), "test", loaded_from_cache=False)


@pytest.fixture(scope="module")
def fast_kernel() -> scoring.Kernel:
    scoring.load_fast_kernel(wait=True)
    if scoring._fast is None:
        pytest.skip("numba is not installed")
    return scoring._fast


def _queries(seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    queries = [[f"t{x}" for x in rng.zipf(1.3, size=rng.integers(1, 25)) % 3500] for _ in range(30)]
    return [*queries, ["t1", "t1", "t2", "t1"], ["t2999"], ["t9999"], []]  # repeats, a rare and unknown term


@pytest.mark.parametrize("n_docs", [60, 2500])
def test_both_kernels_equal_the_reference_exactly(n_docs: int, fast_kernel, monkeypatch) -> None:
    docs = _zipf_docs(n_docs)
    index = _index(docs)
    for query in _queries(n_docs):
        expected = reference_top(docs, query, 20)
        for kernel in (fast_kernel, numpy_kernel):
            monkeypatch.setattr(scoring, "_fast", kernel)
            hits = index.search_tokens(query, 20, order="float64")
            assert [(h.index, h.score) for h in hits] == expected, (query, kernel)
        assert np.array_equal(index.scores(query), reference_scores(docs, query))


def test_ties_are_broken_by_position_in_both_selections(fast_kernel) -> None:
    # identical paragraphs score identically; a query of a common term takes the full-pass selection, one of
    # a rare term the touched-paragraphs one
    docs = [["common", "x"]] * 300 + [["common", "rare", "y"], ["rare", "y"]] * 20 + [["common"]] * 300
    index = _index(docs)
    p = index._postings
    for query, k in ((["common"], 50), (["rare"], 7), (["rare", "y"], 40), (["common", "rare"], 700)):
        terms, weights = index._query(query)
        expected = reference_top(docs, query, k)
        for kernel in (fast_kernel, numpy_kernel):
            positions, values = kernel(p.columns, terms, weights, k)
            assert list(zip(positions.tolist(), values.tolist(), strict=True)) == expected


def test_k_bounds_and_empty_queries(fast_kernel) -> None:
    docs = _zipf_docs(200, seed=3)
    index = _index(docs)
    f64 = "float64"
    assert index.search_tokens([], 5, f64) == [] and index.search_tokens(["nope"], 5, f64) == []
    assert index.search_tokens(["t1"], 0, f64) == [] and index.search_tokens(["t1"], 0) == []
    everything = index.search_tokens(["t1", "t2"], 10_000, f64)
    assert [(h.index, h.score) for h in everything] == reference_top(docs, ["t1", "t2"], 10_000)
    assert index.search_many(["t1 t2", "", "zzz"], 3, f64) == [index.search("t1 t2", 3, f64), [], []]
    with pytest.raises(ValueError, match="unknown BM25 order"):
        index.search_tokens(["t1"], 3, "float16")  # type: ignore[arg-type]


def test_concurrent_searches_use_their_own_accumulators(fast_kernel, monkeypatch) -> None:
    monkeypatch.setattr(scoring, "_fast", fast_kernel)
    docs = _zipf_docs(3000, seed=5)
    index = _index(docs)
    queries = _queries(7)
    expected = [index.search_tokens(q, 15) for q in queries]
    failures: list[int] = []

    def work(offset: int) -> None:
        for _ in range(5):
            for i, q in enumerate(queries[offset:] + queries[:offset]):
                if index.search_tokens(q, 15) != expected[(i + offset) % len(queries)]:
                    failures.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


@pytest.mark.parametrize("n_positive", [5, 150, 5000])
def test_dense_top_k_equals_full_sort(n_positive: int) -> None:
    rng = np.random.default_rng(n_positive)
    scores = np.zeros(50_000, dtype=np.float32)
    scores[rng.choice(len(scores), n_positive, replace=False)] = rng.integers(1, 50, n_positive) / 7
    for k in (1, 10, 100, 1000):
        expected = np.lexsort((np.arange(len(scores)), -scores))[:k]
        assert top_k(scores, k).tolist() == expected.tolist()
    assert top_k(scores[:100], 500).tolist() == np.lexsort((np.arange(100), -scores[:100])).tolist()
    assert top_k(scores, 0).tolist() == []


def test_only_lucene_is_supported() -> None:
    with pytest.raises(ValueError, match="only BM25 method 'lucene'"):
        BM25Params(method="bm25l")
