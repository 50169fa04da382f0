"""The fixtures' deterministic responder, implemented from its specification (official_requests/README).

A reply is a pure function of the request text and its stop list, so a reimplementation sent the official
requests gets the official replies, and a difference in what it sends shows up as a difference in what it
is answered. The text is `"\\n".join(contents)` of the messages; logprobs are one token per code point.
"""

import json
import re

PROVISIONS_MARK = "identify and return all relevant statutory provisions"
SELECT_MARK = "identify the most proper passage"
TREE_MARK = "hierarchical question decomposition tree"
QUERY_MARK = "partially masked due to low-confidence tokens"
STEP_MARK = "<Query> Context:"
FINAL_MARKER = "So the final answer is:"
SHORT_MARKER = "So the answer is:"
_NUMBERED = re.compile(r"^\d+: ")


def _cut(text: str) -> str:
    """A chat-templated prompt loses its generation suffix (after the last end-of-turn)."""
    end = text.rfind("<|im_end|>")
    return text if end < 0 else text[:end]


def _tail(text: str) -> str:
    start = text.rfind("<Query>")
    return text if start < 0 else text[start + len("<Query>") :]


def _question(lines: list[str]) -> str:
    for line in lines:
        stripped = line.lstrip()
        for prefix in ("Question:", "Q:"):
            if stripped.startswith(prefix):
                return stripped[len(prefix) :].strip()
    return ""


def classify(text: str) -> str:
    """The request's class: the first rule of the specification that matches."""
    text = _cut(text)
    tail = _tail(text)
    for mark, name in ((PROVISIONS_MARK, "PROVISIONS"), (SELECT_MARK, "SELECT"), (TREE_MARK, "TREE")):
        if mark in text:
            return name
    if QUERY_MARK in text:
        return "QUERY"
    if STEP_MARK in text:
        return "FINAL" if tail.rstrip().endswith("is:") else "STEP"
    return "COT" if tail.rstrip().endswith("Reasoning:") else "ANSWER"


def raw_reply(text: str) -> str:
    kind = classify(text)
    text = _cut(text)
    tail = _tail(text)
    lines = tail.split("\n")
    key = _question(lines)[:30]
    if kind == "PROVISIONS":
        return json.dumps([key + " 관련 규정", key + " 요건과 효과"], ensure_ascii=False)
    if kind == "SELECT":
        shown = sum(1 for line in lines if _NUMBERED.match(line))
        return "Answer: " + str(len(tail) % shown if shown else 0)
    if kind == "TREE":
        parent = ""
        for line in lines:
            if line.lstrip().startswith("질문:"):
                parent = line.lstrip()[len("질문:") :].strip()
        children = [parent[:20] + " 관련 규정은 무엇인가", parent[:20] + " 요건은 무엇인가"]
        return json.dumps({parent: children}, ensure_ascii=False)
    if kind == "QUERY":
        return "New Query: " + key + " 관련 법령"
    if kind == "FINAL":
        return " " + key + " 결론"
    if kind == "STEP":
        answer = tail.split("\nAnswer:")[-1].strip()
        marker = FINAL_MARKER if FINAL_MARKER in text else SHORT_MARKER
        return key + " 관련 법령을 검토한다. 추가 검토" if not answer else f"{marker} {key} 결론이다"
    if kind == "COT":
        return f"Reasoning: {key} 규정을 적용한다\nAnswer: {key} 답변이다"
    return f"Answer: {key} 답변이다"


def apply_stop(reply: str, stop: list[str] | None) -> str:
    """Cut at the earliest stop string, which is excluded (the servers' default)."""
    cut = len(reply)
    for s in stop or []:
        found = reply.find(s)
        if 0 <= found < cut:
            cut = found
    return reply[:cut]


def respond(text: str, stop: list[str] | None = None) -> tuple[str, str]:
    """(reply, class) for a request text and its stop strings."""
    return apply_stop(raw_reply(text), stop), classify(text)


def token_logprob(char: str) -> float:
    return -(1 + ord(char) % 10) / 10


def request_text(messages: list[dict[str, object]]) -> str:
    """The text the responder reads: every message's content, in order, joined by newlines."""
    return "\n".join(_content(m.get("content")) for m in messages)


def _content(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: the text parts joined
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
