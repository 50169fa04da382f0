"""Store, validation and the submit/compare/list CLI, on real replayed logs and hostile variants of them."""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.leaderboard.board import Settings, compare_runs, compute_board
from koblex_tasks.leaderboard.store import ENV_DB, Store, default_db_path
from koblex_tasks.leaderboard.submission import SubmissionRejected, load_submission

_READ: dict[Path, EvalLog] = {}


def variant(src: Path, dst: Path, mutate: Callable[[EvalLog], None]) -> Path:
    """A mutated copy of a real log (the source is read once per session)."""
    if src not in _READ:
        _READ[src] = read_eval_log(str(src))
    log = _READ[src].model_copy(deep=True)
    mutate(log)
    write_eval_log(log, str(dst))
    return dst


Mutate = Callable[[EvalLog], None]


def renamed(mutate: Mutate, eval_id: str) -> Mutate:
    """`mutate`, then a new eval id (so a variant is never a duplicate of the stored original by id)."""

    def both(log: EvalLog) -> None:
        mutate(log)
        log.eval.eval_id = eval_id

    return both


def counts(db: Path) -> dict[str, int]:
    with Store(db) as store:
        return store.counts()


@pytest.fixture(scope="module")
def one_run_template(replay_logs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("one") / "one.sqlite"
    assert leaderboard_main(["submit", "--db", str(db), str(replay_logs["parser_gpt4o"])]) == 0
    return db  # closed by the CLI: the WAL is checkpointed, the file is complete


@pytest.fixture
def one_run_db(one_run_template: Path, tmp_path: Path) -> Path:
    """A fresh database holding the ParSeR replay as run #1."""
    db = tmp_path / "one.sqlite"
    shutil.copyfile(one_run_template, db)
    return db


def submit_rejected(db: Path, log: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    before = counts(db)
    assert leaderboard_main(["submit", "--db", str(db), *extra, str(log)]) == 1
    assert counts(db) == before, "a rejected submission must store nothing"
    return capsys.readouterr().err


# ------------------------------------------------------------------------------------- seeded board


def test_seeded_store_rows(seeded_db: Path) -> None:
    c = counts(seeded_db)
    assert c["runs"] == 10
    assert c["items"] == 10 * 226
    # provision P/R/F1/EM + token_f1 + empty_answer + the retrieval funnel's four (task version 1.2.0)
    assert c["scores"] == 10 * 226 * 10
    with sqlite3.connect(seeded_db) as conn:
        nulls = conn.execute(
            "SELECT r.name, COUNT(*) FROM scores s JOIN runs r USING (run_id) "
            "WHERE s.metric = 'provision_f1' AND s.value IS NULL GROUP BY r.name"
        ).fetchall()
        boards = conn.execute("SELECT DISTINCT board_label FROM runs").fetchall()
    # closed-book methods are unscored on provisions (NULL), never zero
    assert sorted(nulls) == [
        ("replay/gpt-4o · chain_of_thought", 226),
        ("replay/gpt-4o · standard_prompting", 226),
    ]
    assert boards == [("koblex · ko · full corpus · official scoring=True",)]


def test_seeded_board_reproduces_paper(seeded_db: Path) -> None:
    with Store(seeded_db) as store:
        [run] = [r for r in store.runs() if r.name.endswith("parser")]
        board = compute_board(store, run.board_key, Settings(n_resamples=1000))
        assert run.provenance["replay"]["method"] == "parser"
        assert run.provenance["retrieval"] is None  # replays carry no retrieval of ours
        assert run.provenance["corpus"]["size"] == 233_544
    means = {m.metric: m.rows[run.run_id] for m in board.metrics}
    assert means["provision_f1"].mean == pytest.approx(0.5941, abs=5e-5)
    assert means["provision_em"].mean == pytest.approx(0.2699, abs=5e-5)
    assert means["token_f1"].mean == pytest.approx(0.4614, abs=5e-5)
    for m in ("provision_f1", "provision_em", "token_f1"):
        row = means[m]
        assert row.low < row.mean < row.high
        assert row.best and row.letters.startswith("a")
    em = next(m for m in board.metrics if m.metric == "provision_em")
    assert em.kind == "binary" and all(c.test.startswith("mcnemar") for c in em.comparisons if c.test)
    f1 = next(m for m in board.metrics if m.metric == "provision_f1")
    assert [s.stratum for s in f1.strata] == ["1", "2", "3"]
    assert [s.n_items for s in f1.strata] == [55, 125, 46]
    json.dumps(board.to_dict(), allow_nan=False)


def test_paper_comparisons_significant_after_holm(seeded_db: Path) -> None:
    with Store(seeded_db) as store:
        runs = store.runs()
        parser = next(r for r in runs if r.name.endswith("parser"))
        result = compare_runs(
            store,
            [(parser, r) for r in runs if r is not parser],
            ["provision_f1", "provision_em", "token_f1"],
            Settings(n_resamples=2000),
        ).to_dict()
    tested = [c for c in result["comparisons"] if c["p_value"] is not None]
    assert result["family_size"] == len(tested) == 9 * 3 - 4  # SP and CoT have no provisions
    assert all(c["significant"] and c["difference"] > 0 for c in tested)


def test_compare_cli(seeded_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        leaderboard_main(["compare", "--db", str(seeded_db), "parser", "probtree", "--resamples", "500"]) == 0
    )
    out = capsys.readouterr().out
    assert "Holm over 3 comparisons" in out and "McNemar" in out and "sign-flip" in out
    assert leaderboard_main(["compare", "--db", str(seeded_db), "parser", "--all", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["family_size"] == 23
    assert leaderboard_main(["compare", "--db", str(seeded_db), "gpt-4o", "parser"]) == 2
    assert "matches 10 runs" in capsys.readouterr().err
    assert leaderboard_main(["list", "--db", str(seeded_db)]) == 0
    assert "#10" in capsys.readouterr().out


# ------------------------------------------------------------------------------------- hostile inputs


def test_truncated_log(one_run_db: Path, replay_logs: dict[str, Path], tmp_path: Path, capsys) -> None:
    data = replay_logs["ircot_gpt4o"].read_bytes()
    bad = tmp_path / "truncated.eval"
    bad.write_bytes(data[: len(data) // 2])
    assert "truncated or corrupt" in submit_rejected(one_run_db, bad, capsys)
    garbage = tmp_path / "garbage.json"
    garbage.write_text('{"version": 2, "status": "succ', encoding="utf-8")
    assert "not a readable Inspect eval log" in submit_rejected(one_run_db, garbage, capsys)


def test_other_task(one_run_db: Path, replay_logs: dict[str, Path], tmp_path: Path, capsys) -> None:
    def other(log: EvalLog) -> None:
        log.eval.task = log.eval.task_registry_name = "inspect_evals/gsm8k"

    bad = variant(replay_logs["ircot_gpt4o"], tmp_path / "other.eval", other)
    assert "'inspect_evals/gsm8k' is not a leaderboard task" in submit_rejected(one_run_db, bad, capsys)


def test_duplicates(one_run_db: Path, replay_logs: dict[str, Path], tmp_path: Path, capsys) -> None:
    err = submit_rejected(one_run_db, replay_logs["parser_gpt4o"], capsys)
    assert "duplicate of stored run #1" in err and "same eval id" in err

    def new_id(log: EvalLog) -> None:
        log.eval.eval_id = "re-run-of-the-same-outputs"

    again = variant(replay_logs["parser_gpt4o"], tmp_path / "again.eval", new_id)
    assert "identical per-sample outputs and scores" in submit_rejected(one_run_db, again, capsys)


def test_missing_samples(one_run_db: Path, replay_logs: dict[str, Path], tmp_path: Path, capsys) -> None:
    def limit(log: EvalLog) -> None:
        log.samples = log.samples[:5]
        log.eval.config.limit = 5
        log.eval.dataset.sample_ids = [s.id for s in log.samples]
        log.eval.dataset.samples = 5

    limited = variant(replay_logs["ircot_gpt4o"], tmp_path / "limit.eval", limit)
    err = submit_rejected(one_run_db, limited, capsys)
    assert "subset of the dataset (--limit 5)" in err and "--allow-subset" in err

    def drop(log: EvalLog) -> None:
        log.samples = log.samples[:-3]

    dropped = variant(replay_logs["ircot_gpt4o"], tmp_path / "dropped.eval", drop)
    assert "3 sample ids of the eval are missing from the log" in submit_rejected(one_run_db, dropped, capsys)

    # explicitly allowed: stored, but on its own subset board
    assert leaderboard_main(["submit", "--db", str(one_run_db), "--allow-subset", str(limited)]) == 0
    with Store(one_run_db) as store:
        boards = {r.board_label for r in store.runs()}
    assert len(boards) == 2 and any("SUBSET 5/226 (--limit 5)" in b for b in boards)


def test_failed_and_malformed_logs(
    one_run_db: Path, replay_logs: dict[str, Path], tmp_path: Path, capsys
) -> None:
    def failed(log: EvalLog) -> None:
        log.status = "error"

    bad = variant(replay_logs["ircot_gpt4o"], tmp_path / "failed.eval", failed)
    assert "did not finish successfully: status 'error'" in submit_rejected(one_run_db, bad, capsys)

    def unknown_scorer(log: EvalLog) -> None:
        log.eval.scorers[0].name = "mystery"
        log.eval.task_version = "9.9.9"

    bad = variant(replay_logs["ircot_gpt4o"], tmp_path / "scorer.eval", unknown_scorer)
    err = submit_rejected(one_run_db, bad, capsys)
    assert "unknown scorer(s) ['mystery']" in err and "unknown task version '9.9.9'" in err

    def duplicated_sample(log: EvalLog) -> None:
        log.samples = [*log.samples, log.samples[0]]

    # JSON format: an .eval zip cannot hold two files of the same (id, epoch)
    bad = variant(replay_logs["ircot_gpt4o"], tmp_path / "dup.json", duplicated_sample)
    assert "appear more than once" in submit_rejected(one_run_db, bad, capsys)


def test_crash_mid_transaction_stores_nothing(one_run_db: Path, replay_logs: dict[str, Path]) -> None:
    sub = load_submission(replay_logs["ircot_gpt4o"])
    sub.scores.append(sub.scores[0])  # the last insert hits a primary-key violation
    before = counts(one_run_db)
    with Store(one_run_db) as store, pytest.raises(sqlite3.IntegrityError):
        store.add(sub)
    assert counts(one_run_db) == before


def test_nan_scores_stored_as_null(replay_logs: dict[str, Path], tmp_path: Path) -> None:
    sub = load_submission(replay_logs["sp_gpt4o"])
    values = {m: v for _, _, m, v in sub.scores if m.startswith("provision")}
    assert values and all(v is None for v in values.values())
    assert all(v is None or not math.isnan(v) for *_, v in sub.scores)


def test_name_clash_and_rejection_object(one_run_db: Path, replay_logs: dict[str, Path]) -> None:
    sub = load_submission(replay_logs["ircot_gpt4o"], name="replay/gpt-4o · parser")
    with Store(one_run_db) as store, pytest.raises(SubmissionRejected, match="already named"):
        store.add(sub)


def test_default_db_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV_DB, str(tmp_path / "env.sqlite"))
    assert default_db_path() == tmp_path / "env.sqlite"
    monkeypatch.delenv(ENV_DB)
    assert default_db_path().name == "leaderboard.sqlite" and "koblex-tasks" in str(default_db_path())


# ------------------------------------------------------------------------------------- judge audits


def _audit_report(judge: str, alpha: float) -> dict:
    def agreement(a: str, b: str, value: float) -> dict:
        return {
            "labeller_a": a,
            "labeller_b": b,
            "shared": 40,
            "binary": [{"label": "pooled", "alpha": {"value": value, "reason": None}}],
            "scores": [{"label": "issue score", "alpha": {"value": value - 0.1, "reason": None}}],
        }

    return {
        "labels": "labels.csv",
        "comparisons": [
            agreement("group A", "group B", 0.9),  # lawyer vs lawyer: not a judge audit
            agreement("group A", f"judge {judge} (run.eval)", alpha),
            agreement("group B", f"judge {judge} (run.eval)", alpha + 0.1),
        ],
    }


def test_audit_attach(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "audit.sqlite"
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(_audit_report("openai/gpt-4.1", 0.6)), encoding="utf-8")
    assert leaderboard_main(["audit-attach", "--db", str(db), str(path)]) == 0
    assert "alpha vs lawyers 0.650" in capsys.readouterr().out
    with Store(db) as store:
        summary = store.audits()["openai/gpt-4.1"]["summary"]
    assert summary["alpha"] == pytest.approx(0.65) and summary["issue_score_alpha"] == pytest.approx(0.55)
    assert [v["against"] for v in summary["vs"]] == ["group A", "group B"]
    path.write_text(json.dumps({"comparisons": [{"labeller_a": "group A", "labeller_b": "group B"}]}))
    assert leaderboard_main(["audit-attach", "--db", str(db), str(path)]) == 2
    assert "compares no judge with lawyers" in capsys.readouterr().err
    path.write_text("{not json")
    assert leaderboard_main(["audit-attach", "--db", str(db), str(path)]) == 2
    assert counts(db)["judge_audits"] == 1
