"""BM25 over `hierarchy + content`, built here from term ids, cached on disk, verified and memory-mapped on load.

Scores are Lucene's BM25 (bm25s' default `method="lucene"`, k1=1.5, b=0.75), as the official code ran it:
idf = ln(1 + (N - df + 0.5) / (df + 0.5)) and, per paragraph, idf * tf / (tf + k1 (1 - b + b dl / avgdl)).
The index is term-major: for each term, the paragraphs containing it (ascending) and their precomputed term
scores, twice, because two orderings are offered (`ORDERS`):
- `bm25s` (the paper's): what bm25s 0.2 (numpy backend, as the official scripts ran it) returns: float32 term
  scores rounded as bm25s rounds them, summed in float32 once per query token occurrence, and bm25s' own
  selection, whose tie order and zero-score padding of a short list come from numpy's `argpartition`
  (`scoring.bm25s_top_k`). The recorded official lists are reproduced exactly (tests/corpus/test_official_bm25.py).
- `float64`: the exact float64 sum over the query's distinct terms (each times its count), the same as a
  brute-force computation, ties broken by corpus position, positive scores only: deterministic everywhere.
Neither imports bm25s; queries never import scipy, loading is `np.load` with memory mapping, and the vocabulary
is one JSON list.
"""

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import numpy as np
import orjson

from koblex_tasks.corpus import scoring
from koblex_tasks.corpus.cache import corpus_key, entry_path, open_cached
from koblex_tasks.corpus.scoring import Columns, top_k
from koblex_tasks.corpus.statutes import StatuteCorpus, data_error
from koblex_tasks.corpus.tokenizers import Encoded, Tokenizer, encode_with
from koblex_tasks.corpus.wordcache import remembering_query_words, remembering_words

__all__ = ["ORDERS", "BM25Index", "BM25Order", "BM25Params", "IndexHit", "Postings", "top_k"]

# 1: bm25s' saved float32 score matrix; 2: this module's float64 postings; 3: plus bm25s' float32 term scores
INDEX_FORMAT = 3
_ARRAYS = ("indptr", "postings", "scores", "scores32")
BM25Order = Literal["bm25s", "float64"]
ORDERS: tuple[str, ...] = get_args(BM25Order)
VOCABULARY_FILE = "vocabulary.json"
_SCORE_BLOCK = 4096  # terms per step of the score computation (bounds its temporaries)


@dataclass(frozen=True)
class BM25Params:
    """The official BM25 settings (bm25s' defaults, which the paper's code used); part of the index key."""

    k1: float = 1.5
    b: float = 0.75
    method: str = "lucene"

    def __post_init__(self) -> None:
        if self.method != "lucene":
            raise ValueError(
                f"only BM25 method 'lucene' (the official one) is supported, got {self.method!r}"
            )


@dataclass(frozen=True)
class Postings:
    """Term-major postings: term t's paragraphs are `postings[indptr[t]:indptr[t + 1]]`, with their scores."""

    vocabulary: list[str]
    indptr: np.ndarray  # int64, len(vocabulary) + 1
    postings: np.ndarray  # int32 paragraph positions, ascending within a term
    scores: np.ndarray  # float64 term scores, > 0
    scores32: np.ndarray  # the same term scores as bm25s stores them (float32, its rounding)
    n_docs: int

    @classmethod
    def build(cls, encoded: Encoded | list[Encoded], params: BM25Params) -> "Postings":
        """Lucene BM25 term scores of every (term, paragraph) pair, in the brute-force formula's order.
        Given `[encoded]`, the list is emptied so that the term ids are freed as soon as they are counted."""
        from scipy.sparse import csr_matrix  # building only: queries never import scipy

        source = encoded.pop() if isinstance(encoded, list) else encoded
        vocabulary, lengths, term_ids = source.vocabulary, source.lengths, source.term_ids
        del source, encoded
        n_docs, n_terms = len(lengths), len(vocabulary)
        index_type = np.int32 if len(term_ids) < np.iinfo(np.int32).max else np.int64
        doc_ptr = np.zeros(n_docs + 1, dtype=index_type)  # int32 where it fits: scipy keeps the index type
        np.cumsum(lengths, out=doc_ptr[1:])
        # paragraph-major term counts, summed per (paragraph, term), then term-major by a linear-time transpose
        matrix = csr_matrix(
            (np.ones(len(term_ids), dtype=np.int32), term_ids, doc_ptr), shape=(n_docs, n_terms)
        )
        del term_ids
        matrix.sum_duplicates()
        columns = matrix.tocsc()
        del matrix
        indptr = columns.indptr.astype(np.int64)
        docs = columns.indices.astype(np.int32, copy=False)
        tf = columns.data
        df = np.diff(indptr)
        # math.log, not np.log, so that idf is the correctly rounded value a plain computation gets
        idf = np.array([math.log(1 + (n_docs - d + 0.5) / (d + 0.5)) for d in df.tolist()])
        k1, b = params.k1, params.b
        avgdl = int(lengths.sum()) / n_docs
        norm = k1 * (1 - b + b * lengths / avgdl)
        # bm25s keeps idf in float32, computes tf / (norm + tf) and its product with idf in float64 (numpy 2
        # promotion: its length normaliser is a float64 scalar) and stores the product in float32
        idf32 = idf.astype(np.float32).astype(np.float64)
        scores, scores32 = np.empty(len(docs)), np.empty(len(docs), dtype=np.float32)
        for start in range(0, n_terms, _SCORE_BLOCK):  # a block of terms at a time
            stop = min(start + _SCORE_BLOCK, n_terms)
            lo, hi = int(indptr[start]), int(indptr[stop])
            block_tf = tf[lo:hi].astype(np.float64)
            block_norm = block_tf + norm[docs[lo:hi]]
            block = np.repeat(idf[start:stop], df[start:stop]) * block_tf
            block /= block_norm
            scores[lo:hi] = block  # idf * tf / (tf + norm)
            scores32[lo:hi] = np.repeat(idf32[start:stop], df[start:stop]) * (block_tf / block_norm)
        for array in (indptr, docs, scores, scores32):
            array.setflags(write=False)  # like a memory-mapped index (one compiled kernel serves both)
        return cls(vocabulary, indptr, docs, scores, scores32, n_docs)

    @property
    def columns(self) -> Columns:
        return Columns(self.indptr, self.postings, self.scores, self.n_docs, self.scores32)

    def save(self, directory: Path) -> None:
        for name in _ARRAYS:
            np.save(directory / f"{name}.npy", getattr(self, name))
        (directory / VOCABULARY_FILE).write_bytes(orjson.dumps(self.vocabulary))

    @classmethod
    def load(cls, directory: Path, n_docs: int) -> "Postings":
        """Memory-mapped arrays: a paragraph's postings are read from disk only when a query needs them."""
        arrays = {name: np.load(directory / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
        vocabulary = orjson.loads((directory / VOCABULARY_FILE).read_bytes())
        n_postings = len(arrays["postings"])
        if len(arrays["indptr"]) != len(vocabulary) + 1 or {
            len(arrays["scores"]),
            len(arrays["scores32"]),
        } != {n_postings}:
            raise ValueError("index arrays do not fit together")
        return cls(vocabulary, **arrays, n_docs=n_docs)


@dataclass(slots=True)
class IndexHit:
    """A corpus position and its BM25 score (not frozen: a query makes a hundred, and frozen init is slow)."""

    index: int
    score: float


class BM25Index:
    """A BM25 index of one corpus with one tokenizer. Build or load with `BM25Index.open(...)`."""

    def __init__(self, postings: Postings, tokenizer: Tokenizer, key: str, loaded_from_cache: bool) -> None:
        self._postings = postings
        self._vocab: dict[str, int] = dict(
            zip(postings.vocabulary, range(len(postings.vocabulary)), strict=True)
        )
        self.tokenizer = tokenizer
        self.size = postings.n_docs
        self.key = key
        self.loaded_from_cache = loaded_from_cache

    @staticmethod
    def key_for(corpus: StatuteCorpus, tokenizer: Tokenizer, params: BM25Params) -> str:
        return corpus_key(corpus, tokenizer=tokenizer.config(), params=params.__dict__, format=INDEX_FORMAT)

    @classmethod
    def open(
        cls,
        corpus: StatuteCorpus,
        tokenizer: Tokenizer,
        params: BM25Params = BM25Params(),
        cache_dir: Path | None = None,
        use_cache: bool = True,
    ) -> "BM25Index":
        """Load the index from the cache if a verified entry exists; otherwise build it (and cache it)."""
        # The numba kernel takes half a second to load: start it while the index is verified and loaded (the
        # retriever starts it sooner still, with the corpus). Kiwi is not constructed here: only a word that
        # neither the memo nor the query-word cache knows needs it.
        key = cls.key_for(corpus, tokenizer, params)
        if use_cache and entry_path("bm25", key, cache_dir).is_dir():
            scoring.load_fast_kernel()
        postings, loaded = open_cached(
            "bm25",
            key,
            load=lambda entry: Postings.load(entry, len(corpus)),
            build=lambda: cls._build(corpus, tokenizer, params, cache_dir, use_cache),
            save=Postings.save,
            extra=lambda p: {"corpus_source": corpus.source, "size": p.n_docs, "postings": len(p.postings)},
            cache_dir=cache_dir,
            use_cache=use_cache,
            label="BM25",
        )
        scoring.load_fast_kernel()
        if use_cache:
            remembering_query_words(tokenizer, cache_dir)
        return cls(postings, tokenizer, key, loaded_from_cache=loaded)

    @staticmethod
    def _build(
        corpus: StatuteCorpus,
        tokenizer: Tokenizer,
        params: BM25Params,
        cache_dir: Path | None,
        use_cache: bool,
    ) -> Postings:
        with remembering_words(tokenizer, cache_dir, enabled=use_cache):
            encoded = [encode_with(tokenizer, corpus.iter_texts())]  # a list, so that build() can free it
        if len(encoded[0].term_ids) == 0:
            raise data_error(
                corpus.source,
                None,
                f"no provision has an indexable term for the {tokenizer.name!r} tokenizer "
                f"({len(corpus)} provisions, all empty after tokenization); check the 'hierarchy' and "
                "'content' fields",
            )
        return Postings.build(encoded, params)

    def _occurrences(self, query_tokens: list[str]) -> np.ndarray:
        """The query's known tokens in order, repeats included: bm25s adds a term's column once per token."""
        vocab = self._vocab
        return np.fromiter((vocab[t] for t in query_tokens if t in vocab), dtype=np.int64)

    def _query(self, query_tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The query's known distinct terms in first-seen order and their counts (as float64 weights)."""
        counts: dict[int, int] = {}
        for term in map(self._vocab.get, query_tokens):  # a plain loop: twice as fast as a Counter here
            if term is not None:
                counts[term] = counts.get(term, 0) + 1
        return np.array(list(counts), dtype=np.int64), np.array(list(counts.values()), dtype=np.float64)

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every paragraph (float64); a repeated query term counts once per occurrence."""
        p = self._postings
        terms, weights = self._query(query_tokens)
        docs, values = scoring.numpy_kernel(p.columns, terms, weights, p.n_docs)
        out = np.zeros(p.n_docs)
        out[docs] = values
        return out

    def search_tokens(self, query_tokens: list[str], k: int, order: BM25Order = "bm25s") -> list[IndexHit]:
        """Top-k by BM25 score, in one of the `ORDERS`. Unknown terms are dropped. `bm25s`: k rows (all the
        corpus if it is smaller), zero-score rows included; `float64`: positive scores only, so a query with no
        known term returns nothing."""
        if k <= 0:
            return []
        p = self._postings
        if order == "bm25s":
            docs, values = scoring.bm25s_top_k(p.columns, self._occurrences(query_tokens), k)
        elif order == "float64":
            terms, weights = self._query(query_tokens)
            if not len(terms):
                return []
            docs, values = scoring.kernel()(p.columns, terms, weights, k)
        else:
            raise ValueError(f"unknown BM25 order {order!r}; choose one of {ORDERS}")
        return [IndexHit(d, v) for d, v in zip(docs.tolist(), values.tolist(), strict=True)]

    def search(self, query: str, k: int, order: BM25Order = "bm25s") -> list[IndexHit]:
        return self.search_tokens(self.tokenizer.tokenize([query])[0], k, order)

    def search_many(self, queries: list[str], k: int, order: BM25Order = "bm25s") -> list[list[IndexHit]]:
        """One tokenizer call for all queries (Kiwi analyses their new words in one batch), then each query."""
        tokenized = self.tokenizer.tokenize(queries) if queries else []
        return [self.search_tokens(tokens, k, order) for tokens in tokenized]
