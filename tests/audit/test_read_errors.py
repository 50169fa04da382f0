"""`koblex judge-audit` on unreadable CSV or JSON input: one line on stderr and exit 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from koblex_tasks.audit.legit.labels import LABEL_COLUMNS
from tests.cli.refusal import koblex_cli

LONG = "x" * 131_073  # one character over the csv module's default field limit


def _labels(tmp_path: Path, field: str) -> Path:
    path = tmp_path / "labels.csv"
    values = {c: "1" for c in LABEL_COLUMNS} | {"doc_id": field, "issue_id": "1"}
    path.write_text(",".join(LABEL_COLUMNS) + "\n" + ",".join(values[c] for c in LABEL_COLUMNS) + "\n")
    return path


def _ratings(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ratings.csv"
    path.write_text(text, encoding="utf-8")
    return path


def _log(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    "make_args, expected",
    [
        (lambda t: [str(_labels(t, LONG))], "field larger than field limit"),
        (lambda t: [str(_log(t, "labels.csv", b"group,\xff\xfe\n"))], "cannot read labels"),
        (
            lambda t: [str(_ratings(t, f"sample_id,rating\nq1,{LONG}\n")), "x.eval", "--lf-eval"],
            "field limit",
        ),
        (
            lambda t: [str(_log(t, "ratings.csv", b"sample_id,rating\nq\xff,1\n")), "x.eval", "--lf-eval"],
            "cannot read ratings",
        ),
        (
            lambda t: [
                str(_ratings(t, "sample_id,rating\nq1,1\n")),
                str(_log(t, "a.json", b'{"ver')),
                "--lf-eval",
            ],
            "cannot read LF-Eval scores",
        ),
        (
            lambda t: [
                str(_ratings(t, "sample_id,rating\nq1,1\n")),
                str(_log(t, "a.eval", b"PK\x03\x04junk")),
                "--lf-eval",
            ],
            "cannot read LF-Eval scores",
        ),
        (
            lambda t: ["legit", "--judges", str(_log(t, "deep.json", b"[" * 200_000 + b"]" * 200_000))],
            "cannot read the judges",
        ),
        (
            lambda t: ["legit", "--judges", str(_log(t, "b.eval", b"PK\x03\x04junk"))],
            "cannot read the judges",
        ),
    ],
    ids=[
        "labels-long-field",
        "labels-not-utf8",
        "ratings-long-field",
        "ratings-not-utf8",
        "log-json",
        "log-zip",
        "log-deep-json",
        "judges-zip",
    ],
)
def test_read_errors_are_one_line_exit_2(tmp_path: Path, make_args, expected: str) -> None:
    refusal = koblex_cli("judge-audit", *make_args(tmp_path), cwd=tmp_path)
    assert refusal.returncode == 2, refusal.lines
    assert refusal.line.startswith("koblex judge-audit: error: ") and expected in refusal.line
