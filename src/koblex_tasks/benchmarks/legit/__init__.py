"""LEGIT's declarations: spec and method grid, the legal issue trees."""
