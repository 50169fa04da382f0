"""Leaderboard: compare runs on shared benchmark items with uncertainty and significance tests."""
