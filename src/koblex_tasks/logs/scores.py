"""Per-sample values of a log, checked against the spec (keys, types, ranges), with strata and judge facts."""

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.log import EvalSample

from koblex_tasks.logs.identity import RunIdentity
from koblex_tasks.logs.rejection import Problems
from koblex_tasks.spec import ScorerSpec

ScoreRow = tuple[str, int, str, float | None]  # (sample id, epoch, value key, value or None = unscored)


@dataclass
class JudgeTally:
    """Which judge models, prompts and modes graded a judge scorer's samples."""

    models: Counter[str] = field(default_factory=Counter)
    prompts: Counter[str] = field(default_factory=Counter)
    modes: Counter[str] = field(default_factory=Counter)
    n: int = 0

    def count(self, metadata: dict[str, Any]) -> None:
        self.n += 1
        if metadata.get("judge_model"):
            self.models[str(metadata["judge_model"])] += 1
        ref = metadata.get("prompt") or metadata.get("judge_prompt")
        if isinstance(ref, dict):
            self.prompts[f"{ref.get('name')}@{ref.get('version')} sha256:{ref.get('sha256')}"] += 1
        if metadata.get("mode"):
            self.modes[str(metadata["mode"])] += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "models": dict(self.models),
            "prompts": dict(self.prompts),
            "modes": dict(self.modes),
            "n": self.n,
        }


@dataclass
class ScoreTable:
    rows: list[ScoreRow] = field(default_factory=list)
    strata: dict[str, str] = field(default_factory=dict)  # sample id -> stratum label
    judges: dict[str, JudgeTally] = field(default_factory=dict)  # judge scorer -> tally
    prompts: dict[str, set[str]] = field(default_factory=dict)  # solver prompt name -> "version sha256:…"


def score_values(value: Any, scorer: ScorerSpec) -> dict[str, float | None] | str:
    """Per-key floats (None = unscored), or a str saying why `value` is not a valid score of `scorer`."""
    keys = scorer.keys
    if isinstance(value, int | float) and not isinstance(value, bool):
        if math.isnan(float(value)):
            return dict.fromkeys(keys)  # Score.unscored: every component unscored
        if len(keys) == 1:
            value = {keys[0]: value}
        else:
            return f"a single number {value!r} where {list(keys)} were expected"
    if not isinstance(value, dict):
        return f"value of type {type(value).__name__}"
    out: dict[str, float | None] = {}
    for spec in scorer.values:
        v = value.get(spec.key)
        if v is None:
            out[spec.key] = None
            continue
        if isinstance(v, bool) or not isinstance(v, int | float):
            return f"{spec.key}={v!r} is not a number"
        f = float(v)
        if math.isinf(f):
            return f"{spec.key} is infinite"
        if not math.isnan(f) and not spec.in_range(f):
            return f"{spec.key}={f!r} is outside its range [{spec.low:g}, {spec.high:g}]"
        out[spec.key] = None if math.isnan(f) else f
    return out


def _record_prompts(table: ScoreTable, sample_metadata: dict[str, Any]) -> None:
    for name, ref in (sample_metadata.get("prompts") or {}).items():
        if isinstance(ref, dict):
            table.prompts.setdefault(str(name), set()).add(f"{ref.get('version')} sha256:{ref.get('sha256')}")


def extract_scores(samples: list[EvalSample], run: RunIdentity, problems: Problems) -> ScoreTable:
    """Every logged scorer's values for every sample and epoch; unusable values are problems."""
    spec, table = run.spec, ScoreTable()
    logged = [s for s in spec.scorers if s.name in run.scorer_names]
    bad: list[str] = []
    for sample in samples:
        sid, epoch, meta = str(sample.id), int(sample.epoch), sample.metadata or {}
        table.strata[sid] = str(meta.get(spec.stratum.key, "n/a"))
        _record_prompts(table, meta)
        for scorer in logged:
            score = (sample.scores or {}).get(scorer.name)
            if score is None:
                bad.append(f"sample {sid!r} epoch {epoch} has no {scorer.name} score")
                continue
            values = score_values(score.value, scorer)
            if isinstance(values, str):
                bad.append(f"sample {sid!r} {scorer.name}: {values}")
                continue
            table.rows += [(sid, epoch, k, v) for k, v in values.items()]
            if scorer.judge:
                table.judges.setdefault(scorer.name, JudgeTally()).count(score.metadata or {})
    if bad:
        problems.add(f"{len(bad)} unusable scores, e.g. {bad[0]}")
    return table
