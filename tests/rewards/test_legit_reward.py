"""The LEGIT reward returns the `legit_rubric` scorer's scores on the same answers and verdicts."""

import math

import pytest

from koblex_tasks.rewards import legit_reward, make_legit_reward
from koblex_tasks.tasks.legit.task import legit
from tests.legit_helpers import CountingModel, ScriptedJudge, eval_one

DOCS = ["부산지방법원-2017구합23", "서울중앙지방법원-2022가단24276", "대전지방법원-2016가단7699"]


def script():
    # a mix of verdicts so the three answers get three different scores, and one node that never parses
    return {
        (DOCS[0], "1.1"): (True, False),
        (DOCS[0], "1.2"): (False, False),
        (DOCS[1], ""): (True, False),
        (DOCS[2], "2.1"): (True, False),
        (DOCS[2], "3"): ["no json"],
    }


@pytest.mark.parametrize("rule", ["paper", "official"])
def test_reward_equals_the_rubric_scorer(sample_file, sample_records, tmp_path, rule) -> None:
    answer = CountingModel().answer
    task = legit(data=str(sample_file), doc_ids=DOCS, rule=rule, judge_retries=0)
    log = eval_one(
        task, tmp_path, CountingModel().model(), grader=ScriptedJudge(sample_records, script()).model()
    )
    assert log.status == "success", log.error
    by_doc = {str(s.id): s.scores["legit_rubric"].value for s in log.samples}
    records = {r.doc_id: r for r in sample_records}
    issues = [[i.as_dict() for i in records[d].issues] for d in DOCS]
    judge = ScriptedJudge(sample_records, script())
    reward = make_legit_reward(judge.model(), rule=rule, retries=0, cache=False)
    assert reward.__name__ == "legit_reward"  # TRL names the reward column after it
    # TRL passes conversational completions and every dataset column as keyword lists
    completions = [[{"role": "assistant", "content": answer}] for _ in DOCS]
    got = reward(completions=completions, issues=issues, prompts=["p"] * 3, doc_id=DOCS)
    expected = [by_doc[d]["legit_score"] for d in DOCS]
    assert math.isnan(expected[2])  # the unparsable node leaves the scorer's total unscored...
    assert got[:2] == expected[:2] and math.isnan(got[2])  # ...and the reward NaN, not 0
    assert len(set(got[:2])) == 2
    penalised = make_legit_reward(judge.model(), rule=rule, retries=0, cache=False, failure_value=-1.0)
    assert penalised([answer] * 3, issues)[2] == -1.0
    coverage = make_legit_reward(judge.model(), rule=rule, retries=0, cache=False, component="coverage")
    assert coverage([answer] * 2, issues[:2]) == [by_doc[d]["coverage"] for d in DOCS[:2]]


def test_cached_judge_is_not_called_twice(sample_records, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))  # never the user's cache
    record = sample_records[0]
    judge = ScriptedJudge(sample_records, {})
    issues = [[i.as_dict() for i in record.issues]]
    answer = ["캐시 시험용 답변: 원고의 청구를 기각한다."]
    first = legit_reward(answer, issues, judge=judge.model(), cache=True)
    calls = judge.total_calls
    assert first == [10.0] and calls == len(record.issues)
    assert legit_reward(answer, issues, judge=judge.model(), cache=True) == first
    assert judge.total_calls == calls


def test_bad_inputs_are_refused(sample_records) -> None:
    reward = make_legit_reward("mockllm/model")
    with pytest.raises(ValueError, match="issues"):
        reward(["a"])
    with pytest.raises(ValueError, match="2 completions but 1"):
        reward(["a", "b"], [[]])
    with pytest.raises(ValueError, match="component"):
        make_legit_reward("mockllm/model", component="total")


@pytest.mark.parametrize("subissues", [3, 7, 13, 21])
def test_a_perfect_answer_is_rewarded_the_bound_exactly(subissues) -> None:
    """5 + N x (2/N + 3/N) misses 10 by an ulp in float for these N; the reward is 10 and 1.0, not
    9.999999999999998 or 10.000000000000005."""
    ids = ["", *(str(i) for i in range(1, subissues + 1))]
    tree = [
        {
            "id": i,
            "summary": f"쟁점 {i}",
            "claim": [],
            "relevant_law": [],
            "analysis": [],
            "conclusion": "인용",
        }
        for i in ids
    ]
    judge = ScriptedJudge([], {}).model()  # every node covered and correct
    for component, bound in [("legit_score", 10.0), ("coverage", 2.0), ("correctness", 3.0)]:
        reward = make_legit_reward(judge, retries=0, cache=False, component=component)
        assert reward(["답변"], [tree]) == [bound]
    assert make_legit_reward(judge, retries=0, cache=False, scale=0.1)(["답변"], [tree]) == [1.0]
