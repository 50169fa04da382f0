"""What a released prediction row says its run did, call by call: the input of `koblex conformance --traces`.

A released file (`results/<method>_<model>.jsonl`; method and model from the name, `data.koblex.released`) holds
per row the answer, the provisions (`comb`) and, for some methods, a `full_trace`. Each method's reader turns a
row into a `Script`: the model's outputs in call order, what each retrieval returned, and the text each call's
prompt held outside the retrieved provisions; or into the reason the row cannot drive a replay (a row still
holds its answer and provisions, which are compared whatever the reason).

The readers read the traces' format, never a file's particular rows:
- IRCoT / FLARE: `full_trace` is the last prompt without its "<Query> " head: "Context:\\n<comb joined by
  \\n>\\nQuestion: <question>\\nAnswer: <sentences joined by ' '>". The vLLM rows then write the last step again
  after "\\n\\n" (an echo, not a call). A step call was cut at the first ". ! ?" with the punctuation kept, so
  every stop character ends a sentence; a row whose reasoning cannot be cut that way (a stop character inside
  a sentence) was not made by stepped calls we can tell apart. When the steps ran out without the marker, the
  trace is the forced prompt ("<sentences>\\n <marker>") and, after a newline, the forced call's reply.
- SP / CoT (no trace): one call whose reply holds the answer; one-time retrieval: one retrieval returning
  `comb`, then that call.
- Self-Ask: the prompt grown call by call, then the last reply and the forced call's (`self_ask`).
- BeamAggr: each row says why it cannot drive a replay, and what it holds is checked against the solver's
  rules (`beamaggr`, `TraceRow.held`); ProbTree and ParSeR rows hold no calls at all (`UNSCRIPTED`).
- A trace that starts at a "<Query>" a reply wrote (the scripts keep the text after the last one) is not a
  prompt: such rows say so.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from koblex_tasks.data.koblex.alignment import align
from koblex_tasks.data.koblex.released import (
    METHODS,
    MODEL_FAMILIES,
    MODEL_NAMES,
    infer_method_and_model,
    load_released,
    question_key,
)
from koblex_tasks.errors import DataError
from koblex_tasks.jsonl import read_jsonl
from koblex_tasks.solvers.koblex.flare import MAX_STEPS as FLARE_STEPS
from koblex_tasks.solvers.koblex.ircot import MAX_STEPS as IRCOT_STEPS
from koblex_tasks.solvers.koblex.self_ask import FINAL as SELF_ASK_FINAL
from koblex_tasks.solvers.koblex.self_ask import FOLLOW_UP, last_line_value
from koblex_tasks.solvers.koblex.self_ask import INTERMEDIATE as SELF_ASK_ANSWER

OPENAI_MODELS = {"gpt-4o": "openai"}  # ran the OpenAI scripts; every open model ran the vLLM scripts
SENTENCE_END = re.compile(r"[.!?]")
ECHO_SEPARATOR = "\n\n"  # the vLLM rows' trace ends with the last step written again after it (not a call)
# The scripts' "<Query> Context: ..." / "Question: ..." as a reply wrote it (their prompts: "Context:\n").
ECHOED_HEADS = ("Context: ", "Question: ")
FORCED_SEPARATOR = "\n "  # the traces' forced final prompt: the steps, then "\n <marker>"
IRCOT_MARKERS = {"openai": "So the final answer is:", "vllm": "So the answer is:"}
FLARE_MARKER = "So the answer is:"
FLARE_QUESTION = "Question: "  # the traces' step prompts read "Question: Question: <question>"
FLARE_QUERY_REPLY = "New Query: (the released query is not in the trace)"  # the retrieval is scripted
ANSWER_MARKER = "Answer:"
TRACED_OPENAI_MARKER = "Answer: "  # CoT + one-time retrieval on GPT-4o
# Why the rows of these methods cannot drive a replay (their answer rule and provisions are still compared).
UNSCRIPTED = {
    "probtree": "no step outputs: the trace holds the tree and the answers, not the calls",
    "parser": "no trace: the provision and selection calls are not in the row",
}
SELF_ASK_HEAD = "Question: {question}\nAre follow up questions needed here:"  # the first prompt
ANSWER_LABEL = re.compile(
    r"[A-Z][a-z]*(?: [a-z]+)*: ?$"
)  # "Answer: ", "Follow up: ", "So the final answer is:"


@dataclass(frozen=True)
class Reply:
    """One model output as the released run got it; `uncertain`: the run retrieved after it (FLARE)."""

    text: str
    uncertain: bool = False


@dataclass
class Script:
    """A row's run: outputs in call order, each retrieval's provisions, and the prompt text of each call
    after the provisions (None: nothing to compare for that call)."""

    replies: list[Reply]
    retrievals: list[list[str]] = field(default_factory=list)
    prompts: list[str | None] = field(default_factory=list)
    whole_prompts: bool = False  # the prompts hold no provisions: compare each prompt whole


@dataclass
class TraceRow:
    """One released row: where it is, the question it answers (None: not in the dataset), what it holds."""

    line: int
    sample_id: str | None
    question: str  # as the row holds it: what the released run sent (whitespace may differ from --data)
    answer: str
    comb: list[str] | None
    script: Script | None = None
    reason: str | None = None  # why the row cannot drive a replay
    held: str | None = None  # how what a non-replayable row holds disagrees with the solver's rules


@dataclass
class TraceFile:
    path: Path
    method: str  # a solver name (`data.koblex.released.METHODS`)
    backend: str  # "openai" | "vllm"
    rows: list[TraceRow]

    @property
    def name(self) -> str:
        return self.path.name


def file_kind(path: Path) -> tuple[str, str]:
    """(method, backend) from a released file's name (`data.koblex.released`'s rules), or a DataError."""
    method, model = infer_method_and_model(path)
    known = {*MODEL_NAMES.values()} | {f.split("{")[0] for f in MODEL_FAMILIES.values()}
    if not path.name.endswith(".jsonl") or method is None or not any(str(model).startswith(k) for k in known):
        raise DataError(
            str(path),
            None,
            f"not a released file name <method>_<model>.jsonl (methods: {', '.join(METHODS)}; models: "
            f"{', '.join(MODEL_NAMES)} or {'/'.join(MODEL_FAMILIES)}_<size>b)",
        )
    return method, OPENAI_MODELS.get(str(model), "vllm")


def question_index(records: list[dict[str, Any]]) -> dict[str, str]:
    """Each question's id by its text: background + question, and the question alone (whitespace ignored)."""
    index: dict[str, str] = {}
    for record in records:
        index.setdefault(question_key(record["question"]), str(record["id"]))
        index[question_key(record["background"] + record["question"])] = str(record["id"])
    return index


def row_questions(path: Path, records: list[dict[str, Any]]) -> dict[int, str]:
    """Each row's question id by file line: the released files' alignment (`data.koblex.alignment`, which also
    pairs reworded rows by position when the file is evidently in dataset order); when the file cannot be
    aligned as a whole, each row by its own text (an unmatched row is then reported under its file)."""
    try:
        return {
            a.prediction.line: qid for qid, a in align(load_released(path), records, str(path)).by_id.items()
        }
    except DataError:
        index = question_index(records)
        return {
            line: index[question_key(str(obj.get("question", "")))]
            for line, obj in read_jsonl(str(path))
            if question_key(str(obj.get("question", ""))) in index
        }


def read_trace_file(path: Path, records: list[dict[str, Any]]) -> TraceFile:
    """A released file, every row read by its method's reader; a schema error is a DataError."""
    method, backend = file_kind(path)
    load_released(path)  # the schema, strictly: one line naming the first bad row
    questions = row_questions(path, records)
    rows = []
    for line, obj in read_jsonl(str(path)):
        question, answers = obj.get("question"), obj.get("answers")
        if not isinstance(question, str):
            raise DataError(str(path), line, "missing string field 'question'")
        answer, comb = _answer_and_comb(answers, str(path), line)
        row = TraceRow(line, questions.get(line), question, answer, comb)
        if row.sample_id is not None:
            _read_script(row, obj, method, backend)
        rows.append(row)
    if not rows:
        raise DataError(str(path), None, "no rows")
    return TraceFile(path, method, backend, rows)


def _answer_and_comb(answers: Any, source: str, line: int) -> tuple[str, list[str] | None]:
    if isinstance(answers, str):
        return answers, None
    if not isinstance(answers, list) or not answers or not isinstance(answers[0], dict):
        raise DataError(source, line, "field 'answers' must be a string or a non-empty list of objects")
    answer, comb = answers[0].get("answer"), answers[0].get("comb")
    if not isinstance(answer, str) or not isinstance(comb, list) or not all(isinstance(c, str) for c in comb):
        raise DataError(source, line, "answers[0] needs a string 'answer' and a list of strings 'comb'")
    return answer, list(comb)


def _read_script(row: TraceRow, obj: dict[str, Any], method: str, backend: str) -> None:
    if method in UNSCRIPTED:
        row.reason = UNSCRIPTED[method]
        return
    reader = READERS[method]
    try:
        row.script = reader(row, obj.get("full_trace"), backend)
    except NotReplayable as exc:
        row.reason = str(exc)


def read_trace_paths(paths: list[Path], records: list[dict[str, Any]]) -> list[TraceFile]:
    """Every released file named or in a named folder (its `*.jsonl`, by name); none at all is an error."""
    files: list[Path] = []
    for path in paths:
        found = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        if not found:
            raise DataError(str(path), None, "no released .jsonl files in the folder")
        files.extend(found)
    return [read_trace_file(p, records) for p in files]


class NotReplayable(Exception):
    """The row's trace cannot drive a replay; the message says why (grouped per file in the report)."""


def answer_reply(row: TraceRow, after_answer: bool) -> Reply:
    """The reply behind a released answer: the answer itself, which the script's rule (the text after the last
    "Answer:", or the reply whole) gives back; an answer holding "Answer:" cannot come out of the first."""
    if after_answer and ANSWER_MARKER in row.answer:
        raise NotReplayable(f'the answer holds "{ANSWER_MARKER}", which the script\'s rule never leaves')
    return Reply(row.answer)


def closed_book(row: TraceRow, trace: Any, backend: str) -> Script:
    return Script([answer_reply(row, after_answer=True)], prompts=[None])


def one_time(row: TraceRow, trace: Any, backend: str) -> Script:
    """SP + one-time retrieval: `sp_or_vllm.py` writes the reply whole, every other script after "Answer:"."""
    reply = answer_reply(row, after_answer=backend != "vllm")
    return Script([reply], [list(row.comb or [])], prompts=[None])


def cot_one_time(row: TraceRow, trace: Any, backend: str) -> Script:
    """CoT + one-time retrieval: the GPT-4o rows were read after "Answer: " (with its space), so a reply whose
    marker is "Answer:\n" was written whole; the vLLM rows after "Answer:"."""
    if backend == "openai" and TRACED_OPENAI_MARKER in row.answer:
        raise NotReplayable(f'the answer holds "{TRACED_OPENAI_MARKER}", which the rule never leaves')
    return Script(
        [Reply(row.answer)] if backend == "openai" else [answer_reply(row, True)],
        [list(row.comb or [])],
        prompts=[None],
    )


def sentences(reasoning: str) -> list[str]:
    """The step replies joined in `reasoning`: each ends at its first ". ! ?" (kept); joined by one space."""
    steps, start = [], 0
    for match in SENTENCE_END.finditer(reasoning):
        end = match.end()
        steps.append(reasoning[start:end])
        if end < len(reasoning) and reasoning[end] != " ":
            raise NotReplayable("a sentence goes on after its stop character")
        start = end + 1
    if start < len(reasoning):
        steps.append(reasoning[start:])
    return steps


def without_echo(reasoning: str, marker: str) -> str:
    """The reasoning without the vLLM rows' echo: "\n\n" and the last step (the one holding the marker)
    written again after the steps (not a call). The echo is the longest such tail the steps end with."""
    at = reasoning.find(ECHO_SEPARATOR)
    while at >= 0:
        head, tail = reasoning[:at], reasoning[at + len(ECHO_SEPARATOR) :]
        if marker in tail and head.endswith(tail) and (len(head) == len(tail) or head[-len(tail) - 1] == " "):
            return head
        at = reasoning.find(ECHO_SEPARATOR, at + 1)
    return reasoning


@dataclass(frozen=True)
class StepTrace:
    contexts: list[str]
    question: str
    steps: list[str]
    forced: str | None = None  # the forced final call's reply, when the steps ran out without the marker


def step_trace(row: TraceRow, trace: Any, marker: str, max_steps: int) -> StepTrace:
    """The last prompt of an IRCoT / FLARE trace, checked against the row's `comb`: its steps and, when the
    run was forced to answer, that call's reply (after the forced prompt's "\n <marker>" and a newline)."""
    if isinstance(trace, str) and trace.startswith(ECHOED_HEADS):
        raise NotReplayable(
            'the trace is not the last prompt but what a reply wrote after its own "<Query>" (the scripts keep '
            "the text after the last one)"
        )
    if not isinstance(trace, str) or not trace.startswith("Context:\n") or "\nAnswer: " not in trace:
        raise NotReplayable("no step trace")
    head, _, reasoning = trace.partition("\nAnswer: ")
    context, found, question = head[len("Context:\n") :].partition("\nQuestion: ")
    if not found:
        raise NotReplayable("no step trace")
    if context != "\n".join(row.comb or []):
        raise NotReplayable("the trace's context is not its comb")
    reasoning = without_echo(reasoning, marker)
    steps_text, forced_at, forced = reasoning.partition(FORCED_SEPARATOR + marker + "\n")
    if forced_at and marker in steps_text:
        raise NotReplayable("a forced final call after a step that holds the marker")
    steps = sentences(steps_text)
    if len(steps) > max_steps or (forced_at and len(steps) < max_steps):
        # a forced call follows the last of `max_steps` steps: fewer means a step ended without ". ! ?"
        raise NotReplayable("a step ended without a stop character: the steps cannot be told apart")
    return StepTrace(list(row.comb or []), question, steps, forced if forced_at else None)


def prompt_tail(question: str, steps: list[str]) -> str:
    """A step prompt's text after its provisions."""
    return f"\nQuestion: {question}\nAnswer: {' '.join(steps)}"


def forced_prompt(parsed: StepTrace, marker: str) -> str:
    """The forced final call's prompt after its provisions: the steps, then "\n <marker>" (as the traces)."""
    return prompt_tail(parsed.question, parsed.steps) + FORCED_SEPARATOR + marker


def ircot(row: TraceRow, trace: Any, backend: str) -> Script:
    """A step per sentence, a retrieval after each sentence without the marker; the run ends at the marker,
    or, when every step ran without it, with the forced final call."""
    marker = IRCOT_MARKERS[backend]
    parsed = step_trace(row, trace, marker, IRCOT_STEPS[backend])
    at = next((i for i, s in enumerate(parsed.steps) if marker in s), None)
    if parsed.forced is None and (at is None or at != len(parsed.steps) - 1):
        raise NotReplayable("no step ends the run with the marker and no forced final call follows")
    retrievals = len(parsed.steps) - (0 if parsed.forced is not None else 1)
    if len(parsed.contexts) != retrievals + 1:
        if len(parsed.contexts) > retrievals + 1 and not SENTENCE_END.search(" ".join(parsed.steps[:-1])):
            raise NotReplayable(
                "comb holds a provision per step but the steps are joined without their stop characters "
                "(the script's stop strings, dropped): where each step ends is not in the trace"
            )
        raise NotReplayable("comb is not one provision per step before the marker")
    prompts: list[str | None] = [
        prompt_tail(parsed.question, parsed.steps[:i]) for i in range(len(parsed.steps))
    ]
    replies = [Reply(s) for s in parsed.steps]
    if parsed.forced is not None:
        replies.append(Reply(parsed.forced))
        prompts.append(forced_prompt(parsed, marker))
    return Script(replies, [[c] for c in parsed.contexts], prompts)


def flare(row: TraceRow, trace: Any, backend: str) -> Script:
    """A step per sentence; after an uncertain one, a query call and a retrieval; the last step holds the
    marker, or the forced final call follows the steps.

    Which steps were uncertain the trace does not say, only how many (`comb` after the first provision): the
    first ones are marked. Nothing compared depends on it (the step prompts hold no provisions after them, the
    calls count the same, `comb` keeps its order).
    """
    parsed = step_trace(row, trace, FLARE_MARKER, FLARE_STEPS[backend])
    if parsed.forced is None and (not parsed.steps or FLARE_MARKER not in parsed.steps[-1]):
        raise NotReplayable("no step ends the run with the marker and no forced final call follows")
    retrievals = len(parsed.contexts) - 1
    if not parsed.question.startswith(FLARE_QUESTION) or retrievals > len(parsed.steps):
        raise NotReplayable("the trace is not one step prompt per sentence")
    question = parsed.question
    replies: list[Reply] = []
    prompts: list[str | None] = []
    for i, step in enumerate(parsed.steps):
        uncertain = i < retrievals
        replies.append(Reply(step, uncertain))
        prompts.append(prompt_tail(question, parsed.steps[:i]))
        if uncertain:
            replies.append(Reply(FLARE_QUERY_REPLY))
            prompts.append(None)
    if parsed.forced is not None:
        replies.append(Reply(parsed.forced))
        prompts.append(forced_prompt(parsed, FLARE_MARKER))
    return Script(replies, [[c] for c in parsed.contexts], prompts)


def self_ask(row: TraceRow, trace: Any, backend: str) -> Script:
    """The self-ask prompt grown call by call, then the last reply and the forced call's (`self_ask`'s flow):
    "Question: <question>\\nAre follow up questions needed here:", " ", then per follow-up the reply (cut
    before "\\nIntermediate answer:", so it holds none) and "\\nIntermediate answer: <answer>." (the answer
    call cut at its first ". ! ?", so the "." that follows is the script's); then the reply that asked none.
    It ends the run when it holds "So the final answer is:" and the answer is read from it; otherwise the
    forced call's reply (cut at "\\n") follows it directly: the tail of the last line the answer rule reads
    as the row's answer. Where the two meet the trace does not say when no newline separates them: the
    forced reply is taken as the shortest such tail with the English label before it ("Answer: ", "Follow
    up: "); nothing compared depends on it (the forced prompt holds the prompt without that reply).
    The first follow-up retrieves `comb` (one provision); the answer calls' prompts are not in the trace."""
    head = SELF_ASK_HEAD.format(question=row.question)
    if not isinstance(trace, str) or not trace.startswith(head + " "):
        raise NotReplayable("no self-ask trace")
    prompt, rest = head, trace[len(head) + 1 :]
    replies: list[Reply] = []
    prompts: list[str | None] = []
    while (at := rest.find(SELF_ASK_ANSWER)) >= 0:
        reply, answer = rest[:at], rest[at + len(SELF_ASK_ANSWER) :]
        end = SENTENCE_END.search(answer)
        if FOLLOW_UP not in _last_line(reply):
            raise NotReplayable('an "Intermediate answer:" follows a reply that asks no follow-up')
        if end is None or end.group() != ".":
            raise NotReplayable(
                'an intermediate answer ended without ". ! ?" (no "." after it): where the next reply '
                "starts is not in the trace"
            )
        replies += [Reply(reply), Reply(answer[: end.start()])]
        prompts += [prompt, None]
        prompt += (" " if prompt.endswith(":") else "") + reply + SELF_ASK_ANSWER + answer[: end.end()]
        rest = answer[end.end() :]
    follow_ups = len(replies) // 2
    if len(row.comb or []) != min(follow_ups, 1):
        raise NotReplayable(
            f"comb holds {len(row.comb or [])} provisions for {follow_ups} follow-ups: which follow-up "
            "retrieved which is not in the trace (the traces' rule: the first follow-up retrieves one)"
        )
    retrievals = [list(row.comb or [])] if follow_ups else []
    if SELF_ASK_FINAL in rest and FOLLOW_UP not in _last_line(rest) and last_line_value(rest) == row.answer:
        return Script([*replies, Reply(rest)], retrievals, [*prompts, prompt], whole_prompts=True)
    start = forced_reply_start(rest, row.answer)
    if start is None:
        raise NotReplayable("the answer is not what the rule reads from any tail of the trace's last line")
    last, forced = rest[:start], rest[start:]
    if FOLLOW_UP in _last_line(last) or SELF_ASK_FINAL in last:
        raise NotReplayable("the reply before the forced call asks a follow-up or holds the final marker")
    return Script(
        [*replies, Reply(last), Reply(forced)],
        retrievals,
        [*prompts, prompt, prompt + "\n" + SELF_ASK_FINAL],
        whole_prompts=True,
    )


def _last_line(text: str) -> str:
    return text.strip().split("\n")[-1]


def forced_reply_start(text: str, answer: str) -> int | None:
    """Where the forced call's reply starts in `text` (the loop's last reply, then it): the shortest tail of
    the last line the answer rule reads as `answer`, with the English label before it; None if none does."""
    line = text.rfind("\n") + 1
    for at in range(len(text), line - 1, -1):
        if last_line_value(text[at:]) == answer:
            label = ANSWER_LABEL.search(text[line:at])
            return at - len(label.group()) if label else at
    return None


def beamaggr(row: TraceRow, trace: Any, backend: str) -> Script:
    """BeamAggr rows cannot drive a replay: the trace lists each node's candidates (answers, probabilities,
    the top OB provision) but not the tree call's reply nor any node's question, which every CB/OB prompt
    holds (nor the other k-1 provisions each leaf retrieved). What the row holds is still checked against
    the solver's rules (`held`): the answer is node 0's best candidate's first sub-answer, and `comb` starts
    with that candidate's provisions, any others being the best candidates' of other nodes (the other trees'
    roots: the trace does not mark which nodes are roots)."""
    nodes = trace if isinstance(trace, list) else []
    if not nodes or not all(isinstance(n, dict) and isinstance(n.get("candidates"), list) for n in nodes):
        raise NotReplayable("no step outputs: the trace holds the tree and the beams, not the calls")
    try:
        tops = {n.get("node"): best_candidate(n["candidates"]) for n in nodes}
    except (KeyError, TypeError, ValueError):
        raise NotReplayable("the trace's candidates are not answers, p and comb") from None
    root = tops.get(0)
    if root is None:
        row.held = "no node 0: the trace has no first root"
    elif root["answers"][:1] != [row.answer] and str(root["answers"][0]).strip() != row.answer.strip():
        row.held = "answer: not node 0's best candidate's first sub-answer"
    else:
        comb, others = row.comb or [], [p for k, t in tops.items() if k != 0 for p in t["comb"]]
        if comb[: len(root["comb"])] != root["comb"] or any(
            p not in others for p in comb[len(root["comb"]) :]
        ):
            row.held = "comb: not node 0's best candidate's provisions, then other nodes' best ones"
    raise NotReplayable(
        "the trace holds each node's candidates, not the tree call's reply nor the nodes' questions"
    )


def best_candidate(candidates: list[Any]) -> dict[str, Any]:
    """The candidate with the highest `p`, the first of equals (the solver's `best`)."""
    top = max(candidates, key=lambda c: float(c["p"]))
    if not isinstance(top["answers"], list) or not top["answers"] or not isinstance(top["comb"], list):
        raise ValueError("a candidate without answers or comb")
    return dict(top)


READERS: dict[str, Callable[[TraceRow, Any, str], Script]] = {
    "self_ask": self_ask,
    "beamaggr": beamaggr,
    "standard_prompting": closed_book,
    "chain_of_thought": closed_book,
    "one_time_retrieval": one_time,
    "cot_one_time_retrieval": cot_one_time,
    "ircot": ircot,
    "flare": flare,
}
