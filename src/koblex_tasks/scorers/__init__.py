"""Scorers read only the sample (target, metadata) and the solvers' evidence record."""

from koblex_tasks.scorers.provision_match import provision_match
from koblex_tasks.scorers.token_f1 import token_f1

__all__ = ["provision_match", "token_f1"]
