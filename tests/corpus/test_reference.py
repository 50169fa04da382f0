"""Retrieval on the shared corpus is pinned: for both tokenizers and all 226 questions, the top 100 equal a
brute-force Lucene BM25 over the same tokens (exact float64 scores, ties by corpus position) and the ranking
the previous bm25s-based scorer gave (bm25s' float32 term scores, summed), in the `float64` order; the `bm25s`
order is pinned to the official lists in test_official_bm25.py."""

import json
import math
from collections import Counter
from pathlib import Path

import bm25s
import numpy as np
import pytest

from koblex_tasks.corpus.bm25 import BM25Index
from koblex_tasks.corpus.statutes import load_statutes
from koblex_tasks.corpus.tokenizers import KiwiTokenizer, OfficialTokenizer

K = 100


class BruteForce:
    """Lucene BM25 from the raw token lists, written independently of the index (dicts and numpy columns)."""

    def __init__(self, docs: list[list[str]], k1: float = 1.5, b: float = 0.75) -> None:
        n = len(docs)
        avgdl = sum(map(len, docs)) / n
        self.n = n
        self.columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        rows: dict[str, list[tuple[int, float]]] = {}
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                rows.setdefault(term, []).append((i, float(tf)))
        for term, entries in rows.items():
            df = len(entries)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            ids = np.array([i for i, _ in entries])
            tf = np.array([t for _, t in entries])
            lengths = np.array([len(docs[i]) for i in ids], dtype=np.float64)
            self.columns[term] = (ids, idf * tf / (tf + k1 * (1 - b + b * lengths / avgdl)))

    def top(self, query: list[str], k: int) -> list[tuple[int, float]]:
        scores = np.zeros(self.n)
        for term, count in Counter(query).items():
            if term in self.columns:
                ids, contribution = self.columns[term]
                scores[ids] += contribution * count
        positive = np.flatnonzero(scores > 0)
        order = sorted(positive.tolist(), key=lambda i: (-scores[i], i))[:k]
        return [(i, float(scores[i])) for i in order]


def _questions(shared_data: Path) -> list[str]:
    with (shared_data / "koblex" / "koblex.jsonl").open(encoding="utf-8") as handle:
        return [q["background"] + q["question"] for q in map(json.loads, handle)]


@pytest.mark.parametrize("tokenizer", [OfficialTokenizer(), KiwiTokenizer()], ids=["official", "kiwi"])
def test_top_100_equals_brute_force_and_the_previous_scorer(
    shared_data: Path, tmp_path: Path, tokenizer
) -> None:
    corpus = load_statutes(str(shared_data / "koblex" / "statutes.jsonl"), cache_dir=tmp_path)
    assert len(corpus) == 5423
    index = BM25Index.open(corpus, tokenizer, cache_dir=tmp_path)
    docs = tokenizer.tokenize(corpus.texts())
    reference = BruteForce(docs)
    previous = bm25s.BM25(method="lucene")
    previous.index(docs, show_progress=False)
    questions = _questions(shared_data)
    assert len(questions) == 226
    for query, tokens, hits in zip(
        questions,
        tokenizer.tokenize(questions),
        index.search_many(questions, K, order="float64"),
        strict=True,
    ):
        expected = reference.top(tokens, K)
        assert [(h.index, h.score) for h in hits] == expected, query
        known = [previous.vocab_dict[t] for t in tokens if t in previous.vocab_dict]
        old = previous.get_scores_from_ids(known) if known else np.zeros(len(docs), dtype=np.float32)
        old_order = np.lexsort((np.arange(len(old)), -old))[: len(expected)]
        assert [h.index for h in hits] == old_order.tolist(), query
