"""LF-Eval scorer: expected score from logprobs, the "10" split, sampled fallback, unscored cases, no grader.

Judges are scripted `mockllm` models; every output carries `usage` (otherwise mockllm downloads a tokenizer).
"""

import math
from collections.abc import Callable

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    Model,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    get_model,
)
from inspect_ai.solver import generate

from koblex_tasks.scorers.koblex.lf_eval import clean_token, lf_eval, parse_score, score_distribution
from koblex_tasks.scorers.metrics import metric_values

USAGE = ModelUsage(input_tokens=100, output_tokens=2, total_tokens=102)


def position(sampled: str, alternatives: dict[str, float]) -> Logprob:
    """One generated token and its top alternatives (probabilities, turned into logprobs)."""
    return Logprob(
        token=sampled,
        logprob=math.log(alternatives[sampled]),
        top_logprobs=[TopLogprob(token=t, logprob=math.log(p)) for t, p in alternatives.items()],
    )


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


def answering_model() -> ScriptedModel:
    """The model under test: answers `answer for <case>`."""

    def reply(prompt: str, config: GenerateConfig) -> ModelOutput:
        case = next(w for w in prompt.split() if w.startswith("case-"))
        out = ModelOutput.from_content(model="solver", content=f"answer for {case}")
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
    **scorer_args: int,
) -> EvalLog:
    task = Task(
        dataset=MemoryDataset(list(SAMPLES)), solver=generate(), scorer=lf_eval(language, **scorer_args)
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


def scores(log: EvalLog) -> dict[str, object]:
    assert log.samples is not None
    return {s.id: s.scores["lf_eval"] for s in log.samples}


def case_of(prompt: str) -> str:
    return next(w for w in prompt.split() if w.startswith("case-"))


# ------------------------------------------------------------------------------------------------------------
# pure functions


def test_hand_built_distribution() -> None:
    dist = score_distribution([position("8", {"8": 0.6, "9": 0.3, "7": 0.1})])
    assert dist is not None
    assert dist.probs == pytest.approx({8: 0.6, 9: 0.3, 7: 0.1})
    assert dist.expected == pytest.approx(8.2)  # 0.6*8 + 0.3*9 + 0.1*7
    assert dist.ten_rule == "none"


def test_alternatives_below_min_prob_are_dropped_and_renormalised() -> None:
    dist = score_distribution([position("9", {"9": 0.5, "6": 0.495, "2": 0.005})], min_prob=0.01)
    assert dist is not None
    assert set(dist.probs) == {9, 6}
    assert dist.dropped == pytest.approx({2: 0.005})
    assert sum(dist.probs.values()) == pytest.approx(1.0)
    assert dist.expected == pytest.approx((9 * 0.5 + 6 * 0.495) / 0.995)


def test_token_cleaning_merges_variants_and_ignores_non_scores() -> None:
    assert clean_token("Ġ8") == clean_token("▁8") == clean_token(" 8\n") == "8"
    dist = score_distribution([position("Ġ7", {"Ġ7": 0.5, "7": 0.2, "▁8": 0.2, "11": 0.05, "08": 0.05})])
    assert dist is not None
    assert dist.probs == pytest.approx({7: 0.7 / 0.9, 8: 0.2 / 0.9})
    # "11" is a multi-digit token (so the vocabulary has one) but no score; "08" is not a score either
    assert dist.raw == pytest.approx({7: 0.7, 8: 0.2})


def test_leading_whitespace_token_is_skipped() -> None:
    dist = score_distribution([position("Ġ", {"Ġ": 0.9, "\n": 0.1}), position("6", {"6": 0.75, "5": 0.25})])
    assert dist is not None
    assert dist.expected == pytest.approx(5.75)


def test_split_ten_observed_from_the_next_position() -> None:
    # Digit-splitting tokenizer: "1" sampled, P("0" | "1") = 0.8 at the next position.
    content = [position("1", {"1": 0.7, "9": 0.3}), position("0", {"0": 0.8, "\n": 0.2})]
    dist = score_distribution(content)
    assert dist is not None
    assert dist.ten_rule == "observed"
    assert dist.probs == pytest.approx({1: 0.14, 9: 0.3, 10: 0.56})
    assert dist.expected == pytest.approx(0.14 + 2.7 + 5.6)


def test_sampled_one_then_end_is_one() -> None:
    dist = score_distribution([position("1", {"1": 0.9, "2": 0.1})])
    assert dist is not None
    assert dist.ten_rule == "observed"
    assert dist.probs == pytest.approx({1: 0.9, 2: 0.1})


def test_single_token_ten_means_one_is_one() -> None:
    dist = score_distribution([position("9", {"9": 0.6, "10": 0.3, "1": 0.1})])
    assert dist is not None
    assert dist.ten_rule == "multi_digit_vocab"
    assert dist.probs == pytest.approx({9: 0.6, 10: 0.3, 1: 0.1})


def test_ambiguous_one_goes_to_the_nearer_endpoint() -> None:
    high = score_distribution([position("8", {"8": 0.6, "9": 0.3, "1": 0.1})])
    assert high is not None and high.ten_rule == "nearest_endpoint"
    assert high.probs == pytest.approx({8: 0.6, 9: 0.3, 10: 0.1})
    low = score_distribution([position("2", {"2": 0.7, "3": 0.2, "1": 0.1})])
    assert low is not None and low.ten_rule == "nearest_endpoint"
    assert low.probs == pytest.approx({1: 0.1, 2: 0.7, 3: 0.2})


def test_no_valid_score_token_gives_none() -> None:
    assert score_distribution([position("The", {"The": 0.9, "Score": 0.095, "5": 0.005})]) is None
    assert score_distribution([position("\n", {"\n": 1.0})]) is None


def test_parse_sampled_reply() -> None:
    assert parse_score("8") == 8
    assert parse_score(" Score: 10/10") == 10
    assert parse_score("<think>maybe 3</think>7") == 7
    assert parse_score("11") is None
    assert parse_score("none") is None


# ------------------------------------------------------------------------------------------------------------
# end to end through inspect_ai.eval


def test_logprobs_mode_end_to_end(tmp_path) -> None:
    distributions = {
        "case-a": [position("8", {"8": 0.6, "9": 0.3, "7": 0.1})],
        "case-b": [position("9", {"9": 0.5, "6": 0.495, "2": 0.005})],
        "case-c": [position("1", {"1": 0.7, "9": 0.3}), position("0", {"0": 0.8, "\n": 0.2})],
    }
    judge = ScriptedModel(lambda prompt, config: logprob_output(*distributions[case_of(prompt)]))
    solver_model = answering_model()
    log = run(judge=judge, tmp_path=tmp_path, solver_model=solver_model)

    got = scores(log)
    assert got["case-a"].value["lf_eval"] == pytest.approx(82.0)
    assert got["case-b"].value["lf_eval"] == pytest.approx(10 * (9 * 0.5 + 6 * 0.495) / 0.995)
    assert got["case-c"].value["lf_eval"] == pytest.approx(84.4)
    meta = got["case-a"].metadata
    assert meta["mode"] == "logprobs"
    assert {int(k): v for k, v in meta["distribution"].items()} == pytest.approx({7: 0.1, 8: 0.6, 9: 0.3})
    assert meta["prompt"]["name"] == "koblex/lf_eval" and meta["prompt"]["version"] == "v1.en"
    assert len(meta["prompt"]["sha256"]) == 64
    assert meta["judge_model"] == "mockllm/model"
    assert meta["judge_usage"]["total_tokens"] == 102
    # score metadata keys may come back as str from the log
    dropped = {int(k): v for k, v in got["case-b"].metadata["dropped"].items()}
    assert dropped == pytest.approx({2: 0.005})
    assert got["case-c"].metadata["ten_rule"] == "observed"

    # one judge call per item, greedy, with logprobs
    assert len(judge.calls) == 3
    for prompt, config in judge.calls:
        assert config.logprobs is True and config.top_logprobs == 20
        assert config.temperature == 0 and config.max_tokens is not None and config.max_tokens <= 3
        assert prompt.rstrip().endswith("Score:")
    prompt_a = next(p for p, _ in judge.calls if "case-a" in p)
    assert "background of case-a\nquestion of case-a?" in prompt_a
    assert "provision one case-a\nprovision two case-a" in prompt_a
    assert "reference answer case-a" in prompt_a and "answer for case-a" in prompt_a
    assert "$" not in prompt_a
    # the judge never answered for the solver, the solver never judged
    assert all("Score:" not in p for p, _ in solver_model.calls)

    metrics = {(s.name, name): v for s in log.results.scores for name, v in metric_values(s).items()}
    assert metrics[("lf_eval", "mean")] == pytest.approx(
        (got["case-a"].value["lf_eval"] + got["case-b"].value["lf_eval"] + got["case-c"].value["lf_eval"]) / 3
    )
    assert next(s for s in log.results.scores if s.name == "lf_eval").scored_samples == 3


def test_korean_prompt(tmp_path) -> None:
    judge = ScriptedModel(lambda prompt, config: logprob_output(position("7", {"7": 1.0})))
    log = run("ko", judge=judge, tmp_path=tmp_path)
    assert all(s.value["lf_eval"] == pytest.approx(70.0) for s in scores(log).values())
    assert all(p.rstrip().endswith("점수:") and "평가 단계" in p for p, _ in judge.calls)
    assert next(iter(scores(log).values())).metadata["prompt"]["version"] == "v1.ko"


def test_no_logprobs_falls_back_to_sampling(tmp_path) -> None:
    replies = {"case-a": ["7", "8", "Score: 9", "8", "n/a"], "case-b": ["3"] * 5, "case-c": ["10"] * 5}
    counters: dict[str, int] = {}

    def reply(prompt: str, config: GenerateConfig) -> ModelOutput:
        case = case_of(prompt)
        if config.logprobs:  # the provider ignores the logprobs request
            return text_output("8")
        i = counters.get(case, 0)
        counters[case] = i + 1
        return text_output(replies[case][i])

    judge = ScriptedModel(reply)
    got = scores(run(judge=judge, tmp_path=tmp_path, samples=5))
    assert got["case-a"].value["lf_eval"] == pytest.approx(80.0)  # mean of 7, 8, 9, 8 ("n/a" is skipped)
    assert got["case-b"].value["lf_eval"] == pytest.approx(30.0)
    assert got["case-c"].value["lf_eval"] == pytest.approx(100.0)
    meta = got["case-a"].metadata
    assert meta["mode"] == "sampled"
    assert meta["sampled_scores"] == [7, 8, 9, 8, None]
    assert meta["judge_calls"] == 6
    # per item: 1 logprobs call + 5 sampled calls (mockllm ignores num_choices, so it is topped up)
    assert len(judge.calls) == 3 * 6
    sampled = [c for _, c in judge.calls if not c.logprobs]
    assert all(c.temperature == 1.0 for c in sampled)
    assert sum(1 for c in sampled if c.num_choices == 5) == 3


def test_sampling_uses_num_choices_when_honoured(tmp_path) -> None:
    def reply(prompt: str, config: GenerateConfig) -> ModelOutput:
        if config.logprobs:
            return text_output("5")
        return text_output(*["6", "6", "7", "7", "9"][: config.num_choices or 1])

    judge = ScriptedModel(reply)
    got = scores(run(judge=judge, tmp_path=tmp_path, samples=5))
    assert all(s.value["lf_eval"] == pytest.approx(70.0) for s in got.values())
    assert len(judge.calls) == 3 * 2


def test_unparsable_reply_is_unscored_not_zero(tmp_path) -> None:
    def reply(prompt: str, config: GenerateConfig) -> ModelOutput:
        case = case_of(prompt)
        if case == "case-a":  # logprobs, but no score token
            return logprob_output(position("The", {"The": 0.9, "I": 0.1}))
        if case == "case-b":  # no logprobs and every sample is prose
            return text_output("I cannot grade this.")
        return logprob_output(position("6", {"6": 1.0}))

    log = run(judge=ScriptedModel(reply), tmp_path=tmp_path)
    got = scores(log)
    for case in ("case-a", "case-b"):
        assert math.isnan(got[case].value)
        assert got[case].reason == "judge_unparsable"
    assert got["case-a"].metadata["mode"] == "logprobs"
    assert got["case-b"].metadata["mode"] == "sampled"
    assert got["case-c"].value["lf_eval"] == pytest.approx(60.0)
    [lf] = [s for s in log.results.scores if s.name == "lf_eval"]
    assert lf.metrics["mean"].value == pytest.approx(60.0)
    assert lf.scored_samples == 1
    assert lf.unscored_samples == 2


def test_no_grader_is_unscored_and_never_judges_with_the_model_under_test(tmp_path) -> None:
    solver_model = answering_model()
    log = run(judge=None, tmp_path=tmp_path, solver_model=solver_model)
    got = scores(log)
    assert set(got) == {"case-a", "case-b", "case-c"}
    for s in got.values():
        assert math.isnan(s.value)
        assert s.reason == "no_grader"
    [lf] = [s for s in log.results.scores if s.name == "lf_eval"]
    assert lf.unscored_samples == 3
    # the model under test answered each sample once and was never asked to judge
    assert len(solver_model.calls) == 3
    assert all("Score:" not in p and not c.logprobs for p, c in solver_model.calls)


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="language"):
        lf_eval(language="fr")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="samples"):
        lf_eval(samples=0)
