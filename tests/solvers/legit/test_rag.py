"""`legit_rag`: citations RAG puts exactly the record's cited laws above the question; BM25 over any corpus."""

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval

from koblex_tasks.data.legit.dataset import legit_dataset
from koblex_tasks.solvers.legit.rag import GROUND_TRUTH_NOTE, legit_rag
from tests.legit_helpers import CountingModel


def prompts(records, solver, tmp_path):
    model = CountingModel()
    [log] = inspect_eval(
        Task(dataset=legit_dataset(records), solver=solver),
        model=model.model(),
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    by_doc = {str(s.id): s for s in log.samples}
    users = {}
    for messages in model.inputs:
        user = messages[-1].text
        doc = next(r.doc_id for r in records if user.endswith(r.question))
        users[doc] = user
    return by_doc, users


def test_citations_are_exactly_the_records_laws(sample_records, tmp_path) -> None:
    cited = [r for r in sample_records if any(i.relevant_law for i in r.issues)]
    uncited = [r for r in sample_records if not any(i.relevant_law for i in r.issues)]
    assert cited and uncited
    records = [*cited[:3], uncited[0]]
    samples, users = prompts(records, legit_rag(retrieval="citations"), tmp_path)
    total = 0
    for record in records:
        laws = list(dict.fromkeys(law for issue in record.issues for law in issue.relevant_law))
        total += len(laws)
        # the official layout: one "- law" line per cited law, a blank line, the question; nothing else
        assert users[record.doc_id] == "".join(f"- {law}\n" for law in laws) + "\n" + record.question
        retrieval = samples[record.doc_id].metadata["legit_retrieval"]
        assert retrieval == {
            "retrieval": "citations",
            "ground_truth": True,
            "note": GROUND_TRUTH_NOTE,
            "laws": laws,
        }
        # the court's conclusions never reach the prompt
        for issue in record.issues:
            if issue.conclusion and issue.conclusion not in record.question:
                assert issue.conclusion not in users[record.doc_id]
    assert total > 0


def test_shared_sample_cites_laws_on_33_of_103_issues(sample_records) -> None:
    issues = [i for r in sample_records for i in r.issues]
    assert (sum(1 for i in issues if i.relevant_law), len(issues)) == (33, 103)


def test_bm25_over_a_given_corpus_is_recorded(sample_records, tiny_corpus, tmp_path) -> None:
    record = sample_records[0]
    samples, users = prompts(
        [record], legit_rag(retrieval="bm25", corpus=str(tiny_corpus), k=2, tokenizer="official"), tmp_path
    )
    retrieval = samples[record.doc_id].metadata["legit_retrieval"]
    assert retrieval["retrieval"] == "bm25" and retrieval["ground_truth"] is False
    assert retrieval["settings"]["corpus"] == str(tiny_corpus) and len(retrieval["hits"]) == 2
    lines = users[record.doc_id].split("\n\n", 1)[0].splitlines()
    assert len(lines) == 2 and all(line.startswith("- ") for line in lines)


def test_unknown_retrieval_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match="retrieval must be one of"):
        legit_rag(retrieval="dense")  # type: ignore[arg-type]
