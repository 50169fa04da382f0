"""Every stored value recomputed from what the log records, with the scorer's own code: edited scores are refused.

Each benchmark names its scorers' re-derivation functions (`Benchmark.rederive`, by scorer name, at the
wiring point). One gets the logged sample, the logged `Score` and the scorer's logged
arguments (``log.eval.scorers[i].options``) and returns the values the scorer would have written: from the
completion and the recorded evidence for deterministic scorers, from the recorded judge replies and
logprobs for judge scorers (no model is called). A value that differs from the stored one by more than
`REL_TOLERANCE` (relative), or that is unscored on one side only, refuses the log, listing the first samples.

A score whose record declares another protocol than the spec's (a re-derivation raises
`errors.RederivationRefused`) is refused with that reason. A judge score whose record is missing (or yields no
value) cannot be re-derived and is refused with "no judge record: cannot re-derive": logs written before judge
records existed go on the leaderboard only after re-scoring. A scorer argument that contradicts the task argument or the scoring variant
(`BenchmarkSpec.variants`) of the same name (e.g. LEGIT's `rule`) is refused too, so a board's scoring
variant is the one the scores were computed with. A scorer whose benchmark declares no function (one that
has not written one yet) keeps its logged values; the run's provenance says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.log import EvalLog, EvalSample

from koblex_tasks.errors import RederivationRefused
from koblex_tasks.logs.identity import RunIdentity
from koblex_tasks.logs.rejection import Problems
from koblex_tasks.logs.scores import score_values
from koblex_tasks.spec import REFERENCE_PARAM, ScorerSpec
from koblex_tasks.tasks import find_benchmark
from koblex_tasks.tasks.benchmark import Rederive
from koblex_tasks.text import printable

REL_TOLERANCE = 1e-9
ABS_TOLERANCE = 1e-12  # float noise around zero, where a relative tolerance means nothing
SHOWN = 5  # sample ids listed per problem
NO_RECORD = "no judge record: cannot re-derive"


def hook_name(fn: Rederive) -> str:
    """`module:function` of a re-derivation, as the run's provenance names it."""
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


def same(stored: float | None, derived: float | None) -> bool:
    if stored is None or derived is None:
        return stored is None and derived is None
    return math.isclose(stored, derived, rel_tol=REL_TOLERANCE, abs_tol=ABS_TOLERANCE)


def _number(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(float(v)):
        return None
    return float(v)


@dataclass
class _Findings:
    """What re-deriving one scorer's scores found, per kind of disagreement."""

    checked: int = 0
    differ: list[str] = field(default_factory=list)  # "'id' epoch e: key stored s, re-derived d"
    differ_ids: list[str] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)  # sample ids whose judge record is missing
    failed: list[str] = field(default_factory=list)  # "'id': why"
    refused: list[str] = field(default_factory=list)  # "'id': the refusal's reason"

    def compare(
        self, sid: str, epoch: int, stored: Mapping[str, float | None], derived: Mapping[str, Any]
    ) -> None:
        """Record the first key whose stored value differs from the re-derived one."""
        for key, value in stored.items():
            got = _number(derived.get(key))
            if not same(value, got):
                self.differ.append(f"{sid!r} epoch {epoch}: {key} stored {value!r}, re-derived {got!r}")
                self.differ_ids.append(sid)
                return


def _ids(ids: list[str]) -> str:
    distinct = list(dict.fromkeys(ids))
    shown = ", ".join(repr(i) for i in distinct[:SHOWN])
    more = f" and {len(distinct) - SHOWN} more" if len(distinct) > SHOWN else ""
    return f"{len(distinct)} sample(s): {shown}{more}"


def _report(scorer: ScorerSpec, found: _Findings, problems: Problems) -> None:
    if found.differ:
        problems.add(
            printable(
                f"{scorer.name}: {len(found.differ)} stored score(s) disagree with the values re-derived from the "
                f"log ({_ids(found.differ_ids)}), e.g. {found.differ[0]}"
            )
        )
    if found.unrecorded:
        problems.add(
            printable(
                f"{scorer.name}: {NO_RECORD} {_ids(found.unrecorded)} (a judge score counts only with the judge's "
                "record in the log; re-score logs written before records existed)"
            )
        )
    if found.refused:
        problems.add(
            printable(f"{scorer.name}: {len(found.refused)} score(s) refused, e.g. {found.refused[0]}")
        )
    if found.failed:
        problems.add(
            printable(f"{scorer.name}: cannot re-derive {len(found.failed)} score(s), e.g. {found.failed[0]}")
        )


def scorer_params(log: EvalLog, run: RunIdentity, name: str, problems: Problems) -> dict[str, Any]:
    """The scorer's logged arguments. One that contradicts the task argument of its name, or the scoring
    variant of its name (`BenchmarkSpec.variants`, which splits boards), is a problem."""
    entry = next((s for s in log.eval.scorers or [] if s.name == name), None)
    params = dict((entry.options if entry is not None else None) or {})
    variants = {k: v for k, v in run.metadata.items() if k in run.spec.variants}
    sources = {"task argument": log.eval.task_args or {}, "task metadata (scoring variant)": variants}
    for key, value in params.items():
        for what, source in sources.items():
            if key in source and source[key] != value:
                problems.add(
                    printable(
                        f"scorer {name} ran with {key}={value!r} but the {what} says {key}={source[key]!r}"
                    )
                )
    return params


def _rederive_scorer(
    scorer: ScorerSpec,
    fn: Rederive,
    samples: list[EvalSample],
    params: Mapping[str, Any],
    references: Mapping[str, Mapping[str, Any]] | None = None,
) -> _Findings:
    found = _Findings()
    for sample in samples:
        score = (sample.scores or {}).get(scorer.name)
        stored = score_values(score.value, scorer) if score is not None else "missing"
        if score is None or isinstance(stored, str):
            continue  # already a problem of `scores.extract_scores`
        sid = str(sample.id)
        found.checked += 1
        try:
            given = params if references is None else {**params, REFERENCE_PARAM: references.get(sid, {})}
            derived = fn(sample, score, given)
            if not isinstance(derived, Mapping):
                raise TypeError(f"{hook_name(fn)} returned {type(derived).__name__}, not a mapping")
        except RederivationRefused as exc:  # the record declares another protocol than the spec's
            found.refused.append(f"{sid!r}: {exc}")
            continue
        except Exception as exc:  # a malformed record: the scorer's own code cannot read it
            if scorer.judge:
                found.unrecorded.append(sid)
            else:
                found.failed.append(f"{sid!r}: {type(exc).__name__}: {exc}")
            continue
        if (
            scorer.judge
            and any(v is not None for v in stored.values())
            and all(_number(derived.get(k)) is None for k in stored)
        ):
            found.unrecorded.append(sid)  # a number stored, none derivable: no (usable) judge record
            continue
        found.compare(sid, int(sample.epoch), stored, derived)
    return found


def check_rederived(
    log: EvalLog,
    samples: list[EvalSample],
    run: RunIdentity,
    problems: Problems,
    references: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, str]:
    """Re-derive every logged scorer's values; problems are added. Returns scorer -> how its values were checked."""
    status: dict[str, str] = {}
    found_benchmark = find_benchmark(run.spec.task)
    hooks: Mapping[str, Rederive] = found_benchmark.rederive if found_benchmark is not None else {}
    for scorer in run.spec.scorers:
        if scorer.name not in run.scorer_names:
            continue
        fn = hooks.get(scorer.name)
        if fn is None:
            status[scorer.name] = "not re-derived: the benchmark declares no re-derivation (values as logged)"
            continue
        params = scorer_params(log, run, scorer.name, problems)
        found = _rederive_scorer(scorer, fn, samples, params, references)
        _report(scorer, found, problems)
        status[scorer.name] = f"re-derived from the log ({found.checked} scores, {hook_name(fn)})"
    return status
