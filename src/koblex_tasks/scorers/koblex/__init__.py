"""KoBLEX scorers: provision match and token F1 (deterministic), the retrieval funnel, LF-Eval (the paper's G-Eval judge)."""

from koblex_tasks.scorers.koblex.deepeval_weighting import deepeval_weighted_score
from koblex_tasks.scorers.koblex.funnel import retrieval_funnel
from koblex_tasks.scorers.koblex.lf_eval import lf_eval
from koblex_tasks.scorers.koblex.provision_match import provision_match
from koblex_tasks.scorers.koblex.token_f1 import token_f1

__all__ = ["deepeval_weighted_score", "lf_eval", "provision_match", "retrieval_funnel", "token_f1"]
