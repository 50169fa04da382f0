"""The event rules (issue 32): a rank is earned by what happened in the run, for any solver.

Each test makes its own log (the official questions and the shared corpus, three items, the scripted
`koblexmock` model) with a plug-in solver from `event_solvers.py`, then submits it through the real CLI. A
solver that answers without the model, puts the reference answer or an unretrieved gold provision into the
model's prompt, or predicts provisions no recorded retrieval returned is refused with the first offending
sample and the rule; one that retrieves through the package's retriever and answers from the model is stored.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.solver import Solver, SolverSpec

from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.corpus.events import RETRIEVAL_EVENT
from koblex_tasks.corpus.rerank import STUB_OVERLAP
from koblex_tasks.tasks.koblex import BENCHMARK as koblex_benchmark_wired
from koblex_tasks.tasks.koblex.task import koblex
from tests.leaderboard import event_solvers
from tests.leaderboard.test_submit import counts

LIMIT = 3


@pytest.fixture(scope="module")
def paths(shared_data: Path) -> dict[str, str]:
    koblex_dir = shared_data / "koblex"
    return {"data": str(koblex_dir / "koblex.jsonl"), "corpus": str(koblex_dir / "statutes.jsonl")}


def run(paths: dict[str, str], solver: Solver, log_dir: Path) -> Path:
    task = koblex(data=paths["data"], corpus=paths["corpus"], reranker="none")
    [log] = inspect_eval(
        task, model="koblexmock/m", solver=solver, limit=LIMIT, log_dir=str(log_dir), display="none"
    )
    assert log.status == "success", log.error
    return Path(log.location)


def submitted(log: Path, db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    before = counts(db) if db.exists() else None
    code = leaderboard_main(["submit", "--db", str(db), "--allow-subset", str(log)])
    err = capsys.readouterr().err
    if code != 0 and before is not None:
        assert counts(db) == before, "a refused run must store nothing"
    return code, err


def reason(err: str) -> str:
    """The refusal's one reason line."""
    lines = [line for line in err.splitlines() if line.strip().startswith("- ")]
    assert len(lines) == 1, err
    return lines[0]


def test_a_plug_in_solver_that_retrieves_and_asks_the_model_is_accepted(
    paths: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = run(paths, event_solvers.earned(), tmp_path / "logs")
    samples = read_eval_log(str(log)).samples or []
    recorded = [e for s in samples for e in s.events if e.event == "info" and e.source == RETRIEVAL_EVENT]
    assert len(recorded) == LIMIT  # one retrieval per sample, recorded by the retriever, not the solver
    assert all(len(e.data["returned"]) == 3 and e.data["query"] for e in recorded)
    code, err = submitted(log, tmp_path / "db.sqlite", capsys)
    assert code == 0, err


def refusal(log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Submit `log`, expect a refusal (exit 1, nothing stored) and return its one reason."""
    code, err = submitted(log, tmp_path / "db.sqlite", capsys)
    assert code == 1, err
    return reason(err)


NO_RETRIEVAL = "was not returned by any retrieval the package's retriever recorded"
GOLD_TEXT = "breaks the event rule reference: a model input contains a gold provision's text"
# solver (its arguments: the data file or none) -> what its refusal says
PEEKERS = {
    # the peeker: "Answer: <target>" with no model call, gold provisions as evidence
    "peek_without_model": (True, ["sample 'qa_19_1hop_28' (epoch 1) breaks the event rule answer:",
                                  "is not in the output of any call to the evaluated model koblexmock/m"]),
    "target_in_prompt": (False, ["breaks the event rule reference: a model input contains the reference answer"]),
    "gold_in_prompt": (True, [GOLD_TEXT]),  # the gold read from the `-T data=` file
    "gc_gold_in_prompt": (False, [GOLD_TEXT]),  # the gold of the task's GoldBook, found through `gc`
    "forged_evidence": (True, ["breaks the event rule provisions: predicted provision", NO_RETRIEVAL]),
    "unrecorded_search": (False, ["breaks the event rule provisions: predicted provision", NO_RETRIEVAL]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(PEEKERS))
def test_a_solver_that_peeks_is_refused_with_the_first_sample_and_the_rule(
    name: str, paths: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    takes_data, says = PEEKERS[name]
    peek = getattr(event_solvers, name)(*([paths["data"]] if takes_data else []))
    line = refusal(run(paths, peek, tmp_path / "logs"), tmp_path, capsys)
    assert all(part in line for part in says), line


def test_a_log_of_an_older_task_version_without_retrieval_events_is_told_to_re_run(
    paths: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The genuine run, its retrieval events dropped and its version set back to 1.2.0 (what older logs are)."""
    log = read_eval_log(str(run(paths, event_solvers.earned(), tmp_path / "logs")))
    log.eval.task_version = "1.2.0"
    for sample in log.samples or []:
        sample.events = [e for e in sample.events if not (e.event == "info" and e.source == RETRIEVAL_EVENT)]
    old = tmp_path / "old.eval"
    write_eval_log(log, str(old))
    assert "did not record retrievals: re-run with task version >= 1.3.0" in refusal(old, tmp_path, capsys)


def test_build_stops_at_a_stored_run_without_a_record_of_the_rules(
    paths: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run stored before the event rules (or an edited row) is named by `build`, exit 2, no site written."""
    db = tmp_path / "db.sqlite"
    code, err = submitted(run(paths, event_solvers.earned(), tmp_path / "logs"), db, capsys)
    assert code == 0, err
    assert (
        leaderboard_main(["build", "--db", str(db), "--out", str(tmp_path / "site"), "--resamples", "200"])
        == 0
    )
    capsys.readouterr()
    with sqlite3.connect(db) as con:
        [(text,)] = con.execute("SELECT provenance FROM runs").fetchall()
        provenance = json.loads(text)
        del provenance["verification"]["events"]
        con.execute("UPDATE runs SET provenance = ?", (json.dumps(provenance),))
    out = tmp_path / "site2"
    assert leaderboard_main(["build", "--db", str(db), "--out", str(out), "--resamples", "200"]) == 2
    err = capsys.readouterr().err
    assert "run #1" in err and "has no record of passing the event rules" in err
    assert not (out / "index.html").exists()


GENUINE = [name for name in koblex_benchmark_wired.solver_names if name != "koblex_tasks/replay"]


@pytest.mark.parametrize("solver", GENUINE)
def test_every_solver_of_the_package_passes_the_rules(
    solver: str, paths: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each of the nine KoBLEX solvers (its own defaults; a stand-in reranker so ParSeR reranks) is accepted, and
    each of its retrievals is recorded: ParSeR's with the reranker's top l, the others' first stages."""
    task = koblex(data=paths["data"], corpus=paths["corpus"], reranker=STUB_OVERLAP)
    [log] = inspect_eval(
        task,
        model="koblexmock/m",
        solver=SolverSpec(solver),
        limit=LIMIT,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    code, err = submitted(Path(log.location), tmp_path / "db.sqlite", capsys)
    assert code == 0, err
    samples = read_eval_log(log.location, resolve_attachments=True).samples or []  # long keys: attachments
    events = [e.data for s in samples for e in s.events if e.event == "info" and e.source == RETRIEVAL_EVENT]
    predicted = {k for s in samples for k in (s.store or {}).get("ProvisionEvidence:predicted") or []}
    assert predicted <= {k for e in events for k in e["returned"]}
    if solver == "koblex_tasks/parser":
        assert events and all(e["reranker"] == STUB_OVERLAP and len(e["returned"]) <= 10 for e in events)
        assert all(len(e["first_stage"]) == 100 and e["rerank_query"] for e in events)
