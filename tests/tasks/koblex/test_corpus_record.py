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
    """Placement reads the fingerprint the run recorded: editing the file afterwards changes nothing."""
    meta = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none").metadata or {}
    recorded = meta["corpus"]
    tiny_corpus.write_text(tiny_corpus.read_text(encoding="utf-8") * 2, encoding="utf-8")  # edited later
    status, described = corpus_of(identity(meta), RETRIEVED)
    # a five-paragraph pool is none the benchmark registered: a board of its own, named by its fingerprint
    assert status == "unregistered" and described["fingerprint"] == recorded["fingerprint"]
    assert described["size"] == 5


def test_logs_without_a_record_are_an_unknown_corpus(tiny_corpus: Path) -> None:
    """Nothing is measured at submission: a log that recorded no fingerprint cannot be placed by a file."""
    legacy = {"retrieval": {"corpus": str(tiny_corpus), "lang": "ko"}}
    status, described = corpus_of(identity(legacy), RETRIEVED)
    assert status == "unknown" and "no corpus fingerprint" in described["kind"]
    assert corpus_of(identity({"retrieval": {"corpus": None}}), RETRIEVED)[0] == "unknown"
    # a recorded size and source never decide: an unregistered fingerprint claiming the full pool is not full
    claimed = {"corpus": {"source": "hf:JihyungL/KoBLEX-statute@main", "size": 233_544, "fingerprint": "f"}}
    assert corpus_of(identity(claimed), RETRIEVED)[0] == "unregistered"
    partial = next(fp for fp, c in KOBLEX.corpus_fingerprints.items() if c.status == "partial")
    registered = {"corpus": {"size": 1, "fingerprint": partial}}
    status, described = corpus_of(identity(registered), RETRIEVED)
    assert status == "partial" and described["size"] == KOBLEX.corpus_fingerprints[partial].size


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
