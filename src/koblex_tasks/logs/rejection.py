"""Why a log cannot go on the leaderboard: every problem found is collected and reported together."""

from pathlib import Path


class SubmissionRejected(ValueError):
    """The log cannot go on the leaderboard; ``reasons`` lists every problem found."""

    def __init__(self, path: str | Path, reasons: list[str]) -> None:
        self.path = str(path)
        self.reasons = list(reasons)
        body = "\n".join(f"  - {r}" for r in self.reasons)
        super().__init__(f"{self.path}: rejected:\n{body}")


class Problems:
    """Problems found while validating one log; `check()` raises them all at once, so a user fixes a log in
    one round instead of one problem per attempt."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self.reasons: list[str] = []

    def add(self, reason: str) -> None:
        self.reasons.append(reason)

    def reject(self, reason: str) -> SubmissionRejected:
        """Stop now (the rest cannot be checked), with everything found so far."""
        return SubmissionRejected(self.path, [*self.reasons, reason])

    def check(self) -> None:
        if self.reasons:
            raise SubmissionRejected(self.path, self.reasons)
