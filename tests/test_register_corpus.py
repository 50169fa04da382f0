"""`tools/register_full_corpus.py`: registers only a pool of the paper's size, in the registry the spec reads."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from koblex_tasks.benchmarks.koblex.spec import FULL_CORPUS_SIZE
from koblex_tasks.spec import load_known_corpora

TOOL = Path(__file__).resolve().parent.parent / "tools" / "register_full_corpus.py"
REVISION = "0123456789abcdef0123456789abcdef01234567"


def _tool():
    spec = importlib.util.spec_from_file_location("register_full_corpus", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_full_size_pool_is_registered_as_full(tmp_path: Path) -> None:
    registry = tmp_path / "corpora.json"
    registry.write_text(json.dumps({"a" * 64: {"status": "partial", "size": 5, "description": "x"}}))
    _tool().register(registry, "b" * 64, FULL_CORPUS_SIZE, "the pool at r")
    known = load_known_corpora(registry)
    assert known["b" * 64].status == "full" and known["a" * 64].status == "partial"
    with pytest.raises(SystemExit, match="not the paper's"):
        _tool().register(registry, "c" * 64, 5_423, "the shared rebuild")
    assert "c" * 64 not in load_known_corpora(registry)


def test_the_cli_refuses_a_partial_pool_and_a_branch_name(shared_data: Path, tmp_path: Path) -> None:
    registry = tmp_path / "corpora.json"
    registry.write_text("{}")
    corpus = str(shared_data / "koblex" / "statutes.jsonl")
    base = [sys.executable, str(TOOL), "--corpus", corpus, "--registry", str(registry)]
    branch = subprocess.run([*base, "--revision", "main"], capture_output=True, text=True, timeout=120)
    assert branch.returncode == 2 and "40 hex digits" in branch.stderr
    partial = subprocess.run([*base, "--revision", REVISION], capture_output=True, text=True, timeout=300)
    assert partial.returncode == 1 and "5,423 paragraphs, not the paper's 233,544" in partial.stderr
    assert json.loads(registry.read_text()) == {}
