"""The shipped released files replayed through the defaults (shared data; slow: a full eval per file)."""

import re
from pathlib import Path

import pytest

from koblex_tasks.cli.main import main

LINE = re.compile(r"^(?P<file>\S+): (\d+)/(\d+) rows identical, (\d+) not replayable")
FILES = (  # one file per replayable method and backend (the rest run in `koblex conformance --traces`)
    "released_open/ircot_qwen_32b.jsonl",
    "released_gpt4o/ircot_gpt4o.jsonl",
    "released_gpt4o/flare_gpt4o.jsonl",
    "released_open/sp_or_qwen_32b.jsonl",
    "released_open/cot_exaone_32b.jsonl",
    "released_gpt4o/selfask_gpt4o.jsonl",
    "released_open/self-ask_exaone_32b.jsonl",
)


def test_released_rows_replay_identically_through_the_defaults(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    koblex = shared_data / "koblex"
    args = ["conformance", "--traces", *(str(koblex / f) for f in FILES)]
    code = main([*args, "--data", str(koblex / "koblex.jsonl"), "--corpus", str(koblex / "statutes.jsonl")])
    out = capsys.readouterr().out
    found = {m["file"]: [int(g) for g in m.groups()[1:]] for m in map(LINE.match, out.splitlines()) if m}
    assert set(found) == {Path(f).name for f in FILES}, out
    for same, replayable, skipped in found.values():
        assert same == replayable and replayable >= 0.9 * (replayable + skipped), out
    assert code == 0 and f"traces: {len(FILES)}/{len(FILES)} files identical" in out, out
