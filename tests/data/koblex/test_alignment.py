"""Aligning released KoBLEX rows to questions: text, question alone, checked row order; refusals name the rows.

Row order is the shape of the released ProbTree/BeamAggr open-model files: older wordings of up to 28
questions in dataset order (down to 0.74 similar), every text-matched row at its own position.

Every fixture is written here: twelve made-up questions and made-up released rows (no released text).
"""

import os
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from koblex_tasks.cli.main import main
from koblex_tasks.data.koblex.alignment import MIN_SIMILARITY, align_released_file
from koblex_tasks.data.koblex.released import infer_method_and_model
from koblex_tasks.errors import DataError
from koblex_tasks.tasks.koblex.replay import run_replay
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


def older(i: int) -> str:
    """A much older wording of question i: background reordered, sentences rewritten (about 0.66 similar)."""
    return (
        f"사건 번호 {i}. 갑과 을은 {SUBJECTS[i]} 문제로 오래 다투어 왔다. "
        f"이 경우 갑의 {SUBJECTS[i]} 사건에서 을이 행사할 수 있는 권리는 무엇인가? ({i})"
    )


def near(i: int) -> str:
    """A wording about 0.88 similar to question i (the released EXAONE-7.8B row 194's shape)."""
    return background(i).replace("다투고 있다", "분쟁 중이다") + question(i).replace(
        "어떤 권리를", "어떠한 권리를"
    )


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
    assert aligned.runner_up is not None and aligned.runner_up < aligned.similarity
    assert aligned.describe() == {
        "line": 5,
        "rule": "order",
        "similarity": round(aligned.similarity, 4),
        "closest_other_similarity": round(aligned.runner_up, 4),
    }
    assert alignment.lines("order") == [5]
    result = run_replay(file, data=str(questions), official=True, log_dir=str(tmp_path / "logs"))
    expected = (
        f"aligned rows: text {N - 1}, question 0, order 1; 1 reworded rows paired by position as the official "
        f"code does, lowest similarity {aligned.similarity:.2f} (line 5); lines 5"
    )
    assert result.alignment_line == expected
    log = read_eval_log(str(result.log.location))
    assert log.eval.metadata["replay_order_lines"] == [5]
    assert log.eval.metadata["replay_alignment_summary"] == expected
    assert log.eval.metadata["replay_lowest_similarity"] == pytest.approx(aligned.similarity)
    [placed] = [s for s in log.samples or [] if s.id == "q4"]
    assert placed.metadata["replay"]["rule"] == "order" and placed.metadata["replay"]["line"] == 5
    assert placed.metadata["replay"]["similarity"] == round(aligned.similarity, 4)
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
    assert "1 rows in dataset order are not rewordings of the question at their position" in message
    assert f"{file}:9 '전혀 다른 사안이다." in message and "vs question 9 (q8)" in message


def test_many_older_wordings_in_dataset_order_pair_by_position(tmp_path: Path, questions: Path) -> None:
    """The refused released files' shape: 28 of 226 rows in an older wording (here 5 of 12, 0.66 similar) and a
    0.88-similar row, every text match at its own place: paired by position, as the official code pairs them."""
    texts = [(full(i), i) for i in range(N)]
    for i in (1, 2, 3, 9):
        texts[i] = (older(i), i)
    texts[7] = (near(7), 7)
    file = released(tmp_path, texts)
    alignment = align_released_file(file, str(questions))
    assert alignment.counts() == {"text": N - 5, "question": 0, "order": 5}
    assert alignment.lines("order") == [2, 3, 4, 8, 10]
    placed = {i: alignment.by_id[f"q{i}"] for i in (1, 2, 3, 7, 9)}
    assert all(a.rule == "order" and a.prediction.line == i + 1 for i, a in placed.items())
    assert 0.85 <= placed[7].similarity < 0.9  # refused by the former 0.9 bar
    lowest = alignment.lowest_similarity()
    assert lowest is not None and MIN_SIMILARITY <= lowest[0] < 0.7
    assert lowest == min((placed[i].similarity, i + 1) for i in (1, 2, 3, 9))
    summary = alignment.summary()
    assert summary.startswith(
        f"aligned rows: text {N - 5}, question 0, order 5; 5 reworded rows paired by position"
    )
    assert f"lowest similarity {lowest[0]:.2f} (line {lowest[1]}); lines 2, 3, 4, 8, 10" in summary
    result = run_replay(file, data=str(questions), official=True, log_dir=str(tmp_path / "logs"))
    assert result.headline["provision_f1"] == 1.0  # each row answered its own question
    assert result.alignment_line == summary


def test_swapped_rewordings_are_refused(tmp_path: Path, questions: Path) -> None:
    """No text match is out of place, yet rows 4 and 6 hold each other's (reworded) question: refused."""
    texts = [(full(i), i) for i in range(N)]
    texts[3], texts[5] = (older(5), 3), (older(3), 5)
    file = released(tmp_path, texts)
    with pytest.raises(DataError) as err:
        align_released_file(file, str(questions))
    message = str(err.value)
    assert "2 rows in dataset order are not rewordings of the question at their position" in message
    assert f"{file}:4 " in message and "vs question 4 (q3)" in message
    assert "question 6 (q5) '갑의 보험 사건에서 을은 어떤 권리를 행사할 수 있는가…' is as close" in message


def test_a_text_match_at_another_position_refuses_row_order(tmp_path: Path, questions: Path) -> None:
    """Row 3 holds question 10's exact text while question 10's own row is reworded: not in dataset order."""
    texts = [(full(i), i) for i in range(N)]
    texts[2] = (full(9), 9)
    texts[9] = (older(2), 2)
    file = released(tmp_path, texts)
    with pytest.raises(DataError) as err:
        align_released_file(file, str(questions))
    message = str(err.value)
    assert "row order not used: its rows are not in dataset order" in message
    assert f"{file}:3 " in message and "is question 10 (q9)" in message


def test_too_few_rows_matching_by_text_refuses_row_order(tmp_path: Path, questions: Path) -> None:
    texts = [(full(i), i) for i in range(N)]
    for i in range(7):  # 5 of 12 rows match: fewer than the half that row order requires
        texts[i] = (reworded(i), i)
    file = released(tmp_path, texts)
    expected = r"only 5 of 12 rows match a question by text \(at least 50% needed\)"
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


# Optional: every released file, when a directory of them is at hand (KOBLEX_RELEASED_RESULTS=DIR, e.g. a checkout's
# results/ of daehuikim/KoBLEX). Expected: provision F1, EM, token F1 x100 as the official metric code computes them
# (experiments/lf-eval/eval_pipeline.py's functions, rows paired with questions by position, at commit 1a2d225);
# the GPT-4o values are the paper's Table 2 and the open-model ParSeR ones the released results/parser_*.txt.
RELEASED_ENV = "KOBLEX_RELEASED_RESULTS"
OFFICIAL = {
    "beamaggr_exaone_32b.jsonl": (5.36, 0.44, 10.83),
    "beamaggr_exaone_7.8b.jsonl": (5.94, 0.88, 10.90),
    "beamaggr_gpt4o.jsonl": (16.89, 3.54, 22.83),
    "beamaggr_qwen_32b.jsonl": (14.05, 2.65, 16.02),
    "beamaggr_qwen_8b.jsonl": (11.27, 2.65, 17.75),
    "cot_exaone_32b.jsonl": (None, None, 23.71),
    "cot_exaone_7.8b.jsonl": (None, None, 18.99),
    "cot_gpt4o.jsonl": (None, None, 32.34),
    "cot_or_exaone_32b.jsonl": (21.50, 7.08, 28.82),
    "cot_or_exaone_7.8b.jsonl": (21.50, 7.08, 22.64),
    "cot_or_gpt4o.jsonl": (21.50, 7.08, 30.68),
    "cot_or_qwen_32b.jsonl": (21.50, 7.08, 28.39),
    "cot_or_qwen_8b.jsonl": (21.50, 7.08, 26.68),
    "cot_qwen_32b.jsonl": (None, None, 26.37),
    "cot_qwen_8b.jsonl": (None, None, 22.99),
    "flare_exaone_32b.jsonl": (25.23, 3.98, 21.31),
    "flare_exaone_7.8b.jsonl": (20.38, 3.10, 11.84),
    "flare_gpt4o.jsonl": (31.75, 4.42, 34.37),
    "flare_qwen_32b.jsonl": (27.25, 4.87, 26.15),
    "flare_qwen_8b.jsonl": (25.40, 5.31, 22.72),
    "ircot_exaone_32b.jsonl": (15.89, 1.77, 26.31),
    "ircot_exaone_7.8b.jsonl": (19.19, 3.98, 14.51),
    "ircot_gpt4o.jsonl": (23.91, 4.42, 31.39),
    "ircot_qwen_32b.jsonl": (20.42, 4.42, 31.62),
    "ircot_qwen_8b.jsonl": (21.79, 4.87, 12.72),
    "parser_exaone_32b.jsonl": (48.73, 17.70, 31.09),
    "parser_exaone_7.8b.jsonl": (36.78, 10.62, 24.40),
    "parser_gpt4o.jsonl": (59.41, 26.99, 46.14),
    "parser_qwen32b.jsonl": (46.24, 17.70, 40.65),
    "parser_qwen_8b.jsonl": (34.18, 11.50, 34.64),
    "probtree_exaone_32b.jsonl": (11.61, 2.21, 24.67),
    "probtree_exaone_7.8b.jsonl": (7.76, 0.88, 19.61),
    "probtree_gpt4o.jsonl": (17.32, 3.98, 33.91),
    "probtree_qwen_32b.jsonl": (15.84, 2.65, 28.38),
    "probtree_qwen_8b.jsonl": (13.26, 3.10, 28.53),
    "self-ask_exaone_32b.jsonl": (8.55, 1.33, 14.72),
    "self-ask_exaone_7.8b.jsonl": (4.57, 0.88, 9.12),
    "self-ask_qwen_32b.jsonl": (9.29, 2.65, 16.59),
    "self-ask_qwen_8b.jsonl": (10.03, 2.21, 6.19),
    "selfask_gpt4o.jsonl": (8.55, 1.77, 7.82),
    "sp_exaone_32b.jsonl": (None, None, 23.04),
    "sp_exaone_7.8b.jsonl": (None, None, 15.99),
    "sp_gpt4o.jsonl": (None, None, 36.20),
    "sp_or_exaone_32b.jsonl": (21.50, 7.08, 20.58),
    "sp_or_exaone_7.8b.jsonl": (21.50, 7.08, 16.79),
    "sp_or_gpt4o.jsonl": (21.50, 7.08, 26.75),
    "sp_or_qwen_32b.jsonl": (21.50, 7.08, 32.18),
    "sp_or_qwen_8b.jsonl": (21.50, 7.08, 27.32),
    "sp_qwen_32b.jsonl": (None, None, 30.52),
    "sp_qwen_8b.jsonl": (None, None, 25.87),
}
# Rows placed by position (older wordings of the question), per released file; every other row matches by text.
REWORDED = {
    **{f"{m}_qwen_32b.jsonl": 28 for m in ("probtree", "beamaggr")},
    **{f"{m}_exaone_32b.jsonl": 13 for m in ("probtree", "beamaggr")},
    **{f"{m}_exaone_7.8b.jsonl": 13 for m in ("probtree", "beamaggr")},
    **{f"{m}_qwen_8b.jsonl": 4 for m in ("probtree", "beamaggr")},
}
QUESTION_ONLY = {f"parser_{k}.jsonl" for k in ("qwen32b", "qwen_8b", "exaone_32b", "exaone_7.8b")}


def test_the_official_numbers_cover_every_released_file() -> None:
    assert set(OFFICIAL) == set(RESULT_NAMES)


@pytest.mark.parametrize("name", sorted(OFFICIAL))
def test_released_file_reproduces_the_official_metrics(name: str, shared_data: Path, tmp_path: Path) -> None:
    folder = os.environ.get(RELEASED_ENV)
    if not folder or not (Path(folder) / name).is_file():
        pytest.skip(f"set {RELEASED_ENV} to a folder holding the released {name} (daehuikim/KoBLEX results/)")
    result = run_replay(
        str(Path(folder) / name),
        data=str(shared_data / "koblex" / "koblex.jsonl"),
        official=True,
        log_dir=str(tmp_path),
    )
    n = 226
    order = REWORDED.get(name, 0)
    rule = "question" if name in QUESTION_ONLY else "text"
    assert result.alignment == {"text": 0, "question": 0, "order": order} | {rule: n - order}
    f1, em, tok = OFFICIAL[name]
    assert round(100 * result.headline["token_f1"], 2) == tok
    if f1 is None:
        assert set(result.headline) == {"token_f1"}
    else:
        assert round(100 * result.headline["provision_f1"], 2) == f1
        assert round(100 * result.headline["provision_em"], 2) == em
