"""Model providers shipped with the package: `replay/<name>` (a label for replayed outputs) and
`koblexmock/<name>` (a scripted offline model that speaks every prompt format, for smoke runs and tests)."""
