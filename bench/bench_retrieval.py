"""Speed, memory and correctness of BM25 retrieval at the shared corpus's size and at full-pool scale.

Run by hand (bench dependency: `pip install rank_bm25`):

    python bench/bench_retrieval.py [--data ../shared/data] [--size 250000] [--work DIR] [--skip-scale]

Two corpora: the real 5,423-paragraph `koblex/statutes.jsonl`, and a SYNTHETIC one of `--size` paragraphs
recombined from it (bench/_scale_corpus.py; speed only, never quality), generated into `--work` (a temp dir by
default). Every phase runs in its own subprocess so that its peak RSS (`ru_maxrss`) is its own; the parent
prints one table. Phases per corpus:

- build:    cold index build in an empty cache: corpus load, Kiwi start-up, tokenization, bm25s indexing+save.
- warm:     a new process loads the corpus and the cached index; query latency for top-100 (tokenization,
            scoring, end to end) with the 226 KoBLEX questions (background + question, as the solvers query) and
            with ParSeR-style provision queries (the `comb` strings of the released GPT-4o ParSeR run, as
            stand-ins for parametric provisions; one `search_many` per question); the scorer this replaced
            (bm25s `get_scores` + full partition) on the same tokens; recall@10 of the gold provisions (real
            corpus only).
- legacy:   the tokenizer this replaced (KiwiTokenizer version 1: whole-text analysis), for the "before" row;
            at scale its cold tokenization is timed on a sample and extrapolated (it has no cache, so its cost
            is linear in the text).
- official: the paper's configuration, bm25s' regex tokenizer with English stopwords, queried through bm25s'
            own `retrieve`.
- compare:  on the build's tokens, rank_bm25's BM25Okapi (speed, same tokens) and a numpy brute-force Lucene
            BM25 (correctness: our top-100 score lists must equal the reference's on a subset of queries).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

K = 100
RANK_BM25_QUERIES = 8  # rank_bm25 scores in Python loops: a handful of queries is enough for a ratio
REFERENCE_QUERIES = 40
LEGACY_SAMPLE = 20_000


# --- shared helpers ---------------------------------------------------------------------------------------


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1e3, q)) if values else float("nan")


def _lat(values: list[float]) -> dict[str, float]:
    return {"p50_ms": _pct(values, 50), "p95_ms": _pct(values, 95), "n": len(values)}


def _questions(data: Path) -> list[dict]:
    with (data / "koblex" / "koblex.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _koblex_queries(data: Path) -> list[str]:
    """Background + question with no separator, as `official_question` builds the solvers' query."""
    return [q["background"] + q["question"] for q in _questions(data)]


def _parser_queries(data: Path) -> list[list[str]]:
    """Per question, the provision strings the released ParSeR run selected (stand-ins for its guesses)."""
    path = data / "koblex" / "released_gpt4o" / "parser_gpt4o.jsonl"
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [[c for a in row["answers"] for c in a["comb"]] or [row["question"]] for row in rows]


class LegacyKiwiTokenizer:
    """KiwiTokenizer version 1, verbatim in behaviour: whole-text analysis, exact content tags, all dictionaries."""

    name = "kiwi"
    version = 1

    def __init__(self) -> None:
        from kiwipiepy import Kiwi

        from koblex_tasks.corpus.tokenizers import KIWI_CONTENT_TAGS

        self._tags = KIWI_CONTENT_TAGS
        self._kiwi = Kiwi(num_workers=max(1, os.cpu_count() or 1))
        self._kiwi.tokenize("초기화")

    def config(self) -> dict[str, object]:
        import kiwipiepy

        return {"name": "kiwi", "version": 1, "tags": sorted(self._tags), "kiwipiepy": kiwipiepy.__version__}

    def _terms(self, tokens) -> list[str]:
        return [t.form.lower() for t in tokens if t.tag in self._tags]

    def tokenize(self, texts) -> list[list[str]]:
        texts = list(texts)
        if len(texts) == 1:
            return [self._terms(self._kiwi.tokenize(texts[0]))]
        return [self._terms(tokens) for tokens in self._kiwi.tokenize(texts)]


class TimedTokenizer:
    """Wraps a tokenizer (same name and config, so the same cache key) and adds up wall and CPU time spent in it."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.wall = 0.0
        self.cpu = 0.0

    def config(self) -> dict[str, object]:
        return self.inner.config()

    def tokenize(self, texts):
        t0, c0 = time.perf_counter(), time.process_time()
        out = self.inner.tokenize(texts)
        self.wall += time.perf_counter() - t0
        self.cpu += time.process_time() - c0
        return out


def _old_top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """The top-k selection this change replaced (full argpartition), for the "before" scorer."""
    if k >= len(scores):
        candidates = np.arange(len(scores))
    else:
        candidates = np.argpartition(-scores, k - 1)[:k]
        candidates = np.flatnonzero(scores >= scores[candidates].min())
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order][:k]


def _old_search(index, tokens: list[str], k: int) -> list[tuple[int, float]]:
    """BM25Index.search_tokens before this change: bm25s get_scores, then a full partition."""
    vocab = index._vocab
    known = [t for t in tokens if t in vocab]
    if not known:
        return []
    scores = index._retriever.get_scores([vocab[t] for t in known])
    return [(int(i), float(scores[i])) for i in _old_top_k(scores, min(k, index.size)) if scores[i] > 0]


def _recall_at_10(index, data: Path) -> str:
    """Gold provisions among the top 10 for background + question: mean per question (distinct gold) and
    pooled over all 443 gold contexts, as "macro / micro"."""
    keys = [p.key for p in index_corpus(index).provisions]
    recalls, found, total = [], 0, 0
    for q in _questions(data):
        golds = [c["hierarchy"] + c["content"] for c in q["contexts"]]
        top = {keys[h.index] for h in index.search(q["background"] + q["question"], 10)}
        recalls.append(len(set(golds) & top) / len(set(golds)))
        found += sum(g in top for g in golds)
        total += len(golds)
    return f"{np.mean(recalls):.3f} / {found / total:.3f}"


_CORPORA: dict[int, object] = {}


def index_corpus(index):
    return _CORPORA[id(index)]


def _open(corpus_path: str, tokenizer, cache: Path):
    from koblex_tasks.corpus.bm25 import BM25Index
    from koblex_tasks.corpus.statutes import load_statutes

    t0 = time.perf_counter()
    corpus = load_statutes(corpus_path)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = BM25Index.open(corpus, tokenizer, cache_dir=cache)
    _CORPORA[id(index)] = corpus
    return corpus, index, load_s, time.perf_counter() - t0


# --- phases (each in its own process) -----------------------------------------------------------------------


def phase_build(args) -> dict:
    from koblex_tasks.corpus.tokenizers import KiwiTokenizer

    base_rss = _maxrss_mb()
    tok = KiwiTokenizer()
    t0 = time.perf_counter()
    tok.warm_up()
    init_s = time.perf_counter() - t0
    timed = TimedTokenizer(tok)
    corpus, index, load_s, open_s = _open(args.corpus, timed, Path(args.cache))
    assert not index.loaded_from_cache
    texts = [p.key for p in corpus.provisions]
    words = Counter(w for t in texts for w in t.split())
    tokens = timed.inner.tokenize(texts)  # from the memo now; saved for the compare phase
    with open(args.tokens, "wb") as handle:
        pickle.dump(tokens, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return {
        "docs": len(corpus),
        "chars": sum(map(len, texts)),
        "words": sum(words.values()),
        "distinct_words": len(words),
        "load_s": load_s,
        "kiwi_init_s": init_s,
        "tokenize_s": timed.wall,
        "tokenize_cpu_s": timed.cpu,
        "index_save_s": open_s - timed.wall,
        "cold_total_s": load_s + init_s + open_s,
        "maxrss_mb": _maxrss_mb(),
        "import_rss_mb": base_rss,
    }


def phase_warm(args) -> dict:
    from koblex_tasks.corpus.tokenizers import KiwiTokenizer

    tok = KiwiTokenizer()
    t0 = time.perf_counter()
    _, index, load_s, open_s = _open(args.corpus, tok, Path(args.cache))
    assert index.loaded_from_cache
    rss_loaded = _maxrss_mb()
    tok.warm_up()  # Kiwi started loading in the background when the index opened
    kiwi_ready_s = time.perf_counter() - t0
    data = Path(args.data)
    koblex, parser = _koblex_queries(data), _parser_queries(data)
    out: dict[str, object] = {"load_s": load_s, "open_s": open_s, "kiwi_ready_s": kiwi_ready_s}
    out["rss_after_load_mb"] = rss_loaded

    def timed(fn, items):
        times, results = [], []
        for item in items:
            t = time.perf_counter()
            results.append(fn(item))
            times.append(time.perf_counter() - t)
        return times, results

    # end to end with Kiwi's word memo empty (a fresh process), then again with the words memoised
    tok._cache = {}
    e2e_cold, _ = timed(lambda q: index.search(q, K), koblex)
    e2e_warm, _ = timed(lambda q: index.search(q, K), koblex)
    tok._cache = {}
    tok_cold, q_tokens = timed(lambda q: tok.tokenize([q])[0], koblex)
    score_new, new_hits = timed(lambda t: index.search_tokens(t, K), q_tokens)
    score_old, old_hits = timed(lambda t: _old_search(index, t, K), q_tokens)
    same = sum(
        [h.index for h in a] == [i for i, _ in b]
        and np.allclose([h.score for h in a], [s for _, s in b], rtol=1e-5)
        for a, b in zip(new_hits, old_hits, strict=True)
    )
    tok._cache = {}
    parser_many, _ = timed(lambda qs: index.search_many(qs, K), parser)
    p_tokens = tok.tokenize([q for qs in parser for q in qs])
    p_score, _ = timed(lambda t: index.search_tokens(t, K), p_tokens)
    p_old, _ = timed(lambda t: _old_search(index, t, K), p_tokens)
    out.update(
        {
            "koblex_e2e_cold": _lat(e2e_cold),
            "koblex_e2e_warm": _lat(e2e_warm),
            "koblex_tokenize_cold": _lat(tok_cold),
            "koblex_score": _lat(score_new),
            "koblex_score_old": _lat(score_old),
            "koblex_same_as_old": f"{same}/{len(koblex)}",
            "parser_search_many": _lat(parser_many),
            "parser_score": _lat(p_score),
            "parser_score_old": _lat(p_old),
            "parser_queries": len(p_tokens),
            "maxrss_mb": _maxrss_mb(),
        }
    )
    if args.real:
        out["recall@10"] = _recall_at_10(index, data)
    return out


def phase_legacy(args) -> dict:
    from koblex_tasks.corpus.statutes import load_statutes

    t0 = time.perf_counter()
    tok = LegacyKiwiTokenizer()
    init_s = time.perf_counter() - t0
    corpus = load_statutes(args.corpus)
    texts = [p.key for p in corpus.provisions]
    sample = texts if args.real else random.Random(0).sample(texts, min(LEGACY_SAMPLE, len(texts)))
    t0, c0 = time.perf_counter(), time.process_time()
    tok.tokenize(sample)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    scale = sum(map(len, texts)) / sum(map(len, sample))
    queries = _koblex_queries(Path(args.data))
    times = []
    for q in queries:
        t = time.perf_counter()
        tok.tokenize([q])
        times.append(time.perf_counter() - t)
    out = {
        "kiwi_init_s": init_s,
        "tokenize_s": wall * scale,
        "tokenize_cpu_s": cpu * scale,
        "tokenize_extrapolated": not args.real,
        "koblex_tokenize": _lat(times),
        "maxrss_mb": _maxrss_mb(),
    }
    if args.real:
        timed = TimedTokenizer(tok)
        _, index, _, open_s = _open(args.corpus, timed, Path(args.cache))
        out["index_save_s"] = open_s - timed.wall
        index.tokenizer = tok
        out["recall@10"] = _recall_at_10(index, Path(args.data))
    return out


def phase_official(args) -> dict:
    import bm25s

    from koblex_tasks.corpus.tokenizers import OfficialTokenizer

    timed = TimedTokenizer(OfficialTokenizer())
    corpus, _, load_s, open_s = _open(args.corpus, timed, Path(args.cache))
    out = {
        "load_s": load_s,
        "tokenize_s": timed.wall,
        "index_save_s": open_s - timed.wall,
        "cold_total_s": load_s + open_s,
    }
    rss_build = _maxrss_mb()
    _, warm, _, warm_s = _open(args.corpus, OfficialTokenizer(), Path(args.cache))
    out["warm_open_s"] = warm_s
    queries = _koblex_queries(Path(args.data))
    retriever = warm._retriever
    times = []
    for q in queries:  # the official code's path: bm25s.tokenize, then retrieve
        t = time.perf_counter()
        q_tokens = bm25s.tokenize([q], stopwords="en", show_progress=False)
        if len(q_tokens.vocab) > 1 or "" not in q_tokens.vocab:
            retriever.retrieve(q_tokens, k=min(K, len(corpus)), show_progress=False)
        times.append(time.perf_counter() - t)
    ours = []
    for q in queries:
        t = time.perf_counter()
        warm.search(q, K)
        ours.append(time.perf_counter() - t)
    out.update(
        {"bm25s_retrieve": _lat(times), "our_search": _lat(ours), "maxrss_mb": max(rss_build, _maxrss_mb())}
    )
    if args.real:
        out["recall@10"] = _recall_at_10(warm, Path(args.data))
    return out


def _reference_scores(docs: list[list[str]], k1: float = 1.5, b: float = 0.75):
    """Independent numpy Lucene BM25 from the raw tokens: idf = ln(1 + (N - df + 0.5)/(df + 0.5))."""
    import scipy.sparse as sp

    vocab: dict[str, int] = {}
    rows, cols = [], []
    for d, doc in enumerate(docs):
        for term in doc:
            rows.append(d)
            cols.append(vocab.setdefault(term, len(vocab)))
    tf = sp.csc_matrix(
        (np.ones(len(rows), dtype=np.float64), (np.array(rows), np.array(cols))),
        shape=(len(docs), len(vocab)),
    )
    tf.sum_duplicates()
    dl = np.array([len(d) for d in docs], dtype=np.float64)
    norm = k1 * (1 - b + b * dl / dl.mean())
    df = np.diff(tf.indptr)
    idf = np.log(1 + (len(docs) - df + 0.5) / (df + 0.5))

    def score(query: list[str]) -> np.ndarray:
        out = np.zeros(len(docs))
        for term in query:
            j = vocab.get(term)
            if j is None:
                continue
            lo, hi = tf.indptr[j], tf.indptr[j + 1]
            rows_j, tf_j = tf.indices[lo:hi], tf.data[lo:hi]
            out[rows_j] += idf[j] * tf_j / (tf_j + norm[rows_j])
        return out

    return score


def phase_compare(args) -> dict:
    from rank_bm25 import BM25Okapi

    from koblex_tasks.corpus.tokenizers import KiwiTokenizer

    with open(args.tokens, "rb") as handle:
        docs = pickle.load(handle)
    tok = KiwiTokenizer()
    _, index, _, _ = _open(args.corpus, tok, Path(args.cache))
    data = Path(args.data)
    koblex, parser = _koblex_queries(data), _parser_queries(data)
    rng = random.Random(0)
    subset = rng.sample(koblex, REFERENCE_QUERIES // 2) + rng.sample(
        [q for qs in parser for q in qs], REFERENCE_QUERIES // 2
    )
    q_tokens = tok.tokenize(subset)

    # correctness: top-k score lists equal the reference's (ties may be ordered differently)
    t0 = time.perf_counter()
    reference = _reference_scores(docs)
    ref_build = time.perf_counter() - t0
    equal, same_ids, worst = 0, 0, 0.0
    for tokens in q_tokens:
        ref = reference(tokens)
        ref_top = np.sort(ref[ref > 0])[::-1][:K]
        hits = index.search_tokens(tokens, K)
        ours = np.array([h.score for h in hits])
        ok = len(ours) == len(ref_top) and np.allclose(ours, ref_top, rtol=1e-4, atol=1e-6)
        equal += ok
        if len(ours):
            worst = max(
                worst,
                float(np.max(np.abs(ours - ref_top[: len(ours)]) / np.maximum(ref_top[: len(ours)], 1e-9))),
            )
        same_ids += [h.index for h in hits] == sorted(np.flatnonzero(ref > 0), key=lambda i: (-ref[i], i))[:K]

    # speed against rank_bm25 on the same tokens
    t0 = time.perf_counter()
    okapi = BM25Okapi(docs)
    okapi_build = time.perf_counter() - t0
    few = q_tokens[:RANK_BM25_QUERIES]
    okapi_t, ours_t = [], []
    for tokens in few:
        t = time.perf_counter()
        scores = okapi.get_scores(tokens)
        np.argsort(-scores)[:K]
        okapi_t.append(time.perf_counter() - t)
    for _ in range(3):
        for tokens in few:
            t = time.perf_counter()
            index.search_tokens(tokens, K)
            ours_t.append(time.perf_counter() - t)
    return {
        "reference_build_s": ref_build,
        "topk_scores_equal": f"{equal}/{len(q_tokens)}",
        "topk_ids_equal": f"{same_ids}/{len(q_tokens)}",
        "max_rel_score_diff": worst,
        "rank_bm25_build_s": okapi_build,
        "rank_bm25_query": _lat(okapi_t),
        "our_query_same_tokens": _lat(ours_t),
        "speedup_vs_rank_bm25": statistics.median(okapi_t) / statistics.median(ours_t),
        "maxrss_mb": _maxrss_mb(),
    }


PHASES = {
    "build": phase_build,
    "warm": phase_warm,
    "legacy": phase_legacy,
    "official": phase_official,
    "compare": phase_compare,
}


# --- orchestration ------------------------------------------------------------------------------------------


def _run_phase(name: str, corpus: Path, real: bool, work: Path, data: Path) -> dict:
    cache = work / f"cache-{corpus.stem}"
    tokens = work / f"tokens-{corpus.stem}.pkl"
    cmd = [sys.executable, __file__, "--phase", name, "--corpus", str(corpus), "--cache", str(cache)]
    cmd += ["--tokens", str(tokens), "--data", str(data)] + (["--real"] if real else [])
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"phase {name} on {corpus.name} failed")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["phase_wall_s"] = time.perf_counter() - t0
    print(f"  {corpus.name:>22} {name:<8} {result['phase_wall_s']:6.1f}s", file=sys.stderr, flush=True)
    return result


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def _print_table(label: str, r: dict) -> None:
    b, w, lg, off, cmp_ = r["build"], r["warm"], r["legacy"], r["official"], r["compare"]
    lat = lambda d: f"{d['p50_ms']:.2f} / {d['p95_ms']:.2f}"  # noqa: E731
    print(
        f"\n## {label}: {b['docs']:,} paragraphs, {b['chars']:,} chars, {b['distinct_words']:,} distinct words"
    )
    rows = [
        ("cold: corpus load (s)", _fmt(b["load_s"]), "same", _fmt(off["load_s"])),
        ("cold: Kiwi start-up (s)", _fmt(b["kiwi_init_s"]), _fmt(lg["kiwi_init_s"]), "-"),
        (
            "cold: tokenization wall (cpu) s",
            f"{_fmt(b['tokenize_s'])} ({_fmt(b['tokenize_cpu_s'])})",
            f"{_fmt(lg['tokenize_s'])} ({_fmt(lg['tokenize_cpu_s'])})"
            + (" extrap." if lg["tokenize_extrapolated"] else ""),
            _fmt(off["tokenize_s"]),
        ),
        (
            "cold: bm25s index + save (s)",
            _fmt(b["index_save_s"]),
            _fmt(lg.get("index_save_s", "-")),
            _fmt(off["index_save_s"]),
        ),
        ("cold: total (s)", _fmt(b["cold_total_s"]), "-", _fmt(off["cold_total_s"])),
        ("cold: peak RSS (MB)", _fmt(b["maxrss_mb"]), _fmt(lg["maxrss_mb"]), _fmt(off["maxrss_mb"])),
        (
            "warm: corpus load + index open (s)",
            f"{_fmt(w['load_s'])} + {_fmt(w['open_s'])}",
            "same",
            _fmt(off["warm_open_s"]),
        ),
        ("warm: Kiwi ready after open (s)", _fmt(w["kiwi_ready_s"]), "-", "-"),
        (
            "warm: peak RSS loaded / after queries (MB)",
            f"{_fmt(w['rss_after_load_mb'])} / {_fmt(w['maxrss_mb'])}",
            "-",
            "-",
        ),
        (
            "KoBLEX q: tokenize p50/p95 ms (new words)",
            lat(w["koblex_tokenize_cold"]),
            lat(lg["koblex_tokenize"]),
            "-",
        ),
        ("KoBLEX q: score top-100 p50/p95 ms", lat(w["koblex_score"]), lat(w["koblex_score_old"]), "-"),
        ("KoBLEX q: end-to-end, empty word memo", lat(w["koblex_e2e_cold"]), "-", lat(off["bm25s_retrieve"])),
        (
            "KoBLEX q: end-to-end, words memoised",
            lat(w["koblex_e2e_warm"]),
            "-",
            lat(off["our_search"]) + " (ours)",
        ),
        ("ParSeR q: score top-100 p50/p95 ms", lat(w["parser_score"]), lat(w["parser_score_old"]), "-"),
        ("ParSeR: search_many per question", lat(w["parser_search_many"]), "-", "-"),
        ("new scorer == old scorer (KoBLEX q)", w["koblex_same_as_old"], "", ""),
    ]
    if "recall@10" in w:
        rows.append(
            (
                "recall@10 gold (bg+question)",
                _fmt(w["recall@10"]),
                _fmt(lg["recall@10"]),
                _fmt(off["recall@10"]),
            )
        )
    print(
        f"| {'measure':<44} | {'after (kiwi v2)':<22} | {'before (kiwi v1)':<26} | {'official bm25s':<18} |"
    )
    print(f"|{'-' * 46}|{'-' * 24}|{'-' * 28}|{'-' * 20}|")
    for name, a, bb, c in rows:
        print(f"| {name:<44} | {a:<22} | {bb:<26} | {c:<18} |")
    print(
        f"rank_bm25 BM25Okapi, same tokens: build {_fmt(cmp_['rank_bm25_build_s'])} s, query p50 "
        f"{cmp_['rank_bm25_query']['p50_ms']:.1f} ms vs ours {cmp_['our_query_same_tokens']['p50_ms']:.2f} ms "
        f"-> {cmp_['speedup_vs_rank_bm25']:.0f}x faster"
    )
    print(
        f"reference (numpy brute-force Lucene BM25, {REFERENCE_QUERIES} queries): top-{K} score lists equal "
        f"{cmp_['topk_scores_equal']}, ids in (score, position) order equal {cmp_['topk_ids_equal']}, "
        f"max rel. score diff {cmp_['max_rel_score_diff']:.1e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_data = os.environ.get("KOBLEX_SHARED_DATA", str(BENCH_DIR.parent.parent / "shared" / "data"))
    parser.add_argument("--data", default=default_data, help="shared/data folder (env KOBLEX_SHARED_DATA)")
    parser.add_argument("--size", type=int, default=250_000, help="synthetic scale corpus size")
    parser.add_argument("--work", type=Path, default=None, help="work dir (default: a temp dir, removed)")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="also write all results here")
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--tokens", help=argparse.SUPPRESS)
    parser.add_argument("--real", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.phase:
        import logging

        logging.disable(logging.WARNING)
        print(json.dumps(PHASES[args.phase](args)))
        return

    data = Path(args.data).resolve()
    work = args.work or Path(tempfile.mkdtemp(prefix="koblex-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    for stale in work.glob("cache-*"):
        shutil.rmtree(stale)  # every run starts cold
    real = data / "koblex" / "statutes.jsonl"
    corpora = [("REAL shared corpus", real, True)]
    if not args.skip_scale:
        from _scale_corpus import write_scale_corpus

        scale = work / f"SYNTHETIC-scale-{args.size}.jsonl"
        if not scale.exists():
            t0 = time.perf_counter()
            write_scale_corpus(real, scale, args.size)
            print(f"  generated {scale.name} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        corpora.append((f"SYNTHETIC scale corpus (speed only) x{args.size:,}", scale, False))
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average at start {load[0]:.2f}", file=sys.stderr)
    results = {}
    try:
        for label, path, is_real in corpora:
            results[label] = {
                phase: _run_phase(phase, path, is_real, work, data)
                for phase in ("build", "warm", "legacy", "official", "compare")
            }
        print(f"# BM25 retrieval bench ({os.cpu_count()} cores; load average at start {load[0]:.2f})")
        for label, r in results.items():
            _print_table(label, r)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
