"""Self-Ask, IRCoT, FLARE, ProbTree and BeamAggr end to end on the tiny corpus with a scripted model."""

import math
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelOutput,
    TopLogprob,
    get_model,
)

from koblex_tasks.conformance.run import FLARE_SCRIPT, IRCOT_SCRIPT  # the released scripts' behaviours
from koblex_tasks.providers.koblexmock import usage_for
from koblex_tasks.solvers.koblex.beamaggr import beamaggr
from koblex_tasks.solvers.koblex.flare import flare
from koblex_tasks.solvers.koblex.ircot import ircot
from koblex_tasks.solvers.koblex.probtree import probtree
from koblex_tasks.solvers.koblex.self_ask import self_ask
from tests.conftest import TINY_STATUTES, statute_key
from tests.solvers.koblex.scripted import answer_of, evidence_of, run_koblex, sample

CARRIER, ROBBERY, QUASI = (statute_key(TINY_STATUTES[i]) for i in (1, 2, 3))
Q2 = "배경 사실이다.강도가 상해를 입히면 어떤 처벌을 받는가?"  # background + question, as the scripts join them
Tokens = list[tuple[str, float]]
Reply = str | Tokens


class Call:
    def __init__(self, messages: list[ChatMessage], config: GenerateConfig) -> None:
        self.system = messages[0].text if len(messages) > 1 else ""
        self.user = messages[-1].text
        self.config = config

    @property
    def question(self) -> str:
        """The question of the query part of a prompt (the text after the last "Question: ")."""
        return self.user.rsplit("Question: ", 1)[-1].split("\n")[0].strip()


class Scripted:
    """Replies from `reply(call)`: a string, or (token, logprob) pairs that become the text and its logprobs."""

    def __init__(self, reply: Callable[[Call], Reply], logprobs: bool = True) -> None:
        self.reply, self.logprobs = reply, logprobs
        self.calls: list[Call] = []

    def __call__(self, messages, tools, tool_choice, config: GenerateConfig) -> ModelOutput:
        call = Call(messages, config)
        self.calls.append(call)
        reply = self.reply(call)
        tokens = [(reply, -0.05)] if isinstance(reply, str) else reply
        text = "".join(t for t, _ in tokens)
        out = ModelOutput.from_content(model="scripted", content=text)
        if self.logprobs and config.logprobs:
            out.choices[0].logprobs = Logprobs(
                content=[
                    Logprob(token=t, logprob=lp, top_logprobs=[TopLogprob(token=t, logprob=lp)])
                    for t, lp in tokens
                ]
            )
        out.usage = usage_for(call.user, text)
        return out

    def where(self, predicate: Callable[[Call], bool]) -> list[Call]:
        return [c for c in self.calls if predicate(c)]


def run(
    solver, model: Scripted, questions: Path, corpus: Path, chat_format: str = "user", **task_args
) -> EvalLog:
    """The OpenAI scripts' flow by default (`chat_format=user`); "system_user" runs the vLLM scripts'."""
    # kiwi morphemes and exact float64 BM25 order: the scripted replies below were written against these
    # rankings of the tiny corpus (bm25s' order pads a short list with zero-score rows)
    task_args.setdefault("bm25_order", "float64")
    model_ = get_model("mockllm/model", custom_outputs=model)
    return run_koblex(
        solver, model_, questions, corpus, tokenizer="kiwi", chat_format=chat_format, **task_args
    )


def ok(log: EvalLog) -> EvalLog:
    assert log.status == "success", log.error
    return log


# --- Self-Ask --------------------------------------------------------------------------------------------

FOLLOW_1 = "강도가 사람을 상해하면 어떤 처벌을 받는가?"
FOLLOW_2 = "절도가 재물의 탈환에 항거하여 폭행하면?"


def self_ask_reply(call: Call) -> str:
    if call.user.startswith("Answer the question in one sentence"):
        return "무기 또는 7년 이상의 징역에 처한다. 덧붙임"
    if call.user.endswith("So the final answer is:"):
        return " 강제된 결론"
    if "강도가 상해를" not in call.user:
        return "No.\nSo the final answer is: 1년."
    done = call.user.count("Intermediate answer:")
    return [
        f"Yes.\nFollow up: {FOLLOW_1}",
        f"Follow up: {FOLLOW_2}",
        "So the final answer is: 무기 또는 7년 이상의 징역.",
    ][min(done, 2)]


def test_self_ask_follow_ups_retrieve_and_answer(tiny_questions: Path, tiny_corpus: Path) -> None:
    model = Scripted(self_ask_reply)
    log = ok(run(self_ask(retrieve_every_follow_up=True), model, tiny_questions, tiny_corpus))
    s = sample(log, "q2")
    ev = evidence_of(s)
    assert ev["method"] == "self_ask" and ev["queries"] == [FOLLOW_1, FOLLOW_2]
    assert ev["retrieved"] == [[ROBBERY], [QUASI]] and ev["predicted"] == [ROBBERY, QUASI]
    assert answer_of(s) == "무기 또는 7년 이상의 징역"
    steps = s.metadata["self_ask_trace"]
    assert [st["follow_up"] for st in steps] == [FOLLOW_1, FOLLOW_2]
    assert steps[0]["intermediate_answer"] == "무기 또는 7년 이상의 징역에 처한다"  # cut at the first "."
    main_calls = model.where(lambda c: "self-ask" in c.system and c.user.startswith("Question: 배경"))
    assert all(c.config.stop_seqs == ["\nIntermediate answer:"] for c in main_calls)
    # selfask_openai.py: the task's 0.01, 2000 tokens, no seed (IRCoT/FLARE reasoning calls use 0.0)
    assert all(c.config.temperature == 0.01 and c.config.max_tokens == 2000 for c in model.calls)
    assert all(c.config.seed is None for c in model.calls)
    second = next(c for c in main_calls if "강도가 상해를" in c.user and "Intermediate answer:" in c.user)
    # the traces' join: the answer ended with ".", the next reply right after it
    assert second.user.endswith(
        "Follow up: " + FOLLOW_1 + "\nIntermediate answer: 무기 또는 7년 이상의 징역에 처한다."
    )
    q1 = evidence_of(sample(log, "q1"))
    assert q1["queries"] == [] and q1["predicted"] == [] and not q1.get("counters")
    assert answer_of(sample(log, "q1")) == "1년"  # no follow-up needed: answered without retrieval
    assert set(s.metadata["prompts"]) == {"selfask_system", "selfask_answer", "selfask_question"}


def test_self_ask_retrieves_once_by_default_as_the_traces_show(
    tiny_questions: Path, tiny_corpus: Path
) -> None:
    model = Scripted(self_ask_reply)
    s = sample(ok(run(self_ask(), model, tiny_questions, tiny_corpus)), "q2")
    ev = evidence_of(s)
    assert ev["queries"] == [FOLLOW_1] and ev["predicted"] == [ROBBERY]  # two follow-ups, one retrieval
    steps = s.metadata["self_ask_trace"]
    assert [st["follow_up"] for st in steps] == [FOLLOW_1, FOLLOW_2]
    assert steps[1]["retrieved"] == steps[0]["retrieved"] == [ROBBERY]  # answered from the first retrieval


def test_self_ask_is_bounded_and_official_stops_retrieve_once(
    tiny_questions: Path, tiny_corpus: Path
) -> None:
    def always_follow(call: Call) -> str:
        if call.user.endswith("So the final answer is:"):
            return " 결론"
        if call.user.startswith("Answer the question"):
            return "답"
        if "Intermediate answer:" in call.user:
            return f"Follow up: {FOLLOW_1}"
        return f"Are follow up questions needed here: Yes.\nFollow up: {FOLLOW_1}"

    model = Scripted(always_follow)
    s = sample(
        ok(run(self_ask(max_steps=3, retrieve_every_follow_up=True), model, tiny_questions, tiny_corpus)),
        "q2",
    )
    ev = evidence_of(s)
    assert ev["queries"] == [FOLLOW_1] * 3 and ev["predicted"] == [ROBBERY] * 3
    assert ev["counters"] == {"forced_final_answer": 1} and answer_of(s) == "결론"

    official = sample(
        ok(
            run(
                self_ask(max_steps=3, official_stops=True),
                Scripted(always_follow),
                tiny_questions,
                tiny_corpus,
            )
        ),
        "q2",
    )
    ev = evidence_of(official)
    # the released stops cut the reply before "Follow up:", so the "question" is the last line's value
    assert ev["queries"] == ["Yes"] and ev["predicted"] == []
    # the traces: the first reply without a follow-up ends the loop; the script re-asks it
    assert ev["counters"] == {"forced_final_answer": 1}
    reasked = sample(
        ok(
            run(
                self_ask(max_steps=3, official_stops=True, script_reasks=True),
                Scripted(always_follow),
                tiny_questions,
                tiny_corpus,
            )
        ),
        "q2",
    )
    assert evidence_of(reasked)["counters"] == {"replies_without_follow_up": 2, "forced_final_answer": 1}


def test_self_ask_joins_replies_as_the_traces_show(tiny_questions: Path, tiny_corpus: Path) -> None:
    """A reply keeps its whitespace and the answer gets ".", the forced prompt leaves out the last reply;
    `script_answer_join` restores the script's "\\nIntermediate answer: <answer>\\n" of stripped texts."""

    def spaced(call: Call) -> str:
        if call.user.startswith("Answer the question"):
            return "무기징역이다? 덧붙임"
        if call.user.endswith("So the final answer is:"):
            return "Answer: 결론\n남는 줄"
        if "Intermediate answer:" in call.user:
            return "  Answer: 중간 결론  "
        return f" Yes.  \nFollow up: {FOLLOW_1}  \nIntermediate answer: 지어낸 답"

    model = Scripted(spaced)
    s = sample(ok(run(self_ask(), model, tiny_questions, tiny_corpus)), "q2")
    forced = model.where(lambda c: c.user.endswith("So the final answer is:") and "강도가 상해를" in c.user)
    assert len(forced) == 1 and answer_of(s) == "결론"
    head = "Question: 배경 사실이다.강도가 상해를 입히면 어떤 처벌을 받는가?\nAre follow up questions needed here:"
    reply = f" Yes.  \nFollow up: {FOLLOW_1}  "
    assert forced[0].user == f"{head} {reply}\nIntermediate answer: 무기징역이다.\nSo the final answer is:"
    assert len(model.where(lambda c: c.user.startswith("Question: 배경") and "강도가 상해를" in c.user)) == 3
    script = Scripted(spaced)
    sample(ok(run(self_ask(script_answer_join=True), script, tiny_questions, tiny_corpus)), "q2")
    forced = script.where(lambda c: c.user.endswith("So the final answer is:") and "강도가 상해를" in c.user)
    assert (
        forced[0].user
        == f"{head} {reply.strip()}\nIntermediate answer: 무기징역이다\n\nSo the final answer is:"
    )


# --- IRCoT -----------------------------------------------------------------------------------------------

S1 = "강도가 사람을 상해하면 어떤 처벌을 받는가"
S2 = "절도가 재물의 탈환에 항거하여 폭행하면 준강도이다"


def ircot_reply(call: Call) -> str:
    reasoning = call.user.rsplit("\nAnswer: ", 1)[-1]
    if "강도가 상해를" not in call.question:
        return "So the final answer is: 1년"
    if not reasoning:
        return S1 + ". 이어서"
    if S2 not in reasoning:
        return S2 + "! 그리고"
    return "So the final answer is: 무기 또는 7년 이상의 징역. 끝"


def test_ircot_each_sentence_is_the_next_query(tiny_questions: Path, tiny_corpus: Path) -> None:
    model = Scripted(ircot_reply)
    s = sample(ok(run(ircot(script_drops_punctuation=True), model, tiny_questions, tiny_corpus)), "q2")
    ev = evidence_of(s)
    assert ev["queries"] == [Q2, S1, S2]
    assert ev["predicted"] == [ROBBERY, ROBBERY, QUASI]  # the official combination_list, duplicates kept
    assert answer_of(s) == "무기 또는 7년 이상의 징역"
    assert [st["sentence"] for st in s.metadata["ircot_trace"]] == [
        S1,
        S2,
        "So the final answer is: 무기 또는 7년 이상의 징역",
    ]
    last = model.where(lambda c: S2 in c.user)[-1]
    assert f"<Query> Context: {ROBBERY}\n{ROBBERY}\n{QUASI}\nQuestion: {Q2}\nAnswer: {S1} {S2}" == last.user
    assert all(c.config.stop_seqs == [".", "!", "?"] for c in model.calls)
    assert "self-ask legal reasoning assistant" in last.system


def test_ircot_forces_the_final_answer_after_max_steps(tiny_questions: Path, tiny_corpus: Path) -> None:
    def never_done(call: Call) -> str:
        if call.user.endswith("So the final answer is:"):
            return f"{S1} So the final answer is: 결론"
        return S1

    model = Scripted(never_done)
    s = sample(ok(run(ircot(max_steps=2), model, tiny_questions, tiny_corpus)), "q2")
    ev = evidence_of(s)
    assert ev["queries"] == [Q2, S1, S1] and len(ev["predicted"]) == 3
    assert ev["counters"] == {"forced_final_answer": 1}
    assert answer_of(s) == "결론"
    assert len(model.where(lambda c: "강도가 상해를" in c.user)) == 3  # two steps + the forced answer
    forced = model.where(lambda c: c.user.endswith(" So the final answer is:"))
    assert forced and forced[0].config.stop_seqs is None


def test_ircot_vllm_script_runs_every_step_and_stops_the_forced_answer_at_a_newline(
    tiny_questions: Path, tiny_corpus: Path
) -> None:
    def reply(call: Call) -> str:
        if call.user.endswith(" So the answer is:"):
            return " 무기 징역\n이유"
        return "So the final answer is: 무기 징역"

    model = Scripted(reply)
    s = sample(
        ok(run(ircot(**IRCOT_SCRIPT), model, tiny_questions, tiny_corpus, chat_format="system_user")), "q2"
    )
    steps = [c for c in model.calls if c.config.stop_seqs == [".", "!", "?"] and "강도가 상해를" in c.user]
    assert len(steps) == 8  # the released script looks for "So the answer is:", so no step ends the loop
    [forced] = model.where(lambda c: c.user.endswith(" So the answer is:") and "강도가 상해를" in c.user)
    assert forced.config.stop_seqs == ["\n"] and answer_of(s) == "무기 징역"
    assert len(evidence_of(s)["queries"]) == 9  # the question and every step's sentence
    assert all(c.config.seed == 0 and c.config.temperature == 0.0 for c in model.calls)

    fixed = Scripted(reply)
    s = sample(
        ok(
            run(
                ircot(official_marker_bug=False, **IRCOT_SCRIPT),
                fixed,
                tiny_questions,
                tiny_corpus,
                chat_format="system_user",
            )
        ),
        "q2",
    )
    assert len([c for c in fixed.calls if "강도가 상해를" in c.user]) == 1 and answer_of(s) == "무기 징역"


# --- FLARE -----------------------------------------------------------------------------------------------

UNSURE: Tokens = [
    ("강도가 ", -0.1),
    ("사람을 ", -2.0),
    ("상해하면 ", -0.1),
    ("처벌된다", -0.3),
    (". 더", -5.0),
]
NEW_QUERY = "절도가 재물의 탈환에 항거하여 폭행하면?"


def flare_reply(call: Call) -> Reply:
    if call.user.startswith("The following user query has been partially masked"):
        return f"New Query: {NEW_QUERY}"
    reasoning = call.user.rsplit("\nAnswer: ", 1)[-1]
    if "강도가 상해를" not in call.question:
        return "So the answer is: 1년"
    if not reasoning:
        return UNSURE
    if "형법이 적용된다" not in reasoning:
        return [("형법이 ", -0.2), ("적용된다", -0.1)]
    return "So the answer is: 무기 징역"


def test_flare_retrieves_only_after_low_confidence_tokens(tiny_questions: Path, tiny_corpus: Path) -> None:
    model = Scripted(flare_reply)
    s = sample(ok(run(flare(**FLARE_SCRIPT), model, tiny_questions, tiny_corpus)), "q2")
    ev = evidence_of(s)
    # the OpenAI script: the rewrite's reply is the query as written, logprobs without alternatives
    assert ev["queries"] == [Q2, f"New Query: {NEW_QUERY}"] and ev["predicted"] == [ROBBERY, QUASI]
    assert ev["counters"] == {"active_retrievals": 1}
    assert answer_of(s) == "무기 징역"
    rewrite = model.where(lambda c: c.user.startswith("The following user query"))
    assert len(rewrite) == 1 and "Query: 강도가 _상해하면 처벌된다\nNew Query: " in rewrite[0].user
    assert not rewrite[0].config.logprobs
    steps = model.where(lambda c: c.user.startswith("<Query>"))
    assert steps and all(c.config.logprobs and c.config.top_logprobs is None and c.system for c in steps)
    assert s.metadata["flare_trace"][0] == {
        "masked": "강도가 _상해하면 처벌된다",
        "query": f"New Query: {NEW_QUERY}",
    }

    lenient = flare(threshold=-3.0, official_threshold_bug=False, **FLARE_SCRIPT)
    lenient_run = sample(ok(run(lenient, Scripted(flare_reply), tiny_questions, tiny_corpus)), "q2")
    assert evidence_of(lenient_run)["queries"] == [Q2]  # the -5.0 token lies past the stop: never counts
    ignored = sample(
        ok(run(flare(threshold=-3.0, **FLARE_SCRIPT), Scripted(flare_reply), tiny_questions, tiny_corpus)),
        "q2",
    )
    assert len(evidence_of(ignored)["queries"]) == 2  # the scripts' default -0.70 whatever the flag says


def test_flare_vllm_script_flow(tiny_questions: Path, tiny_corpus: Path) -> None:
    """The vLLM script: steps without a system turn, logprobs=1 on every call, seed 0 and no thinking, the
    masked sentence without its confident tokens, the query cut after "New Query:", threshold -0.60."""
    model = Scripted(flare_reply)
    s = sample(
        ok(run(flare(**FLARE_SCRIPT), model, tiny_questions, tiny_corpus, chat_format="system_user")), "q2"
    )
    assert evidence_of(s)["queries"] == [Q2, NEW_QUERY]
    assert all(c.config.logprobs and c.config.top_logprobs == 1 and c.config.seed == 0 for c in model.calls)
    assert all(
        c.config.extra_body == {"chat_template_kwargs": {"enable_thinking": False}} for c in model.calls
    )
    steps = model.where(lambda c: c.user.startswith("<Query>"))
    assert steps and all(c.system == "" for c in steps)
    [rewrite] = model.where(lambda c: c.user.startswith("The following user query"))
    assert rewrite.system and "Query: _\nNew Query: " in rewrite.user
    kept = Scripted(flare_reply)
    ok(
        run(
            flare(official_mask_bug=False, **FLARE_SCRIPT),
            kept,
            tiny_questions,
            tiny_corpus,
            chat_format="system_user",
        )
    )
    [rewrite] = kept.where(lambda c: c.user.startswith("The following user query"))
    assert "Query: 강도가 _상해하면 처벌된다\nNew Query: " in rewrite.user


def test_flare_forced_answer_replaces_the_last_sentence(tiny_questions: Path, tiny_corpus: Path) -> None:
    def unsure_forever(call: Call) -> Reply:
        if call.user.startswith("The following"):
            return NEW_QUERY
        if call.user.endswith("So the answer is:"):
            return "So the answer is: 결론"
        return [("강도가 ", -1.0)]

    model = Scripted(unsure_forever)
    s = sample(ok(run(flare(max_steps=2), model, tiny_questions, tiny_corpus)), "q2")
    ev = evidence_of(s)
    assert ev["queries"] == [Q2, NEW_QUERY, NEW_QUERY] and ev["predicted"] == [ROBBERY, QUASI, QUASI]
    assert ev["counters"] == {"active_retrievals": 2, "forced_final_answer": 1}
    assert s.output.completion == "So the answer is: 결론" and answer_of(s) == "결론"


# --- ProbTree and BeamAggr -------------------------------------------------------------------------------

ROOT, LEAF_A, LEAF_B = (
    "강도가 상해를 입히면 어떤 처벌을 받는가?",
    "강도가 사람을 상해하면?",
    "절도가 재물의 탈환에 항거하면?",
)
TREE = f'```json\n{{"{ROOT}": ["{LEAF_A}", "{LEAF_B}"]}}\n```'
ANSWER = {"cb": "CB답", "ob": "OB답", "ca": "CA답"}


def tree_reply(call: Call) -> Reply:
    """Leaf A: OB is more confident; leaf B: CB is; the root: CA, but only after its marker."""
    if "hierarchical question decomposition tree" in call.user:
        return TREE if "강도가 상해를" in call.user else "나무가 없습니다"
    kind = (
        "cb"
        if call.system.startswith("You are given legal Q&A")
        else "ca"
        if call.system.startswith("You are given a context")
        else "ob"
    )
    if kind == "ca":
        return [("이유. ", -3.0), ("So the answer", -3.0), (" is:", -3.0), (" CA답", -0.01)]
    confident = (call.question == LEAF_A) == (kind == "ob")
    return [(f"{call.question} {ANSWER[kind]}", -0.1 if confident else -1.0)]


def test_probtree_picks_the_most_confident_strategy_per_node(tiny_questions: Path, tiny_corpus: Path) -> None:
    model = Scripted(tree_reply)
    log = ok(run(probtree(), model, tiny_questions, tiny_corpus))
    s = sample(log, "q2")
    ev = evidence_of(s)
    assert ev["queries"] == [LEAF_A, LEAF_B, ROOT]  # children first
    assert ev["retrieved"][0] == [ROBBERY, QUASI] and ev["predicted"] == [ROBBERY]  # OB won only at leaf A
    trace = s.metadata["probtree_trace"]
    assert [(t["idx"], t["strategy"]) for t in trace] == [(1, "ob"), (2, "cb"), (0, "ca")]
    assert trace[2]["scores"]["ca"] == pytest.approx(-0.01)  # only tokens after "So the answer is:"
    assert answer_of(s) == "CA답"
    ca_call = model.where(lambda c: c.system.startswith("You are given a context"))[0]
    assert f"Context: {LEAF_A} {LEAF_A} OB답\n{LEAF_B} {LEAF_B} CB답\n" in ca_call.user
    assert s.metadata["probtree_tree"][0] == {"idx": 0, "question": ROOT, "parent": None, "sons": [1, 2]}
    q1 = evidence_of(sample(log, "q1"))
    assert q1["counters"] == {"tree_unparsed": 1}
    assert q1["queries"] == [
        "운송물 인도 후 손해배상 청구는 언제 소멸하는가?"
    ]  # the question is the only node


def test_beamaggr_aggregates_candidate_beams(tiny_questions: Path, tiny_corpus: Path) -> None:
    model = Scripted(tree_reply)
    log = ok(run(beamaggr(official_first_answer=False), model, tiny_questions, tiny_corpus))
    s = sample(log, "q2")
    ev = evidence_of(s)
    assert ev["queries"] == [LEAF_A, LEAF_B]  # inner nodes aggregate, they do not retrieve
    assert ev["predicted"] == [ROBBERY]  # the best root candidate: A's OB (with its top provision), B's CB
    assert answer_of(s) == f"{LEAF_A} OB답 {LEAF_B} CB답"
    trace = {t["node"]: t["candidates"] for t in s.metadata["beamaggr_trace"]}
    p = 1 / (1 + math.exp(-0.9))
    assert [c["p"] for c in trace[1]] == pytest.approx([p, 1 - p])
    assert len(trace[0]) == 3 and trace[0][0]["p"] == pytest.approx(p * p)
    assert not model.where(lambda c: c.system.startswith("You are given a context"))  # no CA in BeamAggr

    first = sample(
        ok(run(beamaggr(), Scripted(tree_reply), tiny_questions, tiny_corpus)),
        "q2",  # the traces' default
    )
    assert answer_of(first) == f"{LEAF_A} OB답"


def test_beamaggr_predicts_every_roots_best_provisions(tiny_questions: Path, tiny_corpus: Path) -> None:
    """A reply with a second root ("절도가 ..." is no key's child): its tree is answered after the first
    and its best candidate's provisions follow; the answer stays the first root's."""

    def forest(call: Call) -> Reply:
        if "hierarchical question decomposition tree" in call.user:
            return f'{{"{ROOT}": ["{LEAF_A}"], "{LEAF_B}": []}}'
        ob = call.system.startswith("You are given legal Q&A") is False
        return [(f"{call.question} {'OB답' if ob else 'CB답'}", -0.1 if ob else -1.0)]

    s = sample(ok(run(beamaggr(), Scripted(forest), tiny_questions, tiny_corpus)), "q2")
    ev = evidence_of(s)
    assert ev["queries"] == [LEAF_A, LEAF_B] and ev["predicted"] == [ROBBERY, QUASI]
    assert answer_of(s) == f"{LEAF_A} OB답"
    alone = sample(
        ok(run(beamaggr(first_tree_only=True), Scripted(forest), tiny_questions, tiny_corpus)), "q2"
    )
    assert evidence_of(alone)["queries"] == [LEAF_A] and evidence_of(alone)["predicted"] == [ROBBERY]


@pytest.mark.parametrize("solver", [flare(), probtree(), beamaggr()], ids=["flare", "probtree", "beamaggr"])
def test_logprob_methods_fail_clearly_without_logprobs(
    tiny_questions: Path, tiny_corpus: Path, solver
) -> None:
    log = run(solver, Scripted(tree_reply, logprobs=False), tiny_questions, tiny_corpus)
    assert log.status == "error"
    assert "needs token log-probabilities" in log.error.message
    assert "vllm" in log.error.message


@pytest.mark.parametrize(
    ("build", "counts"),
    [
        (ircot, ("k", "max_steps")),
        (flare, ("k", "max_steps")),
        (self_ask, ("k", "max_steps")),
        (probtree, ("k", "max_tree_nodes")),
        (beamaggr, ("k", "beam_size", "max_tree_nodes")),
    ],
    ids=lambda value: getattr(value, "__name__", None) or "-".join(value),
)
def test_count_arguments_are_refused_when_the_solver_is_built(
    build: Callable, counts: tuple[str, ...]
) -> None:
    """Before any sample runs (a k of 0 used to pass the build and fail in every sample)."""
    for name in counts:
        with pytest.raises(ValueError, match="must be positive"):
            build(**{name: 0})
