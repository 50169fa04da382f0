"""The English statute schema: article rows become article provisions (identity the article key, text the
English heading and body), strictly validated, cached with their level, fingerprinted with their keys; the
Korean corpus keeps its fingerprint and cache key."""

import hashlib
import json
from pathlib import Path

import pytest

from koblex_tasks.corpus.bm25 import BM25Index
from koblex_tasks.corpus.cache import cache_key
from koblex_tasks.corpus.provision import ARTICLE, PARAGRAPH, Provision
from koblex_tasks.corpus.statutes import fingerprint_provisions, load_statutes
from koblex_tasks.corpus.tokenizers import OfficialTokenizer
from koblex_tasks.errors import DataError
from tests.conftest import TINY_STATUTES, write_jsonl
from tests.english_data import ARTICLES, CARRIER, DAMAGES, article_text

REAL_KOREAN_FINGERPRINT = "27a7d403fe3c0b7d8ef2fda59cd73d0c7b0239c7a324be525c5e014249898643"


@pytest.fixture
def english_corpus(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "statutes_en.jsonl", ARTICLES)


def test_article_rows_are_articles_keyed_by_index(english_corpus: Path, tmp_path: Path) -> None:
    parsed = load_statutes(str(english_corpus), lang="en", use_cache=False)
    built = load_statutes(str(english_corpus), lang="en", cache_dir=tmp_path / "cache")
    cached = load_statutes(str(english_corpus), lang="en", cache_dir=tmp_path / "cache")  # the table, mapped
    for corpus in (parsed, built, cached):
        assert len(corpus) == len(ARTICLES) and corpus.level == ARTICLE and corpus.language == "en"
        first = corpus.provision(0)
        assert first.key == CARRIER and first.level == ARTICLE
        assert first.text == article_text(CARRIER)
        assert (
            first.text.startswith("COMMERCIAL ACT / Article. 814 / Termination")
            and "Carriers Article 814" in first.text
        )
        assert corpus.texts() == [article_text(a["index"]) for a in ARTICLES]
        assert [p.key for p in corpus.provisions] == [a["index"] for a in ARTICLES]
        described = corpus.describe()
        assert described["level"] == "article" and described["language"] == "en"
        assert described["partial"] is None  # the English pool's article count is unknown
        assert corpus.fingerprint == parsed.fingerprint == fingerprint_provisions(parsed.provisions)
    assert len(list((tmp_path / "cache" / "statutes").iterdir())) == 1


def test_bm25_indexes_the_english_text(english_corpus: Path, tmp_path: Path) -> None:
    corpus = load_statutes(str(english_corpus), lang="en", cache_dir=tmp_path)
    index = BM25Index.open(corpus, OfficialTokenizer(), cache_dir=tmp_path)
    [top, *_] = index.search("claims of a carrier terminated within one year", 3)
    assert corpus.provision(top.index).key == CARRIER
    [top, *_] = index.search("right to claim damages unlawful act prescription", 3)
    assert corpus.provision(top.index).key == DAMAGES
    assert not index.search(
        "손해배상", 3, order="float64"
    )  # the Korean article key is the identity, never indexed


def test_fingerprint_covers_the_article_keys(english_corpus: Path, tmp_path: Path) -> None:
    corpus = load_statutes(str(english_corpus), lang="en", use_cache=False)
    rekeyed = [dict(a, index=a["index"] + " (renumbered)") if i == 2 else a for i, a in enumerate(ARTICLES)]
    other = load_statutes(str(write_jsonl(tmp_path / "rekeyed.jsonl", rekeyed)), lang="en", use_cache=False)
    assert other.texts() == corpus.texts() and other.fingerprint != corpus.fingerprint
    # an article corpus never shares a fingerprint with a paragraph corpus of the same texts
    as_paragraphs = [Provision(p.row_id, p.hierarchy + " ", p.content) for p in corpus.provisions]
    assert [p.text for p in as_paragraphs] == corpus.texts()
    assert fingerprint_provisions(as_paragraphs) != corpus.fingerprint


def test_korean_fingerprint_and_cache_key_are_unchanged(tiny_corpus: Path, tmp_path: Path) -> None:
    corpus = load_statutes(str(tiny_corpus), cache_dir=tmp_path)
    joined = "".join(r["hierarchy"] + r["content"] + "\x00" for r in TINY_STATUTES)
    assert corpus.fingerprint == hashlib.sha256(joined.encode()).hexdigest()  # the formula logs rely on
    assert corpus.level == PARAGRAPH and corpus.language == "ko" and corpus.is_partial is True
    st = tiny_corpus.stat()
    identity = {
        "path": str(tiny_corpus.resolve()),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "inode": st.st_ino,
    }
    key = cache_key({"statutes": identity, "lang": "ko", "format": 1})  # as before article corpora
    assert [p.name for p in (tmp_path / "statutes").iterdir()] == [key]
    manifest = json.loads((tmp_path / "statutes" / key / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["level"] == "paragraph"


def test_cache_entries_without_a_level_are_paragraphs(tiny_corpus: Path, tmp_path: Path) -> None:
    first = load_statutes(str(tiny_corpus), cache_dir=tmp_path)
    [entry] = (tmp_path / "statutes").iterdir()
    manifest_path = entry / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    del manifest["level"]  # written before levels existed
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    again = load_statutes(str(tiny_corpus), cache_dir=tmp_path)
    assert again.level == PARAGRAPH and again.provisions == first.provisions


def test_real_korean_corpus_fingerprint_is_unchanged(shared_data: Path, tmp_path: Path) -> None:
    path = str(shared_data / "koblex" / "statutes.jsonl")
    for lang in ("ko", "en"):  # lang=en on the Korean corpus reads it as it is: still Korean
        corpus = load_statutes(path, lang=lang, cache_dir=tmp_path)
        assert corpus.fingerprint == REAL_KOREAN_FINGERPRINT
        assert corpus.level == PARAGRAPH and corpus.language == "ko" and len(corpus) == 5423


@pytest.mark.parametrize(
    ("rows", "lang", "message"),
    [
        (
            [ARTICLES[0], {"index": "민법 1조", "index_eng": "CIVIL ACT / Article. 1"}],
            "en",
            ":2: missing field 'content_eng'",
        ),
        (
            [{"index": "민법 1조", "index_eng": 3, "content_eng": "x"}],
            "en",
            ":1: field 'index_eng' must be a string",
        ),
        (
            [{"index": " ", "index_eng": "h", "content_eng": "x"}],
            "en",
            ":1: field 'index' (the article key) is empty",
        ),
        ([{"index": 7, "index_eng": "h", "content_eng": "x"}], "en", ":1: field 'index' must be a string"),
        ([ARTICLES[0], dict(ARTICLES[1], index=CARRIER)], "en", ":2: duplicate article key '상법 814조"),
        (
            [{"content_eng": "text"}],
            "en",
            ":1: missing field 'hierarchy_eng': the row is neither a paragraph ('hierarchy_eng', 'content_eng') "
            "nor an article ('index', 'index_eng', 'content_eng')",
        ),
        ([{"content": "text"}], "ko", "nor an article ('index', 'content')"),
        (
            [TINY_STATUTES[0], ARTICLES[0]],
            "en",
            ":2: the row has the article schema, but the corpus is paragraph-level (line 1)",
        ),
        (
            [ARTICLES[0], TINY_STATUTES[0]],
            "en",
            ":2: the row has the paragraph schema, but the corpus is article-level (line 1)",
        ),
        ([{"index": "민법 1조", "content_eng": "x"}], "ko", ":1: missing field 'content'"),
    ],
)
def test_rows_fitting_neither_schema_name_file_and_line(
    tmp_path: Path, rows: list[dict], lang: str, message: str
) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DataError) as err:
        load_statutes(str(path), lang=lang, use_cache=False)
    assert str(err.value).startswith(str(path)) and message in str(err.value)


def test_unknown_language_is_refused(english_corpus: Path) -> None:
    with pytest.raises(ValueError, match="lang must be one of"):
        load_statutes(str(english_corpus), lang="fr")


def test_english_paragraph_fields_win_for_english(tmp_path: Path) -> None:
    bilingual = [
        dict(r, hierarchy_eng=f"ENG {r['id']} / Paragraph. 1", content_eng=f"english text {i}")
        for i, r in enumerate(TINY_STATUTES)
    ]
    path = write_jsonl(tmp_path / "bilingual.jsonl", bilingual)
    english = load_statutes(str(path), lang="en", use_cache=False)
    korean = load_statutes(str(path), lang="ko", use_cache=False)
    assert english.provision(0).key == bilingual[0]["hierarchy_eng"] + "english text 0"
    assert english.level == PARAGRAPH and english.language == "en"
    assert korean.provision(0).key == TINY_STATUTES[0]["hierarchy"] + TINY_STATUTES[0]["content"]
    assert korean.language == "ko"


def test_the_english_file_read_in_korean_is_korean_articles(english_corpus: Path) -> None:
    corpus = load_statutes(str(english_corpus), lang="ko", use_cache=False)
    first = corpus.provision(0)
    assert corpus.level == ARTICLE and corpus.language == "ko"
    assert first.key == CARRIER and first.text == CARRIER + " " + ARTICLES[0]["content"]


def test_articles_with_one_text_are_kept_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rows = [*ARTICLES[:2], dict(ARTICLES[0], index="상법 814조 2 중복")]
    path = write_jsonl(tmp_path / "dup.jsonl", rows)
    with caplog.at_level("WARNING"):
        corpus = load_statutes(str(path), lang="en", use_cache=False)
    assert [p.key for p in corpus.provisions] == [CARRIER, DAMAGES] and corpus.duplicates_dropped == 1
    [warning] = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "repeat an earlier provision's text (heading + body)" in warning and "line 3" in warning


def test_hub_english_repo_gives_articles(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    # the local datasets cache is still asked; the hub is not dialled
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    shaped = {"JihyungL/KoBLEX-statute": TINY_STATUTES, "JihyungL/KoBLEX-statute-eng": ARTICLES}
    calls = []

    def fake_load_dataset(repo: str, split: str, revision: str | None = None) -> list[dict]:
        calls.append(repo)
        return [dict(r) for r in shaped[repo]]

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    english = load_statutes(None, "en")
    assert (
        calls == ["JihyungL/KoBLEX-statute-eng"] and english.source == "hf:JihyungL/KoBLEX-statute-eng@main"
    )
    assert english.level == ARTICLE and english.language == "en" and english.provision(1).key == DAMAGES
    korean = load_statutes(None, "ko")
    assert korean.level == PARAGRAPH and korean.language == "ko" and len(korean) == len(TINY_STATUTES)
