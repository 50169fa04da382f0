"""`koblex grid … --judge-released` under a judge variant (issue 33): the released answers are judged under the
same variant as the user's runs, so the paired LF-Eval test compares like with like; the replay log records its
variant; `koblex report lf-eval-sensitivity` reads those replay logs.

Six tiny questions; the user's model (`koblexmock/gpt-4o`, the GPT-4o family) answers without a marker, the
released file (`sp_gpt4o.jsonl`) with ALPHA; the scripted judge of the sensitivity test grades by the marker and
by whether its Context holds provisions (hand-computed means below).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import modelapi
from inspect_ai.model._providers.mockllm import MockLLM

from koblex_tasks.benchmarks.koblex.methods import KOBLEX_GRID
from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.grid.compare import Replays
from koblex_tasks.grid.logs import RunRecord, log_locations, read_records
from koblex_tasks.grid.report import Released, Row, against_baseline, compared_values
from koblex_tasks.tasks.benchmark import Replayed, ReplayRequest
from koblex_tasks.tasks.koblex.replay import run_replay
from tests.conftest import TINY_STATUTES, write_jsonl
from tests.grid.conftest import koblex_cli
from tests.grid.test_lf_eval_sensitivity_report import QUESTIONS, judge, questions

JUDGE = "contextjudge/j"


@modelapi(name="contextjudge")
class ContextJudge(MockLLM):  # the sensitivity test's judge, by name, so the grid's command line can bind it
    def __init__(self, *args: Any, **model_args: Any) -> None:
        model_args["custom_outputs"] = judge
        super().__init__(*args, **model_args)


def released_dir(root: Path, data: Path) -> Path:
    """The released standard-prompting file of GPT-4o: every question answered with the ALPHA marker."""
    folder = root / "released"
    folder.mkdir()
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    write_jsonl(
        folder / "sp_gpt4o.jsonl",
        [{"question": r["background"] + r["question"], "answers": "Answer: ALPHA 소멸한다"} for r in rows],
    )
    return folder


def grid(root: Path, data: Path, corpus: Path, released: Path, *extra: str) -> str:
    run = koblex_cli(
        "grid", "koblex", "--model", "koblexmock/gpt-4o", "--methods", "standard_prompting",
        "--model-role", f"grader={JUDGE}", "-T", f"data={data}", "-T", f"corpus={corpus}",
        "-T", "reranker=none", "--released", str(released), "--judge-released", JUDGE,
        "--display", "none", "--resamples", "500", *extra,
    )  # fmt: skip
    assert run.code == 0, run.err[-2000:]
    return run.out


@pytest.fixture(scope="module")
def grids(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same grid under the paper's judge variant and with `-T judge_context=none`, in their default log
    directories (run from `root`)."""
    root = tmp_path_factory.mktemp("judge-released")
    data, corpus = questions(root / "questions.jsonl"), write_jsonl(root / "statutes.jsonl", TINY_STATUTES)
    released = released_dir(root, data)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        grid(root, data, corpus, released)
        grid(root, data, corpus, released, "-T", "judge_context=none")
    return root / "logs"


def records(folder: Path) -> list[RunRecord]:
    return read_records(log_locations(folder))


def lf_eval_means(folder: Path) -> dict[str, float | None]:
    """model -> LF-Eval mean of the logs in `folder` and the replays below it."""
    return {r.model: r.cells["lf_eval"].mean for r in records(folder)}


def test_each_variant_has_its_own_default_log_dir(grids: Path) -> None:
    assert sorted(p.name for p in grids.iterdir()) == ["grid-koblex", "grid-koblex-judge_context-none"]


def test_the_released_answers_are_judged_under_the_runs_variant(grids: Path) -> None:
    # gold Context: ALPHA 8, no marker 5; none: ALPHA 4, no marker 6; odd questions +1 (x10, +0.5 on average)
    assert lf_eval_means(grids / "grid-koblex") == pytest.approx(
        {"koblexmock/gpt-4o": 55.0, "replay/GPT-4o": 85.0}
    )
    none = grids / "grid-koblex-judge_context-none"
    assert lf_eval_means(none) == pytest.approx({"koblexmock/gpt-4o": 65.0, "replay/GPT-4o": 45.0})
    [replay] = records(none / "released")
    assert replay.judge == JUDGE and replay.judge_variant == {"judge_context": "none"}
    log = read_eval_log(replay.path)
    assert (log.eval.metadata or {})["protocol"]["judge_context"] == {"value": "none", "paper": "gold"}
    scores = [s.scores["lf_eval"] for s in log.samples or [] if s.scores]
    assert len(scores) == QUESTIONS and all((s.metadata or {})["judge_context"] == "none" for s in scores)


def test_the_paired_lf_eval_test_compares_like_with_like(grids: Path) -> None:
    """Model | method | metric | n | yours | released | Δ: both judged under the folder's variant."""
    rows = {
        "grid-koblex": "| Standard prompting | LF-Eval | 6 | 55.00 | 85.00 | -30.00 [",
        "grid-koblex-judge_context-none": "| Standard prompting [judge_context=none] | LF-Eval | 6 | 65.00 | 45.00 | 20.00 [",
    }
    for folder, expected in rows.items():
        md = (grids / folder / "grid-koblex.md").read_text(encoding="utf-8")
        assert f"| koblexmock/gpt-4o {expected}" in md, md


def test_the_sensitivity_report_reads_the_replay_logs(
    grids: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from koblex_tasks.cli.main import main

    folders = [str(grids / "grid-koblex"), str(grids / "grid-koblex-judge_context-none")]
    assert (
        main(["report", "lf-eval-sensitivity", *folders, "--json", "--resamples", "200"]) == 0
    )  # with replays
    payload = json.loads(capsys.readouterr().out)["lf_eval_sensitivity"]
    rows = {(m["model"], m["method"]): m for m in payload["methods"]}
    assert set(rows) == {("koblexmock/gpt-4o", "standard_prompting"), ("replay/GPT-4o", "standard_prompting")}
    released = rows["replay/GPT-4o", "standard_prompting"]
    assert [v["mean"] for v in released["variants"]] == pytest.approx([85.0, 45.0])
    assert released["differences"][0]["difference"] == pytest.approx(-40.0)
    [corr] = payload["rank_correlations"]
    assert corr["kendall_tau"] == pytest.approx(
        -1.0
    )  # the released run leads with the Context, trails without


class Recorder:
    """A replay runner that records its requests and stops there (the request is what is checked)."""

    def __init__(self) -> None:
        self.requests: list[ReplayRequest] = []

    def __call__(self, request: ReplayRequest) -> Replayed:
        self.requests.append(request)
        raise RuntimeError("stop")


def test_a_replay_under_another_variant_is_not_reused(grids: Path, tmp_path: Path) -> None:
    [mine] = [r for r in records(grids / "grid-koblex-judge_context-none") if r.replay_file is None]
    [paper_replay] = records(grids / "grid-koblex" / "released")
    assert KOBLEX_GRID.released is not None
    replays = Replays(KOBLEX_GRID.released, Recorder(), tmp_path, [paper_replay], JUDGE)
    file = Path(str(paper_replay.replay_file))
    assert (
        replays.replay(file, replace(mine, judge_variant={}), "standard_prompting", "GPT-4o") is paper_replay
    )
    with pytest.raises(RuntimeError, match="stop"):
        replays.replay(file, mine, "standard_prompting", "GPT-4o")
    [request] = replays.run.requests  # type: ignore[attr-defined]
    assert request.judge_variant == {"judge_context": "none"} and request.grader == JUDGE
    unjudged = Replays(KOBLEX_GRID.released, Recorder(), tmp_path, [], None)
    with pytest.raises(RuntimeError):
        unjudged.replay(file, mine, "standard_prompting", "GPT-4o")
    assert unjudged.run.requests[0].judge_variant == {}  # type: ignore[attr-defined]  # nothing to read it


@pytest.mark.parametrize(
    ("variant", "grader", "message"),
    [
        ({"judge_context": "none"}, None, "no judge grades the released answers"),
        ({"judge_prompt": "bare"}, JUDGE, "not a judge variant argument"),
    ],
)
def test_a_variant_the_replay_cannot_honour_is_refused(
    variant: dict[str, Any], grader: str | None, message: str, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=message):
        run_replay(str(tmp_path / "never-read.jsonl"), grader=grader, judge_variant=variant)


def test_a_report_reuses_the_replay_of_its_variant(grids: Path) -> None:
    none = grids / "grid-koblex-judge_context-none"
    before = sorted(p.name for p in (none / "released").glob("*.eval"))
    run = koblex_cli(
        "grid", "report", str(none), "--released", str(grids.parent / "released"), "--judge-released", JUDGE,
        "--resamples", "500",
    )  # fmt: skip
    assert run.code == 0, run.err[-2000:]
    assert sorted(p.name for p in (none / "released").glob("*.eval")) == before
    assert "| 6 | 65.00 | 45.00 | 20.00 [" in (none / "grid-koblex.md").read_text(encoding="utf-8")


def test_lf_eval_is_not_compared_across_judge_variants(grids: Path) -> None:
    """A released run judged under another variant than the user's is shown, never tested against it."""
    [mine] = [r for r in records(grids / "grid-koblex-judge_context-none") if r.replay_file is None]
    [paper_replay] = records(grids / "grid-koblex" / "released")
    released = Released(record=paper_replay, cells=paper_replay.cells)
    columns = [KOBLEX.value("token_f1"), KOBLEX.value("lf_eval")]
    assert [v.key for v in compared_values(columns, mine, released)] == ["token_f1"]
    same = replace(mine, judge_variant={})
    assert [v.key for v in compared_values(columns, same, released)] == ["token_f1", "lf_eval"]


def test_a_directory_without_finished_logs_is_one_line(
    grids: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from koblex_tasks.cli.main import main

    assert main(["report", "lf-eval-sensitivity", str(tmp_path), str(grids / "grid-koblex")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no finished benchmark log in this directory" in err


def test_one_directory_with_both_variants_reports_each_beside_its_own_replay(
    grids: Path, tmp_path: Path
) -> None:
    """Runs of one method under two judge variants are two rows, each paired with the replay judged like it."""
    mixed = tmp_path / "mixed"
    (mixed / "released").mkdir(parents=True)
    for folder in ("grid-koblex", "grid-koblex-judge_context-none"):
        for log in (grids / folder).glob("*.eval"):
            shutil.copy(log, mixed / log.name)
        for log in (grids / folder / "released").glob("*.eval"):
            shutil.copy(log, mixed / "released" / log.name)
    run = koblex_cli(
        "grid", "report", str(mixed), "--released", str(grids.parent / "released"), "--judge-released", JUDGE,
        "--resamples", "500",
    )  # fmt: skip
    assert run.code == 0, run.err[-2000:]
    assert len(list((mixed / "released").glob("*.eval"))) == 2  # both replays reused: no judge call
    md = (mixed / "grid-koblex.md").read_text(encoding="utf-8")
    tests = [
        x
        for x in md.splitlines()
        if x.startswith("| koblexmock/gpt-4o | Standard prompting") and "LF-Eval" in x
    ]
    assert len(tests) == 2 and "not reported" not in md
    assert any("| Standard prompting | LF-Eval | 6 | 55.00 | 85.00 | -30.00 [" in x for x in tests)
    assert any(
        "| Standard prompting [judge_context=none] | LF-Eval | 6 | 65.00 | 45.00 | 20.00 [" in x
        for x in tests
    )


def test_a_tables_rows_are_paired_with_the_baseline_under_their_own_variant(grids: Path) -> None:
    [run] = [r for r in records(grids / "grid-koblex") if r.replay_file is None]
    full = KOBLEX_GRID.for_table("3").method("parser")

    def row(method: str, **variant: str) -> Row:
        record = replace(run, method=method, judge_variant=variant, path=f"{method}-{variant}")
        return Row(record, method)

    rows = [
        row("parser"),
        row("parser", judge_context="none"),
        row("no_selection", judge_context="none"),
        row("no_rerank", judge_context="retrieved"),
    ]
    paired = against_baseline(rows, full)
    assert paired[2].released is not None and paired[2].released.record is rows[1].record
    assert paired[3].released is not None and paired[3].released.reason == (
        "no finished ParSeR (full) run of this model under judge_context=retrieved"
    )


def test_a_judge_variant_without_a_judge_is_refused_before_any_run(tmp_path: Path) -> None:
    run = koblex_cli(
        "grid", "koblex", "--model", "koblexmock/demo", "--methods", "sp", "-T", "judge_context=none",
        "--log-dir", str(tmp_path),
    )  # fmt: skip
    assert run.code == 2
    [line] = run.err.strip().splitlines()
    assert "-T judge_context=none sets what the judge reads, but no judge is bound" in line
    assert not list(tmp_path.glob("*.eval"))
