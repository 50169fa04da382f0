"""A spec refuses to be declared wrong: each validation rule of `koblex_tasks.spec` and of the wiring point."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from koblex_tasks.spec import (
    BenchmarkSpec,
    MethodGrid,
    MethodSpec,
    ModelFamily,
    ScorerSpec,
    StratumSpec,
    ValueSpec,
    id_digest,
    id_digests,
    ids_sha256,
)
from koblex_tasks.tasks import (
    BUILT_IN,
    Benchmark,
    benchmarks,
    find_benchmark,
    register_benchmark,
    unregister_benchmark,
)

SCORER = ScorerSpec("s", values=(ValueSpec("a", "A", 0.0, 1.0), ValueSpec("b", "B", 0.0, 1.0)))


def spec(**changes: Any) -> BenchmarkSpec:
    args: dict[str, Any] = {
        "name": "t",
        "title": "T",
        "task": "t_task",
        "version": "1.0.0",
        "scorers": (SCORER,),
        "stratum": StratumSpec("level", "level"),
        "headline": ("a",),
        "ranking": "a",
    }
    return BenchmarkSpec(**{**args, **changes})


def test_a_valid_spec_is_read_only() -> None:
    s = spec(variants={"rule": "rule"}, accepted_versions=("0.9.0", "1.0.0"))
    assert s.accepted_versions == ("0.9.0", "1.0.0") and s.value("b").label == "B"
    with pytest.raises(TypeError):
        s.variants["x"] = "y"  # type: ignore[index]
    assert spec().accepted_versions == ("1.0.0",)  # default: the version it writes


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"headline": ("zz",)}, "headline/ranking key 'zz' is not a declared value"),
        ({"ranking": "zz"}, "headline/ranking key 'zz' is not a declared value"),
        ({"accepted_versions": ("0.9.0",)}, "version 1.0.0 is not among accepted_versions"),
        (
            {"scorers": (SCORER, ScorerSpec("s2", values=(ValueSpec("a", "A", 0, 1),)))},
            "declared by two scorers",
        ),
        ({"official_ids_sha256": ids_sha256(["x"])}, "official sample ids need official_size"),
        (
            {"official_id_digests": id_digests(["x", "y"]), "official_size": 3},
            "2 official id digests for 3 items",
        ),
        ({"official_id_digests": "nothex!!", "official_size": 1}, "8-hex-digit digests"),
    ],
)
def test_an_inconsistent_spec_is_refused(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        spec(**changes)


def test_value_ranges() -> None:
    with pytest.raises(ValueError, match="low must be below high"):
        ValueSpec("x", "X", 1.0, 1.0)
    v = ValueSpec("x", "X", 0.0, 1.0)
    assert v.in_range(1.0 + 1e-12) and not v.in_range(1.01) and not v.in_range(float("nan"))


def test_official_ids_are_recognised_by_digest() -> None:
    s = spec(official_id_digests=id_digests(["q1", "q2"]), official_size=2)
    assert s.official_ids_known() and s.is_official_id("q1") and not s.is_official_id("q3")
    assert len(id_digest("q1")) == 8


def test_a_method_grid_refuses_duplicates_and_unknown_groups() -> None:
    method = MethodSpec("m", "M", "pkg/m")
    family = ModelFamily("f", "F", ("f-*",), group="g")
    with pytest.raises(ValueError, match="a method key is declared twice"):
        MethodGrid("t", "table", (method, method))
    with pytest.raises(ValueError, match="unknown model groups"):
        MethodGrid("t", "table", (MethodSpec("m", "M", "pkg/m", group_args={"h": {"x": 1}}),), (family,))
    grid = MethodGrid("t", "table", (MethodSpec("m", "M", "pkg/m", released=("mm",)),), (family,))
    assert grid.method("mm").key == "m"
    with pytest.raises(LookupError, match="no method 'zz'"):
        grid.method("zz")


def test_a_benchmark_refuses_a_rederivation_for_an_undeclared_scorer() -> None:
    with pytest.raises(ValueError, match="re-derivation for undeclared scorers"):
        Benchmark(spec=spec(), rederive={"nope": lambda sample, score, params: {}})


@pytest.fixture
def plugin() -> Iterator[Benchmark]:
    benchmark = Benchmark(spec=spec())
    register_benchmark(benchmark)
    yield benchmark
    unregister_benchmark(benchmark.spec.task)


def test_registering_a_plugin_benchmark(plugin: Benchmark) -> None:
    assert benchmarks()[-1] is plugin and find_benchmark("t") is plugin and find_benchmark("t_task") is plugin
    register_benchmark(plugin)  # the same one again: a no-op
    assert len(benchmarks()) == len(BUILT_IN) + 1
    with pytest.raises(ValueError, match="another benchmark is already registered"):
        register_benchmark(Benchmark(spec=spec(title="Other")))
    with pytest.raises(ValueError, match="another benchmark is already registered"):
        register_benchmark(Benchmark(spec=BUILT_IN[0].spec))


def test_the_built_in_benchmarks_are_wired_completely() -> None:
    for benchmark in BUILT_IN:
        assert benchmark.tasks and benchmark.solver_names and benchmark.replay is not None, benchmark.name
        assert benchmark.task().__name__ == benchmark.spec.task.split("/")[-1]
        assert set(benchmark.rederive) == {s.name for s in benchmark.spec.scorers}
        assert benchmark.retrieval_free <= set(benchmark.solver_names)
