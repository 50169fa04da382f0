"""Leaderboard statistics from the store: per-board intervals, strata, significance; paired comparisons.

Everything returned is plain JSON data (None for undefined values), the single source for the site and the
JSON/CSV/Markdown exports.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from koblex_tasks import stats as st
from koblex_tasks.leaderboard.store import RunRow, Store


@dataclass(frozen=True)
class MetricSpec:
    name: str
    label: str
    scale: float  # stored value x scale = displayed value
    higher_is_better: bool = True
    judge_scorer: str | None = None  # scorer whose judge graded this metric
    primary: bool = True


METRICS: dict[str, tuple[MetricSpec, ...]] = {
    "koblex": (
        MetricSpec("provision_f1", "Provision F1", 100),
        MetricSpec("provision_em", "Provision EM", 100),
        MetricSpec("token_f1", "Token F1", 100),
        MetricSpec("lf_eval", "LF-Eval", 1, judge_scorer="lf_eval"),
        MetricSpec("provision_precision", "Provision P", 100, primary=False),
        MetricSpec("provision_recall", "Provision R", 100, primary=False),
        MetricSpec("empty_answer", "Empty answers %", 100, higher_is_better=False, primary=False),
    ),
    "legit": (
        MetricSpec("legit_score", "LEGIT score", 1, judge_scorer="legit_rubric"),
        MetricSpec("final_order", "Final order", 1, judge_scorer="legit_rubric"),
        MetricSpec("coverage", "Coverage", 1, judge_scorer="legit_rubric"),
        MetricSpec("correctness", "Correctness", 1, judge_scorer="legit_rubric"),
        MetricSpec(
            "judge_failure_rate",
            "Judge failures %",
            100,
            higher_is_better=False,
            judge_scorer="legit_rubric",
            primary=False,
        ),
    ),
}
STRATUM_NAME = {"koblex": "hops", "legit": "difficulty"}


@dataclass(frozen=True)
class Settings:
    n_resamples: int = 10_000
    seed: int = 0
    confidence: float = 0.95
    alpha: float = 0.05


def _spec(benchmark: str, metric: str) -> MetricSpec:
    for spec in METRICS.get(benchmark, ()):
        if spec.name == metric:
            return spec
    return MetricSpec(metric, metric, 1)


def _matrix(store: Store, runs: list[RunRow], metric: str, items: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(runs x items) scores with NaN = unscored/missing, and a per-run 'has any row for metric' flag."""
    x = np.full((len(runs), len(items)), np.nan)
    present = np.zeros(len(runs), dtype=bool)
    pos = {sid: k for k, sid in enumerate(items)}
    for r, run in enumerate(runs):
        values = store.item_scores(run.run_id).get(metric)
        if values is None:
            continue
        present[r] = True
        for sid, v in values.items():
            if v is not None and sid in pos:
                x[r, pos[sid]] = v
    return x, present


def _kind(x: np.ndarray) -> st.MetricKind:
    v = x[~np.isnan(x)]
    return "binary" if v.size and np.isin(v, (0.0, 1.0)).all() else "continuous"


def _sortable_stratum(label: str) -> tuple[int, Any]:
    order = {"easy": 0, "medium": 1, "hard": 2}
    if label.lstrip("-").isdigit():
        return (0, int(label))
    return (1, order.get(label, 9), label)  # type: ignore[return-value]


def _judge_column(spec: MetricSpec, runs: list[RunRow], audits: dict[str, Any]) -> dict[str, Any] | None:
    if spec.judge_scorer is None:
        return None
    models: set[str] = set()
    prompts: set[str] = set()
    for run in runs:
        info = (run.provenance.get("judges") or {}).get(spec.judge_scorer) or {}
        models |= set(info.get("models") or {})
        prompts |= set(info.get("prompts") or {})
        if not info and run.provenance.get("judge_model"):
            models.add(str(run.provenance["judge_model"]))
    alphas = {}
    for m in sorted(models):
        audit = audits.get(m) or next(
            (a for k, a in audits.items() if m.endswith("/" + k) or k.endswith("/" + m)), None
        )
        if audit:
            alphas[m] = audit["summary"]
    return {"models": sorted(models), "prompts": sorted(prompts), "audits": alphas}


def compute_board(store: Store, board_key: str, settings: Settings = Settings()) -> dict[str, Any]:
    """Statistics for every metric of one board (runs sharing benchmark, dataset, corpus completeness)."""
    runs = store.runs(board_key)
    if not runs:
        raise LookupError(f"no runs on board {board_key!r}")
    benchmark = runs[0].benchmark
    strata: dict[str, str] = {}
    for run in runs:
        for sid, stratum in store.items(run.run_id).items():
            strata.setdefault(sid, stratum)
    items = sorted(strata)
    stratum_labels = np.array([strata[s] for s in items], dtype=object)
    names = [r.name for r in runs]
    audits = store.audits()
    metrics_out = []
    for spec in METRICS.get(benchmark, ()):
        x, present = _matrix(store, runs, spec.name, items)
        if not present.any():
            continue
        kind = _kind(x)
        cis = st.bootstrap_ci(x, settings.n_resamples, settings.confidence, settings.seed, names=names)
        scored = ~np.isnan(x)
        rows: dict[str, dict[str, Any]] = {}
        for r, (run, ci) in enumerate(zip(runs, cis.intervals, strict=True)):
            rows[str(run.run_id)] = {
                "mean": ci.mean,
                "low": ci.low,
                "high": ci.high,
                "n_scored": int(scored[r].sum()),
                "unscored_rate": float(1 - scored[r].mean()) if present[r] else None,
                "reason": ci.reason if present[r] else "not computed by this run",
            }
        markings: dict[str, Any] = {}
        comparisons: list[dict[str, Any]] = []
        if spec.primary and len(runs) > 1:
            args = (x, names, kind, settings.n_resamples, settings.confidence, settings.alpha, settings.seed)
            pairs = st.all_pairs(*args, higher_is_better=spec.higher_is_better)
            best = st.indistinguishable_from_best(*args, higher_is_better=spec.higher_is_better)
            letters = pairs.letters.letters_by_name()
            for run in runs:
                rows[str(run.run_id)]["letters"] = letters.get(run.name, "")
                rows[str(run.run_id)]["best"] = run.name in best.members
            markings = {
                "letters_reason": pairs.letters.reason,
                "best": best.best,
                "n_permutations": pairs.n_permutations,
                "family": f"all {len(pairs.comparisons)} pairs of this column (Holm)",
            }
            comparisons = [dataclasses.asdict(c) for c in pairs.comparisons]
        strata_out = []
        if len(set(stratum_labels)) > 1:
            strat = st.stratified_bootstrap_ci(
                x, stratum_labels, settings.n_resamples, settings.confidence, settings.seed, names=names
            )
            for s in sorted(strat.strata, key=lambda s: _sortable_stratum(str(s.stratum))):
                strata_out.append(
                    {
                        "stratum": str(s.stratum),
                        "n_items": s.n_items,
                        "rows": {
                            str(run.run_id): {
                                "mean": ci.mean,
                                "low": ci.low,
                                "high": ci.high,
                                "n": ci.n_items,
                            }
                            for run, ci in zip(runs, s.intervals, strict=True)
                        },
                    }
                )
        metrics_out.append(
            {
                "metric": spec.name,
                "label": spec.label,
                "scale": spec.scale,
                "kind": kind,
                "primary": spec.primary,
                "higher_is_better": spec.higher_is_better,
                "judge": _judge_column(spec, runs, audits),
                "rows": rows,
                "markings": markings,
                "comparisons": comparisons,
                "strata": strata_out,
            }
        )
    first = runs[0]
    return {
        "key": board_key,
        "label": first.board_label,
        "benchmark": benchmark,
        "corpus_status": first.corpus_status,
        "subset": first.subset,
        "n_items": len(items),
        "stratum_name": STRATUM_NAME.get(benchmark, "stratum"),
        "strata_sizes": {k: int((stratum_labels == k).sum()) for k in sorted(set(strata.values()))},
        "runs": [
            {
                "run_id": r.run_id,
                "name": r.name,
                "model": r.model,
                "created": r.created,
                "submitted_at": r.submitted_at,
                "provenance": r.provenance,
            }
            for r in runs
        ],
        "metrics": metrics_out,
    }


def board_keys(store: Store) -> list[str]:
    """Full boards first (full corpus, not subsets), then the rest; stable by key."""
    keys = {r.board_key: r for r in store.runs()}
    return sorted(keys, key=lambda k: (keys[k].subset, keys[k].corpus_status != "full", k))


def compute_all(store: Store, settings: Settings = Settings()) -> dict[str, Any]:
    return {
        "settings": dataclasses.asdict(settings),
        "boards": [compute_board(store, k, settings) for k in board_keys(store)],
    }


# ---------------------------------------------------------------------------------------------- comparisons


def compare_runs(
    store: Store,
    pairs: list[tuple[RunRow, RunRow]],
    metrics: list[str] | None = None,
    settings: Settings = Settings(),
) -> dict[str, Any]:
    """Paired tests for each (a, b) pair and metric on the items both scored; Holm over all of them.

    Continuous metrics: paired bootstrap CI of the difference plus a sign-flip permutation test; binary
    metrics (exact match): the same CI plus McNemar. The family for Holm is every comparison returned.
    """
    rows: list[dict[str, Any]] = []
    for a, b in pairs:
        sa, sb = store.item_scores(a.run_id), store.item_scores(b.run_id)
        wanted = metrics or [s.name for s in METRICS.get(a.benchmark, ()) if s.primary]
        for metric in wanted:
            if metric not in sa or metric not in sb:
                continue
            spec = _spec(a.benchmark, metric)
            ids = sorted(set(sa[metric]) | set(sb[metric]))
            va = np.array([np.nan if sa[metric].get(i) is None else sa[metric][i] for i in ids])
            vb = np.array([np.nan if sb[metric].get(i) is None else sb[metric][i] for i in ids])
            kind = _kind(np.concatenate([va, vb]))
            boot = st.paired_bootstrap(va, vb, settings.n_resamples, settings.confidence, settings.seed)
            row: dict[str, Any] = {
                "a": a.name,
                "b": b.name,
                "a_id": a.run_id,
                "b_id": b.run_id,
                "metric": metric,
                "label": spec.label,
                "scale": spec.scale,
                "kind": kind,
                "n_shared": boot.n_shared,
                "mean_a": boot.mean_a,
                "mean_b": boot.mean_b,
                "difference": boot.difference,
                "ci_low": boot.ci_low,
                "ci_high": boot.ci_high,
                "bootstrap_p": boot.p_value,
                "reason": boot.reason,
            }
            if kind == "binary":
                mc = st.mcnemar(va, vb)
                row |= {"test": f"McNemar ({mc.method})", "p_value": mc.p_value, "b01": mc.b01, "b10": mc.b10}
            else:
                perm = st.paired_permutation_test(va, vb, settings.n_resamples, settings.seed)
                row |= {"test": f"sign-flip ({perm.method})", "p_value": perm.p_value}
            rows.append(row)
    tested = [k for k, r in enumerate(rows) if r["p_value"] is not None]
    holm = st.holm_bonferroni([rows[k]["p_value"] for k in tested], settings.alpha)
    for r in rows:
        r["p_adjusted"], r["significant"] = None, False
    for k, adj, rej in zip(tested, holm.adjusted, holm.reject, strict=True):
        rows[k]["p_adjusted"], rows[k]["significant"] = adj, rej
    return {"settings": dataclasses.asdict(settings), "family_size": len(tested), "comparisons": rows}
