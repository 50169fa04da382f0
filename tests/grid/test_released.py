"""Finding the paper's released runs: local folder, one pinned download verified by SHA-256, offline message."""

import urllib.error
from pathlib import Path

import pytest

from koblex_tasks.benchmarks.koblex.methods import KOBLEX_GRID
from koblex_tasks.errors import DataError
from koblex_tasks.grid import released
from koblex_tasks.grid.released import ReleasedFiles, ReleasedUnavailable

SOURCE = KOBLEX_GRID.released
assert SOURCE is not None
FAMILIES = {f.key: f for f in KOBLEX_GRID.families}


class FakeServer:
    """`released._fetch` stand-in: serves `files` by name, 404 for others; or fails like an offline machine."""

    def __init__(self, files: dict[str, bytes], offline: bool = False) -> None:
        self.files, self.offline, self.urls = files, offline, []

    def __call__(self, url: str, target: Path) -> bool:
        self.urls.append(url)
        if self.offline:
            raise urllib.error.URLError("Name or service not known")
        name = url.rsplit("/", 1)[-1]
        if name not in self.files:
            return False
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.files[name])
        return True


def test_local_folder(tmp_path: Path) -> None:
    (tmp_path / "self-ask_qwen_32b.jsonl").write_text("{}\n", encoding="utf-8")
    files = ReleasedFiles(SOURCE, local=tmp_path)
    assert (
        files.find(KOBLEX_GRID.method("self_ask"), FAMILIES["qwen_32b"])
        == tmp_path / "self-ask_qwen_32b.jsonl"
    )
    assert files.find(KOBLEX_GRID.method("parser"), FAMILIES["qwen_32b"]) is None
    (tmp_path / "selfask_qwen_32b.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(DataError, match="two spellings"):
        files.find(KOBLEX_GRID.method("self_ask"), FAMILIES["qwen_32b"])


def test_download_once_at_the_pinned_commit_then_trust_on_first_use(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KOBLEX_CACHE_DIR", str(tmp_path / "cache"))
    server = FakeServer({"parser_qwen32b.jsonl": b'{"question": "q"}\n'})
    monkeypatch.setattr(released, "_fetch", server)
    files = ReleasedFiles(SOURCE)
    path = files.find(KOBLEX_GRID.method("parser"), FAMILIES["qwen_32b"])
    assert path is not None and path.read_bytes() == b'{"question": "q"}\n'
    # first spelling 404, second found; each at its own pinned commit
    assert [u.rsplit("/", 1)[-1] for u in server.urls] == ["parser_qwen_32b.jsonl", "parser_qwen32b.jsonl"]
    assert f"/{SOURCE.commit_of('parser_qwen32b.jsonl')}/results/parser_qwen32b.jsonl" in server.urls[1]
    assert path.with_name(path.name + ".sha256").read_text().strip()
    # a second report reads the cache, no request
    assert ReleasedFiles(SOURCE).find(KOBLEX_GRID.method("parser"), FAMILIES["qwen_32b"]) == path
    assert len(server.urls) == 2
    path.write_bytes(b"tampered\n")
    with pytest.raises(DataError, match="differs from the digest recorded at download"):
        ReleasedFiles(SOURCE).find(KOBLEX_GRID.method("parser"), FAMILIES["qwen_32b"])


def test_not_released_under_any_spelling(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KOBLEX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(released, "_fetch", FakeServer({}))
    assert ReleasedFiles(SOURCE).find(KOBLEX_GRID.method("ircot"), FAMILIES["gpt4o"]) is None


def test_offline_is_one_line_naming_the_local_option(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KOBLEX_CACHE_DIR", str(tmp_path / "cache"))
    server = FakeServer({}, offline=True)
    monkeypatch.setattr(released, "_fetch", server)
    files = ReleasedFiles(SOURCE)
    with pytest.raises(ReleasedUnavailable) as caught:
        files.find(KOBLEX_GRID.method("parser"), FAMILIES["gpt4o"])
    message = str(caught.value)
    assert "--released DIR" in message and "\n" not in message
    with pytest.raises(ReleasedUnavailable):  # and no second attempt
        files.find(KOBLEX_GRID.method("ircot"), FAMILIES["gpt4o"])
    assert len(server.urls) == 1
