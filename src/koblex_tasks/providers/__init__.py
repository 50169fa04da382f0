"""The scripted offline model `koblexmock/<name>`, which speaks every registered benchmark's prompt formats (for
smoke runs and tests). The `replay/<name>` label of replayed outputs lives with the replays
(`tasks/replay_model.py`)."""
