"""The rerank bench's token accounting and agreement (`bench/bench_rerank.py`), whose figures the docs quote."""

import importlib.util
import sys
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "bench" / "bench_rerank.py"
spec = importlib.util.spec_from_file_location("bench_rerank", PATH)
assert spec is not None and spec.loader is not None
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench
spec.loader.exec_module(bench)


def test_padded_tokens_count_each_paths_batches() -> None:
    # sample 1: [3, 5] pads to 10, [4] is 4; sorted [3, 4] pads to 8, [5] is 5; sample 2: [2]
    # pooled and sorted: [2, 3] pads to 6, then [4] and [5] alone (two of them would pass 8)
    counted = bench.padded_tokens([[3, 5, 4], [2]], batch=2, max_tokens=8)
    assert counted == {"real": 14, "serialised": 16, "serialised_length_sorted": 15, "batched": 15}


def test_agreement_compares_top_orders_sets_and_scores() -> None:
    a = [[0.9, 0.8, 0.1], [0.5, 0.4, 0.3]]
    b = [[0.8, 0.9, 0.1], [0.5, 0.4, 0.35]]
    got = bench.agreement(a, b, top=2)
    assert got["same_top_order"] == 0.5 and got["same_top_set"] == 1.0
    assert got["max_abs_diff"] == pytest.approx(0.1)
    assert bench.top_of([0.2, 0.5, 0.5], [0, 1, 2], 2) == [1, 2]  # ties keep the first-stage order
