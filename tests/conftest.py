"""Shared fixtures: the real data (read in place, skipped when absent), an isolated index cache, tiny corpora."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.model import GenerateConfig, Logprob, Logprobs, ModelOutput, TopLogprob

from tests.legit_helpers import (  # noqa: F401  (LEGIT fixtures, shared by several folders)
    legit_shared,
    record_by_id,
    sample_file,
    sample_records,
    tiny_legit,
)

SHARED_ENV = "KOBLEX_SHARED_DATA"


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Index caches go to a per-session temp dir, never the user's cache."""
    os.environ["KOBLEX_CACHE_DIR"] = str(tmp_path_factory.mktemp("koblex-cache"))


@pytest.fixture(autouse=True)
def _fresh_retrievers() -> None:
    from koblex_tasks.corpus.retriever import clear_retrievers

    clear_retrievers()


@pytest.fixture(autouse=True)
def _own_excepthook() -> Iterator[None]:
    """A test that runs Inspect's CLI in-process installs its exception hook for good; the next test's
    `eval()` would then behave as under the CLI (a rejected request exits 1). Each test gets the hook back."""
    hook = sys.excepthook
    yield
    sys.excepthook = hook


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`$KOBLEX_SHARED_DATA` (the read-only shared/data folder); tests using it skip when it is absent."""
    root = os.environ.get(SHARED_ENV)
    if not root:
        pytest.skip(f"{SHARED_ENV} is not set: point it at shared/data to run the real-data tests")
    # CI passes it relative (../shared/data): resolved, so tests that change folder still find it
    path = Path(root).resolve()
    if not (path / "koblex" / "koblex.jsonl").is_file():
        pytest.skip(f"{SHARED_ENV}={root} does not contain koblex/koblex.jsonl")
    return path


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


TINY_STATUTES = [
    {
        "id": "민법 766조 1항",
        "hierarchy": "민법 766조  손해배상청구권의 소멸시효 1항",
        "content": "①불법행위로 인한 손해배상의 청구권은 손해 및 가해자를 안 날로부터 3년간 이를 행사하지 아니하면 시효로 인하여 소멸한다.",
    },
    {
        "id": "상법 814조 1항",
        "hierarchy": "상법 814조  운송인의 채권ㆍ채무의 소멸 1항",
        "content": "①운송인의 송하인 또는 수하인에 대한 채권 및 채무는 운송인이 수하인에게 운송물을 인도한 날부터 1년 이내에 재판상 청구가 없으면 소멸한다.",
    },
    {
        "id": "형법 337조",
        "hierarchy": "형법 337조  강도상해, 치상",
        "content": "제337조(강도상해, 치상) 강도가 사람을 상해하거나 상해에 이르게 한때에는 무기 또는 7년 이상의 징역에 처한다.",
    },
    {
        "id": "형법 335조",
        "hierarchy": "형법 335조  준강도",
        "content": "제335조(준강도) 절도가 재물의 탈환에 항거하거나 체포를 면탈할 목적으로 폭행 또는 협박한 때에는 제333조의 예에 따른다.",
    },
    {
        "id": "행정소송법 27조",
        "hierarchy": "행정소송법 27조  재량처분의 취소",
        "content": "제27조(재량처분의 취소) 행정청의 재량에 속하는 처분이라도 재량권의 한계를 넘거나 그 남용이 있는 때에는 법원은 이를 취소할 수 있다.",
    },
]


def statute_key(row: dict) -> str:
    return row["hierarchy"] + row["content"]


def tiny_question(qid: str, gold_rows: list[dict], question: str, background: str = "배경 사실이다.") -> dict:
    return {
        "id": qid,
        "question": question,
        "answer": "정답은 소멸한다.",
        "background": background,
        "question_eng": "q",
        "answer_eng": "a",
        "background_eng": "b",
        "n_hops": len(gold_rows),
        "contexts": [
            {
                "index": r["hierarchy"],
                "hierarchy": r["hierarchy"],
                "content": r["content"],
                "hierarchy_eng": "ENG " + r["id"],
                "content_eng": "eng text",
            }
            for r in gold_rows
        ],
    }


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "statutes.jsonl", TINY_STATUTES)


@pytest.fixture
def tiny_questions(tmp_path: Path) -> Path:
    rows = [
        tiny_question("q1", [TINY_STATUTES[1]], "운송물 인도 후 손해배상 청구는 언제 소멸하는가?"),
        tiny_question("q2", [TINY_STATUTES[2], TINY_STATUTES[3]], "강도가 상해를 입히면 어떤 처벌을 받는가?"),
    ]
    return write_jsonl(tmp_path / "questions.jsonl", rows)


# The ten released GPT-4o files replayed once per session into real Inspect logs (official scoring), shared by
# the replay tests and the leaderboard tests. Replays run in two worker processes (each is a full eval).
# Set KOBLEX_LEADERBOARD_TEST_LOGS=DIR to reuse logs replayed earlier (DIR must hold the ten `.eval` files).
REUSE_ENV = "KOBLEX_LEADERBOARD_TEST_LOGS"
WORKER = """
import sys
from koblex_tasks.tasks.koblex.replay import run_replay
data, log_dir, files = sys.argv[1], sys.argv[2], sys.argv[3:]
for f in files:
    run_replay(f, data=data, official=True, log_dir=log_dir)
"""


@pytest.fixture(scope="session")
def replay_logs(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """method file stem (parser_gpt4o, ...) -> its replayed .eval log."""
    from inspect_ai.log import read_eval_log

    released = sorted((shared_data / "koblex" / "released_gpt4o").glob("*.jsonl"))
    if len(released) != 10:
        pytest.skip(f"expected 10 released GPT-4o files in {shared_data}/koblex/released_gpt4o")
    reuse = os.environ.get(REUSE_ENV)
    if reuse:
        log_dir = Path(reuse)
    else:
        log_dir = tmp_path_factory.mktemp("replays")
        data = str(shared_data / "koblex" / "koblex.jsonl")
        halves = [released[0::2], released[1::2]]
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, data, str(log_dir), *map(str, part)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for part in halves
        ]
        for proc in procs:
            _out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-2000:]
    logs: dict[str, Path] = {}
    for path in sorted(log_dir.glob("*.eval")):
        replay_file = read_eval_log(str(path), header_only=True).eval.solver_args.get("file", "")
        logs[Path(replay_file).stem] = path
    assert set(logs) == {p.stem for p in released}, sorted(logs)
    return logs


# A judged KoBLEX log, shared by the LF-Eval audit and leaderboard judge-column tests.
JUDGE_SCORES = {"q1": "9", "q2": "3"}


def judge_reply(  # a scripted LF-Eval judge: 9 for q1, 3 for q2, with logprobs, for either prompt variant
    messages, tools, tool_choice, config: GenerateConfig
) -> ModelOutput:
    prompt = messages[-1].text
    return certain_judge_output(prompt, JUDGE_SCORES["q1" if "운송물" in prompt else "q2"])


def certain_judge_output(prompt: str, score: str) -> ModelOutput:
    """A judge's reply giving `score` with certainty (logprob 0 on every token), for either LF-Eval prompt."""
    from koblex_tasks.providers.koblexmock import is_lf_eval_json_prompt, usage_for

    # DeepEval's prompt gets its JSON object, tokenised with the score as its own token; the bare one the score
    tokens = ['{"', "score", '":', " ", score, ",", ' "', "reason", '":', ' "', "ok", '"}']
    tokens = tokens if is_lf_eval_json_prompt(prompt) else [score]
    out = ModelOutput.from_content(model="judge", content="".join(tokens))
    out.choices[0].logprobs = Logprobs(
        content=[
            Logprob(token=t, logprob=0.0, top_logprobs=[TopLogprob(token=t, logprob=0.0)]) for t in tokens
        ]
    )
    out.usage = usage_for(prompt, out.completion)
    return out


@pytest.fixture
def judged_log(tiny_questions: Path, tiny_corpus: Path, tmp_path: Path) -> str:
    """A KoBLEX run on the tiny data with a scripted LF-Eval judge (logprobs; scores 9 and 3 -> 90, 30)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from koblex_tasks.solvers.koblex.standard_prompting import standard_prompting
    from koblex_tasks.tasks.koblex.task import koblex

    model = get_model("mockllm/model", custom_outputs=lambda *a: _answer())
    judge = get_model("mockllm/model", custom_outputs=judge_reply)
    task = koblex(data=str(tiny_questions), corpus=str(tiny_corpus), reranker="none", judge=True)
    [log] = inspect_eval(
        task,
        solver=standard_prompting(),
        model=model,
        model_roles={"grader": judge},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success"
    return log.location


def _answer() -> ModelOutput:
    from koblex_tasks.providers.koblexmock import usage_for

    out = ModelOutput.from_content(model="m", content="Answer: 소멸한다")
    out.usage = usage_for("x", "y")
    return out


# The fast lane (`pytest -m "not slow"`, under 2 minutes on 2 cores) leaves out what costs most: tests that need
# the ten released files replayed into logs (a session fixture of full evals), and these modules, which run the
# CLI in subprocesses, a local server, or a killed and retried eval. Tests mark themselves slow too.
SLOW_FIXTURES = frozenset({"replay_logs", "seeded_db", "seeded_site"})
SLOW_MODULES = frozenset(
    {
        "tests/test_errors.py",
        "tests/tasks/koblex/test_eval_retry.py",
        "tests/conformance/test_conformance.py",
        "tests/conformance/test_released_traces.py",  # released files replayed, one eval each
        "tests/solvers/koblex/test_multihop_solvers.py",
        "tests/grid/test_grid_run.py",
        "tests/grid/test_legit_grid.py",
        "tests/tasks/koblex/test_replay.py",
        "tests/tasks/koblex/test_rederive.py",  # replays released files through the task
        "tests/leaderboard/test_recovered.py",  # kills a run and retries it
        "tests/conformance/test_live_protocol.py",  # a local server and a vLLM-protocol eval
        "tests/cli/test_replay_released_name.py",  # a full released-file replay
        "tests/corpus/test_reference.py",  # brute-force BM25 over the whole shared corpus
        "tests/leaderboard/test_earned_placement.py",  # a 226-sample eval through the CLI
    }
)
ROOT = Path(__file__).resolve().parent.parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.resolve().relative_to(ROOT).as_posix()
        if module in SLOW_MODULES or SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
