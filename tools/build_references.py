"""Build a benchmark's reference manifest (`koblex_tasks/benchmarks/<b>/references.v1.json`) from its dataset.

    python tools/build_references.py koblex /path/to/koblex.jsonl --statutes statutes.jsonl \
        [--released DIR | --keep-released] [--out PATH]

KoBLEX: the questions must be the official ones (their fingerprint is registered in the spec), else nothing is
written. With `--released`, each released prediction file is replayed (no model is called) and its SHA-256
and the SHA-256 of its replay's outputs are recorded: a log is placed as "released predictions" only when its
outputs are one of these. With `--statutes` (a statute file holding every gold paragraph), each item's gold
paragraphs are recorded as window hashes (`containment.windows`, no text), which the leaderboard's event rules
scan model inputs for; `--keep-released` keeps the released digests of the manifest at `--out`. LEGIT has no manifest: only a sample of its split is available here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from koblex_tasks.benchmarks.koblex.references import MANIFEST
from koblex_tasks.benchmarks.koblex.spec import KOBLEX
from koblex_tasks.containment import WINDOW_CHARS, digest, windows
from koblex_tasks.corpus.provision import PARAGRAPH, provision_key
from koblex_tasks.data.koblex.dataset import GoldIdentity, load_koblex
from koblex_tasks.data.koblex.references import manifest_items
from koblex_tasks.jsonl import read_jsonl
from koblex_tasks.logs.references import output_digests

EVIDENCE = "ProvisionEvidence"
OUTPUT_KEYS = [f"{EVIDENCE}:{k}" for k in ("method", "uses_retrieval", "predicted", "answer_rule")]
RETRIEVAL_KEYS = [f"{EVIDENCE}:{k}" for k in ("queries", "retrieved")]
PREDICTION_KEYS = [f"{EVIDENCE}:predicted"]


def released_digests(data: str, folder: Path) -> dict[str, dict[str, Any]]:
    from koblex_tasks.tasks.koblex.replay import run_replay

    found: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as logs:
        for file in sorted(folder.glob("*.jsonl")):
            digests = [
                output_digests(list(run_replay(str(file), data=data, official=o, log_dir=logs).log.samples or []),
                               tuple(OUTPUT_KEYS))
                for o in (False, True)
            ]  # fmt: skip
            if digests[0] != digests[1]:
                raise SystemExit(f"{file.name}: its replay's outputs depend on the scoring variant")
            found[file.name] = {
                "file_sha256": hashlib.sha256(file.read_bytes()).hexdigest(),
                "outputs": sorted(digests[0]),
            }
    return found


def gold_windows(questions: Any, statutes: Path) -> dict[str, list[dict[str, Any]]]:
    """Per item, each Korean gold paragraph as found in `statutes`: its key hash and text window hashes."""
    texts = {provision_key(r["hierarchy"], r["content"]) for _, r in read_jsonl(statutes)}
    identity = GoldIdentity(PARAGRAPH, "ko")
    found: dict[str, list[dict[str, Any]]] = {}
    for record in questions.records:
        entries = []
        for key in dict.fromkeys(identity.keys(record)):
            if key not in texts:
                raise SystemExit(f"{statutes}: gold paragraph of {record['id']} not found: {key[:60]!r}")
            chars, hashes = windows(key)  # a paragraph's text is its key
            entries.append({"key": digest(key), "chars": chars, "windows": hashes})
        found[str(record["id"])] = entries
    return found


def build(
    data: str, released: Path | None, statutes: Path | None = None, kept: dict[str, Any] | None = None
) -> dict[str, Any]:
    questions = load_koblex(data)
    if questions.fingerprint not in KOBLEX.dataset_fingerprints:
        raise SystemExit(f"{data}: fingerprint {questions.fingerprint} is not the official dataset's")
    return {
        "format": "koblex_tasks reference manifest v1 (see koblex_tasks.logs.references)",
        "benchmark": KOBLEX.name,
        "dataset_fingerprint": questions.fingerprint,
        "generator": "python tools/build_references.py koblex koblex.jsonl --released released_gpt4o --statutes statutes.jsonl",
        "output_keys": OUTPUT_KEYS,
        "retrieval_keys": RETRIEVAL_KEYS,
        "prediction_keys": PREDICTION_KEYS,
        "released": released_digests(data, released) if released else dict(kept or {}),
        "items": manifest_items(questions),
        "window_chars": WINDOW_CHARS,
        "gold_windows": gold_windows(questions, statutes) if statutes else {},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", choices=[KOBLEX.name])
    parser.add_argument("data")
    parser.add_argument("--released", type=Path)
    parser.add_argument("--keep-released", action="store_true", help="keep the released digests at --out")
    parser.add_argument("--statutes", type=Path, help="statute JSONL holding every gold paragraph")
    default = Path(__file__).resolve().parents[1] / "src/koblex_tasks/benchmarks/koblex" / MANIFEST
    parser.add_argument("--out", type=Path, default=default)
    args = parser.parse_args(argv)
    kept = json.loads(args.out.read_text("utf-8")).get("released") if args.keep_released else None
    manifest = build(args.data, args.released, args.statutes, kept)
    args.out.write_text(json.dumps(manifest, ensure_ascii=False, indent=0, sort_keys=True) + "\n", "utf-8")
    print(f"{args.out}: {len(manifest['items'])} items, {len(manifest['released'])} released files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
