"""LF-Eval scorer: DeepEval's prompt and JSON reply (default) and the bare variant; the score read where the
prompt asks for it; the "koblex" weighting at the score token and DeepEval's end to end; one raw reply without
logprobs (sampled only on request); unscored cases; re-derivation from the log with the spec's rules.

Judges are scripted `mockllm` models; every output carries `usage` (otherwise mockllm downloads a tokenizer).
"""

import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    Model,
    ModelName,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    get_model,
)
from inspect_ai.scorer import Score, Target
from inspect_ai.solver import TaskState, generate

from koblex_tasks.scorers.koblex.lf_eval import (
    RederivationRefused,
    clean_token,
    lf_eval,
    parse_score,
    rederive,
)
from koblex_tasks.scorers.koblex.lf_eval_parse import json_score
from koblex_tasks.scorers.koblex.lf_eval_prompt import judge_prompt, render_prompt
from koblex_tasks.scorers.koblex.lf_eval_record import Rules, derive, logprobs_record, reply_pieces
from koblex_tasks.scorers.koblex.lf_eval_weights import Position, score_distribution
from koblex_tasks.scorers.metrics import metric_values

USAGE = ModelUsage(input_tokens=100, output_tokens=2, total_tokens=102)
FIXTURES = Path(__file__).parent / "fixtures"
JSON_BEFORE = ['{"', "score", '":', " "]
JSON_AFTER = [",", ' "', "reason", '":', ' "', "fine", '"}']


def position(sampled: str, alternatives: dict[str, float]) -> Logprob:
    """One generated token and its top alternatives (probabilities, turned into logprobs)."""
    return Logprob(
        token=sampled,
        logprob=math.log(alternatives[sampled]),
        top_logprobs=[TopLogprob(token=t, logprob=math.log(p)) for t, p in alternatives.items()],
    )


def sure(token: str) -> Logprob:
    return position(token, {token: 1.0})


def pos(sampled: str, alternatives: dict[str, float]) -> Position:
    return Position.of(position(sampled, alternatives))


def json_tokens(
    *score: Logprob, before: list[str] = JSON_BEFORE, after: list[str] = JSON_AFTER
) -> list[Logprob]:
    """A DeepEval JSON reply `{"score": <score>, "reason": "fine"}`, the score tokens as given."""
    return [*map(sure, before), *score, *map(sure, after)]


def logprob_output(*positions: Logprob) -> ModelOutput:
    text = "".join(p.token for p in positions).replace("Ġ", " ").replace("▁", " ")
    out = ModelOutput.from_content(model="judge", content=text)
    out.choices[0].logprobs = Logprobs(content=list(positions))
    out.usage = USAGE
    return out


def text_output(*replies: str) -> ModelOutput:
    out = ModelOutput(
        model="judge",
        choices=[
            ChatCompletionChoice(message=ChatMessageAssistant(content=r), stop_reason="stop") for r in replies
        ],
    )
    out.usage = USAGE
    return out


KOBLEX_RULES = Rules("koblex")


def logprobs_meta(variant: str, content: list[Logprob]) -> dict:
    """The judge record the scorer builds for a reply with logprobs."""
    reply = "".join(reply_pieces(content))
    record = logprobs_record(variant, content, reply)  # type: ignore[arg-type]
    return {"prompt_variant": variant, "mode": "logprobs", "replies": [reply]} | record


def derived(variant: str, *content: Logprob, rules: Rules = KOBLEX_RULES) -> float | None:
    return derive(logprobs_meta(variant, list(content)), rules).value


class ScriptedModel:
    """A mockllm whose reply is computed from the prompt and config; records every call."""

    def __init__(self, reply: Callable[[str, GenerateConfig], ModelOutput]) -> None:
        self.reply = reply
        self.calls: list[tuple[str, GenerateConfig]] = []
        self.model: Model = get_model("mockllm/model", custom_outputs=self._generate)

    def _generate(
        self, messages: list[ChatMessage], tools, tool_choice, config: GenerateConfig
    ) -> ModelOutput:
        prompt = messages[-1].text
        self.calls.append((prompt, config))
        return self.reply(prompt, config)


def answering_model(answer: str = "answer for {case}") -> ScriptedModel:
    """The model under test: answers `answer for <case>`."""

    def reply(prompt: str, config: GenerateConfig) -> ModelOutput:
        out = ModelOutput.from_content(model="solver", content=answer.format(case=case_of(prompt)))
        out.usage = USAGE
        return out

    return ScriptedModel(reply)


SAMPLES = [
    Sample(
        id=case,
        input=f"background of {case}\n\nQuestion: question of {case}?",
        target=f"reference answer {case}",
        metadata={
            "background": f"background of {case}",
            "question": f"question of {case}?",
            "gold_provisions": [f"provision one {case}", f"provision two {case}"],
            "hop_count": 2,
        },
    )
    for case in ("case-a", "case-b", "case-c")
]


def run(
    language: str = "en",
    judge: ScriptedModel | None = None,
    tmp_path=None,
    solver_model: ScriptedModel | None = None,
    dataset: list[Sample] = SAMPLES,
    **scorer_args: object,
) -> EvalLog:
    task = Task(
        dataset=MemoryDataset(list(dataset)), solver=generate(), scorer=lf_eval(language, **scorer_args)
    )
    solver_model = solver_model or answering_model()
    [log] = eval(
        task,
        model=solver_model.model,
        model_roles={"grader": judge.model} if judge is not None else None,
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    return log


def scores(log: EvalLog) -> dict[str, Score]:
    assert log.samples is not None
    return {str(s.id): s.scores["lf_eval"] for s in log.samples}


def case_of(prompt: str) -> str:
    match = re.search(r"case-[a-z]", prompt)
    assert match is not None, prompt
    return match.group(0)


# ------------------------------------------------------------------------------------------------------------
# reading the score where the prompt asks for it


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("8", 8),
        (" Score: 10/10", 10),
        ("<think>maybe 3</think>7", 7),
        ("Step 1: the answer cites article 2. Step 3: ... Final score: 8", 8),
        # the committed score, not a later mention of another
        ("Final score: 8. A score of 10 would require citing article 3.", 8),
        ("8. A score of 10 would require citing article 3.", 8),
        ("Score: 6. A score of 9 would need more. Final score: 7", 7),  # "final score" outranks "score:"
        ("Score: 6 (a score of 9 if it cited article 2)", 6),
        ("The answer is partly right; a score of 4 fits.", 4),
        ("최종 점수: 5. 10점이 되려면 조문이 필요하다.", 5),
        ("점수: 9", 9),
        ("-1", None),  # negative: out of range, not 1
        ("score -3 (no wait) 6", None),  # the score-introduced number is -3, not the 3 inside it
        ("11", None),
        ("7.5", None),
        ("I would give it 6", None),  # neither introduced by "score" nor where the prompt asks
        ("none", None),
    ],
)
def test_bare_reply(reply: str, expected: int | None) -> None:
    assert parse_score(reply, "bare") == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"score": 8, "reason": "ok"}', 8),
        (
            '{"reason": "cites {art. 2}, \\"score\\": 2", "score": 9}',
            9,
        ),  # score not first; "score" in the reason
        (
            '```json\n{\n  "score": 10,\n  "reason": "ok",\n}\n```',
            10,
        ),  # DeepEval trims fences, trailing comma
        ('{"score": 7', 7),  # DeepEval closes an unclosed object
        ('{"score": 8.0, "reason": "ok"}', 8),
        ('{"score": 3, "details": {"score": 9}, "score": 4}', 4),  # top level only; the last, like json.loads
        ('{"score": 11, "reason": "ok"}', None),
        ('{"score": -1, "reason": "ok"}', None),
        ('{"score": "8", "reason": "ok"}', None),
        ('{"score": true}', None),
        ('{"score": 7.5}', None),
        ('{"score": 8, "reason": "cut off', None),  # unparsable JSON
        ('{"score" 8}', None),
        ('{"reason": "no score"}', None),
        ("Score: 8", None),  # no JSON object
    ],
)
def test_json_reply(reply: str, expected: int | None) -> None:
    assert parse_score(reply, "deepeval") == expected


def test_json_score_offset_points_at_the_value() -> None:
    text = '<think>{"score": 1}</think>{"reason": "r", "score":  6}'
    span = json_score(text)
    assert span is not None and span.value == 6 and text[span.start] == "6"


# ------------------------------------------------------------------------------------------------------------
# weighting at the score token


def test_hand_built_distribution() -> None:
    dist = score_distribution(pos("8", {"8": 0.6, "9": 0.3, "7": 0.1}), None)
    assert dist is not None
    assert dist.probs == pytest.approx({8: 0.6, 9: 0.3, 7: 0.1})
    assert dist.expected == pytest.approx(8.2)  # 0.6*8 + 0.3*9 + 0.1*7
    assert dist.ten_rule == "none"


def test_alternatives_below_min_prob_are_dropped_and_renormalised() -> None:
    dist = score_distribution(pos("9", {"9": 0.5, "6": 0.495, "2": 0.005}), None, min_prob=0.01)
    assert dist is not None
    assert set(dist.probs) == {9, 6}
    assert dist.dropped == pytest.approx({2: 0.005})
    assert dist.expected == pytest.approx((9 * 0.5 + 6 * 0.495) / 0.995)


def test_token_cleaning_merges_variants_and_ignores_non_scores() -> None:
    assert clean_token("Ġ8") == clean_token("▁8") == clean_token(" 8\n") == "8"
    dist = score_distribution(pos("Ġ7", {"Ġ7": 0.5, "7": 0.2, "▁8": 0.2, "11": 0.05, "08": 0.05}), None)
    assert dist is not None
    assert dist.probs == pytest.approx({7: 0.7 / 0.9, 8: 0.2 / 0.9})
    assert dist.raw == pytest.approx({7: 0.7, 8: 0.2})


def test_minus_alternative_carries_no_score_mass() -> None:
    dist = score_distribution(pos("8", {"8": 0.6, "-": 0.3, "7": 0.1}), None)
    assert dist is not None
    assert dist.probs == pytest.approx({8: 0.6 / 0.7, 7: 0.1 / 0.7})


def test_prefix_and_suffix_of_the_sampled_token_are_stripped_from_alternatives() -> None:
    dist = score_distribution(pos(":8,", {":8,": 0.5, ":9,": 0.5}), None, prefix=":", suffix=",")
    assert dist is not None and dist.probs == pytest.approx({8: 0.5, 9: 0.5})


def test_split_ten_observed_from_the_next_position() -> None:
    # Digit-splitting tokenizer: "1" sampled, P("0" | "1") = 0.8 at the next position.
    dist = score_distribution(pos("1", {"1": 0.7, "9": 0.3}), pos("0", {"0": 0.8, ",": 0.2}))
    assert dist is not None
    assert dist.ten_rule == "observed"
    assert dist.probs == pytest.approx({1: 0.14, 9: 0.3, 10: 0.56})


def test_sampled_one_then_end_is_one() -> None:
    dist = score_distribution(pos("1", {"1": 0.9, "2": 0.1}), None)
    assert dist is not None and dist.ten_rule == "observed"
    assert dist.probs == pytest.approx({1: 0.9, 2: 0.1})
    ended = score_distribution(pos("1,", {"1,": 0.9, "2,": 0.1}), pos("0", {"0": 1.0}), suffix=",")
    assert ended is not None and ended.probs == pytest.approx({1: 0.9, 2: 0.1})  # "1," ended the number


def test_single_token_ten_means_one_is_one() -> None:
    dist = score_distribution(pos("9", {"9": 0.6, "10": 0.3, "1": 0.1}), None)
    assert dist is not None and dist.ten_rule == "multi_digit_vocab"
    assert dist.probs == pytest.approx({9: 0.6, 10: 0.3, 1: 0.1})


def test_ambiguous_one_goes_to_the_nearer_endpoint() -> None:
    high = score_distribution(pos("8", {"8": 0.6, "9": 0.3, "1": 0.1}), None)
    assert high is not None and high.ten_rule == "nearest_endpoint"
    assert high.probs == pytest.approx({8: 0.6, 9: 0.3, 10: 0.1})
    low = score_distribution(pos("2", {"2": 0.7, "3": 0.2, "1": 0.1}), None)
    assert low is not None and low.probs == pytest.approx({1: 0.1, 2: 0.7, 3: 0.2})


def test_no_valid_score_token_gives_none() -> None:
    assert score_distribution(pos("The", {"The": 0.9, "Score": 0.095, "5": 0.005}), None) is None


# ------------------------------------------------------------------------------------------------------------
# the record: the score token found inside the reply


def test_json_score_token_is_found_inside_the_reply() -> None:
    content = json_tokens(position("8", {"8": 0.6, "9": 0.3, "7": 0.1}))
    meta = logprobs_meta("deepeval", content)
    assert [p["index"] for p in meta["score_positions"]] == [4, 5]
    assert derive(meta, KOBLEX_RULES).value == pytest.approx(82.0)
    # score after the reason: still the score's token, not the reply's first
    late = [*map(sure, ['{"', "reason", '":', ' "', "7", ' items",', ' "', "score", '":', " "])]
    late_reply = [*late, position("6", {"6": 0.5, "5": 0.5}), sure("}")]
    assert derived("deepeval", *late_reply) == pytest.approx(55.0)
    # DeepEval instead weights the first token equal to "6", and the "7" in the reason is not it
    assert derived("deepeval", *late_reply, rules=Rules("deepeval")) == pytest.approx(55.0)
    late_six = [*late[:4], sure("6"), *late[5:], position("6", {"6": 0.5, "5": 0.5}), sure("}")]
    assert derived("deepeval", *late_six) == pytest.approx(55.0)
    assert derived("deepeval", *late_six, rules=Rules("deepeval")) == pytest.approx(60.0)


def test_json_split_ten_reads_the_next_position() -> None:
    content = json_tokens(position("1", {"1": 0.7, "9": 0.3}), position("0", {"0": 0.8, ",": 0.2}))
    assert derived("deepeval", *content) == pytest.approx(84.4)


def test_glued_space_token_before_the_score() -> None:
    content = json_tokens(position(" 8", {" 8": 0.5, " 9": 0.5}), before=['{"', "score", '":'])
    assert derived("deepeval", *content) == pytest.approx(85.0)


def test_sampled_minus_with_five_percent_on_one_is_unscored_not_one() -> None:
    bare = derive(logprobs_meta("bare", [position("-", {"-": 0.95, "1": 0.05}), sure("1")]), KOBLEX_RULES)
    assert bare.value is None and "-1" in bare.explanation
    in_json = json_tokens(position("-", {"-": 0.95, "1": 0.05}), sure("1"))
    assert derived("deepeval", *in_json) is None


def test_leading_whitespace_token_is_skipped_for_the_bare_prompt() -> None:
    assert derived("bare", position("Ġ", {"Ġ": 0.9, "\n": 0.1}), position("6", {"6": 0.75, "5": 0.25})) == (
        pytest.approx(57.5)
    )


def test_offsets_survive_hangul_split_across_tokens() -> None:
    """A syllable split over two byte tokens (as OpenAI reports Korean) shifts no offset after it."""
    raw = "법".encode()
    split = [
        Logprob(token="bytes:\\xeb", logprob=0.0, bytes=list(raw[:1])),
        Logprob(token="bytes:\\xb2\\x95", logprob=0.0, bytes=list(raw[1:])),
    ]
    content = [*map(sure, ['{"', "reason", '":', ' "']), *split, *map(sure, ['",', ' "', "score", '":', " "])]
    content += [position("9", {"9": 0.5, "8": 0.5}), sure("}")]
    assert "".join(reply_pieces(content)) == '{"reason": "법", "score": 9}'
    assert derived("deepeval", *content) == pytest.approx(85.0)


def test_missing_score_position_falls_back_to_the_reply_integer() -> None:
    meta = logprobs_meta("deepeval", json_tokens(sure("7")))
    meta["score_positions"] = []
    result = derive(meta, KOBLEX_RULES)
    assert result.value == 70.0 and result.details["weighted_by"] == "reply_integer"


# ------------------------------------------------------------------------------------------------------------
# the prompt


def test_deepeval_prompt_matches_deepeval_byte_for_byte() -> None:
    """The fixture is DeepEval 3.2.0's `GEvalTemplate.generate_evaluation_results` rendered for the paper's GEval.

    Source: confident-ai/deepeval `deepeval/metrics/g_eval/template.py` + `utils.py` as released on PyPI as
    deepeval==3.2.0 (the last checked release whose `default_gpt_model` is "gpt-4o"; 3.2.6 has "gpt-4.1"; the
    template is byte-identical from 3.2.0 to 3.2.9). The search index stores that file version but names no
    commit for it (it lists only f6c0dccfc84ebd411dbf0d152504deff78556844, an older template). The metric is
    daehuikim/KoBLEX@1863e1b5431d8824836331805661d8f8667c0bd7 `experiments/lf-eval/eval_pipeline.py`: five
    steps numbered by `number_evaluation_steps`, `construct_test_case_string` over INPUT, ACTUAL_OUTPUT,
    EXPECTED_OUTPUT, CONTEXT, input = background + question, context = the list of provision strings.
    """
    background, question = (
        "A는 B에게 운송물을 인도하였다. ",
        "운송물 인도 후 손해배상 청구는 언제 소멸하는가?",
    )
    answer = (
        "Answer: 1년 내에 재판상 청구가 없으면 소멸한다.\n   \n상법 제814조 제1항에 따른다. 비용은 $100이다."
    )
    context = [
        "상법 814조  운송인의 채권ㆍ채무의 소멸 1항①운송인의 송하인 또는 수하인에 대한 채권 및 채무는 1년 이내에 "
        "재판상 청구가 없으면 소멸한다.",
        "민법 766조 1항 'it's' \"quoted\"\nnext line",
    ]
    state = TaskState(
        model=ModelName("mockllm/model"),
        sample_id="q1",
        epoch=1,
        input="unused",
        messages=[],
        output=ModelOutput.from_content("m", answer),
        metadata={"background": background, "question": question, "gold_provisions": context},
    )
    rendered = render_prompt(
        "deepeval", judge_prompt("deepeval", "en"), state, Target("정답은 소멸한다."), False
    )
    expected = (FIXTURES / "lf_eval_v2_en_deepeval_3.2.0.txt").read_text(encoding="utf-8")
    assert rendered == expected


def test_korean_deepeval_prompt_has_the_english_structure() -> None:
    en = judge_prompt("deepeval", "en").text.split("\n")
    ko = judge_prompt("deepeval", "ko").text.split("\n")
    assert len(en) == len(ko)
    for e, k in zip(en, ko, strict=True):  # same indentation, blank lines, placeholders and JSON keys
        assert len(e) - len(e.lstrip(" ")) == len(k) - len(k.lstrip(" "))
        assert (e.startswith("$"), e.endswith(" "), '"score"' in e, '"reason"' in e) == (
            k.startswith("$"),
            k.endswith(" "),
            '"score"' in k,
            '"reason"' in k,
        )
    assert ko[-1] == "" and ko[-2].strip() == "JSON:"


# ------------------------------------------------------------------------------------------------------------
# end to end through inspect_ai.eval


def test_deepeval_logprobs_end_to_end_and_rederive(tmp_path) -> None:
    distributions = {
        "case-a": json_tokens(position("8", {"8": 0.6, "9": 0.3, "7": 0.1})),
        "case-b": json_tokens(position("9", {"9": 0.5, "6": 0.495, "2": 0.005})),
        "case-c": json_tokens(position("1", {"1": 0.7, "9": 0.3}), position("0", {"0": 0.8, ",": 0.2})),
    }
    judge = ScriptedModel(lambda prompt, config: logprob_output(*distributions[case_of(prompt)]))
    solver_model = answering_model()
    log = run(judge=judge, tmp_path=tmp_path, solver_model=solver_model)
    log = read_eval_log(log.location)  # everything below is read back from the log file

    got = scores(log)
    assert got["case-a"].value["lf_eval"] == pytest.approx(82.0)
    assert got["case-b"].value["lf_eval"] == pytest.approx(10 * (9 * 0.5 + 6 * 0.495) / 0.995)
    # "10" as "1" "0": no token equals "10", so DeepEval (and the paper) took the raw score
    assert got["case-c"].value["lf_eval"] == pytest.approx(100.0)
    assert got["case-c"].metadata["deepeval_path"] == "raw_fallback"
    meta = got["case-a"].metadata
    assert meta["mode"] == "logprobs" and meta["prompt_variant"] == "deepeval"
    assert meta["weighting"] == "deepeval" and meta["min_prob"] == 0.01 and meta["scale"] == 10
    assert meta["deepeval_path"] == "weighted" and meta["deepeval_token_index"] == 4
    assert meta["prompt"]["name"] == "koblex/lf_eval" and meta["prompt"]["version"] == "v2.en"
    assert len(meta["prompt"]["sha256"]) == 64
    assert meta["judge_model"] == "mockllm/model" and meta["judge_config"]["role"] == "grader"
    assert meta["judge_usage"]["total_tokens"] == 102
    assert meta["replies"] == ['{"score": 8, "reason": "fine"}']
    assert meta["score_positions"][0]["token"] == "8" and len(meta["score_positions"][0]["top_logprobs"]) == 3
    assert meta["tokens"] == ['{"', "score", '":', " ", "8", *JSON_AFTER]

    # one greedy judge call per item with top 20 logprobs and room for the JSON reply
    assert len(judge.calls) == 3
    for prompt, config in judge.calls:
        assert config.logprobs is True and config.top_logprobs == 20
        assert config.temperature == 0 and config.max_tokens == 1024
        assert prompt.endswith("JSON:\n") and "Evaluation Steps:" in prompt
    prompt_a = next(p for p, _ in judge.calls if "case-a" in p)
    assert "Input:\nbackground of case-aquestion of case-a? \n\n" in prompt_a  # no separator
    assert "Context:\n['provision one case-a', 'provision two case-a'] \n\n" in prompt_a
    assert "Actual Output:\nanswer for case-a \n\n" in prompt_a
    assert "Expected Output:\nreference answer case-a \n\n" in prompt_a
    assert "criteria" not in prompt_a.lower() and "$" not in prompt_a
    assert all("JSON:" not in p for p, _ in solver_model.calls)

    metrics = {(s.name, name): v for s in log.results.scores for name, v in metric_values(s).items()}
    assert metrics[("lf_eval", "mean")] == pytest.approx(sum(s.value["lf_eval"] for s in got.values()) / 3)

    # re-derived from the logged metadata alone: equal, and a tampered value or record is caught
    for sample in log.samples:
        score = sample.scores["lf_eval"]
        assert rederive(sample, score, {}) == {"lf_eval": score.value["lf_eval"]}
    sample = log.samples[0]
    score = sample.scores["lf_eval"]
    tampered = score.model_copy(update={"value": {"lf_eval": 100.0}})
    assert rederive(sample, tampered, {})["lf_eval"] != tampered.value["lf_eval"]
    record = json.loads(json.dumps(score.metadata))
    record["score_positions"][0]["top_logprobs"] = [["8", math.log(0.5)], ["9", math.log(0.5)]]
    assert rederive(sample, score.model_copy(update={"metadata": record}), {}) == {"lf_eval": 85.0}
    with pytest.raises(RederivationRefused, match="prompt"):
        rederive(sample, score, {"judge_prompt": "bare"})
    with pytest.raises(RederivationRefused, match="official"):
        rederive(sample, score, {"official": True})
    assert rederive(sample, Score(value=50.0), {}) == {"lf_eval": None}


def test_bare_prompt_logprobs_end_to_end(tmp_path) -> None:
    judge = ScriptedModel(
        lambda prompt, config: logprob_output(position("8", {"8": 0.6, "9": 0.3, "7": 0.1}))
    )
    got = scores(run(judge=judge, tmp_path=tmp_path, prompt="bare"))
    assert all(s.value["lf_eval"] == pytest.approx(82.0) for s in got.values())
    assert next(iter(got.values())).metadata["prompt"]["version"] == "v1.en"
    prompt, config = judge.calls[0]
    assert prompt.rstrip().endswith("Score:") and config.max_tokens == 3
    assert "background of case-a\nquestion of case-a?" in prompt or "background of case-b\n" in prompt


@pytest.mark.parametrize(
    ("variant", "version", "marker"), [("deepeval", "v2.ko", "JSON:"), ("bare", "v1.ko", "점수:")]
)
def test_korean_prompts(tmp_path, variant: str, version: str, marker: str) -> None:
    reply = json_tokens(sure("7")) if variant == "deepeval" else [sure("7")]
    judge = ScriptedModel(lambda prompt, config: logprob_output(*reply))
    got = scores(run("ko", judge=judge, tmp_path=tmp_path, prompt=variant))
    assert all(s.value["lf_eval"] == pytest.approx(70.0) for s in got.values())
    assert all(p.rstrip().endswith(marker) and "평가 단계" in p for p, _ in judge.calls)
    assert next(iter(got.values())).metadata["prompt"]["version"] == version


def test_official_cuts_the_answer_to_800_characters(tmp_path) -> None:
    long_answer = "<think>plan</think>" + "가" * 900 + "TAIL {case}"
    for official, cut in ((True, True), (False, False)):
        judge = ScriptedModel(lambda prompt, config: logprob_output(*json_tokens(sure("5"))))
        got = scores(
            run(judge=judge, tmp_path=tmp_path, solver_model=answering_model(long_answer), official=official)
        )
        prompt = judge.calls[0][0]
        answer = prompt.split("Actual Output:\n", 1)[1].split(" \n\nExpected Output:", 1)[0]
        if cut:  # the raw answer's first 800 characters, like the paper's script
            assert answer == ("<think>plan</think>" + "가" * 900)[:800]
        else:  # the whole answer, its reasoning block removed
            assert answer.startswith("가") and answer.endswith("TAIL " + case_of(prompt))
        assert all(s.metadata["official"] is official for s in got.values())


def js(score: object) -> str:
    return json.dumps({"score": score, "reason": "r"})


def test_no_logprobs_is_one_call_and_its_raw_score(tmp_path) -> None:
    """DeepEval's judge without logprobs: the one reply's score, no resampling."""
    replies = {"case-a": js(7), "case-b": '```json\n{"reason": "r", "score": 9}\n```', "case-c": js(11)}
    judge = ScriptedModel(lambda prompt, config: text_output(replies[case_of(prompt)]))
    log = read_eval_log(run(judge=judge, tmp_path=tmp_path).location)
    got = scores(log)
    assert got["case-a"].value["lf_eval"] == pytest.approx(70.0)
    assert got["case-b"].value["lf_eval"] == pytest.approx(90.0)
    assert math.isnan(got["case-c"].value) and got["case-c"].reason == "judge_unparsable"
    assert got["case-c"].metadata["deepeval_score"] == pytest.approx(1.1)  # what DeepEval would have said
    assert len(judge.calls) == 3 and all(c.logprobs for _, c in judge.calls)
    meta = got["case-a"].metadata
    assert meta["mode"] == "raw" and meta["judge_calls"] == 1 and meta["deepeval_path"] == "raw_fallback"
    for sample in log.samples:
        assert rederive(sample, sample.scores["lf_eval"], {}) == {
            "lf_eval": sample.scores["lf_eval"].value["lf_eval"] if sample.id != "case-c" else None
        }


def test_no_logprobs_sampling_is_a_named_non_paper_option(tmp_path) -> None:
    replies = {
        "case-a": [js(7), js(8), '```json\n{"reason": "r", "score": 9}\n```', js(8), "n/a"],
        "case-b": [js(3), js(-3), js(11), "{broken", js(3)],
        "case-c": [js(10)] * 5,
    }
    counters: dict[str, int] = {}

    def reply(prompt: str, config: GenerateConfig) -> ModelOutput:
        case = case_of(prompt)
        if config.logprobs:  # the provider ignores the logprobs request
            return text_output(js(8))
        i = counters.get(case, 0)
        counters[case] = i + 1
        return text_output(replies[case][i])

    judge = ScriptedModel(reply)
    log = read_eval_log(run(judge=judge, tmp_path=tmp_path, samples=5).location)
    got = scores(log)
    assert got["case-a"].value["lf_eval"] == pytest.approx(80.0)  # mean of 7, 8, 9, 8 ("n/a" is skipped)
    assert got["case-b"].value["lf_eval"] == pytest.approx(30.0)  # -3, 11 and broken JSON are no scores
    assert got["case-c"].value["lf_eval"] == pytest.approx(100.0)
    meta = got["case-a"].metadata
    assert meta["mode"] == "sampled" and meta["sampled_scores"] == [7, 8, 9, 8, None]
    assert meta["replies"] == replies["case-a"]
    assert got["case-b"].metadata["sampled_scores"] == [3, None, None, None, 3]
    assert meta["judge_calls"] == 6
    # per item: 1 logprobs call + 5 sampled calls (mockllm ignores num_choices, so it is topped up)
    assert len(judge.calls) == 3 * 6
    sampled = [c for _, c in judge.calls if not c.logprobs]
    assert all(c.temperature == 1.0 and c.max_tokens == 1024 for c in sampled)
    assert sum(1 for c in sampled if c.num_choices == 5) == 3
    for sample in log.samples:  # not the paper's protocol: the leaderboard refuses it
        with pytest.raises(RederivationRefused, match="sampled"):
            rederive(sample, sample.scores["lf_eval"], {})


def test_bare_sampling_reads_the_committed_score(tmp_path) -> None:
    replies = [
        "Step 1: fine. Final score: 8. A score of 10 would need more",
        "-1",
        "score -3 (no wait) 6",
        "6",
        "Score: 10",
    ]

    def reply(prompt: str, config: GenerateConfig) -> ModelOutput:
        if config.logprobs:
            return text_output("5")
        return text_output(*replies[: config.num_choices or 1])

    judge = ScriptedModel(reply)
    got = scores(run(judge=judge, tmp_path=tmp_path, samples=5, prompt="bare"))
    assert all(s.value["lf_eval"] == pytest.approx(80.0) for s in got.values())  # mean of 8, 6, 10
    assert next(iter(got.values())).metadata["sampled_scores"] == [8, None, None, 6, 10]
    assert len(judge.calls) == 3 * 2  # num_choices honoured: one sampled request per item
    assert all(c.max_tokens == 16 for _, c in judge.calls if not c.logprobs)


def test_unparsable_reply_is_unscored_not_zero(tmp_path) -> None:
    def reply(prompt: str, config: GenerateConfig) -> ModelOutput:
        case = case_of(prompt)
        if case == "case-a":  # logprobs, score out of range
            return logprob_output(*json_tokens(position("11", {"11": 0.9, "10": 0.1})))
        if case == "case-b":  # no logprobs and every sample is prose
            return text_output("I cannot grade this.")
        return logprob_output(*json_tokens(sure("6")))

    log = run(judge=ScriptedModel(reply), tmp_path=tmp_path)
    got = scores(log)
    for case in ("case-a", "case-b"):
        assert math.isnan(got[case].value)
        assert got[case].reason == "judge_unparsable"
    assert "11" in got["case-a"].explanation and got["case-a"].metadata["mode"] == "logprobs"
    assert got["case-b"].metadata["mode"] == "raw"
    assert got["case-c"].value["lf_eval"] == pytest.approx(60.0)
    [lf] = [s for s in log.results.scores if s.name == "lf_eval"]
    assert lf.metrics["mean"].value == pytest.approx(60.0)
    assert (lf.scored_samples, lf.unscored_samples) == (1, 2)


def test_missing_provisions_are_unscored_before_any_judge_call(tmp_path) -> None:
    bare_sample = Sample(id="case-x", input="question of case-x?", target="t", metadata={})
    judge = ScriptedModel(lambda prompt, config: logprob_output(*json_tokens(sure("6"))))
    got = scores(run(judge=judge, tmp_path=tmp_path, dataset=[bare_sample]))
    assert math.isnan(got["case-x"].value) and got["case-x"].reason == "no_context"
    assert judge.calls == []


def test_no_grader_is_unscored_and_never_judges_with_the_model_under_test(tmp_path) -> None:
    solver_model = answering_model()
    log = run(judge=None, tmp_path=tmp_path, solver_model=solver_model)
    got = scores(log)
    assert set(got) == {"case-a", "case-b", "case-c"}
    for s in got.values():
        assert math.isnan(s.value) and s.reason == "no_grader"
        assert s.metadata["prompt_variant"] == "deepeval"
    # the model under test answered each sample once and was never asked to judge
    assert len(solver_model.calls) == 3
    assert all("JSON:" not in p and not c.logprobs for p, c in solver_model.calls)


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="language"):
        lf_eval(language="fr")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="samples"):
        lf_eval(samples=0)
    with pytest.raises(ValueError, match="prompt must be one of deepeval, bare"):
        lf_eval(prompt="geval")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_prob"):
        lf_eval(min_prob=1.5)
    with pytest.raises(ValueError, match="min_prob"):
        lf_eval(min_prob=math.nan)
    with pytest.raises(ValueError, match=r"DeepEval's weighting cuts alternatives at 0\.01"):
        lf_eval(min_prob=0.05)
    with pytest.raises(ValueError, match="use it with prompt='deepeval'"):
        lf_eval(prompt="bare", weighting="deepeval")
    with pytest.raises(ValueError, match="weighting must be"):
        lf_eval(weighting="geval")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------------------
# the shared judged log (tests/conftest.py)


def test_judged_log_rederives(judged_log: str) -> None:
    log = read_eval_log(judged_log)
    assert log.samples is not None
    values = {}
    for sample in log.samples:
        score = sample.scores["lf_eval"]
        assert score.metadata["prompt"]["version"] == "v2.en" and score.metadata["mode"] == "logprobs"
        assert rederive(sample, score, log.eval.task_args) == {"lf_eval": score.value["lf_eval"]}
        values[sample.id] = score.value["lf_eval"]
        forged = score.model_copy(update={"value": {"lf_eval": score.value["lf_eval"] + 10}})
        assert rederive(sample, forged, log.eval.task_args) != forged.value
    assert values == {"q1": 90.0, "q2": 30.0}
