"""The KoBLEX task at build time: the paper's protocol by default, one-line errors before any model call,
the corpus and protocol recorded in the eval metadata, chat formats and per-stage limits as the official
scripts send them."""

import time
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage, ChatMessageSystem, GenerateConfig, ModelOutput, get_model

from koblex_tasks import hub
from koblex_tasks.benchmarks.koblex.protocol import protocol_of, run_settings
from koblex_tasks.benchmarks.koblex.spec import GENERATION, KOBLEX, PAPER_RERANKER
from koblex_tasks.corpus import rerank
from koblex_tasks.errors import SetupError
from koblex_tasks.hub import HubUnavailableError, load_hub_rows
from koblex_tasks.prompts import load_prompt
from koblex_tasks.providers.koblexmock import scripted_reply, usage_for
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.solvers.koblex.standard_prompting import standard_prompting
from koblex_tasks.tasks.koblex.task import koblex
from tests.inspect_cli import inspect_eval_cli

PAPER_TASK = {
    "tokenizer": "official",
    "reranker": PAPER_RERANKER,
    "retrieval": "bm25",
    "chat_format": "system_user",
    "generation": GENERATION,
}


@pytest.fixture
def rerank_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reranker check sees torch and transformers as installed (it only asks `find_spec`), so the build-time
    checks are tested with or without the `rerank` extra; no weights are ever loaded here."""
    real = rerank.importlib.util.find_spec
    monkeypatch.setattr(
        rerank.importlib.util,
        "find_spec",
        lambda name: object() if name in ("torch", "transformers") else real(name),
    )


@pytest.mark.usefixtures("rerank_installed")
def test_the_defaults_are_the_papers_protocol(
    tiny_questions: Path, tiny_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rerank, "weights_cached", lambda model_id: model_id == PAPER_RERANKER)
    task = koblex(data=str(tiny_questions), corpus=str(tiny_corpus))  # no reranker weights are loaded here
    meta = task.metadata or {}
    assert meta["protocol"] == "paper"
    assert meta["retrieval"]["tokenizer"] == "official" and meta["retrieval"]["reranker"] == PAPER_RERANKER
    # built outside an eval: the shape is resolved per model at its first request (`auto`)
    assert meta["generation"]["chat_format"] == "auto"
    assert meta["generation"]["by_format"]["system_user"]["max_tokens"] == {
        "provisions": 4000,
        "selection": 2048,
        "answer": 4000,
        "tree": 2048,
        "reasoning": 4000,
    }
    assert meta["generation"]["by_format"]["system_user"]["chat_template_kwargs"] == {
        "enable_thinking": False
    }
    assert "chat_template_kwargs" not in meta["generation"]["by_format"]["user"]
    # temperature and top_p are the resolved format's, set per call; the run's own settings still win
    assert task.config.temperature is None and task.config.top_p is None and task.config.max_tokens is None
    forced = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), chat_format="system_user")
    assert forced.config.temperature == 0.0 and forced.config.top_p == 0.9
    assert KOBLEX.paper_protocol["k"] == 100 and KOBLEX.paper_protocol["l"] == 10


def test_every_difference_is_listed_with_the_papers_value(tiny_questions: Path, tiny_corpus: Path) -> None:
    task = koblex(
        data=str(tiny_questions),
        corpus=str(tiny_corpus),
        reranker="none",
        tokenizer="kiwi",
        solver=parser(k=5, official_scripts="refactored", official_selection_bug=True),
    )
    assert (task.metadata or {})["protocol"] == {
        "reranker": {"value": "none", "paper": PAPER_RERANKER},
        "tokenizer": {"value": "kiwi", "paper": "official"},
        "k": {"value": 5, "paper": 100},
        "official_scripts": {"value": "refactored", "paper": "original"},
        "official_selection_bug": {"value": True, "paper": False},
    }
    openai = run_settings({**PAPER_TASK, "chat_format": "user"}, "koblex_tasks/parser", {})
    assert protocol_of(openai) == "paper"  # the OpenAI scripts' format is the paper's too (GPT-4o rows)
    assert protocol_of(run_settings(PAPER_TASK, "koblex_tasks/parser", {"prompt_version": "v1"})) == "paper"
    assert protocol_of(run_settings(PAPER_TASK, "koblex_tasks/ircot", {"reranker": "none"}))["solver"] == {
        "value": "ircot",
        "paper": "parser",
    }


def test_corpus_and_retriever_are_recorded_at_build(tiny_questions: Path, tiny_corpus: Path) -> None:
    meta = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none").metadata or {}
    corpus = meta["corpus"]
    assert corpus["source"] == str(tiny_corpus) and corpus["size"] == 5 and len(corpus["fingerprint"]) == 64
    assert corpus["partial"] is True and corpus["status"] == "partial"
    assert corpus["full_size"] == KOBLEX.full_corpus_size
    assert meta["retriever"]["corpus"]["fingerprint"] == corpus["fingerprint"]
    assert meta["retriever"]["tokenizer"]["name"] == "official"
    closed = koblex(data=str(tiny_questions), solver=standard_prompting()).metadata or {}
    assert closed["corpus"] == {
        "kind": "not loaded: koblex_tasks/standard_prompting retrieves nothing",
        "retrieves": False,
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"tokenizer": "kiwii"}, "tokenizer='kiwii' is not one of kiwi, official (did you mean 'kiwi'?)"),
        ({"retrieval": "bm52"}, "did you mean 'bm25'?"),
        ({"chat_format": "system"}, "did you mean 'system_user'?"),
        ({"reranker": "bgee"}, "unknown reranker 'bgee' (did you mean 'bge'?)"),
        ({"hop": 1}, "unknown task argument -T hop (did you mean 'hops'?)"),
        ({"hops": 4}, "no question has 4 gold provisions (hop counts present: 1, 2)"),
        ({"corpus": "nope/statutes.jsonl"}, "-T corpus=nope/statutes.jsonl: statute corpus file not found"),
        ({"data": "nope/q.jsonl"}, "-T data=nope/q.jsonl: questions file not found"),
    ],
)
def test_bad_arguments_fail_at_build_with_one_line(
    tiny_questions: Path, tiny_corpus: Path, args: dict, message: str
) -> None:
    base = {"data": str(tiny_questions), "corpus": str(tiny_corpus), "reranker": "none"}
    with pytest.raises(SetupError) as err:
        koblex(**{**base, **args})
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.usefixtures("rerank_installed")
def test_argument_mistakes_are_reported_before_missing_reranker_weights(
    tiny_questions: Path, tiny_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo is the user's to fix first; weights not downloaded are the machine's (reported once args are right)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    base = {"data": str(tiny_questions), "corpus": str(tiny_corpus), "reranker": "nobody/uncached-reranker"}
    with pytest.raises(SetupError, match="no question has 4 gold provisions"):
        koblex(**base, hops=4)
    with pytest.raises(SetupError, match="nobody/uncached-reranker are not in the local Hugging Face cache"):
        koblex(**base)


@pytest.mark.usefixtures("rerank_installed")
def test_missing_reranker_fails_in_seconds_naming_install_and_opt_out(
    tiny_questions: Path, tiny_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    with pytest.raises(SetupError) as err:
        koblex(data=str(tiny_questions), corpus=str(tiny_corpus))
    assert time.perf_counter() - start < 10
    text = str(err.value)
    assert "not in the local Hugging Face cache and HF_HUB_OFFLINE is set" in text
    assert "-T reranker=none" in text and "\n" not in text
    monkeypatch.setattr(rerank.importlib.util, "find_spec", lambda name: None)  # the rerank extra is absent
    with pytest.raises(SetupError) as err:
        koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="bge")
    assert 'pip install -e ".[rerank]"' in str(err.value) and "-T reranker=none" in str(err.value)


def test_offline_hub_fails_fast_with_the_tools_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.perf_counter()
    with pytest.raises(SetupError) as err:
        koblex(reranker="none")
    assert time.perf_counter() - start < 10
    assert "HF_HUB_OFFLINE is set" in str(err.value) and "-T data=PATH" in str(err.value)
    # no flag but no network: reported at once, with the caller's own hint
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "_unreachable", lambda host, port, timeout: f"{host} is unreachable (test)")
    with pytest.raises(HubUnavailableError) as hub_err:
        load_hub_rows("JihyungL/KoBLEX-koblex", "test", None)
    retold = hub_err.value.with_hint("pass --data PATH")
    assert "huggingface.co is unreachable (test); pass --data PATH" in str(retold)


@pytest.mark.parametrize("display", [[], ["--display", "none"]], ids=["default display", "display none"])
def test_the_inspect_cli_prints_the_one_line(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path, display: list[str]
) -> None:
    """The refusal is printed once, without a traceback, also under `--display none` (which silences Inspect's)."""
    args = ["-T", f"data={tiny_questions}", "-T", f"corpus={tiny_corpus}", "-T", "tokenizer=kiwii"]
    proc = inspect_eval_cli(
        "koblex_tasks/koblex", "--model", "koblexmock/m", *args, *display, log_dir=tmp_path, timeout=120
    )
    assert proc.returncode == 1
    output = (proc.stdout + proc.stderr).strip()
    assert output.count("did you mean 'kiwi'?") == 1 and "Traceback" not in output
    assert len(output.splitlines()) <= 3, output


class Recorder:
    """A scripted model that keeps each call's messages and generate config."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[ChatMessage], GenerateConfig]] = []

    def __call__(self, messages, tools, tool_choice, config: GenerateConfig) -> ModelOutput:
        self.calls.append((list(messages), config))
        prompt = "\n\n".join(m.text for m in messages)
        reply = scripted_reply(prompt)
        if "Answer must be a list" in prompt:
            reply = '["형법 (강도상해) 강도가 사람을 상해하거나"]'
        out = ModelOutput.from_content(model="m", content=reply)
        out.usage = usage_for(prompt, reply)
        return out

    def by_stage(self) -> dict[str, list[tuple[list[ChatMessage], GenerateConfig]]]:
        stages: dict[str, list] = {"provisions": [], "selection": [], "answer": []}
        for messages, config in self.calls:
            text = "\n".join(m.text for m in messages)
            stage = (
                "provisions"
                if "Answer must be a list" in text
                else "selection"
                if "candidate passages" in text
                else "answer"
            )
            stages[stage].append((messages, config))
        return stages


def run_parser(questions: Path, corpus: Path, tmp_path: Path, **eval_args) -> Recorder:
    recorder = Recorder()
    chat_format = eval_args.pop("chat_format", "system_user")
    task = koblex(data=str(questions), corpus=str(corpus), reranker="none", chat_format=chat_format)
    [log] = inspect_eval(
        task,
        model=get_model("mockllm/model", custom_outputs=recorder),
        log_dir=str(tmp_path),
        display="none",
        **eval_args,
    )
    assert log.status == "success", log.error
    return recorder


def test_system_user_format_and_stage_limits(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    stages = run_parser(tiny_questions, tiny_corpus, tmp_path).by_stage()
    expected = {"provisions": 4000, "selection": 2048, "answer": 4000}
    for stage, calls in stages.items():
        assert calls, stage
        for messages, config in calls:
            assert [m.role for m in messages] == ["system", "user"]
            assert config.max_tokens == expected[stage] and config.temperature == 0.0 and config.top_p == 0.9
    system = stages["provisions"][0][0][0]
    assert isinstance(system, ChatMessageSystem)  # the original scripts' wording (curly quotes)
    assert system.text == load_prompt("koblex/parser_provisions_system", "v2").text
    assert "“Article 123”" in system.text
    select_system = stages["selection"][0][0][0]
    assert select_system.text == load_prompt("koblex/parser_select_system", "v2").text
    assert select_system.text.startswith("<SYSTEM>\n")
    # logprobs=1 on the provisions and selection calls, none on the answer (the original vLLM scripts)
    assert {stage: {bool(c.logprobs) for _, c in calls} for stage, calls in stages.items()} == {
        "provisions": {True},
        "selection": {True},
        "answer": {False},
    }


def test_user_format_is_the_openai_scripts_single_message(
    tiny_questions: Path, tiny_corpus: Path, tmp_path: Path
) -> None:
    stages = run_parser(tiny_questions, tiny_corpus, tmp_path, chat_format="user").by_stage()
    single = load_prompt("koblex/parser_provisions", "v1").text  # the earlier one-file wording
    for calls in stages.values():
        for messages, config in calls:
            assert [m.role for m in messages] == ["user"]
            assert config.max_tokens == 2000 and config.temperature == 0.01 and config.top_p == 0.9
    first = stages["provisions"][0][0][0].text
    assert first.startswith(single.split("<Query>")[0])  # system + "\n\n" + examples, exactly as v1


def test_the_runs_own_max_tokens_wins(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    recorder = run_parser(tiny_questions, tiny_corpus, tmp_path, max_tokens=321)
    assert recorder.calls and {config.max_tokens for _, config in recorder.calls} == {321}
