"""ParSeR's rerank stage timed on the paper's architecture: serialised, batched, cached, and a rerank engine.

Run by hand (needs the rerank extra; no download):

    python bench/bench_rerank.py [--data ../shared/data] [--samples 8] [--pairs 12] [--rounds 2] [--json OUT]

The model is the paper's reranker's architecture (`dragonkue/bge-reranker-v2-m3-ko`: XLM-RoBERTa-large, 24
layers, hidden 1024, 16 heads, 250,002-token vocabulary, one label) at RANDOM weights built from its config:
the same shapes cost the same time, whatever the weights. Its tokenizer is a Unigram model trained here on the
shared statutes and questions (the real SentencePiece model is a download); the median tokens per pair is
printed next to the issue's ~106 for the real one. Inputs: `--samples` real questions, each with `--pairs`
statute paragraphs drawn (seeded) from the shared corpus, as concurrent samples each reranking its list:

- serialised: today's path, `CrossEncoderReranker.scores` under its lock, one query's pairs at a time in
  batches of 50, one thread per sample;
- batched: the same model instance behind the batching queue (`corpus.rerank_stage.BatchedCrossEncoder`),
  one thread per sample: the queue pools the waiting samples' pairs and scores them grouped by length;
- cached: the stage with its score cache already holding the pairs (a second run of the grid);
- engine: the client of `-T reranker_url` against a local stand-in engine (tests/corpus/rerank_standin.py)
  that scores with the stub formula: the client's and HTTP's own cost; a real engine adds its GPU time.

Fair comparison: the same inputs for every path, the model warm (one call first), the paths interleaved round
by round in a rotating order, torch on the machine's cores; the load average is printed before and after.
The projection of a full ParSeR run is 226 questions x ~3 guesses x k=100 = 67,800 pairs at each path's rate.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FULL_RUN_PAIRS = 226 * 3 * 100
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
    """`samples` real questions, each with `pairs` statute paragraphs drawn from the shared corpus."""
    questions = [json.loads(line) for line in (data / "koblex/koblex.jsonl").open(encoding="utf-8")]
    statutes = [json.loads(line) for line in (data / "koblex/statutes.jsonl").open(encoding="utf-8")]
    texts = [f"{s.get('hierarchy', '')} {s.get('content', '')}".strip() for s in statutes]
    rng = random.Random(seed)
    chosen = rng.sample(questions, samples)
    return [(str(q["question"]), rng.sample(texts, pairs)) for q in chosen]


def build_model(directory: Path, corpus_texts: Sequence[str]) -> Path:
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
    model = transformers.XLMRobertaForSequenceClassification(transformers.XLMRobertaConfig(**XLMR_LARGE))
    model.save_pretrained(directory)
    fast.save_pretrained(directory)
    return directory


def concurrently(
    score: Callable[[str, list[str]], list[float]], inputs: list[tuple[str, list[str]]]
) -> float:
    """Seconds for every sample's rerank call, one thread per sample, all started together."""
    start = threading.Barrier(len(inputs) + 1)
    out: dict[int, list[float]] = {}

    def run(i: int) -> None:
        start.wait()
        out[i] = score(*inputs[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    start.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    assert len(out) == len(inputs)
    return elapsed


def padded_tokens(lengths: list[list[int]], batch: int = 50) -> dict[str, int]:
    """Tokens the model runs (padding included): each query's pairs in batches as given (serialised) vs all
    pairs pooled and grouped by length (batched)."""
    serial = sum(
        max(ls[i : i + batch]) * len(ls[i : i + batch]) for ls in lengths for i in range(0, len(ls), batch)
    )
    pooled = sorted(x for ls in lengths for x in ls)
    grouped = sum(
        max(pooled[i : i + batch]) * len(pooled[i : i + batch]) for i in range(0, len(pooled), batch)
    )
    return {"real": len(pooled) and sum(pooled), "serialised": serial, "batched": grouped}


def top_of(scores: list[float], passages: list[str], top: int) -> list[int]:
    """The first `top` passages in the official scripts' order (score, then passage text, descending)."""
    return sorted(range(len(passages)), key=lambda i: (scores[i], passages[i]), reverse=True)[:top]


def bf16_agreement(model: str, inputs: list[tuple[str, list[str]]], top: int) -> dict[str, object]:
    """How often bfloat16 keeps float32's top `top` (same passages in the same order; same set) per query."""
    from koblex_tasks.corpus.rerank import CrossEncoderReranker

    orders = {}
    for dtype in ("float32", "bfloat16"):
        encoder = CrossEncoderReranker(model, device=None, dtype=dtype)
        orders[dtype] = [top_of(encoder.scores(q, ps), ps, top) for q, ps in inputs]
    pairs = list(zip(orders["float32"], orders["bfloat16"], strict=True))
    return {
        "queries": len(pairs),
        "same_top_order": sum(a == b for a, b in pairs) / len(pairs),
        "same_top_set": sum(set(a) == set(b) for a, b in pairs) / len(pairs),
    }


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("KOBLEX_SHARED_DATA", ROOT.parent / "shared/data"))
    )
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--padding-only", action="store_true", help="only count the tokens each path runs")
    parser.add_argument(
        "--agreement",
        metavar="MODEL",
        help="instead: bfloat16 vs float32 top-10 agreement of this cross-encoder (the real weights) on the "
        "inputs (use --pairs 100 --samples 226)",
    )
    args = parser.parse_args(argv)
    if args.agreement:
        agreed = bf16_agreement(args.agreement, load_inputs(args.data, args.samples, args.pairs), top=10)
        print(json.dumps(agreed, indent=2))
        return agreed

    import torch

    from koblex_tasks.corpus.rerank import CrossEncoderReranker
    from koblex_tasks.corpus.rerank_cache import ScoreCache
    from koblex_tasks.corpus.rerank_server import ServerReranker, probe_server
    from koblex_tasks.corpus.rerank_stage import BatchedCrossEncoder, RerankStage

    inputs = load_inputs(args.data, args.samples, args.pairs)
    n_pairs = sum(len(p) for _, p in inputs)
    work = Path(tempfile.mkdtemp(prefix="bench-rerank-"))
    statutes = [json.loads(line) for line in (args.data / "koblex/statutes.jsonl").open(encoding="utf-8")]
    corpus_texts = [f"{s.get('hierarchy', '')} {s.get('content', '')}" for s in statutes] + [
        q for q, _ in inputs
    ]
    model_dir = build_model(work / "model", corpus_texts)
    if args.padding_only:
        import transformers

        tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
        counted = padded_tokens([[len(tokenizer(q, p)["input_ids"]) for p in ps] for q, ps in inputs])
        print(json.dumps(counted))
        return dict(counted)

    encoder = CrossEncoderReranker(str(model_dir), device="cpu")
    batched = BatchedCrossEncoder(encoder)
    cached = RerankStage(batched, {"model": "bench", "revision": "random"}, ScoreCache(work / "cache"))
    with _standin_module().rerank_standin("vllm", model="bench") as server:
        engine = ServerReranker(probe_server(server.base_url, "bench"))
        loaded = encoder._model.get()
        lengths = [len(loaded.tokenizer(q, p)["input_ids"]) for q, ps in inputs for p in ps]
        encoder.scores(*inputs[0])  # warm
        cached.scores(*inputs[0])
        for q, ps in inputs:  # the cache holds every pair: the "second run"
            cached.scores(q, ps)
        paths: dict[str, Callable[[str, list[str]], list[float]]] = {
            "serialised": encoder.scores,
            "batched": batched.scores,
            "cached": cached.scores,
            "engine (stand-in)": engine.scores,
        }
        load_before = os.getloadavg()
        times: dict[str, list[float]] = {name: [] for name in paths}
        names = list(paths)
        for r in range(args.rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                times[name].append(concurrently(paths[name], inputs))
        load_after = os.getloadavg()

    rates = {name: n_pairs / statistics.median(ts) for name, ts in times.items()}
    result: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} CPU cores, torch {torch.__version__} ({torch.get_num_threads()} threads)",
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "samples": args.samples,
        "pairs_per_sample": args.pairs,
        "median_tokens_per_pair": statistics.median(lengths),
        "padded_tokens": padded_tokens(
            [[len(loaded.tokenizer(q, p)["input_ids"]) for p in ps] for q, ps in inputs]
        ),
        "pairs_per_s": {k: round(v, 2) for k, v in rates.items()},
        "batched_over_serialised": round(rates["batched"] / rates["serialised"], 2),
        "full_parser_run_hours": {k: round(FULL_RUN_PAIRS / v / 3600, 2) for k, v in rates.items()},
    }
    print(json.dumps(result, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    return result


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
