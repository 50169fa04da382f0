"""A real run killed mid-way (SIGKILL), recovered with `inspect eval-retry`, rewritten as the leaderboard
recommends, then submitted: every score is re-derived. (With the Inspect installed here recovered samples keep
their store; a sample that comes back without it is covered by test_evidence's simulated recovery.)"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log

from koblex_tasks.cli.leaderboard import leaderboard_main
from koblex_tasks.leaderboard.store import Store
from tests.conftest import TINY_STATUTES, tiny_question, write_jsonl
from tests.tasks.koblex.test_eval_retry import RETRY, SLOW_MODEL

RUN = """
import sys, slowmock
from inspect_ai import eval
from koblex_tasks.solvers.koblex.one_time_retrieval import one_time_retrieval
eval("koblex_tasks/koblex", model="slowmock/m", solver=one_time_retrieval(k=2),
     task_args={"data": sys.argv[1], "corpus": sys.argv[3], "reranker": "none"}, log_dir=sys.argv[2], max_samples=1,
     log_buffer=1, display="none")
"""


def test_killed_retried_run_goes_on_the_board(tmp_path: Path) -> None:
    (tmp_path / "slowmock.py").write_text(SLOW_MODEL, encoding="utf-8")
    rows = [tiny_question(f"q{i:02d}", [TINY_STATUTES[i % 5]], f"질문 {i}번은 무엇인가?") for i in range(12)]
    data = write_jsonl(tmp_path / "questions.jsonl", rows)
    corpus = write_jsonl(tmp_path / "statutes.jsonl", TINY_STATUTES)
    logs, calls = tmp_path / "logs", tmp_path / "calls.txt"
    # the children import the package this process imports (a worktree's `src` on PYTHONPATH, not the install)
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "SLOW_CALLS": str(calls), "SLOW_DELAY": "0.4"}
    run = [sys.executable, "-c", RUN, str(data), str(logs), str(corpus)]
    proc = subprocess.Popen(run, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not calls.exists() or len(calls.read_text().split()) < 5):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    [crashed] = list_eval_logs(str(logs))
    env["SLOW_DELAY"] = "0"
    retry = [sys.executable, "-c", RETRY, crashed.name, str(logs)]
    done = subprocess.run(retry, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("success"), done.stderr[-3000:]
    final = max(list_eval_logs(str(logs)), key=lambda info: info.mtime or 0)
    db = tmp_path / "board.sqlite"
    # the log exactly as `inspect eval-retry` wrote it (superseded copies appended) is read as Inspect reads it
    as_retried = re.sub(r"^file:(//)?", "", final.name)
    with zipfile.ZipFile(as_retried) as zf:
        names = zf.namelist()
    assert len(names) > len(set(names))  # eval-retry appended superseded copies
    assert leaderboard_main(["submit", "--db", str(db), "--allow-subset", as_retried]) == 0
    with Store(db) as store:
        [as_written] = store.runs()
    assert as_written.provenance["verification"]["provision_match"].startswith(
        "re-derived from the log (12 scores"
    )
    db = tmp_path / "board2.sqlite"
    rewritten = tmp_path / "rewritten.eval"  # without superseded copies
    write_eval_log(read_eval_log(final.name), str(rewritten))
    assert leaderboard_main(["submit", "--db", str(db), "--allow-subset", str(rewritten)]) == 0
    with Store(db) as store:
        [stored] = store.runs()
    assert stored.provenance["verification"]["provision_match"].startswith(
        "re-derived from the log (12 scores"
    )
