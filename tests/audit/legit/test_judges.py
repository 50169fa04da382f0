"""Judge vs judge vs lawyers: logs graded by scripted rubric and Likert judges on the same released responses."""

import csv
import hashlib
import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from koblex_tasks.audit.legit.judges import compare_raters, load_raters
from koblex_tasks.data.legit.dataset import legit_dataset
from koblex_tasks.data.legit.responses import load_responses
from koblex_tasks.scorers.legit.likert import judgment_text, legit_likert
from koblex_tasks.scorers.legit.rubric import legit_rubric
from koblex_tasks.solvers.legit.replay import legit_replay
from tests.legit_helpers import CountingModel, ScriptedJudge, output

GENERATOR = "gemma-3-4b-it"
LAWYER_DOC = "수원지방법원-2013구단1137"  # in the sample and graded by both lawyer groups for gemma-3-4b-it


def bits(*parts: str) -> int:
    return int(hashlib.sha256("/".join(parts).encode()).hexdigest(), 16)


def verdict(judge: str, doc: str, issue: str) -> tuple[bool, bool]:
    """Judge "a" by a hash; "b" flips a's contains_issue on a quarter of the nodes."""
    h = bits(doc, issue)
    contains, correct = h % 3 != 0, (h >> 4) % 2 == 0
    if judge == "b" and bits("flip", doc, issue) % 4 == 0:
        contains = not contains
    return contains, correct


def likert(judge: str, doc: str) -> int:
    base = bits("likert", doc) % 11
    return base if judge == "a" else min(10, max(0, base + bits("noise", doc) % 5 - 2))


class Judge:
    """Rubric prompts by the scripted verdicts, Likert prompts by the scripted score of the document."""

    def __init__(self, name: str, records):
        self.name = name
        # the judgment shown to the judge identifies the document (final orders alone repeat across documents)
        self.judgments = {judgment_text(r.answer, list(r.issues)): r.doc_id for r in records}
        assert len(self.judgments) == len(records)
        script = {(r.doc_id, i.id): verdict(name, r.doc_id, i.id) for r in records for i in r.issues}
        self.rubric = ScriptedJudge(records, script)

    def __call__(self, input, tools, tool_choice, config):
        prompt = input[-1].text
        if "<JUDGMENT>" not in prompt:
            return self.rubric(input, tools, tool_choice, config)
        doc = self.judgments[prompt.split("<JUDGMENT>\n", 1)[1].split("\n</JUDGMENT>", 1)[0]]
        return output(json.dumps({"rationales": "s", "score": likert(self.name, doc)}))

    def model(self):
        return get_model(f"mockllm/judge-{self.name}", custom_outputs=self)


@pytest.fixture(scope="module")
def judged(legit_shared: Path, sample_records, tmp_path_factory) -> dict:
    responses = legit_shared / "released_responses" / f"{GENERATOR}.jsonl"
    answered = set(load_responses(responses))
    records = [r for r in sample_records if r.doc_id in answered]
    assert LAWYER_DOC in {r.doc_id for r in records} and len(records) >= 10
    logs = {}
    for name in ("a", "b"):
        out = tmp_path_factory.mktemp(f"judge-{name}")
        task = Task(dataset=legit_dataset(records), solver=legit_replay(str(responses)),
                    scorer=[legit_rubric(), legit_likert()])  # fmt: skip
        [log] = inspect_eval(task, model=CountingModel().model(), model_roles={"grader": Judge(name, records).model()},
                             display="none", log_dir=str(out))  # fmt: skip
        assert log.status == "success", log.error
        logs[name] = Path(log.location)
    return {"logs": logs, "records": records, "lawyers": legit_shared / "human_labels.csv"}


def test_every_pair_with_the_lawyer_column(judged) -> None:
    raters = load_raters(judged["lawyers"], [judged["logs"]["a"], judged["logs"]["b"]])
    assert [r.kind for r in raters] == ["lawyers", "lawyers", "rubric", "likert", "rubric", "likert"]
    table = compare_raters(raters, n_boot=200)
    assert len(table.pairs) == 15
    pairs = {(p.a, p.b): p for p in table.pairs}
    ra, la, rb, lb = (r.name for r in raters[2:])
    records = judged["records"]

    # rubric a vs rubric b on contains_issue: alpha of the scripted labels, node for node
    nodes = sorted((r.doc_id, i.id) for r in records for i in r.issues)
    x = [verdict("a", d, i)[0] for d, i in nodes]
    y = [verdict("b", d, i)[0] for d, i in nodes]
    expected = krippendorff.alpha(
        reliability_data=np.array([x, y], dtype=float), level_of_measurement="nominal"
    )
    rubric_pair = pairs[(ra, rb)]
    assert rubric_pair.contains_issue.units == len(nodes)
    assert rubric_pair.contains_issue.alpha == pytest.approx(expected)
    assert (
        rubric_pair.contains_issue.low <= rubric_pair.contains_issue.alpha <= rubric_pair.contains_issue.high
    )
    assert rubric_pair.correct_conclusion.alpha == pytest.approx(1.0)  # b never changes correct_conclusion

    # likert a vs likert b: interval alpha of the scripted scores, one unit per question; no issue columns
    docs = sorted(r.doc_id for r in records)
    scores = np.array([[likert("a", d) for d in docs], [likert("b", d) for d in docs]], dtype=float)
    likert_pair = pairs[(la, lb)]
    assert likert_pair.contains_issue is None and likert_pair.score.units == len(docs)
    assert likert_pair.score.alpha == pytest.approx(
        krippendorff.alpha(reliability_data=scores, level_of_measurement="interval")
    )

    # the lawyers: issue level on the one overlapping tree (4 nodes), one question at score level
    lawyer_pair = pairs[("group 1", ra)]
    with open(judged["lawyers"], encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["group"] == "1" and r["generator"] == GENERATOR]
    overlap = [r for r in rows if (r["doc_id"], r["issue_id"]) in set(nodes)]
    assert LAWYER_DOC in {r["doc_id"] for r in overlap}
    assert lawyer_pair.contains_issue.units == len(overlap) >= 4
    assert lawyer_pair.score.units == len({r["doc_id"] for r in overlap})
    x = [int(r["contains_issue"]) for r in sorted(overlap, key=lambda r: (r["doc_id"], r["issue_id"]))]
    y = [
        verdict("a", r["doc_id"], r["issue_id"])[0]
        for r in sorted(overlap, key=lambda r: (r["doc_id"], r["issue_id"]))
    ]
    expected = krippendorff.alpha(
        reliability_data=np.array([x, y], dtype=float), level_of_measurement="nominal"
    )
    assert lawyer_pair.contains_issue.alpha == pytest.approx(expected)
    assert pairs[("group 1", "group 2")].contains_issue.units > 4  # lawyer vs lawyer on every labelled node

    # rubric vs Likert for the two judge models
    [comparison] = table.rubric_vs_likert
    assert (comparison.judge_a, comparison.judge_b) == ("mockllm/judge-a", "mockllm/judge-b")
    assert comparison.rubric == rubric_pair.score and comparison.likert == likert_pair.score
    assert {w["protocol"] for w in table.with_lawyers} == {"rubric", "likert"}


def test_cli_markdown_and_json(judged, capsys) -> None:
    from koblex_tasks.cli.main import main

    logs = [str(judged["logs"]["a"]), str(judged["logs"]["b"])]
    args = ["judge-audit", "legit", "--judges", *logs, "--lawyers", str(judged["lawyers"]), "--n-boot", "100"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "| rater A | rater B | contains_issue α | correct_conclusion α | score α |" in text
    assert "### Rubric vs Likert" in text and "mean over pairs" in text
    assert main([*args, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert len(payload["pairs"]) == 15 and payload["n_boot"] == 100
    assert main(["judge-audit", "koblex", "--judges", *logs]) == 2  # no such labels file: one line, exit 2


def test_cli_one_syntax_labels_first_equals_the_earlier_form(judged, capsys) -> None:
    """`judge-audit LABELS.csv LOG... --judges` (the one documented syntax) prints what the earlier form did."""
    from koblex_tasks.cli.main import main

    logs = [str(judged["logs"]["a"]), str(judged["logs"]["b"])]
    lawyers = str(judged["lawyers"])
    assert main(["judge-audit", lawyers, *logs, "--judges", "--n-boot", "100"]) == 0
    one = capsys.readouterr().out
    assert main(["judge-audit", "legit", "--judges", *logs, "--lawyers", lawyers, "--n-boot", "100"]) == 0
    assert capsys.readouterr().out == one and "| rater A | rater B |" in one
    assert main(["judge-audit", lawyers, *logs, "--judges", "--lawyers", lawyers]) == 2  # given twice
