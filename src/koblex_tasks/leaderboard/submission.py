"""One Inspect eval log as a leaderboard submission: read, validated against its benchmark's spec, extracted.

Everything the leaderboard needs later (per-sample scores, strata, provenance, the board it belongs to) is
extracted here, so statistics and the site never read the log again. Validation collects every problem it
finds and raises :class:`SubmissionRejected` with all of them; nothing is stored for a rejected log. The steps
live in their own modules: `reading` (the file, read within `ReadLimits`), `identity` (task, version,
scorers), `coverage` (samples, epochs, subsets, official ids), `scores` (values checked against the spec's
ranges), `rederivation` (every value recomputed from the log by its scorer's code), `placement` (the board),
`provenance`; `text` (names).
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from koblex_tasks.logs.coverage import check_coverage
from koblex_tasks.logs.event_rules import RELEASED, check_event_rules
from koblex_tasks.logs.identity import identify
from koblex_tasks.logs.placement import declared_replay, gather_evidence, place
from koblex_tasks.logs.provenance import default_name, provenance
from koblex_tasks.logs.reading import ReadLimits, read_log
from koblex_tasks.logs.rederivation import check_rederived
from koblex_tasks.logs.references import manifest_for, official_references
from koblex_tasks.logs.rejection import Problems, SubmissionRejected
from koblex_tasks.logs.scores import ScoreRow, ScoreTable, extract_scores
from koblex_tasks.text import folded, model_problem, name_problem, printable

__all__ = ["ReadLimits", "Submission", "SubmissionRejected", "load_submission"]


@dataclass
class Submission:
    """One validated run: identity, board, per-item scores and provenance."""

    log_path: str
    eval_id: str
    content_hash: str
    task: str
    benchmark: str
    model: str
    name: str
    board_key: str
    board_label: str
    dataset_fingerprint: str
    corpus_status: str  # "full" | "partial" | "unknown" | "unregistered"
    subset: bool
    created: str
    epochs: int
    # (sample_id, epoch, metric, value or None for unscored)
    scores: list[ScoreRow] = field(default_factory=list)
    strata: dict[str, str] = field(default_factory=dict)  # sample_id -> stratum label
    provenance: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # stored anyway, e.g. a non-finite solver argument

    @property
    def sample_ids(self) -> list[str]:
        return sorted(self.strata)


INVISIBLE = ("Cf", "Cc", "Co", "Cn", "Zl", "Zp")  # format (zero-width, bidi), control, private, unassigned


def model_name_problem(model: str) -> str | None:
    """A model id with invisible or look-alike characters would print like another model's (`replay/gpt-4o`
    with a zero-width space, or with Cyrillic `р` and `е`)."""
    hidden = sorted({f"U+{ord(ch):04X}" for ch in model if unicodedata.category(ch) in INVISIBLE})
    if hidden:
        return f"the model id holds invisible characters ({', '.join(hidden[:5])})"
    reads_as = folded(model)
    if reads_as != model and reads_as.isascii():
        return f"the model id {printable(model)!r} holds look-alike characters: it reads as {reads_as!r}"
    return None


def run_name_problem(name: str) -> str | None:
    """Why `name` cannot name a run: `name_problem`'s reasons, invisible characters (a zero-width space makes
    two names print alike) or unusual spaces, or a name that reads as a run id (`1`, `#2`, `٣`), which
    `remove` and `compare` would take for another run."""
    if why := name_problem(name):
        return why
    hidden = sorted({f"U+{ord(ch):04X}" for ch in name if unicodedata.category(ch) in INVISIBLE})
    hidden += sorted({f"U+{ord(ch):04X}" for ch in name if ch.isspace() and ch != " "})
    if hidden:
        return f"the name holds invisible or unusual characters ({', '.join(hidden[:5])})"
    bare = name.strip().removeprefix("#").strip()
    if bare and all(ch.isdecimal() or ch.isdigit() for ch in bare):
        return f"the name {printable(name)!r} reads as a run id: give a name with letters"
    return None


def normalised(text: str) -> str:
    """Text as the duplicate check compares it: NFKC, invisible characters dropped, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text)
    return " ".join("".join(ch for ch in text if unicodedata.category(ch) != "Cf").split())


def _content_hash(
    task: str, board_key: str, samples: list[Any], keys: tuple[str, ...], judges: list[str]
) -> str:
    """The run's outputs on its board: per item, the normalised completion and the recorded outputs `keys`,
    epochs collapsed, and who judged them. A copy renamed, re-written, with a newline appended or its epochs
    repeated is the same run."""
    content = sorted(
        {
            json.dumps(
                [
                    str(s.id),
                    normalised(s.output.completion if s.output else ""),
                    {k: (s.store or {}).get(k) for k in keys},
                ],
                sort_keys=True,
                ensure_ascii=False,
            )
            for s in samples
        }
    )
    blob = json.dumps([task, board_key, content, judges], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def judge_keys(table: ScoreTable) -> list[str]:
    """`scorer: model | prompt` of every judge that graded the run (sorted)."""
    return sorted(
        f"{name}: {model} | {prompt}"
        for name, tally in table.judges.items()
        for model in tally.models or {"?": 0}
        for prompt in tally.prompts or {"?": 0}
    )


def output_keys(benchmark: str) -> tuple[str, ...]:
    """The store entries that are part of a run's outputs (the benchmark's manifest says; else none)."""
    manifest = manifest_for(benchmark)
    return manifest.output_keys if manifest is not None else ()


def load_submission(
    path: str | Path, name: str | None = None, allow_subset: bool = False, limits: ReadLimits | None = None
) -> Submission:
    """Validate ``path`` and extract a :class:`Submission`; raises :class:`SubmissionRejected`."""
    path = Path(path)
    if name is not None and (why := run_name_problem(name)):
        raise SubmissionRejected(path, [why])
    log, samples = read_log(path, limits)
    problems = Problems(path)
    run = identify(log, problems)
    if why := model_problem(str(log.eval.model)) or model_name_problem(str(log.eval.model)):
        problems.add(why)
    if name is None and (why := run_name_problem(default_name(log, run))):
        problems.add(f"the default name: {why} (pass --name)")
    coverage = check_coverage(log, samples, run, problems, allow_subset)
    table = extract_scores(samples, run, problems)
    references = official_references(samples, run, problems)
    verification = check_rederived(log, samples, run, problems, references)
    evidence = gather_evidence(log, samples, run, problems)
    problems.check()
    unverifiable = declared_replay(log, run) if manifest_for(run.spec.name) is None else None
    events = check_event_rules(path, log, run, unverifiable) if evidence.released is None else RELEASED
    if isinstance(events, str):
        raise SubmissionRejected(path, [events])

    ev = log.eval
    replay = evidence.replay
    placement = place(run, coverage, ev.task_args or {}, evidence)
    warnings: list[str] = []
    record = provenance(log, run, coverage, placement, table, replay, warnings)
    if evidence.released is not None:  # which released file, by the outputs (not the header's path)
        record["replay"] = {**(record.get("replay") or {}), "released_file": evidence.released}
    return Submission(
        log_path=str(path.resolve()),
        eval_id=ev.eval_id,
        content_hash=_content_hash(
            run.spec.task, placement.board_key, samples, output_keys(run.spec.name), judge_keys(table)
        ),
        task=run.spec.task,
        benchmark=run.spec.name,
        model=str(ev.model),
        name=name or default_name(log, run),
        board_key=placement.board_key,
        board_label=placement.board_label,
        dataset_fingerprint=str(run.fingerprint),
        corpus_status=placement.corpus_status,
        subset=coverage.subset,
        created=str(ev.created),
        epochs=coverage.epochs,
        scores=table.rows,
        strata=table.strata,
        provenance={**record, "verification": {**verification, "events": events}},
        warnings=warnings,
    )
