"""Does a log hold the whole dataset, every epoch of every sample exactly once, without errors?

A benchmark whose spec declares its official sample ids (`BenchmarkSpec.official_id_digests`) is judged by
the ids the log holds, not by what its header claims: ids that are all official but fewer than the official
split are a subset whatever `dataset_size` or fingerprint the log records, and a log that claims a registered
fingerprint while holding ids outside the official split is refused. A benchmark that knows its official size
but not its ids (LEGIT) counts a log with fewer items as a subset, whatever its arguments say.
"""

from collections import Counter
from dataclasses import dataclass

from inspect_ai.log import EvalLog, EvalSample

from koblex_tasks.logs.identity import RunIdentity
from koblex_tasks.logs.rejection import Problems
from koblex_tasks.spec import ids_sha256
from koblex_tasks.text import printable


@dataclass(frozen=True)
class Coverage:
    sample_ids: list[str]  # sorted
    epochs: int
    subset_why: list[str]  # why the run is a subset of its dataset (empty: a full run)

    @property
    def subset(self) -> bool:
        return bool(self.subset_why)


def _whole(limit: int | tuple[int, int], size: int | None) -> bool:
    """A `--limit` that selects every sample: at or above the dataset's size (`226`, `0,226`). The samples
    the log holds are still counted and checked against the official ids afterwards, so a lowered
    `dataset_size` in the header does not make a part look whole."""
    start, end = (0, limit) if isinstance(limit, int) else limit
    return size is not None and start <= 0 and end >= size


def declared_subset(log: EvalLog, run: RunIdentity) -> list[str]:
    """Options that select part of the dataset: Inspect's own, and the task arguments the spec names."""
    cfg, args, spec = log.eval.config, log.eval.task_args or {}, run.spec
    why: list[str] = []
    if cfg.limit is not None and not _whole(cfg.limit, run.dataset_size):
        why.append(f"--limit {cfg.limit}")
    if cfg.sample_id is not None:
        why.append("--sample-id")
    why += [f"{option}={args[option]!r}" for option in spec.subset_args if args.get(option) is not None]
    official = spec.official_size
    if official is not None and run.dataset_size is not None and run.dataset_size < official:
        why += [
            f"{option} filter kept {run.dataset_size} of {official} items"
            for option in spec.filter_args
            if args.get(option)
        ]
    return why


def official_subset(run: RunIdentity, ids: list[str], problems: Problems) -> list[str]:
    """Why the ids make a subset of the official split (empty: not a subset, or ids of another dataset)."""
    spec = run.spec
    if not ids or spec.official_size is None:
        return []
    if not spec.official_ids_known():  # the ids cannot be checked: fewer than the official split is a subset
        return (
            [f"{len(ids)} of the {spec.official_size} official items"]
            if len(ids) < spec.official_size
            else []
        )
    foreign = [i for i in ids if not spec.is_official_id(i)]
    fingerprint = run.fingerprint or ""
    if foreign:
        if fingerprint in spec.dataset_fingerprints:
            problems.add(
                printable(
                    f"the log claims the official dataset (fingerprint {fingerprint[:12]}…) but {len(foreign)} "
                    f"of its {len(ids)} sample ids are not in the official split, e.g. {foreign[0]!r}"
                )
            )
        return []  # another dataset (labelled unverified when its fingerprint is not registered)
    if len(ids) < spec.official_size:
        return [f"{len(ids)} of the {spec.official_size} official items, by sample id"]
    if spec.official_ids_sha256 is not None and ids_sha256(ids) != spec.official_ids_sha256:
        problems.add("the sample ids match the official ids' digests but not the official id set")
    return []


def check_coverage(
    log: EvalLog, samples: list[EvalSample], run: RunIdentity, problems: Problems, allow_subset: bool
) -> Coverage:
    epochs = int(log.eval.config.epochs or 1)
    subset_why = declared_subset(log, run)
    seen = Counter((str(s.id), int(s.epoch)) for s in samples)
    dupes = sorted(k for k, n in seen.items() if n > 1)
    if dupes:
        problems.add(f"{len(dupes)} (sample id, epoch) pairs appear more than once, e.g. {dupes[0]}")
    ids = sorted({sid for sid, _ in seen})
    bad_epochs = sorted({e for _, e in seen if not 1 <= e <= epochs})
    if bad_epochs:
        problems.add(f"epochs {bad_epochs} outside 1..{epochs}")
    incomplete = [(sid, e) for sid in ids for e in range(1, epochs + 1) if (sid, e) not in seen]
    if incomplete:
        problems.add(f"{len(incomplete)} sample/epoch pairs missing, e.g. {incomplete[0]}")
    declared = list(log.eval.dataset.sample_ids or []) if log.eval.dataset else []
    if not samples:
        problems.add("the log holds no samples")
    elif declared and set(map(str, declared)) - set(ids):
        lost = sorted(set(map(str, declared)) - set(ids))
        problems.add(f"{len(lost)} sample ids of the eval are missing from the log, e.g. {lost[0]!r}")
    size = run.dataset_size
    if size is not None and ids and len(ids) < size and not subset_why:
        subset_why.append(f"only {len(ids)} of the dataset's {size} samples")
    if not subset_why:
        subset_why += official_subset(run, ids, problems)
    if size is not None and len(ids) > size:
        problems.add(f"{len(ids)} sample ids but the dataset has {size}")
    errored = [str(s.id) for s in samples if s.error is not None]
    if errored:
        problems.add(f"{len(errored)} samples ended in an error, e.g. {errored[0]!r}")
    if subset_why and not allow_subset:
        problems.add(
            "a subset of the dataset ("
            + ", ".join(subset_why)
            + "): subsets are never ranked with full runs; "
            "pass --allow-subset to store it on a separate subset board"
        )
    return Coverage(ids, epochs, subset_why)
