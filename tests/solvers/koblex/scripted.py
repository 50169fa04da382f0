"""Solver-test helpers: a scripted mock model (replies by prompt kind, records every prompt it saw), a tiny
KoBLEX eval, and readers for a sample's evidence."""

from collections.abc import Callable
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, get_model
from inspect_ai.solver import Solver

from koblex_tasks.providers.koblexmock import usage_for
from koblex_tasks.scorers.koblex.answer import sample_answer
from koblex_tasks.tasks.koblex.task import koblex


def run_koblex(solver: Solver, model: Model, questions: Path, corpus: Path, **task_args) -> EvalLog:
    """`solver` on the tiny questions and corpus with `model`; the log goes next to the corpus."""
    task_args.setdefault("reranker", "none")  # offline: no cross-encoder weights
    task = koblex(data=str(questions), corpus=str(corpus), **task_args)
    [log] = inspect_eval(
        task, solver=solver, model=model, display="none", log_dir=str(corpus.parent / "logs")
    )
    return log


def sample(log: EvalLog, sample_id: str):
    return next(s for s in log.samples if s.id == sample_id)


def answer_of(s) -> str:
    """The answer the scorers read out of a logged sample (its completion stays as the model wrote it)."""
    return sample_answer(s)


def evidence_of(s) -> dict:
    return {k.split(":", 1)[1]: v for k, v in s.store.items() if k.startswith("ProvisionEvidence:")}


class ScriptedModel:
    """`reply(kind, prompt)` decides the text; kind is provisions / select / answer (from the prompt)."""

    def __init__(self, reply: Callable[[str, str], str]) -> None:
        self.reply = reply
        self.prompts: list[tuple[str, str]] = []

    @staticmethod
    def kind(prompt: str) -> str:
        if "Answer must be a list of clauses" in prompt:
            return "provisions"
        if "candidate passages" in prompt:
            return "select"
        return "answer"

    def __call__(
        self, messages: list[ChatMessage], tools, tool_choice, config: GenerateConfig
    ) -> ModelOutput:
        prompt = "\n\n".join(m.text for m in messages)  # system and user turns alike
        kind = self.kind(prompt)
        self.prompts.append((kind, prompt))
        text = self.reply(kind, prompt)
        out = ModelOutput.from_content(model="scripted", content=text)
        out.usage = usage_for(prompt, text)
        return out

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)

    def of_kind(self, kind: str) -> list[str]:
        return [p for k, p in self.prompts if k == kind]
