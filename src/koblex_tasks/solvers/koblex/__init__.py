"""KoBLEX solvers: one file per method of the paper's Table 2, plus `replay` of released predictions.

Each public module defines its `@solver` (found by `koblex_tasks.solvers.discovery`; a module that retrieves
nothing sets `RETRIEVES = False`). `_common` holds what every KoBLEX solver shares (the official question,
BM25 top-k with optional reranking, the final answer call), `_multihop` what the five multi-hop baselines
share (`MultihopRun`: a sample's recorded retrieval, question and prompts).
"""
