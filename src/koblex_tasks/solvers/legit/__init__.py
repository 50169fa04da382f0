"""LEGIT solvers: the paper's prediction prompt, a statute-RAG variant, and replay of released responses."""

from koblex_tasks.solvers.legit.predict import legit_predict
from koblex_tasks.solvers.legit.rag import legit_rag
from koblex_tasks.solvers.legit.replay import legit_replay

__all__ = ["legit_predict", "legit_rag", "legit_replay"]
