"""Benchmark specs: the one declaration of a benchmark's facts, read by tasks, scorers, replay, CLI and leaderboard.

A spec says what a benchmark's eval logs look like and how to judge them: the task's registry name and version,
its scorers with their value keys (valid range, display label and scale, which need a judge), the stratum its
items are grouped by, the headline and ranking columns, the paper's protocol and the fingerprints of the
official datasets. Code outside a benchmark's own folder never names the benchmark: it looks up its spec
(`spec_for_task`) or loops over `benchmark_specs()`.

Spec modules (`benchmarks/<benchmark>/spec.py`) are plain data: they import nothing of this package but this
module, so every layer may read them without an import cycle. A benchmark becomes known to the package
through its `Benchmark` value at the wiring point (`koblex_tasks.tasks`), which holds its spec.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

ValueKind = Literal["continuous", "binary"]
ID_DIGEST_CHARS = 8  # hex characters of one sample id's digest (32 bits: a made-up id matches w.p. n / 2**32)


# A benchmark's reference manifest (hashes of each item's references, beside its spec in benchmarks/<b>/) and
# the params key under which the log layer hands a re-derivation the item's manifest entry.
REFERENCE_MANIFEST = "references.v1.json"
REFERENCE_PARAM = "_reference"
# The corpora a retrieval benchmark knows by fingerprint, beside its spec (`load_known_corpora`).
KNOWN_CORPORA = "corpora.json"


def text_sha256(text: str) -> str:
    """SHA-256 of a text's UTF-8 bytes, hex: how reference manifests hash inputs, targets and outputs."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def ids_sha256(ids: Iterable[object]) -> str:
    """The fingerprint of a set of sample ids: SHA-256 of the distinct ids (as str), sorted, newline-joined."""
    return hashlib.sha256("\n".join(sorted({str(i) for i in ids})).encode("utf-8")).hexdigest()


def id_digest(sample_id: object) -> str:
    """One sample id's short digest (the first `ID_DIGEST_CHARS` hex characters of its SHA-256)."""
    return hashlib.sha256(str(sample_id).encode("utf-8")).hexdigest()[:ID_DIGEST_CHARS]


def id_digests(ids: Iterable[object]) -> str:
    """`BenchmarkSpec.official_id_digests` of a split: the digests of its ids, sorted, space-separated."""
    return " ".join(sorted({id_digest(i) for i in ids}))


@dataclass(frozen=True)
class ValueSpec:
    """One value key a scorer writes into `Score.value`."""

    key: str
    label: str
    low: float
    high: float
    scale: float = 1.0  # displayed value = stored value x scale
    higher_is_better: bool = True
    primary: bool = True  # a leaderboard column with significance tests (else a secondary column)
    kind: ValueKind = "continuous"  # binary: 0/1 per item, compared with McNemar

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"{self.key}: low must be below high, got [{self.low}, {self.high}]")

    def in_range(self, value: float) -> bool:
        """Inside [low, high] (a small tolerance for float sums such as 2/3 + 1/3)."""
        tolerance = 1e-9 * max(1.0, abs(self.high - self.low))
        return math.isfinite(value) and self.low - tolerance <= value <= self.high + tolerance


def failure_rate(key: str, label: str) -> ValueSpec:
    """A judge scorer's share of items its judge could not grade: a secondary column, lower is better."""
    return ValueSpec(key, label, 0.0, 1.0, scale=100, higher_is_better=False, primary=False)


@dataclass(frozen=True)
class ScorerSpec:
    """A scorer of the task: its registry name (as written in logs) and the value keys it produces."""

    name: str
    values: tuple[ValueSpec, ...]
    judge: bool = False  # graded by a model bound to a role (the task's judge role)
    required: bool = True  # every leaderboard log must carry it
    # How the leaderboard recomputes a logged value is the benchmark's (`Benchmark.rederive`, by scorer name);
    # a scorer without one has its stored values taken as logged.

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(v.key for v in self.values)

    def value(self, key: str) -> ValueSpec:
        for v in self.values:
            if v.key == key:
                return v
        raise KeyError(f"scorer {self.name!r} has no value {key!r} (has {list(self.keys)})")


@dataclass(frozen=True)
class StratumSpec:
    """The sample-metadata key items are grouped by (per-stratum means, stratified intervals)."""

    key: str
    label: str
    order: tuple[str, ...] = ()  # display order of known strata; others follow, numbers numerically
    name_template: str = "{group_name}"  # metric name per stratum in the log, e.g. "hop{group_name}"
    # When set, the log also reports the unweighted mean of the stratum means under this name (LEGIT's
    # headline is the mean of the three difficulty means).
    strata_mean_label: str | None = None

    def sort_key(self, stratum: str) -> tuple[int, float, str]:
        if stratum in self.order:
            return (0, float(self.order.index(stratum)), stratum)
        try:
            return (1, float(stratum), stratum)
        except ValueError:
            return (2, 0.0, stratum)


@dataclass(frozen=True)
class KnownCorpus:
    """A statute pool the spec knows by its fingerprint (`corpus.statutes.fingerprint_provisions`): whether it
    is the paper's full pool or a partial one, its size and where it comes from. Placement reads this, never
    the size or status a log records."""

    status: str  # "full" | "partial"
    size: int
    description: str

    def __post_init__(self) -> None:
        if self.status not in ("full", "partial"):
            raise ValueError(f"a known corpus is 'full' or 'partial', not {self.status!r}")


def load_known_corpora(path: Path) -> dict[str, KnownCorpus]:
    """The corpora a benchmark registers, from its `corpora.json` (`tools/register_full_corpus.py` adds the
    full pool): `{"<fingerprint>": {"status", "size", "description"}}`."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {fp: KnownCorpus(e["status"], int(e["size"]), str(e["description"])) for fp, e in raw.items()}


@dataclass(frozen=True)
class BenchmarkSpec:
    """Everything the tooling needs to know about one benchmark's task and its logs."""

    name: str  # short name, e.g. "koblex"
    title: str  # display name, e.g. "KoBLEX"
    task: str  # Inspect registry name, e.g. "koblex_tasks/koblex"
    version: str  # the task version this code writes
    scorers: tuple[ScorerSpec, ...]
    stratum: StratumSpec
    headline: tuple[str, ...]  # value keys reported by `koblex replay` and summaries, in order
    ranking: str  # the value key boards are ranked by by default
    # Task versions whose logs the leaderboard accepts (logs of another version are refused, with a reason).
    accepted_versions: tuple[str, ...] = ()
    judge_role: str = "grader"
    description: str = ""  # what the benchmark measures, in a few sentences (the leaderboard page)
    # Task metadata keys whose values split boards (scoring variants), with a readable label per key.
    variants: Mapping[str, str] = field(default_factory=dict)
    # Task arguments that select a subset of the dataset (a run with any of them set is a subset run).
    subset_args: tuple[str, ...] = ()
    # Task arguments that filter the dataset; a run is a subset when one is set and fewer than
    # `official_size` items remain (e.g. LEGIT's `responses`, which keeps the documents a file answers).
    filter_args: tuple[str, ...] = ()
    # Solvers that replay released outputs instead of calling a model (their runs are labelled as such).
    replay_solvers: tuple[str, ...] = ()
    # The statute pool a run retrieves from: its full size (a smaller local corpus is "partial"); None when the
    # benchmark's scores do not depend on a retrieval corpus.
    full_corpus_size: int | None = None
    # Corpus fingerprints the benchmark knows (the shared partial pool, the full pool once registered): a run
    # is on the full-corpus board only when the fingerprint it recorded is a registered full one.
    corpus_fingerprints: Mapping[str, KnownCorpus] = field(default_factory=dict)
    # The paper's protocol: task and solver arguments of the published runs.
    paper_protocol: Mapping[str, Any] = field(default_factory=dict)
    # Known dataset fingerprints (as the task records them in `dataset_fingerprint`) -> what they are.
    dataset_fingerprints: Mapping[str, str] = field(default_factory=dict)
    official_size: int | None = None  # items in the official test split
    # The paper's table as runs (`koblex grid`): its methods, the model families, the released runs.
    methods: MethodGrid | None = None
    # The official split's sample ids, so a run is judged by its ids whatever fingerprint it claims:
    # `ids_sha256` of the whole set (a full run holds exactly these) and `id_digests` of each id (membership
    # without listing the ids: ids that are all official but fewer than `official_size` make a subset).
    # None / "" when the official ids are not known here.
    official_ids_sha256: str | None = None
    official_id_digests: str = ""
    # The first task version whose logs record each retrieval in the sample's events (older logs that predict
    # provisions cannot pass the leaderboard's provisions rule); None: the benchmark's solvers predict none.
    events_since: str | None = None
    # Value keys of a retrieval funnel in stage order (gold recall after each stage): the leaderboard draws one
    # funnel per run from them; the scorer's other values are drawn beside the stages.
    funnel: tuple[str, ...] = ()
    # Task arguments that change what the judge reads (not who judges): each setting is its own leaderboard
    # column, and released answers are judged under the user's run's setting. Defaults: `paper_protocol`.
    judge_variant_args: tuple[str, ...] = ()
    _official_digests: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.accepted_versions:
            object.__setattr__(self, "accepted_versions", (self.version,))
        elif self.version not in self.accepted_versions:
            raise ValueError(f"{self.name}: version {self.version} is not among accepted_versions")
        for name in ("variants", "paper_protocol", "dataset_fingerprints", "corpus_fingerprints"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        keys = [v.key for s in self.scorers for v in s.values]
        if len(set(keys)) != len(keys):
            raise ValueError(f"{self.name}: a value key is declared by two scorers: {keys}")
        for key in (*self.headline, self.ranking):
            if key not in keys:
                raise ValueError(f"{self.name}: headline/ranking key {key!r} is not a declared value")
        for key in self.funnel:
            if key not in keys:
                raise ValueError(f"{self.name}: funnel key {key!r} is not a declared value")
        for arg in self.judge_variant_args:
            if arg not in self.paper_protocol:
                raise ValueError(f"{self.name}: judge variant argument {arg!r} has no paper_protocol default")
        self._check_official_ids()

    def _check_official_ids(self) -> None:
        digests = frozenset(self.official_id_digests.split())
        if (self.official_ids_sha256 or digests) and self.official_size is None:
            raise ValueError(f"{self.name}: official sample ids need official_size")
        if digests and len(digests) != self.official_size:
            raise ValueError(
                f"{self.name}: {len(digests)} official id digests for {self.official_size} items"
            )
        if any(len(d) != ID_DIGEST_CHARS or d.strip("0123456789abcdef") for d in digests):
            raise ValueError(f"{self.name}: official_id_digests must be {ID_DIGEST_CHARS}-hex-digit digests")
        object.__setattr__(self, "_official_digests", digests)

    def official_ids_known(self) -> bool:
        """Whether the spec can tell an official sample id from another one."""
        return bool(self._official_digests)

    def is_official_id(self, sample_id: object) -> bool:
        return id_digest(sample_id) in self._official_digests

    def judge_variant(self, task_args: Mapping[str, Any] | None) -> dict[str, Any]:
        """The judge-variant arguments that differ from the paper's protocol in `task_args` (empty: the paper's)."""
        args = task_args or {}
        return {
            k: args[k] for k in self.judge_variant_args if k in args and args[k] != self.paper_protocol[k]
        }

    def unknown_judge_variant_args(self, args: Mapping[str, Any]) -> list[str]:
        """The names in `args` that are none of the benchmark's judge variant arguments, sorted."""
        return sorted(set(args) - set(self.judge_variant_args))

    def scorer(self, name: str) -> ScorerSpec:
        for s in self.scorers:
            if s.name == name:
                return s
        raise KeyError(f"{self.name} has no scorer {name!r} (has {[s.name for s in self.scorers]})")

    def value(self, key: str) -> ValueSpec:
        return self.scorer_of(key).value(key)

    def scorer_of(self, key: str) -> ScorerSpec:
        """The scorer that writes value `key`."""
        for s in self.scorers:
            if key in s.keys:
                return s
        raise KeyError(f"{self.name} has no value key {key!r}")

    @property
    def values(self) -> tuple[ValueSpec, ...]:
        return tuple(v for s in self.scorers for v in s.values)

    @property
    def required_scorers(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.scorers if s.required)

    @property
    def needs_judge(self) -> bool:
        """A required scorer is a judge: the benchmark cannot be scored without one bound."""
        return any(s.judge and s.required for s in self.scorers)


# --- the paper's method grid (`koblex grid`): methods, model families, where the paper's runs were released

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
    task_args: Args = field(default_factory=dict)  # task arguments of the row (e.g. Table 4's retriever)

    def __post_init__(self) -> None:
        _frozen(self, "args", "group_args", "task_args")

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
    A file is replayed by its benchmark's `Replay` (the wiring point); `shared_task_args` names the task
    arguments of the user's run it must be replayed with (same items, same scoring); `requires` the
    task arguments (with their value, also when left at the default) without which the released runs are
    not comparable (e.g. their language).
    """

    repo: str
    folder: str
    commit: str
    commits: Mapping[str, str] = field(default_factory=dict)
    shared_task_args: tuple[str, ...] = ()
    requires: Args = field(default_factory=dict)
    judge_arg: str | None = None

    def __post_init__(self) -> None:
        _frozen(self, "commits", "requires")

    def commit_of(self, name: str) -> str:
        return self.commits.get(name, self.commit)

    def url(self, name: str) -> str:
        """The raw file at its pinned commit."""
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit_of(name)}/{self.folder}/{name}"


@dataclass(frozen=True)
class PaperTable:
    """One of the paper's other tables as grid rows (`koblex grid <benchmark> --table KEY`).

    Each row is a `MethodSpec` (its solver and arguments); `baseline` is the row every other row is paired
    with (the paper's full method). `published` holds the paper's cells where they are public, by row key and
    model family key and value key; an absent cell is not public (the report says so, never a number).
    """

    key: str  # e.g. "3"
    title: str  # e.g. "KoBLEX Table 3 (ParSeR ablation)"
    rows: tuple[MethodSpec, ...]
    baseline: str
    note: str = ""  # shown under the report (e.g. which values are not public)
    published: Mapping[str, Mapping[str, Mapping[str, float]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        keys = [r.key for r in self.rows]
        if len(set(keys)) != len(keys) or self.baseline not in keys:
            raise ValueError(
                f"table {self.key}: row keys must be distinct and include the baseline {self.baseline!r}"
            )


@dataclass(frozen=True)
class MethodGrid:
    """A benchmark's table as runs: its methods, the model families it reports, and the released runs."""

    benchmark: str  # the spec's short name
    table: str  # what the grid reproduces, e.g. "KoBLEX Table 2"
    methods: tuple[MethodSpec, ...]
    families: tuple[ModelFamily, ...] = ()
    released: ReleasedRuns | None = None
    tables: tuple[PaperTable, ...] = ()  # the paper's other tables (`--table`)
    baseline: str | None = None  # a table's grid: the row every other row is paired with
    notes: tuple[str, ...] = ()  # a table's grid: shown under its report

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

    def paper_table(self, key: str) -> PaperTable:
        """One of the paper's other tables by its number; an unknown one raises naming those there are."""
        for table in self.tables:
            if table.key == str(key):
                return table
        known = ", ".join(t.key for t in self.tables) or "none"
        raise LookupError(f"{self.benchmark} has no table {key!r} to run (tables: {known})")

    def for_table(self, key: str) -> MethodGrid:
        """The grid of one of the paper's other tables: its rows as methods, no released runs to compare."""
        table = self.paper_table(key)
        return replace(
            self,
            table=table.title,
            methods=table.rows,
            released=None,
            tables=(),
            baseline=table.baseline,
            notes=(table.note,) if table.note else (),
        )
