"""KoBLEX question loading: real data facts, sample conversion, hub path (mocked), and error cases."""

import json
from pathlib import Path

import pytest

from koblex_tasks.data.koblex.dataset import gold_book, koblex_dataset, load_koblex, record_to_sample
from koblex_tasks.errors import DataError


def test_real_questions(shared_data: Path) -> None:
    data = load_koblex(str(shared_data / "koblex" / "koblex.jsonl"))
    assert len(data.records) == 226
    samples = list(koblex_dataset(data, "ko"))
    hops = [s.metadata["hop_count"] for s in samples]
    assert (hops.count(1), hops.count(2), hops.count(3)) == (55, 125, 46)  # the paper's split
    assert sum(s.metadata["hop_count"] != s.metadata["n_hops"] for s in samples) == 6
    first = samples[0]
    assert first.id == "qa_19_1hop_28"
    assert (
        first.input.startswith(data.records[0]["background"]) and data.records[0]["question"] in first.input
    )
    assert first.target == data.records[0]["answer"]
    ctx = data.records[0]["contexts"][0]
    assert gold_book(data, "ko").get(first.id).provisions == (ctx["hierarchy"] + ctx["content"],)
    assert not {"gold_provisions", "gold_keys"} & set(first.metadata)  # never where a solver looks


def test_english_fields(tiny_questions: Path) -> None:
    data = load_koblex(str(tiny_questions), lang="en")
    sample = record_to_sample(data.records[0], "en")
    assert sample.target == "a" and sample.metadata["question"] == "q"


def _write(tmp_path: Path, rows: list[dict]) -> str:
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_errors_name_file_and_line(tiny_questions: Path, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in tiny_questions.read_text(encoding="utf-8").splitlines()]
    dup = _write(tmp_path, [rows[0], rows[0]])
    with pytest.raises(DataError, match=r":2: duplicate id 'q1' \(first at line 1\)"):
        load_koblex(dup)
    missing = dict(rows[0])
    del missing["answer"]
    with pytest.raises(DataError, match=":1: missing field 'answer'"):
        load_koblex(_write(tmp_path, [missing]))
    no_gold = dict(rows[0], contexts=[])
    with pytest.raises(DataError, match="contexts"):
        load_koblex(_write(tmp_path, [no_gold]))
    with pytest.raises(ValueError, match="lang must be one of"):
        load_koblex(str(tiny_questions), lang="fr")
    with pytest.raises(DataError, match=":1: field 'n_hops' must be an integer"):  # a boolean is not a count
        load_koblex(_write(tmp_path, [dict(rows[0], n_hops=True)]))


def test_hub_path_is_used_by_default(monkeypatch: pytest.MonkeyPatch, tiny_questions: Path) -> None:
    import datasets

    rows = [json.loads(line) for line in tiny_questions.read_text(encoding="utf-8").splitlines()]
    seen = []
    monkeypatch.setenv(
        "HF_HUB_OFFLINE", "1"
    )  # the local datasets cache is still asked; the hub is not dialled
    monkeypatch.setattr(
        datasets, "load_dataset", lambda repo, split, revision=None: seen.append((repo, split)) or rows
    )
    data = load_koblex(None)
    assert seen == [("JihyungL/KoBLEX-koblex", "test")] and data.source == "hf:JihyungL/KoBLEX-koblex@main"
    assert [r["id"] for r in data.records] == ["q1", "q2"]


def test_hub_english_questions_take_article_identities(monkeypatch: pytest.MonkeyPatch) -> None:
    """lang=en reads the same hub dataset's `_eng` fields; against an article corpus the gold is article keys."""
    import datasets

    from koblex_tasks.data.koblex.dataset import GoldIdentity
    from tests.english_data import CARRIER, DAMAGES, QUASI, QUESTIONS, ROBBERY

    # the local datasets cache is still asked; the hub is not dialled
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets, "load_dataset", lambda repo, split, revision=None: QUESTIONS)
    data = load_koblex(None, lang="en")
    assert data.lines == (1, 2, 3)
    samples = list(koblex_dataset(data, "en", identity=GoldIdentity("article", "en")))
    book = gold_book(data, "en", GoldIdentity("article", "en"))
    assert [list(book.get(s.id).keys) for s in samples] == [[CARRIER], [DAMAGES], [ROBBERY, QUASI]]
    assert [s.metadata["hop_count"] for s in samples] == [1, 2, 2]  # the paper's count: paragraphs
    assert samples[0].input.startswith("A carrier")
    paragraphs = list(koblex_dataset(data, "en"))  # no corpus: the English paragraph strings
    gold = gold_book(data, "en").get(paragraphs[1].id)
    assert gold.keys == gold.provisions and gold.identity == "paragraph:en"
    assert paragraphs[1].metadata["provision_level"] == "paragraph"
