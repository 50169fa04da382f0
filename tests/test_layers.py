"""The package's layers, checked by walking every import (module level and inside functions alike).

Each top-level part of `koblex_tasks` has a rank; a module may import only parts of its own rank or below, so
the declarations every part reads sit at the bottom and the wiring point (`tasks`) above everything that
works on a single benchmark. Parts of one rank must not import each other in a cycle, nor may the
subpackages of one part (`tasks.koblex` and `tasks.legit`).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "koblex_tasks"

# Bottom first. A part is a module or subpackage directly under koblex_tasks/.
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "__init__",
        "errors",
        "jsonl",
        "text",
        "containment",
        "spec",
        "_inspect_compat",
        "hub",
        "judge_role",
        "prompts",
        "install",
        "net",
    ),
    ("benchmarks",),  # each benchmark's declarations: spec, method grid, evidence record, issue trees
    ("corpus", "stats"),
    ("data",),  # each benchmark's questions and released files
    ("solvers",),
    ("scorers",),
    ("rewards",),  # the LEGIT rubric as a training reward (scorers' code, no task)
    ("tasks",),  # assembly, replays, and the one wiring point (`tasks/__init__.py`)
    ("providers", "lm_eval_tasks", "conformance"),
    ("logs",),  # reading eval logs: shared by the leaderboard, the grid and the audit
    ("leaderboard",),
    ("audit", "grid"),
    ("cli",),
    ("_registry", "_docs"),
)
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def part_of(module: str) -> str:
    """`koblex_tasks.scorers.koblex.lf_eval` -> `scorers`; the package root itself -> `__init__`."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "__init__"


def imports() -> dict[str, set[str]]:
    """Every module -> the koblex_tasks modules it imports (anywhere in its body)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            edges[name].update(t for t in targets if t in modules and t != name)
    return edges


def test_every_part_has_a_layer() -> None:
    parts = {part_of(m) for m in imports()} | {part_of(module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert parts <= set(RANK), f"parts without a layer: {sorted(parts - set(RANK))}"


def test_no_upward_import() -> None:
    upward = [
        f"{a} ({part_of(a)}, layer {RANK[part_of(a)]}) imports {b} ({part_of(b)}, layer {RANK[part_of(b)]})"
        for a, targets in imports().items()
        for b in targets
        if RANK[part_of(b)] > RANK[part_of(a)]
    ]
    assert not upward, "\n".join(sorted(upward))


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` (as a path), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_package_cycle() -> None:
    """Between parts (and between the subpackages of a part, e.g. `tasks.koblex` and `tasks.legit`)."""
    edges = imports()
    subpackages = {module_name(p.parent) for p in PACKAGE.rglob("__init__.py")}
    for depth in (2, 3):
        graph: dict[str, set[str]] = defaultdict(set)
        for a, targets in edges.items():
            for b in targets:
                pa, pb = ".".join(a.split(".")[:depth]), ".".join(b.split(".")[:depth])
                if depth == 3 and not (pa in subpackages and pb in subpackages):
                    continue  # modules of one part may import each other; only packages are units here
                if pa != pb and not pa.startswith(pb + ".") and not pb.startswith(pa + "."):
                    graph[pa].add(pb)
        cycle = _cycle(graph)
        assert cycle is None, " -> ".join(cycle or [])


def test_the_walk_sees_imports_inside_functions(tmp_path: Path) -> None:
    """The checker itself: a lazy import inside a function is an import too."""
    source = "def f():\n    from koblex_tasks.tasks import benchmarks\n"
    found = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)]
    assert [n.module for n in found] == ["koblex_tasks.tasks"]
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
