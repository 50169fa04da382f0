"""KoBLEX's method grid (Table 2, and Tables 3-6 as `--table`): every method with the paper's protocol, the model families, the released runs.

Plain data (see `koblex_tasks.spec`). The solvers' and the task's defaults are the paper's protocol, so
a method lists only what differs from them: CoT + one-time retrieval's `cot`, FLARE's threshold per model group
(the official `run_flare.sh`: GPT-4o -0.70, Qwen3 -0.60, EXAONE-3.5 -1.5), and the GPT-4o rows' chat format
(the official OpenAI scripts send one user message; the vLLM scripts behind the Qwen3 and EXAONE rows a system
and a user turn, the task's default).

Model families are matched on the model name's last path segment, case-insensitively:
`gpt-4o` and its dated snapshots (not `gpt-4o-mini`) -> gpt4o; `qwen3-32b*` -> qwen_32b; `qwen3-8b*` -> qwen_8b;
`exaone-3.5-32b*` / `exaone3.5:32b*` -> exaone_32b; `exaone-3.5-7.8b*` / `exaone3.5:7.8b*` -> exaone_7.8b.

Released files are `results/<method>_<family>.jsonl` of daehuikim/KoBLEX, with irregular spellings
(`selfask_gpt4o` but `self-ask_qwen_32b`, `parser_qwen32b`); the open models' ParSeR files were released as JSONL
at a later commit than the rest (they were `.txt` at the first).
"""

from dataclasses import replace

from koblex_tasks.spec import MethodGrid, MethodSpec, ModelFamily, PaperTable, ReleasedRuns

FIRST_RELEASE = "1863e1b5431d8824836331805661d8f8667c0bd7"
PARSER_JSONL_RELEASE = "3e6507a998bc232deb388317ec0074efdfe5bce1"

FAMILIES = (
    ModelFamily(
        "gpt4o",
        "GPT-4o",
        ("gpt-4o", "gpt-4o-20??-??-??"),
        group="gpt-4o",
        released=("gpt4o",),
        task_args={"chat_format": "user"},
    ),
    ModelFamily("qwen_32b", "Qwen3-32B", ("qwen3-32b", "qwen3-32b-*"), "qwen3", ("qwen_32b", "qwen32b")),
    ModelFamily("qwen_8b", "Qwen3-8B", ("qwen3-8b", "qwen3-8b-*"), "qwen3", ("qwen_8b", "qwen8b")),
    ModelFamily(
        "exaone_32b", "EXAONE-3.5-32B", ("exaone-3.5-32b*", "exaone3.5:32b*"), "exaone", ("exaone_32b",)
    ),
    ModelFamily(
        "exaone_7.8b", "EXAONE-3.5-7.8B", ("exaone-3.5-7.8b*", "exaone3.5:7.8b*"), "exaone", ("exaone_7.8b",)
    ),
)

METHODS = (
    MethodSpec(
        "standard_prompting", "Standard prompting", "koblex_tasks/standard_prompting", released=("sp",)
    ),
    MethodSpec("chain_of_thought", "CoT", "koblex_tasks/chain_of_thought", released=("cot",)),
    MethodSpec(
        "one_time_retrieval",
        "One-time retrieval",
        "koblex_tasks/one_time_retrieval",
        released=("sp_or",),
        note="one-time retrieval takes as many provisions as each item has gold ones, as the released rows "
        "did (only the count reaches the solver; -S one_time_retrieval.k=3 for a fixed depth)",
    ),
    MethodSpec(
        "cot_one_time_retrieval",
        "CoT + one-time retrieval",
        "koblex_tasks/one_time_retrieval",
        args={"cot": True},
        released=("cot_or",),
    ),
    MethodSpec("self_ask", "Self-Ask", "koblex_tasks/self_ask", released=("selfask", "self-ask")),
    MethodSpec("ircot", "IRCoT", "koblex_tasks/ircot", released=("ircot",)),
    MethodSpec(
        "flare",
        "FLARE",
        "koblex_tasks/flare",
        group_args={
            "gpt-4o": {"threshold": -0.70},
            "qwen3": {"threshold": -0.60},
            "exaone": {"threshold": -1.5},
        },
        released=("flare",),
        note="FLARE's threshold is set per model family; other models keep the solver's default",
    ),
    MethodSpec("probtree", "ProbTree", "koblex_tasks/probtree", released=("probtree",)),
    MethodSpec("beamaggr", "BeamAggr", "koblex_tasks/beamaggr", released=("beamaggr",)),
    MethodSpec("parser", "ParSeR", "koblex_tasks/parser", released=("parser",)),
)

# The paper's other tables: ParSeR's rows, each one switch away from the full method (the baseline every row is
# paired with). The paper's cells of these tables are not public in any file we can check (no released run, no
# machine-readable table): `published` stays empty and the report says "not public" rather than a number.
PARSER = "koblex_tasks/parser"
FULL_PARSER = MethodSpec("parser", "ParSeR (full)", PARSER)
NOT_PUBLIC = (
    "the paper's cells of this table are not public here: the report shows your runs and their paired tests"
)


def parser_row(key: str, label: str, task_args: dict[str, str] | None = None, **args: object) -> MethodSpec:
    return MethodSpec(key, label, PARSER, args=args, task_args=task_args or {})


TABLES = (
    PaperTable(
        "3",
        "KoBLEX Table 3 (ParSeR ablation)",
        (
            FULL_PARSER,
            parser_row("no_selection", "w/o selection", select=False),
            parser_row("no_rerank", "w/o reranking", rerank=False),
            parser_row("no_rerank_no_selection", "w/o reranking and selection", rerank=False, select=False),
            parser_row("no_parametric", "w/o parametric provisions", queries="question"),
            replace(
                parser_row(
                    "equal_budget", "question x guesses (equal budget)", queries="question", equal_budget=True
                ),
                in_table=False,
                note="equal budget: the question sent as many times as the model wrote guesses (not in the paper)",
            ),
        ),
        baseline="parser",
        note=NOT_PUBLIC,
    ),
    PaperTable(
        "4",
        "KoBLEX Table 4 (retriever)",
        (
            replace(FULL_PARSER, label="ParSeR, sparse (BM25)"),
            parser_row("parser_dense", "ParSeR, dense (BGE-M3)", {"retrieval": "dense"}),
            parser_row("parser_hybrid", "ParSeR, hybrid (RRF)", {"retrieval": "hybrid"}),
        ),
        baseline="parser",
        note=NOT_PUBLIC,
    ),
    PaperTable(
        "5",
        "KoBLEX Table 5 (retrieval scope k)",
        (
            parser_row("parser_k50", "ParSeR, k=50", k=50),
            replace(FULL_PARSER, label="ParSeR, k=100"),
            parser_row("parser_k200", "ParSeR, k=200", k=200),
            parser_row("parser_k300", "ParSeR, k=300", k=300),
        ),
        baseline="parser",
        note=NOT_PUBLIC,
    ),
    PaperTable(
        "6",
        "KoBLEX Table 6 (rerank scope l)",
        (
            parser_row("parser_l1", "ParSeR, l=1", l=1),
            parser_row("parser_l5", "ParSeR, l=5", l=5),
            replace(FULL_PARSER, label="ParSeR, l=10"),
            parser_row("parser_l20", "ParSeR, l=20", l=20),
        ),
        baseline="parser",
        note="the paper's sweep values for l are not public: l in {1, 5, 10, 20} is this package's choice "
        "(10 is the paper's protocol); " + NOT_PUBLIC,
    ),
)

KOBLEX_GRID = MethodGrid(
    benchmark="koblex",
    table="KoBLEX Table 2",
    methods=METHODS,
    families=FAMILIES,
    released=ReleasedRuns(
        repo="daehuikim/KoBLEX",
        folder="results",
        commit=FIRST_RELEASE,
        commits={
            f"parser_{family}.jsonl": PARSER_JSONL_RELEASE
            for family in ("qwen32b", "qwen_8b", "exaone_32b", "exaone_7.8b")
        },
        shared_task_args=("data", "official"),
        requires={"lang": "ko"},
        judge_arg="grader",
    ),
    tables=TABLES,
)
