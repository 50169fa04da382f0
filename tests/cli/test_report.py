"""`koblex report legit-errors`: Markdown and JSON from a replayed log; a bad log is one error line."""

import json
from pathlib import Path

from koblex_tasks.cli.main import main
from tests.audit.legit.test_errors import replayed_log  # noqa: F401  (module-scoped fixture)


def test_markdown_and_json(replayed_log: Path, capsys) -> None:  # noqa: F811
    assert main(["report", "legit-errors", str(replayed_log)]) == 0
    text = capsys.readouterr().out
    assert "6 answers, 12 parent issues" in text
    assert "| depth 1 | 3, 66.7%, 66.7% | 0, n/a, n/a | 3, 100.0%, 100.0% | 0, n/a, n/a |" in text
    assert main(["report", "legit-errors", "--json", str(replayed_log)]) == 0
    payload = json.loads(capsys.readouterr().out)
    [table] = payload["error_attribution"]
    assert table["groups"]["all"]["all_correct"]["n"] == 8 and table["skipped_parents"] == 0


def test_unreadable_log_is_an_error(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.eval"
    bad.write_text("not a log")
    assert main(["report", "legit-errors", str(bad)]) != 0
    assert "cannot read verdicts" in capsys.readouterr().err
