"""The 5/2/3 rubric arithmetic on real trees (hand-computed), both rules, ancestry, judge-reply parsing."""

import math
from string import Template

import pytest

from koblex_tasks.prompts import load_prompt
from koblex_tasks.scorers.legit.rubric import Verdict, judge_prompt_text, parse_judge_reply, rubric_score

T, F = True, False


def labels(spec: dict[str, tuple[bool, bool] | None]) -> dict[str, Verdict | None]:
    return {k: (Verdict(*v) if v is not None else None) for k, v in spec.items()}


def check(result, total, final, coverage, correctness) -> None:
    assert result.legit_score == pytest.approx(total)
    assert result.final_order == pytest.approx(final)
    assert result.coverage == pytest.approx(coverage)
    assert result.correctness == pytest.approx(correctness)


def test_easy_tree_both_rules(record_by_id) -> None:
    record = record_by_id("부산지방법원-2017구합23")
    ids = record.issue_ids
    assert ids == ["", "1", "1.1", "1.2"]  # N = 3
    spec = labels({"": (T, T), "1": (T, T), "1.1": (T, F), "1.2": (F, F)})
    # paper: 5 + coverage(1, 1.1) 2*2/3 + correctness(1) 3/3
    check(rubric_score(ids, spec, "paper"), 5 + 4 / 3 + 1, 5, 4 / 3, 1)
    # official: 1.1 is covered but wrong -> its ancestors "1" and the root score 0; 1.1 keeps 2/3
    result = rubric_score(ids, spec, "official")
    check(result, 2 / 3, 0, 2 / 3, 0)
    assert result.issue_scores == pytest.approx({"": 0, "1": 0, "1.1": 2 / 3, "1.2": 0})


def test_medium_tree_root_needs_coverage_only_under_official(record_by_id) -> None:
    record = record_by_id("부산지방법원동부지원-2015가합938")
    ids = record.issue_ids
    assert ids == ["", "1", "1.1", "1.1.1", "1.1.2"]  # N = 4
    spec = labels({"": (F, T), "1": (T, T), "1.1": (T, T), "1.1.1": (F, F), "1.1.2": (T, T)})
    # paper: root counts on correct_conclusion alone: 5 + 3*2/4 + 3*3/4
    check(rubric_score(ids, spec, "paper"), 8.75, 5, 1.5, 2.25)
    # official: root also needs contains_issue; an uncovered descendant (1.1.1) zeroes nothing
    check(rubric_score(ids, spec, "official"), 3.75, 0, 1.5, 2.25)


def test_hard_tree_both_rules(record_by_id) -> None:
    record = record_by_id("대전지방법원-2016가단7699")
    ids = record.issue_ids
    assert ids == ["", "1", "2", "2.1", "2.2", "3", "3.1", "3.2", "4"]  # N = 8
    spec = labels(
        {
            "": (T, T),
            "1": (T, T),
            "2": (T, T),
            "2.1": (T, F),
            "2.2": (T, T),
            "3": (T, F),
            "3.1": (T, T),
            "3.2": (F, F),
            "4": (F, F),
        }
    )
    # paper: covered 1,2,2.1,2.2,3,3.1 -> 6*2/8; covered+correct 1,2,2.2,3.1 -> 4*3/8
    check(rubric_score(ids, spec, "paper"), 8.0, 5, 1.5, 1.5)
    # official: 2.1 zeroes 2 (and the root); 3 is wrong itself but its covered children are right, so
    # it keeps its coverage 2/8. Covered & unblocked: 1, 2.1, 2.2, 3, 3.1 -> 5*2/8; correct: 1, 2.2, 3.1
    result = rubric_score(ids, spec, "official")
    check(result, 1.25 + 1.125, 0, 1.25, 1.125)
    assert result.issue_scores["2"] == 0 and result.issue_scores["3"] == pytest.approx(0.25)


def test_all_correct_is_ten_and_nothing_covered_is_zero(sample_records) -> None:
    for record in sample_records:
        ids = record.issue_ids
        for rule in ("paper", "official"):
            check(rubric_score(ids, labels({i: (T, T) for i in ids}), rule), 10, 5, 2, 3)
            check(rubric_score(ids, labels({i: (F, F) for i in ids}), rule), 0, 0, 0, 0)


def test_official_rule_uses_real_ancestry_not_startswith() -> None:
    ids = ["", *[str(i) for i in range(1, 11)], "10.1"]  # N = 11
    spec = labels({i: (T, T) for i in ids} | {"10.1": (T, F)})
    result = rubric_score(ids, spec, "official")
    # "10.1" blocks "10" and the root, but NOT "1" (the official `startswith` test would zero "1" as well).
    assert result.issue_scores["1"] == pytest.approx(5 / 11)
    assert result.issue_scores["10"] == 0 and result.issue_scores[""] == 0
    assert result.issue_scores["10.1"] == pytest.approx(2 / 11)
    check(result, 9 * 5 / 11 + 2 / 11, 0, 10 * 2 / 11, 9 * 3 / 11)


def test_unlabelled_issue_makes_the_total_unscored_without_shrinking_n(record_by_id) -> None:
    ids = record_by_id("부산지방법원-2017구합23").issue_ids
    spec = labels({"": (T, T), "1": (T, T), "1.1": None, "1.2": (T, T)})
    result = rubric_score(ids, spec, "paper")
    assert not result.scored
    assert all(
        math.isnan(v) for v in (result.legit_score, result.final_order, result.coverage, result.correctness)
    )
    # per-issue labels still scored with N = 3 (the official script would have used N = 2)
    assert result.issue_scores == pytest.approx({"": 5, "1": 5 / 3, "1.1": None, "1.2": 5 / 3})
    official = rubric_score(ids, spec, "official")
    # "1" and the root depend on the unlabelled 1.1 under the official rule
    assert official.issue_scores[""] is None and official.issue_scores["1"] is None
    assert official.issue_scores["1.2"] == pytest.approx(5 / 3)


def test_rubric_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="rule"):
        rubric_score(["", "1"], labels({"": (T, T), "1": (T, T)}), "lenient")
    with pytest.raises(ValueError, match="no label"):
        rubric_score(["", "1"], labels({"": (T, T)}))


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('<OUTPUT>{"rationales": "r", "contains_issue": true, "correct_conclusion": false}</OUTPUT>', (T, F)),
        ('{"rationales": "r", "contains_issue": false, "correct_conclusion": false}\n</OUTPUT>', (F, F)),
        ('분석...\n```json\n{"contains_issue": true, "correct_conclusion": true}\n```', (T, T)),
        (
            '<OUTPUT>{{"rationales": "r", "contains_issue": true, "correct_conclusion": true}}</OUTPUT>',
            (T, T),
        ),
        ("no json at all", None),
        ('{"contains_issue": "yes", "correct_conclusion": true}', None),
        ('{"contains_issue": 1, "correct_conclusion": 0}', None),
        ('{"contains_issue": true}', None),
        ('{"contains_issue": true, "correct_conclusion": ', None),
        ("", None),
    ],
)
def test_parse_judge_reply(reply: str, expected) -> None:
    verdict = parse_judge_reply(reply)
    if expected is None:
        assert verdict is None
    else:
        assert verdict is not None and (verdict.contains_issue, verdict.correct_conclusion) == expected


def test_judge_prompt_is_the_official_text(record_by_id) -> None:
    """Rendering equals the official `.format` of prompts/evaluate_issue_in_response.txt."""
    issue = record_by_id("서울중앙지방법원-2022가단24276").issues[0]
    text = judge_prompt_text("응답 {중괄호} $달러", issue)
    template = load_prompt("legit/judge").text
    assert text.startswith('법률 쟁점에 대한 글을 읽고, (1) "summary/claim"의 내용이 TEXT에서 다뤄졌는지와')
    assert '<OUTPUT>{"rationales": str, "contains_issue": bool, "correct_conclusion": bool}</OUTPUT>' in text
    assert text.endswith(f"conclusion:\n{issue.conclusion}\n</ISSUE>\n</INPUT>\n<OUTPUT>")
    assert "<TEXT>\n응답 {중괄호} $달러\n</TEXT>" in text
    claims = "\n".join(f"{c.claimer}: {c.content}" for c in issue.claims)
    assert f"claims:\n{claims}\nconclusion:" in text and len(issue.claims) == 2
    # official file: 1,800 characters; "{{"/"}}" (4) become "{"/"}" (-4), 4 "{x}" become "${x}" (+4)
    assert len(template) == 1800
    values = {"response": "R", "summary": "S", "claims": "C", "conclusion": "K"}
    assert Template(template).substitute(values).count("{") == 2  # the two JSON braces of the example


# ------------------------------------------------------------------------------ the official scripts' arithmetic


def test_official_script_keeps_the_prefix_bug() -> None:
    """`official_script=True`: "1" counts "10.1" as a sub-issue (the scripts' `startswith`), our default does not."""
    ids = ["", *[str(i) for i in range(1, 11)], "10.1"]  # N = 11
    spec = labels({i: (T, T) for i in ids} | {"10.1": (T, F)})
    script = rubric_score(ids, spec, "official", official_script=True)
    assert script.issue_scores["1"] == 0 and script.issue_scores["10"] == 0
    assert rubric_score(ids, spec, "official").issue_scores["1"] == pytest.approx(5 / 11)
    # the paper rule has no descendancy: prefix or not, the same points
    assert rubric_score(ids, spec, "paper", official_script=True).legit_score == pytest.approx(
        rubric_score(ids, spec, "paper").legit_score
    )


def test_official_script_drops_an_unlabelled_issue_and_shrinks_n(record_by_id) -> None:
    ids = record_by_id("부산지방법원-2017구합23").issue_ids  # "", 1, 1.1, 1.2
    spec = labels({"": (T, T), "1": (T, T), "1.1": None, "1.2": (T, T)})
    assert not rubric_score(ids, spec, "paper").scored  # ours: unscored, never rescaled
    script = rubric_score(ids, spec, "paper", official_script=True)
    assert script.n == 2 and script.legit_score == 5 + 2 * (2 / 2 + 3 / 2)
    assert script.issue_scores["1.1"] is None
    # nothing judged: the script writes 0 (and the failure rate says why)
    nothing = rubric_score(ids, labels(dict.fromkeys(ids)), "official", official_script=True)
    assert nothing.legit_score == 0 and nothing.scored
    # a lone judged sub-issue: the script divides by zero and writes no row; nothing to reproduce
    lone = labels({"": None, "1": (T, T), "1.1": None, "1.2": None})
    assert not rubric_score(ids, lone, "paper", official_script=True).scored


def test_official_script_sums_in_the_order_issues_were_judged() -> None:
    """The total is the running sum in the verdict dict's order, exactly as the script adds it."""
    ids = ["", "1", "2", "3", "4", "5", "6"]
    spec = labels({"": (T, T), "1": (T, F), "2": (T, T), "3": (T, F), "4": (T, T), "5": (T, F), "6": (T, T)})
    order = ["6", "1", "", "5", "2", "4", "3"]
    shuffled = {i: spec[i] for i in order}
    expected = 0
    for i in order:
        verdict = spec[i]
        issue = 0
        if i == "":
            issue += 5 if verdict.correct_conclusion else 0
        elif verdict.contains_issue:
            issue += 2 / (len(ids) - 1)
            if verdict.correct_conclusion:
                issue += 3 / (len(ids) - 1)
        expected += issue
    assert rubric_score(ids, shuffled, "paper", official_script=True).legit_score == expected


def test_labels_outside_the_tree_are_refused() -> None:
    with pytest.raises(ValueError, match="not in the tree"):
        rubric_score(["", "1"], labels({"": (T, T), "1": (T, T), "2": (T, T)}))
