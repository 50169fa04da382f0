"""The `koblex` command as a user meets it: versions, help, and one exit-code rule with one-line errors."""

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import koblex_tasks
from koblex_tasks.cli import main
from koblex_tasks.cli.audit import judge_audit_main
from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.cli.main import koblex
from koblex_tasks.leaderboard.store import Store

LEADERBOARD = ["submit", "build", "compare", "list", "remove", "audit-attach"]
COMMANDS = [[], ["replay"], ["judge-audit"], ["leaderboard"], *(["leaderboard", c] for c in LEADERBOARD)]
COMMANDS += [["grid"], ["grid", "koblex"], ["grid", "legit"], ["grid", "report"]]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_error_line(err: str, command: str) -> str:
    """Exactly one stderr line, `koblex <command>: error: ...`, and no traceback."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"koblex {command}: error: ") and "Traceback" not in err
    return lines[0]


@pytest.fixture
def empty_file(tmp_path: Path) -> Path:
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    return path


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0
    assert out.strip() == f"koblex {koblex_tasks.__version__} (inspect-ai {version('inspect_ai')})"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "koblex")
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_of_every_command(capsys: pytest.CaptureFixture[str], command: list[str], flag: str) -> None:
    code, out, err = run(capsys, *command, flag)
    assert code == 0 and not err
    assert out.startswith(f"Usage: {' '.join(['koblex', *command])} [OPTIONS]")


def test_root_help_lists_commands_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "--help")
    commands = out.split("Commands:")[1]
    positions = [commands.index(f"  {c}  ") for c in ("replay", "judge-audit", "leaderboard")]
    assert positions == sorted(positions)  # the order of the old argparse help
    assert "Exit codes" in out and "KOBLEX_DEBUG" in out and "--version" in out and "--debug" in out


@pytest.mark.parametrize(
    ("command", "usage", "documented"),
    [
        (["judge-audit"], "LABELS.csv [LOG]...", ["--lf-eval", "--n-boot", "--seed", "--json"]),
        (
            ["replay"],
            "FILE",
            [
                "--benchmark",
                "--data",
                "--grader",
                "--rule",
                "--official",
                "--log-dir",
                "--method",
                "--model-name",
            ],
        ),
        (["leaderboard", "submit"], "LOG...", ["--name", "--allow-subset", "--audit", "--dry-run", "--db"]),
        (["leaderboard", "build"], "", ["--out", "--resamples", "--seed", "--alpha", "--db"]),
        (["leaderboard", "compare"], "RUN_A [RUN_B]", ["--all", "--metric", "--json", "--resamples", "--db"]),
        (["leaderboard", "remove"], "RUN", ["--db"]),
        (["leaderboard", "audit-attach"], "JSON", ["--judge-model", "--db"]),
    ],
)
def test_usage_and_options(
    capsys: pytest.CaptureFixture[str], command: list[str], usage: str, documented: list[str]
) -> None:
    """Every flag of the argparse front ends is still there; optional arguments are marked so."""
    _, out, _ = run(capsys, *command, "--help")
    assert out.splitlines()[0] == f"Usage: koblex {' '.join(command)} [OPTIONS] {usage}".rstrip()
    assert all(flag in out for flag in documented)


def test_benchmark_choices_come_from_the_specs(capsys: pytest.CaptureFixture[str]) -> None:
    from koblex_tasks.tasks import benchmark_specs

    _, out, _ = run(capsys, "replay", "--help")
    assert f"[{'|'.join(s.name for s in benchmark_specs())}]" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["nope"],
        ["replay"],
        ["replay", "x.jsonl", "--bogus"],
        ["replay", "x.jsonl", "--benchmark", "nope"],
        ["judge-audit"],
        ["judge-audit", "labels.csv", "--n-boot", "-1"],
        ["leaderboard", "submit"],
        ["leaderboard", "compare", "a", "b", "--alpha", "2"],
        ["leaderboard", "build"],
    ],
)
def test_usage_error_exits_2_with_usage(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and not out
    assert "Usage: koblex" in err and "Error:" in err and "Traceback" not in err


def test_group_without_command_shows_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys)[0] == 2
    assert run(capsys, "leaderboard")[0] == 2


def test_wrappers_return_codes_instead_of_raising(capsys: pytest.CaptureFixture[str]) -> None:
    assert leaderboard_main(["--help"]) == 0
    assert judge_audit_main(["-h"]) == 0
    assert leaderboard_main(["submit"]) == 2
    assert judge_audit_main([]) == 2
    assert "Usage: koblex judge-audit" in capsys.readouterr().err


def test_option_combinations_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "board.sqlite")
    Store(Path(db)).close()  # an empty board: compare refuses a missing one before reading its options
    code, _, err = run(capsys, "leaderboard", "compare", "--db", db, "a", "b", "--all")
    assert code == 2 and "give either RUN_B or --all" in err and "Usage:" in err
    code, _, err = run(capsys, "leaderboard", "submit", "--db", db, "--name", "n", "a.eval", "b.eval")
    assert code == 2 and "--name needs exactly one LOG" in err


def test_judge_scored_replay_needs_a_grader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A benchmark whose spec requires a judge refuses to replay without --grader, before any eval."""
    responses = tmp_path / "o3.jsonl"
    responses.write_text(json.dumps({"doc_id": "1", "response": "..."}) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "replay", str(responses), "--log-dir", str(tmp_path / "logs"))
    assert code == 2 and not out
    assert "LEGIT answers can only be scored by a judge: pass --grader <model>" in err
    assert not (tmp_path / "logs").exists()


def test_data_error_is_one_line(empty_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "replay", str(empty_file))
    assert code == 2 and not out
    assert assert_one_error_line(err, "replay").endswith(f"{empty_file}: the file is empty")


def test_missing_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "judge-audit", str(tmp_path / "missing.csv"))
    assert code == 2
    assert "cannot read labels: " in assert_one_error_line(err, "judge-audit")
    Store(tmp_path / "db.sqlite").close()  # an empty board, without run #7
    code, _, err = run(capsys, "leaderboard", "remove", "--db", str(tmp_path / "db.sqlite"), "#7")
    assert code == 2
    assert "no stored run matches '#7'" in assert_one_error_line(err, "leaderboard remove")


def test_multiline_message_is_joined(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from koblex_tasks.cli._base import one_line

    assert one_line(ValueError("a:\n  - b\n\n  - c")) == "a:; - b; - c"
    assert one_line(KeyError()) == "KeyError"


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_adds_the_traceback(
    empty_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    argv = ["replay", str(empty_file)]
    if how == "flag":
        argv.insert(0, "--debug")
    else:
        monkeypatch.setenv("KOBLEX_DEBUG", "1")
    code, _, err = run(capsys, *argv)
    assert code == 2  # the exit code does not depend on --debug
    assert "Traceback" in err and "DataError" in err
    assert err.strip().splitlines()[-1].startswith("koblex replay: error: ")


def _unfinished(*args: object, **kwargs: object) -> None:
    raise RuntimeError("replay of x.jsonl did not finish: the model exploded")


def test_eval_that_did_not_finish_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("koblex_tasks.tasks.koblex.replay.run_replay", _unfinished)
    code, out, err = run(capsys, "replay", str(tmp_path / "x.jsonl"), "--benchmark", "koblex")
    assert code == 1 and not out
    assert assert_one_error_line(err, "replay").endswith("did not finish: the model exploded")


def test_exit_codes_hold_in_standalone_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`koblex` run by click itself (not through `main`) exits with the same codes."""
    monkeypatch.setattr("koblex_tasks.tasks.koblex.replay.run_replay", _unfinished)
    runner = CliRunner()
    assert runner.invoke(koblex, ["replay", "x.jsonl", "--benchmark", "koblex"]).exit_code == 1
    assert runner.invoke(koblex, ["replay", str(tmp_path / "none.jsonl")]).exit_code == 2
    assert runner.invoke(koblex, ["replay", "--bogus"]).exit_code == 2
    assert runner.invoke(koblex, ["--version"]).exit_code == 0


def test_judge_audit_without_shared_units_says_so_in_one_line() -> None:
    """No wall of n/a: two labellers with nothing in common get one line saying so and why."""
    from koblex_tasks.audit.legit.agreement import compare_labellers
    from koblex_tasks.audit.legit.labels import labeller_from_records
    from koblex_tasks.cli.audit import format_report

    def labels(generator: str) -> list[dict[str, object]]:
        return [
            {
                "generator": generator,
                "doc_id": "d",
                "issue_id": i,
                "contains_issue": 1,
                "correct_conclusion": 1,
                "score": 1,
            }
            for i in ("", "1")
        ]

    report = compare_labellers(
        labeller_from_records("group 1", labels("o3")), labeller_from_records("judge j", labels("gpt-4.1"))
    )
    text = format_report(report)
    assert len(text.splitlines()) == 1
    assert "no issue in common" in text and "o3" in text and "gpt-4.1" in text and "n/a" not in text


def test_replay_offline_names_its_own_data_flag(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --data and with the hub out of reach, the hint is replay's `--data PATH`, not the task's `-T`."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "empty-cache"))
    released = shared_data / "koblex" / "released_gpt4o" / "sp_gpt4o.jsonl"
    code, out, err = run(capsys, "replay", str(released), "--log-dir", str(tmp_path / "logs"))
    line = assert_one_error_line(err, "replay")
    assert code == 1 and not out and not (tmp_path / "logs").exists()
    assert "HF_HUB_OFFLINE is set" in line and line.endswith("(--data PATH)") and "-T data" not in line


def test_lazy_commands_declare_their_own_short_help() -> None:
    """`koblex --help` lists lazy commands by the help declared beside them: it must be the command's own."""
    group = koblex
    assert group.lazy, "the root group has lazy commands"
    for name, (_target, declared) in group.lazy.items():
        command = group.get_command(click.Context(group), name)
        assert command is not None and command.get_short_help_str() == declared, name


def test_root_help_imports_no_command_module() -> None:
    """Listing the commands imports none of the lazy ones (each pulls in Inspect or the statistics stack), nor
    the benchmarks (every task, solver and scorer): only a replay needs them."""
    script = (
        "import sys; from koblex_tasks.cli import main; code = main(['--help']); "
        "print('koblex_tasks.tasks' in sys.modules); "
        "print(sorted(m for m in sys.modules if m.startswith('koblex_tasks.cli.') and m.rsplit('.', 1)[1] "
        "in ('audit', 'leaderboard', 'grid')))"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "judge-audit" in proc.stdout and proc.stdout.strip().endswith("[]"), proc.stdout
    assert proc.stdout.strip().splitlines()[-2] == "False", proc.stdout


@pytest.mark.parametrize(
    ("row", "argv", "says"),
    [
        # a KoBLEX prediction row; a variant nothing would read; an argument that is no judge variant
        (
            {"question": "q", "answers": []},
            ["-T", "judge_context=none"],
            "no judge grades the released answers (pass a grader)",
        ),
        (
            {"question": "q", "answers": []},
            ["--grader", "koblexmock/judge", "-T", "hops=1"],
            "-T hops: a replay of KoBLEX answers takes only judge_context, judge_reference",
        ),
        # a LEGIT responses file: LEGIT has no judge variant
        (
            {"doc_id": "1", "response": "..."},
            ["--grader", "koblexmock/judge", "-T", "judge_context=none"],
            "-T judge_context: a replay of LEGIT answers takes none",
        ),
    ],
)
def test_a_replays_judge_variant_is_checked_before_any_eval(
    row: dict[str, object], argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    released = tmp_path / "released.jsonl"
    released.write_text(json.dumps(row) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "replay", str(released), "--log-dir", str(tmp_path / "logs"), *argv)
    assert code == 2 and not out and "Traceback" not in err
    assert says in err, err
    assert not (tmp_path / "logs").exists()
