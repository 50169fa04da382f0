"""Register the full KoBLEX statute pool's fingerprint, so runs on it land on the full-corpus board.

    python tools/register_full_corpus.py --revision <40-hex commit of JihyungL/KoBLEX-statute>

Needs network once (the hub dataset, 233,544 paragraphs). The pool is loaded at that immutable revision
exactly as a run loads it (`corpus.statutes.load_statutes`), its fingerprint computed the same way, and an
entry `{fingerprint: {status: "full", size, description}}` written into
`src/koblex_tasks/benchmarks/koblex/corpora.json`, which the spec reads (`KOBLEX.corpus_fingerprints`).
Placement reads nothing else: until this has run, no retrieving run is on the full-corpus board (the released
replays and closed-book runs are, by their evidence). A pool of another size is refused: it is not the
paper's. `--corpus FILE` registers a local copy of the same dataset instead (same rows, same fingerprint).
Pin the revision for runs too (`corpus.statutes.STATUTE_HF_REVISION`) so the default run loads that pool.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from koblex_tasks.benchmarks.koblex.spec import FULL_CORPUS_SIZE
from koblex_tasks.corpus.statutes import STATUTE_HF_REPOS, load_statutes
from koblex_tasks.spec import KNOWN_CORPORA

REGISTRY = (
    Path(__file__).resolve().parent.parent / "src" / "koblex_tasks" / "benchmarks" / "koblex" / KNOWN_CORPORA
)


def register(registry: Path, fingerprint: str, size: int, description: str) -> dict[str, dict[str, object]]:
    """The registry with the full pool's entry added (an entry already there for this fingerprint is
    replaced); refuses a pool that is not the paper's size."""
    if size != FULL_CORPUS_SIZE:
        raise SystemExit(
            f"the pool has {size:,} paragraphs, not the paper's {FULL_CORPUS_SIZE:,}: not registered"
        )
    entries = json.loads(registry.read_text(encoding="utf-8"))
    entries[fingerprint] = {"status": "full", "size": size, "description": description}
    registry.write_text(json.dumps(entries, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--revision", required=True, help="the hub dataset's commit (40 hex digits)")
    parser.add_argument("--corpus", default=None, help="a local JSONL copy of the dataset at that revision")
    parser.add_argument("--registry", type=Path, default=REGISTRY, help=f"default: {REGISTRY}")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[0-9a-f]{40}", args.revision):
        parser.error("--revision must be a commit hash (40 hex digits): a branch name moves")
    corpus = load_statutes(args.corpus, "ko", args.revision, use_cache=False)
    repo = STATUTE_HF_REPOS["ko"]
    source = f"local copy {args.corpus}" if args.corpus else "the hub"
    description = f"the paper's full pool {repo} at revision {args.revision} ({len(corpus):,} paragraphs)"
    register(args.registry, corpus.fingerprint, len(corpus), description)
    print(
        f"{args.registry}: registered {corpus.fingerprint} ({len(corpus):,} paragraphs, read from {source})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
