"""The LEGIT task refuses bad arguments when it is built: before any model call, one line each."""

import os
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from koblex_tasks.errors import DataError
from koblex_tasks.solvers.grader import GraderRequiredError
from koblex_tasks.tasks.checks import TaskArgumentError
from koblex_tasks.tasks.legit.task import NO_GRADER_AT_BUILD, legit
from tests.inspect_cli import inspect_eval_cli
from tests.legit_helpers import CountingModel, ScriptedJudge


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"difficulty": "esay"},
            "LEGIT: difficulty='esay' is not one of easy, medium, hard (did you mean 'easy'?)",
        ),
        ({"difficulty": ["hard", "meduim"]}, "did you mean 'medium'?"),
        (
            {"rule": "oficial"},
            "LEGIT: rule='oficial' is not one of paper, official (did you mean 'official'?)",
        ),
        ({"rule": "lenient"}, "LEGIT: rule='lenient' is not one of paper, official"),
        ({"doc_ids": [True]}, "doc_ids must be a string or a list of strings"),
        ({"judge_retries": -1}, "retries must be >= 0"),
        ({"judge_temperature": -0.5}, "judge temperature must be >= 0"),
        ({"judge_cache": "soon"}, "judge cache expiry 'soon'"),
    ],
)
def test_bad_arguments_are_refused_at_build(tiny_legit: Path, args: dict, message: str) -> None:
    with pytest.raises(TaskArgumentError) as info:
        legit(data=str(tiny_legit), **args)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)  # Python callers catch a ValueError, as before


def test_unreadable_files_are_data_errors_at_build(tiny_legit: Path, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="file not found"):
        legit(data=str(tiny_legit), responses=str(tmp_path / "missing.jsonl"))
    with pytest.raises(DataError, match="file not found"):
        legit(data=str(tiny_legit), verdicts=str(tmp_path / "missing.jsonl"))
    with pytest.raises(DataError, match=r"doc_ids not in the data: \['nope'\]"):
        legit(data=str(tiny_legit), doc_ids="nope")
    bad = tmp_path / "r.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"r.jsonl:1: not valid JSON"):
        legit(data=str(tiny_legit), responses=str(bad))
    with pytest.raises(TaskArgumentError, match="not both"):
        legit(data=str(tiny_legit), responses=str(bad), verdicts=str(bad))


def test_eval_of_the_registry_task_without_grader_raises_once(tiny_legit: Path, tmp_path: Path) -> None:
    """Built by eval(), the task sees the eval's model roles and refuses before any sample starts."""
    evaluated = CountingModel()
    with pytest.raises(GraderRequiredError) as info:
        inspect_eval(
            "koblex_tasks/legit",
            task_args={"data": str(tiny_legit)},
            model=evaluated.model(),
            display="none",
            log_dir=str(tmp_path),
        )
    assert str(info.value) == NO_GRADER_AT_BUILD and len(NO_GRADER_AT_BUILD) <= 80
    assert evaluated.calls == 0 and not list(tmp_path.glob("*.eval"))


def test_eval_of_the_registry_task_with_grader_runs(tiny_legit: Path, tmp_path: Path) -> None:
    from koblex_tasks.data.legit.dataset import read_legit_file

    judge = ScriptedJudge(read_legit_file(tiny_legit), {})
    [log] = inspect_eval(
        "koblex_tasks/legit",
        task_args={"data": str(tiny_legit), "difficulty": "easy"},
        model=CountingModel().model(),
        model_roles={"grader": judge.model()},
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success" and judge.total_calls == 4


@pytest.mark.slow
def test_inspect_eval_without_grader_exits_nonzero_with_one_line(tiny_legit: Path, tmp_path: Path) -> None:
    """What a user sees: Inspect prints a PrerequisiteError as one line (on stdout, via rich) and exits 1;
    stderr carries no traceback."""
    env = {**os.environ, "COLUMNS": "80"}
    args = ["koblex_tasks/legit", "--model", "koblexmock/m", "-T", f"data={tiny_legit}"]
    proc = inspect_eval_cli(*args, log_dir=tmp_path / "logs", env=env)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if NO_GRADER_AT_BUILD in line]
    assert len(lines) == 1, (proc.stdout, proc.stderr)
    assert not list((tmp_path / "logs").glob("*"))  # refused before an eval log was started
