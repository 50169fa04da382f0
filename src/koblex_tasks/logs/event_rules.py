"""What happened in each sample, read from its events: the rules a non-released run must pass to be ranked.

The scores are re-derived from the outputs (`rederivation`); these rules check that the outputs were earned,
the same way for every solver, from the events Inspect and the package's retriever recorded in the log:

- **answer**: the scored answer (the benchmark's answer rule applied to the completion) occurs, normalised,
  in the output of a call to the evaluated model in that sample (an empty answer passes). A solver that
  writes the answer itself, without a model call, fails.
- **provisions**: each predicted provision (the manifest's `prediction_keys`) was returned by a retrieval the
  package's retriever recorded in that sample's events (`corpus.events.RETRIEVAL_EVENT`).
- **reference**: no input of a model call (other than the judge's) contains the reference answer
  (`Sample.target`, normalised, at least `MIN_TARGET_CHARS` long), nor a window of a gold provision's text
  (the manifest's `gold_windows`, see `containment`) before a recorded retrieval returned that provision.
  Text the model could see anyway is exempt: the sample's input, the package's prompt files, what the
  evaluated model wrote earlier in the sample, and what recorded retrievals returned.

The first sample that fails is named with the rule, in one line. Samples are read one at a time with their
events (memory bounded by the largest sample). A run whose outputs are a released file's replay is verified
by the manifest instead (`placement`). Logs of task versions that did not record retrievals cannot pass the
provisions rule: the refusal says which version to re-run with.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log_samples

from koblex_tasks.containment import digest, normalised
from koblex_tasks.corpus.events import RETRIEVAL_EVENT
from koblex_tasks.logs.identity import RunIdentity
from koblex_tasks.logs.references import manifest_for
from koblex_tasks.tasks import find_benchmark
from koblex_tasks.text import printable

# The provenance of a run whose outputs are a released file's replay: the manifest verified them, not events.
RELEASED = {"event_rules": "released replay: outputs verified by the reference manifest"}
MIN_TARGET_CHARS = 16  # a shorter reference answer ("예", "No") occurs in inputs by chance
SHOWN_CHARS = 80


PLACEHOLDER = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")
MIN_FRAGMENT_CHARS = 8  # shorter pieces of a prompt file between placeholders cover nothing
INPUT_PARTS = re.compile(r"\n|: ")  # a sample input's lines, and a labelled line's text ("질문: ...")


@cache
def prompt_fragments() -> tuple[str, ...]:
    """The text of every prompt file the package ships, cut at its placeholders and normalised: what a
    genuine prompt holds besides the sample's text (few-shot examples may quote statutes and answers)."""

    def walk(node: Traversable) -> Iterator[str]:
        for child in node.iterdir():
            if child.is_dir():
                yield from walk(child)
            elif child.name.endswith(".txt"):
                yield child.read_text("utf-8")

    pieces = {
        normalised(piece)
        for text in walk(resources.files("koblex_tasks.prompts"))
        for piece in PLACEHOLDER.split(text)
    }
    return tuple(sorted(p for p in pieces if len(p) >= MIN_FRAGMENT_CHARS))


@dataclass
class Seen:
    """What the model could see without peeking, so far in one sample (normalised): the sample's input, what
    the evaluated model wrote, what recorded retrievals returned, and the package's prompt files."""

    texts: list[str] = field(default_factory=list)
    returned: set[str] = field(default_factory=set)  # key hashes returned by recorded retrievals

    def add(self, text: str) -> None:
        self.texts.append(normalised(text))

    def holds(self, needle: str) -> bool:
        return any(needle in t for t in self.texts) or any(needle in t for t in prompt_fragments())

    def covered(self, text: str) -> bytearray:
        """Per character of `text` (normalised), 1 where an occurrence of something seen covers it."""
        mask = bytearray(len(text))
        for piece in (*self.texts, *prompt_fragments()):
            at = text.find(piece) if piece else -1
            while at >= 0:
                mask[at : at + len(piece)] = b"\x01" * len(piece)
                at = text.find(piece, at + 1)
        return mask


def _input_text(event: Any) -> str:
    return "\n".join(m.text for m in event.input or [])


def _is_evaluated(event: Any, model: str) -> bool:
    """A call to the evaluated model (not the judge's role, not another model)."""
    return event.role is None and str(event.model) == model


def _gold_in(text: str, gold: list[dict[str, Any]], seen: Seen) -> str | None:
    """The key hash of the first gold provision no recorded retrieval returned that has a window in `text`
    made of more than what was seen (a window covered, character by character, by seen text is not a copy)."""
    pending = [g for g in gold if g["key"] not in seen.returned]
    if not pending:
        return None
    norm = normalised(text)
    starts = [0, *(i + 1 for i, ch in enumerate(norm) if ch == " ")]
    by_window: dict[int, dict[str, list[dict[str, Any]]]] = {}  # length -> window hash -> provisions
    for g in pending:
        for h in g["windows"]:
            by_window.setdefault(int(g["chars"]), {}).setdefault(h, []).append(g)
    hits = [
        (i, n, g)
        for n, table in by_window.items()
        for i in starts
        if i + n <= len(norm)
        for g in table.get(digest(norm[i : i + n]), ())
    ]
    if not hits:
        return None
    mask = seen.covered(norm)
    for i, n, g in hits:
        if any(not mask[j] and norm[j] != " " for j in range(i, i + n)):
            return str(g["key"])
    return None


def _problem_in(text: str, target: str, gold: list[dict[str, Any]], seen: Seen, what: str) -> str | None:
    """The reference rule on one text the solver sent (a model input, a retrieval query)."""
    if len(target) >= MIN_TARGET_CHARS and target in normalised(text) and not seen.holds(target):
        return f"reference: {what} contains the reference answer (Sample.target)"
    if gold and (key := _gold_in(text, gold, seen)) is not None:
        return f"reference: {what} contains a gold provision's text (key hash {key}) before any recorded retrieval returned it"
    return None


def sample_problem(
    sample: EvalSample,
    model: str,
    answer: str,
    predicted: list[str],
    gold: list[dict[str, Any]],
    check_predictions: bool,
) -> str | None:
    """The rule this sample breaks (one line), or None."""
    target = normalised(sample.target if isinstance(sample.target, str) else "\n".join(sample.target))
    seen = Seen()
    given = sample.input if isinstance(sample.input, str) else "\n".join(m.text for m in sample.input)
    for piece in INPUT_PARTS.split(given):  # prompts show background and question apart, or joined
        if len(piece.strip()) >= MIN_FRAGMENT_CHARS:
            seen.add(piece)
    outputs: list[str] = []
    keys: set[str] = set()  # returned by recorded retrievals
    for event in sample.events:
        if event.event == "info" and event.source == RETRIEVAL_EVENT and isinstance(event.data, dict):
            query, returned = event.data.get("query"), event.data.get("returned")
            if isinstance(query, str) and (
                why := _problem_in(query, target, gold, seen, "a retrieval query")
            ):
                return why
            for key in returned if isinstance(returned, list) else []:
                seen.returned.add(digest(str(key)))
                seen.add(str(key))
                keys.add(str(key))
        elif event.event == "model" and event.role is None:
            if why := _problem_in(_input_text(event), target, gold, seen, "a model input"):
                return why
            if _is_evaluated(event, model) and event.output is not None:
                outputs.append(event.output.completion)
                seen.add(event.output.completion)
    wanted = normalised(answer)
    if wanted and not any(wanted in normalised(o) for o in outputs):
        return (
            f"answer: the scored answer {printable(answer[:SHOWN_CHARS])!r} is not in the output of any call to "
            f"the evaluated model {model} in this sample"
        )
    if check_predictions:
        missing = [k for k in predicted if k not in keys]
        if missing:
            return (
                f"provisions: predicted provision {printable(missing[0][:SHOWN_CHARS])!r} was not returned by any "
                "retrieval the package's retriever recorded in this sample"
            )
    return None


def check_event_rules(
    path: Path, log: EvalLog, run: RunIdentity, replayed: str | None = None
) -> dict[str, Any] | str:
    """Every sample against the rules: what was read (the run's provenance), or the one-line refusal naming
    the first offending sample. `replayed`: the log says it replays released outputs and the benchmark has no
    manifest to verify them by (LEGIT): no model wrote its answers, so the answer rule cannot apply."""
    benchmark = find_benchmark(run.spec.task)
    answer_of = benchmark.answer if benchmark is not None and benchmark.answer else None
    manifest = manifest_for(run.spec.name)
    prediction_keys = manifest.prediction_keys if manifest is not None else ()
    gold_windows = (
        manifest.gold_windows
        if manifest is not None and run.fingerprint == manifest.dataset_fingerprint
        else {}
    )
    model = str(log.eval.model)
    counts = [0, 0, 0]
    try:
        samples = read_eval_log_samples(
            path, all_samples_required=False, resolve_attachments=True, exclude_fields={"messages"}
        )
        for sample in samples:
            store = sample.store or {}
            answer = answer_of(sample) if answer_of else (sample.output.completion if sample.output else "")
            answer = "" if replayed else answer
            predicted = [str(k) for key in prediction_keys for k in (store.get(key) or [])]
            why = sample_problem(
                sample,
                model,
                answer,
                predicted,
                list(gold_windows.get(str(sample.id)) or []),
                bool(prediction_keys),
            )
            if why is not None:
                return f"sample {printable(str(sample.id))!r} (epoch {sample.epoch}) breaks the event rule {why}{_old(run, str(log.eval.task_version), why)}"
            counts[0] += 1
            counts[1] += sum(e.event == "model" for e in sample.events)
            counts[2] += sum(e.event == "info" and e.source == RETRIEVAL_EVENT for e in sample.events)
    except Exception as exc:  # an unreadable sample is a refusal, never a crash
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return f"its samples' events cannot be read: {printable(first[:200])}"
    passed = {
        "event_rules": "passed",
        "samples": counts[0],
        "model_calls": counts[1],
        "retrievals": counts[2],
    }
    if replayed:
        passed["answer_rule"] = (
            f"not applied: released outputs ({replayed}) the benchmark has no manifest for"
        )
    return passed


def _old(run: RunIdentity, version: str, why: str) -> str:
    """For a log older than the retrieval events: the version to re-run with."""
    since = run.spec.events_since
    if since and why.startswith("provisions") and _before(version, since):
        return f" (task version {version} did not record retrievals: re-run with task version >= {since})"
    return ""


def _before(version: str, since: str) -> bool:
    def parts(v: str) -> tuple[int, ...]:
        return tuple(int(p) if p.isdigit() else 0 for p in v.split("."))

    return parts(version) < parts(since)
