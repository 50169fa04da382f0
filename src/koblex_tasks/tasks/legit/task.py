"""The LEGIT task: Korean judgment prediction graded against the issue tree by an LLM judge.

`inspect eval koblex_tasks/legit --model M --model-role grader=J [-T rule=official] [-T data=PATH]`

A judge is mandatory. Without a bound `grader` role the task's setup step fails every sample before the
model under test is called (Inspect would otherwise use the model under test as its own judge).
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Solver

from koblex_tasks import __version__
from koblex_tasks.corpus.retriever import RetrieverSettings
from koblex_tasks.corpus.statutes import STATUTE_HF_REVISION
from koblex_tasks.errors import DataError
from koblex_tasks.judge_role import judge_required_message
from koblex_tasks.scorers.legit.rubric import RULES, legit_rubric
from koblex_tasks.solvers.common import RETRIEVAL_METADATA_KEY
from koblex_tasks.solvers.grader import require_grader
from koblex_tasks.solvers.legit import legit_predict
from koblex_tasks.tasks.legit.dataset import LEGIT_COMMIT, legit_dataset, load_legit
from koblex_tasks.tasks.legit.issues import DIFFICULTIES
from koblex_tasks.tasks.legit.responses import load_responses
from koblex_tasks.tasks.legit.spec import LEGIT

TASK_VERSION = LEGIT.version
NO_GRADER_MESSAGE = judge_required_message(LEGIT.title, LEGIT.task, LEGIT.judge_role)


def _as_set(value: str | list[str] | None) -> set[str] | None:
    if value is None:
        return None
    return {value} if isinstance(value, str) else set(value)


@task
def legit(
    data: str | None = None,
    solver: Solver | None = None,
    rule: str = "paper",
    judge_retries: int = 2,
    judge_prompt_version: str = "v1",
    judge_temperature: float | None = None,
    judge_max_tokens: int | None = None,
    judge_cache: bool | str = False,
    difficulty: str | list[str] | None = None,
    doc_ids: str | list[str] | None = None,
    responses: str | None = None,
    corpus: str | None = None,
    corpus_revision: str | None = STATUTE_HF_REVISION,
    tokenizer: str = "kiwi",
    reranker: str = "none",
) -> Task:
    """LEGIT (arXiv 2512.01020): predict the judgment, scored 0-10 on the issue tree by a `grader` judge.

    Args:
        data: local JSONL of LEGIT records (default: the pinned download of the 300-record test split).
        solver: the method (default: the paper's prediction prompt); `--solver` replaces it.
        rule: "paper" (5/2/3 rubric) or "official" (the released judge script's descendant zeroing).
        judge_retries: extra judge calls per issue while its reply is unparsable.
        judge_prompt_version: version of `prompts/legit/judge`.
        judge_temperature: judge temperature (default 0).
        judge_max_tokens: judge reply length (default: the provider's).
        judge_cache: cache judge replies (True, or an expiry such as "1D"), so re-scoring costs nothing.
        difficulty: keep only these difficulties ("easy", "medium", "hard").
        doc_ids: keep only these documents.
        responses: a LEGIT response file (`{"doc_id", "response"}` lines): keep only the documents it answers
            (for replays of released files, which cover different documents than a local sample).
        corpus: statute JSONL for retrieval solvers (`legit_rag`); default: the hub statute dataset.
        corpus_revision: hub revision of the statute dataset.
        tokenizer: BM25 tokenizer for retrieval solvers.
        reranker: reranker for retrieval solvers.
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    loaded = load_legit(data)
    records = loaded.records
    wanted_difficulty = _as_set(difficulty)
    if wanted_difficulty is not None:
        unknown = wanted_difficulty - set(DIFFICULTIES)
        if unknown:
            raise ValueError(f"unknown difficulty {sorted(unknown)}; use {DIFFICULTIES}")
        records = [r for r in records if r.difficulty in wanted_difficulty]
    wanted_docs = _as_set(doc_ids)
    if wanted_docs is not None:
        missing = wanted_docs - {r.doc_id for r in records}
        if missing:
            raise DataError(loaded.source, None, f"doc_ids not in the data: {sorted(missing)}")
        records = [r for r in records if r.doc_id in wanted_docs]
    ignored_responses: int | None = None
    if responses is not None:
        answered = set(load_responses(responses))
        ignored_responses = len(answered - {r.doc_id for r in records})
        records = [r for r in records if r.doc_id in answered]
        if not records:
            raise DataError(responses, None, f"none of its doc_ids is in {loaded.source}")
    if not records:
        raise DataError(loaded.source, None, "no records left after filtering")
    settings = RetrieverSettings(
        corpus=corpus, lang="ko", corpus_revision=corpus_revision, tokenizer=tokenizer, reranker=reranker
    )
    dataset = legit_dataset(records, extra_metadata={RETRIEVAL_METADATA_KEY: settings.as_dict()})
    return Task(
        dataset=dataset,
        setup=require_grader(NO_GRADER_MESSAGE, LEGIT.judge_role),
        solver=solver or legit_predict(),
        scorer=legit_rubric(
            rule=rule,
            retries=judge_retries,
            prompt_version=judge_prompt_version,
            model_role=LEGIT.judge_role,
            temperature=judge_temperature,
            max_tokens=judge_max_tokens,
            cache=judge_cache,
        ),
        config=GenerateConfig(),
        version=TASK_VERSION,
        metadata={
            "benchmark": LEGIT.name,
            "package_version": __version__,
            "dataset_source": loaded.source,
            "dataset_commit": LEGIT_COMMIT if data is None else None,
            "dataset_sha256": loaded.sha256,
            "dataset_notes": loaded.notes,
            "dataset_size": len(records),
            "responses_filter": str(Path(responses)) if responses else None,
            # responses whose doc_id is not among the (filtered) records: ignored
            "responses_ignored": ignored_responses,
            "rule": rule,
            "retrieval": settings.as_dict(),
        },
    )
