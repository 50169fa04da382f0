"""Real provider code paths, offline: Inspect's `hf/` provider on a tiny random-weight Llama built here, and
the `vllm/` and `openai-api/` providers against a small OpenAI-compatible server started by the test.

The tiny model's output is gibberish: these tests check plumbing (chat template, batching, stop sequences,
real log-probabilities, HTTP requests, logs), not answer quality.
"""

import json
import socket
import threading
import time
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from koblex_tasks.solvers.koblex.flare import flare
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.tasks.koblex.task import koblex
from tests.conftest import TINY_STATUTES, statute_key, tiny_question, write_jsonl

pytestmark = pytest.mark.slow
ROBBERY, QUASI = statute_key(TINY_STATUTES[2]), statute_key(TINY_STATUTES[3])
GUESSES = '["형법 (강도상해) 강도가 사람을 상해하거나 상해에 이르게 한때에는", "형법 (준강도) 절도가 재물의 탈환에 항거하거나 폭행"]'


def evidence_of(sample) -> dict:
    return {k.split(":", 1)[1]: v for k, v in sample.store.items() if k.startswith("ProvisionEvidence:")}


# --- hf/: a tiny random-weight Llama with a BPE tokenizer trained on the test data -----------------------


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch", reason="the hf/ provider needs torch")
    transformers = pytest.importorskip("transformers", reason="the hf/ provider needs transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    texts = [statute_key(r) for r in TINY_STATUTES] * 4 + [
        "Answer: So the answer is: New Query: 질문 배경"
    ] * 4
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=600,
            special_tokens=["<unk>", "<s>", "</s>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    hf_tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="</s>"
    )
    hf_tok.chat_template = (
        "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant: {% endif %}"
    )
    transformers.set_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(hf_tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        bos_token_id=hf_tok.bos_token_id,
        eos_token_id=hf_tok.eos_token_id,
        pad_token_id=hf_tok.pad_token_id,
    )
    path = tmp_path_factory.mktemp("tiny-llama")
    transformers.LlamaForCausalLM(config).save_pretrained(path)
    hf_tok.save_pretrained(path)
    return path


@pytest.fixture
def hub_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No hub lookups: inspect's model-info lookup re-instantiates `hf/tiny` *without* model_path (a hub id
    "tiny"), which online-less machines would retry for ~50 s per sample before giving up."""
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


@pytest.fixture
def live_questions(tmp_path: Path) -> Path:
    """Questions whose text shares words with the tiny corpus, so BM25 (official tokens) finds provisions."""
    rows = [
        tiny_question(
            "q1", [TINY_STATUTES[1]], "운송인이 수하인에게 운송물을 인도한 날부터 채권은 소멸하는가?"
        ),
        tiny_question(
            "q2", [TINY_STATUTES[2]], "강도가 사람을 상해하거나 상해에 이르게 한때에는 어떻게 되는가?"
        ),
    ]
    return write_jsonl(tmp_path / "live_questions.jsonl", rows)


def run_hf(solver, model_dir: Path, questions: Path, corpus: Path) -> EvalLog:
    [log] = inspect_eval(
        koblex(data=str(questions), corpus=str(corpus), tokenizer="official", reranker="none"),
        solver=solver,
        model="hf/tiny",
        model_args={"model_path": str(model_dir), "device": "cpu", "do_sample": False},
        max_tokens=6,
        display="none",
        log_dir=str(corpus.parent / "logs"),
        fail_on_error=True,
    )
    assert log.status == "success", log.error
    assert len(log.samples) == 2
    return log


def test_parser_on_hf_provider(
    hub_offline, tiny_llama: Path, live_questions: Path, tiny_corpus: Path
) -> None:
    log = run_hf(parser(k=5, l=2), tiny_llama, live_questions, tiny_corpus)
    for sample in log.samples:
        ev = evidence_of(sample)
        assert ev["method"] == "parser" and ev["uses_retrieval"] is True
        # gibberish cannot be a provision list: the fallback is counted, and the answer call still ran
        assert ev["counters"].get("provision_list_unparsed", 0) + len(ev["queries"]) >= 1
        assert sample.scores["token_f1"].answer is not None  # read from the completion as the model wrote it
        model_events = [e for e in sample.events if e.event == "model"]
        assert len(model_events) >= 2 and all(e.model == "hf/tiny" for e in model_events)
    assert log.stats.model_usage["hf/tiny"].output_tokens > 0


def test_flare_gets_real_logprobs_from_hf(
    hub_offline, tiny_llama: Path, live_questions: Path, tiny_corpus: Path
) -> None:
    log = run_hf(flare(k=1, max_steps=2, threshold=-0.7), tiny_llama, live_questions, tiny_corpus)
    for sample in log.samples:
        ev = evidence_of(sample)
        assert ev["method"] == "flare" and ev["uses_retrieval"] is True
        assert ev["queries"][0] == sample.metadata["background"] + sample.metadata["question"]
        assert len(ev["retrieved"][0]) == 1 and ev["predicted"]
        step_calls = [e for e in sample.events if e.event == "model" and e.config.logprobs]
        assert step_calls, "FLARE's reasoning steps must ask for logprobs"
        logprobs = step_calls[0].output.choices[0].logprobs
        assert logprobs is not None and logprobs.content
        assert all(lp.logprob <= 0.0 for lp in logprobs.content)
        # random weights are never confident (logprob ~ -log(vocab)): every step triggers a retrieval
        assert ev["counters"].get("active_retrievals", 0) >= 1 and len(ev["queries"]) >= 2


# --- vllm/ and openai-api/: a small OpenAI-compatible server in a thread ----------------------------


def text_of(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


class FakeOpenAIServer:
    """`/v1/models` and `/v1/chat/completions`; replies like ParSeR's scripted model; records requests."""

    def __init__(self, served_name: str) -> None:
        import uvicorn
        from fastapi import FastAPI, Request

        self.served_name = served_name
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        app = FastAPI()

        @app.get("/v1/models")
        async def models() -> dict:
            return {
                "object": "list",
                "data": [{"id": served_name, "object": "model", "owned_by": "test", "max_model_len": 8192}],
            }

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> dict:
            body = await request.json()
            with self.lock:
                self.requests.append({"body": body, "auth": request.headers.get("authorization")})
            prompt = "\n\n".join(text_of(m) for m in body["messages"])  # system and user turns
            if "Answer must be a list of clauses" in prompt:
                text = GUESSES
            elif "candidate passages" in prompt:
                text = "Answer: 0"
            else:
                text = "Answer: 처벌된다"
            return {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
            }

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "FakeOpenAIServer":
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the fake OpenAI server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), "the fake OpenAI server did not stop"

    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests if "messages" in r["body"]]


@pytest.mark.parametrize("provider", ["vllm", "openai-api"])
def test_parser_against_openai_compatible_server(
    hub_offline, provider: str, tiny_questions: Path, tiny_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("openai", reason="inspect's vllm/ and openai-api/ providers need the openai package")
    # Inspect's vllm/ provider keeps one server URL per model name for the whole process, so this test's model
    # name is its own (another test's vLLM server may have been the first for "Qwen/Qwen3-8B")
    served = "Qwen/Qwen3-8B" if provider == "openai-api" else "koblex-tests/live-paths-qwen3"
    with FakeOpenAIServer(served) as server:
        if provider == "vllm":  # what users do to reuse a running `vllm serve`
            monkeypatch.setenv("VLLM_BASE_URL", server.base_url)
            monkeypatch.setenv("VLLM_API_KEY", "secret-vllm")
            model, key = f"vllm/{served}", "secret-vllm"
        else:
            monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
            monkeypatch.setenv("LOCAL_API_KEY", "secret-local")
            model, key = f"openai-api/local/{served}", "secret-local"
        [log] = inspect_eval(
            koblex(data=str(tiny_questions), corpus=str(tiny_corpus), tokenizer="official", reranker="none"),
            solver=parser(k=10, l=3, official_selection_bug=False),  # each guess picks from its own list
            model=model,
            display="none",
            log_dir=str(tiny_corpus.parent / "logs"),
            max_retries=1,
            timeout=20,
            fail_on_error=True,
        )
        requests = server.chat_requests()
    assert log.status == "success", log.error
    q2 = next(s for s in log.samples if s.id == "q2")
    ev = evidence_of(q2)
    assert ev["predicted"] == [ROBBERY, QUASI]
    assert q2.output.completion == "Answer: 처벌된다" and q2.scores["token_f1"].answer == "처벌된다"
    # per sample: one provisions call, one selection per guess (2), one answer = 4 calls, 2 samples
    assert len(requests) == 8
    assert all(r["auth"] == f"Bearer {key}" and r["body"]["model"] == served for r in requests)
    assert all(r["body"].get("temperature") == 0.0 for r in requests)  # the task's config reached the wire
    assert all(r["body"].get("top_p") == 0.9 for r in requests)
    assert all([m["role"] for m in r["body"]["messages"]] == ["system", "user"] for r in requests)
    limits = {r["body"].get("max_tokens") or r["body"].get("max_completion_tokens") for r in requests}
    assert limits == {4000, 2048}  # provisions and answer 4000, selection 2048 (the official vLLM scripts)
    selection = [r for r in requests if "candidate passages" in text_of(r["body"]["messages"][0])]
    assert len(selection) == 4 and any(ROBBERY in r["body"]["messages"][-1]["content"] for r in selection)
