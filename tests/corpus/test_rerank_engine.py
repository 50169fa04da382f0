"""The rerank stage off the main path: a rerank engine by URL, the batching queue, the score cache."""

import math
import socket
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from koblex_tasks.corpus.rerank import StubOverlapReranker
from koblex_tasks.corpus.rerank_batch import BatchQueue
from koblex_tasks.corpus.rerank_cache import ScoreCache, pair_key
from koblex_tasks.corpus.rerank_server import RerankServerError, ServerInfo, parse_scores, probe_server
from koblex_tasks.corpus.rerank_stage import RerankSetup, build_stage
from tests.corpus.rerank_standin import FAULTS, rerank_standin

QUERY = "강도가 상해를 입히면 어떤 처벌을 받는가?"
PASSAGES = ["강도가 사람을 상해한 때에는 무기 또는 7년 이상의 징역", "운송물 인도", "상해", "강도"]


@pytest.mark.parametrize("engine", ["vllm", "tei"])
def test_engine_scores_equal_the_in_process_stub_and_requests_carry_only_its_fields(engine: str) -> None:
    with rerank_standin(engine) as server:
        info = probe_server(server.base_url, "stub-overlap")
        assert info.engine == engine
        scores = build_stage(RerankSetup("stub-overlap", url=server.base_url, cache=False)).scores(
            QUERY, PASSAGES
        )
    assert scores == StubOverlapReranker().scores(QUERY, PASSAGES)
    expected = {"vllm": {"model", "query", "documents"}, "tei": {"query", "texts", "raw_scores"}}[engine]
    assert all(set(body) == expected for body in server.requests)  # the probe's and the run's


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_nothing_listening_is_one_line_naming_the_url_within_15_s() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    started = time.monotonic()
    with pytest.raises(RerankServerError) as raised:
        build_stage(RerankSetup("bge", url=url))
    assert time.monotonic() - started < 15
    message = str(raised.value)
    assert url in message and "\n" not in message and "cannot connect" in message


@pytest.mark.parametrize("engine", ["vllm", "tei"])
def test_a_server_of_another_model_is_refused_naming_what_it_serves(engine: str) -> None:
    with (
        rerank_standin(engine, model="BAAI/bge-reranker-v2-m3") as server,
        pytest.raises(RerankServerError) as raised,
    ):
        probe_server(server.base_url, "dragonkue/bge-reranker-v2-m3-ko")
    assert "serves BAAI/bge-reranker-v2-m3, not dragonkue/bge-reranker-v2-m3-ko" in str(raised.value)


def test_a_server_that_is_no_rerank_engine_is_refused() -> None:
    with rerank_standin("vllm") as server, pytest.raises(RerankServerError, match="is it a rerank server"):
        probe_server(server.base_url.removesuffix("/v1") + "/nothing", "stub-overlap")


FIRST_BAD_FIELD = {
    ("vllm", "schema"): "results: missing",
    ("vllm", "nan"): "results[0].relevance_score: nan is not a finite number",
    ("vllm", "missing"): "has no score",
    ("vllm", "duplicate"): "ranked twice",
    ("vllm", "out_of_range"): "results[0].index: {n} is not a document index",
    ("vllm", "string_score"): "results[0].relevance_score: '0.5' is not a finite number",
    ("vllm", "no_route"): "HTTP 404",
    ("vllm", "not_json"): "the answer is not JSON",
    ("tei", "schema"): "not a list of ranks",
    ("tei", "nan"): "[0].score: nan is not a finite number",
    ("tei", "missing"): "ranks: document",
    ("tei", "duplicate"): "ranked twice",
    ("tei", "out_of_range"): "[0].index: {n} is not a document index",
    ("tei", "string_score"): "[0].score: '0.5' is not a finite number",
    ("tei", "no_route"): "HTTP 404",
    ("tei", "not_json"): "the answer is not JSON",
}


@pytest.mark.parametrize(("engine", "fault"), sorted(FIRST_BAD_FIELD))
def test_out_of_schema_answers_fail_before_the_first_sample_naming_server_and_field(
    engine: str, fault: str
) -> None:
    assert {f for e, f in FIRST_BAD_FIELD if e == engine} == set(FAULTS)  # every fault, both engines
    with rerank_standin(engine, fault=fault) as server, pytest.raises(RerankServerError) as raised:
        build_stage(RerankSetup("stub-overlap", url=server.base_url, cache=False))
    message = str(raised.value)
    expected = FIRST_BAD_FIELD[engine, fault].format(n=2)  # the probe's two documents
    assert server.base_url in message and expected in message and "\n" not in message


@pytest.mark.parametrize(("engine", "fault"), sorted(FIRST_BAD_FIELD))
def test_a_bad_answer_mid_run_is_refused_never_replaced_by_the_first_stage_order(
    engine: str, fault: str
) -> None:
    with rerank_standin(engine, fault=fault, fault_after=1) as server:
        stage = build_stage(RerankSetup("stub-overlap", url=server.base_url, cache=False))  # the probe passes
        with pytest.raises(RerankServerError) as raised:
            stage.scores(QUERY, PASSAGES)
    message = str(raised.value)
    expected = FIRST_BAD_FIELD[engine, fault].format(n=len(PASSAGES))
    assert server.base_url in message and expected in message and "\n" not in message


def test_parse_scores_puts_scores_in_document_order() -> None:
    body = {"results": [{"index": 2, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.5},
                        {"index": 1, "relevance_score": 0.1}]}  # fmt: skip
    assert parse_scores("s", "vllm", body, 3) == [0.5, 0.1, 0.9]
    assert parse_scores("s", "tei", [{"index": 1, "score": 1}, {"index": 0, "score": 2.5}], 2) == [2.5, 1.0]
    with pytest.raises(RerankServerError, match=r"\[0\]\.index: True"):
        parse_scores("s", "tei", [{"index": True, "score": 1.0}, {"index": 0, "score": 2.0}], 2)
    with pytest.raises(RerankServerError, match="inf is not a finite"):
        parse_scores("s", "tei", [{"index": 0, "score": math.inf}], 1)


def test_a_server_failing_mid_run_raises_one_line_naming_it() -> None:
    with rerank_standin("vllm") as server:
        info = probe_server(server.base_url, "stub-overlap")
    stage = build_stage.__globals__["ServerReranker"](ServerInfo(info.url, info.engine, info.model))
    with pytest.raises(RerankServerError, match=info.url):
        stage.scores(QUERY, PASSAGES)


def test_the_batching_queue_serves_concurrent_callers_in_fewer_model_calls() -> None:
    calls: list[int] = []
    stub = StubOverlapReranker()

    def score_pairs(pairs: list[tuple[str, str]]) -> list[float]:
        calls.append(len(pairs))
        time.sleep(0.05)  # a model call: the others queue up meanwhile
        return [stub.scores(q, [p])[0] for q, p in pairs]

    queue = BatchQueue(score_pairs, pool_pairs=10_000, wait_s=0.02)
    queries = [f"질문 {i} 강도 상해" for i in range(8)]
    results: dict[int, list[float]] = {}

    def ask(i: int) -> None:
        results[i] = queue.scores(queries[i], [*PASSAGES, f"조문 {i}"])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert all(results[i] == stub.scores(queries[i], [*PASSAGES, f"조문 {i}"]) for i in range(8))
    assert len(calls) < 8 and sum(calls) == 8 * 5  # shared calls, each pair scored once


def test_the_batching_queue_hands_an_error_to_every_waiting_caller() -> None:
    def broken(pairs: list[tuple[str, str]]) -> list[float]:
        raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError, match="out of memory"):
        BatchQueue(broken).scores(QUERY, PASSAGES)


def _stub_stage(tmp_path: Path, cache: bool = True):  # type: ignore[no-untyped-def]
    return build_stage(RerankSetup("stub-overlap", cache=cache, cache_dir=tmp_path))


def test_a_second_run_scores_from_the_cache(tmp_path: Path) -> None:
    first = _stub_stage(tmp_path)
    scores = first.scores(QUERY, PASSAGES)
    assert first.total.as_dict()["cache_hits"] == 0 and first.total.scored == len(PASSAGES)
    second = _stub_stage(tmp_path)  # another process, same cache directory
    assert second.scores(QUERY, [*PASSAGES, "새 조문"]) == scores + StubOverlapReranker().scores(
        QUERY, ["새 조문"]
    )
    assert (second.total.cache_hits, second.total.scored) == (len(PASSAGES), 1)


def test_the_cache_key_separates_scorers_queries_and_passages() -> None:
    keys = {pair_key(s, q, p) for s in ("a", "b") for q in ("q", "q2") for p in ("p", "p2")}
    assert len(keys) == 8


def test_a_corrupt_entry_is_recomputed_never_trusted(tmp_path: Path) -> None:
    stage = _stub_stage(tmp_path)
    truth = stage.scores(QUERY, PASSAGES)
    db = sqlite3.connect(stage.cache.path)
    with db:
        db.execute("UPDATE scores SET score = score + 1 WHERE rowid = 1")  # a changed score, check unchanged
        db.execute("UPDATE scores SET score = 'x' WHERE rowid = 2")  # not a number
    db.close()
    again = _stub_stage(tmp_path)
    assert again.scores(QUERY, PASSAGES) == truth
    assert (again.total.cache_hits, again.total.scored) == (len(PASSAGES) - 2, 2)
    third = _stub_stage(tmp_path)  # the recomputed entries replaced the corrupt ones
    assert third.scores(QUERY, PASSAGES) == truth and third.total.cache_hits == len(PASSAGES)


def test_an_unreadable_cache_file_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    cache = ScoreCache(tmp_path)
    cache.path.parent.mkdir(parents=True, exist_ok=True)
    cache.path.write_bytes(b"not a database" * 100)
    stage = _stub_stage(tmp_path)
    assert stage.scores(QUERY, PASSAGES) == StubOverlapReranker().scores(QUERY, PASSAGES)
    assert list(tmp_path.glob("*.corrupt-*")) and stage.total.scored == len(PASSAGES)


def test_without_the_cache_every_pair_is_scored(tmp_path: Path) -> None:
    for _ in range(2):
        stage = _stub_stage(tmp_path, cache=False)
        stage.scores(QUERY, PASSAGES)
        assert stage.total.cache_hits == 0 and stage.config()["cache"] is None
    assert not list(tmp_path.iterdir())
