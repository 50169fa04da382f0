"""KoBLEX's declarations: spec and method grid, the solvers' evidence record, the protocol record."""
