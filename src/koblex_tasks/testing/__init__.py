"""Offline test helpers shipped with the package (so CLI smoke tests work on any machine)."""
