"""LEGIT test helpers: the shared sample (skipped when absent) and scripted offline judges.

The fixtures are registered in `tests/conftest.py`; tests import the helpers from here.

Every scripted output carries `usage`, otherwise mockllm would download a tokenizer to count tokens.
"""

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Solver

from koblex_tasks.data.legit.dataset import Issue, LegitRecord, read_legit_file

SHARED_ENV = "KOBLEX_SHARED_DATA"


def usage() -> ModelUsage:
    return ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)


def output(text: str, model: str = "mockllm/model") -> ModelOutput:
    out = ModelOutput.from_content(model=model, content=text)
    out.usage = usage()
    return out


def verdict_text(contains: bool, correct: bool, rationale: str = "scripted") -> str:
    body = json.dumps(
        {"rationales": rationale, "contains_issue": contains, "correct_conclusion": correct},
        ensure_ascii=False,
    )
    return f"<OUTPUT>{body}</OUTPUT>"


def issue_block(issue: Issue) -> str:
    """The ISSUE part of the judge prompt, which identifies the node being judged."""
    return f"summary: {issue.summary}\nclaims:\n{issue.claims_text()}\nconclusion:\n{issue.conclusion}"


def block_of_prompt(prompt: str) -> str:
    return prompt.rsplit("<ISSUE>\n", 1)[-1].split("\n</ISSUE>", 1)[0]


# What the scripted judge says about one node: (contains_issue, correct_conclusion), or a list of raw replies
# given in turn (the last one repeats), e.g. ["no json here"] for an always-unparsable node.
Reply = tuple[bool, bool] | list[str]


class ScriptedJudge:
    """A judge answering per (doc_id, issue_id) from a script; counts calls per node."""

    def __init__(
        self, records: list[LegitRecord], script: dict[tuple[str, str], Reply], default: Reply = (True, True)
    ):
        self.by_block: dict[str, tuple[str, str]] = {}
        for record in records:
            for issue in record.issues:
                self.by_block.setdefault(issue_block(issue), (record.doc_id, issue.id))
        self.script = script
        self.default = default
        self.calls: dict[tuple[str, str], int] = {}
        self.prompts: list[str] = []

    def __call__(self, input, tools, tool_choice, config) -> ModelOutput:
        prompt = input[-1].text
        self.prompts.append(prompt)
        key = self.by_block.get(block_of_prompt(prompt), ("?", "?"))
        count = self.calls.get(key, 0)
        self.calls[key] = count + 1
        reply = self.script.get(key, self.default)
        if isinstance(reply, list):
            return output(reply[min(count, len(reply) - 1)], "mockllm/judge")
        return output(verdict_text(*reply), "mockllm/judge")

    def model(self):
        return get_model("mockllm/model", custom_outputs=self)

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


class CountingModel:
    """The model under evaluation: a fixed answer, counting its calls."""

    def __init__(self, answer: str = "1. 원고의 청구를 기각한다.\n2. 소송비용은 원고가 부담한다."):
        self.answer = answer
        self.calls = 0
        self.inputs: list = []

    def __call__(self, input, tools, tool_choice, config) -> ModelOutput:
        self.calls += 1
        self.inputs.append(input)
        return output(self.answer)

    def model(self):
        return get_model("mockllm/model", custom_outputs=self)


def eval_one(
    task: Task,
    log_dir: Path,
    model: str | Model,
    grader: Model | None = None,
    solver: Solver | None = None,
    **kwargs: object,
) -> EvalLog:
    """Evaluate one task offline (no display), with `grader` bound to the judge role when given."""
    [log] = inspect_eval(
        task,
        solver=solver,
        model=model,
        model_roles={"grader": grader} if grader is not None else None,
        display="none",
        log_dir=str(log_dir),
        **kwargs,  # type: ignore[arg-type]
    )
    return log


def tiny_record(doc_id: str = "테스트법원-2024가단1") -> dict:
    """A minimal valid LEGIT record (root + one issue), for tests that must run without the shared data."""

    def node(issue_id: str, conclusion: str) -> dict:
        return {
            "id": issue_id,
            "summary": "" if issue_id == "" else "대여금 반환 의무",
            "claim": [{"claimer": "원고", "content": "피고는 원고에게 1,000,000원을 지급하라."}],
            "relevant_law": [],
            "analysis": [],
            "conclusion": conclusion,
        }

    return {
        "doc_id": doc_id,
        "issue_id": "",
        "question": "[사실관계]\n원고는 피고에게 돈을 빌려주었다.\n\n위 재판의 결과를 예측하시오.",
        "answer": "1. 피고는 원고에게 1,000,000원을 지급하라.",
        "issues": [
            node("", "1. 피고는 원고에게 1,000,000원을 지급하라."),
            node("1", "원고의 주장은 이유 있다."),
        ],
        "difficulty": "easy",
    }


@pytest.fixture
def tiny_legit(tmp_path: Path) -> Path:
    path = tmp_path / "tiny_legit.jsonl"
    rows = [tiny_record(), tiny_record("테스트법원-2024가단2")]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def legit_shared() -> Path:
    """`$KOBLEX_SHARED_DATA/legit`; tests using it skip with a clear message when it is absent."""
    root = os.environ.get(SHARED_ENV)
    if not root:
        pytest.skip(f"{SHARED_ENV} is not set: point it at shared/data to run the LEGIT real-data tests")
    path = Path(root) / "legit"
    if not (path / "legit_test_sample.jsonl").is_file():
        pytest.skip(f"{SHARED_ENV}={root} does not contain legit/legit_test_sample.jsonl")
    return path


@pytest.fixture(scope="session")
def sample_file(legit_shared: Path) -> Path:
    return legit_shared / "legit_test_sample.jsonl"


@pytest.fixture(scope="session")
def sample_records(sample_file: Path) -> list[LegitRecord]:
    return read_legit_file(sample_file)


@pytest.fixture
def record_by_id(sample_records: list[LegitRecord]) -> Callable[[str], LegitRecord]:
    index = {r.doc_id: r for r in sample_records}
    return index.__getitem__


def dump_record(record: LegitRecord) -> str:
    """One JSONL line for `record`, to write variants of real records."""
    return json.dumps(
        {
            "doc_id": record.doc_id,
            "issue_id": record.issue_id,
            "question": record.question,
            "answer": record.answer,
            "issues": [i.as_dict() for i in record.issues],
            "difficulty": record.difficulty,
        },
        ensure_ascii=False,
    )
