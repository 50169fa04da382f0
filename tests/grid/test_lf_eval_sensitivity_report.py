"""`koblex report lf-eval-sensitivity` (issue 33): LF-Eval re-derived from each log's judge records, per method
under each judge variant, paired differences with intervals, rank correlations; bad input one line, exit 2.

Two closed-book methods answer six questions; a scripted judge grades by the answer's marker and by whether
its Context holds provisions, so the methods' order flips when the Context is omitted (hand-computed below).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, get_model

from koblex_tasks.cli.main import main
from koblex_tasks.grid.compare import Settings
from koblex_tasks.grid.sensitivity import format_markdown, sensitivity_report
from koblex_tasks.providers.koblexmock import usage_for
from koblex_tasks.solvers.koblex.chain_of_thought import chain_of_thought
from koblex_tasks.solvers.koblex.standard_prompting import standard_prompting
from koblex_tasks.tasks.koblex.task import koblex
from tests.conftest import TINY_STATUTES, certain_judge_output, tiny_question, write_jsonl

QUESTIONS = 6
# judge score (0-10) by the answer's marker, with the gold Context / without it; odd questions get +1
SCORES = {"gold": {"ALPHA": 8, "BETA": 5}, "none": {"ALPHA": 4, "BETA": 6}}
MARKERS = {"standard_prompting": "ALPHA", "chain_of_thought": "BETA"}
SOLVERS = {"standard_prompting": standard_prompting, "chain_of_thought": chain_of_thought}


def judge(messages, tools, tool_choice, config) -> ModelOutput:  # type: ignore[no-untyped-def]
    prompt = messages[-1].text
    context = "gold" if any(row["content"][:20] in prompt for row in TINY_STATUTES) else "none"
    marker = "ALPHA" if "ALPHA" in prompt else "BETA"
    odd = any(f"질문 {k}번" in prompt for k in range(1, QUESTIONS + 1, 2))
    return certain_judge_output(prompt, str(SCORES[context][marker] + (1 if odd else 0)))


def answer(marker: str):  # type: ignore[no-untyped-def]
    def reply(*_args) -> ModelOutput:  # type: ignore[no-untyped-def]
        out = ModelOutput.from_content(model="m", content=f"Answer: {marker} 소멸한다")
        out.usage = usage_for("x", "y")
        return out

    return reply


def questions(path: Path) -> Path:
    rows = [
        tiny_question(
            f"s{k}", [TINY_STATUTES[k % len(TINY_STATUTES)]], f"질문 {k}번: 청구권은 언제 소멸하는가?"
        )
        for k in range(1, QUESTIONS + 1)
    ]
    return write_jsonl(path, rows)


def run(data: Path, corpus: Path, log_dir: Path, method: str, **task_args) -> str:  # type: ignore[no-untyped-def]
    task = koblex(data=str(data), corpus=str(corpus), reranker="none", judge=True, **task_args)
    [log] = inspect_eval(
        task,
        solver=SOLVERS[method](),
        model=get_model("mockllm/model", custom_outputs=answer(MARKERS[method])),
        model_roles={"grader": get_model("mockllm/model", custom_outputs=judge)},
        log_dir=str(log_dir),
        display="none",
    )
    assert log.status == "success", log.error
    return log.location


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], str]:
    root = tmp_path_factory.mktemp("sensitivity")
    data, corpus = questions(root / "questions.jsonl"), write_jsonl(root / "statutes.jsonl", TINY_STATUTES)
    out = {}
    for method in MARKERS:
        out[method, "gold"] = run(data, corpus, root / "logs", method)
        out[method, "none"] = run(data, corpus, root / "logs", method, judge_context="none")
    return out


SETTINGS = Settings(n_resamples=500)


def test_means_differences_and_rank_correlation_match_a_hand_computation(logs: dict) -> None:
    report = sensitivity_report(list(logs.values()), SETTINGS)
    gold, none = report.variants
    assert dict(gold) == {"judge_context": "gold", "judge_reference": True}  # the paper's is the reference
    assert dict(none) == {"judge_context": "none", "judge_reference": True}
    rows = {r.method: r for r in report.rows}
    assert set(rows) == {"standard_prompting", "chain_of_thought"}
    # x10, plus 0.5 on average (three of six questions get +1)
    assert rows["standard_prompting"].cells[gold].mean == pytest.approx(85.0)
    assert rows["standard_prompting"].cells[none].mean == pytest.approx(45.0)
    assert rows["chain_of_thought"].cells[gold].mean == pytest.approx(55.0)
    assert rows["chain_of_thought"].cells[none].mean == pytest.approx(65.0)
    sp = rows["standard_prompting"].differences[none].comparison
    cot = rows["chain_of_thought"].differences[none].comparison
    assert sp.n_shared == QUESTIONS and sp.difference == pytest.approx(-40.0)
    assert (sp.ci_low, sp.ci_high) == pytest.approx((-40.0, -40.0))  # the same difference on every item
    assert cot.difference == pytest.approx(10.0)
    assert sp.p_value == pytest.approx(2 / 2**QUESTIONS)  # exact sign-flip: all six differences one sign
    assert report.family_size == 2 and sp.p_adjusted == pytest.approx(2 * 2 / 2**QUESTIONS)
    [corr] = report.correlations
    assert (
        corr.n_methods == 2
        and corr.kendall_tau == pytest.approx(-1.0)
        and corr.spearman_rho == pytest.approx(-1.0)
    )
    text = format_markdown(report)
    row = next(
        line for line in text.splitlines() if line.startswith("| standard_prompting | judge_context=none")
    )
    assert "| 6 | 45.00 [" in row and "| -40.00 [-40.00, -40.00] |" in row
    assert "-1.000" in text


def test_cli_prints_json_and_markdown(logs: dict, capsys: pytest.CaptureFixture[str]) -> None:
    paths = list(logs.values())
    assert main(["report", "lf-eval-sensitivity", *paths, "--json", "--resamples", "200"]) == 0
    payload = json.loads(capsys.readouterr().out)["lf_eval_sensitivity"]
    assert payload["reference"] == {"judge_context": "gold", "judge_reference": True}
    [corr] = payload["rank_correlations"]
    assert corr["kendall_tau"] == pytest.approx(-1.0)
    sp = next(m for m in payload["methods"] if m["method"] == "standard_prompting")
    assert sp["differences"][0]["difference"] == pytest.approx(-40.0)
    assert main(["report", "lf-eval-sensitivity", *paths, "--resamples", "200"]) == 0
    assert "Rank correlation" in capsys.readouterr().out


def refused(capsys: pytest.CaptureFixture[str], *paths: str) -> str:
    assert main(["report", "lf-eval-sensitivity", *paths, "--resamples", "200"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_a_single_variant_is_refused(logs: dict, capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(capsys, logs["standard_prompting", "gold"], logs["chain_of_thought", "gold"])
    assert "same judge variant" in err


def test_a_log_without_lf_eval_is_refused(
    logs: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, corpus = questions(tmp_path / "q.jsonl"), write_jsonl(tmp_path / "s.jsonl", TINY_STATUTES)
    task = koblex(data=str(data), corpus=str(corpus), reranker="none")
    [log] = inspect_eval(
        task, solver=standard_prompting(), model=get_model("mockllm/model", custom_outputs=answer("ALPHA")),
        log_dir=str(tmp_path / "logs"), display="none",
    )  # fmt: skip
    err = refused(capsys, log.location, logs["chain_of_thought", "none"])
    assert "no LF-Eval score with a judge record" in err


def test_logs_of_different_datasets_are_refused(
    logs: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = read_eval_log(logs["chain_of_thought", "none"])
    log.eval.metadata = {**(log.eval.metadata or {}), "dataset_fingerprint": "f" * 64}
    other = tmp_path / "other.eval"
    write_eval_log(log, str(other))
    err = refused(capsys, logs["standard_prompting", "gold"], str(other))
    assert "different datasets" in err


def test_an_edited_lf_eval_value_is_refused(
    logs: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The log's own value is never trusted: one that disagrees with its judge record refuses the log."""
    log = read_eval_log(logs["standard_prompting", "none"])
    sample = log.samples[0]  # type: ignore[index]
    sample.scores["lf_eval"].value = {"lf_eval": 100.0}  # type: ignore[index]
    edited = tmp_path / "edited.eval"
    write_eval_log(log, str(edited))
    err = refused(capsys, logs["standard_prompting", "gold"], str(edited))
    assert "its judge record gives" in err


def test_not_a_log_and_a_missing_file_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.eval"
    with zipfile.ZipFile(junk, "w") as z:
        z.writestr("nothing.txt", "x")
    assert "junk.eval" in refused(capsys, str(junk), str(junk))
    assert "no such log" in refused(capsys, str(tmp_path / "missing.eval"))
    shutil.rmtree(tmp_path, ignore_errors=True)
