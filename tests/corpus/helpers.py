"""Test helpers shared by the corpus tests."""


class SplitTokenizer:
    """A tokenizer over pre-split text (terms separated by spaces), without `encode`."""

    name = "split"

    def config(self) -> dict[str, object]:
        return {"name": self.name}

    def tokenize(self, texts: list[str]) -> list[list[str]]:
        return [t.split() for t in texts]
