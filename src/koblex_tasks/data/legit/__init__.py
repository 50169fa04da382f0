"""LEGIT data: test records with their issue trees, released responses and judge verdicts."""
