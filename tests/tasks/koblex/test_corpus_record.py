"""The leaderboard places a run by the corpus the run recorded, not by the file as it is at submission."""

from pathlib import Path

from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.logs.identity import RunIdentity
from koblex_tasks.logs.placement import Evidence, corpus_of
from koblex_tasks.tasks.koblex.task import koblex

# What a run's samples show: retrieval recorded (a live retrieving run), or nothing (closed book).
RETRIEVED = Evidence(released=None, retrieving=2, predicting=2)
CLOSED_BOOK = Evidence(released=None, retrieving=0, predicting=0)


def identity(metadata: dict) -> RunIdentity:
    return RunIdentity(KOBLEX, metadata, ["provision_match", "token_f1"], "fp", 2)


def test_the_recorded_corpus_wins_over_the_file_today(tiny_questions: Path, tiny_corpus: Path) -> None:
    meta = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none").metadata or {}
    recorded = meta["corpus"]
    tiny_corpus.write_text(tiny_corpus.read_text(encoding="utf-8") * 2, encoding="utf-8")  # edited later
    status, described = corpus_of(identity(meta), RETRIEVED)
    assert status == "partial" and described["fingerprint"] == recorded["fingerprint"]
    assert described["size"] == 5 and "recorded by the run" in described["kind"]


def test_logs_without_a_record_fall_back_and_say_so(tiny_corpus: Path) -> None:
    legacy = {"retrieval": {"corpus": str(tiny_corpus), "lang": "ko"}}
    status, described = corpus_of(identity(legacy), RETRIEVED)
    assert status == "partial" and described["size"] == 5
    assert "log without a corpus record: measured at submission" in described["kind"]
    hub_status, hub = corpus_of(identity({"retrieval": {"corpus": None}}), RETRIEVED)
    assert hub_status == "full" and "assumed full" in hub["kind"]
    full = {"corpus": {"source": "hf:JihyungL/KoBLEX-statute@main", "size": 233_544, "fingerprint": "f"}}
    assert corpus_of(identity(full), RETRIEVED)[0] == "full"


def test_a_closed_book_run_is_ranked_with_full_corpus_runs(tiny_questions: Path, tiny_corpus: Path) -> None:
    """Its scores do not depend on the pool: not measured against a configured file it never read."""
    from koblex_tasks.solvers.koblex.standard_prompting import standard_prompting

    meta = (
        koblex(data=str(tiny_questions), corpus=str(tiny_corpus), solver=standard_prompting()).metadata or {}
    )
    tiny_corpus.unlink()  # the configured (partial) corpus is not there at submission
    status, described = corpus_of(identity(meta), CLOSED_BOOK)
    assert (
        status == "full"
        and described["kind"] == "not applicable: no sample records retrieval or provisions (closed book)"
    )
