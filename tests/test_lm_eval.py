"""The lm-eval closed-book tasks: same prompts, extraction and token F1 as Inspect; runs on lm-eval's models."""

from pathlib import Path

import pytest

pytest.importorskip("lm_eval", reason="the lm-eval extra is not installed")

from lm_eval import simple_evaluate
from lm_eval.models.dummy import DummyLM
from lm_eval.tasks import TaskManager

import koblex_tasks.lm_eval_tasks as lm_tasks
from koblex_tasks.benchmarks.koblex.evidence import after_marker as answer_after_marker
from koblex_tasks.prompts import load_prompt
from koblex_tasks.scorers.koblex.text import token_f1

ANSWER = "정답은 소멸한다."  # tiny_question's reference answer


@pytest.fixture(autouse=True)
def hub_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """lm-eval looks the model up on the hub (model info, user-agent registry): retries cost ~50 s offline."""
    import huggingface_hub.constants

    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(var, "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


@pytest.fixture
def task_manager(tiny_questions: Path, monkeypatch: pytest.MonkeyPatch) -> TaskManager:
    monkeypatch.setenv("KOBLEX_DATA", str(tiny_questions))
    monkeypatch.delenv("KOBLEX_LANG", raising=False)
    return TaskManager(include_path=lm_tasks.TASKS_DIR, include_defaults=False)


def utils():
    import importlib.util

    spec = importlib.util.spec_from_file_location("koblex_lm_utils", Path(lm_tasks.TASKS_DIR) / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ScriptedLM(DummyLM):
    """lm-eval's dummy model, but replying with a fixed text and keeping the requests it got."""

    def __init__(self, reply: str) -> None:
        super().__init__()
        self.reply, self.requests = reply, []

    def generate_until(self, requests, disable_tqdm: bool = False):
        self.requests.extend(r.arguments for r in requests)
        return [self.reply for _ in requests]


def test_tasks_are_indexed_and_shipped(task_manager: TaskManager) -> None:
    assert set(lm_tasks.TASKS) <= set(task_manager.all_tasks)
    assert {p.name for p in Path(lm_tasks.TASKS_DIR).glob("*.yaml")} == {"koblex_sp.yaml", "koblex_cot.yaml"}


def test_hooks_reuse_inspect_prompt_extraction_and_f1(tiny_questions: Path) -> None:
    u = utils()
    docs = u.load_koblex(data=str(tiny_questions), version=1.0)["test"]
    assert len(docs) == 2 and docs[0]["id"] == "q1" and docs[0]["answer"] == ANSWER
    doc = docs[1]
    question = doc["background"] + doc["question"]
    assert u.doc_to_text_sp(doc) == load_prompt("koblex/sp").render(question=question)
    assert u.doc_to_text_cot(doc) == load_prompt("koblex/cot").render(question=question)
    assert u.doc_to_text_cot(doc).endswith("Reasoning: ")
    reply = "근거를 따진다. Answer: 틀린 답. Answer: 정답은 소멸한다"
    assert u.extract_answer(reply) == answer_after_marker(reply) == "정답은 소멸한다"
    scores = u.process_results(doc, [reply])
    assert scores["token_f1"] == pytest.approx(token_f1("정답은 소멸한다", ANSWER)[2]) == pytest.approx(1.0)
    assert scores["empty_answer"] == 0.0
    assert u.process_results(doc, ["Answer:   "]) == {
        "token_f1": 0.0,
        "token_f1_official": 0.0,
        "empty_answer": 1.0,
    }
    assert u.process_results(doc, ["<think>x</think> 정답은"])["token_f1"] == pytest.approx(2 / 3)


def test_simple_evaluate_on_the_dummy_model(task_manager: TaskManager) -> None:
    out = simple_evaluate(
        model="dummy", tasks=list(lm_tasks.TASKS), task_manager=task_manager, limit=2, bootstrap_iters=0
    )
    for name in lm_tasks.TASKS:
        result = out["results"][name]
        assert result["token_f1,none"] == 0.0 and result["empty_answer,none"] == 0.0  # dummy says "lol"
        assert len(out["samples"][name]) == 2


def test_simple_evaluate_scores_with_token_f1(task_manager: TaskManager) -> None:
    lm = ScriptedLM("갑은 처벌된다. 따라서\nAnswer: 정답은 소멸한다")
    out = simple_evaluate(
        model=lm, tasks=["koblex_cot"], task_manager=task_manager, limit=2, bootstrap_iters=0
    )
    assert out["results"]["koblex_cot"]["token_f1,none"] == pytest.approx(1.0)
    assert out["results"]["koblex_cot"]["token_f1_official,none"] == pytest.approx(1.0)
    prompt, gen_kwargs = lm.requests[0]
    assert prompt.startswith("You are a legal assistant AI.") and prompt.endswith("Reasoning: ")
    assert gen_kwargs["until"] == ["\nQuestion:", "<Query>", "<EXAMPLE>"] and gen_kwargs["do_sample"] is False
    assert gen_kwargs["max_gen_toks"] == 2000


def test_offline_hub_names_the_lm_eval_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without data, offline: one line naming KOBLEX_DATA (lm-eval's way to pass a local file)."""
    from koblex_tasks.hub import HubUnavailableError
    from koblex_tasks.lm_eval_tasks import utils as u

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(u.DATA_ENV, raising=False)
    with pytest.raises(HubUnavailableError, match="set KOBLEX_DATA=PATH to a local KoBLEX JSONL instead"):
        u.load_koblex()
