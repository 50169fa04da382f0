"""The data types of a benchmark's method grid: methods, model families, and where the paper's runs were released.

Plain data, like `koblex_tasks.spec`: this module imports nothing of the package, so a benchmark's
`tasks/<benchmark>/methods.py` can declare its grid without an import cycle. The grid code reads the
declarations; it never names a benchmark.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

Args = Mapping[str, Any]


def _frozen(obj: object, *names: str) -> None:
    """Replace the mapping fields `names` of a frozen dataclass by read-only copies (nested one level)."""
    for name in names:
        value = getattr(obj, name)
        copy = {k: MappingProxyType(dict(v)) if isinstance(v, Mapping) else v for k, v in value.items()}
        object.__setattr__(obj, name, MappingProxyType(copy))


@dataclass(frozen=True)
class MethodSpec:
    """One row of the paper's table: the solver that runs it and the arguments of the paper's protocol.

    `args` holds only what differs from the solver's own defaults (the solver and task defaults are the
    paper's protocol, so they are not restated here); `group_args` what differs per model group (e.g. FLARE's
    threshold for Qwen3), keyed by `ModelFamily.group`.
    """

    key: str  # the name on the command line (--methods) and in the log (eval metadata "method")
    label: str  # the table's row label
    solver: str  # registry name, e.g. "koblex_tasks/flare"
    args: Args = field(default_factory=dict)
    group_args: Mapping[str, Args] = field(default_factory=dict)
    released: tuple[str, ...] = ()  # spellings of the method in released file names (`<m>_<family>.jsonl`)
    in_table: bool = True  # a row of the paper's table (run by default); False: an extra, run only when named
    note: str = ""  # shown under the table when the method is in the report

    def __post_init__(self) -> None:
        _frozen(self, "args", "group_args")

    def solver_args(self, group: str | None) -> dict[str, Any]:
        """The paper's solver arguments for a model of `group` (None: no known family)."""
        return {**self.args, **(self.group_args.get(group, {}) if group else {})}


@dataclass(frozen=True)
class ModelFamily:
    """Models the paper ran, recognised by name: what differs for them, and how released files name them.

    `patterns` are shell patterns (`fnmatch`) matched case-insensitively against the last path segment of the
    model name (`openai/gpt-4o` -> `gpt-4o`, `vllm/Qwen/Qwen3-32B` -> `qwen3-32b`), so the provider prefix
    does not matter (`openai-api/box1/Qwen/Qwen3-32B` is Qwen3-32B too).
    """

    key: str  # e.g. "qwen_32b"
    label: str  # e.g. "Qwen3-32B"
    patterns: tuple[str, ...]
    group: str  # whose `MethodSpec.group_args` apply, e.g. "qwen3"
    released: tuple[str, ...] = ()  # spellings in released file names, e.g. ("qwen_32b", "qwen32b")
    task_args: Args = field(default_factory=dict)  # task arguments of the paper's runs of this family

    def __post_init__(self) -> None:
        _frozen(self, "task_args")


@dataclass(frozen=True)
class ReleasedRuns:
    """Where the paper released its runs (`<folder>/<method>_<family>.jsonl` at a pinned commit).

    `commits` names the commit of files released later than `commit` (a file is fetched at its own commit).
    `replay` is the `module:function` that turns a released file into a scored eval log; `shared_task_args`
    the task arguments of the user's run it must be replayed with (same items, same scoring); `requires` the
    task arguments (with their value, also when left at the default) without which the released runs are
    not comparable (e.g. their language).
    """

    repo: str
    folder: str
    commit: str
    replay: str
    commits: Mapping[str, str] = field(default_factory=dict)
    shared_task_args: tuple[str, ...] = ()
    requires: Args = field(default_factory=dict)

    def __post_init__(self) -> None:
        _frozen(self, "commits", "requires")

    def commit_of(self, name: str) -> str:
        return self.commits.get(name, self.commit)

    def url(self, name: str) -> str:
        """The raw file at its pinned commit."""
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit_of(name)}/{self.folder}/{name}"


@dataclass(frozen=True)
class MethodGrid:
    """A benchmark's table as runs: its methods, the model families it reports, and the released runs."""

    benchmark: str  # the spec's short name
    table: str  # what the grid reproduces, e.g. "KoBLEX Table 2"
    methods: tuple[MethodSpec, ...]
    families: tuple[ModelFamily, ...] = ()
    released: ReleasedRuns | None = None

    def __post_init__(self) -> None:
        for what, keys in (
            ("method", [m.key for m in self.methods]),
            ("family", [f.key for f in self.families]),
        ):
            if len(set(keys)) != len(keys):
                raise ValueError(f"{self.benchmark}: a {what} key is declared twice: {keys}")
        groups = {f.group for f in self.families}
        for m in self.methods:
            unknown = set(m.group_args) - groups
            if unknown:
                raise ValueError(
                    f"{self.benchmark}: method {m.key} names unknown model groups {sorted(unknown)}"
                )

    def method(self, name: str) -> MethodSpec:
        """A method by key or by a released-file spelling (`sp`, `self-ask`)."""
        for m in self.methods:
            if name == m.key or name in m.released:
                return m
        known = ", ".join(m.key for m in self.methods)
        raise LookupError(f"{self.benchmark} has no method {name!r} (known: {known})")

    @property
    def table_methods(self) -> tuple[MethodSpec, ...]:
        return tuple(m for m in self.methods if m.in_table)
