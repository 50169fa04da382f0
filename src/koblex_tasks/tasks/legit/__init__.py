"""LEGIT: spec, test records and issue trees (`dataset`, `issues`), response files (`responses`), task.

Import the task from `koblex_tasks.tasks.legit.task`; this package imports nothing so that solvers and scorers
can read the spec and data modules without importing the task.
"""
