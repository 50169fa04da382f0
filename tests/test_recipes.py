"""The recipes of docs/development.md do what they say: a KoBLEX solver is its module and its prompt file.

The test copies the package, writes its recipe blocks (`<!-- recipe: PATH -->` before a code block)
into the copy at their paths, and runs the new method through Inspect from the copy in a fresh process: it
must be registered under `koblex_tasks/<name>`, known to the wiring point (with `RETRIEVES = False` honoured),
and its prompt's hash must reach the log. The benchmark recipe is `tests/leaderboard/test_toy_benchmark.py`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEVELOPMENT = ROOT / "docs" / "development.md"
RECIPE = re.compile(r"<!-- recipe: (?P<path>\S+) -->\n+```[a-z]*\n(?P<body>.*?)```", re.S)


def recipes() -> dict[str, str]:
    """Path -> file text, for every recipe block of the development page."""
    return {
        m.group("path"): m.group("body") for m in RECIPE.finditer(DEVELOPMENT.read_text(encoding="utf-8"))
    }


def test_the_docs_have_the_solver_recipe() -> None:
    paths = set(recipes())
    assert any(p.startswith("src/koblex_tasks/solvers/koblex/") and p.endswith(".py") for p in paths), paths
    assert any(p.startswith("src/koblex_tasks/prompts/koblex/") and p.endswith(".txt") for p in paths), paths
    assert not any((ROOT / p).exists() for p in paths), "a recipe names a file that exists"


CHECK = """
import json, sys
from inspect_ai import eval
from inspect_ai.util import registry_create
from koblex_tasks.tasks import find_benchmark
from koblex_tasks.tasks.koblex.task import koblex

name, data = sys.argv[1], sys.argv[2]
benchmark = find_benchmark("koblex")
solver = registry_create("solver", f"koblex_tasks/{name}")
[log] = eval(koblex(data=data, solver=solver), model="koblexmock/recipe", limit=2, display="none", log_dir=sys.argv[3])
sample = log.samples[0]
prompts = [p for p in (sample.metadata or {}).get("prompts", [])] if sample.metadata else []
print(json.dumps({
    "registered": f"koblex_tasks/{name}" in benchmark.solver_names,
    "retrieval_free": f"koblex_tasks/{name}" in benchmark.retrieval_free,
    "status": log.status,
    "solver": log.eval.task_args.get("solver", {}).get("name") if isinstance(log.eval.task_args.get("solver"), dict) else None,
    "metadata": json.dumps(sample.metadata, ensure_ascii=False, default=str),
    "answer": sample.output.completion,
}))
"""


@pytest.mark.slow
def test_a_new_solver_is_its_module_and_its_prompt_file(tmp_path: Path, shared_data: Path) -> None:
    copy = tmp_path / "src" / "koblex_tasks"
    shutil.copytree(ROOT / "src" / "koblex_tasks", copy, ignore=shutil.ignore_patterns("__pycache__"))
    written = []
    for path, body in recipes().items():
        target = tmp_path / path
        assert not target.exists(), f"the recipe would overwrite {path}"
        target.write_text(body, encoding="utf-8")
        written.append(target)
    [module] = [p for p in written if p.suffix == ".py"]
    [prompt] = [p for p in written if p.suffix == ".txt"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            CHECK,
            module.stem,
            str(shared_data / "koblex" / "koblex.jsonl"),
            str(tmp_path / "logs"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["registered"] and result["retrieval_free"] and result["status"] == "success", result
    stem = prompt.name.split(".")[0]
    assert f"koblex/{stem}" in result["metadata"], (
        "the recipe's prompt (name and hash) is recorded in the log"
    )
    assert result["answer"].startswith("Answer:")
