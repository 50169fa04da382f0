"""Korean legal benchmarks (KoBLEX, LEGIT) for Inspect AI."""

__version__ = "0.1.0"
