"""Read and validate one Inspect eval log as a leaderboard submission.

Everything the leaderboard needs later (per-sample scores, strata, provenance, the board it belongs to) is
extracted here, so statistics and the site never read the log again. Validation collects every problem it
finds and raises :class:`SubmissionRejected` with all of them; nothing is stored for a rejected log.
"""

from __future__ import annotations

import hashlib
import json
import math
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KOBLEX_TASK = "koblex_tasks/koblex"
LEGIT_TASK = "koblex_tasks/legit"
KNOWN_TASK_VERSIONS = {KOBLEX_TASK: {"1.0.0"}, LEGIT_TASK: {"1.0.0"}}
# scorer name -> value keys it produces; `required` scorers must be present.
KNOWN_SCORERS: dict[str, dict[str, tuple[str, ...]]] = {
    KOBLEX_TASK: {
        "provision_match": ("provision_precision", "provision_recall", "provision_f1", "provision_em"),
        "token_f1": ("token_f1", "empty_answer"),
        "lf_eval": ("lf_eval",),
    },
    LEGIT_TASK: {
        "legit_rubric": ("legit_score", "final_order", "coverage", "correctness", "judge_failure_rate"),
    },
}
REQUIRED_SCORERS = {KOBLEX_TASK: ("provision_match", "token_f1"), LEGIT_TASK: ("legit_rubric",)}
JUDGE_SCORERS = {"lf_eval", "legit_rubric"}
BENCHMARK = {KOBLEX_TASK: "koblex", LEGIT_TASK: "legit"}
STRATUM_KEY = {KOBLEX_TASK: "hop_count", LEGIT_TASK: "difficulty"}
FULL_CORPUS_SIZE = 233_544  # the paper's statute pool (koblex_tasks.corpus.statutes.FULL_CORPUS_SIZE)
REPLAY_SOLVERS = {"koblex_tasks/replay", "koblex_tasks/legit_replay"}


class SubmissionRejected(ValueError):
    """The log cannot go on the leaderboard; ``reasons`` lists every problem found."""

    def __init__(self, path: str | Path, reasons: list[str]) -> None:
        self.path = str(path)
        self.reasons = list(reasons)
        body = "\n".join(f"  - {r}" for r in self.reasons)
        super().__init__(f"{self.path}: rejected:\n{body}")


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
    corpus_status: str  # "full" | "partial" | "unknown"
    subset: bool
    created: str
    epochs: int
    # (sample_id, epoch, metric, value or None for unscored)
    scores: list[tuple[str, int, str, float | None]] = field(default_factory=list)
    strata: dict[str, str] = field(default_factory=dict)  # sample_id -> stratum label
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def sample_ids(self) -> list[str]:
        return sorted(self.strata)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _jsonable(value: Any) -> Any:
    """Plain JSON data (pydantic models dumped, NaN -> None)."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(exclude_none=True)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _score_values(value: Any, keys: tuple[str, ...]) -> dict[str, float | None] | str:
    """Per-key floats (None = unscored); a str describes a value that is not a score."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if math.isnan(float(value)):
            return dict.fromkeys(keys)  # Score.unscored: every component unscored
        if len(keys) == 1:
            return {keys[0]: float(value)}
        return f"a single number {value!r} where {list(keys)} were expected"
    if not isinstance(value, dict):
        return f"value of type {type(value).__name__}"
    out: dict[str, float | None] = {}
    for key in keys:
        v = value.get(key)
        if v is None:
            out[key] = None
            continue
        if isinstance(v, bool) or not isinstance(v, int | float):
            return f"{key}={v!r} is not a number"
        f = float(v)
        if math.isinf(f):
            return f"{key} is infinite"
        out[key] = None if math.isnan(f) else f
    return out


def _corpus(task: str, meta: dict[str, Any], replay: bool) -> tuple[str, dict[str, Any]]:
    """Corpus completeness and its description.

    Replays re-score predictions the paper produced on its full 233,544-paragraph pool: nothing of ours
    was retrieved, so their `retrieval` metadata (the task default) is not used; they count as full.
    A run on the hub corpus (``corpus=None``) is full; a local corpus file is measured (paragraph count and
    sha256): fewer paragraphs than the paper's pool is partial; a local file that is gone is unknown.
    """
    retrieval = meta.get("retrieval") or {}
    if replay:
        return "full", {
            "kind": "released predictions (the paper's full corpus; no retrieval re-run)",
            "size": FULL_CORPUS_SIZE,
        }
    corpus = retrieval.get("corpus")
    if corpus is None:
        return "full", {
            "kind": "hub statute dataset",
            "revision": retrieval.get("corpus_revision") or "main",
            "lang": retrieval.get("lang"),
        }
    path = Path(str(corpus))
    if not path.is_file():
        return "unknown", {"kind": "local file (not found at submission)", "path": str(corpus)}
    digest = hashlib.sha256()
    lines = 0
    with path.open("rb") as fh:
        for line in fh:
            digest.update(line)
            lines += bool(line.strip())
    status = "partial" if lines < FULL_CORPUS_SIZE else "full"
    return status, {"kind": "local file", "path": str(corpus), "size": lines, "sha256": digest.hexdigest()}


def _read(path: Path) -> tuple[Any, list[Any]]:
    from inspect_ai.log import read_eval_log

    if not path.is_file():
        raise SubmissionRejected(path, ["file not found"])
    if path.suffix == ".eval" and not zipfile.is_zipfile(path):
        raise SubmissionRejected(
            path, ["not a readable Inspect eval log: the .eval zip is truncated or corrupt"]
        )
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # any parse failure is a rejection, never a crash
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SubmissionRejected(path, [f"not a readable Inspect eval log: {msg[:300]}"]) from None
    return log, list(log.samples or [])


def _usage(stats: Any, judge: str | None) -> dict[str, Any]:
    usage = {k: _jsonable(v) for k, v in ((stats.model_usage if stats else None) or {}).items()}
    judge_usage = {k: v for k, v in usage.items() if judge and (k == judge or k.endswith("/" + judge))}
    model_usage = {k: v for k, v in usage.items() if k not in judge_usage}
    return {"model": model_usage, "judge": judge_usage}


def load_submission(path: str | Path, name: str | None = None, allow_subset: bool = False) -> Submission:
    """Validate ``path`` and extract a :class:`Submission`; raises :class:`SubmissionRejected`."""
    path = Path(path)
    log, samples = _read(path)
    ev = log.eval
    reasons: list[str] = []
    if log.status != "success":
        err = f" ({log.error.message.splitlines()[0][:200]})" if log.error and log.error.message else ""
        reasons.append(f"the eval did not finish successfully: status {log.status!r}{err}")
    task = ev.task_registry_name or ev.task
    if task not in BENCHMARK:
        raise SubmissionRejected(
            path, [*reasons, f"task {ev.task!r} is not a leaderboard task ({KOBLEX_TASK} or {LEGIT_TASK})"]
        )
    meta = dict(ev.metadata or {})
    if str(ev.task_version) not in KNOWN_TASK_VERSIONS[task]:
        reasons.append(
            f"unknown task version {ev.task_version!r} (known: {sorted(KNOWN_TASK_VERSIONS[task])})"
        )
    if meta.get("benchmark") not in (None, BENCHMARK[task]):
        reasons.append(f"task metadata says benchmark {meta.get('benchmark')!r}, not {BENCHMARK[task]!r}")
    known = KNOWN_SCORERS[task]
    scorer_names = [s.name for s in (ev.scorers or [])]
    unknown = [s for s in scorer_names if s not in known]
    if unknown:
        reasons.append(f"unknown scorer(s) {unknown} (known for {task}: {sorted(known)})")
    missing_scorers = [s for s in REQUIRED_SCORERS[task] if s not in scorer_names]
    if missing_scorers:
        reasons.append(f"required scorer(s) missing: {missing_scorers}")
    if len(set(scorer_names)) != len(scorer_names):
        reasons.append(f"a scorer appears more than once: {scorer_names} (rescored with --action append?)")
    fingerprint = meta.get("dataset_fingerprint") or meta.get("dataset_sha256")
    if not fingerprint:
        reasons.append("no dataset fingerprint in the task metadata (dataset_fingerprint / dataset_sha256)")
    dataset_size = meta.get("dataset_size")
    if not isinstance(dataset_size, int) or dataset_size < 1:
        reasons.append("no dataset_size in the task metadata")
        dataset_size = None

    # ---- subsets: declared by options, or visible as fewer samples than the dataset has
    cfg = ev.config
    args = ev.task_args or {}
    subset_why: list[str] = []
    if cfg.limit is not None:
        subset_why.append(f"--limit {cfg.limit}")
    if cfg.sample_id is not None:
        subset_why.append("--sample-id")
    for option in ("hops", "difficulty", "doc_ids"):
        if args.get(option) is not None:
            subset_why.append(f"{option}={args[option]!r}")
    if task == LEGIT_TASK and dataset_size is not None and dataset_size < 300 and args.get("responses"):
        subset_why.append(f"responses filter kept {dataset_size} of 300 documents")

    # ---- samples: each (id, epoch) exactly once, no errors, scores numeric
    epochs = int(cfg.epochs or 1)
    seen = Counter((str(s.id), int(s.epoch)) for s in samples)
    dupes = sorted(k for k, n in seen.items() if n > 1)
    if dupes:
        reasons.append(f"{len(dupes)} (sample id, epoch) pairs appear more than once, e.g. {dupes[0]}")
    ids = sorted({sid for sid, _ in seen})
    bad_epochs = sorted({e for _, e in seen if not 1 <= e <= epochs})
    if bad_epochs:
        reasons.append(f"epochs {bad_epochs} outside 1..{epochs}")
    incomplete = [(sid, e) for sid in ids for e in range(1, epochs + 1) if (sid, e) not in seen]
    if incomplete:
        reasons.append(f"{len(incomplete)} sample/epoch pairs missing, e.g. {incomplete[0]}")
    declared = list(ev.dataset.sample_ids or []) if ev.dataset else []
    if not samples:
        reasons.append("the log holds no samples")
    elif declared and set(map(str, declared)) - set(ids):
        lost = sorted(set(map(str, declared)) - set(ids))
        reasons.append(f"{len(lost)} sample ids of the eval are missing from the log, e.g. {lost[0]!r}")
    if dataset_size is not None and ids and len(ids) < dataset_size and not subset_why:
        subset_why.append(f"only {len(ids)} of the dataset's {dataset_size} samples")
    if dataset_size is not None and len(ids) > dataset_size:
        reasons.append(f"{len(ids)} sample ids but the dataset has {dataset_size}")
    errored = [str(s.id) for s in samples if s.error is not None]
    if errored:
        reasons.append(f"{len(errored)} samples ended in an error, e.g. {errored[0]!r}")
    subset = bool(subset_why)
    if subset and not allow_subset:
        reasons.append(
            "a subset of the dataset ("
            + ", ".join(subset_why)
            + "): subsets are never ranked with full runs; "
            "pass --allow-subset to store it on a separate subset board"
        )

    scores: list[tuple[str, int, str, float | None]] = []
    strata: dict[str, str] = {}
    judges: dict[str, dict[str, Any]] = {}
    prompts: dict[str, set[str]] = {}
    score_problems: list[str] = []
    stratum_key = STRATUM_KEY[task]
    for s in samples:
        sid, epoch = str(s.id), int(s.epoch)
        smeta = s.metadata or {}
        strata[sid] = str(smeta.get(stratum_key, "n/a"))
        for pname, ref in (smeta.get("prompts") or {}).items():
            if isinstance(ref, dict):
                prompts.setdefault(str(pname), set()).add(f"{ref.get('version')} sha256:{ref.get('sha256')}")
        for scorer_name, keys in known.items():
            if scorer_name not in scorer_names:
                continue
            sc = (s.scores or {}).get(scorer_name)
            if sc is None:
                score_problems.append(f"sample {sid!r} epoch {epoch} has no {scorer_name} score")
                continue
            values = _score_values(sc.value, keys)
            if isinstance(values, str):
                score_problems.append(f"sample {sid!r} {scorer_name}: {values}")
                continue
            scores += [(sid, epoch, k, v) for k, v in values.items()]
            if scorer_name in JUDGE_SCORERS:
                j = judges.setdefault(
                    scorer_name, {"models": Counter(), "prompts": Counter(), "modes": Counter(), "n": 0}
                )
                jm = sc.metadata or {}
                j["n"] += 1
                if jm.get("judge_model"):
                    j["models"][str(jm["judge_model"])] += 1
                pref = jm.get("prompt") or jm.get("judge_prompt")
                if isinstance(pref, dict):
                    j["prompts"][f"{pref.get('name')}@{pref.get('version')} sha256:{pref.get('sha256')}"] += 1
                if jm.get("mode"):
                    j["modes"][str(jm["mode"])] += 1
    if score_problems:
        reasons.append(f"{len(score_problems)} unusable scores, e.g. {score_problems[0]}")
    if reasons:
        raise SubmissionRejected(path, reasons)

    # ---- board, identity, provenance
    replay = ev.solver in REPLAY_SOLVERS or str(ev.model).startswith("replay/")
    corpus_status, corpus = _corpus(task, meta, replay)
    benchmark = BENCHMARK[task]
    variant = (
        f"official scoring={bool(meta.get('official_scoring'))}"
        if task == KOBLEX_TASK
        else f"rule={meta.get('rule', 'paper')}"
    )
    lang = args.get("lang") or (meta.get("retrieval") or {}).get("lang") or "ko"
    key_parts = [benchmark, f"lang={lang}", f"dataset={fingerprint}", f"corpus={corpus_status}", variant]
    label = f"{benchmark} · {lang} · {corpus_status} corpus · {variant}"
    if subset:
        ids_hash = _sha("\n".join(ids))[:12]
        key_parts.append(f"subset={ids_hash}")
        label += f" · SUBSET {len(ids)}/{dataset_size} ({', '.join(subset_why)})"
    content = [
        (
            str(s.id),
            int(s.epoch),
            s.output.completion if s.output else "",
            s.metadata.get("replay") is not None,
        )
        for s in samples
    ]
    content.sort(key=lambda t: (t[0], t[1]))
    score_rows = sorted((a, b, c, v) for a, b, c, v in scores)
    content_hash = _sha(json.dumps([task, content, score_rows], ensure_ascii=False))
    judge_model = None
    roles = ev.model_roles or {}
    if "grader" in roles:
        judge_model = getattr(roles["grader"], "model", None) or str(roles["grader"])
    solver_args = dict(ev.solver_args or {})
    method = meta.get("method") or solver_args.get("method")
    default_name = f"{ev.model} · {method or ev.solver or 'default solver'}"
    provenance = {
        "model": ev.model,
        "solver": ev.solver or "(task default)",
        "solver_args": _jsonable(solver_args),
        "task": task,
        "task_version": ev.task_version,
        "task_args": _jsonable(ev.task_args_passed or {}),
        "dataset": {
            "source": meta.get("dataset_source"),
            "fingerprint": fingerprint,
            "size": dataset_size,
            "samples_in_log": len(ids),
            "epochs": epochs,
        },
        "corpus": corpus,
        "retrieval": None if replay else _jsonable(meta.get("retrieval")),
        "scoring": variant,
        "prompts": {k: sorted(v) for k, v in sorted(prompts.items())},
        "judge_model": judge_model,
        "judges": {
            k: {
                "models": dict(v["models"]),
                "prompts": dict(v["prompts"]),
                "modes": dict(v["modes"]),
                "n": v["n"],
            }
            for k, v in judges.items()
        },
        "versions": _jsonable(ev.packages or {}),
        "usage": _usage(log.stats, judge_model),
        "date": ev.created,
        "eval_id": ev.eval_id,
        "replay": {"file": meta.get("replay_file"), "method": method} if replay else None,
        "git": _jsonable(ev.revision) if ev.revision else None,
    }
    return Submission(
        log_path=str(path.resolve()),
        eval_id=ev.eval_id,
        content_hash=content_hash,
        task=task,
        benchmark=benchmark,
        model=str(ev.model),
        name=name or default_name,
        board_key=" | ".join(key_parts),
        board_label=label,
        dataset_fingerprint=str(fingerprint),
        corpus_status=corpus_status,
        subset=subset,
        created=str(ev.created),
        epochs=epochs,
        scores=scores,
        strata=strata,
        provenance=provenance,
    )
