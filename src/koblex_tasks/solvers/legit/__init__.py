"""LEGIT solvers: the paper's prediction prompt, a statute-RAG variant, replay of released responses, and replay
of released responses together with their judge verdicts."""

from koblex_tasks.solvers.legit.predict import legit_predict
from koblex_tasks.solvers.legit.rag import legit_rag
from koblex_tasks.solvers.legit.replay import legit_replay
from koblex_tasks.solvers.legit.verdicts import legit_verdicts

__all__ = ["legit_predict", "legit_rag", "legit_replay", "legit_verdicts"]
