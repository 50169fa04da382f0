"""Each benchmark's data, one folder per benchmark: the questions and the released files, loaded and checked.

- `koblex/`: questions (`dataset`), released predictions (`released`) and their alignment to the questions
  (`alignment`), the English schema (`language`).
- `legit/`: test records (`dataset`), released responses and verdicts (`responses`, `verdicts`, read through
  `rows`).

Above the corpus (provision identities), below solvers and scorers.
"""
