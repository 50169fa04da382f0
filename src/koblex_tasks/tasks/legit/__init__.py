"""LEGIT: spec, test records and issue trees (`dataset`, `issues`), released files (`responses`, `verdicts`, read
through `rows`), the task's argument checks (`checks`), task.

Import the task from `koblex_tasks.tasks.legit.task`; this package imports nothing so that solvers and scorers
can read the spec and data modules without importing the task.
"""
