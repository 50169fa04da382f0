"""`koblex grid koblex` end to end on the shared data: interrupted, resumed, reported beside the released runs."""

import dataclasses
import math
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from koblex_tasks.benchmarks.koblex.methods import KOBLEX_GRID
from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.grid import released
from koblex_tasks.grid.logs import cells_on, log_locations, read_records, sample_table
from koblex_tasks.grid.page import html_page
from koblex_tasks.grid.report import build_report
from koblex_tasks.scorers.metrics import metric_values
from tests.grid.conftest import LIMIT, ResumedGrid, koblex_cli, methods_of

RELEASED_NAME = {
    "standard_prompting": "sp_gpt4o.jsonl",
    "one_time_retrieval": "sp_or_gpt4o.jsonl",
    "parser": "parser_gpt4o.jsonl",
}


def test_interrupted_grid_resumes_only_what_is_missing(resumed_grid: ResumedGrid) -> None:
    g = resumed_grid
    assert g.first.code == 1, g.first.err[-2000:]
    assert "re-run the same command to resume" in g.first.err
    first = g.first_runs
    assert sorted(first.values()) == [
        ("one_time_retrieval", "success"),
        ("parser", "error"),
        ("standard_prompting", "success"),
    ]
    assert g.second.code == 0, g.second.err[-2000:]
    finished = [name for name, (_, status) in first.items() if status == "success"]
    for name in finished:  # finished logs untouched: same bytes, same mtime
        assert g.after[name] == g.before[name]
    created = sorted(set(g.after) - set(g.before))
    assert [methods_of(g.log_dir, created)[c] for c in created] == [("parser", "success")]
    assert set(g.before) - set(g.after) <= {n for n, (_, s) in first.items() if s == "error"}
    assert g.second.out.count("reused: ") == 2
    # the first command reported a line per finished run through Inspect's display
    assert "[2/3" in g.first.out + g.first.err


def report_of(g: ResumedGrid, released_dir: Path):  # type: ignore[no-untyped-def]
    from koblex_tasks.grid.released import ReleasedFiles

    assert KOBLEX_GRID.released is not None
    records = read_records(log_locations(g.log_dir))
    return build_report(
        KOBLEX, KOBLEX_GRID, records, g.log_dir, ReleasedFiles(KOBLEX_GRID.released, released_dir)
    )


def close(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and math.isclose(a, b, abs_tol=1e-12)
    )


def test_report_matches_the_logs(resumed_grid: ResumedGrid, shared_data: Path) -> None:
    report = report_of(resumed_grid, shared_data / "koblex" / "released_gpt4o")
    rows = report.rows
    assert [r.record.method for r in rows] == ["standard_prompting", "one_time_retrieval", "parser"]
    assert [c.key for c in report.columns] == ["provision_f1", "provision_em", "token_f1"]
    for row in rows:
        log = read_eval_log(row.record.path, header_only=True)
        assert log.status == "success" and log.results is not None
        for score in log.results.scores:
            metrics = metric_values(score)
            cell = row.record.cells[score.name]
            mean = metrics["mean"]
            assert close(cell.mean, None if math.isnan(mean) else mean)
            assert cell.n == score.scored_samples
            for name, value in metrics.items():
                if name.startswith("grouped_"):
                    assert close(row.record.strata[score.name][name.removeprefix("grouped_")], value)
        assert row.record.samples == LIMIT
        # the log says which grid cell it is and what the grid passed (the GPT-4o rows' chat format)
        grid = row.record.metadata["grid"]
        assert (grid["method"], grid["family"], grid["task_args"]["chat_format"]) == (
            row.record.method,
            "gpt4o",
            "user",
        )
        assert row.record.task_args["chat_format"] == "user"
    closed_book = rows[0].record.cells["provision_f1"]
    assert closed_book.mean is None and closed_book.n == 0  # unscored, never a zero


def test_released_runs_are_replayed_on_the_same_items_and_tested(
    resumed_grid: ResumedGrid, shared_data: Path
) -> None:
    report = report_of(resumed_grid, shared_data / "koblex" / "released_gpt4o")
    assert report.compared and report.family_size > 0
    for row in report.rows:
        assert row.released is not None and row.released.record is not None, row.released
        assert row.released.file == RELEASED_NAME[str(row.record.method)]
        assert row.released.n == LIMIT  # shown on the user's items
        assert row.released.verdict.startswith(("reproduction consistent", "differs"))
        tested = {t.value.key for t in row.released.tests}
        assert "token_f1" in tested and all(t.comparison.n_shared == LIMIT for t in row.released.tests)
        assert ("provision_f1" in tested) == (row.record.method != "standard_prompting")
        # the replay is a full log; restricted to all of its items it gives the log's own numbers
        table = sample_table(row.released.record.path, KOBLEX)
        full, _ = cells_on(table, table.ids, KOBLEX)
        for key, cell in row.released.record.cells.items():
            if key in full and cell.low is not None:  # (empty_answer reports no interval)
                mine = full[key]
                assert (
                    mine.n,
                    close(mine.mean, cell.mean),
                    close(mine.low, cell.low),
                    close(mine.high, cell.high),
                ) == (
                    cell.n,
                    True,
                    True,
                    True,
                ), key
    # the paper's released ParSeR run: its published provision F1 on all items
    parser = next(r for r in report.rows if r.record.method == "parser")
    assert parser.released is not None and parser.released.record is not None
    assert round(100 * (parser.released.record.cells["provision_f1"].mean or 0), 2) == 59.41
    assert len(list((resumed_grid.log_dir / "released").glob("*.eval"))) == 3


def test_report_command_reuses_replays_and_rewrites_the_same_table(
    resumed_grid: ResumedGrid, shared_data: Path, tmp_path: Path
) -> None:
    g = resumed_grid
    replays = sorted((g.log_dir / "released").glob("*.eval"))
    md = (g.log_dir / "grid-koblex.md").read_text(encoding="utf-8")
    run = koblex_cli(
        "grid",
        "report",
        str(g.log_dir),
        "--released",
        str(shared_data / "koblex" / "released_gpt4o"),
        "--out",
        str(tmp_path),
        "--resamples",
        "2000",
    )
    assert run.code == 0, run.err
    assert sorted((g.log_dir / "released").glob("*.eval")) == replays
    assert (tmp_path / "grid-koblex.md").read_text(encoding="utf-8") == md
    for name in ("Standard prompting", "↳ paper: parser_gpt4o.jsonl", "vs paper (Holm)"):
        assert name in run.out
    html = (tmp_path / "grid-koblex.html").read_text(encoding="utf-8")
    report = report_of(g, shared_data / "koblex" / "released_gpt4o")
    assert html.count('<svg class="fp fp-') == 1 + len(report.strata) >= 2  # provision F1 overall + per hop
    hostile = html_page(dataclasses.replace(report, table="<script>alert(1)</script>"))
    assert "<script>alert" not in hostile and "&lt;script&gt;alert(1)" in hostile  # log text is escaped
    assert "flaky/gpt-4o" in html and "parser_gpt4o.jsonl" in html


def test_report_offline_says_how_to_pass_the_files(
    resumed_grid: ResumedGrid, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import urllib.error

    def offline(url: str, target: Path) -> bool:
        raise urllib.error.URLError("Name or service not known")

    monkeypatch.setattr(released, "_fetch", offline)
    run = koblex_cli("grid", "report", str(resumed_grid.log_dir), "--out", str(tmp_path))
    assert run.code == 0, run.err
    warnings = [line for line in run.err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "--released DIR" in warnings[0]
    assert "released runs unavailable" in (tmp_path / "grid-koblex.md").read_text(encoding="utf-8")


def test_submit_to_a_leaderboard_twice_is_harmless(resumed_grid: ResumedGrid, tmp_path: Path) -> None:
    from koblex_tasks.leaderboard.store import Store

    db = tmp_path / "board.sqlite"
    argv = [
        "grid",
        "report",
        str(resumed_grid.log_dir),
        "--no-released",
        "--out",
        str(tmp_path),
        "--submit",
        str(db),
    ]
    first = koblex_cli(*argv)
    assert first.code == 0, first.err
    assert first.out.count("stored run #") == 3
    with Store(db) as store:
        assert sorted(r.name for r in store.runs()) == [
            "flaky/gpt-4o · one_time_retrieval",
            "flaky/gpt-4o · parser",
            "flaky/gpt-4o · standard_prompting",
        ]
    again = koblex_cli(*argv)
    assert again.code == 0 and again.out.count("already stored") == 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["grid", "koblex", "--model", "koblexmock/m", "--methods", "nope"], "has no method 'nope'"),
        (["grid", "koblex", "--model", "koblexmock/m", "-S", "k=3"], "name the method"),
        (["grid", "report", "/nonexistent-dir"], "not a directory"),
    ],
)
def test_bad_input_is_one_error_line(argv: list[str], message: str) -> None:
    run = koblex_cli(*argv)
    assert run.code == 2
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("koblex grid ") and message in lines[0], run.err


def test_a_task_that_cannot_be_built_stops_the_grid_before_any_model_call(tmp_path: Path) -> None:
    run = koblex_cli(
        "grid", "koblex", "--model", "koblexmock/m", "--methods", "sp", "-T", "data=/nonexistent.jsonl",
        "--log-dir", str(tmp_path / "logs"),
    )  # fmt: skip
    assert run.code != 0  # the task's own refusal, with the CLI's exit code for it
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and "data=/nonexistent.jsonl" in lines[0] and "not found" in lines[0], run.err
    assert not list(tmp_path.glob("logs/*.eval"))


def test_a_bound_judge_reaches_every_run_and_can_judge_the_released_answers(
    shared_data: Path, tmp_path: Path
) -> None:
    data = shared_data / "koblex"
    run = koblex_cli(
        "grid", "koblex", "--model", "koblexmock/gpt-4o,koblexmock/m", "--methods", "standard_prompting",
        "--model-role", "grader=koblexmock/judge", "-T", f"data={data / 'koblex.jsonl'}", "--limit", "2",
        "--log-dir", str(tmp_path), "--display", "none", "--released", str(data / "released_gpt4o"),
        "--judge-released", "koblexmock/judge", "--resamples", "2000",
    )  # fmt: skip
    assert run.code == 0, run.err[-2000:]
    records = [r for r in read_records(log_locations(tmp_path)) if r.replay_file is None]
    assert sorted(r.model for r in records) == ["koblexmock/gpt-4o", "koblexmock/m"]
    assert all(r.cells["lf_eval"].n == 2 and r.judge == "koblexmock/judge" for r in records)
    assert "LF-Eval [95% CI]" in run.out
    assert "koblexmock/m is not a model family of the paper" in run.out  # solver defaults, nothing to compare
    [replay] = read_records(log_locations(tmp_path / "released"))
    assert replay.judge == "koblexmock/judge" and replay.cells["lf_eval"].n == 226
    md = (tmp_path / "grid-koblex.md").read_text(encoding="utf-8")
    assert "| koblexmock/gpt-4o | Standard prompting | LF-Eval | 2 |" in md  # compared under the same judge


def test_dry_run_prints_each_run_and_what_it_passes() -> None:
    run = koblex_cli(
        "grid", "koblex", "--model", "openai/gpt-4o", "--model", "vllm/Qwen/Qwen3-32B", "--methods", "flare,cot_or",
        "-S", "cot_or.k=gold", "--dry-run",
    )  # fmt: skip
    assert run.code == 0, run.err
    assert run.out.splitlines() == [
        "openai/gpt-4o · CoT + one-time retrieval [GPT-4o]: koblex_tasks/one_time_retrieval(cot=True, k='gold') "
        "-T chat_format='user'",
        "openai/gpt-4o · FLARE [GPT-4o]: koblex_tasks/flare(threshold=-0.7) -T chat_format='user'",
        "vllm/Qwen/Qwen3-32B · CoT + one-time retrieval [Qwen3-32B]: koblex_tasks/one_time_retrieval(cot=True, "
        "k='gold')",
        "vllm/Qwen/Qwen3-32B · FLARE [Qwen3-32B]: koblex_tasks/flare(threshold=-0.6)",
    ]


def test_a_bad_generate_config_is_refused_before_anything_runs(tmp_path: Path) -> None:
    config = tmp_path / "generate.yaml"
    config.write_text("temperature: [1]\n", encoding="utf-8")
    run = koblex_cli(
        "grid", "koblex", "--model", "koblexmock/m", "--generate-config", str(config), "--log-dir", str(tmp_path / "l")
    )  # fmt: skip
    assert run.code == 2 and run.err.count("\n") == 1 and "--generate-config" in run.err
    assert not (tmp_path / "l").exists()


@pytest.mark.parametrize("command", [["grid"], ["grid", "koblex"], ["grid", "legit"], ["grid", "report"]])
def test_help(command: list[str]) -> None:
    run = koblex_cli(*command, "--help")
    assert run.code == 0 and run.out.startswith(f"Usage: koblex {' '.join(command)}") and not run.err
