"""`legit_verdicts` only grades through a task built for replayed verdicts: no mixing with a live judge."""

from pathlib import Path

import pytest

from koblex_tasks.solvers.legit.verdicts import legit_verdicts
from koblex_tasks.tasks.legit.task import legit
from tests.legit_helpers import ScriptedJudge, eval_one

EASY = "부산지방법원-2017구합23"


@pytest.fixture
def released(legit_shared: Path) -> Path:
    return legit_shared / "released_verdicts" / "reasoning_tasks_gpt-4.1_evaluator_gemini-2.0-flash-001.jsonl"


def test_verdicts_in_a_judged_task_are_refused(released, sample_file, sample_records, tmp_path) -> None:
    judge = ScriptedJudge(sample_records, {})
    log = eval_one(
        legit(data=str(sample_file), doc_ids=EASY),
        tmp_path,
        "replay/gpt-4.1",
        judge.model(),
        solver=legit_verdicts(file=str(released)),
    )
    assert (
        log.status == "error" and "carries released verdicts but the task calls a judge" in log.error.message
    )
    assert judge.total_calls == 0


def test_a_grader_bound_over_replayed_verdicts_is_refused(
    released, sample_file, sample_records, tmp_path
) -> None:
    """Built outside the eval, the task cannot see the eval's roles; its setup step refuses instead, so the
    log never names a judge that did not grade."""
    judge = ScriptedJudge(sample_records, {})
    log = eval_one(
        legit(data=str(sample_file), verdicts=str(released)), tmp_path, "replay/gpt-4.1", judge.model()
    )
    assert (
        log.status == "error"
        and "grades with the verdicts of replay/gemini-2.0-flash-001" in log.error.message
    )


def test_missing_row_names_the_document(released, sample_file, tmp_path) -> None:
    lines = [line for line in released.read_text(encoding="utf-8").splitlines() if line.strip()]
    fewer = tmp_path / "reasoning_tasks_gpt-4.1_evaluator_gemini-2.0-flash-001.jsonl"
    fewer.write_text("".join(f"{line}\n" for line in lines if EASY not in line), encoding="utf-8")
    task = legit(data=str(sample_file), verdicts=str(released))  # keeps the 6 documents of the full file
    log = eval_one(task, tmp_path, "replay/gpt-4.1", solver=legit_verdicts(file=str(fewer)))
    assert log.status == "error"
    assert f"no verdict row for doc {EASY!r} (use the task option verdicts=FILE" in log.error.message
