"""Wall time of a full 226-question ParSeR run (k=100, l=10) through Inspect, and event-loop lag during it.

Run by hand:

    python bench/bench_harness.py [--data ../shared/data] [--connections 10 50 100] [--delay 0.5]

The model is Inspect's `mockllm/model` with a scripted callable: the parametric-provision prompt is answered
with the provisions the released GPT-4o ParSeR run selected for that question (so each sample has 1-5
realistic guesses, 2.2 on average, each a BM25 query), every other prompt with
`koblex_tasks.providers.koblexmock.scripted_output`; every reply carries usage. Two variants: `instant`
(returns at once) and `sleep` (an async callable that first `await anyio.sleep(delay)`, like a server); and
`replayed`: instant, with each retrieval answered from the hits an earlier run computed (no retrieval CPU).

A heartbeat task in Inspect's event loop wakes every 5 ms and records how late it wakes: the lag is time the
loop could not run because something held it (or the GIL). Each retrieval call is timed too, so the table
shows the worst lag while a retrieval was in flight and while none was. The first run builds the index in an
empty cache inside the eval; later runs start from a fresh process-level registry but a warm disk cache.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import anyio
import numpy as np

HEARTBEAT_S = 0.005


def _released_guesses(data: Path) -> dict[str, list[str]]:
    """question text -> the provision strings the released ParSeR run selected for it."""
    questions = [
        json.loads(line)
        for line in (data / "koblex" / "koblex.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    released = [
        json.loads(line)
        for line in (data / "koblex" / "released_gpt4o" / "parser_gpt4o.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    by_full = {r["question"]: [c for a in r["answers"] for c in a["comb"]] for r in released}
    out = {}
    for q in questions:
        guesses = by_full.get(q["background"] + q["question"])
        if guesses:
            out[q["question"]] = guesses
    return out


def make_outputs(data: Path, delay: float | None):
    from inspect_ai.model import ModelOutput

    from koblex_tasks.providers.koblexmock import scripted_output, usage_for

    guesses = _released_guesses(data)

    def reply(messages, tools, tool_choice, config):
        prompt = messages[-1].text if messages else ""
        if "statutory provisions" in prompt and "Answer must be a list" in prompt:
            for question, provisions in guesses.items():
                if question in prompt:
                    content = json.dumps(provisions, ensure_ascii=False)
                    output = ModelOutput.from_content(model="koblexmock", content=content)
                    output.usage = usage_for(prompt, content)
                    return output
        return scripted_output(messages, tools, tool_choice, config)

    if delay is None:
        return reply

    async def slow_reply(messages, tools, tool_choice, config):
        await anyio.sleep(delay)
        return reply(messages, tools, tool_choice, config)

    return slow_reply


class Probe:
    """Heartbeat lag samples, and the (start, end) of every retrieval call, in perf_counter seconds."""

    def __init__(self) -> None:
        self.lags: list[tuple[float, float]] = []  # (woke at, lag)
        self.retrievals: list[tuple[float, float]] = []

    async def heartbeat(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            t = time.perf_counter()
            await asyncio.sleep(HEARTBEAT_S)
            now = time.perf_counter()
            self.lags.append((now, max(0.0, now - t - HEARTBEAT_S)))

    def summary(self) -> dict[str, float]:
        lags = np.array([lag for _, lag in self.lags]) if self.lags else np.zeros(1)
        spans = sorted(self.retrievals)

        def in_flight(woke: float, lag: float) -> bool:
            start = woke - lag - HEARTBEAT_S
            return any(a < woke and b > start for a, b in spans)

        during = [lag for woke, lag in self.lags if in_flight(woke, lag)]
        other = [lag for woke, lag in self.lags if not in_flight(woke, lag)]
        durations = [b - a for a, b in spans]
        return {
            "lag_p50_ms": float(np.percentile(lags, 50) * 1e3),
            "lag_p99_ms": float(np.percentile(lags, 99) * 1e3),
            "lag_max_ms": float(lags.max() * 1e3),
            "lag_max_during_retrieval_ms": max(during, default=0.0) * 1e3,
            "lag_max_otherwise_ms": max(other, default=0.0) * 1e3,
            "lags_over_50ms": int((lags > 0.05).sum()),
            "retrieval_calls": len(spans),
            "retrieval_total_s": sum(durations),
            "retrieval_p50_ms": statistics.median(durations) * 1e3 if durations else 0.0,
            "retrieval_max_ms": max(durations, default=0.0) * 1e3,
        }


_MEMO: dict[tuple, object] = {}  # (queries, k) -> hits, filled by every real retrieval


def instrument(probe: Probe, replay: bool) -> None:
    """Time every first-stage retrieval call (they run in worker threads). With `replay`, answer from the hits
    an earlier run computed for the same queries (the scripted model makes runs identical), so the run does
    the same Inspect work without the retrieval's CPU: the A/B for "does retrieval slow the loop"."""
    from koblex_tasks.corpus.retriever import Retriever

    original = Retriever.search_many
    if getattr(original, "_bench_wrapped", False):
        original = original.__wrapped__

    def timed(self, queries, k):
        start = time.perf_counter()
        try:
            key = (tuple(queries), k)
            if replay and key in _MEMO:
                return _MEMO[key]
            _MEMO[key] = hits = original(self, queries, k)
            return hits
        finally:
            probe.retrievals.append((start, time.perf_counter()))

    timed._bench_wrapped = True
    timed.__wrapped__ = original
    Retriever.search_many = timed


async def run_once(args, variant: str, connections: int, log_dir: str) -> dict:
    from inspect_ai import eval_async
    from inspect_ai.model import get_model

    from koblex_tasks.corpus.retriever import clear_retrievers
    from koblex_tasks.solvers.koblex.parser import parser
    from koblex_tasks.tasks.koblex.task import koblex

    clear_retrievers()
    probe = Probe()
    instrument(probe, replay=variant == "replayed")
    data = Path(args.data)
    delay = args.delay if variant == "sleep" else None
    model = get_model("mockllm/model", custom_outputs=make_outputs(data, delay))
    task = koblex(
        data=str(data / "koblex" / "koblex.jsonl"),
        corpus=str(data / "koblex" / "statutes.jsonl"),
        reranker="none",  # offline: no cross-encoder weights; the bench measures the harness, not reranking
        judge=False,
    )
    stop = asyncio.Event()
    beat = asyncio.create_task(probe.heartbeat(stop))
    start = time.perf_counter()
    logs = await eval_async(
        task,
        solver=parser(k=100, l=10),
        model=model,
        max_connections=connections,
        max_samples=connections,
        log_dir=log_dir,
        log_level="error",
    )
    wall = time.perf_counter() - start
    stop.set()
    await beat
    log = logs[0]
    return {
        "variant": variant,
        "max_connections": connections,
        "status": log.status,
        "samples": len(log.samples or []),
        "wall_s": wall,
        **probe.summary(),
    }


async def main_async(args) -> list[dict]:
    from inspect_ai.util._display import init_display_type

    init_display_type("none")  # no progress display: it would compete with the run for the loop
    results = []
    with tempfile.TemporaryDirectory(prefix="koblex-harness-") as tmp:
        os.environ["KOBLEX_CACHE_DIR"] = str(Path(tmp) / "cache")
        log_dir = str(Path(tmp) / "logs")
        if not args.skip_cold:
            first = await run_once(args, "instant", args.connections[-1], log_dir)
            first["variant"] = "instant, cold index"
            results.append(first)
        for variant in args.variants:
            for connections in args.connections:
                results.append(await run_once(args, variant, connections, log_dir))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_data = os.environ.get(
        "KOBLEX_SHARED_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data")
    )
    parser.add_argument("--data", default=default_data, help="shared/data folder (env KOBLEX_SHARED_DATA)")
    parser.add_argument("--connections", type=int, nargs="+", default=[10, 50, 100])
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per call in the `sleep` variant")
    parser.add_argument(
        "--variants",
        nargs="+",
        default=["instant", "replayed", "sleep"],
        choices=["instant", "replayed", "sleep"],
    )
    parser.add_argument("--skip-cold", action="store_true", help="no first run with an empty index cache")
    args = parser.parse_args()
    results = asyncio.run(main_async(args))
    print(
        f"# ParSeR k=100 l=10, 226 questions, mockllm (load average {os.getloadavg()[0]:.2f}, delay {args.delay}s)"
    )
    head = "| model | max_conn | samples | wall s | lag p50/p99/max ms | max lag: in retrieval / other | >50ms | retrieval calls, total s, p50/max ms |"
    print(head)
    print("|" + "|".join("---" for _ in range(head.count("|") - 1)) + "|")
    for r in results:
        print(
            f"| {r['variant']} | {r['max_connections']} | {r['samples']} ({r['status']}) | {r['wall_s']:.1f} | "
            f"{r['lag_p50_ms']:.1f}/{r['lag_p99_ms']:.1f}/{r['lag_max_ms']:.0f} | "
            f"{r['lag_max_during_retrieval_ms']:.0f} / {r['lag_max_otherwise_ms']:.0f} | {r['lags_over_50ms']} | "
            f"{r['retrieval_calls']}, {r['retrieval_total_s']:.2f}, {r['retrieval_p50_ms']:.1f}/{r['retrieval_max_ms']:.0f} |"
        )


if __name__ == "__main__":
    main()
