"""Conformance with the official KoBLEX scripts: a live run's requests compared call for call with recordings."""
