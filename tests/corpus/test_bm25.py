"""BM25 ranking against a brute-force reference, and the on-disk cache: hit, staleness, corruption."""

import math
from collections import Counter
from pathlib import Path

import pytest

from koblex_tasks.corpus.bm25 import BM25Index, BM25Params
from koblex_tasks.corpus.statutes import load_statutes
from koblex_tasks.corpus.tokenizers import KiwiTokenizer, OfficialTokenizer
from tests.conftest import TINY_STATUTES, write_jsonl


def brute_force_bm25(
    docs: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75
) -> list[float]:
    """Lucene BM25: idf = ln(1 + (N - df + 0.5) / (df + 0.5)); tf part = tf / (tf + k1 (1 - b + b dl / avgdl))."""
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    df = Counter(t for d in docs for t in set(d))
    scores = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for t in query:
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf[t] / (tf[t] + k1 * (1 - b + b * len(d) / avgdl))
        scores.append(s)
    return scores


@pytest.mark.parametrize(
    "tokenizer", [OfficialTokenizer(), KiwiTokenizer(num_workers=1)], ids=["official", "kiwi"]
)
def test_ranking_matches_brute_force(tiny_corpus: Path, tmp_path: Path, tokenizer) -> None:
    corpus = load_statutes(str(tiny_corpus))
    index = BM25Index.open(corpus, tokenizer, BM25Params(), cache_dir=tmp_path)
    docs = tokenizer.tokenize([p.key for p in corpus.provisions])
    for query in [
        "손해배상의 청구권은 소멸한다",
        "강도가 사람을 상해하거나",
        "재량권의 한계를 넘거나 법원은",
        "운송물을 인도한 날부터",
    ]:
        q_tokens = tokenizer.tokenize([query])[0]
        expected = brute_force_bm25(docs, q_tokens)
        hits = index.search(query, k=5, order="float64")
        assert hits, query
        for hit in hits:
            assert hit.score == pytest.approx(expected[hit.index], rel=1e-4)
        ranked = sorted((i for i, s in enumerate(expected) if s > 0), key=lambda i: (-expected[i], i))
        assert [h.index for h in hits] == ranked


def test_unknown_terms_and_k_larger_than_corpus(tiny_corpus: Path, tmp_path: Path) -> None:
    index = BM25Index.open(load_statutes(str(tiny_corpus)), OfficialTokenizer(), cache_dir=tmp_path)
    assert index.search("zzzz qqqq", k=3, order="float64") == []
    assert len(index.search("제337조(강도상해", k=100, order="float64")) < len(TINY_STATUTES)
    # bm25s' order: k rows whatever matched (zero-score rows pad), at most the whole corpus
    assert [h.score for h in index.search("zzzz qqqq", k=3)] == [0.0] * 3
    assert len(index.search("제337조(강도상해", k=100)) == len(TINY_STATUTES)


def test_cache_hit_stale_and_corrupted(
    tiny_corpus: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = tmp_path / "cache"
    corpus = load_statutes(str(tiny_corpus))
    first = BM25Index.open(corpus, OfficialTokenizer(), cache_dir=cache)
    assert not first.loaded_from_cache
    second = BM25Index.open(corpus, OfficialTokenizer(), cache_dir=cache)
    assert second.loaded_from_cache and second.key == first.key
    assert [h.index for h in second.search("강도가 사람을 상해하거나", 3)] == [
        h.index for h in first.search("강도가 사람을 상해하거나", 3)
    ]

    # A changed corpus (one provision edited) must not reuse the old entry.
    edited = [dict(r) for r in TINY_STATUTES]
    edited[0]["content"] += " 추가"
    changed = load_statutes(str(write_jsonl(tmp_path / "edited.jsonl", edited)))
    third = BM25Index.open(changed, OfficialTokenizer(), cache_dir=cache)
    assert third.key != first.key and not third.loaded_from_cache

    # Corrupt a file of the first entry: verification fails, the index is rebuilt and still correct.
    entry = cache / "bm25" / first.key
    victim = next(p for p in entry.iterdir() if p.suffix == ".npy")
    victim.write_bytes(b"garbage")
    with caplog.at_level("WARNING"):
        rebuilt = BM25Index.open(corpus, OfficialTokenizer(), cache_dir=cache)
    assert not rebuilt.loaded_from_cache
    assert "stale or corrupted" in caplog.text
    assert [h.index for h in rebuilt.search("강도가 사람을 상해하거나", 3)] == [
        h.index for h in first.search("강도가 사람을 상해하거나", 3)
    ]
    assert BM25Index.open(corpus, OfficialTokenizer(), cache_dir=cache).loaded_from_cache


def test_key_depends_on_tokenizer_and_params(tiny_corpus: Path) -> None:
    corpus = load_statutes(str(tiny_corpus))
    keys = {
        BM25Index.key_for(corpus, OfficialTokenizer(), BM25Params()),
        BM25Index.key_for(corpus, KiwiTokenizer(), BM25Params()),
        BM25Index.key_for(corpus, OfficialTokenizer(), BM25Params(k1=1.2)),
    }
    assert len(keys) == 3
