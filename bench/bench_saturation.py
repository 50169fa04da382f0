"""Does a run through this harness keep a GPU server as busy as the official scripts do? ParSeR against a
simulated continuous-batching server, through Inspect and the way the official scripts schedule it.

Run by hand (about ten minutes; the server listens on 127.0.0.1 only and stops after `--max-seconds`):

    python bench/bench_saturation.py [--data ../shared/data] [--configs default 100 256] [--repeat 1]

The server (`Simulator`) is OpenAI-compatible (`POST /v1/chat/completions`) and models vLLM's scheduler: it
admits up to 256 running sequences (vLLM's default `max_num_seqs`), first come first served; every step emits
one token for each running sequence and takes `20 ms + 0.1 ms x running` (a decode step of a ~30B model on one
GPU: a fixed cost plus a per-sequence one); prefill is free. Reply *text* comes from the conformance responder
(`official_requests/responder.py` in the shared data, read in place), so ParSeR parses it and makes all its
calls; reply *length* in tokens is fixed per request class (`REPLY_TOKENS`): ParSeR's provision guesses 150,
each selection 10, the answer 300 (the other classes are there for the other methods). The class is the
responder's, decided by the prompt alone, so both schedules generate exactly the same tokens. With
`--length-spread S` each reply's length is its class's times 1 +/- S, drawn from the prompt's hash (the same
prompt, the same length), as a real model's replies vary; the default, 0, is the issue's fixed rule.

Four numbers per configuration:
- harness: `inspect eval koblex_tasks/koblex --model openai-api/local/sim` on the 226 questions and the
  shared corpus (`-T reranker=none`), with Inspect's concurrency settings under test; wall time from the first
  request to the last reply, and the time-weighted mean of running sequences over it.
- official-style: the same requests scheduled as the official vLLM scripts do (every prompt of a stage at
  once, stage after stage: 226 guesses, then 452 selections, then 226 answers), simulated step by step.
- free client: the same harness with a client that takes no time: each sample's calls as its log records
  them (calls overlapping in time are made together), each group sent the step the previous one's last reply
  leaves. The best any schedule that keeps a question's calls in order can do; what the real run takes
  beyond it is the client's own time.
- lower bound: every token at full batch (`tokens / 256` steps of `20 + 25.6` ms).
A configuration is a comma list of Inspect options (`max_connections=N`, `max_samples=N`, a bare flag such
as `no_log_realtime`), or `default` (no option: the task's own default, 512 connections for a local
server), or a bare number N (max_connections=N).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_RUNNING = 256
STEP_BASE_S = 0.020
STEP_PER_SEQUENCE_S = 0.0001
REPLY_TOKENS = {
    "PROVISIONS": 150,
    "SELECT": 10,
    "ANSWER": 300,
    "COT": 300,
    "TREE": 200,
    "QUERY": 30,
    "STEP": 100,
    "FINAL": 30,
}
STAGE_ORDER = ("PROVISIONS", "TREE", "SELECT", "QUERY", "STEP", "FINAL", "COT", "ANSWER")


def reply_tokens(text: str, cls: str, scale: float = 1.0, spread: float = 0.0) -> int:
    """The reply length the server gives a prompt: its class's length x scale, times 1 +/- spread drawn from
    the prompt's hash (the same prompt always gets the same length; spread 0: the class's length)."""
    base = REPLY_TOKENS.get(cls, 100) * scale
    if spread:
        unit = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64  # [0, 1)
        base *= 1 + spread * (2 * unit - 1)
    return max(1, round(base))


def step_seconds(running: int) -> float:
    return STEP_BASE_S + STEP_PER_SEQUENCE_S * running


@dataclass
class Request:
    cls: str
    tokens: int
    arrived: float
    finished: float = 0.0
    left: int = 0
    done: asyncio.Future[None] | None = None


@dataclass
class Stats:
    requests: list[Request] = field(default_factory=list)
    steps: int = 0
    running_seconds: float = 0.0  # sum over steps of running x step time
    busy_seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        if not self.requests:
            return {"requests": 0}
        start = min(r.arrived for r in self.requests)
        end = max(r.finished for r in self.requests)
        wall = end - start
        return {
            "requests": len(self.requests),
            "tokens": sum(r.tokens for r in self.requests),
            "wall_s": wall,
            "mean_running": self.running_seconds / wall if wall else 0.0,
            "busy_fraction": self.busy_seconds / wall if wall else 0.0,
            "by_class": dict(collections.Counter(r.cls for r in self.requests)),
        }


class Simulator:
    """vLLM-like continuous batching in real time: FCFS admission up to MAX_RUNNING, one token per running
    sequence per step. Steps are scheduled against a deadline clock, so event-loop jitter does not add up."""

    def __init__(self) -> None:
        self.stats = Stats()
        self._waiting: collections.deque[Request] = collections.deque()
        self._running: list[Request] = []
        self._wake = asyncio.Event()

    def reset(self) -> dict[str, Any]:
        summary = self.stats.summary()
        summary["request_log"] = [(r.cls, r.tokens, r.arrived, r.finished) for r in self.stats.requests]
        self.stats = Stats()
        return summary

    async def generate(self, cls: str, tokens: int) -> None:
        loop = asyncio.get_running_loop()
        request = Request(cls, tokens, time.monotonic(), left=max(1, tokens), done=loop.create_future())
        self.stats.requests.append(request)
        self._waiting.append(request)
        self._wake.set()
        assert request.done is not None
        await request.done

    async def run(self) -> None:
        next_at = time.monotonic()
        while True:
            if not self._running and not self._waiting:
                self._wake.clear()
                await self._wake.wait()
                next_at = time.monotonic()
            while self._waiting and len(self._running) < MAX_RUNNING:
                self._running.append(self._waiting.popleft())
            n = len(self._running)
            dt = step_seconds(n)
            next_at += dt
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            stats = self.stats
            stats.steps += 1
            stats.busy_seconds += dt
            stats.running_seconds += n * dt
            still = []
            now = time.monotonic()
            for request in self._running:
                request.left -= 1
                if request.left <= 0:
                    request.finished = now
                    if request.done is not None and not request.done.done():
                        request.done.set_result(None)
                else:
                    still.append(request)
            self._running = still


def simulate_stages(stages: list[list[int]]) -> dict[str, float]:
    """The official-style schedule: each stage's requests all arrive at once when the previous stage ends,
    i.e. one chain whose groups are the stages."""
    return simulate_chains([stages])


def simulate_chains(samples: list[list[list[int]]]) -> dict[str, float]:
    """The best any per-sample harness can do: each sample's next group of requests (calls made together)
    arrives the step its previous group's last reply leaves, as if the client took no time at all."""
    waiting: collections.deque[tuple[int, int]] = collections.deque()  # (sample, tokens left)
    running: list[list[int]] = []  # [sample, tokens left]
    group = [0] * len(samples)
    open_calls = [0] * len(samples)

    def submit(i: int) -> None:
        lengths = samples[i][group[i]]
        open_calls[i] = len(lengths)
        waiting.extend((i, max(1, n)) for n in lengths)

    for i, groups in enumerate(samples):
        if groups:
            submit(i)
    wall = running_seconds = 0.0
    while waiting or running:
        while waiting and len(running) < MAX_RUNNING:
            running.append(list(waiting.popleft()))
        dt = step_seconds(len(running))
        wall += dt
        running_seconds += len(running) * dt
        still = []
        for request in running:
            request[1] -= 1
            if request[1] > 0:
                still.append(request)
                continue
            i = request[0]
            open_calls[i] -= 1
            if open_calls[i] == 0 and group[i] + 1 < len(samples[i]):
                group[i] += 1
                submit(i)
        running = still
    return {"wall_s": wall, "mean_running": running_seconds / wall if wall else 0.0}


def sample_chains(log_dir: Path, responder: Any, scale: float, spread: float) -> list[list[list[int]]]:
    """Each sample's model calls from the run's log, grouped into calls made together (overlapping in time),
    with the reply length the server gave each (`reply_tokens`)."""
    from inspect_ai.log import list_eval_logs, read_eval_log, resolve_sample_attachments

    logs = list_eval_logs(str(log_dir))
    if len(logs) != 1:
        raise SystemExit(f"expected the run's one log in {log_dir}, found {len(logs)}")
    log = read_eval_log(logs[0])
    chains = []
    for sample in map(resolve_sample_attachments, log.samples or []):  # logged prompts are condensed
        calls = sorted(
            (e for e in sample.events if e.event == "model"), key=lambda e: e.timestamp.timestamp()
        )
        groups: list[list[int]] = []
        group_end = float("-inf")
        for call in calls:
            start = call.timestamp.timestamp()
            end = call.completed.timestamp() if call.completed else start
            text = "\n".join(m.text for m in call.input)
            _, cls = responder.respond(text, call.config.stop_seqs)
            tokens = reply_tokens(text, cls, scale, spread)
            if groups and start < group_end:
                groups[-1].append(tokens)
                group_end = max(group_end, end)
            else:
                groups.append([tokens])
                group_end = end
        chains.append(groups)
    return chains


def lower_bound_s(tokens: int) -> float:
    return tokens / MAX_RUNNING * step_seconds(MAX_RUNNING)


def _load_responder(data: Path) -> Any:
    path = data / "koblex" / "official_requests" / "responder.py"
    spec = importlib.util.spec_from_file_location("koblex_conformance_responder", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"no responder at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def serve(
    data: Path, port: int, max_seconds: float, scale: float = 1.0, spread: float = 0.0
) -> tuple[threading.Thread, dict[str, Any]]:
    """Start the server on 127.0.0.1:port in a daemon thread; returns it and a handle to its simulator and
    the responder it answers with."""
    from aiohttp import web

    responder = _load_responder(data)
    handle: dict[str, Any] = {"responder": responder}
    ready = threading.Event()

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        text = "\n".join(_text(m.get("content")) for m in body.get("messages", []))
        stop = body.get("stop")
        reply, cls = responder.respond(text, [stop] if isinstance(stop, str) else stop)
        tokens = reply_tokens(text, cls, scale, spread)
        await handle["sim"].generate(cls, tokens)
        return web.json_response(
            {
                "id": f"sim-{time.monotonic_ns()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "sim"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
                "usage": {"prompt_tokens": len(text), "completion_tokens": tokens, "total_tokens": tokens},
            }
        )

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "sim", "object": "model"}]})

    async def main() -> None:
        handle["sim"] = sim = Simulator()
        handle["loop"] = asyncio.get_running_loop()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes([web.post("/v1/chat/completions", chat), web.get("/v1/models", models)])
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
        ready.set()
        stepping = asyncio.create_task(sim.run())
        await asyncio.sleep(max_seconds)  # bounded: the bench never leaves a server behind
        stepping.cancel()
        await runner.cleanup()

    thread = threading.Thread(target=lambda: asyncio.run(main()), name="sim-server", daemon=True)
    thread.start()
    if not ready.wait(30):
        raise SystemExit("the simulated server did not start")
    return thread, handle


def _config_args(config: str) -> list[str]:
    if config == "default":
        return []
    args: list[str] = []
    for part in config.split(","):
        name, _, value = (p.strip() for p in part.partition("="))
        if not value and name.isdigit():
            name, value = "max_connections", name
        args += [f"--{name.replace('_', '-')}", *([value] if value else [])]
    return args


def run_harness(config: str, data: Path, port: int, log_dir: Path, limit: int | None) -> float:
    env = dict(os.environ, LOCAL_API_KEY="x", LOCAL_BASE_URL=f"http://127.0.0.1:{port}/v1")
    cmd = [
        sys.executable,
        "-m",
        "inspect_ai",
        "eval",
        "koblex_tasks/koblex",
        "--model",
        "openai-api/local/sim",
        "-T",
        f"data={data / 'koblex' / 'koblex.jsonl'}",
        "-T",
        f"corpus={data / 'koblex' / 'statutes.jsonl'}",
        "-T",
        "reranker=none",
        "--log-dir",
        str(log_dir),
        "--display",
        "none",
        *_config_args(config),
        *(["--limit", str(limit)] if limit else []),
    ]
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-4000:], file=sys.stderr)
        raise SystemExit(f"inspect eval failed for {config}")
    return time.monotonic() - start


def _prebuild(data: Path) -> None:
    """Build the BM25 index once, so that no run pays for it."""
    code = (
        "from koblex_tasks.corpus.retriever import RetrieverSettings, build_retriever;"
        f"build_retriever(RetrieverSettings(corpus={str(data / 'koblex' / 'statutes.jsonl')!r},"
        "tokenizer='official', reranker='none'))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_data = os.environ.get(
        "KOBLEX_SHARED_DATA", str(Path(__file__).resolve().parents[2] / "shared/data")
    )
    parser.add_argument("--data", type=Path, default=Path(default_data))
    parser.add_argument("--configs", nargs="*", default=["default", "100", "256"])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--port", type=int, default=18931)
    parser.add_argument("--limit", type=int, default=None, help="first N questions only (a quick check)")
    parser.add_argument("--max-seconds", type=float, default=3600.0, help="the server stops after this")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--token-scale",
        type=float,
        default=1.0,
        help="reply lengths x this (0: one token, the client's own time)",
    )
    parser.add_argument(
        "--length-spread",
        type=float,
        default=0.0,
        help="each reply's length x (1 +/- this), fixed per prompt (0: every reply of a class alike)",
    )
    args = parser.parse_args()
    if not 0 <= args.length_spread < 1:
        parser.error("--length-spread must be in [0, 1)")

    work = Path(tempfile.mkdtemp(prefix="koblex-saturation-"))
    os.environ.setdefault("KOBLEX_CACHE_DIR", str(work / "cache"))
    _prebuild(args.data)
    _, handle = serve(args.data, args.port, args.max_seconds, args.token_scale, args.length_spread)
    responder = handle["responder"]
    rows: list[dict[str, Any]] = []
    for rep in range(args.repeat):
        for config in args.configs:  # interleaved across repeats
            load = os.getloadavg()[0]
            log_dir = work / f"logs-{rep}-{len(rows)}"
            process_s = run_harness(config, args.data, args.port, log_dir, args.limit)
            summary = asyncio.run_coroutine_threadsafe(_reset(handle), handle["loop"]).result()
            log = summary["request_log"]
            by_class: dict[str, list[int]] = collections.defaultdict(list)
            for cls, tokens, *_ in log:
                by_class[cls].append(tokens)
            stages = [by_class[c] for c in STAGE_ORDER if c in by_class]
            official = simulate_stages(stages)
            chains = sample_chains(log_dir, responder, args.token_scale, args.length_spread)
            if sorted(t for c in chains for g in c for t in g) != sorted(t for _, t, *_ in log):
                raise SystemExit(f"the calls logged in {log_dir} are not the requests the server answered")
            free = simulate_chains(chains)
            bound = lower_bound_s(summary["tokens"])
            row = {
                "config": config,
                "repeat": rep,
                "load_start": load,
                "load_end": os.getloadavg()[0],
                "process_s": process_s,
                **summary,
                "official_wall_s": official["wall_s"],
                "official_mean_running": official["mean_running"],
                "free_client_wall_s": free["wall_s"],
                "free_client_mean_running": free["mean_running"],
                "lower_bound_s": bound,
            }
            rows.append(row)
            summary.pop("request_log")
            print(
                f"  {config:<28} wall {summary['wall_s']:6.1f} s  running {summary['mean_running']:5.1f}  "
                f"/official {summary['wall_s'] / official['wall_s']:.2f}x  "
                f"/bound {summary['wall_s'] / bound:.2f}x  "
                f"(free client {free['wall_s']:.1f} s = {free['wall_s'] / official['wall_s']:.2f}x)  "
                f"(process {process_s:.0f} s, load {load:.2f})",
                file=sys.stderr,
                flush=True,
            )
    print(
        f"\n# Server saturation, ParSeR, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"reply lengths x{args.token_scale:g}, spread {args.length_spread:g}"
    )
    print(
        f"{os.cpu_count()} cores; load average per run in the table; {rows[0]['requests']} requests a run\n"
    )
    print(
        "| Inspect setting | wall s | mean running | × official-style | × lower bound | eval process s "
        "| load avg |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['config']} | {r['wall_s']:.1f} | {r['mean_running']:.0f} | "
            f"{r['wall_s'] / r['official_wall_s']:.2f}× | {r['wall_s'] / r['lower_bound_s']:.2f}× | "
            f"{r['process_s']:.0f} | {r['load_start']:.2f}–{r['load_end']:.2f} |"
        )
    r = rows[0]
    print(
        f"| official-style schedule | {r['official_wall_s']:.1f} | {r['official_mean_running']:.0f} | 1.00× | "
        f"{r['official_wall_s'] / r['lower_bound_s']:.2f}× | | |"
    )
    print(
        f"| this harness with a client that takes no time (each sample's calls, as logged) | "
        f"{r['free_client_wall_s']:.1f} | {r['free_client_mean_running']:.0f} | "
        f"{r['free_client_wall_s'] / r['official_wall_s']:.2f}× | "
        f"{r['free_client_wall_s'] / r['lower_bound_s']:.2f}× | | |"
    )
    print(
        f"| lower bound (all tokens at full batch) | {r['lower_bound_s']:.1f} | {MAX_RUNNING} | | 1.00× | | |"
    )
    if args.json:  # with each run's request log: (class, tokens, arrived, finished) in monotonic seconds
        args.json.write_text(json.dumps(rows))


async def _reset(handle: dict[str, Any]) -> dict[str, Any]:
    return handle["sim"].reset()


if __name__ == "__main__":
    main()
