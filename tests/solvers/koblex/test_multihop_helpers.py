"""Unit tests for the shared multi-hop helpers: stops, log-probabilities, trees."""

import pytest

from koblex_tasks.solvers.koblex._multihop import (
    build_tree,
    cut_at_stop,
    mean_logprob,
    parse_json_object,
    post_order,
    roots,
    softmax,
    tokens_after,
)
from koblex_tasks.solvers.koblex.beamaggr import Candidate, aggregate
from koblex_tasks.solvers.koblex.flare import mask_low_confidence
from koblex_tasks.solvers.koblex.self_ask import follow_up_question, last_line_value


def test_cut_at_the_earliest_stop() -> None:
    assert cut_at_stop("가. 나! 다?", [".", "!", "?"]) == "가"
    assert cut_at_stop("끝 없음", ["."]) == "끝 없음"
    assert cut_at_stop("x", None) == "x"


def test_logprob_helpers() -> None:
    tokens = [("a", -1.0), ("So the answer", -2.0), (" is:", -3.0), (" b", -0.5)]
    assert mean_logprob(tokens) == pytest.approx(-1.625) and mean_logprob([]) is None
    assert tokens_after(tokens, "So the answer is:") == [(" b", -0.5)]
    assert tokens_after(tokens, "never") == tokens
    probs = softmax({"cb": -0.1, "ob": -1.0, "ca": None})
    assert probs["ca"] == 0 and probs["cb"] + probs["ob"] == pytest.approx(1)
    assert softmax({"cb": None, "ob": None}) == {"cb": 0.5, "ob": 0.5}
    assert mask_low_confidence([("a", -0.1), ("b", -0.8)], -0.7) == ("a_", True)


def test_tree_parsing_is_bounded_and_survives_cycles() -> None:
    assert parse_json_object('앞말 ```json\n{"r": ["a", "b"]}\n``` 뒷말') == {"r": ["a", "b"]}
    assert parse_json_object("{'r': ['a']}") == {"r": ["a"]}
    assert parse_json_object("없음") is None and parse_json_object("[1]") is None
    nodes = build_tree({"r": ["a", "b"], "a": ["c", "r"], "r2": "not a list"}, "q", max_nodes=10)
    assert [(n.idx, n.question, n.parent, n.sons) for n in nodes] == [
        (0, "r", None, [1, 2]),
        (1, "a", 0, [3, 4]),
        (2, "b", 0, []),
        (3, "c", 1, []),
        (4, "r", 1, []),  # a repeated question is a leaf, never expanded again
    ]
    assert [n.idx for n in post_order(nodes)] == [3, 4, 1, 2, 0]
    assert len(build_tree({"r": [f"c{i}" for i in range(50)]}, "q", max_nodes=4)) == 4
    [only] = build_tree(None, "질문", max_nodes=4)
    assert only.question == "질문" and only.is_leaf


def test_a_forest_keeps_every_root_after_the_first_tree() -> None:
    decomposition = {"r": ["a"], "s": ["b", "c"], "a": ["d"], "b": ["e"]}  # "s" is no key's child: a root
    forest = build_tree(decomposition, "q", max_nodes=10, forest=True)
    assert [(n.idx, n.question, n.parent) for n in forest] == [
        (0, "r", None),
        (1, "a", 0),
        (2, "d", 1),
        (3, "s", None),
        (4, "b", 3),
        (5, "c", 3),
        (6, "e", 4),
    ]
    assert roots(forest) == [0, 3] and [n.idx for n in post_order(forest, 3)] == [6, 4, 5, 3]
    assert [n.question for n in build_tree(decomposition, "q", max_nodes=10)] == ["r", "a", "d"]
    assert len(build_tree(decomposition, "q", max_nodes=3, forest=True)) == 3  # the cap holds across trees


def test_beam_aggregation_keeps_the_top_products() -> None:
    a = [Candidate(["a1"], 0.6, ["P"]), Candidate(["a2"], 0.4, [])]
    b = [Candidate(["b1"], 0.7, []), Candidate(["b2"], 0.3, ["Q"])]
    beam = aggregate([a, b], beam_size=3)
    assert [(c.answers, round(c.p, 2), c.comb) for c in beam] == [
        (["a1", "b1"], 0.42, ["P"]),
        (["a2", "b1"], 0.28, []),
        (["a1", "b2"], 0.18, ["P", "Q"]),
    ]


def test_self_ask_parsing() -> None:
    assert last_line_value("Are follow up questions needed here: Yes.\nSo the final answer is: 1년.") == "1년"
    assert follow_up_question("Yes.\nFollow up: 무엇인가?", official_stops=False) == "무엇인가?"
    assert follow_up_question("So the final answer is: x", official_stops=False) is None
    assert follow_up_question("Are follow up questions needed here: Yes.", official_stops=True) == "Yes"
