"""The pieces of the event rules: window hashes find a copied text; what the model could see is exempt."""

from __future__ import annotations

from koblex_tasks.containment import digest, normalised, scan, windows
from koblex_tasks.logs.event_rules import Seen, _gold_in, _problem_in

GOLD = "상법 814조  운송인의 채권ㆍ채무의 소멸 1항① 운송인의 송하인 또는 수하인에 대한 채권 및 채무는 그 청구원인의 여하에 불구하고 운송인이 수하인에게 운송물을 인도한 날 또는 인도할 날부터 1년 이내에 재판상 청구가 없으면 소멸한다."
OTHER = "민법 750조 불법행위의 내용 고의 또는 과실로 인한 위법행위로 타인에게 손해를 가한 자는 그 손해를 배상할 책임이 있다."


def entry(text: str) -> dict:
    chars, hashes = windows(text)
    return {"key": digest(text), "chars": chars, "windows": hashes}


def test_a_copied_text_is_found_through_its_windows_whatever_the_spacing_and_width() -> None:
    chars, hashes = windows(GOLD)
    assert chars == 32 and len(hashes) > 10
    copied = "문맥:\n" + GOLD.replace(" ", "  ").replace("１", "1") + "\n끝"
    assert scan(copied, [chars]) & set(hashes)
    assert not scan(OTHER, [chars]) & set(hashes)
    half = GOLD[len(GOLD) // 2 :]  # half a paragraph is still a copy
    assert scan(half, [chars]) & set(hashes)


def test_a_short_text_is_one_window_of_its_own_length() -> None:
    chars, hashes = windows("제1조(목적)")
    assert chars == len(normalised("제1조(목적)")) and len(hashes) == 1
    assert scan("다음 제1조(목적) 조문", [chars]) & set(hashes)


def test_gold_in_a_model_input_is_flagged_until_a_retrieval_returned_it() -> None:
    gold = [entry(GOLD)]
    seen = Seen()
    seen.add("배경 사실이다.")
    assert _gold_in(f"질문\n{GOLD}", gold, seen) == digest(GOLD)
    seen.returned.add(digest(GOLD))  # a recorded retrieval returned it
    assert _gold_in(f"질문\n{GOLD}", gold, seen) is None


def test_a_window_covered_by_what_the_model_could_see_is_no_copy() -> None:
    """Two retrieved provisions side by side can form a gold window across their seam; seen text covers it."""
    first, second = GOLD[: len(GOLD) // 2], GOLD[len(GOLD) // 2 :]
    seen = Seen()
    seen.add(first)
    seen.add(second)
    assert _gold_in(f"1: {first}\n{second}", [entry(GOLD)], seen) is None
    bare = Seen()
    bare.add(first)
    assert _gold_in(f"1: {first}\n{second}", [entry(GOLD)], bare) == digest(GOLD)


def test_the_reference_answer_in_a_prompt_unless_the_model_saw_it_anyway() -> None:
    target = normalised("을은 인도한 날부터 1년 이내에 재판상 청구를 하여야 한다.")
    seen = Seen()
    seen.add("배경")
    assert _problem_in(f"질문. 힌트: {target}", target, [], seen, "a model input") is not None
    seen.add(f"모델이 쓴 답: {target}")  # the evaluated model wrote it earlier in the sample
    assert _problem_in(f"질문. 힌트: {target}", target, [], seen, "a model input") is None
    assert _problem_in("예", "예", [], Seen(), "a model input") is None  # a one-word answer trips nothing
