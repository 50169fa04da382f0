"""KoBLEX data: questions, released predictions and their alignment, the English schema."""
