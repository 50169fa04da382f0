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
    # the local datasets cache is still asked; the hub is not dialled
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from tests.english_data import ARTICLES

    def fake_load_dataset(repo: str, split: str, revision: str | None = None) -> list[dict]:
        calls.append((repo, split, revision))
        if repo.endswith("-eng"):  # the English repo's shape: article rows, no hierarchy
            return [dict(r) for r in ARTICLES]
        return [{"hierarchy": r["hierarchy"], "content": r["content"]} for r in TINY_STATUTES]

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    corpus = load_statutes(None, "ko", revision="abc123")
    assert calls == [("JihyungL/KoBLEX-statute", "corpus", "abc123")]
    assert corpus.source == "hf:JihyungL/KoBLEX-statute@abc123"
    assert len(corpus) == len(TINY_STATUTES) and corpus.level == "paragraph"
    english = load_statutes(None, "en")
    assert calls[-1] == ("JihyungL/KoBLEX-statute-eng", "corpus", None)
    assert english.level == "article" and english.language == "en" and len(english) == len(ARTICLES)
    assert english.provision(0).key == ARTICLES[0]["index"]


def test_hub_failure_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(RuntimeError, match=r"(?i)pass a local JSONL file instead"):
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


def _rows(*texts: tuple[str, str], ids: bool = True) -> list[dict]:
    return [
        {"id": f"r{i}", "hierarchy": h, "content": c} if ids else {"hierarchy": h, "content": c}
        for i, (h, c) in enumerate(texts)
    ]


def test_boolean_ids_are_rejected(tmp_path: Path) -> None:
    from tests.conftest import write_jsonl

    path = write_jsonl(
        tmp_path / "bool.jsonl",
        [{"id": "a", "hierarchy": "h", "content": "c"}, {"id": True, "hierarchy": "h2", "content": "c"}],
    )
    with pytest.raises(DataError, match=r"bool.jsonl:2: field 'id' must be a string or a number, got True"):
        load_statutes(str(path), use_cache=False)


def test_duplicate_texts_are_kept_once_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from koblex_tasks.corpus.bm25 import BM25Index
    from koblex_tasks.corpus.provision import Provision
    from koblex_tasks.corpus.statutes import fingerprint_provisions
    from koblex_tasks.corpus.tokenizers import OfficialTokenizer
    from tests.conftest import write_jsonl

    texts = [
        ("민법 1조", " 손해배상 청구"),
        ("민법 2조", " 계약 해제"),
        ("민법 1조", " 손해배상 청구"),
        ("민법 1", "조 손해배상 청구"),
    ]
    texts += [("민법 2조", " 계약 해제")] * 4
    path = write_jsonl(tmp_path / "dups.jsonl", _rows(*texts))
    for use_cache in (False, True, True):  # parsed, parsed and cached, loaded from the cache
        caplog.clear()
        with caplog.at_level("WARNING"):
            corpus = load_statutes(str(path), cache_dir=tmp_path / "cache", use_cache=use_cache)
        warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert len(warnings) == 1, warnings
        assert (
            "6 provision(s) repeat" in warnings[0]
            and "line 3 (id 'r2') repeats line 1 (id 'r0')" in warnings[0]
        )
        assert warnings[0].endswith("; ...")  # only the first few are named
        # "민법 1" + "조 손해배상 청구" is the same key (hierarchy + content are joined without a separator)
        assert [p.row_id for p in corpus.provisions] == ["r0", "r1"]
        assert corpus.describe()["duplicates_dropped"] == 6 and len(corpus) == 2
        # the fingerprint still covers every row of the file, as before duplicates were dropped
        assert corpus.fingerprint == fingerprint_provisions(
            [Provision(f"r{i}", h, c) for i, (h, c) in enumerate(texts)]
        )
    hits = BM25Index.open(corpus, OfficialTokenizer(), cache_dir=tmp_path / "cache").search(
        "손해배상 청구", 5, order="float64"
    )
    assert [h.index for h in hits] == [0]


def test_no_indexable_text_is_a_clear_error(tmp_path: Path) -> None:
    from koblex_tasks.corpus.bm25 import BM25Index
    from koblex_tasks.corpus.tokenizers import KiwiTokenizer, OfficialTokenizer
    from tests.conftest import write_jsonl

    path = write_jsonl(tmp_path / "blank.jsonl", _rows(("", "."), ("-", " "), ("", "!?")))
    corpus = load_statutes(str(path), use_cache=False)
    for tokenizer in (OfficialTokenizer(), KiwiTokenizer(num_workers=1)):
        with pytest.raises(
            DataError,
            match=rf"blank.jsonl: no provision has an indexable term for the '{tokenizer.name}' tokenizer \(3 provisions",
        ):
            BM25Index.open(corpus, tokenizer, use_cache=False)


def test_parsed_corpus_is_cached_and_never_stale(tiny_corpus: Path, tmp_path: Path) -> None:
    import os

    from tests.conftest import write_jsonl

    cache = tmp_path / "cache"
    path = write_jsonl(tmp_path / "statutes.jsonl", TINY_STATUTES)
    parsed = load_statutes(str(path), use_cache=False)
    first = load_statutes(str(path), cache_dir=cache)
    (entry,) = (cache / "statutes").iterdir()
    second = load_statutes(str(path), cache_dir=cache)
    for corpus in (first, second):
        assert corpus.provisions == parsed.provisions and corpus.fingerprint == parsed.fingerprint
        assert corpus.texts() == [p.text for p in parsed.provisions]
        assert corpus.provision(-1) == parsed.provisions[-1] and corpus.source == str(path)
    assert [p.name for p in (cache / "statutes").iterdir()] == [entry.name]  # the second load used it
    # one character changed, same size, modification time put back: the parse is not reused
    text = path.read_text(encoding="utf-8")
    stat = path.stat()
    edited = text.replace("소멸한다", "소멸된다", 1)
    assert len(edited.encode()) == len(text.encode())
    path.write_text(edited, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    changed = load_statutes(str(path), cache_dir=cache)
    assert changed.fingerprint != parsed.fingerprint and "소멸된다" in "".join(changed.texts())
    # a corrupted table is rebuilt from the file
    (entry_now,) = [p for p in (cache / "statutes").iterdir() if p.name != entry.name]
    (entry_now / "text.bin").write_bytes(b"garbage")
    assert load_statutes(str(path), cache_dir=cache).provisions == changed.provisions


def test_retrieval_imports_neither_inspect_nor_bm25s() -> None:
    import subprocess
    import sys

    code = (
        "import sys, koblex_tasks.corpus.retriever, koblex_tasks.corpus.bm25; "
        "print(sorted(m for m in ('inspect_ai', 'bm25s', 'scipy', 'kiwipiepy', 'numba', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
