"""``koblex judge-audit``: how well do two labellers of LEGIT issue trees agree?

With only a labels CSV holding two groups, it compares the groups (lawyer vs lawyer: the ceiling a judge
can be held to). Each LOG adds a judge, compared with every group of the CSV.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from koblex_tasks.audit.agreement import (
    DEFAULT_N_BOOT,
    DEFAULT_SEED,
    AgreementReport,
    BootstrapCI,
    Estimate,
    compare_labellers,
)
from koblex_tasks.audit.legit.labels import (
    LabellerSet,
    labeller_from_records,
    labellers_by_group,
    load_labels,
)

__all__ = ["format_report", "judge_audit_main", "load_judge_labels_from_log"]

PROG = "koblex judge-audit"


def load_judge_labels_from_log(path: str | Path) -> LabellerSet:
    """An LLM judge's issue-level labels from a LEGIT eval log, named after the judge model."""
    from inspect_ai.log import read_eval_log

    from koblex_tasks.audit.legit.judge_labels import load_judge_labels_from_log as records_from_log

    log = read_eval_log(str(path))
    roles = log.eval.model_roles or {}
    grader = roles.get("grader")
    judge = getattr(grader, "model", None) or "judge"
    return labeller_from_records(f"judge {judge} ({Path(path).name})", records_from_log(log))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Agreement (Krippendorff's alpha, Cohen's kappa, correlations) between issue labellers.",
    )
    parser.add_argument(
        "labels", type=Path, metavar="LABELS.csv", help="human labels (columns of human_labels.csv)"
    )
    parser.add_argument("logs", nargs="*", type=Path, metavar="LOG", help="eval logs with judge labels")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument(
        "--lf-eval",
        action="store_true",
        help="LABELS.csv holds human ratings (sample_id,rating) of KoBLEX answers; LOGs hold LF-Eval scores",
    )
    parser.add_argument(
        "--n-boot", type=int, default=DEFAULT_N_BOOT, help="bootstrap resamples (default 2000)"
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed (default 0)")
    return parser


def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _fmt_ci(ci: BootstrapCI) -> str:
    return "n/a" if ci.low is None or ci.high is None else f"[{ci.low:.3f}, {ci.high:.3f}]"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    left = {0}  # label column left-aligned, numbers right-aligned

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def format_report(report: AgreementReport) -> str:
    """Aligned plain-text tables; undefined values print as n/a with their reasons listed below."""
    notes: list[str] = []

    def est(label: str, what: str, e: Estimate) -> str:
        if e.value is None:
            notes.append(f"{label} {what}: {e.reason}")
        return _fmt(e.value)

    def ci(label: str, c: BootstrapCI) -> str:
        if c.reason:
            notes.append(f"{label} CI: {c.reason}")
        return _fmt_ci(c)

    out = [
        f"{report.labeller_a} vs {report.labeller_b}: {report.units_a} / {report.units_b} units, "
        f"{report.shared} shared, {report.only_a_count} only in {report.labeller_a}, "
        f"{report.only_b_count} only in {report.labeller_b}",
        f"bootstrap: {report.n_boot} resamples, seed {report.seed}",
        "",
    ]
    rows = [
        [
            b.label,
            str(b.units),
            "n/a" if b.raw_agreement is None else f"{b.agreements}/{b.units} = {b.raw_agreement:.3f}",
            est(b.label, "kappa", b.kappa),
            est(b.label, "alpha", b.alpha),
            ci(b.label, b.alpha_ci),
        ]
        for b in report.binary
    ]
    out += _table(["label", "units", "raw agreement", "kappa", "alpha", "95% CI"], rows)
    out.append("")
    rows = []
    for s in report.scores:
        for name, c in (("pearson", s.pearson), ("spearman", s.spearman)):
            if c.value is None:
                notes.append(f"{s.label} {name}: {c.reason}")
        rows.append(
            [
                s.label,
                str(s.units),
                _fmt(s.pearson.value),
                _fmt(s.spearman.value),
                est(s.label, "alpha", s.alpha),
                ci(s.label, s.alpha_ci),
            ]
        )
    out += _table(["score (interval alpha)", "units", "pearson", "spearman", "alpha", "95% CI"], rows)
    if notes:
        out += ["", *(f"note: {n}" for n in notes)]
    return "\n".join(out)


def _error(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def _lf_eval_audit(args: argparse.Namespace) -> int:
    """Pearson and Spearman between human ratings and each log's LF-Eval judge scores."""
    from koblex_tasks.audit.agreement import rating_correlation
    from koblex_tasks.audit.koblex.ratings import lf_eval_scores, load_ratings

    if not args.logs:
        return _error("--lf-eval needs at least one LOG with LF-Eval scores")
    try:
        human = load_ratings(args.labels)
        judged = [(log, *lf_eval_scores(log)) for log in args.logs]
    except (OSError, ValueError) as exc:
        return _error(str(exc))
    results = []
    for log, scores, unscored in judged:
        result = rating_correlation(human, scores).to_dict()
        results.append({"log": str(log), "unscored": unscored, **result})
    if args.json:
        print(
            json.dumps({"ratings": str(args.labels), "lf_eval": results}, ensure_ascii=False, allow_nan=False)
        )
        return 0
    rows = [
        [
            Path(r["log"]).name,
            str(r["shared"]),
            str(r["unscored"]),
            _fmt(r["pearson"]["value"]),
            _fmt(r["spearman"]["value"]),
        ]
        for r in results
    ]
    print("\n".join(_table(["log", "items", "unscored", "pearson", "spearman"], rows)))
    return 0


def judge_audit_main(argv: list[str] | None = None) -> int:
    """Run the audit; returns the exit code (0 ok, 2 usage or input error) instead of raising."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage/help
        return exc.code if isinstance(exc.code, int) else 2
    if args.n_boot < 0:
        return _error(f"--n-boot must be >= 0, got {args.n_boot}")
    if args.lf_eval:
        return _lf_eval_audit(args)
    try:
        groups = labellers_by_group(load_labels(args.labels))
    except (OSError, ValueError) as exc:
        return _error(f"cannot read labels: {exc}")

    judges: list[LabellerSet] = []
    for log in args.logs:
        try:
            judges.append(load_judge_labels_from_log(log))
        except (OSError, ValueError, KeyError) as exc:
            return _error(f"cannot read judge labels from {log}: {exc}")

    pairs: list[tuple[LabellerSet, LabellerSet]] = []
    humans = list(groups.values())
    if len(humans) == 2:
        pairs.append((humans[0], humans[1]))
    elif not judges:
        return _error(
            f"{args.labels} has {len(humans)} group(s) {sorted(groups)}; without LOG arguments it needs 2"
        )
    pairs += [(h, j) for j in judges for h in humans]
    pairs += [(a, b) for i, a in enumerate(judges) for b in judges[i + 1 :]]  # judge vs judge

    reports = [compare_labellers(a, b, n_boot=args.n_boot, seed=args.seed) for a, b in pairs]
    if args.json:
        payload = {"labels": str(args.labels), "comparisons": [r.to_dict() for r in reports]}
        print(json.dumps(payload, ensure_ascii=False, allow_nan=False))
    else:
        print("\n\n".join(format_report(r) for r in reports))
    return 0
