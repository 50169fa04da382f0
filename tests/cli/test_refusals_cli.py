"""Every failure a user can cause on the command line is one line, a non-zero exit, in seconds: the real CLI
in a subprocess, as a user types it (each of these was a 100-230-line traceback, or exit 0)."""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

import pytest

from koblex_tasks.cli.refusals import provider_line, solver_argument_line, task_line
from tests.cli.refusal import SECONDS, Refusal, closed_port, inspect_eval, koblex_cli, run_cli

pytestmark = pytest.mark.slow
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def koblex(questions: Path, corpus: Path, *more: str) -> list[str]:
    """A KoBLEX run with a judge bound (so no "no grader" warning precedes the refusal)."""
    return [
        "koblex_tasks/koblex", "-T", f"data={questions}", "-T", f"corpus={corpus}", "-T", "reranker=none",
        "--model", "koblexmock/m", "--model-role", "grader=koblexmock/j", *more,
    ]  # fmt: skip


def refused(*args: str, cwd: Path, code: int = 1, env: dict[str, str | None] | None = None) -> str:
    run = inspect_eval(*args, cwd=cwd, env=env or OFFLINE)
    assert run.returncode == code and run.seconds < SECONDS, run.lines[-20:]
    assert not list((cwd / "logs").glob("*"))  # refused before any log is written
    return run.line


def test_a_misspelt_solver_argument_names_the_parameters(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    line = refused(
        *koblex(tiny_questions, tiny_corpus, "--solver", "koblex_tasks/ircot", "-S", "kk=3"), cwd=tmp_path
    )
    assert line.startswith(
        "-S kk: koblex_tasks/ircot has no parameter 'kk' (did you mean 'k'?); its parameters: k,"
    )


def test_a_misspelt_provider_names_the_installed_ones(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    args = koblex(tiny_questions, tiny_corpus)
    args[args.index("koblexmock/m")] = "ollam/llama3"
    line = refused(*args, cwd=tmp_path)
    assert line.startswith(
        "--model ollam/llama3: no provider 'ollam' is installed (did you mean 'ollama/llama3'?)"
    )
    assert "openai-api" in line and "koblexmock" in line


def test_a_model_without_provider_says_the_form(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    args = koblex(tiny_questions, tiny_corpus)
    args[args.index("koblexmock/m")] = "openai"
    assert refused(*args, cwd=tmp_path).startswith("--model openai: a model is <provider>/<model>, e.g.")


@pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None, reason="the hf provider needs transformers"
)
def test_a_missing_model_is_its_first_line(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    args = koblex(tiny_questions, tiny_corpus)
    args[args.index("koblexmock/m")] = "hf/koblex-no-such-org/no-such-model"
    assert refused(*args, cwd=tmp_path).startswith(
        "--model hf/koblex-no-such-org/no-such-model: cannot be loaded: "
    )
    judge = koblex(tiny_questions, tiny_corpus)
    judge[judge.index("grader=koblexmock/j")] = "grader=hf/koblex-no-such-org/no-such-judge"
    line = refused(*judge, cwd=tmp_path)
    assert line.startswith("--model-role grader=hf/koblex-no-such-org/no-such-judge: cannot be loaded: ")


def unreachable_hub(tmp_path: Path) -> dict[str, str | None]:
    """Online, but the hub is a closed loopback port and the cache is empty."""
    offline_unset: dict[str, str | None] = dict.fromkeys(OFFLINE)
    return {
        **offline_unset,
        "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}",
        "HF_HOME": str(tmp_path / "hf"),
    }


def test_legit_rag_with_the_hub_unreachable_is_one_line(tiny_legit: Path, tmp_path: Path) -> None:
    """The solver comes from --solver (built by the eval after the task), and its corpus from the hub."""
    line = refused(
        "koblex_tasks/legit", "-T", f"data={tiny_legit}", "--model", "koblexmock/m",
        "--model-role", "grader=koblexmock/j", "--solver", "koblex_tasks/legit_rag",
        cwd=tmp_path, env=unreachable_hub(tmp_path),
    )  # fmt: skip
    assert line.startswith("LEGIT: cannot load JihyungL/KoBLEX-statute")
    assert "is unreachable" in line and line.endswith("-T corpus=PATH)")


def test_koblex_with_the_hub_unreachable_is_one_line(tmp_path: Path) -> None:
    args = [
        "koblex_tasks/koblex",
        "-T",
        "reranker=none",
        "--model",
        "koblexmock/m",
        "--model-role",
        "grader=koblexmock/j",
    ]
    line = refused(*args, cwd=tmp_path, env=unreachable_hub(tmp_path))
    assert line.startswith("KoBLEX: cannot load JihyungL/KoBLEX-koblex") and "is unreachable" in line


def test_a_misspelt_task_argument_is_refused_for_both_tasks(
    tiny_questions: Path, tiny_corpus: Path, tiny_legit: Path, tmp_path: Path
) -> None:
    """LEGIT used to drop `-T rul=official` silently and grade with the paper rule (exit 0)."""
    legit = ["koblex_tasks/legit", "-T", f"data={tiny_legit}", "--model", "koblexmock/m"]
    line = refused(*legit, "--model-role", "grader=koblexmock/j", "-T", "rul=official", cwd=tmp_path)
    assert line.startswith("LEGIT: unknown task argument -T rul (did you mean 'rule'?); known: corpus,")
    line = refused(*koblex(tiny_questions, tiny_corpus, "-T", "hop=1"), cwd=tmp_path)
    assert line.startswith("KoBLEX: unknown task argument -T hop (did you mean 'hops'?)")


def test_a_misspelt_task_names_ours(tmp_path: Path) -> None:
    line = refused("koblex_tasks/koblx", "--model", "koblexmock/m", cwd=tmp_path)
    assert line == (
        "koblex_tasks/koblx is not a task (did you mean 'koblex_tasks/koblex'?); "
        "ours: koblex_tasks/koblex, koblex_tasks/legit"
    )


def test_a_directory_given_as_a_file_says_so(tiny_questions: Path, tmp_path: Path) -> None:
    line = refused(*koblex(tiny_questions, tmp_path), cwd=tmp_path)
    assert "is a directory" in line and "not found" not in line


def test_a_jsonl_cut_mid_character_names_the_column(
    tiny_corpus: Path, tiny_questions: Path, tmp_path: Path
) -> None:
    first = tiny_questions.read_bytes().splitlines()[0]
    cut_at = next(
        i for i in range(len(first) - 1, 0, -1) if first[i] >= 0xC0
    )  # a multi-byte character's start
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(first[: cut_at + 1])  # its first byte only
    column = len(first[:cut_at].decode()) + 1
    line = refused(*koblex(cut, tiny_corpus), cwd=tmp_path)
    assert line.endswith(f"cut.jsonl:1: not valid JSON (the line ends inside a character at column {column})")


NO_TORCH_SHIM = """
import importlib.util, runpy, sys
real = importlib.util.find_spec
importlib.util.find_spec = lambda n, *a, **k: None if n in ("torch", "transformers") else real(n, *a, **k)
sys.argv = ["inspect", *sys.argv[1:]]
runpy.run_module("inspect_ai", run_name="__main__", alter_sys=True)
"""


def eval_without_torch(args: list[str], tmp_path: Path) -> Refusal:
    """`inspect eval ARGS` as on a machine without the rerank extra (torch/transformers' specs hidden)."""
    (tmp_path / "no_torch.py").write_text(NO_TORCH_SHIM)
    return run_cli("no_torch", "eval", *args, "--log-dir", str(tmp_path / "logs"), cwd=tmp_path, env=OFFLINE)


def without_reranker_none(args: list[str]) -> list[str]:
    """The run's arguments with the task's `-T reranker=none` dropped (the paper's reranker)."""
    at = args.index("reranker=none")
    return [*args[: at - 1], *args[at + 1 :]]


def test_the_reranker_hint_keeps_its_extra(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    """Without torch/transformers the install hint reaches the user whole, as it works today: from a clone."""
    proc = eval_without_torch(without_reranker_none(koblex(tiny_questions, tiny_corpus)), tmp_path)
    assert proc.returncode == 1 and proc.seconds < SECONDS
    assert 'pip install -e ".[rerank]"' in proc.line and "-T reranker=none" in proc.line


def test_a_solver_that_does_not_rerank_needs_no_rerank_extra(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    """`--solver koblex_tasks/one_time_retrieval` (BM25 alone) runs without the extra and without
    `-T reranker=none`; the same solver told to rerank (`-S reranker=bge`) is refused in one line."""
    args = without_reranker_none(
        koblex(tiny_questions, tiny_corpus, "--solver", "koblex_tasks/one_time_retrieval")
    )
    proc = eval_without_torch(args, tmp_path)
    assert proc.returncode == 0, proc.lines[-20:]
    (log,) = (tmp_path / "logs").glob("*.eval")
    from inspect_ai.log import read_eval_log

    header = read_eval_log(str(log), header_only=True)
    assert header.status == "success" and header.results is not None
    assert header.plan.steps[-1].solver == "koblex_tasks/one_time_retrieval"
    log.unlink()
    refused_run = eval_without_torch([*args, "-S", "reranker=bge"], tmp_path)
    assert refused_run.returncode == 1 and 'pip install -e ".[rerank]"' in refused_run.line
    assert not list((tmp_path / "logs").glob("*.eval"))


def test_leaderboard_commands_that_read_never_create_a_database(tmp_path: Path) -> None:
    missing = tmp_path / "missing.sqlite"
    reading = (
        ["build", "--out", str(tmp_path / "site")],
        ["list"],
        ["compare", "1", "2"],
        ["remove", "1", "--yes"],
    )
    for command in reading:
        run = koblex_cli("leaderboard", *command, "--db", str(missing), cwd=tmp_path)
        assert run.returncode == 2 and f"no leaderboard database at {missing}" in run.line
        assert not missing.exists() and not (tmp_path / "site").exists()


def test_a_corrupt_or_newer_leaderboard_database_is_one_line(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"not a database at all" * 100)
    run = koblex_cli("leaderboard", "list", "--db", str(corrupt), cwd=tmp_path)
    assert run.returncode == 2 and run.line.endswith(
        f"{corrupt}: not a readable leaderboard database (file is not a database)"
    )
    newer = tmp_path / "newer.sqlite"
    with sqlite3.connect(newer) as conn:
        conn.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('schema_version', '999')")
    run = koblex_cli("leaderboard", "list", "--db", str(newer), cwd=tmp_path)
    assert run.returncode == 2 and "schema version 999" in run.line


# The line builders, on the errors Inspect raises (fast; no subprocess).


def test_only_our_solvers_arguments_are_answered() -> None:
    def ircot(k: int = 4, max_steps: int = 5) -> None: ...

    exc = TypeError("ircot() got an unexpected keyword argument 'steps'")
    assert solver_argument_line(exc, {"ircot": ircot}) == (
        "-S steps: koblex_tasks/ircot has no parameter 'steps' (did you mean 'max_steps'?); its parameters: k, max_steps"
    )
    assert (
        solver_argument_line(TypeError("other() got an unexpected keyword argument 'x'"), {"ircot": ircot})
        is None
    )


def test_provider_and_task_lines() -> None:
    exc = ValueError("Model API opnai of model 'opnai/gpt-4o' not recognized.")
    assert provider_line(exc, ["ollama", "openai"]) == (
        "--model opnai/gpt-4o: no provider 'opnai' is installed (did you mean 'openai/gpt-4o'?); installed: ollama, openai"
    )
    assert provider_line(ValueError("unrelated"), ["openai"]) is None
    none_found = RuntimeError("Error: No inspect tasks were found at the specified paths.")
    assert (
        task_line(none_found, ["mytasks.py", "--model", "koblex_tasks/koblex"]) is None
    )  # not ours, an option value
    assert "did you mean 'koblex_tasks/legit'" in str(task_line(none_found, ["koblex_tasks/legti"]))


def test_replay_of_a_folder_says_it_is_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "released"
    folder.mkdir()
    run = koblex_cli("replay", str(folder), cwd=tmp_path)
    assert (
        run.returncode == 2
        and run.line == f"koblex replay: error: {folder}: is a folder, not a file: name one of its files"
    )
