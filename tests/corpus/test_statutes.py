"""Statute loading: local files, the hub path (mocked), and every malformed-input error."""

from pathlib import Path

import pytest

from koblex_tasks.corpus.statutes import load_statutes
from koblex_tasks.errors import DataError
from tests.conftest import TINY_STATUTES


def test_local_corpus_identity_and_fingerprint(tiny_corpus: Path) -> None:
    corpus = load_statutes(str(tiny_corpus))
    assert len(corpus) == len(TINY_STATUTES)
    assert corpus.provisions[0].key == TINY_STATUTES[0]["hierarchy"] + TINY_STATUTES[0]["content"]
    assert corpus.is_partial and corpus.describe()["partial"] is True
    assert load_statutes(str(tiny_corpus)).fingerprint == corpus.fingerprint


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "a", "hierarchy": "h", "content": "c"}\n{not json\n', ":2: not valid JSON"),
        ('{"id": "a", "hierarchy": "h"}\n', ":1: missing field 'content'"),
        ('{"id": "a", "hierarchy": "h", "content": 3}\n', ":1: field 'content' must be a string"),
        (
            '{"id": "a", "hierarchy": "h", "content": "c"}\n{"id": "a", "hierarchy": "h", "content": "d"}\n',
            ":2: duplicate id 'a' (first seen at line 1)",
        ),
        ("[1, 2]\n", ":1: expected a JSON object"),
        ("\n\n", "the statute corpus is empty"),
    ],
)
def test_malformed_corpus_names_file_and_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError) as err:
        load_statutes(str(path))
    assert str(path) in str(err.value) and message in str(err.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="file not found"):
        load_statutes(str(tmp_path / "nope.jsonl"))


def test_hub_path_uses_datasets_with_repo_split_revision(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    calls = []

    def fake_load_dataset(repo: str, split: str, revision: str | None = None) -> list[dict]:
        calls.append((repo, split, revision))
        return [{"hierarchy": r["hierarchy"], "content": r["content"]} for r in TINY_STATUTES]

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    corpus = load_statutes(None, "ko", revision="abc123")
    assert calls == [("JihyungL/KoBLEX-statute", "corpus", "abc123")]
    assert corpus.source == "hf:JihyungL/KoBLEX-statute@abc123"
    assert len(corpus) == len(TINY_STATUTES)
    load_statutes(None, "en")
    assert calls[-1] == ("JihyungL/KoBLEX-statute-eng", "corpus", None)


def test_hub_failure_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(RuntimeError, match="Pass a local JSONL file instead"):
        load_statutes(None)


def test_real_corpus(shared_data: Path) -> None:
    corpus = load_statutes(str(shared_data / "koblex" / "statutes.jsonl"))
    assert len(corpus) == 5423 and corpus.is_partial


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(
        b'{"id": "a", "hierarchy": "h", "content": "c"}\n{"id": "b", "hierarchy": "\xe9", "content": "c"}\n'
    )
    with pytest.raises(DataError, match=r"latin1.jsonl:2: not valid"):
        load_statutes(str(path))
