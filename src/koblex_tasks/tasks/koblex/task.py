"""The KoBLEX task: 226 Korean legal scenario questions, statute retrieval, open answers.

Defaults reproduce the paper's ParSeR setting except where noted in the README (tokenizer `kiwi`, no
reranker unless `-T reranker=bge`). Deterministic scorers: provision match and token F1.
"""

import logging
from typing import Literal

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Solver

from koblex_tasks import __version__
from koblex_tasks.corpus.dense import DEFAULT_DENSE_MODEL
from koblex_tasks.corpus.retriever import RetrieverSettings
from koblex_tasks.corpus.statutes import STATUTE_HF_REVISION
from koblex_tasks.judge_role import grader_bound
from koblex_tasks.scorers.koblex import lf_eval, provision_match, token_f1
from koblex_tasks.solvers.common import RETRIEVAL_METADATA_KEY
from koblex_tasks.solvers.koblex import parser
from koblex_tasks.tasks.koblex.dataset import KOBLEX_HF_REVISION, koblex_dataset, load_koblex
from koblex_tasks.tasks.koblex.spec import KOBLEX

TASK_VERSION = KOBLEX.version
logger = logging.getLogger(__name__)
NO_JUDGE = (
    "KoBLEX: no `grader` model role is bound, so LF-Eval is not computed (deterministic metrics only). "
    "Bind a judge with --model-role grader=<model> (the paper used openai/gpt-4o)."
)


@task
def koblex(
    lang: Literal["ko", "en"] = "ko",
    data: str | None = None,
    revision: str | None = KOBLEX_HF_REVISION,
    corpus: str | None = None,
    corpus_revision: str | None = STATUTE_HF_REVISION,
    tokenizer: Literal["kiwi", "official"] = "kiwi",
    reranker: str = "none",
    retrieval: Literal["bm25", "dense", "hybrid"] = "bm25",
    dense_model: str | None = None,
    official: bool = False,
    hops: int | list[int] | None = None,
    judge: bool | None = None,
    judge_language: Literal["en", "ko"] = "en",
    judge_temperature: float | None = None,
    judge_max_tokens: int | None = None,
    judge_cache: bool | str = False,
    solver: Solver | None = None,
) -> Task:
    """KoBLEX open-answer legal QA with statute retrieval.

    Args:
        lang: "ko" (default) or "en" (the `_eng` fields and the English statute corpus).
        data: local JSONL of questions (default: the Hugging Face dataset JihyungL/KoBLEX-koblex).
        revision: hub revision of the questions dataset.
        corpus: local JSONL statute corpus (default: JihyungL/KoBLEX-statute, or -eng for lang=en).
        corpus_revision: hub revision of the statute dataset.
        tokenizer: BM25 tokenizer, "kiwi" (morphemes) or "official" (the paper's regex tokens).
        reranker: "none", "bge" (the paper's dragonkue/bge-reranker-v2-m3-ko), or a cross-encoder id/path.
        retrieval: first stage: "bm25" (the paper's), "dense" (BGE-M3) or "hybrid" (reciprocal rank fusion).
        dense_model: encoder id or local path for dense/hybrid (default BAAI/bge-m3).
        official: score exactly like the paper's script (800-character cut, rounding).
        hops: keep only questions with this many gold provisions (e.g. 1 or [2,3]).
        judge: add the LF-Eval judge scorer; None = only when a `grader` model role is bound (never the
            evaluated model). Set True when building the task in Python and passing model_roles to eval().
        judge_language: LF-Eval prompt language, "en" (the paper's) or "ko".
        judge_temperature: LF-Eval judge temperature (default: 0 with logprobs, 1 for sampled replies).
        judge_max_tokens: LF-Eval judge reply length (default: 3 with logprobs, 16 for sampled replies).
        judge_cache: cache judge replies (True, or an expiry such as "1D"), so re-scoring costs nothing.
        solver: the method (default: ParSeR); `--solver` on the command line replaces it.
    """
    questions = load_koblex(data, lang, revision)
    settings = RetrieverSettings(
        corpus=corpus,
        lang=lang,
        corpus_revision=corpus_revision,
        tokenizer=tokenizer,
        reranker=reranker,
        retrieval=retrieval,
        dense_model=dense_model or DEFAULT_DENSE_MODEL,
    )
    dataset = koblex_dataset(questions, lang, {RETRIEVAL_METADATA_KEY: settings.as_dict()})
    if hops is not None:
        wanted = {hops} if isinstance(hops, int) else set(hops)
        dataset = dataset.filter(lambda s: (s.metadata or {}).get("hop_count") in wanted)
    use_judge = grader_bound() if judge is None else judge
    scorers = [provision_match(), token_f1(official=official)]
    if use_judge:
        scorers.append(
            lf_eval(
                language=judge_language,
                temperature=judge_temperature,
                max_tokens=judge_max_tokens,
                cache=judge_cache,
            )
        )
    else:
        logger.warning(NO_JUDGE)
    return Task(
        dataset=dataset,
        solver=solver or parser(),
        scorer=scorers,
        # The paper: temperature 0.01 (OpenAI) or 0.0 (vLLM), up to 2000 new tokens.
        config=GenerateConfig(temperature=0.0, max_tokens=2000),
        version=TASK_VERSION,
        metadata={
            "benchmark": KOBLEX.name,
            "package_version": __version__,
            "dataset_source": questions.source,
            "dataset_fingerprint": questions.fingerprint,
            "dataset_size": len(questions.records),
            "retrieval": settings.as_dict(),
            "official_scoring": official,
            "lf_eval": f"judge prompt {judge_language}"
            if use_judge
            else "not computed: no grader role bound",
        },
    )
