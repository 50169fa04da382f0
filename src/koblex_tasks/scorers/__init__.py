"""Scorers: one folder per benchmark (`koblex/`, `legit/`); what both share at this level.

- `metrics.py`: the metrics every value key reports (Inspect's mean and grouped means, our bootstrap interval).
- `judge.py`: the judge's configuration (role, temperature, max tokens, cache) and usage accounting.

Scorers read only the sample (target, metadata, output) and the solvers' evidence record; answer extraction
happens here. Judge scorers take the judge as a model role and record prompt hash and raw replies.
"""
