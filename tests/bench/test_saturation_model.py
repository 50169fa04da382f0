"""The saturation bench's schedules (`bench/bench_saturation.py`), whose figures the README quotes: the
official-style stages and the free-client chains are simulated by the same step rule, so a claim like "the
free client equals the official schedule to the step" rests on these."""

import importlib.util
import math
import sys
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "bench" / "bench_saturation.py"
spec = importlib.util.spec_from_file_location("bench_saturation", PATH)
assert spec is not None and spec.loader is not None
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench  # its dataclasses look their module up
spec.loader.exec_module(bench)


def steps(*running: int) -> float:
    return sum(bench.step_seconds(n) for n in running)


def test_one_chain_runs_its_groups_back_to_back() -> None:
    # a guess of 5 tokens, two selections of 2 at once, an answer of 3
    got = bench.simulate_chains([[[5], [2, 2], [3]]])
    assert math.isclose(got["wall_s"], steps(1, 1, 1, 1, 1, 2, 2, 1, 1, 1))


def test_identical_chains_take_as_long_as_the_official_stages() -> None:
    """The bench's ParSeR workload: no per-question schedule ends before the stages do."""
    chains = [[[150], [10, 10], [300]]] * 226
    stages = [[150] * 226, [10] * 452, [300] * 226]
    free, official = bench.simulate_chains(chains), bench.simulate_stages(stages)
    assert free["wall_s"] == pytest.approx(official["wall_s"], rel=1e-12)


def test_chains_of_unequal_lengths_beat_stage_barriers() -> None:
    """Stragglers: the stages wait for each stage's longest reply, chains do not."""
    free = bench.simulate_chains([[[10], [1]], [[1], [10]]])
    official = bench.simulate_stages([[10, 1], [1, 10]])
    assert math.isclose(official["wall_s"], steps(2, *[1] * 9, 2, *[1] * 9))
    assert math.isclose(free["wall_s"], steps(*[2] * 11))  # each reply's successor joins the next step
    assert free["wall_s"] < official["wall_s"]


def test_admission_is_capped_at_the_running_limit() -> None:
    chains = [[[1]]] * (bench.MAX_RUNNING + 1)
    got = bench.simulate_chains(chains)
    assert math.isclose(got["wall_s"], steps(bench.MAX_RUNNING, 1))


def test_reply_lengths_are_fixed_per_prompt_and_spread_within_bounds() -> None:
    assert bench.reply_tokens("any prompt", "SELECT") == bench.REPLY_TOKENS["SELECT"]
    assert bench.reply_tokens("any prompt", "ANSWER", scale=0) == 1  # one token: the client's own time
    lengths = [bench.reply_tokens(f"prompt {i}", "ANSWER", spread=0.5) for i in range(200)]
    assert lengths == [bench.reply_tokens(f"prompt {i}", "ANSWER", spread=0.5) for i in range(200)]
    assert min(lengths) >= 150 and max(lengths) <= 450 and len(set(lengths)) > 50
