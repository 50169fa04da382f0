"""LEGIT data: tree ancestry, strict validation (DataError with file:line), the pinned download path."""

import json
from pathlib import Path

import pytest

from koblex_tasks.benchmarks.legit.issues import (
    descendants,
    difficulty_for,
    is_ancestor,
    issue_path,
    parent_id,
)
from koblex_tasks.data.legit import dataset as legit_data
from koblex_tasks.data.legit.dataset import fetch_legit_test, load_legit, read_legit_file
from koblex_tasks.errors import DataError
from tests.legit_helpers import dump_record


def test_real_ancestry_is_not_a_string_prefix() -> None:
    assert is_ancestor("1", "1.2") and is_ancestor("1", "1.2.3") and is_ancestor("", "10")
    assert not is_ancestor("1", "10")  # the official `startswith` test says yes
    assert not is_ancestor("1", "10.1")
    assert not is_ancestor("1.1", "1.10")
    assert not is_ancestor("1", "1")  # proper ancestry only
    assert descendants("1", ["", "1", "1.1", "10", "10.1", "1.1.2", "2"]) == ["1.1", "1.1.2"]
    assert parent_id("1.2.3") == "1.2" and parent_id("1") == "" and parent_id("") is None
    assert issue_path("10.2") == (10, 2)
    for bad in ("1.", ".1", "1..2", "a", "0", "1.02", " 1"):
        with pytest.raises(ValueError):
            issue_path(bad)


def test_difficulty_bins_count_the_root() -> None:
    assert [difficulty_for(n) for n in (2, 4, 5, 8, 9, 20)] == [
        "easy",
        "easy",
        "medium",
        "medium",
        "hard",
        "hard",
    ]


def test_shared_sample_loads(sample_file: Path) -> None:
    loaded = load_legit(str(sample_file))
    records = loaded.records
    assert len(records) == 20
    assert [r.difficulty for r in records] == ["easy"] * 12 + ["medium"] * 4 + ["hard"] * 4
    assert sum(len(r.issues) for r in records[:12]) == 44  # README: 44 issue nodes in the easy records
    assert [len(r.issues) for r in records[12:16]] == [5, 5, 8, 5]
    assert all(r.issues[0].id == "" for r in records)
    assert len(loaded.sha256) == 64


def _good(sample_records) -> dict:
    return json.loads(dump_record(sample_records[0]))


def _write(tmp_path: Path, rows: list) -> Path:
    path = tmp_path / "legit.jsonl"
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows)
    )
    return path


def _mutations():
    def drop(key):
        return lambda r: r.pop(key)

    def set_(key, value):
        return lambda r: r.__setitem__(key, value)

    def issue(n, key, value):
        return lambda r: r["issues"][n].__setitem__(key, value)

    return [
        (drop("doc_id"), "missing field 'doc_id'"),
        (set_("question", ""), "field 'question' is empty"),
        (set_("answer", 3), "field 'answer' must be a string"),
        (set_("issues", []), "'issues' must be a non-empty list"),
        (set_("difficulty", "medium"), "does not match 4 issues (expected 'easy')"),
        (set_("difficulty", "trivial"), "difficulty must be one of"),
        (issue(2, "id", "1.x"), "bad issue id '1.x'"),
        (issue(2, "id", "2.1"), "issue '2.1' has no parent '2'"),
        (issue(0, "id", "3"), "no root"),
        (issue(3, "id", "1.1"), "duplicate issue id '1.1'"),
        (issue(1, "claim", [{"claimer": "원고"}]), "claim[0] must be"),
        (issue(1, "relevant_law", "민법"), "'relevant_law' must be a list of strings"),
        (issue(1, "conclusion", " "), "empty conclusion"),
        (lambda r: r["issues"][1].pop("analysis"), "missing field 'analysis'"),
    ]


@pytest.mark.parametrize(("mutate", "message"), _mutations())
def test_strict_record_errors_name_file_and_line(tmp_path, sample_records, mutate, message) -> None:
    good, bad = _good(sample_records), _good(sample_records)
    good2 = json.loads(dump_record(sample_records[1]))
    mutate(bad)
    path = _write(tmp_path, [good, good2, bad])
    with pytest.raises(DataError) as info:
        read_legit_file(path)
    assert info.value.line == 3 and info.value.path == str(path)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{path}:3: ")


def test_strict_file_errors(tmp_path, sample_records) -> None:
    good = _good(sample_records)
    with pytest.raises(DataError, match=r":2: not valid JSON"):
        read_legit_file(_write(tmp_path, [good, "{not json"]))
    with pytest.raises(DataError, match=r":2: duplicate doc_id .* \(first on line 1\)"):
        read_legit_file(_write(tmp_path, [good, good]))
    with pytest.raises(DataError, match="file not found"):
        read_legit_file(tmp_path / "nope.jsonl")


def test_pinned_download_is_verified(tmp_path, monkeypatch, sample_file) -> None:
    """The download path, offline: a file:// URL stands in for raw.githubusercontent.com."""
    monkeypatch.setenv("KOBLEX_CACHE_DIR", str(tmp_path / "cache"))
    url = sample_file.resolve().as_uri()
    digest = legit_data.file_sha256(sample_file)
    # No pinned checksum: trust on first use, record it, warn; verify against the record afterwards.
    monkeypatch.delenv("KOBLEX_LEGIT_SHA256", raising=False)
    with pytest.warns(UserWarning, match=digest):
        path, _ = fetch_legit_test(url)
    assert path.read_bytes() == sample_file.read_bytes()
    assert path.with_suffix(".jsonl.sha256").read_text().strip() == digest
    path2, notes2 = fetch_legit_test(url)
    assert path2 == path and "recorded at first download" in notes2[0]
    path.write_text(path.read_text() + "\n")  # tampered cache
    with pytest.raises(DataError, match="differs from the digest recorded"):
        fetch_legit_test(url)
    # A pinned checksum that does not match: the cached file is removed and the error says so.
    monkeypatch.setenv("KOBLEX_LEGIT_SHA256", "0" * 64)
    with pytest.raises(DataError, match="does not match the pinned"):
        fetch_legit_test(url)
    assert not path.exists()
    monkeypatch.setenv("KOBLEX_LEGIT_SHA256", digest)
    assert fetch_legit_test(url)[0].read_bytes() == sample_file.read_bytes()


def test_unreachable_download_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("KOBLEX_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(DataError, match="could not download the LEGIT test split"):
        fetch_legit_test((tmp_path / "missing.jsonl").as_uri())
