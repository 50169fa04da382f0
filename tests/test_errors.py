"""Inspect's CLI refusals reach the user as one line: unknown solvers named with ours, `--display none` too."""

from pathlib import Path

import pytest

from koblex_tasks.cli.refusals import unknown_solver_line
from tests.inspect_cli import inspect_eval_cli


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("koblex_tasks/parserr", "(did you mean 'koblex_tasks/parser'?)"),
        ("self-ask", "(did you mean 'koblex_tasks/self_ask'?)"),
        ("koblex_tasks/zzz", "is not a registered solver; koblex_tasks/<name> with one of: beamaggr,"),
    ],
)
def test_unknown_solver_meant_for_us_is_one_line_with_our_solvers(name: str, expected: str) -> None:
    line = unknown_solver_line(ValueError(f"Unknown solver {name} (not registered as a @solver or @agent)"))
    assert line is not None and line.startswith(f"--solver {name} ") and expected in line
    assert "standard_prompting" in line and "\n" not in line


def test_a_misspelt_solver_is_matched_against_the_named_tasks_solvers_only() -> None:
    """A KoBLEX run suggests KoBLEX's solvers (not LEGIT's `legit_rag`), a LEGIT run LEGIT's."""
    exc = ValueError("Unknown solver koblex_tasks/legit_ra (not registered as a @solver or @agent)")
    koblex = unknown_solver_line(
        exc, argv=["eval", "koblex_tasks/koblex", "--solver", "koblex_tasks/legit_ra"]
    )
    assert koblex is not None and "did you mean" not in koblex and "legit" not in koblex.split("one of:")[1]
    assert "parser" in koblex and "one_time_retrieval" in koblex
    legit = unknown_solver_line(exc, argv=["eval", "koblex_tasks/legit", "--solver", "koblex_tasks/legit_ra"])
    assert legit is not None and "(did you mean 'koblex_tasks/legit_rag'?)" in legit and "parser" not in legit


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("Unknown solver foo (not registered as a @solver or @agent)"),  # not ours: Inspect's error
        ValueError("some other problem"),
        RuntimeError("Unknown solver koblex_tasks/parserr (not registered as a @solver or @agent)"),
    ],
)
def test_other_errors_are_left_to_inspect(exc: BaseException) -> None:
    assert unknown_solver_line(exc) is None


@pytest.mark.parametrize("display", [[], ["--display", "none"]], ids=["default display", "display none"])
def test_the_inspect_cli_names_the_solver_typo_in_one_line(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path, display: list[str]
) -> None:
    args = ["-T", f"data={tiny_questions}", "-T", f"corpus={tiny_corpus}", "-T", "reranker=none"]
    proc = inspect_eval_cli(
        "koblex_tasks/koblex", "--model", "koblexmock/m", *args, "--solver", "koblex_tasks/parserr", *display,
        log_dir=tmp_path, timeout=120,
    )  # fmt: skip
    output = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 1 and "Traceback" not in output
    assert output.count("is not a registered solver") == 1
    assert "did you mean 'koblex_tasks/parser'?" in proc.stderr.strip().splitlines()[-1]
