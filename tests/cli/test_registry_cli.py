"""The package as users meet it: registry names resolve, `inspect eval` runs from the command line."""

from pathlib import Path

import pytest
from inspect_ai._util.registry import registry_lookup
from inspect_ai.log import EvalLog, read_eval_log

from tests.inspect_cli import inspect_eval_cli


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("task", "koblex_tasks/koblex"),
        ("solver", "koblex_tasks/parser"),
        ("solver", "koblex_tasks/one_time_retrieval"),
        ("solver", "koblex_tasks/standard_prompting"),
        ("solver", "koblex_tasks/chain_of_thought"),
        ("solver", "koblex_tasks/replay"),
        ("solver", "koblex_tasks/self_ask"),
        ("solver", "koblex_tasks/ircot"),
        ("solver", "koblex_tasks/flare"),
        ("solver", "koblex_tasks/probtree"),
        ("solver", "koblex_tasks/beamaggr"),
        ("task", "koblex_tasks/legit"),
        ("solver", "koblex_tasks/legit_predict"),
        ("solver", "koblex_tasks/legit_rag"),
        ("scorer", "koblex_tasks/legit_rubric"),
        ("scorer", "koblex_tasks/provision_match"),
        ("scorer", "koblex_tasks/token_f1"),
        ("scorer", "koblex_tasks/lf_eval"),
        ("tool", "koblex_tasks/search_statutes"),
    ],
)
def test_registry_names_resolve(kind: str, name: str) -> None:
    assert registry_lookup(kind, name) is not None  # type: ignore[arg-type]


def run_inspect_eval(tmp_path: Path, *args: str) -> EvalLog:
    """`inspect eval ARGS` in a subprocess, as a user types it; returns the single JSON log it wrote."""
    logs = tmp_path / "logs"
    proc = inspect_eval_cli(*args, "--display", "none", "--log-format", "json", log_dir=logs)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [log_file] = list(logs.glob("*.json"))
    return read_eval_log(str(log_file))


@pytest.mark.slow
def test_inspect_eval_cli_with_scripted_provider(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    log = run_inspect_eval(
        tmp_path,
        "koblex_tasks/koblex",
        "--model",
        "koblexmock/scripted",
        "-T",
        f"data={tiny_questions}",
        "-T",
        f"corpus={tiny_corpus}",
        "-T",
        "tokenizer=official",
        "-T",
        "reranker=none",
        "--solver",
        "koblex_tasks/parser",
        "-S",
        "k=5",
        "-S",
        "l=3",
    )
    assert log.status == "success"
    assert log.eval.task == "koblex_tasks/koblex" and log.eval.solver == "koblex_tasks/parser"
    assert log.eval.solver_args == {"k": 5, "l": 3}
    assert log.eval.metadata["retrieval"]["tokenizer"] == "official"
    assert len(log.samples) == 2
    assert all(s.store.get("ProvisionEvidence:method") == "parser" for s in log.samples)
    assert "lf_eval" not in {s.name for s in log.results.scores}  # no grader bound: no judge scorer


@pytest.mark.slow
def test_grader_role_adds_lf_eval(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    """A bound grader adds LF-Eval, scored from the scripted judge's token probabilities."""
    log = run_inspect_eval(
        tmp_path,
        "koblex_tasks/koblex",
        "--model",
        "koblexmock/m",
        "--model-role",
        "grader=koblexmock/judge",
        "-T",
        f"data={tiny_questions}",
        "-T",
        f"corpus={tiny_corpus}",
        "-T",
        "reranker=none",
        "--solver",
        "koblex_tasks/standard_prompting",
    )
    lf = next(s for s in log.results.scores if s.name == "lf_eval")
    assert lf.metrics["mean"].value == 70.0
    meta = log.samples[0].scores["lf_eval"].metadata
    assert meta["mode"] == "logprobs" and meta["judge_model"].startswith("koblexmock/judge")


TABLE_2 = [
    "standard_prompting",
    "chain_of_thought",
    "one_time_retrieval",
    "self_ask",
    "ircot",
    "flare",
    "probtree",
    "beamaggr",
    "parser",
]


@pytest.mark.parametrize("solver", TABLE_2)
def test_every_table_2_method_runs_on_the_shared_data(shared_data: Path, tmp_path: Path, solver: str) -> None:
    """`--solver koblex_tasks/<name>` on the real questions and corpus with the shipped scripted provider."""
    from inspect_ai import eval as inspect_eval

    [log] = inspect_eval(
        "koblex_tasks/koblex",
        task_args={
            "data": str(shared_data / "koblex" / "koblex.jsonl"),
            "corpus": str(shared_data / "koblex" / "statutes.jsonl"),
            "reranker": "none",
        },
        solver=registry_lookup("solver", f"koblex_tasks/{solver}")(),  # type: ignore[misc]
        model="koblexmock/m",
        limit=3,
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    assert all(s.error is None for s in log.samples)
    assert {s.store.get("ProvisionEvidence:method") for s in log.samples} == {solver}
