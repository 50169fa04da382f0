"""The issue's acceptance runs: a mock ParSeR run reranked in process and by a local rerank server computing
the same score gives identical reranked lists; a second identical run scores its pairs from the cache."""

from pathlib import Path
from typing import ClassVar

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from koblex_tasks.corpus.retriever import clear_retrievers
from koblex_tasks.tasks.koblex.task import koblex
from tests.corpus.rerank_standin import rerank_standin
from tests.inspect_cli import inspect_eval_cli
from tests.solvers.koblex.scripted import evidence_of

LIMIT = 6


def _run(shared_data: Path, log_dir: Path, **task_args: object) -> EvalLog:
    data = shared_data / "koblex"
    task = koblex(
        data=str(data / "koblex.jsonl"),
        corpus=str(data / "statutes.jsonl"),
        reranker="stub-overlap",
        **task_args,
    )
    [log] = inspect_eval(task, model="koblexmock/x", limit=LIMIT, display="none", log_dir=str(log_dir))
    assert log.status == "success", log.error
    return log


def _reranked(log: EvalLog) -> dict[object, list[list[str]]]:
    return {s.id: evidence_of(s)["retrieved"] for s in log.samples or []}


def _counts(log: EvalLog) -> tuple[int, int]:
    records = [s.metadata["rerank"] for s in log.samples or []]
    return sum(r["pairs"] for r in records), sum(r["cache_hits"] for r in records)


@pytest.mark.parametrize("engine", ["vllm", "tei"])
def test_in_process_and_served_reranking_give_identical_lists(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    monkeypatch.setenv("KOBLEX_CACHE_DIR", str(tmp_path / "cache"))
    local = _run(shared_data, tmp_path, reranker_cache=False)
    with rerank_standin(engine) as server:
        served = _run(shared_data, tmp_path, reranker_cache=False, reranker_url=server.base_url)
    lists = _reranked(local)
    assert lists == _reranked(served) and sum(len(x) for x in lists.values()) >= LIMIT  # something reranked
    assert _counts(served)[0] == _counts(local)[0] > 0
    scorer = served.samples[0].metadata["rerank"]["scorer"]  # type: ignore[index]
    assert scorer["engine"] == engine and scorer["model"] == "stub-overlap"
    assert served.eval.metadata["retriever"]["reranker"]["engine"] == engine
    assert served.eval.metadata["protocol"]["reranker_url"] == {"value": server.base_url, "paper": None}
    assert local.eval.metadata["protocol"] == "paper" or "reranker_url" not in local.eval.metadata["protocol"]


def test_a_second_identical_run_scores_its_pairs_from_the_cache(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOBLEX_CACHE_DIR", str(tmp_path / "cache"))
    first = _run(shared_data, tmp_path)
    clear_retrievers()  # as a new process
    second = _run(shared_data, tmp_path)
    assert _reranked(first) == _reranked(second)
    pairs, hits = _counts(first)
    assert pairs > 0 and hits < pairs  # the first run scored (repeated pairs of one sample may hit)
    pairs, hits = _counts(second)
    assert hits >= 0.9 * pairs and pairs == _counts(first)[0]


@pytest.mark.parametrize(("fault", "after"), [(None, 0), ("nan", 0), ("nan", 1)])
def test_the_cli_refuses_a_bad_reranker_url_in_one_line_before_any_sample(
    shared_data: Path, tmp_path: Path, fault: str | None, after: int
) -> None:
    """Nothing listening, or a bad answer to the probe: no sample runs. A bad answer mid-run (`after` 1: the
    probe passed): the run stops with the same one line, never a silent fallback to the BM25 order."""
    data = shared_data / "koblex"
    with rerank_standin("vllm", fault=fault, fault_after=after) as server:
        url = (
            server.base_url
            if fault
            else server.base_url.replace("127.0.0.1", "127.0.0.1:1").rsplit(":", 1)[0]
        )
        result = inspect_eval_cli(
            "koblex_tasks/koblex", "--model", "koblexmock/x", "--limit", "1",
            "-T", f"data={data / 'koblex.jsonl'}", "-T", f"corpus={data / 'statutes.jsonl'}",
            "-T", "reranker=stub-overlap", "-T", f"reranker_url={url}",
            log_dir=tmp_path, timeout=120,
        )  # fmt: skip
    lines = [line for line in result.stderr.splitlines() + result.stdout.splitlines() if url in line]
    assert result.returncode != 0 and "Traceback" not in result.stderr + result.stdout
    assert len(lines) == 1 and url in lines[0]
    assert ("relevance_score: nan" if fault else "cannot connect") in lines[0]
    if not after:
        assert not list(tmp_path.glob("*.eval"))  # no sample ran


def test_the_reranker_and_a_vllm_server_inspect_starts_on_one_gpu_are_warned_of(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from koblex_tasks.corpus.rerank_stage import RerankSetup
    from koblex_tasks.solvers import rerank_placement

    class Api:
        base_url = None
        server_args: ClassVar[dict[str, object]] = {"tensor_parallel_size": 2}

    class Vllm:
        api = Api()

        def __str__(self) -> str:
            return "vllm/Qwen/Qwen3-8B"

    monkeypatch.delenv("VLLM_BASE_URL", raising=False)
    monkeypatch.setattr(rerank_placement, "active_model", lambda: Vllm())
    warn = rerank_placement.shared_gpu_warning
    line = warn(RerankSetup("bge", device="cuda:1"))
    assert line is not None and "cuda:1" in line and "-T reranker_device=" in line and "\n" not in line
    assert warn(RerankSetup("bge", device="cuda:2")) is None  # beyond the server's two GPUs
    assert warn(RerankSetup("bge", device="cpu")) is None
    assert warn(RerankSetup("bge", url="http://gpu-box:8001")) is None  # served elsewhere
    assert warn(RerankSetup("stub-overlap", device="cuda")) is None  # no weights
    Api.server_args = {"device": "2,3"}
    assert (
        warn(RerankSetup("bge", device="cuda:3")) is not None
        and warn(RerankSetup("bge", device="cuda")) is None
    )
    monkeypatch.setenv("VLLM_BASE_URL", "http://gpu-box:8000/v1")  # a running server: not Inspect's to start
    assert warn(RerankSetup("bge", device="cuda:3")) is None


def test_only_our_setup_errors_stop_a_run_from_a_sample() -> None:
    from koblex_tasks.solvers.rejections import setup_error_line

    line = "rerank server http://h/v1: results[0].relevance_score: nan is not a finite number"
    ours = f'Traceback (most recent call last):\n  File "x.py"\nkoblex_tasks.corpus.rerank_server.RerankServerError: {line}\n'
    assert setup_error_line(ours) == line
    assert setup_error_line(ours.replace("RerankServerError", "NoSuchError")) is None
    assert (
        setup_error_line("Traceback\nkoblex_tasks.corpus.rerank_stage.RerankStage: not an exception") is None
    )
    assert setup_error_line("Traceback\nValueError: something else") is None
    assert setup_error_line("Traceback\nkoblex_tasks.errors.DataError: bad row") is None  # not a SetupError
