"""Errors that name the file and line a bad input came from, so users can fix their data."""


class DataError(ValueError):
    """A data file is malformed: the message says which file, which line and what is wrong."""

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem
