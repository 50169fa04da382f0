"""The KoBLEX task: 226 Korean legal scenario questions, statute retrieval, open answers.

Defaults are the paper's protocol (`KOBLEX.paper_protocol`): ParSeR with k=100, l=10, the official BM25
tokenization, the paper's cross-encoder reranker, and the request shape of the official scripts the paper ran
against that kind of server (`chat_format=auto`): the vLLM scripts' (system + user turns, seeds, no thinking)
for a self-served model, the OpenAI scripts' (one user message, no seed) for a hosted API, each with its
per-stage limits. The log records each model's provider and shape (`backends`) and says `"protocol": "paper"`
or lists each setting that differs.

Everything is checked when the task is built, before any model call: task arguments, file paths, the hub
(offline runs fail in seconds), the reranker (extra installed, weights at hand), the hop counts. The corpus
is loaded and indexed then (the retriever the solvers use, built once per process), and its source, size,
fingerprint and completeness are recorded in the eval metadata. Deterministic scorers: provision match and
token F1; LF-Eval when a `grader` role is bound.
"""

import inspect
import logging
from dataclasses import replace
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Solver

from koblex_tasks import __version__
from koblex_tasks._inspect_compat import (
    active_model,
    eval_solver,
    registry_name,
    run_generate_config,
    solver_params,
)
from koblex_tasks.benchmarks.koblex.protocol import protocol_of, run_settings
from koblex_tasks.benchmarks.koblex.spec import GENERATION, KOBLEX
from koblex_tasks.corpus.dense import DEFAULT_DENSE_MODEL
from koblex_tasks.corpus.rerank import DTYPES
from koblex_tasks.corpus.retriever import RETRIEVAL_MODES, RetrieverSettings, get_retriever
from koblex_tasks.corpus.statutes import STATUTE_HF_REVISION
from koblex_tasks.corpus.tokenizers import TOKENIZERS
from koblex_tasks.data.koblex.dataset import (
    KOBLEX_HF_REVISION,
    LANG_SUFFIX,
    GoldBook,
    gold_book,
    hop_counts,
    koblex_dataset,
    load_koblex,
)
from koblex_tasks.data.koblex.language import gold_identity
from koblex_tasks.errors import DataError
from koblex_tasks.hub import HubUnavailableError
from koblex_tasks.judge_role import ROLES_SET_BY_BUILDER, built_by_eval, grader_bound
from koblex_tasks.scorers.koblex import lf_eval, provision_match, retrieval_funnel, token_f1
from koblex_tasks.scorers.koblex.lf_eval import JUDGE_CONTEXTS
from koblex_tasks.solvers.backends import Backend, backends_record
from koblex_tasks.solvers.common import RETRIEVAL_METADATA_KEY
from koblex_tasks.solvers.discovery import retrieves as solver_retrieves
from koblex_tasks.solvers.koblex._common import (
    AUTO,
    GENERATION_METADATA_KEY,
    PAPER_CHAT_FORMAT,
    REQUESTED_FORMATS,
    RequestedFormat,
)
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.solvers.preflight import preflight, run_models
from koblex_tasks.solvers.rerank_placement import warn_shared_gpu
from koblex_tasks.tasks.concurrency import connection_config
from koblex_tasks.tasks.koblex.checks import CHECKS, check_hops, check_reranker

TASK_VERSION = KOBLEX.version
PAPER = KOBLEX.paper_protocol
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
    allow_language_mismatch: bool = False,
    tokenizer: str = PAPER["tokenizer"],
    reranker: str = PAPER["reranker"],
    retrieval: Literal["bm25", "dense", "hybrid"] = "bm25",
    dense_model: str | None = None,
    bm25_order: Literal["bm25s", "float64"] = PAPER["bm25_order"],
    chat_format: RequestedFormat = AUTO,
    reranker_url: str | None = None,
    reranker_dtype: Literal["float32", "bfloat16"] = PAPER["reranker_dtype"],
    reranker_device: str | None = None,
    reranker_cache: bool = True,
    official: bool = False,
    hops: int | list[int] | None = None,
    judge: bool | None = None,
    judge_language: Literal["en", "ko"] = "en",
    judge_prompt: Literal["deepeval", "bare"] = "deepeval",
    judge_temperature: float | None = None,
    judge_max_tokens: int | None = None,
    judge_cache: bool | str = False,
    judge_context: Literal["gold", "none", "retrieved"] = "gold",
    judge_reference: bool = True,
    solver: Solver | None = None,
    **unknown: Any,
) -> Task:
    """KoBLEX open-answer legal QA with statute retrieval.

    Args:
        lang: "ko" (default) or "en" (the `_eng` fields and the English statute corpus).
        data: local JSONL of questions (default: the Hugging Face dataset JihyungL/KoBLEX-koblex).
        revision: hub revision of the questions dataset.
        corpus: local JSONL statute corpus (default: JihyungL/KoBLEX-statute, or -eng for lang=en).
        corpus_revision: hub revision of the statute dataset.
        allow_language_mismatch: run with a corpus in the other language than the questions (cross-lingual
            retrieval, gold compared in the corpus' language); without it such a run is refused before any
            model call, since against the questions' own gold provisions it could only score 0.
        tokenizer: BM25 tokenizer, "official" (the paper's regex tokens, default) or "kiwi" (morphemes).
        reranker: the paper's dragonkue/bge-reranker-v2-m3-ko (default; alias "bge"), another cross-encoder
            id/path, or "none" (BM25 order; no torch needed).
        retrieval: first stage: "bm25" (the paper's), "dense" (BGE-M3) or "hybrid" (reciprocal rank fusion).
        dense_model: encoder id or local path for dense/hybrid (default BAAI/bge-m3).
        reranker_url: base URL of a rerank engine (vLLM `vllm serve <cross-encoder>`, or
            text-embeddings-inference) that scores the rerank stage instead of this process; the model is the
            one `reranker` names. Checked before the first sample; the log records engine and model.
        reranker_dtype: the in-process reranker's weights: "float32" (the official code's) or "bfloat16"
            (faster on a GPU; its agreement with float32 is documented).
        reranker_device: the in-process reranker's device ("cpu", "cuda", "cuda:1"; default: a GPU if any).
        reranker_cache: keep rerank scores on disk (default) so repeated (question, passage) pairs of another
            run, method or model are not scored again; False scores every pair.
        bm25_order: BM25 candidate lists as bm25s builds them ("bm25s", the paper's: float32 scores, its tie
            order, zero-score rows padding a short list) or exact float64 scores with ties by corpus position.
        chat_format: "auto" (default: per the provider of the model called, see `solvers.backends`),
            "system_user" (system + user turns, max_tokens 4000/2048/4000, temperature 0, seeds, as the
            official vLLM scripts) or "user" (one user message, max_tokens 2000, temperature 0.01, no seed, as
            the official OpenAI scripts behind the GPT-4o rows). top_p 0.9 in all.
        official: score exactly like the paper's script (800-character cut, rounding).
        hops: keep only questions with this many gold provisions (e.g. 1 or [2,3]).
        judge: add the LF-Eval judge scorer; None = only when a `grader` model role is bound (never the
            evaluated model). Set True when building the task in Python and passing model_roles to eval().
        judge_language: LF-Eval prompt language, "en" (the paper's) or "ko".
        judge_prompt: LF-Eval judge prompt, "deepeval" (the paper's DeepEval GEval prompt, JSON reply; default)
            or "bare" (a cheaper score-only reply).
        judge_temperature: LF-Eval judge temperature (default: 0 with logprobs, 1 for sampled replies).
        judge_max_tokens: LF-Eval judge reply length (default: 1024 for "deepeval"; 3 with logprobs / 16 sampled
            for "bare").
        judge_cache: cache judge replies (True, or an expiry such as "1D"), so re-scoring costs nothing.
        judge_context: LF-Eval's Context: "gold" provisions (the paper's), "none", or the "retrieved" ones the
            method used (sensitivity variants: does the judge reward copying the gold provisions?).
        judge_reference: show the LF-Eval judge the reference answer (the paper's); False: omitted.
        solver: the method (default: ParSeR); `--solver` on the command line replaces it.
    """
    _check_arguments(unknown, lang, tokenizer, retrieval, chat_format, data, corpus)
    CHECKS.choice("judge_context", judge_context, JUDGE_CONTEXTS)
    CHECKS.flags(
        judge_reference=judge_reference,
        official=official,
        allow_language_mismatch=allow_language_mismatch,
        reranker_cache=reranker_cache,
    )
    CHECKS.choice("reranker_dtype", reranker_dtype, DTYPES)
    preflight()
    built = solver or parser()  # the method the task runs (a --solver on the command line replaces it later)
    solver_name, solver_args = _solver_identity(built)
    retrieves = solver_retrieves(built)
    questions = _load_questions(data, lang, revision)
    wanted = check_hops(hops, hop_counts(questions.records))
    runs = solver or eval_solver() or built  # what the samples run: a --solver replaces the default later
    used = str(solver_params(runs).get("reranker") or reranker)
    if solver_retrieves(runs) and reranker_url is None:  # after the arguments: weights are the environment's
        check_reranker(used)
    settings = RetrieverSettings(
        corpus=corpus,
        lang=lang,
        corpus_revision=corpus_revision,
        tokenizer=tokenizer,
        reranker=reranker,
        retrieval=retrieval,
        dense_model=dense_model or DEFAULT_DENSE_MODEL,
        bm25_order=bm25_order,
        reranker_url=reranker_url,
        reranker_dtype=reranker_dtype,
        reranker_device=reranker_device,
        reranker_cache=reranker_cache,
    )
    retriever = _build_retriever(settings) if retrieves else None
    if retrieves:
        warn_shared_gpu(replace(settings, reranker=used).rerank_setup)
    identity, language_note = gold_identity(
        retriever.corpus if retriever is not None else None, questions, lang, allow_language_mismatch
    )
    evaluated = _evaluated_backend()
    sample_generation: dict[str, Any] = {"chat_format": chat_format}
    if chat_format != AUTO:
        sample_generation["max_tokens"] = GENERATION[chat_format]["max_tokens"]
    dataset = koblex_dataset(
        questions,
        lang,
        {RETRIEVAL_METADATA_KEY: settings.as_dict(), GENERATION_METADATA_KEY: sample_generation},
        identity,
    )
    if wanted is not None:
        dataset = dataset.filter(lambda s: (s.metadata or {}).get("hop_count") in wanted)
    use_judge = (built_by_eval() and grader_bound()) if judge is None else judge
    judge_args = {
        "language": judge_language,
        "prompt": judge_prompt,
        "temperature": judge_temperature,
        "max_tokens": judge_max_tokens,
        "cache": judge_cache,
        "judge_context": judge_context,
        "judge_reference": judge_reference,
    }
    task_settings = {
        "tokenizer": tokenizer,
        "reranker": reranker,
        "retrieval": retrieval,
        "bm25_order": bm25_order,
        "chat_format": chat_format
        if evaluated is None
        else evaluated.protocol_value(chat_format, PAPER_CHAT_FORMAT),
        "generation": GENERATION,
        "judge_prompt": judge_prompt,
        **_user_request_settings(),
        "judge_context": judge_context,
        "judge_reference": judge_reference,
        "reranker_dtype": reranker_dtype,
        "reranker_url": reranker_url,
    }
    return Task(
        dataset=dataset,
        solver=built,
        scorer=_scorers(official, judge_args if use_judge else None, gold_book(questions, lang, identity)),
        # temperature and top_p of the official scripts: a forced chat format's here (the run's settings), auto's
        # per call, as max_tokens (per stage), by the solvers once they know the model they call.
        config=connection_config(_format_config(chat_format)),
        version=TASK_VERSION,
        metadata={
            "benchmark": KOBLEX.name,
            "package_version": __version__,
            "protocol": protocol_of(run_settings(task_settings, solver_name, solver_args)),
            "dataset_source": questions.source,
            "dataset_fingerprint": questions.fingerprint,
            "dataset_size": len(questions.records),
            "retrieval": settings.as_dict(),
            "corpus": _corpus_record(retriever, solver_name),
            "provision_level": identity.level,  # what provision_match compares: paragraphs or articles
            "language_mismatch": language_note,
            "retriever": retriever.describe() if retriever is not None else None,
            "generation": _generation_record(chat_format, evaluated),
            "backends": backends_record(
                run_models(evaluated=evaluated is not None), chat_format, PAPER_CHAT_FORMAT
            )
            if built_by_eval()
            else "resolved per model at its first request (the task was built outside an eval)",
            "official_scoring": official,
            "lf_eval": f"judge prompt {judge_prompt} ({judge_language})"
            if use_judge
            else "not computed: no grader role bound",
        },
    )


def _check_arguments(
    unknown: dict[str, Any],
    lang: str,
    tokenizer: str,
    retrieval: str,
    chat_format: str,
    data: str | None,
    corpus: str | None,
) -> None:
    """The arguments a typo can break, before anything is loaded."""
    CHECKS.unknown_args(unknown, [p for p in inspect.signature(koblex).parameters if p != "unknown"])
    CHECKS.choice("lang", lang, LANG_SUFFIX)
    CHECKS.choice("tokenizer", tokenizer, TOKENIZERS)
    CHECKS.choice("retrieval", retrieval, RETRIEVAL_MODES)
    CHECKS.choice("chat_format", chat_format, REQUESTED_FORMATS)
    CHECKS.file("data", data, "questions file")
    CHECKS.file("corpus", corpus, "statute corpus file")


def _evaluated_backend() -> Backend | None:
    """The evaluated model's backend when the eval building the task has made it active (not in a grid,
    which builds its tasks before any eval: there each request resolves `auto`)."""
    model = active_model() if built_by_eval() and not ROLES_SET_BY_BUILDER.get() else None
    return None if model is None else Backend.of(model)


def _user_request_settings() -> dict[str, Any]:
    """The evaluated model's `-M` arguments and the run's own `extra_body`: sent as given, listed as deviations."""
    model = active_model() if built_by_eval() and not ROLES_SET_BY_BUILDER.get() else None
    if model is None:
        return {}
    return {"model_args": dict(model.model_args), "extra_body": run_generate_config(model).extra_body}


def _generation_record(chat_format: str, evaluated: Backend | None) -> dict[str, Any]:
    """The chat format asked for and the settings sent: the resolved format's, when the model is known."""
    sent = chat_format if evaluated is None else evaluated.chat_format(chat_format, PAPER_CHAT_FORMAT)
    if sent == AUTO:
        return {"chat_format": AUTO, "by_format": GENERATION}
    return {"chat_format": chat_format, "sent": sent, **GENERATION[sent]}


def _format_config(chat_format: str) -> GenerateConfig:
    """The task's generate config: a forced chat format's temperature and top_p (auto: set per call)."""
    if chat_format == AUTO:
        return GenerateConfig()
    generation = GENERATION[chat_format]
    return GenerateConfig(temperature=generation["temperature"], top_p=generation["top_p"])


def _scorers(official: bool, judge_args: dict[str, Any] | None, gold: GoldBook) -> list[Scorer]:
    """Provision match and token F1; LF-Eval with the judge's settings when a judge grades the run."""
    scorers = [provision_match(gold=gold), token_f1(official=official), retrieval_funnel(gold=gold)]
    if judge_args is None:
        logger.warning(NO_JUDGE)
    else:
        scorers.append(lf_eval(official=official, gold=gold, **judge_args))
    return scorers


def _solver_identity(built: Solver) -> tuple[str, dict[str, Any]]:
    """Registry name and arguments (defaults included) of the solver the task is built with."""
    name = registry_name(built)
    return ("unregistered", {}) if name is None else (name, solver_params(built))


def _load_questions(data: str | None, lang: str, revision: str | None) -> Any:
    try:
        return load_koblex(data, lang, revision)
    except (DataError, HubUnavailableError) as exc:
        raise CHECKS.error(str(exc)) from exc


def _build_retriever(settings: RetrieverSettings) -> Any:
    """The process-wide retriever for the task's settings (the solvers reuse it): corpus loaded and indexed."""
    try:
        return get_retriever(settings)
    except (DataError, HubUnavailableError) as exc:
        raise CHECKS.error(str(exc)) from exc


def _corpus_record(retriever: Any, solver_name: str) -> dict[str, Any]:
    """Source, size, fingerprint and completeness of the statute pool this run retrieves from."""
    if retriever is None:
        return {"kind": f"not loaded: {solver_name} retrieves nothing", "retrieves": False}
    described = dict(retriever.corpus.describe())
    partial = described.get("partial")  # None: an article-level pool, whose full size is not known
    if partial is None:
        described["status"] = "full" if str(described.get("source", "")).startswith("hf:") else "unknown"
    else:
        described["status"] = "partial" if partial else "full"
    described["full_size"] = KOBLEX.full_corpus_size if described.get("level") != "article" else None
    return described
