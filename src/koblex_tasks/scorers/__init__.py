"""Scorers read only the sample (target, metadata) and the solvers' evidence record."""

from koblex_tasks.scorers.lf_eval import grader_bound, lf_eval
from koblex_tasks.scorers.provision_match import provision_match
from koblex_tasks.scorers.token_f1 import token_f1

__all__ = ["grader_bound", "lf_eval", "provision_match", "token_f1"]
