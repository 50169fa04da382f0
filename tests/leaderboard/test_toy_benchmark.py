"""A third benchmark added without touching `leaderboard/`: a tiny task and its spec, run, submitted, boarded
and rendered. Everything the leaderboard knows about it comes from the spec registered here.

The steps, as a new benchmark's author would take them:
1. write the task (`toy`) and its scorer, which records `dataset_fingerprint` and `dataset_size`;
2. declare its spec (scorer, value keys with ranges, stratum, headline) and register it as a `Benchmark`
   (`register_benchmark(Benchmark(spec=TOY, tasks=(toy,)))`: the one line);
3. run it with Inspect and `koblex leaderboard submit` / `build` the logs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai import Task, task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.scorers.metrics import value_metrics
from koblex_tasks.spec import (
    BenchmarkSpec,
    ScorerSpec,
    StratumSpec,
    ValueSpec,
)
from koblex_tasks.tasks import Benchmark, register_benchmark, unregister_benchmark

TOY_SCORER = ScorerSpec(
    name="toy_match",
    values=(
        ValueSpec("exact", "Exact match", 0.0, 1.0, scale=100, kind="binary"),
        ValueSpec("length", "Answer length", 0.0, 1000.0, higher_is_better=False, primary=False),
    ),
)
TOY = BenchmarkSpec(
    name="toy",
    title="Toy arithmetic",
    task="toy",  # a task defined outside an installed package has no namespace prefix
    version="0.1.0",
    scorers=(TOY_SCORER,),
    stratum=StratumSpec("level", "level", order=("easy", "hard")),
    headline=("exact",),
    ranking="exact",
    official_size=6,
)
QUESTIONS = [("1+1", "2", "easy"), ("2+2", "4", "easy"), ("3+3", "6", "easy"), ("7*8", "56", "hard")]
QUESTIONS += [("9*9", "81", "hard"), ("12*12", "144", "hard")]


@scorer(metrics=value_metrics(TOY_SCORER, TOY.stratum, extra={"length": [mean()]}))
def toy_match() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion.strip()
        return Score(value={"exact": float(answer == target.text), "length": float(len(answer))})

    return score


@task
def toy() -> Task:
    samples = [
        Sample(id=f"t{i}", input=q, target=a, metadata={"level": lv})
        for i, (q, a, lv) in enumerate(QUESTIONS)
    ]
    return Task(
        dataset=MemoryDataset(samples, name="toy"),
        solver=generate(),
        scorer=toy_match(),
        version=TOY.version,
        metadata={"benchmark": TOY.name, "dataset_fingerprint": "toy-v1", "dataset_size": len(samples)},
    )


@pytest.fixture
def toy_registered() -> Iterator[BenchmarkSpec]:
    register_benchmark(Benchmark(spec=TOY, tasks=(toy,)))
    yield TOY
    unregister_benchmark(TOY.task)


def _model(right: set[str]):
    answers = {q: a for q, a, _ in QUESTIONS}

    def reply(messages, tools, tool_choice, config) -> ModelOutput:
        question = messages[-1].text
        out = ModelOutput.from_content(model="toy", content=answers[question] if question in right else "0")
        out.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)
        return out

    return get_model("mockllm/model", custom_outputs=reply)


def test_toy_benchmark_is_submitted_boarded_and_rendered(
    toy_registered: BenchmarkSpec, tmp_path: Path
) -> None:
    logs = []
    for name, right in (("strong", {"1+1", "2+2", "3+3", "7*8", "9*9"}), ("weak", {"1+1"})):
        [log] = inspect_eval(toy(), model=_model(right), log_dir=str(tmp_path / name), display="none")
        assert log.status == "success", log.error
        assert log.eval.task == TOY.task
        logs.append(log.location)

    db, site = tmp_path / "lb.sqlite", tmp_path / "site"
    assert leaderboard_main(["submit", "--db", str(db), "--name", "strong", logs[0]]) == 0
    assert leaderboard_main(["submit", "--db", str(db), "--name", "weak", logs[1]]) == 0
    assert leaderboard_main(["build", "--db", str(db), "--out", str(site), "--resamples", "500"]) == 0

    data = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    [board] = [b for b in data["boards"] if b["benchmark"] == "toy"]
    assert board["n_items"] == 6 and board["strata_sizes"] == {"easy": 3, "hard": 3}
    columns = {m["metric"]: m for m in board["metrics"]}
    assert set(columns) == {"exact", "length"}
    exact = columns["exact"]
    assert exact["label"] == "Exact match" and exact["kind"] == "binary" and exact["scale"] == 100
    means = {run["name"]: exact["rows"][str(run["run_id"])]["mean"] for run in board["runs"]}
    assert means == {"strong": pytest.approx(5 / 6), "weak": pytest.approx(1 / 6)}
    assert not columns["length"]["primary"] and not columns["length"]["higher_is_better"]
    page = (site / "index.html").read_text(encoding="utf-8")
    assert "Exact match" in page and "strong" in page and "weak" in page


def test_toy_log_out_of_range_is_refused(toy_registered: BenchmarkSpec, tmp_path: Path, capsys) -> None:
    """The spec's ranges guard the toy benchmark too: a value above `high` is refused, nothing stored."""
    from inspect_ai.log import read_eval_log, write_eval_log

    [log] = inspect_eval(toy(), model=_model({"1+1"}), log_dir=str(tmp_path / "run"), display="none")
    edited = read_eval_log(log.location)
    assert edited.samples
    edited.samples[0].scores["toy_match"].value["length"] = 5000.0  # type: ignore[index]
    bad = tmp_path / "bad.eval"
    write_eval_log(edited, str(bad))
    assert leaderboard_main(["submit", "--db", str(tmp_path / "lb.sqlite"), str(bad)]) == 1
    assert "length=5000.0 is outside its range [0, 1000]" in capsys.readouterr().err
