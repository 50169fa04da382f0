"""The log's protocol record names every official behaviour the conformance fixtures prove, and its switch."""

import pytest

from koblex_tasks._inspect_compat import solver_params
from koblex_tasks.benchmarks.koblex.protocol import (
    SCRIPT_SWITCHES,
    SOLVER_SETTINGS,
    protocol_of,
    run_settings,
)
from koblex_tasks.benchmarks.koblex.spec import GENERATION, KOBLEX, PAPER_RERANKER
from koblex_tasks.solvers.koblex.beamaggr import beamaggr
from koblex_tasks.solvers.koblex.flare import flare
from koblex_tasks.solvers.koblex.ircot import ircot
from koblex_tasks.solvers.koblex.one_time_retrieval import one_time_retrieval
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.solvers.koblex.self_ask import self_ask

TASK = {
    "tokenizer": "official",
    "reranker": PAPER_RERANKER,
    "retrieval": "bm25",
    "bm25_order": "bm25s",
    "chat_format": "system_user",
    "generation": GENERATION,
}
TRACED_SELF_ASK = "retrieve_every_follow_up"  # not a script behaviour (the script retrieves once too)
TRACED_FOREST = "first_tree_only"  # our earlier behaviour, off: the traces' forest rows predict every root's
SOLVERS = {
    "parser": parser,
    "ircot": ircot,
    "flare": flare,
    "one_time_retrieval": one_time_retrieval,
    "self_ask": self_ask,
    "beamaggr": beamaggr,
}


def test_the_paper_protocol_names_the_vllm_scripts_settings() -> None:
    vllm = KOBLEX.paper_protocol["generation"]["system_user"]
    assert vllm["chat_template_kwargs"] == {"enable_thinking": False}
    assert set(vllm["seed"].values()) == {0, 1} and vllm["seed"]["tree"] == 1
    assert "seed" not in KOBLEX.paper_protocol["generation"]["user"]  # no OpenAI call sends one
    assert (
        KOBLEX.paper_protocol["bm25_order"] == "bm25s"
        and KOBLEX.paper_protocol["reranker_max_length"] is None
    )


@pytest.mark.parametrize(
    ("solver", "switch"),
    [
        (s, n)
        for s, names in SOLVER_SETTINGS.items()
        for n in names
        if n.startswith("official_") and s != "parser"  # ParSeR: its original scripts (below)
    ],
)
def test_each_kept_bug_is_the_default_and_turning_it_off_is_recorded(solver: str, switch: str) -> None:
    defaults = solver_params(SOLVERS[solver]())
    assert defaults[switch] is True and KOBLEX.paper_protocol[switch] is True
    paper = protocol_of(run_settings(TASK, f"koblex_tasks/{solver}", defaults))
    off = protocol_of(run_settings(TASK, f"koblex_tasks/{solver}", {**defaults, switch: False}))
    assert switch not in (paper if isinstance(paper, dict) else {})
    assert isinstance(off, dict) and off[switch] == {"value": False, "paper": True}


@pytest.mark.parametrize(
    ("solver", "switch"),
    [
        (s, n)
        for s, names in SOLVER_SETTINGS.items()
        for n in names
        if n in (*SCRIPT_SWITCHES, TRACED_SELF_ASK, TRACED_FOREST)
    ],
)
def test_each_traced_default_is_the_papers_and_the_script_behaviour_is_recorded(
    solver: str, switch: str
) -> None:
    """The traces' behaviour is the default (off); switching a script behaviour on leaves the paper's protocol."""
    defaults = solver_params(SOLVERS[solver]())
    assert defaults[switch] is False and KOBLEX.paper_protocol[switch] is False
    on = protocol_of(run_settings(TASK, f"koblex_tasks/{solver}", {**defaults, switch: True}))
    assert isinstance(on, dict) and on[switch] == {"value": True, "paper": False}
    paper = protocol_of(run_settings(TASK, f"koblex_tasks/{solver}", defaults))
    assert switch not in (paper if isinstance(paper, dict) else {})


def test_one_time_retrieval_takes_the_gold_count_by_default() -> None:
    assert solver_params(one_time_retrieval())["k"] == "gold"


def test_parser_defaults_are_the_original_scripts_and_the_refactored_ones_are_recorded() -> None:
    defaults = solver_params(parser())
    assert defaults["official_scripts"] == "original" == KOBLEX.paper_protocol["official_scripts"]
    assert (
        defaults["official_selection_bug"] is False
        and KOBLEX.paper_protocol["official_selection_bug"] is False
    )
    assert protocol_of(run_settings(TASK, "koblex_tasks/parser", defaults)) == "paper"
    refactored = {**defaults, "official_scripts": "refactored", "official_selection_bug": True}
    assert protocol_of(run_settings(TASK, "koblex_tasks/parser", refactored)) == {
        "official_scripts": {"value": "refactored", "paper": "original"},
        "official_selection_bug": {"value": True, "paper": False},
    }


def test_float64_bm25_order_is_not_the_papers() -> None:
    assert protocol_of(run_settings({**TASK, "bm25_order": "float64"}, "koblex_tasks/parser", {})) == {
        "bm25_order": {"value": "float64", "paper": "bm25s"}
    }
