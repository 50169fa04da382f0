"""`koblex replay parser_gpt4o.jsonl` (a released file's bare name) replays the copy cached at its pinned commit,
and offline with no cached copy it is one line naming the way out; an unknown name is still a missing file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.cli.main import main
from koblex_tasks.grid.released import ReleasedFiles, released_dir, released_names

NAME = "sp_gpt4o.jsonl"


def test_a_released_name_is_one_the_grid_knows() -> None:
    names = released_names(KOBLEX.methods)
    assert {"parser_gpt4o.jsonl", NAME, "beamaggr_qwen32b.jsonl"} <= names


def test_a_cached_released_file_replays_by_name(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KOBLEX_CACHE_DIR", str(tmp_path / "cache"))
    assert KOBLEX.methods is not None and KOBLEX.methods.released is not None
    cached = released_dir(KOBLEX.methods.released, NAME) / NAME
    cached.parent.mkdir(parents=True)
    shutil.copy(shared_data / "koblex" / "released_gpt4o" / NAME, cached)
    monkeypatch.chdir(tmp_path)
    data = str(shared_data / "koblex" / "koblex.jsonl")
    assert main(["replay", NAME, "--data", data, "--official", "--log-dir", str(tmp_path / "logs")]) == 0
    headline = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert round(100 * headline["token_f1"], 2) == 36.20  # the paper's standard prompting, GPT-4o
    files = ReleasedFiles(KOBLEX.methods.released, grid=KOBLEX.methods)
    assert files.named(NAME) == cached and files.named("nope.jsonl") is None


def test_offline_without_a_cached_copy_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KOBLEX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)

    def offline(url: str, target: Path) -> bool:
        raise OSError("network unreachable")

    monkeypatch.setattr("koblex_tasks.grid.released._fetch", offline)
    assert main(["replay", NAME]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "cannot download the paper's released runs" in line and line.endswith(
        "pass the file's path instead"
    )
    assert main(["replay", "not_released.jsonl"]) == 2  # not a released name: the file is simply missing
