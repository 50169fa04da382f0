"""Issue 33's bad input from `inspect eval`'s command line: one line, exit 1, before any model call.

`-S select=false` without `--solver` (Inspect passes `-S` to a `--solver` only: the run used to be full ParSeR with
its defaults and exit 0); `--solver koblex_tasks/parser -S k=0` (a traceback before); `-T judge_reference=maybe`
(counted as true, and recorded as a deviation, before)."""

from __future__ import annotations

from pathlib import Path

import pytest

from koblex_tasks.cli.refusals import solver_value_line
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.solvers.preflight import ignored_solver_args, solver_args_without_solver
from koblex_tasks.tasks.koblex.task import koblex
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


def test_solver_args_from_the_environment_count_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.argv", ["inspect", "eval", "koblex_tasks/koblex"])
    monkeypatch.setenv("INSPECT_EVAL_SOLVER_ARGS", "k=5")
    monkeypatch.delenv("INSPECT_EVAL_SOLVER", raising=False)
    assert ignored_solver_args() == ["-S k=5"]
    monkeypatch.setenv("INSPECT_EVAL_SOLVER", "koblex_tasks/parser")
    assert ignored_solver_args() == []


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


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ({"k": 0}, "k must be positive"),
        ({"l": -1}, "l must be positive"),
        ({"equal_budget": True}, "equal_budget=True needs queries"),
    ],
)
def test_a_value_a_solver_refuses_is_named_with_the_solver(args: dict, reason: str) -> None:
    with pytest.raises(ValueError) as caught:
        parser(**args)
    line = solver_value_line(caught.value, caught.value.__traceback__)
    assert line is not None and line.startswith(f"--solver koblex_tasks/parser: {reason}")
    assert solver_value_line(ValueError("k must be positive"), None) is None  # not raised by one of ours


def test_a_flag_that_is_neither_true_nor_false_is_refused(tiny_questions: Path, tiny_corpus: Path) -> None:
    with pytest.raises(ValueError, match=r"^KoBLEX: -T judge_reference='maybe': expected true or false$"):
        koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none", judge_reference="maybe")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--solver", "koblex_tasks/parser", "-S", "k=0"],
            "--solver koblex_tasks/parser: k must be positive",
        ),
        (
            ["--solver", "koblex_tasks/parser", "-S", "l=0"],
            "--solver koblex_tasks/parser: l must be positive",
        ),
        (
            ["--solver", "koblex_tasks/one_time_retrieval", "-S", "select=false"],
            "-S select: koblex_tasks/one_time_retrieval has no parameter 'select'",
        ),
        (["-T", "judge_reference=maybe"], "KoBLEX: -T judge_reference='maybe': expected true or false"),
    ],
)
def test_bad_values_from_the_command_line_are_one_line(
    args: list[str], line: str, tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    data = ["-T", f"data={tiny_questions}", "-T", f"corpus={tiny_corpus}", "-T", "reranker=none"]
    data += ["--model-role", "grader=koblexmock/judge"]  # no warning that LF-Eval is not computed
    run = inspect_eval(
        "koblex_tasks/koblex",
        *data,
        "--model",
        "koblexmock/m",
        *args,
        cwd=tmp_path,
        env={"HF_HUB_OFFLINE": "1"},
    )
    assert run.returncode == 1 and run.seconds < SECONDS
    assert run.line.startswith(line), run.line
    assert not list(tmp_path.glob("logs/*.eval"))
