"""LEGIT solvers: the paper's prediction prompt, a statute-RAG variant, replay of released responses, and replay
of released responses together with their judge verdicts (each module's `@solver`, found by discovery)."""
