"""Tokenizers: per-word Kiwi analysis with its memo and word cache, content tags, corpus encoding, and the
official regex tokenizer, proven to give bm25s' exact tokens."""

import threading
from pathlib import Path

import bm25s
import pytest

from koblex_tasks.corpus.bm25 import BM25Index, BM25Params
from koblex_tasks.corpus.statutes import load_statutes
from koblex_tasks.corpus.tokenizers import (
    KIWI_CONTENT_TAGS,
    KiwiTokenizer,
    OfficialTokenizer,
    get_tokenizer,
    is_content_tag,
)
from tests.conftest import TINY_STATUTES, statute_key
from tests.corpus.helpers import SplitTokenizer

TEXTS = [statute_key(r) for r in TINY_STATUTES] + [
    "갑은 을에게 손해배상청구권을 행사할 수 있는가? 을은 갑에 대한 손해배상청구권은 소멸하였다고 주장한다.",
    "The Act applies to THE carrier; 운송인의 채권은 1년 이내에 소멸한다.",
    "",
    "   ",
    "걸어서 도와주고 고마운 일을 지었다",
]


@pytest.fixture(scope="module")
def kiwi() -> KiwiTokenizer:
    return KiwiTokenizer(num_workers=2)


def test_batch_single_and_fresh_instances_agree(kiwi: KiwiTokenizer) -> None:
    batch = kiwi.tokenize(TEXTS)
    assert [kiwi.tokenize([t])[0] for t in TEXTS] == batch
    assert KiwiTokenizer(num_workers=1).tokenize(list(reversed(TEXTS))) == list(reversed(batch))
    # per-word analysis: a text's terms are its words' terms, in order
    for text, terms in zip(TEXTS, batch, strict=True):
        assert terms == [t for word_terms in kiwi.analyse_words(text.split()) for t in word_terms]
    assert kiwi.tokenize([]) == []
    assert batch[TEXTS.index("")] == [] and batch[TEXTS.index("   ")] == []


def test_content_morphemes_only(kiwi: KiwiTokenizer) -> None:
    accusative, topic = kiwi.tokenize(["손해배상청구권을", "손해배상청구권은"])
    assert accusative == topic and accusative  # the particle is dropped, the noun kept
    terms = kiwi.tokenize(["걸어서 도와주고 고마운 일을 지었다"])[0]
    # irregular stems (VV-I, VA-I) count as verbs and adjectives; endings and particles never appear
    assert {"걷", "고맙", "일"} <= set(terms)
    assert not {"어서", "고", "을", "었", "다", "은"} & set(terms)
    assert all(t == t.lower() for t in kiwi.tokenize(["The CARRIER 운송인"])[0])


def test_every_term_has_a_content_tag(kiwi: KiwiTokenizer) -> None:
    words = " ".join(TEXTS).split()
    analysed = kiwi._kiwi.tokenize(words)
    for word, tokens, terms in zip(words, analysed, kiwi.analyse_words(words), strict=True):
        assert list(terms) == [t.form.lower() for t in tokens if is_content_tag(t.tag)], word


@pytest.mark.parametrize(
    ("tag", "content"),
    [
        *[("NNG", True), ("VV", True), ("VV-R", True), ("VV-I", True), ("VA-I", True), ("SN", True)],
        *[
            ("JKO", False),
            ("EF", False),
            ("XSV", False),
            ("XSA-I", False),
            ("W_SERIAL", False),
            ("SF", False),
        ],
    ],
)
def test_is_content_tag(tag: str, content: bool) -> None:
    assert is_content_tag(tag) is content
    assert ("NNG" in KIWI_CONTENT_TAGS) and ("JKO" not in KIWI_CONTENT_TAGS)


def test_memo_is_bounded_and_does_not_change_terms() -> None:
    small = KiwiTokenizer(num_workers=1, cache_size=8)
    reference = KiwiTokenizer(num_workers=1, cache_size=0).tokenize(TEXTS)
    assert small.tokenize(TEXTS) == reference  # more new words than the memo holds: none kept
    assert len(small._cache) == 0
    assert small.tokenize(["손해배상청구권을 행사"]) == KiwiTokenizer(num_workers=1).tokenize(
        ["손해배상청구권을 행사"]
    )
    assert 0 < len(small._cache) <= 8
    for text in TEXTS[:4]:
        small.tokenize([text])
        assert len(small._cache) <= 8
    assert small.tokenize(TEXTS) == reference


def test_concurrent_calls_agree(kiwi: KiwiTokenizer) -> None:
    expected = KiwiTokenizer(num_workers=1).tokenize(TEXTS)
    fresh = KiwiTokenizer(num_workers=2)
    results: list[list[list[str]]] = []

    def work(i: int) -> None:
        results.append(fresh.tokenize(TEXTS[i % len(TEXTS) :] + TEXTS[: i % len(TEXTS)]))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 6
    for result in results:
        assert sorted(map(tuple, result)) == sorted(map(tuple, expected))


def test_official_is_bm25s_tokenize_with_english_stopwords() -> None:
    official = OfficialTokenizer()
    assert official.tokenize(TEXTS) == bm25s.tokenize(
        TEXTS, stopwords="en", return_ids=False, show_progress=False
    )
    terms = official.tokenize(["The Act applies to THE carrier"])[0]
    assert "the" not in terms and "to" not in terms and "carrier" in terms and "act" in terms
    assert get_tokenizer("official").name == "official" and get_tokenizer("kiwi").name == "kiwi"
    with pytest.raises(ValueError, match="unknown tokenizer"):
        get_tokenizer("nope")


def test_version_enters_the_cache_key(tiny_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = load_statutes(str(tiny_corpus))
    tokenizer = KiwiTokenizer()
    assert tokenizer.config()["version"] == KiwiTokenizer.version >= 2
    key = BM25Index.key_for(corpus, tokenizer, BM25Params())
    monkeypatch.setattr(KiwiTokenizer, "version", KiwiTokenizer.version + 1)
    assert BM25Index.key_for(corpus, tokenizer, BM25Params()) != key


def test_chunked_tokenize_equals_one_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    from koblex_tasks.corpus import tokenizers

    texts = TEXTS * 3
    whole = KiwiTokenizer(num_workers=1, cache_size=0).tokenize(texts)
    monkeypatch.setattr(tokenizers, "_CHUNK", 2)
    assert KiwiTokenizer(num_workers=1, cache_size=0).tokenize(texts) == whole
    assert KiwiTokenizer(num_workers=1).tokenize(tuple(texts)) == whole
    assert KiwiTokenizer(num_workers=1).tokenize(t for t in texts) == whole


# Unicode cases where a regex token boundary could differ: underscores, digits of other scripts, circled and
# fullwidth numbers, combining marks, final sigma and dotted capital I under lowercasing, hanja, jamo, emoji.
EDGE_TEXTS = [
    "a_b __ _x 1_2 x_",
    "①② ⑴ １２３ ٣٤ ¹² Ⅻ ⅻ",
    "é é ñ ǅemal ΣΑΣ ΌΣΟΣ İstanbul ß ﬁ",
    "法律 民法第一條 ㄱㄴ ㅏ 각 🙂🙂 x🙂y",
    "tab\there new\nline\u3000ideographic\u00a0nbsp",
    "THE the The tHe and AND it's O'Neil e-mail",
    "",
    "a",
    "x" * 300,
]


def _bm25s_terms(texts: list[str]) -> list[list[str]]:
    return bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)


def test_official_tokens_are_bm25s_tokens_on_edge_cases() -> None:
    from bm25s.stopwords import STOPWORDS_EN as BM25S_STOPWORDS

    from koblex_tasks.corpus.tokenizers import BM25S_TOKEN_PATTERN, STOPWORDS_EN

    assert set(BM25S_STOPWORDS) == STOPWORDS_EN
    assert BM25S_TOKEN_PATTERN == r"(?u)\b\w\w+\b"
    texts = EDGE_TEXTS + TEXTS + [" ".join(EDGE_TEXTS)]
    assert OfficialTokenizer().tokenize(texts) == _bm25s_terms(texts)
    # every single character, alone and between letters: the word-character test is the same as bm25s'
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    sample = chars[::7] + [c for c in chars if c.isalnum() != c.isalpha()][:2000]
    probes = ["".join(sample[i : i + 64]) for i in range(0, len(sample), 64)]
    probes += [f"ab{c}cd {c}{c}" for c in sample[:: len(sample) // 3000 or 1]]
    assert OfficialTokenizer().tokenize(probes) == _bm25s_terms(probes)


def test_official_tokens_are_bm25s_tokens_on_the_shared_corpus(shared_data: Path) -> None:
    import json

    corpus = load_statutes(str(shared_data / "koblex" / "statutes.jsonl"))
    with (shared_data / "koblex" / "koblex.jsonl").open(encoding="utf-8") as handle:
        questions = [json.loads(line) for line in handle if line.strip()]
    texts = corpus.texts() + [q["background"] + q["question"] for q in questions]
    assert OfficialTokenizer().tokenize(texts) == _bm25s_terms(texts)


@pytest.mark.parametrize(
    "tokenizer", [OfficialTokenizer(), KiwiTokenizer(num_workers=1)], ids=["official", "kiwi"]
)
def test_encode_is_tokenize_as_ids(tokenizer) -> None:
    from koblex_tasks.corpus.tokenizers import encode_with

    texts = TEXTS + EDGE_TEXTS
    encoded = tokenizer.encode(texts)
    assert encoded.lengths.tolist() == [len(t) for t in tokenizer.tokenize(texts)]
    flat = [encoded.vocabulary[i] for i in encoded.term_ids.tolist()]
    assert flat == [term for terms in tokenizer.tokenize(texts) for term in terms]
    assert len(set(encoded.vocabulary)) == len(encoded.vocabulary)
    generic = encode_with(SplitTokenizer(), ["a b a", "", "c"])  # a tokenizer without `encode`
    assert generic.vocabulary == ["a", "b", "c"] and generic.term_ids.tolist() == [0, 1, 0, 2]
    assert generic.lengths.tolist() == [3, 0, 1]


def test_kiwi_word_cache_is_reused_and_verified(
    tiny_corpus: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    corpus = load_statutes(str(tiny_corpus), use_cache=False)
    first = KiwiTokenizer(num_workers=1)
    built = BM25Index.open(corpus, first, cache_dir=tmp_path)
    assert first.analysed_words > 0
    (entry,) = (tmp_path / "kiwi-words").iterdir()
    # a rebuild (the index entry is gone) analyses no word again and gives the same index
    for path in (tmp_path / "bm25").iterdir():
        path.rename(tmp_path / f"old-{path.name}")
    second = KiwiTokenizer(num_workers=1)
    rebuilt = BM25Index.open(corpus, second, cache_dir=tmp_path)
    assert not rebuilt.loaded_from_cache and second.analysed_words == 0
    query = "손해배상의 청구권은 소멸한다"
    assert rebuilt.search(query, 5) == built.search(query, 5)
    # a tampered word cache is not trusted: a warning, and the words are analysed again
    (entry / "words.json").write_text('[["손해배상의"], [["가짜"]]]', encoding="utf-8")
    for path in (tmp_path / "bm25").iterdir():
        path.rename(tmp_path / f"older-{path.name}")
    third = KiwiTokenizer(num_workers=1)
    with caplog.at_level("WARNING"):
        again = BM25Index.open(corpus, third, cache_dir=tmp_path)
    assert "word cache" in caplog.text and "stale or corrupted" in caplog.text
    assert third.analysed_words > 0 and again.search(query, 5) == built.search(query, 5)
