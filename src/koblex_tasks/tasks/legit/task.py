"""The LEGIT task: Korean judgment prediction graded against the issue tree by an LLM judge.

`inspect eval koblex_tasks/legit --model M --model-role grader=J [-T rule=official] [-T data=PATH]`

A judge is mandatory. Built by `inspect eval`/`eval()` without a bound `grader` role, the task refuses at once
with one line; built outside an eval, its setup step fails every sample before the model under test is called
(Inspect would otherwise use the model under test as its own judge).

`-T verdicts=FILE` replays a released evaluator file instead: its responses are the answers and its verdicts
the judge's, so no model and no judge is called; the judge role is bound to the label `replay/<evaluator>`.
"""

import inspect
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig, Model, get_model
from inspect_ai.solver import Solver

import koblex_tasks.tasks.replay_model  # noqa: F401  (the `replay/<judge>` label of replayed verdicts)
from koblex_tasks import __version__
from koblex_tasks.benchmarks.legit.issues import DIFFICULTIES
from koblex_tasks.benchmarks.legit.spec import LEGIT
from koblex_tasks.corpus.retriever import RetrieverSettings
from koblex_tasks.corpus.statutes import STATUTE_HF_REVISION
from koblex_tasks.data.legit.dataset import LEGIT_COMMIT, LegitData, LegitRecord, legit_dataset, load_legit
from koblex_tasks.data.legit.responses import load_responses
from koblex_tasks.data.legit.verdicts import VerdictFile, check_docs_known, load_verdicts
from koblex_tasks.errors import DataError
from koblex_tasks.judge_role import built_by_eval, grader_bound, judge_required_message
from koblex_tasks.scorers.legit.arithmetic import RULES
from koblex_tasks.scorers.legit.likert import legit_likert
from koblex_tasks.scorers.legit.rubric import REPLAYED_MODE, legit_rubric, sent_temperature
from koblex_tasks.solvers.backends import backends_record
from koblex_tasks.solvers.common import RETRIEVAL_METADATA_KEY
from koblex_tasks.solvers.grader import refuse_without_grader, require_grader
from koblex_tasks.solvers.legit.predict import legit_predict
from koblex_tasks.solvers.legit.verdicts import legit_verdicts
from koblex_tasks.solvers.preflight import note_task_retrieval, preflight, run_models
from koblex_tasks.tasks.checks import ArgumentChecks
from koblex_tasks.tasks.concurrency import connection_config

TASK_VERSION = LEGIT.version
CHECKS = ArgumentChecks(LEGIT.title)
NO_GRADER_MESSAGE = judge_required_message(LEGIT.title, LEGIT.task, LEGIT.judge_role)
# The build-time refusal, short enough for one line of an 80-column terminal (Inspect wraps it there).
NO_GRADER_AT_BUILD = f"{LEGIT.title} needs a judge: bind the '{LEGIT.judge_role}' role (--model-role {LEGIT.judge_role}=<judge>)"


def _select(
    loaded: LegitData,
    difficulty: list[str] | None,
    doc_ids: list[str] | None,
    answered: dict[str, set[str]],
) -> tuple[list[LegitRecord], dict[str, int]]:
    """The records the run keeps; `answered` maps a file option to the documents the file covers.

    Returns the records and, per file option, how many of the file's documents were left out.
    """
    records = loaded.records
    if difficulty is not None:
        records = [r for r in records if r.difficulty in difficulty]
    if doc_ids is not None:
        missing = sorted(set(doc_ids) - {r.doc_id for r in records})
        if missing:
            raise DataError(loaded.source, None, f"doc_ids not in the data: {missing}")
        records = [r for r in records if r.doc_id in doc_ids]
    ignored: dict[str, int] = {}
    for option, docs in answered.items():
        ignored[option] = len(docs - {r.doc_id for r in records})
        records = [r for r in records if r.doc_id in docs]
        if not records:
            raise DataError(option, None, f"none of its doc_ids is in {loaded.source} (after filtering)")
    if not records:
        raise DataError(loaded.source, None, "no records left after filtering")
    return records, ignored


def _check_arguments(
    rule: str,
    difficulty: str | list[str] | None,
    doc_ids: str | list[str] | None,
    responses: str | None,
    verdicts: str | None,
) -> tuple[list[str] | None, list[str] | None]:
    """The arguments a typo can break, before anything is loaded: the wanted difficulties and documents."""
    CHECKS.choice("rule", rule, RULES)
    wanted_difficulty = CHECKS.strings("difficulty", difficulty)
    CHECKS.choices("difficulty", wanted_difficulty, DIFFICULTIES)
    if responses is not None and verdicts is not None:
        raise CHECKS.error("give responses=FILE or verdicts=FILE, not both (a verdict file has both)")
    return wanted_difficulty, CHECKS.strings("doc_ids", doc_ids)


def _answered(loaded: LegitData, responses: str | None, replayed: VerdictFile | None) -> dict[str, set[str]]:
    """Per released file the run is restricted to, the documents it covers."""
    answered: dict[str, set[str]] = {}
    if responses is not None:
        answered[responses] = set(load_responses(responses))
    if replayed is not None:
        check_docs_known(replayed, {r.doc_id for r in loaded.records}, loaded.source)
        answered[replayed.path] = set(replayed.rows)
    return answered


def _refuse_grader_with_verdicts(replayed: VerdictFile) -> None:
    """Replayed verdicts are the judge: a grader bound at the eval would be logged as a judge it is not."""
    if built_by_eval() and grader_bound(LEGIT.judge_role):
        raise CHECKS.error(
            f"verdicts=FILE grades with the file's judge ({replayed.evaluator_model}); "
            f"do not bind the '{LEGIT.judge_role}' role"
        )


def _judge_record(scorer_args: dict[str, Any], replayed: VerdictFile | None) -> dict[str, Any]:
    """How the run is judged, for the log header (a live judge's model is in the log's model roles)."""
    if replayed is not None:
        return {
            "role": LEGIT.judge_role,
            "model": replayed.judge,
            "mode": REPLAYED_MODE,
            "evaluator_model": replayed.evaluator_model,
        }
    settings = ("retries", "prompt_version", "temperature", "max_tokens", "cache")
    record = {"role": LEGIT.judge_role, **{k: scorer_args[k] for k in settings}}
    temperature = sent_temperature(record["temperature"], scorer_args["official_script"])
    record["temperature"] = "provider default (none sent)" if temperature is None else temperature
    return record


@task
def legit(
    data: str | None = None,
    solver: Solver | None = None,
    rule: str = "paper",
    official_script: bool = False,
    judge_retries: int = 2,
    judge_prompt_version: str = "v1",
    judge_temperature: float | None = None,
    judge_max_tokens: int | None = None,
    judge_cache: bool | str = False,
    likert: bool = False,
    likert_prompt_version: str = "v1",
    difficulty: str | list[str] | None = None,
    doc_ids: str | list[str] | None = None,
    responses: str | None = None,
    verdicts: str | None = None,
    corpus: str | None = None,
    corpus_revision: str | None = STATUTE_HF_REVISION,
    tokenizer: str = "kiwi",
    reranker: str = "none",
    **unknown: Any,
) -> Task:
    """LEGIT (arXiv 2512.01020): predict the judgment, scored 0-10 on the issue tree by a `grader` judge.

    Args:
        data: local JSONL of LEGIT records (default: the pinned download of the 300-record test split).
        solver: the method (default: the paper's prediction prompt); `--solver` replaces it.
        rule: "paper" (5/2/3 rubric) or "official" (the released judge script's descendant zeroing).
        official_script: the released scripts' arithmetic exactly, bugs included (string-prefix descendancy,
            an issue without a verdict dropped and N shrunk); reproduces the released `score`s.
        judge_retries: extra judge calls per issue while its reply is unparsable.
        judge_prompt_version: version of `prompts/legit/judge`.
        judge_temperature: judge temperature (default 0; with `official_script` none is sent, as the released
            scripts: the provider's default).
        judge_max_tokens: judge reply length (default: the provider's).
        judge_cache: cache judge replies (True, or an expiry such as "1D"), so re-scoring costs nothing.
        likert: also grade each answer with the paper's Likert judge (`legit_likert`: the same judge and
            judge settings, one 0-10 score per answer); its own board column, ranked separately.
        likert_prompt_version: version of `prompts/legit/likert`.
        difficulty: keep only these difficulties ("easy", "medium", "hard").
        doc_ids: keep only these documents.
        responses: a LEGIT response file (`{"doc_id", "response"}` lines): keep only the documents it answers
            (for replays of released files, which cover different documents than a local sample).
        verdicts: a released evaluator file (`reasoning_tasks_<generator>_evaluator_<judge>.jsonl`): grade its
            responses with its verdicts (no model or judge call), keeping the documents it covers.
        corpus: statute JSONL for retrieval solvers (`legit_rag`); default: the hub statute dataset.
        corpus_revision: hub revision of the statute dataset.
        tokenizer: BM25 tokenizer for retrieval solvers.
        reranker: reranker for retrieval solvers.
    """
    CHECKS.unknown_args(unknown, [p for p in inspect.signature(legit).parameters if p != "unknown"])
    preflight()
    with CHECKS.as_task_errors():
        wanted_difficulty, wanted_docs = _check_arguments(rule, difficulty, doc_ids, responses, verdicts)
        replayed = load_verdicts(verdicts) if verdicts is not None else None
        if replayed is None:
            refuse_without_grader(NO_GRADER_AT_BUILD, LEGIT.judge_role)
        else:
            _refuse_grader_with_verdicts(replayed)
        scorer_args: dict[str, Any] = {
            "rule": rule,
            "official_script": official_script,
            "retries": judge_retries,
            "prompt_version": judge_prompt_version,
            "temperature": judge_temperature,
            "max_tokens": judge_max_tokens,
            "cache": judge_cache,
        }
        scorer = legit_rubric(
            **scorer_args, model_role=LEGIT.judge_role, replayed_verdicts=replayed is not None
        )
        if likert and replayed is not None:
            raise CHECKS.error("likert=true needs a live judge: verdicts=FILE replays rubric verdicts only")
        scorers = [scorer]
        if likert:
            scorers.append(
                legit_likert(
                    retries=judge_retries,
                    prompt_version=likert_prompt_version,
                    model_role=LEGIT.judge_role,
                    temperature=judge_temperature,
                    max_tokens=judge_max_tokens,
                    cache=judge_cache,
                )
            )
        loaded = load_legit(data)
        records, ignored = _select(
            loaded, wanted_difficulty, wanted_docs, _answered(loaded, responses, replayed)
        )
    settings = RetrieverSettings(
        corpus=corpus, lang="ko", corpus_revision=corpus_revision, tokenizer=tokenizer, reranker=reranker
    )
    note_task_retrieval(LEGIT.title, settings)  # for a retrieving --solver, checked when built
    dataset = legit_dataset(records, extra_metadata={RETRIEVAL_METADATA_KEY: settings.as_dict()})
    expected_judge = replayed.judge if replayed is not None else None
    return Task(
        dataset=dataset,
        setup=require_grader(NO_GRADER_MESSAGE, LEGIT.judge_role, expected=expected_judge),
        solver=solver or (legit_verdicts(replayed.path) if replayed is not None else legit_predict()),
        scorer=scorers,
        config=connection_config(GenerateConfig()),
        model_roles={LEGIT.judge_role: _replayed_judge(replayed)} if replayed is not None else None,
        version=TASK_VERSION,
        metadata={
            "benchmark": LEGIT.name,
            "package_version": __version__,
            # each model's provider (LEGIT sends no provider-specific field: every provider gets the same requests)
            "backends": backends_record(run_models()) if built_by_eval() else None,
            "dataset_source": loaded.source,
            "dataset_commit": LEGIT_COMMIT if data is None else None,
            "dataset_sha256": loaded.sha256,
            "dataset_notes": loaded.notes,
            "dataset_size": len(records),
            "responses_filter": str(Path(responses)) if responses else None,
            # responses whose doc_id is not among the (filtered) records: ignored
            "responses_ignored": ignored.get(responses) if responses else None,
            "rule": rule,
            "official_script": official_script,
            "likert": {"prompt_version": likert_prompt_version} if likert else None,
            "judge": _judge_record(scorer_args, replayed),
            **(_replay_metadata(replayed, ignored) if replayed is not None else {}),
            "retrieval": settings.as_dict(),
        },
    )


def _replayed_judge(replayed: VerdictFile) -> Model:
    """The judge role's record for replayed verdicts: the `replay/<evaluator>` label, saying where they came
    from in its model args (the log's `model_roles` shows both)."""
    return get_model(replayed.judge, mode=REPLAYED_MODE, verdicts=replayed.path, sha256=replayed.sha256)


def _replay_metadata(replayed: VerdictFile, ignored: dict[str, int]) -> dict[str, Any]:
    return {
        "judge_model": replayed.judge,
        "replayed_verdicts": {
            "file": replayed.path,
            "sha256": replayed.sha256,
            "evaluator_model": replayed.evaluator_model,
            "generator": replayed.generator,
            "rows": len(replayed.rows),
            "rows_ignored": ignored.get(replayed.path, 0),  # rows whose doc the filters left out
            "notes": replayed.notes(),
        },
    }
