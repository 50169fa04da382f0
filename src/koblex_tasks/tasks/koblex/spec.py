"""KoBLEX's spec: the task's facts in one place (see `koblex_tasks.spec`)."""

from koblex_tasks.spec import BenchmarkSpec, ScorerSpec, StratumSpec, ValueSpec, register_benchmark

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
            "tokenizer": "official",
            "reranker": "dragonkue/bge-reranker-v2-m3-ko",
            "retrieval": "bm25",
            "temperature": 0.0,
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
