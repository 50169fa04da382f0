"""A live ParSeR run on `vllm/...` sends and logs the paper's vLLM protocol: no thinking, seed 0."""

import json
import time
import urllib.error
import urllib.request
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent

from koblex_tasks.conformance.run import process_server
from koblex_tasks.conformance.server import ResponderServer
from koblex_tasks.tasks.koblex.task import koblex

NO_THINKING = {"chat_template_kwargs": {"enable_thinking": False}}


def test_a_live_parser_run_on_vllm_records_enable_thinking_false_and_seed_0(
    tiny_questions: Path, tiny_corpus: Path, monkeypatch
) -> None:
    with process_server() as server:
        monkeypatch.setenv("VLLM_BASE_URL", server.base_url)
        monkeypatch.setenv("VLLM_API_KEY", "test")
        task = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="stub-overlap")
        [log] = inspect_eval(
            task, model="vllm/Qwen/Qwen3-8B", display="none", log_dir=str(tiny_corpus.parent)
        )
        bodies = [r.body for r in server.requests]
    assert log.status == "success", log.error
    # built outside the eval: `auto` is resolved per request (vllm/ -> the vLLM scripts' shape)
    assert log.eval.metadata["generation"]["chat_format"] == "auto"
    assert (
        log.eval.metadata["generation"]["by_format"]["system_user"]["chat_template_kwargs"]
        == NO_THINKING["chat_template_kwargs"]
    )
    events = [e for s in log.samples or [] for e in s.events if isinstance(e, ModelEvent)]
    assert len(events) == 2 * 4  # per question: provisions, two selections, the answer
    assert all(e.config.seed == 0 and e.config.extra_body == NO_THINKING for e in events)
    assert len(bodies) == len(events)
    assert all(b["seed"] == 0 and b["chat_template_kwargs"] == {"enable_thinking": False} for b in bodies)
    assert sorted(b["max_tokens"] for b in bodies) == [2048] * 4 + [4000] * 4


def test_the_server_answers_by_the_responder_and_stops_itself() -> None:
    body = {
        "messages": [{"role": "user", "content": "<Query>\nQuestion: 질문이다\nAnswer: "}],
        "logprobs": True,
    }
    with ResponderServer(lifetime=2.0, max_requests=1) as server:
        request = urllib.request.Request(
            f"{server.base_url}/chat/completions",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=5) as reply:
            out = json.load(reply)
        assert out["choices"][0]["message"]["content"] == "Answer: 질문이다 답변이다"
        tokens = out["choices"][0]["logprobs"]["content"]
        assert [t["token"] for t in tokens] == list("Answer: 질문이다 답변이다")
        assert tokens[0]["logprob"] == -(1 + ord("A") % 10) / 10
        try:
            urllib.request.urlopen(request, timeout=5)
        except urllib.error.HTTPError as exc:  # the request limit
            assert exc.code == 429
        else:
            raise AssertionError("a second request was served past max_requests=1")
        assert [r.body for r in server.requests] == [body]
        time.sleep(2.5)  # past its lifetime: it has shut itself down
        try:
            urllib.request.urlopen(request, timeout=2)
        except (urllib.error.URLError, ConnectionError):
            pass
        else:
            raise AssertionError("the server outlived its lifetime")
