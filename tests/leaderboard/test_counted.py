"""Coverage counted, no duplicates or mixed judges, one archive layout, and faults as one line (issue 20,
cases 3-7): each gamed input refused with the store and site unchanged, or placed and marked below genuine runs.
"""

from __future__ import annotations

import dataclasses
import io
import json
import sqlite3
import struct
import zipfile
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog

from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.leaderboard import site as site_module
from koblex_tasks.leaderboard.board import UNSCORED_LIMIT, Settings, compute_all, compute_board
from koblex_tasks.leaderboard.site import render_csv, render_html, render_markdown, write_site
from koblex_tasks.logs.archive import ArchiveRefused, ReadLimits, check_archive
from tests.leaderboard import test_evidence, test_submit
from tests.leaderboard.fakes import FakeStore
from tests.leaderboard.test_submit import counts, renamed, submit_rejected, variant

one_run_template = test_submit.one_run_template
one_run_db = test_submit.one_run_db
retrieving_log = test_evidence.retrieving_log
KEY = "koblex | lang=ko | dataset=" + "ab" * 32 + " | corpus=full | official scoring=True"
ITEMS = {f"q{i:02d}": str(1 + i % 3) for i in range(30)}
SETTINGS = Settings(n_resamples=200)


# ------------------------------------------------------------------------- 4. coverage is part of the score


def gamed_store() -> FakeStore:
    """An honest run (0.3 on every item) and one that left all but its three best items unscored."""
    honest = {"provision_f1": dict.fromkeys(ITEMS, 0.3), "token_f1": dict.fromkeys(ITEMS, 0.3)}
    selective = {
        "provision_f1": {sid: (1.0 if k < 3 else None) for k, sid in enumerate(ITEMS)},
        "token_f1": dict.fromkeys(ITEMS, 0.3),
    }
    return FakeStore("koblex", ITEMS, [honest, selective], board_key=KEY, names=["honest", "selective"])


def test_unscored_items_count_as_the_floor() -> None:
    board = compute_board(gamed_store(), KEY, SETTINGS)  # type: ignore[arg-type]
    column = board.column("provision_f1")
    honest, selective = column.rows[1], column.rows[2]
    assert selective.mean == pytest.approx(3 / 30) and selective.scored_mean == 1.0
    assert selective.unscored_rate == pytest.approx(0.9) and selective.over_unscored_limit
    assert honest.mean == pytest.approx(0.3) and not honest.over_unscored_limit
    assert [r.name for r in board.ranked_runs()] == ["honest", "selective"]
    assert UNSCORED_LIMIT < 0.9


def test_unscored_rate_and_scored_mean_on_every_output() -> None:
    site = compute_all(gamed_store(), SETTINGS)  # type: ignore[arg-type]
    md = render_markdown(site)
    assert "10.00 [" in md and "(unscored 90.0%, scored-only 100.00 ⚠)" in md
    assert "An unscored item counts as the metric's floor (0)" in md
    rows = [r for r in render_csv(site).splitlines()[1:] if ",selective,toy/m1,provision_f1,all," in r]
    header = render_csv(site).splitlines()[0].split(",")
    values = dict(zip(header, rows[0].split(","), strict=True))
    assert values["scored_only_mean"] == "1.0" and values["over_unscored_limit"] == "True"
    row = site.to_dict()["boards"][0]["metrics"][0]["rows"]["2"]
    assert row["scored_mean"] == 1.0 and row["over_unscored_limit"] is True
    assert "⚠ unscored 90.0%, scored-only 100.00" in render_html(site)


# -------------------------------------------------------------------------------- 5. duplicates, judges


def test_a_copy_with_a_newline_or_repeated_epochs_is_a_duplicate(
    retrieving_log: str, tmp_path: Path, capsys
) -> None:
    db = tmp_path / "board.sqlite"
    assert leaderboard_main(["submit", "--db", str(db), retrieving_log]) == 0

    def newline(log: EvalLog) -> None:
        s = log.samples[0]
        s.output.completion = s.output.choices[0].message.content = s.output.completion + "\n"

    def epochs(log: EvalLog) -> None:
        copies = [
            s.model_copy(update={"epoch": epoch}, deep=True)
            for epoch in range(2, 11)
            for s in log.samples or []
        ]
        log.samples = [*(log.samples or []), *copies]
        log.eval.config.epochs = 10

    for name, mutate in (("newline", newline), ("epochs", epochs)):
        bad = variant(Path(retrieving_log), tmp_path / f"{name}.eval", renamed(mutate, name))
        err = submit_rejected(db, bad, capsys, "--name", f"copy {name}")
        assert "duplicate of stored run #1" in err and "rejected:\n  - duplicate" in err, name


def test_each_judge_gets_its_own_column() -> None:
    values = {"lf_eval": {sid: 50.0 + k for k, sid in enumerate(ITEMS)}}
    store = FakeStore("koblex", ITEMS, [values, values, values], board_key=KEY)
    judges = ["openai/gpt-4o", "openai/gpt-4o", "mockllm/model"]
    store._runs = [
        dataclasses.replace(
            run,
            provenance={
                "judges": {"lf_eval": {"models": {j: 30}, "prompts": {"koblex/lf_eval@v2.en sha256:x": 30}}}
            },
        )
        for run, j in zip(store._runs, judges, strict=True)
    ]
    board = compute_board(store, KEY, SETTINGS)  # type: ignore[arg-type]
    lf = [m for m in board.metrics if m.metric.startswith("lf_eval")]
    assert len(lf) == 2
    for column in lf:
        [model] = column.judge.models
        graded = {rid for rid, row in column.rows.items() if row.mean is not None}
        assert graded == {r.run_id for r, j in zip(store._runs, judges, strict=True) if j == model}
        assert all(
            r.reason == "graded by another judge" for rid, r in column.rows.items() if rid not in graded
        )


# ---------------------------------------------------------------------------------- 6. one archive layout


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _refused(data: bytes) -> str:
    with pytest.raises(ArchiveRefused) as info:
        check_archive(io.BytesIO(data), ReadLimits())
    return str(info.value)


def test_archive_layouts_that_two_readers_would_read_differently() -> None:
    b = _zip({"header.json": b"{}", "samples/q1.json": b'{"id": "q1"}'})
    check_archive(io.BytesIO(b), ReadLimits())  # the plain archive passes
    assert "100 bytes before the archive" in _refused(b"x" * 100 + b)
    a = _zip({"header.json": b'{"model": "only in A"}'})
    assert "bytes before the archive" in _refused(a + b)  # two archives in one file
    cd = b.rindex(b"PK\x01\x02")  # the second member's directory entry: point it at the first member
    overlapping = b[: cd + 42] + struct.pack("<I", 0) + b[cd + 46 :]
    assert "out of order or twice at one offset" in _refused(overlapping)
    first = b.index(b"header.json")  # the first local header's name, changed in place
    renamed_local = b[:first] + b"HEADER.json" + b[first + len("header.json") :]
    assert "does not name 'header.json'" in _refused(renamed_local)


def test_a_prepended_log_is_refused_before_reading(
    one_run_db: Path, replay_logs, tmp_path: Path, capsys
) -> None:
    bad = tmp_path / "prepended.eval"
    bad.write_bytes(b"PK" + b"\0" * 510 + replay_logs["ircot_gpt4o"].read_bytes())
    assert "512 bytes before the archive" in submit_rejected(one_run_db, bad, capsys)


# --------------------------------------------------------------------------------------------- 7. faults


@pytest.mark.parametrize("name", ["1", "#2", "٣", "replay/gpt-4o\u200b · parser", "tab\there"])
def test_names_like_ids_or_invisible_are_refused(one_run_db: Path, replay_logs, capsys, name: str) -> None:
    before = counts(one_run_db)
    code = leaderboard_main(["submit", "--db", str(one_run_db), "--name", name, str(replay_logs["sp_gpt4o"])])
    assert code == 2 and counts(one_run_db) == before
    err = capsys.readouterr().err
    assert "reads as a run id" in err or "invisible" in err or "control" in err


def test_a_model_with_an_invisible_character_is_refused(
    one_run_db: Path, replay_logs, tmp_path: Path, capsys
):
    def hidden(log: EvalLog) -> None:
        log.eval.model = "replay/gpt-4o\u200b"

    bad = variant(replay_logs["sp_gpt4o"], tmp_path / "zw.eval", renamed(hidden, "zw"))
    assert "the model id holds invisible characters (U+200B)" in submit_rejected(one_run_db, bad, capsys)


def test_audit_alpha_outside_its_range(one_run_db: Path, tmp_path: Path, capsys) -> None:
    report = {
        "comparisons": [
            {
                "labeller_a": "judge openai/gpt-4o (run)",
                "labeller_b": "group 1",
                "binary": [{"label": "pooled", "alpha": {"value": 7.5}}],
            }
        ]
    }
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert leaderboard_main(["audit-attach", "--db", str(one_run_db), str(path)]) == 2
    assert "not an agreement coefficient in [-1, 1]" in capsys.readouterr().err


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_database_faults_are_one_line(one_run_db: Path, tmp_path: Path, capsys) -> None:
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database" * 100)
    truncated = tmp_path / "truncated.sqlite"
    truncated.write_bytes(one_run_db.read_bytes()[:8192])
    newer = tmp_path / "newer.sqlite"
    newer.write_bytes(one_run_db.read_bytes())
    with sqlite3.connect(newer) as conn:
        conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    for db in (garbage, truncated, newer):
        assert leaderboard_main(["list", "--db", str(db)]) == 2, db
        _one_line(capsys)
    code = leaderboard_main(["submit", "--db", str(one_run_db), "--max-member-mib", "inf", "x.eval"])
    assert code == 2 and "finite" in _one_line(capsys)


def test_site_is_swapped_in_whole(one_run_db: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "site"
    assert leaderboard_main(["build", "--db", str(one_run_db), "--out", str(out), "--resamples", "200"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(*args):  # a failure after some files were rendered
        raise RuntimeError("disk full")

    monkeypatch.setattr(site_module, "render_html", broken)
    with pytest.raises(RuntimeError):
        write_site(compute_all(test_submit.Store(one_run_db), SETTINGS), out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no staging folder left, nothing new
    assert leaderboard_main(["build", "--db", str(one_run_db), "--out", ""]) == 2
    assert "--out" in capsys.readouterr().err
