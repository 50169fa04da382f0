"""BM25 retrieval side by side: ours, bm25s (numpy and numba backends), rank_bm25, Lucene (pyserini).

Run by hand (bench dependencies: `pip install -e ".[bench]"`, i.e. rank_bm25 and numba; pyserini and Java 17
optional, skipped with a message when absent):

    python bench/bench_retrieval.py [--data ../shared/data] [--sizes 250000 1000000] [--work DIR] [--json OUT]

Corpora: the real 5,423-paragraph `koblex/statutes.jsonl`, and SYNTHETIC ones of each `--sizes` paragraphs
recombined from it (bench/_scale_corpus.py; speed only, never quality) in `--work` (a temp dir by default).
Every measurement runs in its own process, so each peak RSS (`ru_maxrss`) is its own, single-threaded
(NUMBA_NUM_THREADS, OMP/MKL/OPENBLAS threads = 1); the load average is printed with every phase. For each
corpus and each tokenizer (`official`: the paper's regex tokens; `kiwi`: Kiwi morphemes):

- build:     ours from an empty cache (JSONL parse, tokenization, index, save); for kiwi also a rebuild with
             the parsed corpus and the analysed-word cache kept (a new corpus version or BM25 parameters).
- warm:      a new process from spawn to the first answered top-100 (corpus and index from the cache; run
             twice, so that the second start finds the first one's query words), then top-100 latency over
             the 226 KoBLEX questions (background + question, tokenization included, the `bm25s` order), and
             the memory after a 226-question ParSeR run (one `search_many` of the released GPT-4o ParSeR
             provisions per question).
- latency:   the fair comparison, in one process: ours (both orders: `bm25s`, bm25s' own lists, and `float64`)
             and bm25s (numba and numpy backends) on the same pre-tokenised questions (bm25s gets its own
             token ids, as a user who tokenised once would pass them; and, once more, the very token strings
             ours gets), every system warm, the systems interleaved query by query in a rotating order so
             that load and cache state hit all alike, three passes of which the last two count;
             tokenisation timed on its own for both (ours; `bm25s.tokenize` for the paper's tokens). Also how
             many lists of ours equal bm25s' numpy backend's (ids and float32 scores: the official scripts'
             backend) and how many have the same ids as its numba backend (a different tie order). And the
             `bm25s` order's floor: `np.argpartition` alone on the dense float32 array it ranks (the call
             that decides its ties), interleaved with the rest.
- bm25s:     bm25s' own build (its tokenizer for official tokens; our Kiwi tokens for kiwi), its own process.
- rank_bm25: BM25Okapi (another BM25 variant: speed only) on the real corpus.
- pyserini:  Lucene BM25 (k1=1.5, b=0.75) over the same tokens, whitespace-analysed, if pyserini and Java load
             (pyserini 1.x needs Java 21+: set JAVA_HOME). Its build time indexes given tokens: for kiwi, the
             words come from the build's analysed-word cache, so Kiwi's analysis is not in it.
- reference: our top-100 against a brute-force Lucene BM25 computed from the raw token stream (not our
             postings), exact float64 scores with ties by corpus position: all questions on the real corpus,
             a sample at scale.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import random
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
REFERENCE_SAMPLE = 40  # questions checked against the brute-force reference on synthetic corpora
TOKENIZERS = ("official", "kiwi")
SINGLE_THREAD = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


# --- helpers ------------------------------------------------------------------------------------------------


def _status_mb(field: str) -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith(field + ":")) / 1024


def _peak_mb() -> float:
    """This process's peak RSS. VmHWM, not ru_maxrss: Linux carries the parent's peak into a spawned child's."""
    return _status_mb("VmHWM")


def _rss_mb() -> float:
    return _status_mb("VmRSS")


def _latency(fn, items, repeat: int = 2) -> dict[str, float]:
    """p50/p95 (ms) of `fn(item)` over the items, measured on the last of `repeat` passes."""
    times: list[float] = []
    for _ in range(repeat):
        times = []
        for item in items:
            start = time.perf_counter()
            fn(item)
            times.append(time.perf_counter() - start)
    return _percentiles(times)


def _questions(data: Path) -> list[str]:
    """Background + question with no separator, as `official_question` builds the solvers' query."""
    with (data / "koblex" / "koblex.jsonl").open(encoding="utf-8") as handle:
        return [q["background"] + q["question"] for q in map(json.loads, filter(str.strip, handle))]


def _parser_queries(data: Path) -> list[list[str]]:
    """Per question, the provision strings the released ParSeR run selected (stand-ins for its guesses)."""
    with (data / "koblex" / "released_gpt4o" / "parser_gpt4o.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [[c for a in row["answers"] for c in a["comb"]] or [row["question"]] for row in rows]


def _tokenizer(name: str):
    from koblex_tasks.corpus.tokenizers import get_tokenizer

    return get_tokenizer(name)


def _texts(corpus_path: str) -> list[str]:
    from koblex_tasks.corpus.statutes import load_statutes

    return load_statutes(corpus_path, use_cache=False).texts()


# --- phases (each in its own process) -----------------------------------------------------------------------


def phase_build(args) -> dict:
    """Ours from an empty cache (or, with --keep, with the parsed corpus and word cache of a previous build)."""
    start = time.perf_counter()
    from koblex_tasks.corpus.bm25 import BM25Index
    from koblex_tasks.corpus.statutes import load_statutes

    tokenizer = _tokenizer(args.tokenizer)
    corpus = load_statutes(args.corpus, cache_dir=Path(args.cache))
    load_s = time.perf_counter() - start
    index = BM25Index.open(corpus, tokenizer, cache_dir=Path(args.cache))
    assert not index.loaded_from_cache
    return {
        "total_s": time.perf_counter() - start,
        "corpus_s": load_s,
        "index_s": time.perf_counter() - start - load_s,
        "peak_mb": _peak_mb(),
        "words_analysed": getattr(tokenizer, "analysed_words", None),
        "postings": len(index._postings.postings),
        "vocabulary": len(index._vocab),
        "docs": len(corpus),
    }


def phase_warm(args) -> dict:
    """Spawn to first answer (the parent subtracts its spawn time), then latency and a ParSeR run's memory."""
    from koblex_tasks.corpus.retriever import RetrieverSettings, build_retriever

    data = Path(args.data)
    questions = _questions(data)
    retriever = build_retriever(
        RetrieverSettings(corpus=args.corpus, tokenizer=args.tokenizer), cache_dir=Path(args.cache)
    )
    retriever.search(questions[0], K)
    first_answer = time.time()
    assert retriever.index is not None and retriever.index.loaded_from_cache
    # scipy is not listed: numba imports it when numba itself loads (in the background)
    imported = sorted(m for m in ("inspect_ai", "bm25s", "torch", "kiwipiepy") if m in sys.modules)
    from koblex_tasks.corpus import scoring

    scoring.load_fast_kernel(wait=True)
    index = retriever.index
    cold = _latency(lambda q: index.search(q, K), questions, repeat=1)  # Kiwi's word memo empty
    warm = _latency(lambda q: index.search(q, K), questions)
    tokens = index.tokenizer.tokenize(questions)
    scoring_only = _latency(lambda t: index.search_tokens(t, K), tokens)
    postings = [
        int(sum(index._postings.indptr[t + 1] - index._postings.indptr[t] for t in index._query(q)[0]))
        for q in tokens
    ]
    for question, provisions in zip(questions, _parser_queries(data), strict=True):
        retriever.search_many([question, *provisions], K)
    return {
        "first_answer_at": first_answer,
        "imported": imported,
        "numba": scoring._fast is not None,
        "e2e_cold_memo": cold,
        "e2e": warm,
        "scoring_only": scoring_only,
        "median_postings": statistics.median(postings),
        "parser_run_rss_mb": _rss_mb(),
        "peak_mb": _peak_mb(),
    }


def phase_bm25s(args) -> dict:
    """bm25s' own build in its own process (its peak memory is its own)."""
    import bm25s

    start = time.perf_counter()
    texts = _texts(args.corpus)
    load_s = time.perf_counter() - start
    t0 = time.perf_counter()
    if args.tokenizer == "official":
        corpus_tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    else:
        corpus_tokens = _tokenizer(args.tokenizer).tokenize(texts)
    tokenize_s = time.perf_counter() - t0
    del texts
    t0 = time.perf_counter()
    retriever = bm25s.BM25(backend="numba")
    retriever.index(corpus_tokens, show_progress=False)
    index_s = time.perf_counter() - t0
    return {
        "build_s": load_s + tokenize_s + index_s,
        "load_s": load_s,
        "tokenize_s": tokenize_s,
        "index_s": index_s,
        "peak_mb": _peak_mb(),
    }


def phase_latency(args) -> dict:
    """Ours and bm25s on the same pre-tokenised questions, interleaved query by query, all warm."""
    import bm25s

    from koblex_tasks.corpus import scoring
    from koblex_tasks.corpus.bm25 import BM25Index
    from koblex_tasks.corpus.statutes import load_statutes

    tokenizer = _tokenizer(args.tokenizer)
    corpus = load_statutes(args.corpus, cache_dir=Path(args.cache))
    index = BM25Index.open(corpus, tokenizer, cache_dir=Path(args.cache))
    scoring.load_fast_kernel(wait=True)
    if hasattr(tokenizer, "known_words"):  # the build's analysed words: the same tokens, without Kiwi's time
        from koblex_tasks.corpus.wordcache import load_words

        tokenizer.known_words = {**load_words(tokenizer, Path(args.cache)), **tokenizer.known_words}
    docs = tokenizer.tokenize(corpus.texts())
    numba_backend = bm25s.BM25(backend="numba")
    numba_backend.index(docs, show_progress=False)
    numpy_backend = bm25s.BM25()  # the official scripts' backend, over the same index
    numpy_backend.index(docs, show_progress=False)
    del docs
    questions = _questions(Path(args.data))
    tokens = tokenizer.tokenize(questions)  # also warms the Kiwi word memo, as a long run has it
    vocab = numba_backend.vocab_dict
    ids = [[vocab[t] for t in q if t in vocab] for q in tokens]
    keep = [i for i, q in enumerate(ids) if q]  # bm25s refuses a query without a known token
    tokens, ids = [tokens[i] for i in keep], [ids[i] for i in keep]

    def numba_search(q: list[int]):
        return numba_backend.retrieve([q], k=K, show_progress=False, n_threads=1)

    def numpy_search(q: list[int]):
        return numpy_backend.retrieve([q], k=K, show_progress=False, n_threads=0)

    same_numpy = same_numba_ids = 0
    for t, q in zip(tokens, ids, strict=True):
        ours = index.search_tokens(t, K, "bm25s")
        ours_ids, ours_scores = [h.index for h in ours], [h.score for h in ours]
        r = numpy_search(q)
        same_numpy += ours_ids == r.documents[0].tolist() and ours_scores == r.scores[0].tolist()
        same_numba_ids += ours_ids == numba_search(q).documents[0].tolist()
    floor_arrays = _bm25s_dense_scores(index, tokens)

    def bm25s_order_floor(i: int):  # the one call that decides the `bm25s` order's ties, on its own
        return np.argpartition(floor_arrays[i], -K)[-K:]

    systems = {
        "ours_bm25s": lambda i: index.search_tokens(tokens[i], K, "bm25s"),
        "ours_float64": lambda i: index.search_tokens(tokens[i], K, "float64"),
        "bm25s_numba": lambda i: numba_search(ids[i]),
        "bm25s_numba_tokens": lambda i: numba_search(tokens[i]),  # the very lists ours gets
        "bm25s_numpy": lambda i: numpy_search(ids[i]),
        "bm25s_order_floor": bm25s_order_floor,
    }
    names = list(systems)
    times: dict[str, list[float]] = {name: [] for name in systems}
    for rep in range(3):
        for i in range(len(ids)):
            turn = i % len(names)  # rotated, so that no system always runs after the same one
            for name in names[turn:] + names[:turn]:
                start = time.perf_counter()
                systems[name](i)
                if rep:
                    times[name].append(time.perf_counter() - start)
    if args.tokenizer == "official":

        def theirs(q: str):
            return bm25s.tokenize([q], stopwords="en", return_ids=False, show_progress=False)
    else:
        theirs = None
    tokenize_ours, tokenize_theirs = [], []
    for rep in range(3):
        for q in questions:
            start = time.perf_counter()
            tokenizer.tokenize([q])
            middle = time.perf_counter()
            if theirs is not None:
                theirs(q)
            if rep:
                tokenize_ours.append(middle - start)
                tokenize_theirs.append(time.perf_counter() - middle)
    return {
        "queries": len(ids),
        "identical_to_bm25s_numpy": same_numpy,
        "same_ids_as_bm25s_numba": same_numba_ids,
        **{name: _percentiles(values) for name, values in times.items()},
        "tokenize_ours": _percentiles(tokenize_ours),
        "tokenize_bm25s": _percentiles(tokenize_theirs) if theirs is not None else None,
        "load": os.getloadavg()[0],
    }


def _bm25s_dense_scores(index, tokens: list[list[str]]) -> list[np.ndarray]:
    """Each query's dense float32 bm25s score array, summed by the `bm25s` order's own accumulation, as that
    order passes it to `np.argpartition`."""
    from koblex_tasks.corpus import scoring

    columns = index._postings.columns
    arrays = []
    for query in tokens:
        dense = np.zeros(columns.n_docs, dtype=np.float32)
        scoring.accumulate_bm25s(columns, index._occurrences(query), dense)
        arrays.append(dense)
    return arrays


def _percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1e3
    return {"p50": float(np.percentile(ms, 50)), "p95": float(np.percentile(ms, 95))}


def phase_rank_bm25(args) -> dict:
    from rank_bm25 import BM25Okapi

    tokenizer = _tokenizer(args.tokenizer)
    docs = tokenizer.tokenize(_texts(args.corpus))
    t0 = time.perf_counter()
    okapi = BM25Okapi(docs)
    build_s = time.perf_counter() - t0
    questions = _questions(Path(args.data))[:RANK_BM25_QUERIES]
    tokenizer.tokenize(questions)

    def search(q: str) -> None:
        scores = okapi.get_scores(tokenizer.tokenize([q])[0])
        np.argsort(-scores)[:K]

    return {"build_s": build_s, "query": _latency(search, questions, repeat=1), "peak_mb": _peak_mb()}


def phase_pyserini(args) -> dict:
    """Lucene over our tokens: documents and queries are space-joined terms, whitespace-analysed."""
    # pyserini 1.x builds an OpenAI client when imported; a placeholder key lets it import (nothing is sent)
    os.environ.setdefault("OPENAI_API_KEY", "placeholder-not-used")
    try:
        from pyserini.index.lucene import LuceneIndexer
        from pyserini.pyclass import autoclass  # after pyserini has put its jar on the JVM's class path
        from pyserini.search.lucene import LuceneSearcher
    except Exception as exc:  # not installed, or a Java older than its jar (pyserini 1.x needs Java 21+)
        return {"skipped": f"pyserini unavailable ({type(exc).__name__}: {str(exc)[:160]})"}
    from koblex_tasks.corpus.wordcache import load_words

    tokenizer = _tokenizer(args.tokenizer)
    if hasattr(tokenizer, "known_words"):  # the build's analysed words: the same tokens, without Kiwi's time
        tokenizer.known_words = load_words(tokenizer, Path(args.cache))
    texts = _texts(args.corpus)
    index_dir = Path(args.cache) / "lucene"
    shutil.rmtree(index_dir, ignore_errors=True)
    t0 = time.perf_counter()
    indexer = LuceneIndexer(args=["-index", str(index_dir), "-pretokenized"], threads=os.cpu_count() or 1)
    for start in range(0, len(texts), 20_000):
        batch = tokenizer.tokenize(texts[start : start + 20_000])
        indexer.add_batch_dict([{"id": str(start + i), "contents": " ".join(t)} for i, t in enumerate(batch)])
    indexer.close()
    build_s = time.perf_counter() - t0
    searcher = LuceneSearcher(str(index_dir))
    searcher.set_bm25(1.5, 0.75)
    searcher.set_analyzer(autoclass("org.apache.lucene.analysis.core.WhitespaceAnalyzer")())
    questions = _questions(Path(args.data))
    tokenizer.tokenize(questions)
    latency = _latency(lambda q: searcher.search(" ".join(tokenizer.tokenize([q])[0]), k=K), questions)
    return {"build_s": build_s, "query": latency, "peak_mb": _peak_mb()}


def phase_reference(args) -> dict:
    """Our top-100 against Lucene BM25 brute-forced from the raw token stream, exactly."""
    from koblex_tasks.corpus.bm25 import BM25Index
    from koblex_tasks.corpus.statutes import load_statutes
    from koblex_tasks.corpus.tokenizers import encode_with
    from koblex_tasks.corpus.wordcache import remembering_words

    tokenizer = _tokenizer(args.tokenizer)
    corpus = load_statutes(args.corpus, cache_dir=Path(args.cache))
    index = BM25Index.open(corpus, tokenizer, cache_dir=Path(args.cache))
    with remembering_words(
        tokenizer, Path(args.cache)
    ):  # the build's analysed words: the same tokens, sooner
        encoded = encode_with(tokenizer, corpus.iter_texts())
    stream, lengths = encoded.term_ids, encoded.lengths
    doc_of = np.repeat(np.arange(len(lengths)), lengths)
    term_id = {t: i for i, t in enumerate(encoded.vocabulary)}
    n, avgdl, k1, b = len(lengths), int(lengths.sum()) / len(lengths), 1.5, 0.75
    order = np.argsort(stream, kind="stable")  # occurrences grouped by term
    bounds = np.searchsorted(stream[order], np.arange(len(encoded.vocabulary) + 1))

    def reference(tokens: list[str]) -> list[tuple[int, float]]:
        scores = np.zeros(n)
        for term, count in Counter(tokens).items():
            if term not in term_id:
                continue
            j = term_id[term]
            docs, tf = np.unique(doc_of[order[bounds[j] : bounds[j + 1]]], return_counts=True)
            idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            tf = tf.astype(np.float64)
            scores[docs] += idf * tf / (tf + k1 * (1 - b + b * lengths[docs] / avgdl)) * count
        top = sorted(np.flatnonzero(scores > 0).tolist(), key=lambda i: (-scores[i], i))[:K]
        return [(i, float(scores[i])) for i in top]

    questions = _questions(Path(args.data))
    if not args.real:
        questions = random.Random(0).sample(questions, REFERENCE_SAMPLE)
    same = sum(
        [(h.index, h.score) for h in index.search(q, K, "float64")] == reference(tokenizer.tokenize([q])[0])
        for q in questions
    )
    return {"identical": same, "checked": len(questions)}


PHASES = {
    "build": phase_build,
    "warm": phase_warm,
    "bm25s": phase_bm25s,
    "latency": phase_latency,
    "rank_bm25": phase_rank_bm25,
    "pyserini": phase_pyserini,
    "reference": phase_reference,
}


# --- orchestration ------------------------------------------------------------------------------------------


def _run(phase: str, corpus: Path, tokenizer: str, cache: Path, data: Path, real: bool) -> dict:
    cmd = [sys.executable, __file__, "--phase", phase, "--corpus", str(corpus), "--tokenizer", tokenizer]
    cmd += ["--cache", str(cache), "--data", str(data)] + (["--real"] if real else [])
    env = dict(os.environ, **dict.fromkeys(SINGLE_THREAD, "1"))
    load = os.getloadavg()[0]
    spawned = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"phase {phase} ({tokenizer}) on {corpus.name} failed")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if "first_answer_at" in result:
        result["warm_start_s"] = result.pop("first_answer_at") - spawned
    result["load_avg"] = [load, os.getloadavg()[0]]
    print(
        f"  {corpus.name:>26} {tokenizer:<8} {phase:<9} {time.time() - spawned:6.1f}s (load {load:.2f})",
        file=sys.stderr,
        flush=True,
    )
    return result


def measure(corpus: Path, real: bool, work: Path, data: Path) -> dict:
    results: dict[str, dict] = {}
    for tokenizer in TOKENIZERS:
        cache = work / f"cache-{corpus.stem}-{tokenizer}"
        shutil.rmtree(cache, ignore_errors=True)
        run = {"build": _run("build", corpus, tokenizer, cache, data, real)}
        if tokenizer == "kiwi":  # the index again, with the parsed corpus and the analysed words cached
            shutil.rmtree(cache / "bm25")
            run["rebuild"] = _run("build", corpus, tokenizer, cache, data, real)
        run["first_warm"] = _run("warm", corpus, tokenizer, cache, data, real)  # Kiwi: query words new
        run["warm"] = _run("warm", corpus, tokenizer, cache, data, real)
        run["reference"] = _run("reference", corpus, tokenizer, cache, data, real)
        run["bm25s"] = _run("bm25s", corpus, tokenizer, cache, data, real)
        run["latency"] = _run("latency", corpus, tokenizer, cache, data, real)
        run["pyserini"] = _run("pyserini", corpus, tokenizer, cache, data, real)
        if real:
            run["rank_bm25"] = _run("rank_bm25", corpus, tokenizer, cache, data, real)
        results[tokenizer] = run
    return results


def _ms(d: dict) -> str:
    return f"{d['p50']:.2f} / {d['p95']:.2f}"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "-"


def print_table(label: str, size: int, r: dict) -> None:
    print(f"\n### {label}: {size:,} paragraphs")
    print("| measure | ours | bm25s numba | bm25s numpy | Lucene | ours / numba | load avg |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows: list[tuple[str, ...]] = []

    def load(*phases: dict) -> str:
        values = [v for p in phases for v in p.get("load_avg", [])]
        return f"{min(values):.2f}–{max(values):.2f}" if values else ""

    for tok in TOKENIZERS:
        run = r[tok]
        b, w, s, lat = run["build"], run["warm"], run["bm25s"], run["latency"]
        ref, pys, first = run["reference"], run["pyserini"], run["first_warm"]
        name = "paper tokens" if tok == "official" else "Kiwi tokens"
        n = lat["queries"]
        rows += [
            (
                f"{name}: top-100 p50 / p95 ms, pre-tokenised, `bm25s` order (bm25s' own lists)",
                _ms(lat["ours_bm25s"]),
                _ms(lat["bm25s_numba"]),
                _ms(lat["bm25s_numpy"]),
                _ms(pys["query"]) if "query" in pys else "skipped",
                _ratio(lat["ours_bm25s"]["p50"], lat["bm25s_numba"]["p50"]),
                load(run["latency"]),
            ),
            (
                f"{name}: top-100 p50 / p95 ms, pre-tokenised, `float64` order",
                _ms(lat["ours_float64"]),
                "",
                "",
                "",
                _ratio(lat["ours_float64"]["p50"], lat["bm25s_numba"]["p50"]),
                "",
            ),
            (
                f"{name}: bm25s numba given the same token strings as ours (not its ids) p50 / p95 ms",
                "",
                _ms(lat["bm25s_numba_tokens"]),
                *[""] * 4,
            ),
            (
                f"{name}: `np.argpartition` alone on the `bm25s` order's dense array (its floor) p50 / p95 ms",
                _ms(lat["bm25s_order_floor"]),
                *[""] * 3,
                _ratio(lat["bm25s_order_floor"]["p50"], lat["bm25s_numba"]["p50"]),
                "",
            ),
            (
                f"{name}: lists identical to bm25s numpy (ids, float32 scores) / same ids as numba",
                f"{lat['identical_to_bm25s_numpy']}/{n} / {lat['same_ids_as_bm25s_numba']}/{n}",
                "",
                "",
                "",
                "",
                "",
            ),
            (
                f"{name}: tokenising one question p50 / p95 ms",
                _ms(lat["tokenize_ours"]),
                _ms(lat["tokenize_bm25s"]) if lat["tokenize_bm25s"] else "(ours)",
                "",
                "",
                "",
                "",
            ),
            (
                f"{name}: top-100 p50 / p95 ms, text in (tokenising + `bm25s` order)",
                _ms(w["e2e"]),
                "",
                "",
                "",
                "",
                load(w),
            ),
            (
                f"{name}: cold build s (peak RSS MB)",
                f"{b['total_s']:.1f} ({b['peak_mb']:.0f})",
                f"{s['build_s']:.1f} ({s['peak_mb']:.0f})",
                "same",
                f"{pys['build_s']:.1f} s" if "build_s" in pys else "skipped",
                _ratio(b["total_s"], s["build_s"]),
                load(b, s),
            ),
        ]
        if "rebuild" in run:
            rb = run["rebuild"]
            rows.append(
                (
                    f"{name}: rebuild with cached corpus + words, s (peak MB)",
                    f"{rb['total_s']:.1f} ({rb['peak_mb']:.0f})",
                    *[""] * 4,
                    load(rb),
                )
            )
        rows += [
            (
                f"{name}: warm start, spawn → first top-100 s (first start after the build / next)",
                f"{first['warm_start_s']:.2f} / {w['warm_start_s']:.2f}"
                + (f" (imports {', '.join(w['imported'])})" if w["imported"] else ""),
                *[""] * 4,
                load(first, w),
            ),
            (f"{name}: 226-question ParSeR run holds (RSS MB)", f"{w['parser_run_rss_mb']:.0f}", *[""] * 5),
            (
                f"{name}: `float64` top-100 identical to brute-force Lucene BM25",
                f"{ref['identical']}/{ref['checked']}",
                *[""] * 5,
            ),
        ]
        if tok == "kiwi":
            rows.append(
                (
                    f"{name}: first pass, Kiwi word memo empty, p50 / p95 ms",
                    _ms(w["e2e_cold_memo"]),
                    *[""] * 5,
                )
            )
        if "rank_bm25" in run:
            rk = run["rank_bm25"]
            rows.append(
                (
                    f"{name}: rank_bm25 BM25Okapi query p50 ms (build s)",
                    f"rank_bm25 {rk['query']['p50']:.1f} ({rk['build_s']:.1f})",
                    "",
                    "",
                    "",
                    f"rank_bm25 {rk['query']['p50'] / w['e2e']['p50']:.0f}× slower",
                    "",
                )
            )
    for row in rows:
        print("| " + " | ".join(row) + " |")
    for tok in TOKENIZERS:
        if "skipped" in r[tok]["pyserini"]:
            print(f"Lucene ({tok}): {r[tok]['pyserini']['skipped']}")
            break


def print_growth(results: dict[int, dict]) -> None:
    sizes = sorted(results)
    if len(sizes) < 2:
        return
    print("\n### growth with corpus size")
    print("| measure | " + " | ".join(f"{s:,}" for s in sizes) + " |")
    print("| --- |" + " --- |" * len(sizes))
    picks = [
        ("top-100 p50 ms, `bm25s` order", lambda run: f"{run['latency']['ours_bm25s']['p50']:.2f}"),
        ("top-100 p50 ms, `float64` order", lambda run: f"{run['latency']['ours_float64']['p50']:.2f}"),
        ("bm25s numba p50 ms", lambda run: f"{run['latency']['bm25s_numba']['p50']:.2f}"),
        ("cold build s", lambda run: f"{run['build']['total_s']:.1f}"),
        ("build peak MB", lambda run: f"{run['build']['peak_mb']:.0f}"),
        ("warm start s", lambda run: f"{run['warm']['warm_start_s']:.2f}"),
        ("ParSeR run RSS MB", lambda run: f"{run['warm']['parser_run_rss_mb']:.0f}"),
    ]
    for tok in TOKENIZERS:
        for name, pick in picks:
            print(f"| {tok}: {name} | " + " | ".join(pick(results[s][tok]) for s in sizes) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_data = os.environ.get("KOBLEX_SHARED_DATA", str(BENCH_DIR.parent.parent / "shared" / "data"))
    parser.add_argument("--data", default=default_data, help="shared/data folder (env KOBLEX_SHARED_DATA)")
    parser.add_argument("--sizes", type=int, nargs="*", default=[250_000], help="synthetic corpus sizes")
    parser.add_argument("--work", type=Path, default=None, help="work dir (default: a temp dir, removed)")
    parser.add_argument("--json", type=Path, default=None, help="also write all results here")
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    parser.add_argument("--tokenizer", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
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
    real = data / "koblex" / "statutes.jsonl"
    corpora: list[tuple[str, Path, bool, int]] = [("REAL shared corpus", real, True, 5423)]
    for size in args.sizes:
        from _scale_corpus import write_scale_corpus

        path = work / f"SYNTHETIC-scale-{size}.jsonl"
        if not path.exists():
            t0 = time.perf_counter()
            write_scale_corpus(real, path, size)
            print(f"  generated {path.name} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        corpora.append((f"SYNTHETIC corpus (speed only) x{size:,}", path, False, size))
    load = os.getloadavg()
    results: dict[int, dict] = {}
    try:
        for _, path, is_real, size in corpora:
            results[size] = measure(path, is_real, work, data)
        end_load = os.getloadavg()
        print(
            f"# BM25 retrieval bench, {datetime.date.today()} ({os.cpu_count()} cores; load average "
            f"{load[0]:.2f} at start, {end_load[0]:.2f} at end)"
        )
        for label, _, _, size in corpora:
            print_table(label, size, results[size])
        print_growth({s: r for s, r in results.items() if s != 5423})
        if args.json:
            args.json.write_text(
                json.dumps({str(k): v for k, v in results.items()}, indent=1, ensure_ascii=False)
            )
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
