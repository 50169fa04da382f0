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

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log_samples

from koblex_tasks.containment import normalised, scan
from koblex_tasks.corpus.events import RETRIEVAL_EVENT
from koblex_tasks.logs.identity import RunIdentity
from koblex_tasks.logs.references import manifest_for
from koblex_tasks.tasks import find_benchmark
from koblex_tasks.text import printable

# The provenance of a run whose outputs are a released file's replay: the manifest verified them, not events.
RELEASED = {"event_rules": "released replay: outputs verified by the reference manifest"}
MIN_TARGET_CHARS = 16  # a shorter reference answer ("예", "No") occurs in inputs by chance
SHOWN_CHARS = 80


@cache
def prompt_text() -> str:
    """Every prompt file the package ships, normalised and joined (few-shot examples may quote statutes)."""

    def walk(node: Traversable) -> Iterator[str]:
        for child in node.iterdir():
            if child.is_dir():
                yield from walk(child)
            elif child.name.endswith(".txt"):
                yield child.read_text("utf-8")

    return "\n".join(normalised(t) for t in sorted(walk(resources.files("koblex_tasks.prompts"))))


@cache
def _prompt_windows(length: int) -> frozenset[str]:
    return frozenset(scan(prompt_text(), [length]))


@dataclass
class Seen:
    """What the model could see without peeking, so far in one sample."""

    texts: list[str] = field(default_factory=list)  # input, earlier outputs, returned provisions
    returned: set[str] = field(default_factory=set)  # keys returned by recorded retrievals

    def contains(self, needle: str) -> bool:
        return any(needle in normalised(t) for t in self.texts) or needle in prompt_text()

    def windows(self, lengths: set[int]) -> set[str]:
        found = set().union(*(_prompt_windows(n) for n in lengths))
        return found.union(*(scan(t, lengths) for t in self.texts))


def _input_text(event: Any) -> str:
    return "\n".join(m.text for m in event.input or [])


def _is_evaluated(event: Any, model: str) -> bool:
    """A call to the evaluated model (not the judge's role, not another model)."""
    return event.role is None and str(event.model) == model


def _gold_hits(text: str, gold: list[dict[str, Any]], returned: set[str], exempt: Seen) -> str | None:
    """The first gold provision (its key hash) whose window occurs in `text` though no retrieval returned it."""
    pending = [g for g in gold if g["key"] not in returned]
    if not pending:
        return None
    lengths = {int(g["chars"]) for g in pending}
    found = scan(text, lengths)
    hits = [g for g in pending if found.intersection(g["windows"])]
    if not hits:
        return None
    allowed = exempt.windows(lengths)
    return next((g["key"] for g in hits if (found - allowed).intersection(g["windows"])), None)


def sample_problem(
    sample: EvalSample,
    model: str,
    answer: str,
    predicted: list[str],
    gold: list[dict[str, Any]],
    check_predictions: bool,
) -> str | None:
    """The rule this sample breaks (one line), or None."""
    target = sample.target if isinstance(sample.target, str) else "\n".join(sample.target)
    target_norm = normalised(target)
    seen = Seen(
        texts=[sample.input if isinstance(sample.input, str) else "\n".join(m.text for m in sample.input)]
    )
    outputs: list[str] = []
    for event in sample.events:
        if event.event == "info" and event.source == RETRIEVAL_EVENT and isinstance(event.data, dict):
            returned = event.data.get("returned")
            keys = [str(k) for k in returned] if isinstance(returned, list) else []
            seen.returned.update(keys)
            seen.texts.extend(keys)
        elif event.event == "model" and event.role is None:
            text = _input_text(event)
            if (
                len(target_norm) >= MIN_TARGET_CHARS
                and target_norm in normalised(text)
                and not seen.contains(target_norm)
            ):
                return "reference: a model input contains the reference answer (Sample.target)"
            if gold and (key := _gold_hits(text, gold, _hashed(seen.returned), seen)) is not None:
                return (
                    f"reference: a model input contains a gold provision's text (key hash {key}) before any "
                    "recorded retrieval returned it"
                )
            if _is_evaluated(event, model) and event.output is not None:
                outputs.append(event.output.completion)
                seen.texts.append(event.output.completion)
    wanted = normalised(answer)
    if wanted and not any(wanted in normalised(o) for o in outputs):
        return (
            f"answer: the scored answer {printable(answer[:SHOWN_CHARS])!r} is not in the output of any call to "
            f"the evaluated model {model} in this sample"
        )
    if check_predictions:
        missing = [k for k in predicted if k not in seen.returned]
        if missing:
            return (
                f"provisions: predicted provision {printable(missing[0][:SHOWN_CHARS])!r} was not returned by any "
                "retrieval the package's retriever recorded in this sample"
            )
    return None


def _hashed(keys: set[str]) -> set[str]:
    from koblex_tasks.containment import digest

    return {digest(k) for k in keys}


def check_event_rules(path: Path, log: EvalLog, run: RunIdentity) -> dict[str, Any] | str:
    """Every sample against the rules: what was read (the run's provenance), or the one-line refusal naming
    the first offending sample."""
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
    return {"event_rules": "passed", "samples": counts[0], "model_calls": counts[1], "retrievals": counts[2]}


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
