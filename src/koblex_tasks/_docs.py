"""The docs' parameter tables, generated from the tasks' signatures and docstrings so they cannot drift.

`python -m koblex_tasks._docs` rewrites every block of README.md and docs/*.md between `<!-- params:<task> -->`
and `<!-- /params:<task> -->`; `tests/test_readme.py` fails when a block differs from what this module renders.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

BLOCK = re.compile(
    r"(<!-- params:(?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /params:(?P=name) -->)", re.DOTALL
)
HIDDEN = {"solver"}  # replaced by `--solver`, documented with the solvers


def documented_args(function: Callable[..., Any]) -> dict[str, str]:
    """The `Args:` section of a Google-style docstring: name -> description (continuation lines joined)."""
    doc = inspect.getdoc(function) or ""
    args: dict[str, str] = {}
    current: str | None = None
    in_args = False
    for line in doc.splitlines():
        if line.strip() == "Args:":
            in_args = True
            continue
        if not in_args:
            continue
        if line and not line.startswith(" "):
            break  # the next section
        match = re.match(r"^    (\w+): (.*)$", line)
        if match:
            current = match.group(1)
            args[current] = match.group(2).strip()
        elif current and line.strip():
            args[current] += " " + line.strip()
    return args


def _default(value: Any) -> str:
    if value is inspect.Parameter.empty:
        return "required"
    if value is None:
        return "–"
    return f"`{value!r}`" if isinstance(value, str) else f"`{value}`"


def param_table(function: Callable[..., Any]) -> str:
    """A Markdown table of a task's `-T` parameters: name, default, meaning (from the docstring)."""
    docs = documented_args(function)
    rows = ["| parameter | default | meaning |", "| --- | --- | --- |"]
    for name, param in inspect.signature(function).parameters.items():
        if name in HIDDEN or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        meaning = docs.get(name)
        if meaning is None:
            raise ValueError(f"{function.__name__}: parameter {name!r} has no line in the docstring's Args")
        cell = meaning.replace("|", "\\|")
        rows.append(f"| `{name}` | {_default(param.default)} | {cell} |")
    return "\n".join(rows) + "\n"


def tasks() -> dict[str, Callable[..., Any]]:
    """Every registered benchmark's task functions, by name."""
    from koblex_tasks.tasks import benchmarks

    return {fn.__name__: fn for b in benchmarks() for fn in b.tasks}


def documents(root: Path) -> list[Path]:
    """The project's Markdown documentation: the README (the guide) and the reference pages under docs/."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def render(readme: str) -> str:
    """Markdown text with every parameter block regenerated."""
    known = tasks()

    def block(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in known:
            raise ValueError(f"the docs name an unknown task in <!-- params:{name} -->")
        return match.group(1) + param_table(known[name]) + match.group(4)

    return BLOCK.sub(block, readme)


def main(argv: list[str] | None = None) -> int:
    """Rewrite the named Markdown files (default: the README and docs/*.md of the current folder)."""
    paths = [Path(a) for a in (argv or sys.argv[1:])] or documents(Path.cwd())
    for path in paths:
        text = path.read_text(encoding="utf-8")
        updated = render(text)
        if updated != text:
            path.write_text(updated, encoding="utf-8")
            print(f"updated the parameter tables in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
