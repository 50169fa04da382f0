"""A SYNTHETIC statute corpus of any size, recombined from the real paragraphs, for speed measurements only.

Every synthetic paragraph copies the shape of a random real one (article header, 항 paragraph, 호 item or
heading) and fills it with real clauses drawn from other random paragraphs, under a random real law name,
article number and title, so the hierarchy is new and unique. Numbers inside the clauses (article
references, dates, amounts) are redrawn with half probability, which adds unseen words roughly as a larger
real corpus would (real statutes keep producing new `제37조제2항에`-like words). The text is not law: it must
never be used to measure retrieval quality, and it is written to a temporary directory, never committed.

    python bench/_scale_corpus.py OUT.jsonl [--size 250000] [--seed 0] [--source statutes.jsonl]
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

SYNTHETIC_SOURCE = "SYNTHETIC-scale (recombined real clauses; speed only)"
_INDEX = re.compile(r"^(?P<law>.+?) (?P<art>\d+)조 ?(?P<branch>\d*) ?(?P<title>.*)$")
_CLAUSE_SPLIT = re.compile(r"(?<=\.)\s+|\s+(?=\d+\.\s)")
_NUMBER = re.compile(r"\d+")
_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"


def _clauses(content: str) -> list[str]:
    body = content.lstrip(_CIRCLED + " ")
    return [c for c in _CLAUSE_SPLIT.split(body) if c.strip()]


def _redraw_numbers(text: str, rng: random.Random) -> str:
    def swap(match: re.Match[str]) -> str:
        if rng.random() < 0.5:
            return match.group(0)
        digits = len(match.group(0))
        return str(rng.randrange(10 ** (digits - 1) if digits > 1 else 1, 10**digits))

    return _NUMBER.sub(swap, text)


def generate(rows: list[dict], size: int, seed: int = 0) -> list[dict]:
    """`size` synthetic rows (same schema as statutes.jsonl) with unique hierarchies; deterministic in seed."""
    rng = random.Random(seed)
    laws, titles = [], []
    for row in rows:
        match = _INDEX.match(row["index"])
        if match:
            laws.append(match["law"])
            if match["title"]:
                titles.append(match["title"])
    laws, titles = sorted(set(laws)), sorted(set(titles))
    clause_pool = [c for row in rows for c in _clauses(row["content"])]
    templates = [(row["hierarchy"] != row["index"], row["hierarchy"][-1:], row["content"]) for row in rows]
    seen: set[str] = set()
    out: list[dict] = []
    while len(out) < size:
        is_unit, unit, content = rng.choice(templates)
        law, title = rng.choice(laws), rng.choice(titles)
        article = rng.randrange(1, 1000)
        branch = f" {rng.randrange(2, 20)}" if rng.random() < 0.15 else " "
        index = f"{law} {article}조{branch} {title}"
        n_clauses = max(1, len(_clauses(content)))
        body = " ".join(_redraw_numbers(rng.choice(clause_pool), rng) for _ in range(n_clauses))
        if is_unit and unit in ("항", "호"):
            number = rng.randrange(1, 13)
            hierarchy = f"{index} {number}{unit}"
            text = f"{_CIRCLED[number - 1]} {body}" if unit == "항" else f"{number}. {body}"
        elif content.startswith("제") and "(" in content[:40]:
            hierarchy = index
            text = f"제{article}조{'의' + branch.strip() if branch.strip() else ''}({title}) {body}"
        else:
            hierarchy, text = index, body
        if hierarchy in seen:
            continue
        seen.add(hierarchy)
        out.append(
            {
                "id": hierarchy,
                "index": index,
                "hierarchy": hierarchy,
                "content": text,
                "source": SYNTHETIC_SOURCE,
            }
        )
    return out


def write_scale_corpus(source: Path, out: Path, size: int, seed: int = 0) -> Path:
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    with out.open("w", encoding="utf-8") as handle:
        for row in generate(rows, size, seed):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", type=int, default=250_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--source", type=Path, default=Path("../shared/data/koblex/statutes.jsonl"))
    args = parser.parse_args()
    write_scale_corpus(args.source, args.out, args.size, args.seed)


if __name__ == "__main__":
    main()
