"""Replaying the paper's released GPT-4o predictions reproduces the published numbers (official scoring)."""

import json
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.cli import main
from koblex_tasks.tasks.koblex.replay import run_replay
from koblex_tasks.tasks.replay import headline_means

# KoBLEX paper Table 2 (GPT-4o) and the released README's reproduction: provision F1, EM, token F1 (x100).
PUBLISHED = {
    "parser": (59.41, 26.99, 46.14),
    "sp_or": (21.50, 7.08, 26.75),
    "sp": (None, None, 36.20),
    "cot": (None, None, 32.34),
    "cot_or": (21.50, 7.08, 30.68),
    "selfask": (8.55, 1.77, 7.82),
    "ircot": (23.91, 4.42, 31.39),
    "flare": (31.75, 4.42, 34.37),
    "probtree": (17.32, 3.98, 33.91),
    "beamaggr": (16.89, 3.54, 22.83),
}


@pytest.mark.parametrize("method", sorted(PUBLISHED))
def test_replay_reproduces_published_numbers(replay_logs: dict[str, Path], method: str) -> None:
    log = read_eval_log(str(replay_logs[f"{method}_gpt4o"]))
    headline = headline_means(log, KOBLEX)
    f1, em, tok = PUBLISHED[method]
    assert round(100 * headline["token_f1"], 2) == tok
    if f1 is None:
        assert set(headline) == {"token_f1"}
    else:
        assert round(100 * headline["provision_f1"], 2) == f1
        assert round(100 * headline["provision_em"], 2) == em
    assert log.eval.model == "replay/gpt-4o" and log.eval.task_args["official"] is True
    assert len(log.samples) == 226
    # the GPT-4o files store background + question, so every row aligns by its text
    assert log.eval.metadata["replay_alignment"] == {"text": 226, "question": 0, "order": 0}
    assert {s.metadata["replay"]["rule"] for s in log.samples} == {"text"}


def test_cli_prints_headline_json_last(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    file = shared_data / "koblex" / "released_gpt4o" / "sp_or_gpt4o.jsonl"
    code = main(
        [
            "replay",
            str(file),
            "--data",
            str(shared_data / "koblex" / "koblex.jsonl"),
            "--official",
            "--log-dir",
            str(tmp_path),
            "--method",
            "my_method",
            "--model-name",
            "my-model",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out.strip().splitlines()
    headline = json.loads(out[-1])
    assert list(headline) == ["provision_f1", "provision_em", "token_f1"]
    assert round(headline["token_f1"] * 100, 2) == 26.75
    assert "method: my_method  model: my-model" in out[0]
    [log_file] = list(tmp_path.glob("*.eval"))
    from inspect_ai.log import read_eval_log

    header = read_eval_log(str(log_file), header_only=True)
    assert header.eval.model == "replay/my-model" and header.eval.metadata["method"] == "my_method"


def test_default_scoring_differs_only_where_documented(shared_data: Path, tmp_path: Path) -> None:
    """Without --official no 800-character cut and no rounding: F1 may move, provisions never do."""
    file = str(shared_data / "koblex" / "released_gpt4o" / "parser_gpt4o.jsonl")
    data = str(shared_data / "koblex" / "koblex.jsonl")
    default = run_replay(file, data=data, log_dir=str(tmp_path)).headline
    assert round(100 * default["provision_f1"], 2) == 59.41
    assert abs(default["token_f1"] - 0.4614) < 0.01


def test_misaligned_file_is_rejected_before_running(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    lines = (
        (shared_data / "koblex" / "released_gpt4o" / "sp_gpt4o.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    )
    short = tmp_path / "sp_gpt4o.jsonl"
    short.write_text("\n".join(lines[:-3]) + "\n", encoding="utf-8")
    code = main(
        [
            "replay",
            str(short),
            "--data",
            str(shared_data / "koblex" / "koblex.jsonl"),
            "--log-dir",
            str(tmp_path / "logs"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "3 questions have no prediction" in err
    assert "the file has 223 rows for 226 questions" in err  # why row order could not place them
    assert not (tmp_path / "logs").exists()


def test_cli_replay_with_a_grader_adds_lf_eval(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """`koblex replay FILE --grader MODEL` judges the released answers too (koblexmock's judge says 7)."""
    file = shared_data / "koblex" / "released_gpt4o" / "sp_or_gpt4o.jsonl"
    data = shared_data / "koblex" / "koblex.jsonl"
    code = main(
        ["replay", str(file), "--data", str(data), "--grader", "koblexmock/judge", "--log-dir", str(tmp_path)]
    )
    assert code == 0
    out = capsys.readouterr().out.strip().splitlines()
    headline = json.loads(out[-1])
    assert headline["lf_eval"] == pytest.approx(70.0)
    assert round(100 * headline["provision_f1"], 2) == 21.50
    assert "  lf_eval         70.00" in out
    [log_file] = tmp_path.glob("*.eval")
    roles = read_eval_log(str(log_file), header_only=True).eval.model_roles or {}
    assert roles["grader"].model == "koblexmock/judge"


def test_cli_replay_judges_the_released_answers_under_a_judge_variant(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """`-T judge_context=none`: the judge reads no provisions (the paper's variant reads the gold ones), and
    every LF-Eval score records the variant."""
    file = shared_data / "koblex" / "released_gpt4o" / "sp_or_gpt4o.jsonl"
    data = shared_data / "koblex" / "koblex.jsonl"
    rows = {row["id"]: row for row in map(json.loads, data.read_text(encoding="utf-8").splitlines())}

    def judged(log_dir: Path, *variant: str) -> tuple[set[object], bool]:
        argv = [
            "replay",
            str(file),
            "--data",
            str(data),
            "--grader",
            "koblexmock/judge",
            "--log-dir",
            str(log_dir),
        ]
        assert main([*argv, *variant]) == 0
        capsys.readouterr()
        [log_file] = log_dir.glob("*.eval")
        log = read_eval_log(str(log_file), resolve_attachments=True)
        samples = log.samples or []
        assert len(samples) == 226
        first = samples[0]
        gold = str(rows[first.id]["contexts"][0]["content"]).strip()[-40:]  # a gold provision's closing words
        judge_inputs = [
            m.text
            for e in first.events
            if getattr(e, "event", None) == "model" and getattr(e, "role", None) == "grader"
            for m in e.input
        ]
        assert judge_inputs
        contexts = {(s.scores or {})["lf_eval"].metadata.get("judge_context") for s in samples}  # type: ignore[union-attr]
        return contexts, any(gold in text for text in judge_inputs)

    assert judged(tmp_path / "paper") == ({"gold"}, True)
    assert judged(tmp_path / "none", "-T", "judge_context=none") == ({"none"}, False)
