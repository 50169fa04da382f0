"""`koblex conformance` on the official recordings (shared data) and on a recording written here by hand.

The hand-made folder is a second "recording" on other questions (the tiny test questions and corpus),
written from the fixture format and the official scripts' request construction: it shows the command takes
any folder of that format, and that one changed byte is reported as the first difference.
"""

import json
import math
import os
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from koblex_tasks.cli.main import main
from koblex_tasks.conformance.responder import request_text, respond
from koblex_tasks.prompts import load_prompt
from tests.conftest import TINY_STATUTES, tiny_question, write_jsonl

LINE = re.compile(
    r"^(?P<name>\S+)(?: \((?P<version>\w+) scripts\))?: calls identical (\d+)/(\d+), results identical (\d+)/(\d+), retrieval identical (\d+)/(\d+)$"
)
VLLM_PARAMS = {
    "temperature": 0.0,
    "top_p": 0.9,
    "max_tokens": 4000,
    "seed": 0,
    "logprobs": 1,
    "enable_thinking": False,
}
OPENAI_PARAMS = {"temperature": 0.01, "top_p": 0.9, "max_tokens": 2000}


def conformance(
    folder: Path, data: Path, corpus: Path, capsys: pytest.CaptureFixture[str], *options: str
) -> tuple[int, str]:
    code = main(["conformance", str(folder), "--data", str(data), "--corpus", str(corpus), *options])
    return code, capsys.readouterr().out


def per_file(out: str) -> dict[str, tuple[int, ...]]:
    found = {}
    for line in out.splitlines():
        match = LINE.match(line)
        if match:
            found[match["name"]] = tuple(int(g) for g in match.groups()[2:])
    return found


def test_every_official_recording_is_identical(shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As the docs run it: the ParSeR recordings (made from the refactored scripts) are matched to that version."""
    folder = shared_data / "koblex" / "official_requests"
    code, out = conformance(
        folder, shared_data / "koblex" / "koblex.jsonl", shared_data / "koblex" / "statutes.jsonl", capsys
    )
    files = per_file(out)
    expected = {p.stem for p in folder.glob("*.jsonl") if not p.name.endswith(".retrieval.jsonl")}
    assert set(files) == expected, out
    for calls, n_calls, results, n_results, retrieval, n_retrieval in files.values():
        assert n_calls > 0 and (calls, results, retrieval) == (n_calls, n_results, n_retrieval), out
    assert code == 0 and "first difference" not in out, out
    assert "parser_vllm (refactored scripts): calls identical 32/32" in out, out


def test_parser_defaults_are_the_original_scripts_not_the_refactored(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default ParSeR differs from the refactored scripts' recording (prompts first), the switch does not."""
    folder = shared_data / "koblex" / "official_requests"
    data, corpus = shared_data / "koblex" / "koblex.jsonl", shared_data / "koblex" / "statutes.jsonl"
    only = ("--only", "parser_vllm")
    code, out = conformance(folder, data, corpus, capsys, *only, "--parser-scripts", "original")
    assert code == 1 and "parser_vllm (original scripts): calls identical 0/32" in out, out
    assert "“Article 123”" in out  # the original scripts' system prompt


ORIGINAL_ENV = "KOBLEX_PARSER_ORIGINAL_REQUESTS"


def test_parser_is_identical_to_the_original_scripts_recording(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tools/record_official_requests.py --version original` output (not in the repo: it holds the scripts'
    prompts and the corpus' text): our default ParSeR sends and selects exactly what the original scripts do."""
    folder = Path(os.environ.get(ORIGINAL_ENV, "")) if os.environ.get(ORIGINAL_ENV) else None
    if folder is None or not (folder / "parser_vllm.jsonl").is_file():
        pytest.skip(f"{ORIGINAL_ENV} is not a folder of tools/record_official_requests.py --version original")
    data, corpus = shared_data / "koblex" / "koblex.jsonl", shared_data / "koblex" / "statutes.jsonl"
    code, out = conformance(folder, data, corpus, capsys)
    assert code == 0 and (
        "parser_vllm (original scripts): calls identical 32/32, results identical 8/8, retrieval identical 16/16"
        in out
    )
    code, out = conformance(folder, data, corpus, capsys, "--parser-scripts", "refactored")
    assert code == 1 and "first difference" in out, out  # the refactored switch is not the original scripts


def test_the_responder_rederives_every_recorded_reply(shared_data: Path) -> None:
    folder = shared_data / "koblex" / "official_requests"
    n = 0
    for path in folder.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("type") == "call":
                reply, kind = respond(request_text(row["messages"]), row["params"].get("stop"))
                assert (reply, kind) == (row["reply"], row["stage"].rsplit(":", 1)[1]), (
                    path.name,
                    row["index_in_question"],
                )
                n += 1
    assert n == 296  # official_requests/README: 296 of 296


# --- a recording written by hand on other questions --------------------------------------------------

# id -> background, question, gold rows: other questions than the official recordings', sharing words with the
# tiny corpus (so no BM25 list ends in zero-score rows, whose order is bm25s' own)
OTHER_QUESTIONS = {
    "h1": ("운송인이 운송물을 인도하였다.", "수하인의 채권은 언제 소멸하는가?", [1]),
    "h2": ("강도가 사람을 상해하였다.", "절도가 폭행 또는 협박한 때에는 어떻게 처벌되는가?", [2, 3]),
}


@pytest.fixture
def other_questions(tmp_path: Path) -> Path:
    rows = [
        tiny_question(qid, [TINY_STATUTES[i] for i in gold], q, bg)
        for qid, (bg, q, gold) in OTHER_QUESTIONS.items()
    ]
    return write_jsonl(tmp_path / "other_questions.jsonl", rows)


def _text(name: str, version: str = "v1") -> str:
    return load_prompt(f"koblex/{name}", version).text


def _call(qid: str, name: str, messages: list[dict[str, str]], params: dict) -> dict:
    method, backend = name.rsplit("_", 1)
    reply, kind = respond(request_text(messages), params.get("stop"))
    return {
        "type": "call",
        "question_id": qid,
        "index_in_question": 0,
        "stage": f"{method}:{kind}",
        "backend": backend,
        "model": "Qwen/Qwen3-8B" if backend == "vllm" else "gpt-4o",
        "messages": messages,
        "params": dict(params),
        "reply": reply,
        "reply_has_logprobs": "logprobs" in params,
    }


def _tokens(text: str) -> list[str]:
    return re.findall(r"(?u)\b\w\w+\b", text.lower())  # bm25s' default pattern, as the official scripts use


def _bm25(query: str, k: int) -> tuple[list[int], list[float]]:
    """Lucene BM25 as bm25s computes it (k1 1.5, b 0.75, float32 per term) over hierarchy + content."""
    docs = [_tokens(r["hierarchy"] + r["content"]) for r in TINY_STATUTES]
    n, avg = len(docs), sum(map(len, docs)) / len(docs)
    df = Counter(t for d in docs for t in set(d))
    scores = []
    for doc in docs:
        tf, total = Counter(doc), np.float32(0)
        for term in sorted(set(_tokens(query)) & set(doc)):
            idf = np.float32(math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5)))
            tfc = np.float32(tf[term] / (1.5 * (0.25 + 0.75 * len(doc) / avg) + tf[term]))
            total = np.float32(total + np.float32(idf * tfc))
        scores.append(float(total))
    top = sorted(range(n), key=lambda i: -scores[i])[:k]
    assert all(scores[i] > 0 for i in top)
    return top, [scores[i] for i in top]


def write_recording(folder: Path) -> None:
    """sp_vllm (system + user turns), cot_openai (one user message after the SP system text) and sp_or_openai
    with its BM25 lists (k = the gold count), as the official scripts build them, for OTHER_QUESTIONS."""
    folder.mkdir(parents=True, exist_ok=True)
    calls: dict[str, list[dict]] = {"sp_vllm": [], "cot_openai": [], "sp_or_openai": []}
    results: dict[str, list[dict]] = {name: [] for name in calls}
    retrieval = []
    for qid, (background, question, gold) in OTHER_QUESTIONS.items():
        joined = background + question  # the scripts' $question: no separator
        ids, scores = _bm25(joined, len(gold))
        context = "\n".join(TINY_STATUTES[i]["hierarchy"] + TINY_STATUTES[i]["content"] for i in ids)
        sp_or = _text("sp_or", "v2").replace("$question", joined).replace("$context_str", context)
        requests = {
            "sp_vllm": (
                [
                    {"role": "system", "content": _text("sp_system")},
                    {"role": "user", "content": _text("sp", "v2").replace("$question", joined)},
                ],
                VLLM_PARAMS,
            ),
            "cot_openai": (
                [
                    {
                        "role": "user",
                        "content": f"{_text('sp_system')}\n\n"
                        + _text("cot", "v2").replace("$question", joined),
                    }
                ],
                OPENAI_PARAMS,
            ),
            "sp_or_openai": (
                [{"role": "user", "content": f"{_text('sp_or_system')}\n\n{sp_or}"}],
                OPENAI_PARAMS,
            ),
        }
        for name, (messages, params) in requests.items():
            call = _call(qid, name, messages, params)
            calls[name].append(call)
            answer = call["reply"].split("Answer:")[-1].strip()
            results[name].append(
                {"type": "final_output", "question_id": qid, "row": {"question": joined, "answer": answer}}
            )
        retrieval.append(
            {
                "question_id": qid,
                "retrieval_index": len(retrieval),
                "stage": "sp_or",
                "query": joined,
                "query_tokens": _tokens(joined),
                "k": len(gold),
                "bm25_ids": ids,
                "bm25_scores": scores,
                "reranked_top10_ids": None,
            }
        )
    for name in calls:
        write_jsonl(folder / f"{name}.jsonl", calls[name] + results[name])  # calls, then the result rows
    write_jsonl(folder / "sp_or_openai.retrieval.jsonl", retrieval)


def test_a_recording_on_other_questions_passes_unchanged(
    other_questions: Path, tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "recorded"
    write_recording(folder)
    code, out = conformance(folder, other_questions, tiny_corpus, capsys)
    assert per_file(out) == {
        "cot_openai": (2, 2, 2, 2, 0, 0),
        "sp_or_openai": (2, 2, 2, 2, 2, 2),
        "sp_vllm": (2, 2, 2, 2, 0, 0),
    }, out
    assert code == 0, out


def test_one_changed_byte_is_the_first_difference(
    other_questions: Path, tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "recorded"
    write_recording(folder)
    path = folder / "sp_vllm.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    call = next(r for r in rows if r["type"] == "call" and r["question_id"] == "h2")
    content = call["messages"][1]["content"]
    at = content.rindex("<Query>") + 1
    call["messages"][1]["content"] = content[:at] + "q" + content[at + 1 :]  # one byte: <Query> -> <query>
    write_jsonl(path, rows)
    code, out = conformance(folder, other_questions, tiny_corpus, capsys)
    assert code == 1
    files = per_file(out)
    assert files["sp_vllm"][:2] == (1, 2) and files["cot_openai"] == (2, 2, 2, 2, 0, 0), out
    first = out.split("sp_vllm:", 1)[1].splitlines()[1]
    assert first.startswith("  first difference: question h2, call 0, field messages[1].content:"), out
    assert (
        f"@{at}: " in first
        and "<query>" in first.split(" / ours ")[0]
        and "<Query>" in first.split(" / ours ")[1]
    )
