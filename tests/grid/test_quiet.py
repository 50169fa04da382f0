"""`said_once`: a warning every run's task gives while being built is shown once for the whole grid."""

import subprocess
import sys
from pathlib import Path

BUILD_THREE = """
import sys
from koblex_tasks.grid.quiet import said_once
with said_once():
    from koblex_tasks.tasks.koblex.task import koblex  # first imported inside the block, as under Inspect
    for _ in range(3):
        koblex(data=sys.argv[1], corpus=sys.argv[2], reranker="none")
koblex(data=sys.argv[1], corpus=sys.argv[2], reranker="none")  # after the block: said again
"""


def test_the_no_judge_warning_is_said_once_per_block(tiny_questions: Path, tiny_corpus: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", BUILD_THREE, str(tiny_questions), str(tiny_corpus)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (proc.stdout + proc.stderr).count("no `grader` model role is bound") == 2, proc.stderr
