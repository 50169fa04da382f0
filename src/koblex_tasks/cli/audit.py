"""``koblex judge-audit``: how well do two labellers of LEGIT issue trees agree? (`-h` says how it pairs them)"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import cast

import click

from koblex_tasks.audit.agreement import DEFAULT_N_BOOT, DEFAULT_SEED, BootstrapCI, Estimate
from koblex_tasks.audit.legit.agreement import AgreementReport, RuleQuestionAgreement, compare_labellers
from koblex_tasks.audit.legit.labels import (
    LabellerSet,
    labeller_from_records,
    labellers_by_group,
    load_labels,
)
from koblex_tasks.cli._base import CommandError, KoblexCommand, argument, echo_json, reading, run
from koblex_tasks.cli.main import PROG, koblex

__all__ = ["format_report", "judge_audit", "judge_audit_main", "load_judge_labels_from_log"]


def load_judge_labels_from_log(path: str | Path) -> LabellerSet:
    """An LLM judge's issue-level labels from a LEGIT eval log, named after the judge model."""
    from inspect_ai.log import read_eval_log

    from koblex_tasks.audit.legit.judge_labels import load_judge_labels_from_log as records_from_log

    log = read_eval_log(str(path))
    roles = log.eval.model_roles or {}
    grader = roles.get("grader")
    judge = getattr(grader, "model", None) or "judge"
    return labeller_from_records(f"judge {judge} ({Path(path).name})", records_from_log(log))


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


def _no_overlap(report: AgreementReport) -> str:
    """One line instead of a table of n/a when two labellers judged no unit in common, saying why."""

    def covered(units: list[list[str]], count: int) -> str:
        generators = sorted({u[0] for u in units})
        shown = ", ".join(generators[:4]) + (", ..." if len(generators) > 4 else "")
        return f"{count} issues of generator(s) {shown}" if count else "nothing"

    return (
        f"{report.labeller_a} vs {report.labeller_b}: no issue in common, so no agreement can be computed "
        f"({report.labeller_a} labels {covered(report.only_a, report.only_a_count)}; {report.labeller_b} "
        f"labels {covered(report.only_b, report.only_b_count)}): audit a judge on the generators and "
        "documents the lawyers labelled"
    )


def format_report(report: AgreementReport) -> str:
    """Aligned plain-text tables; undefined values print as n/a with their reasons listed below."""
    if report.shared == 0:
        return _no_overlap(report)
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
    by_rule = report.question_score_by_rule
    for s in [*report.scores, *([by_rule.agreement] if by_rule else [])]:
        for name, c in (("pearson", s.pearson), ("spearman", s.spearman)):
            if c.value is None:
                notes.append(f"{s.label} {name}: {c.reason}")
    rows = [
        [s.label + (" (stored scores)" if s.label == "question score" else ""), str(s.units),
         _fmt(s.pearson.value), _fmt(s.spearman.value), est(s.label, "alpha", s.alpha), ci(s.label, s.alpha_ci)]
        for s in [*report.scores, *([by_rule.agreement] if by_rule else [])]
    ]  # fmt: skip
    out += _table(["score (interval alpha)", "units", "pearson", "spearman", "alpha", "95% CI"], rows)
    if by_rule is not None:
        stored = next((s for s in report.scores if s.label == "question score"), None)
        out += ["", *_headline(by_rule, stored.alpha.value if stored else None)]
    if notes:
        out += ["", *(f"note: {n}" for n in notes)]
    return "\n".join(out)


def _headline(by_rule: RuleQuestionAgreement, stored_alpha: float | None) -> list[str]:
    """The paper's figure with the rule it was computed under, and one line on why the stored scores differ."""
    from koblex_tasks.scorers.legit.arithmetic import RULE_SUMMARY

    a = by_rule.agreement
    skipped = (
        f", {by_rule.skipped} shared questions not labelled node for node left out" if by_rule.skipped else ""
    )
    lines = [
        f"headline: question-score alpha {_fmt(a.alpha.value)} {_fmt_ci(a.alpha_ci)} on {a.units} questions, "
        f"scores recomputed from the labels under the {by_rule.rule} rule ({RULE_SUMMARY[by_rule.rule]})"
        f"{skipped}; the official analysis script's alpha formula gives {_fmt(by_rule.official_script_alpha.value)}"
    ]
    if a.units == 0:
        return lines
    parts = []
    for d in by_rule.differences:
        roots = f"{len(d.roots)} root(s) {['/'.join(r[:2]) for r in d.roots]}" if d.roots else "no root"
        parts.append(f"{d.labeller}: {roots}, {d.sub_issues} sub-issue(s), {d.questions} question sum(s)")
    if not any(d.roots or d.sub_issues for d in by_rule.differences):
        lines.append(
            f"the stored issue scores are the {by_rule.rule} rule's: both question-score alphas agree"
        )
    else:
        lines.append(
            f"why the stored-score alpha ({_fmt(stored_alpha)}) differs: the stored issue scores depart from the "
            f"{by_rule.rule} rule in {'; '.join(parts)}"
        )
    return lines


def _lf_eval_audit(labels: Path, logs: tuple[Path, ...], as_json: bool) -> None:
    """Pearson and Spearman between human ratings and each log's LF-Eval judge scores."""
    from koblex_tasks.audit.agreement import rating_correlation
    from koblex_tasks.audit.koblex.ratings import lf_eval_scores, load_ratings

    if not logs:
        raise click.UsageError("--lf-eval needs at least one LOG with LF-Eval scores")
    # rating_correlation takes any hashable ids, but Mapping's key type is invariant: hence the casts
    with reading(f"cannot read ratings {labels}"):
        human = cast("Mapping[Hashable, float]", load_ratings(labels))
    judged = []
    for log in logs:
        with reading(f"cannot read LF-Eval scores from {log}"):
            judged.append((log, *lf_eval_scores(log)))
    results = [
        {
            "log": str(log),
            "unscored": unscored,
            **rating_correlation(human, cast("Mapping[Hashable, float]", scores)).to_dict(),
        }
        for log, scores, unscored in judged
    ]
    if as_json:
        echo_json({"ratings": str(labels), "lf_eval": results})
        return
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
    click.echo("\n".join(_table(["log", "items", "unscored", "pearson", "spearman"], rows)))


def _pairs(labels: Path, logs: tuple[Path, ...]) -> list[tuple[LabellerSet, LabellerSet]]:
    """Lawyer vs lawyer (when the CSV has two groups), every judge vs every group, judge vs judge."""
    with reading("cannot read labels"):
        groups = labellers_by_group(load_labels(labels))
    judges: list[LabellerSet] = []
    for log in logs:
        with reading(f"cannot read judge labels from {log}"):
            judges.append(load_judge_labels_from_log(log))
    humans = list(groups.values())
    pairs: list[tuple[LabellerSet, LabellerSet]] = []
    if len(humans) == 2:
        pairs.append((humans[0], humans[1]))
    elif not judges:
        raise CommandError(
            f"{labels} has {len(humans)} group(s) {sorted(groups)}; without LOG arguments it needs 2"
        )
    pairs += [(h, j) for j in judges for h in humans]
    pairs += [(a, b) for i, a in enumerate(judges) for b in judges[i + 1 :]]
    return pairs


@click.command(
    "judge-audit",
    cls=KoblexCommand,
    short_help="Agreement between issue labellers (human and LLM judge).",
)
@argument(
    "labels",
    type=click.Path(path_type=Path),
    metavar="LABELS.csv",
    help="human labels (columns of human_labels.csv)",
)
@argument(
    "logs", nargs=-1, type=click.Path(path_type=Path), metavar="[LOG]...", help="eval logs with judge labels"
)
@click.option("--json", "as_json", is_flag=True, help="print one JSON object instead of tables")
@click.option(
    "--lf-eval",
    is_flag=True,
    help="LABELS.csv holds human ratings (sample_id,rating) of KoBLEX answers; LOGs hold LF-Eval scores",
)
@click.option(
    "--n-boot",
    type=click.IntRange(min=0),
    default=DEFAULT_N_BOOT,
    help=f"bootstrap resamples (default {DEFAULT_N_BOOT})",
)
@click.option("--seed", type=int, default=DEFAULT_SEED, help=f"bootstrap seed (default {DEFAULT_SEED})")
@click.option(
    "--judges",
    is_flag=True,
    help="one table of every judge of the LOGs (rubric and Likert) vs the lawyers of LABELS.csv and vs every "
    "other judge",
)
@click.option(
    "--lawyers",
    type=click.Path(path_type=Path),
    default=None,
    help="with the earlier form `judge-audit legit --judges LOG...` (judges only): the lawyers' labels CSV",
)
def judge_audit(
    labels: Path,
    logs: tuple[Path, ...],
    as_json: bool,
    lf_eval: bool,
    n_boot: int,
    seed: int,
    judges: bool,
    lawyers: Path | None,
) -> None:
    """Agreement (Krippendorff's alpha, Cohen's kappa, correlations) between issue labellers.

    With only a labels CSV holding two groups, it compares the groups (lawyer vs lawyer: the ceiling a judge
    can be held to). Each LOG adds a judge, compared with every group of the CSV.

    `judge-audit LABELS.csv LOG... --judges`: every judge of the LOGs (the rubric judge, and the Likert judge
    where scored) against the lawyers of LABELS.csv and against each other, at issue and score level, with the
    rubric-vs-Likert comparison; Markdown, or --json. (The earlier `judge-audit legit --judges LOG...
    [--lawyers CSV]` is still read, and without --lawyers compares the judges only.)
    """
    if judges:
        if str(labels) != "legit":  # one syntax: the labels CSV first, then the logs
            if lawyers is not None:
                raise click.UsageError(
                    "--lawyers is LABELS.csv itself with --judges: give the lawyers' CSV once"
                )
            lawyers = labels
        _judges_table(lawyers, logs, as_json, n_boot, seed)
        return
    if lawyers is not None:
        raise click.UsageError("--lawyers goes with --judges")
    if lf_eval:
        _lf_eval_audit(labels, logs, as_json)
        return
    reports = [compare_labellers(a, b, n_boot=n_boot, seed=seed) for a, b in _pairs(labels, logs)]
    if as_json:
        echo_json({"labels": str(labels), "comparisons": [r.to_dict() for r in reports]})
    else:
        click.echo("\n\n".join(format_report(r) for r in reports))


def _judges_table(
    lawyers: Path | None, logs: tuple[Path, ...], as_json: bool, n_boot: int, seed: int
) -> None:
    """`judge-audit LABELS.csv LOG... --judges`: see :mod:`koblex_tasks.audit.legit.judges`."""
    from koblex_tasks.audit.legit.judges import compare_raters, format_markdown, load_raters

    if not logs:
        raise click.UsageError("--judges needs at least one LOG")
    with reading("cannot read the judges"):
        raters = load_raters(lawyers, logs)
    if len(raters) < 2:
        raise CommandError(f"only one rater ({raters[0].name}): give another LOG or --lawyers CSV")
    table = compare_raters(raters, n_boot=n_boot, seed=seed)
    if as_json:
        echo_json(
            {"lawyers": str(lawyers) if lawyers else None, "logs": [str(x) for x in logs], **table.to_dict()}
        )
    else:
        click.echo(format_markdown(table))


def judge_audit_main(argv: list[str] | None = None) -> int:
    """`koblex judge-audit ARGV`; returns the exit code instead of raising SystemExit."""
    return run(koblex, argv, PROG, ["judge-audit"])
