"""KoBLEX's spec: the task's facts in one place (see `koblex_tasks.spec`)."""

from typing import Any

from koblex_tasks.spec import BenchmarkSpec, ScorerSpec, StratumSpec, ValueSpec, register_benchmark

PAPER_RERANKER = "dragonkue/bge-reranker-v2-m3-ko"  # the cross-encoder of the official scripts

# Generation settings of the official scripts per chat format, and max_tokens per model call ("stage"):
# ParSeR's parametric provisions, selection and answer; the closed-book and one-time-retrieval answers use
# "answer". vLLM scripts: SamplingParams(temperature=0.0, top_p=0.9, max_tokens=4000 | 2048 for the selection).
# OpenAI scripts: one request shape for every call (temperature 0.01, top_p 0.9, max_tokens 2000).
STAGES = ("provisions", "selection", "answer")
GENERATION: dict[str, dict[str, Any]] = {
    "system_user": {
        "temperature": 0.0,
        "top_p": 0.9,
        "max_tokens": {"provisions": 4000, "selection": 2048, "answer": 4000},
    },
    "user": {
        "temperature": 0.01,
        "top_p": 0.9,
        "max_tokens": {"provisions": 2000, "selection": 2000, "answer": 2000},
    },
}

# The paper's statute pool (JihyungL/KoBLEX-statute): a smaller local corpus makes a run "partial".
FULL_CORPUS_SIZE = 233_544

PROVISION_MATCH = ScorerSpec(
    name="provision_match",
    values=(
        ValueSpec("provision_precision", "Provision P", 0.0, 1.0, scale=100, primary=False),
        ValueSpec("provision_recall", "Provision R", 0.0, 1.0, scale=100, primary=False),
        ValueSpec("provision_f1", "Provision F1", 0.0, 1.0, scale=100),
        ValueSpec("provision_em", "Provision EM", 0.0, 1.0, scale=100, kind="binary"),
    ),
)
TOKEN_F1 = ScorerSpec(
    name="token_f1",
    values=(
        ValueSpec("token_f1", "Token F1", 0.0, 1.0, scale=100),
        ValueSpec(
            "empty_answer",
            "Empty answers %",
            0.0,
            1.0,
            scale=100,
            higher_is_better=False,
            primary=False,
            kind="binary",
        ),
    ),
)
LF_EVAL = ScorerSpec(
    name="lf_eval",
    values=(ValueSpec("lf_eval", "LF-Eval", 0.0, 100.0),),
    judge=True,
    required=False,  # only when a judge is bound
)

KOBLEX = register_benchmark(
    BenchmarkSpec(
        name="koblex",
        title="KoBLEX",
        task="koblex_tasks/koblex",
        version="1.0.0",
        scorers=(PROVISION_MATCH, TOKEN_F1, LF_EVAL),
        # The number of gold provisions (the paper's 55/125/46 split), not the file's own `n_hops`.
        stratum=StratumSpec("hop_count", "hops", name_template="hop{group_name}"),
        headline=("provision_f1", "provision_em", "token_f1"),
        ranking="provision_f1",
        variants={"official_scoring": "official scoring"},
        subset_args=("hops",),
        replay_solvers=("koblex_tasks/replay",),
        full_corpus_size=FULL_CORPUS_SIZE,
        paper_protocol={
            "solver": "parser",
            "k": 100,
            "l": 10,
            "official_selection_bug": False,  # the paper's method; True reproduces the released code's bug
            "tokenizer": "official",
            "reranker": PAPER_RERANKER,
            "retrieval": "bm25",
            # The vLLM scripts (Qwen3, EXAONE rows) send a system and a user turn; the OpenAI scripts (GPT-4o rows)
            # one user message holding both. Either is the paper's protocol with its own generation settings.
            "chat_format": "system_user",
            "generation": GENERATION,
            "judge": "openai/gpt-4o (DeepEval GEval, five evaluation steps)",
        },
        dataset_fingerprints={
            # fingerprint_records() of the 226 questions, identical to the paper's experiments/source/koblex.jsonl
            "a2557f4675c72a1af5cdea69245bb35af680c1637858d9c0fd5bf102b62abdff": (
                "the paper's 226 KoBLEX questions (experiments/source/koblex.jsonl)"
            ),
        },
        official_size=226,
    )
)
