"""The Likert judge end to end with a scripted judge: prompt content, scale checks, retries, unscored failures."""

import json
import math
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.model import get_model

from koblex_tasks.benchmarks.legit.spec import LEGIT, LEGIT_LIKERT
from koblex_tasks.data.legit.dataset import legit_dataset, read_legit_file
from koblex_tasks.prompts import load_prompt
from koblex_tasks.scorers.legit.likert import legit_likert, parse_likert_reply, rederive
from koblex_tasks.scorers.legit.rubric import legit_rubric
from koblex_tasks.solvers.legit.predict import legit_predict
from tests.conftest import write_jsonl
from tests.legit_helpers import CountingModel, eval_one, output, tiny_record, verdict_text

ANSWERS = {
    "D1": "1. 피고는 원고에게 100원을 지급하라.",
    "D2": "1. 원고의 청구를 기각한다.",
    "D3": "1. 소를 각하한다.",
}


def likert(score: object) -> str:
    return json.dumps({"rationales": "scripted", "score": score})


class ScriptedLikert:
    """Answers the Likert prompt per document (found by its final order in the prompt), rubric prompts with
    a fixed verdict; keeps every Likert prompt."""

    def __init__(self, replies: dict[str, list[str]]):
        self.replies = replies
        self.calls: dict[str, int] = {}
        self.prompts: dict[str, list[str]] = {}

    def __call__(self, input, tools, tool_choice, config):
        prompt = input[-1].text
        if "<JUDGMENT>" not in prompt:
            return output(verdict_text(True, True), "mockllm/judge")
        judgment = prompt.split("<JUDGMENT>", 1)[1].split("</JUDGMENT>", 1)[0]
        doc = next(d for d, answer in ANSWERS.items() if f"[주문]\n{answer}" in judgment)
        self.prompts.setdefault(doc, []).append(prompt)
        count = self.calls[doc] = self.calls.get(doc, 0) + 1
        replies = self.replies[doc]
        return output(replies[min(count - 1, len(replies) - 1)], "mockllm/judge")


@pytest.fixture
def records(tmp_path: Path):
    rows = []
    for doc, answer in ANSWERS.items():
        row = tiny_record(doc)
        row["answer"] = answer
        row["issues"][0]["conclusion"] = answer
        row["issues"][1]["relevant_law"] = [f"민법 제{len(rows) + 390}조"]
        rows.append(row)
    return read_legit_file(write_jsonl(tmp_path / "legit.jsonl", rows))


def test_parse_accepts_only_integers_on_the_scale() -> None:
    assert parse_likert_reply(likert(7)) == 7
    assert parse_likert_reply(f"```json\n{likert(0)}\n```") == 0
    assert parse_likert_reply("<OUTPUT>" + likert(10) + "</OUTPUT>") == 10
    for bad in (11, -1, 7.5, "7", True, None):
        assert parse_likert_reply(likert(bad)) is None, bad
    assert parse_likert_reply("점수는 7점입니다") is None


def test_end_to_end_scores_failures_and_record(records, tmp_path: Path) -> None:
    judge = ScriptedLikert({"D1": [likert(8)], "D2": ["no json", likert(3)], "D3": [likert(42)]})
    task = Task(
        dataset=legit_dataset(records),
        solver=legit_predict(),
        scorer=[legit_rubric(), legit_likert(retries=1)],
    )
    log = eval_one(
        task, tmp_path, CountingModel().model(), grader=get_model("mockllm/model", custom_outputs=judge)
    )
    assert log.status == "success"
    scores = {str(s.id): s.scores["legit_likert"] for s in log.samples}
    assert scores["D1"].value == {"likert_score": 8.0, "likert_failure_rate": 0.0}
    assert scores["D2"].value["likert_score"] == 3.0 and scores["D2"].metadata["attempts"] == 2
    assert scores["D2"].metadata["raw_retried"] == ["no json"]
    # out of the scale twice: unscored (NaN), never 0 or clipped
    assert math.isnan(scores["D3"].value["likert_score"]) and scores["D3"].value["likert_failure_rate"] == 1.0
    assert judge.calls == {"D1": 1, "D2": 2, "D3": 2}
    meta = scores["D1"].metadata
    assert meta["judge_prompt"] == load_prompt("legit/likert").ref and meta["judge_model"] == "mockllm/model"
    assert meta["judge_config"]["role"] == "grader" and meta["judge_config"]["temperature"] == 0.0
    # the judge sees the court's final order, its issues and cited laws, and the answer
    prompt = judge.prompts["D1"][0]
    assert ANSWERS["D1"] in prompt and "민법 제390조" in prompt and "대여금 반환 의무" in prompt
    assert CountingModel().answer in prompt
    # the rubric ran beside it, untouched
    assert all("legit_rubric" in s.scores for s in log.samples)
    # rederive agrees with every stored value, and refuses a tampered one
    for sample in log.samples:
        score = sample.scores["legit_likert"]
        derived = rederive(sample, score, {})
        stored = {k: (None if math.isnan(v) else v) for k, v in score.value.items()}
        assert derived == stored
    tampered = scores["D1"].model_copy(update={"metadata": {**scores["D1"].metadata, "likert": 9}})
    assert rederive(log.samples[0], tampered, {}) == dict.fromkeys(LEGIT_LIKERT.keys)


def test_declared_as_its_own_column() -> None:
    names = [s.name for s in LEGIT.scorers]
    assert names == ["legit_rubric", "legit_likert"]
    spec = LEGIT.scorers[1]
    assert spec.judge and not spec.required and spec.value("likert_score").high == 10.0
    assert LEGIT.ranking == "legit_score"  # the Likert column never ranks the board's headline
