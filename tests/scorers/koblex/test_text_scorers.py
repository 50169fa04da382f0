"""Token F1 and provision matching on hand-computed cases, default and official modes."""

import pytest

from koblex_tasks.scorers.koblex.provision_match import set_match
from koblex_tasks.scorers.koblex.text import normalize, official_prediction, strip_reasoning, token_f1


def test_normalize_keeps_hangul_latin_digits() -> None:
    assert normalize("제337조(강도상해, 치상) ABC-12 ㄱ!") == "제337조 강도상해 치상 abc 12"


def test_token_f1_hand_computed() -> None:
    # pred tokens: 갑은 1년 이내 청구 (4); ref: 갑은 1년 이내에 청구 청구 (5); overlap: 갑은, 1년, 청구 = 3
    p, r, f1 = token_f1("갑은 1년 이내 청구", "갑은 1년 이내에 청구 청구")
    assert (p, r) == (3 / 4, 3 / 5)
    assert f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert token_f1("", "정답") == (0.0, 0.0, 0.0)
    assert token_f1("완전히 다른", "정답") == (0.0, 0.0, 0.0)


def test_official_prediction_cuts_800_chars_and_ignores_think_tags() -> None:
    long = "가" * 900
    assert official_prediction(long) == "가" * 800
    assert official_prediction("<think>x</think>답") == "<think>x</think>답"  # the official split never fires
    assert official_prediction("") == ""
    assert strip_reasoning("<think>생각</think>\n답") == "답"


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        (["a", "b"], ["a", "b"], (1.0, 1.0, 1.0, 1.0)),
        (["a", "a"], ["a"], (1.0, 1.0, 1.0, 1.0)),  # set semantics: duplicates do not count
        (["a", "c"], ["a", "b"], (0.5, 0.5, 0.5, 0.0)),
        ([], ["a"], (0.0, 0.0, 0.0, 0.0)),
        ([], [], (1.0, 1.0, 1.0, 1.0)),  # both empty counts as a match, as in the paper
        (["a", "b", "c"], ["a"], (1 / 3, 1.0, 0.5, 0.0)),
    ],
)
def test_set_match(pred: list[str], gold: list[str], expected: tuple[float, ...]) -> None:
    result = set_match(pred, gold)
    got = (
        result["provision_precision"],
        result["provision_recall"],
        result["provision_f1"],
        result["provision_em"],
    )
    assert got == pytest.approx(expected)
