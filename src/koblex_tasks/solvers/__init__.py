"""Solvers: one folder per benchmark (`koblex/`, `legit/`), one file per method; shared helpers at this level.

- `common.py`: recorded (hashed) prompts, intermediate model calls, retrieval settings from the task (and
  the retrieval overrides every solver takes), the solver-argument check, the replayed output.
- `grader.py`: `require_grader`, the setup step that refuses to run a judged task without a judge.
- `discovery.py`: a benchmark's solvers are the `@solver`s its package's modules define (no list to edit).

Solvers leave what they retrieved and selected in a record on the sample; scorers read only that record.
"""
