"""SIGKILL mid-run, then `inspect eval-retry`: recovered and re-run samples keep the raw completion, and
their scores follow from it (the scorers extract the answer; the solvers never rewrite the completion)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from inspect_ai.log import list_eval_logs, read_eval_log

from koblex_tasks.scorers.koblex.answer import sample_answer
from koblex_tasks.scorers.koblex.token_f1 import rederive
from tests.conftest import TINY_STATUTES, tiny_question, write_jsonl

N_QUESTIONS = 12
# A koblexmock that answers "Reasoning: ... Answer: ..." slowly and notes each call in a file.
SLOW_MODEL = """
import asyncio, os
from inspect_ai.model import ModelOutput, modelapi
from inspect_ai.model._providers.mockllm import MockLLM
from koblex_tasks.providers.koblexmock import scripted_output

@modelapi(name="slowmock")
class SlowMock(MockLLM):
    def __init__(self, *args, **model_args):
        model_args.setdefault("custom_outputs", scripted_output)
        super().__init__(*args, **model_args)

    async def generate(self, input, tools, tool_choice, config):
        await asyncio.sleep(float(os.environ.get("SLOW_DELAY", "0")))
        result = await super().generate(input, tools, tool_choice, config)
        output = result[0] if isinstance(result, tuple) else result
        raw = ModelOutput.from_content(model="slowmock", content="Reasoning: 단계.\\n" + output.completion)
        raw.usage = output.usage
        result = (raw, *result[1:]) if isinstance(result, tuple) else raw
        with open(os.environ["SLOW_CALLS"], "a") as f:
            f.write("call\\n")
        return result
"""
RUN = """
import sys, slowmock
from inspect_ai import eval
from koblex_tasks.solvers.koblex.chain_of_thought import chain_of_thought
eval("koblex_tasks/koblex", model="slowmock/m", solver=chain_of_thought(),
     task_args={"data": sys.argv[1], "corpus": sys.argv[3], "reranker": "none"}, log_dir=sys.argv[2], max_samples=1,
     log_buffer=1, display="none")
"""
RETRY = """
import sys, slowmock
from inspect_ai import eval_retry
[log] = eval_retry(sys.argv[1], log_dir=sys.argv[2], display="none")
print(log.status)
"""


def test_sigkill_then_eval_retry_keeps_raw_completions(tmp_path: Path) -> None:
    (tmp_path / "slowmock.py").write_text(SLOW_MODEL, encoding="utf-8")
    rows = [
        tiny_question(f"q{i:02d}", [TINY_STATUTES[i % 5]], f"질문 {i}번은 무엇인가?")
        for i in range(N_QUESTIONS)
    ]
    data = write_jsonl(tmp_path / "questions.jsonl", rows)
    corpus = write_jsonl(tmp_path / "statutes.jsonl", TINY_STATUTES)
    logs, calls = tmp_path / "logs", tmp_path / "calls.txt"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "SLOW_CALLS": str(calls), "SLOW_DELAY": "0.4"}
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, str(data), str(logs), str(corpus)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not calls.exists() or len(calls.read_text().split()) < 5):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    time.sleep(0.5)  # let the last finished sample reach the log
    killed_at = time.time()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    [crashed] = list_eval_logs(str(logs))
    assert read_eval_log(crashed.name, header_only=True).status == "started"

    env["SLOW_DELAY"] = "0"
    retry = subprocess.run(
        [sys.executable, "-c", RETRY, crashed.name, str(logs)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert retry.returncode == 0 and retry.stdout.strip().endswith("success"), retry.stderr[-3000:]
    final = max(list_eval_logs(str(logs)), key=lambda info: info.mtime or 0)
    log = read_eval_log(final.name)
    assert log.status == "success" and len(log.samples or []) == N_QUESTIONS
    recovered = [s for s in log.samples or [] if s.completed_at and _epoch(s.completed_at) < killed_at]
    assert recovered and len(recovered) < N_QUESTIONS  # some recovered, the rest re-run
    for s in log.samples or []:
        assert s.output.completion.startswith("Reasoning: 단계.\nAnswer: "), s.output.completion
        score = s.scores["token_f1"]
        assert score.answer == sample_answer(s) and not score.answer.startswith("Reasoning")
        assert rederive(s, score, {"official": False}) == score.value
    assert json.loads(json.dumps(log.eval.task_args))["reranker"] == "none"


def _epoch(stamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(stamp).timestamp()
