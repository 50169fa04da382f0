"""The paper's experiment grid in one resumable command: every method of a benchmark's table x every model.

The grid of a benchmark is plain data in its declarations, `benchmarks/<benchmark>/methods.py` (a
`koblex_tasks.spec.MethodGrid`: methods with their solver and the paper's arguments, model families with their
per-family arguments, where the paper's released runs are); its released runs are replayed by the benchmark's
own replay (`Benchmark.replay`, at the wiring point). By concern:

- ``plan``: which runs a command line asks for (model family matching, solver and task arguments per run).
- ``build``: those runs as Inspect tasks (built with the bound model roles visible); ``run``: one
  `eval_set` over all of them (resumable, parallel); ``progress``: a line per finished run; ``quiet``: a
  warning every task repeats, said once.
- ``logs``: what a log directory holds (one record per run, per-sample scores); ``released`` the paper's
  released files (local folder or pinned download, SHA-256 trust-on-first-use); ``compare`` the replayed
  released runs and the paired tests; ``report`` the table's data; ``render`` terminal and Markdown,
  ``page`` HTML; ``submit`` the leaderboard.
"""
