"""ParSeR's rerank stage timed on the paper's architecture: serialised, batched, cached, and a rerank engine.

Run by hand (needs the rerank extra; no download):

    python bench/bench_rerank.py [--data ../shared/data] [--samples 8] [--pairs 100] [--rounds 1] [--bf16]
                                 [--threads N] [--json OUT]

The model is the paper's reranker's architecture (`dragonkue/bge-reranker-v2-m3-ko`: XLM-RoBERTa-large, 24
layers, hidden 1024, 16 heads, 250,002-token vocabulary, one label) at RANDOM weights built from its config:
the same shapes cost the same time, whatever the weights (`--layers 2` keeps every shape but the depth: a quick
smoke run, not the paper's cost). Its tokenizer is a Unigram model trained here on the shared statutes and
questions (the real SentencePiece model is a download); the median tokens per pair is printed next to the
issue's ~106 for the real one. Inputs: `--samples` real questions (seeded draw), each with its BM25 top
`--pairs` paragraphs from the shared corpus (the project's retriever, the paper's settings; the rerank query is
the question), as concurrent samples each reranking its list. Every pair is tokenised once before any timing
(the same token ids for every path; the tokenisation's own time is printed), so the paths differ only in how
the model runs them:

- serialised: today's path, `CrossEncoderReranker.forward_in_order` under the model's lock: one query's pairs
  at a time, in batches of 50 in BM25 order, each padded to its longest pair; one thread per sample;
- serialised, length-sorted: one query at a time, its pairs sorted by length into micro-batches of bounded
  padded tokens (`forward_by_length`): what sorting alone gains, without pooling samples;
- batched: the batching queue (`corpus.rerank_batch.BatchQueue`) in front of `forward_by_length`: every
  waiting sample's pairs pooled, sorted by length, cut into micro-batches (the in-process default);
- cached: the stage with its score cache already holding the pairs (a second run of the grid);
- engine: the client of `-T reranker_url` against a local stand-in engine (tests/corpus/rerank_standin.py)
  that scores with the stub formula: the client's and HTTP's own cost; a real engine adds its GPU time.

Fair comparison: the same token ids for every path, one torch thread count (printed, as every call saw it),
each path warm (an untimed call of `--warmup-pairs` pairs first), the model paths interleaved round by round
in a rotating order; per path the wall seconds, this process's CPU seconds (which the machine's other jobs do
not inflate) and the 1-minute load average before and after. The batched scores are checked against the
serialised ones (largest difference, same top 10). `--bf16` also scores `--bf16-samples` questions in
bfloat16 and compares the top 10 with float32: at random weights, which says nothing about the trained
model's agreement (`--agreement <local copy of the weights>` measures that). The projection of a full ParSeR
run is 226 questions x ~3 guesses x k=100 = 67,800 pairs at each path's rate.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
FULL_RUN_PAIRS = 226 * 3 * 100
T = TypeVar("T")
XLMR_LARGE = {
    "vocab_size": 250002,
    "hidden_size": 1024,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "intermediate_size": 4096,
    "max_position_embeddings": 8194,
    "type_vocab_size": 1,
    "layer_norm_eps": 1e-5,
    "pad_token_id": 1,
    "bos_token_id": 0,
    "eos_token_id": 2,
    "num_labels": 1,
}


def _standin_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("rerank_standin", ROOT / "tests/corpus/rerank_standin.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def load_inputs(data: Path, samples: int, pairs: int, seed: int = 0) -> list[tuple[str, list[str]]]:
    """`samples` real questions (seeded draw), each with its BM25 top-`pairs` paragraphs of the shared corpus
    (the project's retriever, the paper's settings), as the texts the cross-encoder sees."""
    from koblex_tasks.corpus.retriever import RetrieverSettings, get_retriever

    questions = [json.loads(line) for line in (data / "koblex/koblex.jsonl").open(encoding="utf-8")]
    chosen = [str(q["question"]) for q in random.Random(seed).sample(questions, samples)]
    retriever = get_retriever(RetrieverSettings(corpus=str(data / "koblex/statutes.jsonl"), reranker="none"))
    lists = retriever.search_many(chosen, pairs)
    return [(q, [hit.provision.text for hit in hits]) for q, hits in zip(chosen, lists, strict=True)]


def build_model(directory: Path, corpus_texts: Sequence[str], layers: int = 24) -> Path:
    """The paper's reranker architecture at random weights, with a tokenizer trained on `corpus_texts`."""
    import transformers
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    special = ["<s>", "<pad>", "</s>", "<unk>"]
    tok.train_from_iterator(
        corpus_texts, trainers.UnigramTrainer(vocab_size=8000, special_tokens=special, unk_token="<unk>")
    )
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>",
        cls_token="<s>", sep_token="</s>", model_max_length=8192,
    )  # fmt: skip
    transformers.set_seed(0)
    config = transformers.XLMRobertaConfig(**{**XLMR_LARGE, "num_hidden_layers": layers})
    model = transformers.XLMRobertaForSequenceClassification(config)
    model.save_pretrained(directory)
    fast.save_pretrained(directory)
    return directory


def concurrently(
    score: Callable[[T], list[float]], inputs: list[T]
) -> tuple[float, list[list[float]], set[int]]:
    """Seconds for every sample's rerank call, one thread per sample, all started together; the scores; and
    the torch thread counts the calls saw (the same on every path, or the comparison is void)."""
    import torch

    start = threading.Barrier(len(inputs) + 1)
    out: dict[int, list[float]] = {}
    threads_seen: set[int] = set()

    def run(i: int) -> None:
        start.wait()
        out[i] = score(inputs[i])
        threads_seen.add(torch.get_num_threads())

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    start.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    assert len(out) == len(inputs)
    return elapsed, [out[i] for i in range(len(inputs))], threads_seen


def padded_tokens(lengths: list[list[int]], batch: int = 50, max_tokens: int = 8192) -> dict[str, int]:
    """Tokens the model runs (padding included) on each path: each query's pairs in batches of `batch` as
    given (serialised); each query's pairs sorted by length (length-sorted serialised); every query's pairs
    pooled and sorted (batched)."""
    from koblex_tasks.corpus.rerank_batch import length_batches

    def cost(ls: list[int], batches: list[list[int]]) -> int:
        return sum(len(b) * max(ls[i] for i in b) for b in batches)

    pooled = [x for ls in lengths for x in ls]
    return {
        "real": sum(pooled),
        "serialised": sum(
            cost(ls, [list(range(i, min(i + batch, len(ls)))) for i in range(0, len(ls), batch)])
            for ls in lengths
        ),
        "serialised_length_sorted": sum(cost(ls, length_batches(ls, max_tokens)) for ls in lengths),
        "batched": cost(pooled, length_batches(pooled, max_tokens)),
    }


def top_of(scores: list[float], passages: Sequence[object], top: int) -> list[int]:
    """The first `top` passages in the retriever's order (score descending, then first-stage rank)."""
    return sorted(range(len(passages)), key=lambda i: (-scores[i], i))[:top]


def agreement(a: list[list[float]], b: list[list[float]], top: int) -> dict[str, object]:
    """Per query: the same top `top` in the same order; the same set; and the largest score difference."""
    orders = [(top_of(x, x, top), top_of(y, y, top)) for x, y in zip(a, b, strict=True)]
    return {
        "queries": len(orders),
        "top": top,
        "same_top_order": sum(p == q for p, q in orders) / len(orders),
        "same_top_set": sum(set(p) == set(q) for p, q in orders) / len(orders),
        "max_abs_diff": max(abs(u - v) for x, y in zip(a, b, strict=True) for u, v in zip(x, y, strict=True)),
    }


def bf16_agreement(model: str, inputs: list[tuple[str, list[str]]], top: int) -> dict[str, object]:
    """How often bfloat16 keeps float32's top `top` (same passages in the same order; same set) per query."""
    from koblex_tasks.corpus.rerank import CrossEncoderReranker

    scores = {
        dtype: [
            CrossEncoderReranker(model, device=None, dtype=dtype).score_pairs([(q, p) for p in ps])
            for q, ps in inputs
        ]
        for dtype in ("float32", "bfloat16")
    }
    return agreement(scores["float32"], scores["bfloat16"], top)


def depth_check(shallow: Any, work: Path, corpus_texts: Sequence[str], pairs: list[Any]) -> dict[str, object]:
    """The same pairs (one length-sorted call) at the bench's depth and at the paper's 24 layers, interleaved
    twice: every layer has the same shapes, so the time should scale with the depth (embedding and classifier
    are a fraction of one layer)."""
    from koblex_tasks.corpus.rerank import CrossEncoderReranker

    full = CrossEncoderReranker(str(build_model(work / "model24", corpus_texts)), device="cpu")
    full.forward_by_length(pairs[:2])  # loaded and warm
    cpu: dict[str, list[float]] = {"shallow": [], "full": []}
    for _ in range(2):
        for name, encoder in (("shallow", shallow), ("full", full)):
            began = time.process_time()
            encoder.forward_by_length(pairs)
            cpu[name].append(time.process_time() - began)
    layers = int(XLMR_LARGE["num_hidden_layers"])
    shallow_layers = int(shallow._model.get().model.config.num_hidden_layers)
    return {
        "pairs": len(pairs),
        "cpu_seconds": {k: [round(t, 2) for t in v] for k, v in cpu.items()},
        "full_over_shallow_cpu": round(min(cpu["full"]) / min(cpu["shallow"]), 2),
        "layers_ratio": round(layers / shallow_layers, 2),
    }


class _NotCalled:
    """The cached path's scorer: every pair must come from the cache."""

    name = "not-called"

    def config(self) -> dict[str, object]:
        return {"name": self.name}

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        raise AssertionError("the cached path scored a pair")


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("KOBLEX_SHARED_DATA", ROOT.parent / "shared/data"))
    )
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=100, help="k: BM25 candidates per question")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--warmup-pairs", type=int, default=16, help="pairs of one sample per path, untimed")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own)")
    parser.add_argument(
        "--layers", type=int, default=24, help="fewer for a quick smoke run (not the paper's)"
    )
    parser.add_argument("--bf16", action="store_true", help="also bfloat16 vs float32 at random weights")
    parser.add_argument("--bf16-samples", type=int, default=2, help="questions the bfloat16 pass scores")
    parser.add_argument(
        "--depth-check",
        type=int,
        default=0,
        metavar="PAIRS",
        help="with --layers below 24: also time PAIRS pairs at that depth and at the full 24 layers",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="build the models here and keep them (default: a temp dir, removed)",
    )
    parser.add_argument("--padding-only", action="store_true", help="only count the tokens each path runs")
    parser.add_argument(
        "--agreement",
        metavar="MODEL",
        help="instead: bfloat16 vs float32 top-10 agreement of this cross-encoder (the real weights) on the "
        "inputs (use --pairs 100 --samples 226)",
    )
    args = parser.parse_args(argv)
    inputs = load_inputs(args.data, args.samples, args.pairs)
    if args.agreement:
        agreed = bf16_agreement(args.agreement, inputs, top=10)
        print(json.dumps(agreed, indent=2))
        return agreed

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-rerank-"))
    try:
        return _timed(args, inputs, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)  # the random models take gigabytes


def _timed(args: argparse.Namespace, inputs: list[tuple[str, list[str]]], work: Path) -> dict[str, object]:
    """Every path timed on `inputs`, with models built under `work`."""
    import torch

    from koblex_tasks.corpus.rerank import CrossEncoderReranker
    from koblex_tasks.corpus.rerank_batch import BatchQueue
    from koblex_tasks.corpus.rerank_cache import ScoreCache, pair_key, scorer_identity
    from koblex_tasks.corpus.rerank_server import ServerReranker, probe_server
    from koblex_tasks.corpus.rerank_stage import RerankStage

    n_pairs = sum(len(p) for _, p in inputs)
    statutes = [json.loads(line) for line in (args.data / "koblex/statutes.jsonl").open(encoding="utf-8")]
    corpus_texts = [f"{s.get('hierarchy', '')} {s.get('content', '')}" for s in statutes] + [
        q for q, _ in inputs
    ]
    model_dir = build_model(work / "model", corpus_texts, args.layers)
    encoder = CrossEncoderReranker(str(model_dir), device="cpu")
    began = time.perf_counter()
    encoded = [encoder.encode([(q, p) for p in ps]) for q, ps in inputs]  # pre-tokenised for every path
    tokenise_s = time.perf_counter() - began
    lengths = [[e.length for e in enc] for enc in encoded]
    padding = padded_tokens(lengths, encoder.batch_size, encoder.max_batch_tokens)
    if args.padding_only:
        print(json.dumps(padding))
        return dict(padding)

    pools: list[int] = []  # pairs per pooled call of the batched path

    def pooled(items: list[Any]) -> list[float]:
        pools.append(len(items))
        return encoder.forward_by_length(items)

    queue = BatchQueue(pooled)
    paths: dict[str, Callable[[list[Any]], list[float]]] = {
        "serialised": encoder.forward_in_order,  # today's: one query at a time, batches of 50 as ranked
        "serialised, length-sorted": encoder.forward_by_length,  # one query at a time, sorted
        "batched": queue.submit,  # every waiting query's pairs pooled and sorted
    }
    for path in paths.values():  # warm: the model loaded, each path's first call out of the timing
        path(encoded[0][: args.warmup_pairs])
    times: dict[str, list[float]] = {name: [] for name in paths}
    cpu_times: dict[str, list[float]] = {
        name: [] for name in paths
    }  # this process's CPU s: others' load aside
    scores: dict[str, list[list[float]]] = {}
    loads: dict[str, list[list[float]]] = {name: [] for name in paths}
    threads_seen: set[int] = set()
    names = list(paths)
    for r in range(args.rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            before, cpu = os.getloadavg(), time.process_time()
            seconds, scores[name], seen = concurrently(paths[name], encoded)
            times[name].append(seconds)
            cpu_times[name].append(time.process_time() - cpu)
            threads_seen |= seen
            loads[name].append([round(before[0], 2), round(os.getloadavg()[0], 2)])
            print(
                f"{name}: {seconds:.1f} s ({cpu_times[name][-1]:.1f} CPU s), load average {loads[name][-1]}",
                file=sys.stderr,
                flush=True,
            )

    # the cached path (a second run of a grid) and the engine client: on the texts, as a run calls them
    identity: dict[str, object] = {"model": "bench", "revision": "random"}
    cache = ScoreCache(work / "cache")
    key = scorer_identity(identity)
    cache.put_many(
        {
            pair_key(key, q, p): s
            for (q, ps), ss in zip(inputs, scores["batched"], strict=True)
            for p, s in zip(ps, ss, strict=True)
        }
    )
    cached = RerankStage(_NotCalled(), identity, cache)
    extra: dict[str, float] = {}
    extra["cached"], _, _ = concurrently(lambda x: cached.scores(*x), inputs)
    with _standin_module().rerank_standin("vllm", model="bench") as server:
        engine = ServerReranker(probe_server(server.base_url, "bench"))
        extra["engine (stand-in)"], _, _ = concurrently(lambda x: engine.scores(*x), inputs)

    rates = {name: n_pairs / statistics.median(ts) for name, ts in times.items()}
    rates |= {name: n_pairs / seconds for name, seconds in extra.items()}
    result: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} CPU cores, torch {torch.__version__}",
        "torch_threads": sorted(threads_seen),
        "layers": args.layers,
        "load_average_1min_before_after": loads,
        "samples": args.samples,
        "pairs_per_sample": args.pairs,
        "rounds": args.rounds,
        "median_tokens_per_pair": statistics.median(x for ls in lengths for x in ls),
        "padded_tokens": padding,
        "tokenise_s": round(tokenise_s, 3),
        "batched_pool_sizes": pools[1:],  # the first is the warm-up
        "seconds": {k: [round(t, 1) for t in v] for k, v in times.items()},
        "cpu_seconds": {k: [round(t, 1) for t in v] for k, v in cpu_times.items()},
        "batched_over_serialised_cpu": round(
            statistics.median(cpu_times["serialised"]) / statistics.median(cpu_times["batched"]), 2
        ),
        "pairs_per_s": {k: round(v, 2) for k, v in rates.items()},
        "batched_over_serialised": round(rates["batched"] / rates["serialised"], 2),
        "length_sorted_over_serialised": round(rates["serialised, length-sorted"] / rates["serialised"], 2),
        "batched_vs_serialised_scores": agreement(scores["serialised"], scores["batched"], top=10),
        "full_parser_run_hours": {k: round(FULL_RUN_PAIRS / v / 3600, 2) for k, v in rates.items()},
    }
    if args.bf16:
        bf16 = CrossEncoderReranker(str(model_dir), device="cpu", dtype="bfloat16")
        began = time.perf_counter()
        some = encoded[: args.bf16_samples]
        bf16_scores = [bf16.forward_by_length(enc) for enc in some]
        result["bf16_pairs_per_s_sequential"] = round(sum(map(len, some)) / (time.perf_counter() - began), 2)
        result["bf16_vs_fp32_random_weights"] = agreement(scores["batched"][: len(some)], bf16_scores, top=10)
    if args.depth_check and args.layers < XLMR_LARGE["num_hidden_layers"]:
        checked = depth_check(encoder, work, corpus_texts, encoded[0][: args.depth_check])
        result["depth_check"] = checked
        scale = float(checked["full_over_shallow_cpu"])  # type: ignore[arg-type]
        result["projected_at_24_layers"] = {
            "pairs_per_s": {k: round(v / scale, 2) for k, v in rates.items() if k in paths},
            "full_parser_run_hours": {
                k: round(FULL_RUN_PAIRS / v * scale / 3600, 1) for k, v in rates.items() if k in paths
            },
        }
    print(json.dumps(result, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    return result


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
