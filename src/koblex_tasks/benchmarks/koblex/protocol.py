"""Which protocol a KoBLEX run follows: its settings compared with the spec's `paper_protocol`.

The task records `"protocol": "paper"` when every setting matches, else a mapping of each differing setting to
`{"value": <this run's>, "paper": <the paper's>}`. Settings are those of the task and of the solver it was built
with (a `--solver` given on the command line replaces the solver after the task is built: the log's
`eval.solver` and `eval.solver_args` say which ran, and `protocol_of` can be applied to them).
"""

from collections.abc import Mapping
from typing import Any

from koblex_tasks.benchmarks.koblex.spec import GENERATION, KOBLEX, PAPER_RERANKER

# Each solver's own protocol settings: ParSeR's depths, and the released scripts' bugs the paper's protocol
# keeps (`koblex conformance` proves them call for call) with the switch that turns each off.
SOLVER_SETTINGS: dict[str, tuple[str, ...]] = {
    "parser": (
        "k",
        "l",
        "official_scripts",
        "official_selection_bug",
        "rerank",
        "select",
        "queries",
        "equal_budget",
    ),
    "ircot": (
        "official_marker_bug",
        "script_prompt",
        "script_final_stop",
        "script_drops_punctuation",
        "script_final_prompt",
    ),
    "flare": (
        "official_threshold_bug",
        "official_mask_bug",
        "script_stops_at_marker",
        "script_question_once",
        "script_drops_punctuation",
        "script_final_prompt",
    ),
    "self_ask": ("retrieve_every_follow_up", "script_reasks", "script_answer_join"),
    "beamaggr": ("official_first_answer", "first_tree_only"),
    "one_time_retrieval": ("official_answer_prefix_bug", "script_answer_marker"),
}
# The released scripts' behaviours that the released traces contradict (the traces made the paper's numbers,
# so the paper's protocol follows them): each a solver switch, off in the paper's protocol.
SCRIPT_SWITCHES = (
    "script_prompt",
    "script_final_stop",
    "script_drops_punctuation",
    "script_stops_at_marker",
    "script_question_once",
    "script_answer_marker",
    "script_final_prompt",
    "script_reasks",
    "script_answer_join",
)
# Protocol facts that are not a setting of the run: LF-Eval's grader role; the reranker's input limit (no
# max_length, as the official code: fixed in `corpus.rerank`, listed so "paper" says what it means).
NOT_RUN_SETTINGS = ("judge", "reranker_max_length")
SINGLE_MESSAGE_PROMPTS = "v1"
# Settings where the paper ran more than one value: each chat format the spec has generation settings for
# (system_user: the vLLM scripts' rows; user: the OpenAI scripts' GPT-4o rows) is the paper's protocol on the
# backend the paper sent it to, and "auto" picks that one per provider. The task names any other pairing
# (a forced format on the other kind of server, a provider with no rule) as a value of its own.
PAPER_ALTERNATIVES: dict[str, tuple[Any, ...]] = {"chat_format": (*GENERATION, "auto")}
# What a user adds to every request beyond the task's settings (`-M` model arguments, the run's own
# `extra_body`): passed as given, always a deviation (the paper sent none).
USER_REQUEST_SETTINGS = ("model_args", "extra_body")


def paper_reranker(name: str | None) -> str:
    """The reranker a setting names, with the paper's aliases resolved ("bge", "paper" -> the model id)."""
    return PAPER_RERANKER if name in ("bge", "paper") else str(name or "none")


def run_settings(task: Mapping[str, Any], solver_name: str, solver_args: Mapping[str, Any]) -> dict[str, Any]:
    """The protocol settings of a run: the task's, with the solver's overrides applied."""
    short = solver_name.rsplit("/", 1)[-1]
    settings: dict[str, Any] = {
        "solver": short,
        "tokenizer": solver_args.get("tokenizer") or task["tokenizer"],
        "reranker": paper_reranker(solver_args.get("reranker") or task["reranker"]),
        "retrieval": task["retrieval"],
        "bm25_order": task.get("bm25_order", KOBLEX.paper_protocol["bm25_order"]),
        "chat_format": task["chat_format"],
        "generation": task["generation"],
        "judge_prompt": task.get("judge_prompt", "deepeval"),
        "judge_context": task.get("judge_context", "gold"),
        "judge_reference": task.get("judge_reference", True),
        "reranker_dtype": task.get("reranker_dtype", KOBLEX.paper_protocol["reranker_dtype"]),
        "reranker_url": task.get("reranker_url"),
    }
    if solver_args.get("prompt_version") == SINGLE_MESSAGE_PROMPTS:
        settings["chat_format"] = "user"
    own = SOLVER_SETTINGS.get(short, ())
    settings.update({name: solver_args[name] for name in own if name in solver_args})
    settings.update({name: task[name] for name in USER_REQUEST_SETTINGS if task.get(name)})
    return settings


def protocol_of(settings: Mapping[str, Any]) -> str | dict[str, dict[str, Any]]:
    """ "paper", or each setting that differs from the paper's protocol with both values."""
    paper = KOBLEX.paper_protocol
    differs = {
        name: {"value": settings[name], "paper": paper[name]}
        for name in paper
        if name not in NOT_RUN_SETTINGS
        and name in settings
        and settings[name] != paper[name]
        and settings[name] not in PAPER_ALTERNATIVES.get(name, ())
    }
    differs.update(
        {
            name: {"value": settings[name], "paper": None}
            for name in USER_REQUEST_SETTINGS
            if settings.get(name)
        }
    )
    return differs or "paper"
