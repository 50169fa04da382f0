"""LEGIT's method grid: the paper's table is generators x judge with one method, the paper's prediction prompt.

Plain data (see `koblex_tasks.spec`). `legit_rag` is declared as an extra (run only when named with
`--methods rag`): it fills the RAG prompt with this package's statute retriever, not the paper's precomputed
retrieval files. No model family or released comparison is declared yet: the released responses
(jinulee-v/LEGIT `results/reasoning_tasks_<model>.jsonl`) can be judged with `koblex replay --grader`.
"""

from koblex_tasks.spec import MethodGrid, MethodSpec

LEGIT_GRID = MethodGrid(
    benchmark="legit",
    table="LEGIT main table (generators x judge)",
    methods=(
        MethodSpec("predict", "Prediction (paper prompt)", "koblex_tasks/legit_predict"),
        MethodSpec(
            "rag",
            "Statute RAG (our retriever)",
            "koblex_tasks/legit_rag",
            in_table=False,
            note="statute RAG uses this package's retriever, not the paper's precomputed retrieval",
        ),
    ),
)
