"""`koblex conformance --traces` on released files written here from the released format (tiny data).

The rows are built the way the released traces read (README of released_open; `conformance.traces`), for
model names no shipped file has (qwen_8b, exaone_7.8b), so nothing here fits the shipped rows.
"""

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import GenerateConfig

from koblex_tasks.cli.main import main
from koblex_tasks.conformance import trace_replay
from koblex_tasks.conformance.trace_replay import served
from koblex_tasks.conformance.traces import (
    NotReplayable,
    TraceRow,
    file_kind,
    forced_reply_start,
    sentences,
    step_trace,
    without_echo,
)
from koblex_tasks.conformance.traces import ircot as read_ircot
from koblex_tasks.conformance.traces import self_ask as read_self_ask
from koblex_tasks.errors import DataError
from koblex_tasks.solvers.koblex.ircot import ircot
from koblex_tasks.solvers.koblex.self_ask import self_ask
from tests.conftest import TINY_STATUTES, statute_key, write_jsonl

LINE = re.compile(r"^(?P<file>\S+): (\d+)/(\d+) rows identical, (\d+) not replayable(?: \((?P<why>.+)\))?$")
BACKGROUND = "배경 사실이다."
Q2 = "강도가 상해를 입히면 어떤 처벌을 받는가?"
Q1 = "운송물 인도 후 손해배상 청구는 언제 소멸하는가?"
STEPS = [
    "강도가 상해를 입혔으므로 강도상해죄가 문제된다.",
    "So the answer is: 무기 또는 7년 이상의 징역에 처한다.",
]
ANSWER = "무기 또는 7년 이상의 징역에 처한다."


def ircot_row(steps: list[str] = STEPS, answer: str = ANSWER, question: str = BACKGROUND + Q2) -> dict:
    comb = [statute_key(TINY_STATUTES[2]), statute_key(TINY_STATUTES[3])]
    trace = (
        "Context:\n" + "\n".join(comb) + f"\nQuestion: {question}\nAnswer: " + " ".join(steps)
    ) + f"\n\n{steps[-1]}"  # the vLLM rows' echo: the last step written again
    return {
        "question": question,
        "answers": [{"answer": answer, "logp": 0.0, "comb": comb}],
        "full_trace": trace,
    }


FORCED_STEPS = [f"{n}번째 근거를 검토한다." for n in range(1, 9)]  # vLLM IRCoT: 8 steps without the marker
FORCED_REPLY = "강도상해죄가 성립한다.\n\n따라서 무기 또는 7년 이상의 징역이다. So the answer is: 무기 또는 7년 이상의 징역이다."


def forced_ircot_row() -> dict:
    """A vLLM IRCoT row whose steps ran out: the forced prompt ("\n So the answer is:") and, after a newline,
    the forced call's reply (not cut at "\n"; its last marker gives the answer); no echo."""
    comb = [statute_key(TINY_STATUTES[i % 4]) for i in range(9)]  # the question's and one per step
    question = BACKGROUND + Q2
    trace = (
        "Context:\n" + "\n".join(comb) + f"\nQuestion: {question}\nAnswer: " + " ".join(FORCED_STEPS)
    ) + f"\n So the answer is:\n{FORCED_REPLY}"
    answer = FORCED_REPLY.split("So the answer is:")[-1].strip()
    return {
        "question": question,
        "answers": [{"answer": answer, "logp": 0.0, "comb": comb}],
        "full_trace": trace,
    }


FOLLOW_UPS = ["강도가 사람을 상해하면 어떤 죄인가?", "그 법정형은 무엇인가?"]
SELF_ASK_ANSWER = "무기 또는 7년 이상의 징역"


def self_ask_row(answer_join: str = "\nIntermediate answer: ") -> dict:
    """A vLLM Self-Ask row: the prompt grown by two follow-ups (each reply as returned, its answer ended
    with "."), the last reply without a follow-up and, right after it, the forced call's reply."""
    question = BACKGROUND + Q2
    trace = (
        f"Question: {question}\nAre follow up questions needed here: Yes.  \nFollow up: {FOLLOW_UPS[0]}  "
        f"{answer_join}강도상해죄가 성립한다.Follow up: {FOLLOW_UPS[1]}{answer_join}무기징역이다."
        f"  Answer: {SELF_ASK_ANSWER}Answer: {SELF_ASK_ANSWER}."
    )
    comb = [statute_key(TINY_STATUTES[2])]  # the first follow-up's retrieval
    return {
        "question": question,
        "answers": [{"answer": SELF_ASK_ANSWER, "logp": 0.0, "comb": comb}],
        "full_trace": trace,
    }


def final_self_ask_row() -> dict:
    """A GPT-4o Self-Ask row whose only reply asks no follow-up and holds the final marker: no forced call."""
    question = BACKGROUND + Q1
    trace = f"Question: {question}\nAre follow up questions needed here: No\nSo the final answer is: 1년.\nAnswer: 1년."
    return {
        "question": question,
        "answers": [{"answer": "1년", "logp": 0.0, "comb": []}],
        "full_trace": trace,
    }


def beamaggr_row(answer: str = "가 답", extra: int = 1) -> dict:
    """A BeamAggr row of two trees: node 0 (leaves 1, 2) and root 3, whose best OB provision follows node
    0's best one in `comb` (`extra` 0: left out)."""
    a, b, c = (statute_key(TINY_STATUTES[i]) for i in range(3))

    def leaf(node: int, cb: str, ob: str, provision: str, p_ob: float) -> dict:
        candidates = [
            {"answers": [ob], "p": p_ob, "comb": [provision]},
            {"answers": [cb], "p": 1 - p_ob, "comb": []},
        ]
        return {"node": node, "candidates": sorted(candidates, key=lambda x: -x["p"])}

    nodes = [leaf(1, "가 답", "가 근거", a, 0.4), leaf(2, "나 답", "나 근거", b, 0.7)]
    nodes.append({"node": 0, "candidates": [{"answers": ["가 답", "나 근거"], "p": 0.42, "comb": [b]}]})
    nodes.append(leaf(3, "다 답", "다 근거", c, 0.6))
    comb = [b, c][: 1 + extra]
    return {
        "question": BACKGROUND + Q2,
        "answers": [{"answer": answer, "logp": 0.0, "comb": comb}],
        "full_trace": nodes,
    }


def released(folder: Path) -> Path:
    folder.mkdir()
    write_jsonl(folder / "ircot_qwen_8b.jsonl", [ircot_row()])
    write_jsonl(folder / "ircot_exaone_7.8b.jsonl", [forced_ircot_row()])
    write_jsonl(folder / "sp_exaone_7.8b.jsonl", [{"question": BACKGROUND + Q1, "answers": "1년 이내이다."}])
    one_time = {"answer": "1년", "logp": 0.0, "comb": [statute_key(TINY_STATUTES[1])]}  # q1: one gold
    write_jsonl(folder / "sp_or_gpt4o.jsonl", [{"question": BACKGROUND + Q1, "answers": [one_time]}])
    unanswerable = {"answer": "답", "logp": 0.0, "comb": []}  # its trace is not the self-ask prompt
    write_jsonl(
        folder / "self-ask_exaone_7.8b.jsonl",
        [
            self_ask_row(),
            {"question": BACKGROUND + Q1, "answers": [unanswerable], "full_trace": "Question: ..."},
        ],
    )
    write_jsonl(folder / "selfask_gpt4o.jsonl", [final_self_ask_row()])
    write_jsonl(folder / "beamaggr_qwen_8b.jsonl", [beamaggr_row()])
    return folder


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["conformance", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_released_files_of_unseen_models_replay_identically(
    tmp_path: Path, tiny_questions: Path, tiny_corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = released(tmp_path / "released")
    code, out, _ = run(
        ["--traces", str(folder), "--data", str(tiny_questions), "--corpus", str(tiny_corpus)], capsys
    )
    lines = {m["file"]: m for m in map(LINE.match, out.splitlines()) if m}
    assert set(lines) == {p.name for p in folder.glob("*.jsonl")}, out
    assert lines["ircot_qwen_8b.jsonl"].groups()[1:4] == ("1", "1", "0"), out
    assert lines["ircot_exaone_7.8b.jsonl"].groups()[1:4] == ("1", "1", "0"), out
    assert lines["sp_or_gpt4o.jsonl"].groups()[1:4] == ("1", "1", "0"), out
    assert lines["sp_exaone_7.8b.jsonl"].groups()[1:4] == ("1", "1", "0"), out
    assert lines["self-ask_exaone_7.8b.jsonl"].groups()[1:4] == ("1", "1", "1") and lines[
        "self-ask_exaone_7.8b.jsonl"
    ]["why"].startswith("no self-ask trace"), out
    assert lines["selfask_gpt4o.jsonl"].groups()[1:4] == ("1", "1", "0"), out
    beam = lines["beamaggr_qwen_8b.jsonl"]
    assert beam.groups()[1:4] == ("0", "0", "1") and beam["why"].startswith("the trace holds each node's"), (
        out
    )
    assert out.rstrip().endswith("traces: 7/7 files identical") and code == 0, out


@pytest.mark.parametrize(
    ("name", "row", "switch", "difference"),
    [
        # the vLLM server drops the stop string: the second prompt lacks the sentence's "."
        (
            "ircot_exaone_7.8b.jsonl",
            ircot_row,
            "script_drops_punctuation",
            "call 1 prompt after its provisions",
        ),
        # the forced call, the 9th, gets the scripts' " <marker>" instead of the traces' "\n <marker>"
        (
            "ircot_qwen_8b.jsonl",
            forced_ircot_row,
            "script_final_prompt",
            "call 8 prompt after its provisions",
        ),
        # the second self-ask call's prompt: the script's "...<answer>\n" of stripped texts, not the traces'
        ("self-ask_qwen_8b.jsonl", self_ask_row, "script_answer_join", "call 2 prompt after its provisions"),
        # the script re-asks after the reply without a follow-up: the forced reply comes a call late
        ("self-ask_qwen_8b.jsonl", self_ask_row, "script_reasks", "calls: released 6"),
    ],
)
def test_a_scripts_switch_is_the_first_difference_from_the_traces(
    name: str,
    row: Callable[[], dict[str, Any]],
    switch: str,
    difference: str,
    tmp_path: Path,
    tiny_questions: Path,
    tiny_corpus: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "released"
    folder.mkdir()
    write_jsonl(folder / name, [row()])
    method = file_kind(Path(name))[0]
    solver = {"ircot": ircot, "self_ask": self_ask}[method]
    monkeypatch.setitem(trace_replay.SOLVERS, method, lambda: solver(**{switch: True}))
    code, out, _ = run(
        ["--traces", str(folder), "--data", str(tiny_questions), "--corpus", str(tiny_corpus)], capsys
    )
    assert "0/1 rows identical" in out and code == 1, out
    assert f"row 1 (question q2): {difference}" in out, out
    if switch == "script_drops_punctuation":
        assert "문제된다.'" in out, out


def test_a_changed_answer_and_an_unknown_question_are_reported_under_their_file(
    tmp_path: Path, tiny_questions: Path, tiny_corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "released"
    folder.mkdir()
    rows = [ircot_row(answer="다른 답이다."), ircot_row(question="데이터에 없는 질문이다.")]
    # row 1: its steps end "So the answer is: <ANSWER>" but the row's answer is another
    write_jsonl(folder / "ircot_qwen_8b.jsonl", rows)
    code, out, _ = run(
        ["--traces", str(folder), "--data", str(tiny_questions), "--corpus", str(tiny_corpus)], capsys
    )
    assert code == 1 and "traces: 0/1 files identical" in out, out
    assert "row 1 (question q2): answer: released" in out and "row 2: its question is not in --data" in out, (
        out
    )


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("ircot_llama_8b.jsonl", '{"question": "q", "answers": "a"}\n'),  # not a released model
        ("notamethod_gpt4o.jsonl", '{"question": "q", "answers": "a"}\n'),
        ("ircot_qwen_8b.jsonl", '{"question": "q", "answers": 3}\n'),  # not the released schema
    ],
)
def test_a_file_that_is_not_a_released_one_is_one_line_and_exit_2(
    tmp_path: Path,
    tiny_questions: Path,
    tiny_corpus: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: str,
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    code, _, err = run(
        ["--traces", str(path), "--data", str(tiny_questions), "--corpus", str(tiny_corpus)], capsys
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and name in err and "Traceback" not in err, err


def test_file_names_give_method_and_backend_by_the_released_rules() -> None:
    assert file_kind(Path("ircot_qwen_8b.jsonl")) == ("ircot", "vllm")
    assert file_kind(Path("self-ask_exaone_7.8b.jsonl")) == ("self_ask", "vllm")
    assert file_kind(Path("cot_or_gpt4o.jsonl")) == ("cot_one_time_retrieval", "openai")
    with pytest.raises(DataError):
        file_kind(Path("ircot_gpt4o.json"))


def test_sentences_end_at_every_stop_character_and_refuse_one_inside() -> None:
    assert sentences("가. 나! 다? So the answer is: 라") == ["가.", "나!", "다?", "So the answer is: 라"]
    with pytest.raises(NotReplayable):
        sentences("제1.2조에 따른다.")


def test_the_server_applies_stop_strings_as_vllm_and_openai_do() -> None:
    stop = GenerateConfig(stop_seqs=[".", "?"])
    keep = GenerateConfig(stop_seqs=[".", "?"], extra_body={"include_stop_str_in_output": True})
    assert served("가나다. 라?", stop, "vllm") == "가나다"
    assert served("가나다. 라?", keep, "vllm") == "가나다."
    assert served("가나다. 라?", keep, "openai") == "가나다"  # OpenAI never keeps it
    assert served("가나다", GenerateConfig(), "vllm") == "가나다"


def test_the_echo_is_the_last_step_written_again_whatever_its_marker_looks_like() -> None:
    last = "---\n\n**So the answer is:**  \n답이다"
    steps = f"가를 본다. {last}"
    assert without_echo(f"{steps}\n\n{last}", "So the answer is:") == steps
    assert without_echo(steps, "So the answer is:") == steps  # no echo (the GPT-4o rows)
    # a tail the steps do not end with is not an echo
    assert without_echo(f"{steps}\n\nSo the answer is: 다른 답", "So the answer is:").endswith("다른 답")


def test_a_forced_trace_gives_its_steps_and_the_forced_reply() -> None:
    row = TraceRow(1, "q2", "질문", "답", ["조문"])
    parsed = step_trace(
        row,
        "Context:\n조문\nQuestion: 질문\nAnswer: 가. 나\n So the answer is:\n답\n끝",
        "So the answer is:",
        2,
    )
    assert parsed.steps == ["가.", "나"] and parsed.forced == "답\n끝"
    with pytest.raises(NotReplayable):  # a step held the marker: the run would have ended there
        step_trace(
            row,
            "Context:\n조문\nQuestion: 질문\nAnswer: So the answer is: 가.\n So the answer is:\n답",
            "So the answer is:",
            1,
        )
    with pytest.raises(NotReplayable, match="cannot be told apart"):  # forced after 2 of 3 steps: merged ones
        step_trace(
            row,
            "Context:\n조문\nQuestion: 질문\nAnswer: 가. 나\n So the answer is:\n답",
            "So the answer is:",
            3,
        )


def test_the_forced_reply_is_the_shortest_tail_giving_the_answer_with_its_label() -> None:
    assert forced_reply_start("Answer: 3년Answer: 3년", "3년") == len("Answer: 3년")
    text = "I'm sorry.Follow up: 무엇인가?"
    assert text[forced_reply_start(text, "무엇인가?") or 0 :] == "Follow up: 무엇인가?"
    assert forced_reply_start(" NoNo", "No") == 3  # no label: the answer alone
    assert forced_reply_start("가.\n나: 다", "다") == len("가.\n나: ")  # not an English label
    assert forced_reply_start("Answer: 가\n", "나") is None  # no tail of the last line reads as the answer


def test_self_ask_rows_that_cannot_drive_a_replay_say_why() -> None:
    row = self_ask_row()
    comb = row["answers"][0]["comb"]

    def reason(trace: str, answer: str = SELF_ASK_ANSWER, provisions: list[str] = comb) -> str:
        with pytest.raises(NotReplayable) as caught:
            read_self_ask(TraceRow(1, "q2", BACKGROUND + Q2, answer, provisions), trace, "vllm")
        return str(caught.value)

    assert reason(row["full_trace"], provisions=comb * 2).startswith(
        "comb holds 2 provisions for 2 follow-ups"
    )
    no_follow_up = row["full_trace"].replace(
        f"Follow up: {FOLLOW_UPS[1]}", "Are follow up questions needed here: No"
    )
    assert reason(no_follow_up).startswith('an "Intermediate answer:" follows a reply that asks no follow-up')
    assert reason(row["full_trace"].replace("무기징역이다.", "무기징역")).startswith(
        "the answer is not what the rule reads"
    )
    # the trace ends in an answer without ". ! ?": the model's end, no "." of the script's after it
    unended = row["full_trace"].split("무기징역이다.")[0] + "무기징역이다"
    assert reason(unended).startswith('an intermediate answer ended without ". ! ?"')


@pytest.mark.parametrize(
    ("row", "difference"),
    [
        (beamaggr_row(answer="나 근거"), "answer: not node 0's best candidate's first sub-answer"),
        (beamaggr_row(extra=0), None),  # the other tree's provisions may be left out (no best OB there)
        (
            {**beamaggr_row(), "answers": [{"answer": "가 답", "logp": 0.0, "comb": ["조문"]}]},
            "comb: not node 0's best candidate's provisions",
        ),
    ],
)
def test_what_a_beamaggr_row_holds_is_checked_against_the_solvers_rules(
    row: dict,
    difference: str | None,
    tmp_path: Path,
    tiny_questions: Path,
    tiny_corpus: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "released"
    folder.mkdir()
    write_jsonl(folder / "beamaggr_exaone_7.8b.jsonl", [row])
    code, out, _ = run(
        ["--traces", str(folder), "--data", str(tiny_questions), "--corpus", str(tiny_corpus)], capsys
    )
    assert "0/0 rows identical, 1 not replayable" in out, out
    if difference is None:
        assert code == 0 and "row 1" not in out, out
    else:
        assert code == 1 and f"row 1 (question q2): {difference}" in out, out


def test_ircot_rows_that_cannot_drive_a_replay_say_why() -> None:
    """A trace that starts where a reply wrote "<Query>" (no prompt, no earlier step), and steps joined
    without their stop characters (the script dropped them): neither shows where the calls were."""
    row = TraceRow(1, "q2", BACKGROUND + Q2, "답", ["조문 1", "조문 2", "조문 3"])
    with pytest.raises(NotReplayable, match='what a reply wrote after its own "<Query>"'):
        read_ircot(
            row, "Context: 조문 1을 옮겨 적은 글\nQuestion: 질문 Answer: 가\n So the answer is:\n답", "vllm"
        )
    joined = f"Context:\n조문 1\n조문 2\n조문 3\nQuestion: {BACKGROUND + Q2}\nAnswer: 가를 본다 나를 본다 So the answer is: 답"
    with pytest.raises(NotReplayable, match="joined without their stop characters"):
        read_ircot(row, joined, "vllm")
