"""The grid as declared data and the runs a command line plans: families, per-method and per-family arguments."""

import pytest
from inspect_ai.util import registry_info

import koblex_tasks._registry  # noqa: F401  (registers the solvers)
from koblex_tasks.benchmarks.koblex.methods import KOBLEX_GRID
from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.benchmarks.legit.methods import LEGIT_GRID
from koblex_tasks.benchmarks.legit.spec import LEGIT
from koblex_tasks.grid.plan import grid_for, match_family, plan_grid, select_methods, solver_overrides
from koblex_tasks.grid.released import candidate_names
from koblex_tasks.spec import MethodGrid, MethodSpec, ModelFamily

# Table 2's methods in order, each with how the paper's released files spell it.
TABLE_2 = {
    "standard_prompting": ("sp",),
    "chain_of_thought": ("cot",),
    "one_time_retrieval": ("sp_or",),
    "cot_one_time_retrieval": ("cot_or",),
    "self_ask": ("selfask", "self-ask"),
    "ircot": ("ircot",),
    "flare": ("flare",),
    "probtree": ("probtree",),
    "beamaggr": ("beamaggr",),
    "parser": ("parser",),
}


def test_each_benchmark_finds_its_grid() -> None:
    assert grid_for(KOBLEX) is KOBLEX_GRID
    assert grid_for(LEGIT) is LEGIT_GRID


def test_koblex_grid_is_table_2_with_registered_solvers() -> None:
    from inspect_ai.util import registry_create

    assert {m.key: m.released for m in KOBLEX_GRID.table_methods} == TABLE_2
    assert [m.key for m in KOBLEX_GRID.table_methods] == list(TABLE_2)
    for method in KOBLEX_GRID.methods:
        solver = registry_create("solver", method.solver, **method.args)
        assert registry_info(solver).name == method.solver
    assert KOBLEX_GRID.method("cot_one_time_retrieval").args == {"cot": True}
    assert [m.key for m in LEGIT_GRID.table_methods] == ["predict"]  # rag is an extra


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("openai/gpt-4o", "gpt4o"),
        ("openai/gpt-4o-2024-08-06", "gpt4o"),
        ("openai/azure/GPT-4o", "gpt4o"),
        ("koblexmock/gpt-4o", "gpt4o"),
        ("openai/gpt-4o-mini", None),
        ("openai/gpt-4.1", None),
        ("vllm/Qwen/Qwen3-32B", "qwen_32b"),
        ("openai-api/box1/Qwen/Qwen3-32B-AWQ", "qwen_32b"),
        ("hf/Qwen/Qwen3-8B", "qwen_8b"),
        ("vllm/Qwen/Qwen3-30B-A3B", None),
        ("vllm/LGAI-EXAONE/EXAONE-3.5-32B-Instruct", "exaone_32b"),
        ("ollama/exaone3.5:7.8b", "exaone_7.8b"),
        ("vllm/LGAI-EXAONE/EXAONE-4.0-32B", None),
    ],
)
def test_model_family_rules(model: str, family: str | None) -> None:
    found = match_family(model, KOBLEX_GRID.families)
    assert (found.key if found else None) == family


def test_plan_applies_method_group_family_and_user_arguments() -> None:
    methods = select_methods(KOBLEX_GRID, ["flare", "parser"])
    overrides = solver_overrides(KOBLEX_GRID, {"parser.k": 50})
    runs = plan_grid(
        KOBLEX_GRID,
        ["openai/gpt-4o", "vllm/Qwen/Qwen3-8B", "vllm/LGAI-EXAONE/EXAONE-3.5-7.8B-Instruct", "openai/o3"],
        methods,
        {"reranker": "none"},
        overrides,
    )
    by = {(r.model.rsplit("/", 1)[-1], r.method.key): r for r in runs}
    assert by[("gpt-4o", "flare")].solver_args == {"threshold": -0.70}
    assert by[("Qwen3-8B", "flare")].solver_args == {"threshold": -0.60}
    assert by[("EXAONE-3.5-7.8B-Instruct", "flare")].solver_args == {"threshold": -1.5}
    assert by[("o3", "flare")].solver_args == {}  # no family: the solver's default
    assert by[("gpt-4o", "parser")].solver_args == {"k": 50}
    # the GPT-4o rows ran the OpenAI scripts (one user message); -T applies to every run
    assert by[("gpt-4o", "parser")].task_args == {"chat_format": "user", "reranker": "none"}
    assert by[("Qwen3-8B", "parser")].task_args == {"reranker": "none"}
    user_wins = plan_grid(KOBLEX_GRID, ["openai/gpt-4o"], methods, {"chat_format": "system_user"})
    assert user_wins[0].task_args == {"chat_format": "system_user"}


def test_methods_by_key_or_released_spelling_in_table_order() -> None:
    assert [m.key for m in select_methods(KOBLEX_GRID, ["parser", "sp", "self-ask"])] == [
        "standard_prompting",
        "self_ask",
        "parser",
    ]
    assert select_methods(LEGIT_GRID, None) == LEGIT_GRID.table_methods


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: select_methods(KOBLEX_GRID, ["rag"]), "has no method 'rag'"),
        (lambda: solver_overrides(KOBLEX_GRID, {"threshold": 1}), "name the method"),
        (lambda: solver_overrides(KOBLEX_GRID, {"nope.k": 1}), "has no method 'nope'"),
        (lambda: plan_grid(KOBLEX_GRID, [], KOBLEX_GRID.methods), "no model"),
        (lambda: plan_grid(KOBLEX_GRID, ["a/b", "a/b"], KOBLEX_GRID.methods), "named twice"),
        (
            lambda: plan_grid(
                KOBLEX_GRID, ["a/b"], select_methods(KOBLEX_GRID, ["sp"]), None, {"parser": {"k": 1}}
            ),
            "not in this grid run",
        ),
    ],
)
def test_bad_requests_are_one_clear_error(call, message: str) -> None:
    with pytest.raises((ValueError, LookupError), match=message):
        call()


def test_released_file_names_cover_the_irregular_spellings() -> None:
    qwen32 = next(f for f in KOBLEX_GRID.families if f.key == "qwen_32b")
    gpt4o = next(f for f in KOBLEX_GRID.families if f.key == "gpt4o")
    assert "parser_qwen32b.jsonl" in candidate_names(KOBLEX_GRID.method("parser"), qwen32)
    assert "self-ask_qwen_32b.jsonl" in candidate_names(KOBLEX_GRID.method("self_ask"), qwen32)
    assert candidate_names(KOBLEX_GRID.method("self_ask"), gpt4o)[0] == "selfask_gpt4o.jsonl"
    source = KOBLEX_GRID.released
    assert source is not None
    assert source.commit_of("parser_qwen32b.jsonl") != source.commit_of("parser_gpt4o.jsonl")
    assert source.url("sp_gpt4o.jsonl").startswith("https://raw.githubusercontent.com/daehuikim/KoBLEX/")


def test_grid_declarations_are_checked() -> None:
    method = MethodSpec("m", "M", "koblex_tasks/parser", group_args={"nope": {"k": 1}})
    with pytest.raises(ValueError, match="unknown model groups"):
        MethodGrid("x", "X", (method,), (ModelFamily("f", "F", ("f",), "g"),))
    with pytest.raises(ValueError, match="declared twice"):
        MethodGrid("x", "X", (MethodSpec("m", "M", "s"), MethodSpec("m", "M2", "s")))
