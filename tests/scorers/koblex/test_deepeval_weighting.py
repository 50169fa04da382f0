"""`deepeval_weighted_score` is DeepEval GEval's score, case for case: the 240 shared cases DeepEval's own code
scored, hand-made replies of the same shapes, and the re-derivation that refuses a log's own rules.

Hand cases: each expected value follows from DeepEval 3.2.6's `calculate_weighted_summed_score` and GEval's
fallback by hand (and was checked against that code outside this repository).
"""

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalSample
from inspect_ai.model import Logprob, Logprobs, TopLogprob
from inspect_ai.scorer import Score

from koblex_tasks.scorers.koblex import deepeval_weighted_score
from koblex_tasks.scorers.koblex.deepeval_weighting import DeepEvalReplyError, geval_score
from koblex_tasks.scorers.koblex.lf_eval import RederivationRefused, rederive
from koblex_tasks.scorers.koblex.lf_eval_record import Rules, derive, logprobs_record

CASES = Path("koblex") / "lf_eval_weighting" / "deepeval_cases.jsonl"
TOLERANCE = 1e-9

Token = tuple[str, dict[str, float] | None]  # a generated token, its alternatives (probabilities) or none


def shared_cases() -> list[dict[str, Any]]:
    root = os.environ.get("KOBLEX_SHARED_DATA")
    if not root or not (Path(root) / CASES).is_file():
        pytest.skip(
            f"set KOBLEX_SHARED_DATA to the shared data folder holding {CASES} (DeepEval's own scores)"
        )
    with (Path(root) / CASES).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_every_shared_case_scores_as_deepeval_did() -> None:
    cases = shared_cases()
    assert len(cases) == 240
    wrong = []
    for i, case in enumerate(cases):
        got = deepeval_weighted_score(case["reply"], Logprobs(content=case["logprobs"]))
        if not math.isclose(got, case["deepeval_score"], rel_tol=0, abs_tol=TOLERANCE):
            wrong.append((i, case["layout"], got, case["deepeval_score"]))
        weighted = geval_score(case["reply"], Logprobs(content=case["logprobs"])).index is not None
        assert weighted == (case["path"] == "weighted"), (i, case["layout"])
    assert wrong == []


def test_every_shared_case_rederives_from_the_judge_record() -> None:
    """What the scorer logs (tokens, the alternatives at the positions a weighting reads) is enough: the value
    re-derived from the record alone is DeepEval's for every case, and none is unscored."""
    wrong = []
    for i, case in enumerate(shared_cases()):
        content = Logprobs(content=case["logprobs"]).content
        record = {"prompt_variant": "deepeval", "mode": "logprobs", "replies": [case["reply"]]}
        record |= logprobs_record("deepeval", content, case["reply"])
        value = derive(record, Rules("deepeval")).value
        if value is None or not math.isclose(value, 100 * case["deepeval_score"], rel_tol=0, abs_tol=1e-7):
            wrong.append((i, case["layout"], value, case["deepeval_score"]))
    assert wrong == []


def logprob(token: str, alternatives: dict[str, float] | None) -> Logprob:
    top = [TopLogprob(token=t, logprob=math.log(p)) for t, p in (alternatives or {}).items()]
    sampled = math.log(alternatives[token]) if alternatives and token in alternatives else 0.0
    return Logprob(token=token, logprob=sampled, top_logprobs=top if alternatives is not None else None)


def reply_of(tokens: list[Token]) -> tuple[str, Logprobs]:
    return "".join(t for t, _ in tokens), Logprobs(content=[logprob(t, a) for t, a in tokens])


def sure(*tokens: str) -> list[Token]:
    return [(t, {t: 1.0}) for t in tokens]


def score_reply(score: Token, reason: list[Token] | None = None) -> list[Token]:
    """`{"reason": "<reason>", "score": <score>}` tokenised as OpenAI does, the score token as given."""
    return [
        *sure('{"', "reason", '":', ' "'),
        *(reason or sure("ok")),
        *sure('",', ' "', "score", '":', " "),
        score,
        *sure("}"),
    ]


HAND_CASES: dict[str, tuple[list[Token], float]] = {
    # alternatives outside 0-10 are integers to DeepEval: (7*.6 + 11*.2 + 6*.2) / 1
    "alternative 11": (score_reply(("7", {"7": 0.6, "11": 0.2, "6": 0.2})), 0.76),
    "alternative 100": (score_reply(("9", {"9": 0.5, "100": 0.5})), 5.45),
    # "-" is not decimal: dropped, the rest renormalised
    "alternative minus": (score_reply(("8", {"8": 0.6, "-": 0.3, "7": 0.1})), (8 * 0.6 + 7 * 0.1) / 0.7 / 10),
    # the score merged with its space: no token equals "7", GEval falls back to the raw 7
    "space-merged score": (
        [
            *sure('{"', "reason", '":', ' "', "ok", '",', ' "', "score", '":'),
            (" 7", {" 7": 0.5, " 9": 0.5}),
            *sure("}"),
        ],
        0.7,
    ),
    # the reason holds the score's digit first: DeepEval weights that token, not the score
    "digit in the reason": (
        score_reply(("8", {"8": 1.0}), [("8", {"8": 0.5, "3": 0.5}), *sure(" items")]),
        0.55,
    ),
    # non-ASCII decimals count: "٨" (Arabic-Indic eight) and "８" (full-width) are 8
    "arabic-indic eight": (score_reply(("7", {"7": 0.5, "٨": 0.5})), 0.75),
    "full-width eight": (score_reply(("7", {"7": 0.5, "８": 0.3, "6": 0.2})), (3.5 + 2.4 + 1.2) / 10),
    # the 1% cut applies per alternative before merging: "8" and "08" at 0.6% each are both dropped
    "cut before merging": (
        score_reply(("7", {"7": 0.9, "8": 0.006, "08": 0.006, "6": 0.088})),
        (6.3 + 0.528) / 0.988 / 10,
    ),
    # exactly 1% is kept (DeepEval drops logprob < log(0.01))
    "exactly one percent": (score_reply(("5", {"5": 0.99, "10": 0.01})), (4.95 + 0.1) / 10),
    # "10" as "1" "0": no token equals "10", raw fallback
    "split ten": ([*score_reply(("1", {"1": 0.7, "9": 0.3}))[:-1], ("0", {"0": 1.0}), *sure("}")], 1.0),
    # a score token without alternatives: the weighting raises, raw fallback
    "no alternatives": (score_reply(("6", None)), 0.6),
    # every alternative non-decimal or under 1%: nothing left to renormalise, raw fallback
    "nothing survives": (score_reply(("4", {"4": 0.005, "four": 0.995})), 0.4),
    # a float score: str(8.0) is "8.0", which no token equals
    "float score": (
        [
            *sure('{"', "reason", '":', ' "', "ok", '",', ' "', "score", '":', " ", "8"),
            (".0", {".0": 1.0}),
            *sure("}"),
        ],
        0.8,
    ),
    # an out-of-range score is DeepEval's too (our strict parse leaves it unscored)
    "score 11": (score_reply(("11", {"11": 0.5, "10": 0.5})), 1.05),
}


@pytest.mark.parametrize("name", sorted(HAND_CASES))
def test_hand_made_cases(name: str) -> None:
    tokens, expected = HAND_CASES[name]
    reply, logprobs = reply_of(tokens)
    assert deepeval_weighted_score(reply, logprobs) == pytest.approx(expected, abs=TOLERANCE)


def test_no_logprobs_is_the_raw_score() -> None:
    reply, _ = reply_of(score_reply(("7", {"7": 0.5, "9": 0.5})))
    assert deepeval_weighted_score(reply, None) == pytest.approx(0.7)
    assert deepeval_weighted_score('Sure!\n```json\n{"score": 9, "reason": "ok",}\n```', None) == 0.9


@pytest.mark.parametrize(
    "reply",
    [
        "I cannot grade this.",
        '{"score": 8}',
        '{"reason": "no score"}',
        '{"score": 8, "reason": "cut',
        '["a"]',
    ],
)
def test_replies_deepeval_cannot_read_raise(reply: str) -> None:
    with pytest.raises(DeepEvalReplyError):
        deepeval_weighted_score(reply, None)


# ------------------------------------------------------------------------------------------------------------
# re-derivation: the spec's rules, never the log's


def judged(min_prob: Any = 0.01, weighting: str = "deepeval") -> tuple[EvalSample, Score]:
    """A logged LF-Eval score (DeepEval's prompt, score 8 weighted to 8.2) as the scorer records it."""
    reply, logprobs = reply_of(score_reply(("8", {"8": 0.6, "9": 0.3, "7": 0.1})))
    record: dict[str, Any] = {
        "prompt_variant": "deepeval",
        "official": False,
        "weighting": weighting,
        "min_prob": min_prob,
        "scale": 10,
        "mode": "logprobs",
        "replies": [reply],
        **logprobs_record("deepeval", logprobs.content, reply),
    }
    value = derive(record, Rules("deepeval")).value
    sample = EvalSample(id="q1", epoch=1, input="q", target="t")
    return sample, Score(value={"lf_eval": value}, metadata=record)


def test_a_log_following_the_spec_rederives() -> None:
    sample, score = judged()
    assert score.value == {"lf_eval": pytest.approx(82.0)}
    assert rederive(sample, score, {"min_prob": 0.01, "prompt": "deepeval"}) == score.value


@pytest.mark.parametrize("min_prob", [0.5, math.nan, "0.01"])
def test_a_log_declaring_its_own_min_prob_is_refused(min_prob: Any) -> None:
    sample, score = judged(min_prob=min_prob)
    with pytest.raises(RederivationRefused, match=r"LF-Eval min_prob=.* in the score record"):
        rederive(sample, score, {})
    sample, score = judged()
    with pytest.raises(RederivationRefused, match=r"LF-Eval min_prob=.* in the scorer arguments"):
        rederive(sample, score, {"min_prob": min_prob})


def test_a_log_declaring_another_weighting_or_scale_is_refused() -> None:
    sample, score = judged(weighting="koblex")
    with pytest.raises(
        RederivationRefused, match="weighting='koblex' in the score record; the spec's rule is 'deepeval'"
    ):
        rederive(sample, score, {})
    sample, score = judged()
    forged = score.model_copy(update={"metadata": {**(score.metadata or {}), "scale": 100}})
    with pytest.raises(RederivationRefused, match="scale=100"):
        rederive(sample, forged, {})
