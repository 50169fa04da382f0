"""A third benchmark added without touching `leaderboard/`: a tiny task and its spec, run, submitted, boarded
and rendered. Everything the leaderboard knows about it comes from the spec registered here.

The steps, as a new benchmark's author would take them:
1. write the task (`toy`) and its scorer, which records `dataset_fingerprint` and `dataset_size`;
2. declare its spec (scorer, value keys with ranges, stratum, headline) and register it as a `Benchmark`
   (`register_benchmark(Benchmark(spec=TOY, tasks=(toy,)))`: the one line);
3. run it with Inspect and `koblex leaderboard submit` / `build` the logs;
4. give the `Benchmark` a `Replay` and `mock` replies: `koblex replay` detects and replays its released files,
   `koblexmock/<name>` answers its prompts.
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
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.scorers.metrics import value_metrics
from koblex_tasks.spec import (
    BenchmarkSpec,
    ScorerSpec,
    StratumSpec,
    ValueSpec,
)
from koblex_tasks.tasks import Benchmark, register_benchmark, unregister_benchmark
from koblex_tasks.tasks.benchmark import Replay, Replayed, ReplayRequest
from koblex_tasks.tasks.replay import headline_means, run_replay_eval

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


# ---------------------------------------------------------------------------------------------------------
# The same plugin, wired completely: a replay of its released answers and the scripted model's replies, with
# no change to the CLI, the replay command or the mock provider.

ANSWERS = {q: a for q, a, _ in QUESTIONS}


@solver
def toy_released(file: str) -> Solver:
    """The released answer of each question (a toy release file: `{"q", "answer"}` lines)."""
    rows = {r["q"]: r["answer"] for r in map(json.loads, Path(file).read_text(encoding="utf-8").splitlines())}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content(model="released", content=rows.get(state.input_text, ""))
        return state

    return solve


def toy_replay(request: ReplayRequest) -> Replayed:
    solver = toy_released(request.file)
    log = run_replay_eval(
        toy(), solver, request.model_name or "toy-release", request.log_dir, {"replay_file": request.file}
    )
    means = headline_means(log, TOY)
    return Replayed(log, [f"toy replay: {log.location}"], means)


def toy_mock(prompt: str) -> str | None:
    """The scripted model knows the toy's arithmetic."""
    return ANSWERS.get(prompt.strip())


@pytest.fixture
def toy_wired() -> Iterator[Benchmark]:
    benchmark = Benchmark(
        spec=TOY,
        tasks=(toy,),
        replay=Replay(run=toy_replay, owns=lambda row: set(row) == {"q", "answer"}),
        mock=toy_mock,
    )
    register_benchmark(benchmark)
    yield benchmark
    unregister_benchmark(TOY.task)


def test_toy_released_file_is_replayed_by_the_cli(toy_wired: Benchmark, tmp_path: Path, capsys) -> None:
    from koblex_tasks.cli import main

    released = tmp_path / "toy_release.jsonl"
    rows = [{"q": q, "answer": a if q != "7*8" else "55"} for q, a, _ in QUESTIONS]
    released.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["replay", str(released), "--log-dir", str(tmp_path / "logs")]) == 0  # detected as the toy's
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("toy replay: ") and json.loads(out[-1]) == {"exact": pytest.approx(5 / 6)}
    assert main(["replay", str(released), "--benchmark", "toy", "--log-dir", str(tmp_path / "logs")]) == 0
    assert main(["replay", str(released), "--benchmark", "nope"]) == 2
    assert "not a benchmark with a replay (known: koblex, legit, toy)" in capsys.readouterr().err


def test_toy_prompts_are_answered_by_the_scripted_model(toy_wired: Benchmark, tmp_path: Path) -> None:
    [log] = inspect_eval(toy(), model="koblexmock/toy", log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.results is not None
    [exact] = [s for s in log.results.scores if s.name == "exact"]
    assert exact.metrics["mean"].value == 1.0
