"""The docs' parameter tables are generated from the tasks' signatures and docstrings, so they cannot drift."""

from pathlib import Path

from koblex_tasks._docs import BLOCK, documents, render, tasks

ROOT = Path(__file__).resolve().parent.parent


def test_parameter_tables_match_the_task_signatures() -> None:
    names = []
    for path in documents(ROOT):
        text = path.read_text(encoding="utf-8")
        names += [m.group("name") for m in BLOCK.finditer(text)]
        assert render(text) == text, (
            f"{path.name}: parameter tables are stale: run `python -m koblex_tasks._docs`"
        )
    assert sorted(names) == sorted(tasks()), (
        "every registered task has one <!-- params:<task> --> block in the docs"
    )


def test_every_parameter_is_documented() -> None:
    """Every `-T` parameter of every task has a row (a parameter without a docstring line raises)."""
    import inspect

    from koblex_tasks._docs import HIDDEN, param_table, tasks

    for task in tasks().values():
        table = param_table(task)
        for name, param in inspect.signature(task).parameters.items():
            if name not in HIDDEN and param.kind is param.POSITIONAL_OR_KEYWORD:
                assert f"| `{name}` |" in table, f"{task.__name__}: {name} missing from its table"
