"""Placement from corpus fingerprints only, and `--limit` at the dataset's size as a complete run (issue 32).

A genuine run made through Inspect's own CLI with `--limit 226` on the shared partial corpus (5,423
paragraphs, a registered fingerprint) is stored as complete on the partial-corpus board without
`--allow-subset`. Its header forged to the full pool's size (with or without `status: full`) is refused; with
its corpus record deleted or its fingerprint changed it lands on an "unknown" or "unregistered corpus" board,
never the full-corpus one where the released replays are.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import EvalLog

from koblex_tasks.benchmarks.koblex.spec import FULL_CORPUS_SIZE, KOBLEX
from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.leaderboard.store import Store
from tests.cli.refusal import inspect_eval
from tests.leaderboard.test_submit import Mutate, renamed, submit_rejected, variant

SHARED_FINGERPRINT = "27a7d403fe3c0b7d8ef2fda59cd73d0c7b0239c7a324be525c5e014249898643"


@pytest.fixture(scope="module")
def limit_run(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`inspect eval koblex_tasks/koblex --limit 226` on the shared data, one-time retrieval, koblexmock."""
    work = tmp_path_factory.mktemp("limit")
    koblex = shared_data / "koblex"
    done = inspect_eval(
        "koblex_tasks/koblex",
        "--model",
        "koblexmock/m",
        "--solver",
        "koblex_tasks/one_time_retrieval",
        "-T",
        f"data={koblex / 'koblex.jsonl'}",
        "-T",
        f"corpus={koblex / 'statutes.jsonl'}",
        "-T",
        "reranker=none",
        "--limit",
        "226",
        "--display",
        "none",
        cwd=work,
        env={"HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.lines[-20:]
    [log] = (work / "logs").glob("*.eval")
    return log


def test_the_shared_corpus_is_registered() -> None:
    known = KOBLEX.corpus_fingerprints[SHARED_FINGERPRINT]
    assert (known.status, known.size) == ("partial", 5_423)


def test_limit_at_the_dataset_size_is_a_complete_run(limit_run: Path, tmp_path: Path) -> None:
    db = tmp_path / "board.sqlite"
    assert leaderboard_main(["submit", "--db", str(db), str(limit_run)]) == 0  # no --allow-subset
    with Store(db) as store:
        [run] = store.runs()
    assert not run.subset and "SUBSET" not in run.board_label
    assert run.corpus_status == "partial" and "partial corpus" in run.board_label
    assert run.provenance["corpus"]["fingerprint"] == SHARED_FINGERPRINT


def _corpus(log: EvalLog) -> dict:
    return log.eval.metadata["corpus"]


REFUSED: dict[str, Mutate] = {
    "full-size": lambda log: _corpus(log).update(size=FULL_CORPUS_SIZE),
    "full-size-and-status": lambda log: _corpus(log).update(size=FULL_CORPUS_SIZE, status="full"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_header_claiming_the_full_pool_is_refused(
    limit_run: Path, tmp_path: Path, capsys, case: str
) -> None:
    db = tmp_path / "board.sqlite"
    bad = variant(limit_run, tmp_path / f"{case}.eval", renamed(REFUSED[case], case))
    err = submit_rejected(db, bad, capsys)
    assert "its fingerprint is that of the registered partial corpus of 5,423 provisions" in err


MOVED: dict[str, tuple[Mutate, str, str]] = {
    "record-deleted": (
        lambda log: log.eval.metadata.pop("corpus"),
        "unknown",
        "unknown corpus",
    ),
    "fingerprint-changed": (
        lambda log: _corpus(log).update(fingerprint="f" * 64, size=FULL_CORPUS_SIZE, status="full"),
        "unregistered",
        "unregistered corpus (233,544 provisions, ffffffffffff)",
    ),
}


@pytest.mark.parametrize("case", sorted(MOVED))
def test_a_header_without_a_registered_fingerprint_gets_a_board_of_its_own(
    limit_run: Path, tmp_path: Path, case: str
) -> None:
    mutate, status, label = MOVED[case]
    db = tmp_path / "board.sqlite"
    assert leaderboard_main(["submit", "--db", str(db), str(limit_run)]) == 0
    moved = variant(limit_run, tmp_path / f"{case}.eval", renamed(mutate, case))
    assert leaderboard_main(["submit", "--db", str(db), "--name", case, str(moved)]) == 0
    with Store(db) as store:
        genuine, forged = store.runs()
    assert forged.corpus_status == status and label in forged.board_label
    assert "full corpus" not in forged.board_label and "corpus=full" not in forged.board_key
    assert forged.board_key != genuine.board_key
