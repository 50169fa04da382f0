"""KoBLEX: spec, questions (`dataset`), released predictions (`released`), solver evidence record, task.

Import the task from `koblex_tasks.tasks.koblex.task`; this package imports nothing so that solvers and scorers
can read the spec and data modules without importing the task.
"""
