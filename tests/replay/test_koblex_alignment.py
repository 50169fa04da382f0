"""Aligning released KoBLEX rows to questions: text, question alone, checked row order; refusals name the rows.

Every fixture is written here: twelve made-up questions and made-up released rows (no released text).
"""

import os
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from koblex_tasks.cli import main
from koblex_tasks.data.koblex.alignment import MIN_SIMILARITY, align_released_file
from koblex_tasks.data.koblex.released import infer_method_and_model
from koblex_tasks.errors import DataError
from koblex_tasks.replay.koblex import run_replay
from tests.conftest import TINY_STATUTES, statute_key, tiny_question, write_jsonl

SUBJECTS = ["운송", "임대차", "강도", "상속", "선거", "보험", "조세", "행정", "공탁", "어음", "질권", "징계"]
N = len(SUBJECTS)


def question(i: int) -> str:
    return f"갑의 {SUBJECTS[i]} 사건에서 을은 어떤 권리를 행사할 수 있는가? ({i})"


def background(i: int) -> str:
    return f"갑과 을은 {SUBJECTS[i]} 문제로 다투고 있다. 사건 번호 {i}."


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    rows = [
        tiny_question(f"q{i}", [TINY_STATUTES[i % len(TINY_STATUTES)]], question(i), background(i))
        for i in range(N)
    ]
    return write_jsonl(tmp_path / "questions.jsonl", rows)


def row(text: str, i: int) -> dict:
    """A released row: an answer and the gold provision of question i (so provision F1 is 1)."""
    gold = statute_key(TINY_STATUTES[i % len(TINY_STATUTES)])
    return {"question": text, "answers": [{"answer": "정답은 소멸한다.", "logp": -0.1, "comb": [gold]}]}


def full(i: int) -> str:
    return background(i) + question(i)


def reworded(i: int) -> str:
    """An older wording of question i: one word changed."""
    return full(i).replace("어떤 권리를", "어떠한 권리를")


def out_of_order() -> list[tuple[str, int]]:
    """Rows 1 and 2 swapped (text still finds them), so the reworded row 7 cannot be placed by position."""
    texts = [(full(i), i) for i in range(N)]
    texts[0], texts[1] = texts[1], texts[0]
    texts[6] = (reworded(6), 6)
    return texts


def released(tmp_path: Path, texts: list[tuple[str, int]], name: str = "probtree_qwen_8b.jsonl") -> str:
    return str(write_jsonl(tmp_path / name, [row(t, i) for t, i in texts]))


def test_question_only_file_aligns_by_question(tmp_path: Path, questions: Path) -> None:
    # the open-model ParSeR files store the question alone; whitespace never matters
    file = released(tmp_path, [(" " + question(i).replace(" ", "  "), i) for i in range(N)])
    assert align_released_file(file, str(questions)).counts() == {"text": 0, "question": N, "order": 0}


def test_question_only_file_replays_and_logs_the_rule(tmp_path: Path, questions: Path) -> None:
    file = released(tmp_path, [(question(i), i) for i in reversed(range(N))], "parser_qwen32b.jsonl")
    result = run_replay(file, data=str(questions), official=True, log_dir=str(tmp_path / "logs"))
    assert result.alignment == {"text": 0, "question": N, "order": 0}
    assert result.alignment_line == f"aligned rows: text 0, question {N}, order 0"
    assert (result.method, result.model) == ("parser", "Qwen3-32B")
    assert result.headline["provision_f1"] == 1.0  # each row reached its own question despite reversed order
    log = read_eval_log(str(result.log.location))
    assert log.eval.metadata["replay_alignment"] == result.alignment
    by_id = {s.id: s.metadata["replay"] for s in log.samples or []}
    assert by_id["q0"]["rule"] == "question" and by_id["q0"]["line"] == N  # reversed: q0 is the last row


def test_reworded_question_in_dataset_order_aligns_by_order(tmp_path: Path, questions: Path) -> None:
    texts = [(full(i), i) for i in range(N)]
    texts[4] = (reworded(4), 4)
    file = released(tmp_path, texts)
    alignment = align_released_file(file, str(questions))
    assert alignment.counts() == {"text": N - 1, "question": 0, "order": 1}
    aligned = alignment.by_id["q4"]
    assert aligned.rule == "order" and aligned.prediction.line == 5
    assert MIN_SIMILARITY <= aligned.similarity < 1.0
    assert aligned.describe() == {"line": 5, "rule": "order", "similarity": round(aligned.similarity, 4)}
    assert alignment.lines("order") == [5]
    result = run_replay(file, data=str(questions), official=True, log_dir=str(tmp_path / "logs"))
    assert result.alignment_line == f"aligned rows: text {N - 1}, question 0, order 1 (lines 5)"
    log = read_eval_log(str(result.log.location))
    assert log.eval.metadata["replay_order_lines"] == [5]
    [placed] = [s for s in log.samples or [] if s.id == "q4"]
    assert placed.metadata["replay"]["rule"] == "order" and placed.metadata["replay"]["line"] == 5
    assert result.headline["provision_f1"] == 1.0


def test_row_order_that_disagrees_is_refused_naming_rows(tmp_path: Path, questions: Path) -> None:
    file = released(tmp_path, out_of_order())
    with pytest.raises(DataError) as err:
        align_released_file(file, str(questions))
    message = str(err.value)
    assert "1 questions have no prediction and 1 predictions match no question" in message
    assert f"{file}:7 '갑과 을은 조세" in message  # the unplaceable row, named by file:line and its text
    assert "unanswered: question 7 (q6) '갑의 조세 사건에서" in message
    assert "not in dataset order" in message
    assert f"{file}:1 " in message and "is question 2 (q1)" in message  # the row out of place, named


def test_duplicated_row_is_refused_naming_both_lines(tmp_path: Path, questions: Path) -> None:
    texts = [(full(i), i) for i in range(N)]
    texts[3] = texts[2]  # row 4 repeats row 3; question 4 has no row
    file = released(tmp_path, texts)
    with pytest.raises(DataError) as err:
        align_released_file(file, str(questions))
    assert err.value.line == 4
    assert "answers the same question as line 3: question 3 (q2)" in str(err.value)


def test_missing_row_is_refused_naming_the_question(tmp_path: Path, questions: Path) -> None:
    file = released(tmp_path, [(full(i), i) for i in range(N) if i != 5])
    with pytest.raises(DataError) as err:
        align_released_file(file, str(questions))
    message = str(err.value)
    assert "1 questions have no prediction and 0 predictions match no question" in message
    assert "unanswered: question 6 (q5) '갑의 보험 사건에서" in message
    assert f"the file has {N - 1} rows for {N} questions" in message


def test_unrelated_row_in_dataset_order_is_refused(tmp_path: Path, questions: Path) -> None:
    texts = [(full(i), i) for i in range(N)]
    texts[8] = ("전혀 다른 사안이다. 병은 무엇을 해야 하는가?", 8)
    file = released(tmp_path, texts)
    with pytest.raises(DataError) as err:
        align_released_file(file, str(questions))
    message = str(err.value)
    assert "1 rows in dataset order are not near-identical wordings" in message
    assert f"{file}:9 '전혀 다른 사안이다." in message and "vs question 9 (q8)" in message


def test_too_few_rows_matching_by_text_refuses_row_order(tmp_path: Path, questions: Path) -> None:
    texts = [(full(i), i) for i in range(N)]
    for i in (2, 9):  # 10 of 12 rows match: below the 90% that row order requires
        texts[i] = (reworded(i), i)
    file = released(tmp_path, texts)
    expected = r"only 10 of 12 rows match a question by text \(at least 90% needed\)"
    with pytest.raises(DataError, match=expected):
        align_released_file(file, str(questions))


def test_refusal_happens_before_any_eval(
    tmp_path: Path, questions: Path, capsys: pytest.CaptureFixture
) -> None:
    file = released(tmp_path, out_of_order())
    code = main(["replay", file, "--data", str(questions), "--log-dir", str(tmp_path / "logs")])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not in dataset order" in err[0]
    assert not (tmp_path / "logs").exists()


def test_a_changed_file_is_aligned_again(tmp_path: Path, questions: Path) -> None:
    file = released(tmp_path, [(full(i), i) for i in range(N)])
    assert align_released_file(file, str(questions)).counts()["text"] == N
    released(tmp_path, [(question(i), i) for i in range(N)])
    os.utime(file, ns=(1, 1))  # a different signature even within the file system's timestamp resolution
    assert align_released_file(file, str(questions)).counts()["question"] == N


# Every file name in the public repository's results/ folder, with the method and model it denotes.
MODELS = {
    "gpt4o": "gpt-4o",
    "qwen_32b": "Qwen3-32B",
    "qwen_8b": "Qwen3-8B",
    "exaone_32b": "EXAONE-3.5-32B",
    "exaone_7.8b": "EXAONE-3.5-7.8B",
}
METHODS = {
    "sp": "standard_prompting",
    "cot": "chain_of_thought",
    "sp_or": "one_time_retrieval",
    "cot_or": "cot_one_time_retrieval",
    "ircot": "ircot",
    "flare": "flare",
    "probtree": "probtree",
    "beamaggr": "beamaggr",
}
RESULT_NAMES = {
    **{f"{m}_{k}.jsonl": (method, model) for m, method in METHODS.items() for k, model in MODELS.items()},
    "selfask_gpt4o.jsonl": ("self_ask", "gpt-4o"),
    **{f"self-ask_{k}.jsonl": ("self_ask", MODELS[k]) for k in MODELS if k != "gpt4o"},
    "parser_gpt4o.jsonl": ("parser", "gpt-4o"),
    "parser_qwen32b.jsonl": ("parser", "Qwen3-32B"),
    "parser_qwen_8b.jsonl": ("parser", "Qwen3-8B"),
    "parser_exaone_32b.jsonl": ("parser", "EXAONE-3.5-32B"),
    "parser_exaone_7.8b.jsonl": ("parser", "EXAONE-3.5-7.8B"),
}


def test_every_released_name_is_covered() -> None:
    assert len(RESULT_NAMES) == 50


@pytest.mark.parametrize("name", sorted(RESULT_NAMES))
def test_method_and_model_from_every_released_name(name: str) -> None:
    assert infer_method_and_model(f"/somewhere/results/{name}") == RESULT_NAMES[name]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("parser_MyModel.jsonl", ("parser", "MyModel")),  # an unknown model is kept as written
        ("sp_or_llama_70b.jsonl", ("one_time_retrieval", "llama_70b")),
        ("parser_exaone_7.8b", ("parser", "EXAONE-3.5-7.8B")),  # no extension: "7.8b" is not cut
        ("predictions.jsonl", (None, None)),
        ("sp.jsonl", (None, None)),
    ],
)
def test_method_and_model_edge_names(name: str, expected: tuple[str | None, str | None]) -> None:
    assert infer_method_and_model(name) == expected


# Optional: the released open-model files, when a directory of them is at hand (KOBLEX_RELEASED_RESULTS=DIR,
# e.g. a checkout's results/). ParSeR numbers published in the repository's results/parser_*.txt, x100.
RELEASED_ENV = "KOBLEX_RELEASED_RESULTS"
PUBLISHED_PARSER = {
    "parser_qwen32b.jsonl": (46.24, 17.70, 40.65),
    "parser_qwen_8b.jsonl": (34.18, 11.50, 34.64),
    "parser_exaone_32b.jsonl": (48.73, 17.70, 31.09),
    "parser_exaone_7.8b.jsonl": (36.78, 10.62, 24.40),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED_PARSER))
def test_released_open_model_parser_files(name: str, shared_data: Path, tmp_path: Path) -> None:
    folder = os.environ.get(RELEASED_ENV)
    if not folder or not (Path(folder) / name).is_file():
        pytest.skip(f"set {RELEASED_ENV} to a folder holding the released {name}")
    result = run_replay(
        str(Path(folder) / name),
        data=str(shared_data / "koblex" / "koblex.jsonl"),
        official=True,
        log_dir=str(tmp_path),
    )
    assert result.alignment == {"text": 0, "question": 226, "order": 0}
    got = tuple(round(100 * result.headline[k], 2) for k in ("provision_f1", "provision_em", "token_f1"))
    assert got == PUBLISHED_PARSER[name]
