"""Every deterministic KoBLEX value is re-derivable from the log: `rederive` reproduces the stored scores
of real replay logs and of a live ParSeR run, and disagrees once a stored value is edited."""

import math
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, read_eval_log

from koblex_tasks.scorers.koblex.provision_match import rederive as provision_rederive
from koblex_tasks.scorers.koblex.token_f1 import rederive as token_f1_rederive
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.solvers.koblex.replay import replay
from koblex_tasks.tasks.koblex.task import koblex
from koblex_tasks.tasks.replay import run_replay_eval
from tests.solvers.koblex.scripted import ScriptedModel, run_koblex

REDERIVE = {"provision_match": provision_rederive, "token_f1": token_f1_rederive}


def scorer_params(log: EvalLog) -> dict[str, dict[str, Any]]:
    """Each scorer's logged arguments, by short name."""
    return {s.name.rsplit("/", 1)[-1]: dict(s.options or {}) for s in log.eval.scorers or []}


def same(a: float | None, b: float | None) -> bool:
    if a is None or b is None or math.isnan(a) or math.isnan(b):
        return (a is None or math.isnan(a)) and (b is None or math.isnan(b))
    return a == b


def check_log(log: EvalLog) -> int:
    """Assert rederive == stored for every sample and scorer; return the number of values compared."""
    params, compared = scorer_params(log), 0
    for sample in log.samples or []:
        for name, rederive in REDERIVE.items():
            score = (sample.scores or {})[name]
            stored = score.value if isinstance(score.value, dict) else None
            derived = rederive(sample, score, params[name])
            for key, value in derived.items():
                assert same(value, stored[key] if stored else None), (sample.id, name, key)
                compared += 1
    return compared


def edited_disagrees(log: EvalLog) -> None:
    sample = next(s for s in log.samples or [] if isinstance(s.scores["token_f1"].value, dict))
    score = sample.scores["token_f1"].model_copy(deep=True)
    score.value = {**score.value, "token_f1": score.value["token_f1"] + 0.5}  # type: ignore[dict-item]
    derived = token_f1_rederive(sample, score, scorer_params(log)["token_f1"])
    assert derived["token_f1"] != score.value["token_f1"]  # type: ignore[index]
    stored = sample.scores["provision_match"].value
    if isinstance(stored, dict):  # edit the evidence: the stored value no longer follows from the log
        gold = list(sample.scores["provision_match"].metadata["gold"])  # the gold it was scored with
        edit = ["edited"] if stored["provision_em"] == 1.0 else gold
        sample.store["ProvisionEvidence:predicted"] = edit
        assert provision_rederive(sample, sample.scores["provision_match"], {}) != stored


def test_rederive_reproduces_the_replay_logs(replay_logs: dict[str, Path]) -> None:
    for path in replay_logs.values():
        log = read_eval_log(str(path))
        assert check_log(log) > 0
    edited_disagrees(read_eval_log(str(replay_logs["parser_gpt4o"])))


@pytest.mark.parametrize("stem", ["parser_gpt4o", "cot_or_gpt4o", "selfask_gpt4o"])
def test_rederive_on_a_replay_built_with_its_solver(shared_data: Path, tmp_path: Path, stem: str) -> None:
    """A replay through the task built with the replay solver (no corpus, no reranker needed)."""
    file = str(shared_data / "koblex" / "released_gpt4o" / f"{stem}.jsonl")
    data = str(shared_data / "koblex" / "koblex.jsonl")
    solver = replay(file=file, data=data)
    log = run_replay_eval(
        koblex(data=data, official=True, solver=solver),
        solver,
        "gpt-4o",
        str(tmp_path),
        metadata={"replay_file": file},
    )
    assert check_log(read_eval_log(log.location)) >= 226 * 6
    answers = [s.scores["token_f1"].answer for s in log.samples or []]
    completions = [s.output.completion[:800] for s in log.samples or []]
    assert answers == completions  # a released answer is scored as written (no "Answer:" extraction)
    edited_disagrees(read_eval_log(log.location))


def test_rederive_on_a_live_parser_run(tiny_questions: Path, tiny_corpus: Path) -> None:
    guesses = '["형법 (강도상해) 강도가 사람을 상해하거나", "형법 (준강도) 절도가 폭행"]'
    model = ScriptedModel(
        lambda kind, p: {"provisions": guesses, "select": "Answer: 1"}.get(kind, "Reasoning: r\nAnswer: 처벌")
    )
    log = run_koblex(parser(), model.model(), tiny_questions, tiny_corpus, tokenizer="kiwi", official=True)
    log = read_eval_log(log.location)
    assert check_log(log) == 2 * 6
    edited_disagrees(log)
