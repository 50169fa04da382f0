"""`koblex grid legit`: generators x judge, with a scripted judge on the shared LEGIT sample."""

from pathlib import Path

from inspect_ai.log import read_eval_log

from koblex_tasks.benchmarks.legit.methods import LEGIT_GRID
from koblex_tasks.benchmarks.legit.spec import LEGIT
from koblex_tasks.grid.logs import log_locations, read_records
from koblex_tasks.grid.report import build_report
from koblex_tasks.scorers.metrics import metric_values
from tests.grid.conftest import koblex_cli


def test_legit_grid_runs_each_generator_with_the_judge(legit_shared: Path, tmp_path: Path) -> None:
    log_dir = tmp_path / "legit"
    common = [
        "-T",
        f"data={legit_shared / 'legit_test_sample.jsonl'}",
        "--limit",
        "3",
        "--log-dir",
        str(log_dir),
    ]
    run = koblex_cli(
        "grid",
        "legit",
        "--model",
        "koblexmock/gen-a,koblexmock/gen-b",
        "--model-role",
        "grader=koblexmock/judge",
        "--display",
        "none",
        *common,
    )
    assert run.code == 0, run.err[-2000:]
    records = read_records(log_locations(log_dir))
    assert sorted((r.model, r.method) for r in records) == [
        ("koblexmock/gen-a", "predict"),
        ("koblexmock/gen-b", "predict"),
    ]
    for record in records:
        log = read_eval_log(record.path, header_only=True)
        assert str(log.eval.model_roles["grader"].model) == "koblexmock/judge"
        assert log.results is not None
        score = next(s for s in log.results.scores if s.name == "legit_score")
        assert record.cells["legit_score"].mean == metric_values(score)["mean"]
        assert (
            record.strata["legit_score"]["difficulty_mean"] == metric_values(score)["grouped_difficulty_mean"]
        )
    report = build_report(LEGIT, LEGIT_GRID, records, log_dir)
    assert not report.compared and [s.model for s in report.sections] == [
        "koblexmock/gen-a",
        "koblexmock/gen-b",
    ]
    md = (log_dir / "grid-legit.md").read_text(encoding="utf-8")
    header = next(line for line in md.splitlines() if line.startswith("| Method"))
    assert "| LEGIT score easy |" in header and "| LEGIT score difficulty_mean |" in header
    assert "vs paper" not in md and "vs paper" not in run.out
    assert (log_dir / "grid-legit.html").is_file()


def test_legit_grid_refuses_to_run_without_a_judge(legit_shared: Path, tmp_path: Path) -> None:
    run = koblex_cli("grid", "legit", "--model", "koblexmock/gen", "--log-dir", str(tmp_path / "none"))
    assert run.code == 2
    assert "can only be scored by a judge: pass --model-role grader=<model>" in run.err
    assert not (tmp_path / "none").exists()  # refused before any task was built or any model called
