"""The `bm25s` ordering is bm25s': every BM25 list the official scripts recorded (`official_requests/`) and
bm25s' own lists on synthetic corpora full of ties and short lists, ids, order and float32 scores, with the
numba kernel and with the numpy fallback alike."""

import json
from collections.abc import Iterator
from pathlib import Path

import bm25s
import numpy as np
import pytest

from koblex_tasks.corpus import scoring
from koblex_tasks.corpus.bm25 import BM25Index, BM25Params, Postings
from koblex_tasks.corpus.statutes import load_statutes
from koblex_tasks.corpus.tokenizers import OfficialTokenizer, encode_with
from tests.corpus.helpers import SplitTokenizer


@pytest.fixture(params=["numba", "numpy"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run the test with the numba kernel loaded, then with the numpy fallback a query uses until it loads."""
    scoring.load_fast_kernel(wait=True)
    if request.param == "numba" and scoring._fast is None:
        pytest.skip("numba is not installed")
    if request.param == "numpy":
        for name in ("_fast", "_fast_search", "_fast_accumulate"):
            monkeypatch.setattr(scoring, name, None)
    yield request.param


def _recorded(folder: Path) -> list[tuple[str, dict]]:
    return [
        (f"{path.name}:{n}", json.loads(line))
        for path in sorted(folder.glob("*.retrieval.jsonl"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.strip()
    ]


def _as_float32(values: list[float]) -> list[float]:
    return np.asarray(values, dtype=np.float32).astype(np.float64).tolist()


def test_every_recorded_official_list_is_reproduced(shared_data: Path, tmp_path: Path, kernel: str) -> None:
    folder = shared_data / "koblex" / "official_requests"
    records = _recorded(folder)
    assert records, f"no *.retrieval.jsonl in {folder}"
    corpus = load_statutes(str(shared_data / "koblex" / "statutes.jsonl"), cache_dir=tmp_path)
    index = BM25Index.open(corpus, OfficialTokenizer(), cache_dir=tmp_path)
    different = []
    for where, record in records:
        hits = index.search_tokens(record["query_tokens"], record["k"], order="bm25s")
        ids, scores = [h.index for h in hits], [h.score for h in hits]
        if ids != record["bm25_ids"] or scores != _as_float32(record["bm25_scores"]):
            different.append(where)
    assert not different, f"{len(different)}/{len(records)} lists differ, first {different[:5]}"


def _tied_corpus(seed: int, n_docs: int) -> list[list[str]]:
    """Few terms, few lengths and repeated documents, so that equal float32 scores are everywhere."""
    rng = np.random.default_rng(seed)
    base = [[f"t{x}" for x in rng.integers(0, 12, n)] for n in rng.integers(1, 6, max(4, n_docs // 6))]
    docs = [list(base[i]) for i in rng.integers(0, len(base), n_docs)]
    for i in rng.integers(0, n_docs, n_docs // 20):  # a rare term each, for queries with short lists
        docs[i].append(f"rare{i % 7}")
    return docs


def _bm25s_lists(docs: list[list[str]], queries: list[list[str]], k: int) -> list[tuple[list, list]]:
    reference = bm25s.BM25(method="lucene", k1=1.5, b=0.75)  # the numpy backend, as the official scripts
    reference.index(docs, show_progress=False)
    out = []
    for query in queries:
        result = reference.retrieve([query], k=k, show_progress=False, n_threads=0)
        out.append((result.documents[0].tolist(), result.scores[0].astype(np.float64).tolist()))
    return out


@pytest.mark.parametrize("seed,n_docs,k", [(0, 300, 100), (1, 2000, 100), (2, 150, 10), (3, 5000, 50)])
def test_bm25s_itself_on_ties_and_short_lists(seed: int, n_docs: int, k: int, kernel: str) -> None:
    docs = _tied_corpus(seed, n_docs)
    rng = np.random.default_rng(100 + seed)
    queries = [[f"t{x}" for x in rng.integers(0, 14, rng.integers(1, 5))] for _ in range(30)]
    queries += [[f"rare{i}"] for i in range(7)] + [["rare1", "rare1", "t3"], ["t2", "t2", "t2"]]
    encoded = encode_with(SplitTokenizer(), [" ".join(d) for d in docs])
    index = BM25Index(
        Postings.build(encoded, BM25Params()), SplitTokenizer(), "test", loaded_from_cache=False
    )
    ours = [index.search_tokens(q, k, order="bm25s") for q in queries]
    expected = _bm25s_lists(docs, queries, k)
    assert [([h.index for h in hits], [h.score for h in hits]) for hits in ours] == expected
    short = sum(0.0 in scores for _, scores in expected)
    tied = sum(len(set(scores)) < len(scores) for _, scores in expected)
    assert short >= 3 and tied >= 10  # the cases this test is about did occur


def test_no_known_term_and_whole_corpus(kernel: str) -> None:
    """No known term: bm25s ranks an all-zero array (k zero-score rows); k >= corpus size: all the corpus."""
    docs = [["a", "b"], ["b"], ["c", "c"], ["a"]]
    encoded = encode_with(SplitTokenizer(), [" ".join(d) for d in docs])
    index = BM25Index(
        Postings.build(encoded, BM25Params()), SplitTokenizer(), "test", loaded_from_cache=False
    )
    zeros = np.zeros(len(docs), dtype=np.float32)
    expected = np.argpartition(zeros, -2).take(indices=range(-2, 0))[np.flip(np.argsort(zeros[:2]))]
    assert [(h.index, h.score) for h in index.search_tokens(["zzz"], 2, order="bm25s")] == [
        (int(i), 0.0) for i in expected
    ]
    everything = index.search_tokens(["a"], 10, order="bm25s")
    assert sorted(h.index for h in everything) == [0, 1, 2, 3]
    assert [h.score > 0 for h in everything] == [True, True, False, False]
    assert index.search_tokens(["zzz"], 2, order="float64") == []
