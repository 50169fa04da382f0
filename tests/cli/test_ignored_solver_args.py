"""`inspect eval koblex_tasks/koblex -S select=false` without `--solver` (issue 33's bad input): Inspect passes `-S`
to a `--solver` only, so the run used to be full ParSeR with its defaults and exit 0; now one line, exit 1,
before any model call."""

from __future__ import annotations

from pathlib import Path

import pytest

from koblex_tasks.solvers.preflight import solver_args_without_solver
from tests.cli.refusal import SECONDS, inspect_eval


@pytest.mark.parametrize(
    ("argv", "ignored"),
    [
        (["koblex_tasks/koblex", "-S", "select=false"], ["-S select=false"]),
        (["koblex_tasks/koblex", "-Sk=0", "--solver-arg", "l=0"], ["-Sk=0", "--solver-arg l=0"]),
        (
            ["koblex_tasks/koblex", "--solver-arg=k=0", "--solver-config", "s.yaml"],
            ["--solver-arg=k=0", "--solver-config s.yaml"],
        ),
        (["koblex_tasks/koblex", "--solver", "koblex_tasks/parser", "-S", "select=false"], []),
        (["koblex_tasks/koblex", "-S", "k=3", "--solver=koblex_tasks/parser"], []),
        (["koblex_tasks/koblex", "-T", "judge_context=none", "--model", "koblexmock/m"], []),
    ],
)
def test_solver_args_without_a_solver_are_found(argv: list[str], ignored: list[str]) -> None:
    assert solver_args_without_solver(argv) == ignored


@pytest.mark.slow
@pytest.mark.parametrize("task", ["koblex", "legit"])
def test_the_command_refuses_them_in_one_line_before_any_model_call(
    task: str, tiny_questions: Path, tiny_corpus: Path, tiny_legit: Path, tmp_path: Path
) -> None:
    data = (
        ["-T", f"data={tiny_questions}", "-T", f"corpus={tiny_corpus}", "-T", "reranker=none"]
        if task == "koblex"
        else ["-T", f"data={tiny_legit}", "--model-role", "grader=koblexmock/judge"]
    )
    run = inspect_eval(
        f"koblex_tasks/{task}", *data, "--model", "koblexmock/m", "-S", "select=false", cwd=tmp_path,
        env={"HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert run.returncode == 1 and run.seconds < SECONDS
    assert run.line.startswith("-S select=false: Inspect passes -S to a --solver only")
    assert "--solver koblex_tasks/<method> -S select=false" in run.line
    assert not list(tmp_path.glob("logs/*.eval"))  # refused before the run: no log, no model call
