"""Running our solvers against the fixtures: one Inspect eval per fixture file, against the local server.

Each file names a method and a backend. The method is our solver (`METHODS`); the backend picks the paper's
protocol for it: `vllm/<model>` reusing the local server (system + user turns, the vLLM scripts' limits),
or an OpenAI-compatible model with `chat_format=user` (the OpenAI scripts'). Every request the server
receives is matched to its sample and call by Inspect's request id (`x-irid`), so questions run
concurrently and are still compared in their own order. Retrieval is re-run with the task's own retriever
for each query our solver recorded, to read the ids and scores it saw.
"""

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.solver import Solver

from koblex_tasks.conformance.compare import FileReport, OurRetrieval, compare_fixture_question
from koblex_tasks.conformance.fixtures import Fixture, read_folder
from koblex_tasks.conformance.server import Recorded, ResponderServer
from koblex_tasks.corpus.rerank import STUB_OVERLAP
from koblex_tasks.corpus.retriever import Retriever, RetrieverSettings, get_retriever
from koblex_tasks.scorers.koblex.answer import sample_answer
from koblex_tasks.solvers.koblex._common import ChatFormat
from koblex_tasks.solvers.koblex.beamaggr import beamaggr
from koblex_tasks.solvers.koblex.chain_of_thought import chain_of_thought
from koblex_tasks.solvers.koblex.flare import flare
from koblex_tasks.solvers.koblex.ircot import ircot
from koblex_tasks.solvers.koblex.one_time_retrieval import one_time_retrieval
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.solvers.koblex.probtree import probtree
from koblex_tasks.solvers.koblex.standard_prompting import standard_prompting
from koblex_tasks.tasks.koblex.task import koblex

REQUEST_ID_HEADER = "x-irid"
CHAT_FORMAT: dict[str, ChatFormat] = {"vllm": "system_user", "openai": "user"}
OPENAI_SERVICE = "conformance"  # openai-api/<service>/<model>: its key and base URL come from the environment


@dataclass(frozen=True)
class Method:
    """Our solver for a fixture method, and the task's reranker for it (the stub where the script reranks)."""

    solver: Callable[..., Solver]
    reranker: str = "none"


# The recordings are of the released scripts: where the released traces contradict them (and the defaults
# follow the traces), the scripts' behaviour is switched on here (`protocol.SCRIPT_SWITCHES`).
IRCOT_SCRIPT: dict[str, Any] = {
    "script_prompt": True,
    "script_final_stop": True,
    "script_drops_punctuation": True,
    "script_final_prompt": True,
}
FLARE_SCRIPT: dict[str, Any] = {
    "script_stops_at_marker": True,
    "script_question_once": True,
    "script_drops_punctuation": True,
    "script_final_prompt": True,
}
SCRIPT_RUNS = (
    "ircot("
    + ", ".join(f"{k}=true" for k in IRCOT_SCRIPT)
    + "), flare("
    + ", ".join(f"{k}=true" for k in FLARE_SCRIPT)
    + "), one_time_retrieval(script_answer_marker=true)"
)
METHODS: dict[str, Method] = {
    "sp": Method(standard_prompting),
    "cot": Method(chain_of_thought),
    "sp_or": Method(lambda: one_time_retrieval(k="gold")),
    "cot_or": Method(lambda: one_time_retrieval(k="gold", cot=True, script_answer_marker=True)),
    "parser": Method(parser, STUB_OVERLAP),
    "ircot": Method(lambda: ircot(**IRCOT_SCRIPT)),
    "flare": Method(lambda: flare(**FLARE_SCRIPT)),
    "probtree_tree": Method(probtree),
    "beamaggr_tree": Method(beamaggr),
}


@dataclass
class Conformance:
    """The inputs of a run: the questions and the corpus the fixtures were recorded on."""

    data: Path
    corpus: Path
    log_dir: Path | None = None
    solver_args: dict[str, dict[str, Any]] = field(default_factory=dict)  # per fixture method: switches
    # per fixture method, script versions to try in turn (label -> switches): the first identical one is
    # reported, else the one with the most identical calls; each report names the version it ran as
    versions: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)


# The recordings of ParSeR's refactored scripts (the shared `official_requests`) compare with these switches;
# the original scripts' recordings with the defaults (`benchmarks.koblex.spec.PARSER_SCRIPTS`).
PARSER_SCRIPT_ARGS: dict[str, dict[str, Any]] = {
    "original": {},
    "refactored": {"official_scripts": "refactored", "official_selection_bug": True},
}


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for the block (the providers read base URL and key from there)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def model_name(fixture: Fixture) -> str:
    model = fixture.model.split(",")[0] or "model"
    return f"vllm/{model}" if fixture.backend == "vllm" else f"openai-api/{OPENAI_SERVICE}/{model}"


def run_fixture(fixture: Fixture, setup: Conformance, server: ResponderServer) -> FileReport:
    """Our solver on the fixture's questions against the server, compared with the recording."""
    report = FileReport(fixture.name)
    method = METHODS.get(fixture.method)
    if method is None:
        report.error = f"no solver for method {fixture.method!r} (known: {', '.join(METHODS)})"
        return report
    env = {
        "VLLM_BASE_URL": server.base_url,
        "VLLM_API_KEY": "conformance",
        f"{OPENAI_SERVICE.upper()}_BASE_URL": server.base_url,
        f"{OPENAI_SERVICE.upper()}_API_KEY": "conformance",
    }
    with _environment(env):
        task = koblex(
            data=str(setup.data),
            corpus=str(setup.corpus),
            reranker=method.reranker,
            chat_format=CHAT_FORMAT[fixture.backend],
            solver=method.solver(**setup.solver_args.get(fixture.method, {})),
        )
        logs = inspect_eval(
            task,
            model=model_name(fixture),
            model_base_url=server.base_url,
            sample_id=list(fixture.questions),
            display="none",
            log_dir=str(setup.log_dir) if setup.log_dir else None,
            score=False,
            fail_on_error=False,
            log_model_api=True,  # every request in the log: its id matches it to the server's record
        )
    requests = server.requests
    log = logs[0]
    if log.status != "success" or not log.samples:
        report.error = (
            f"the eval did not succeed: {log.status} {log.error.message if log.error else ''}".strip()
        )
        return report
    _compare(report, fixture, log, requests)
    return report


def _compare(report: FileReport, fixture: Fixture, log: EvalLog, requests: list[Recorded]) -> None:
    by_id: dict[str, dict[str, Any]] = {}
    for recorded in requests:  # a retried request keeps its id: the last one is what was answered
        request_id = recorded.headers.get(REQUEST_ID_HEADER)
        if request_id:
            by_id[request_id] = recorded.body
    samples = {str(s.id): s for s in log.samples or []}
    retriever = get_retriever(
        RetrieverSettings.from_dict(log.eval.metadata.get("retrieval") if log.eval.metadata else None)
    )
    positions = {p.key: i for i, p in enumerate(retriever.corpus.provisions)}
    for question in fixture.questions:
        sample = samples.get(question)
        if sample is None:
            report.error = f"question {question} is not in --data"
            return
        if sample.error is not None and report.error is None:
            report.error = f"question {question}: {sample.error.message}"
        bodies = [by_id.get(_request_id(e)) for e in sample.events if isinstance(e, ModelEvent)]
        if None in bodies and report.error is None:  # a call the server never saw (a cached reply?)
            report.error = f"question {question}: call {bodies.index(None)} did not reach the server"
        answer, provisions = _result(sample)
        retrievals = _retrievals(sample, retriever, positions, fixture)
        compare_fixture_question(report, fixture, question, bodies, answer, provisions, retrievals)


def _request_id(event: ModelEvent) -> str:
    headers = event.call.request.get("extra_headers") if event.call is not None else None
    return str(headers.get(REQUEST_ID_HEADER, "")) if isinstance(headers, dict) else ""


def _evidence(sample: EvalSample) -> dict[str, Any]:
    return {
        k.split(":", 1)[1]: v for k, v in (sample.store or {}).items() if k.startswith("ProvisionEvidence:")
    }


def _result(sample: EvalSample) -> tuple[str, list[str] | None]:
    """The answer the scorers read (the recorded rule on the completion) and the provisions relied on."""
    predicted = _evidence(sample).get("predicted")
    return sample_answer(sample), list(predicted) if isinstance(predicted, list) else None


def _retrievals(
    sample: EvalSample, retriever: Retriever, positions: dict[str, int], fixture: Fixture
) -> list[OurRetrieval]:
    """Each recorded query re-run with the task's retriever: BM25 at our depth, and the rerank if any."""
    record = _evidence(sample)
    queries, retrieved = list(record.get("queries") or []), list(record.get("retrieved") or [])
    official = fixture.retrievals.get(str(sample.id), [])
    out: list[OurRetrieval] = []
    for i, (query, keys) in enumerate(zip(queries, retrieved, strict=False)):
        reranks = i < len(official) and official[i].reranked_ids is not None
        depth = official[i].k if reranks else len(keys)
        hits = retriever.search(query, depth)
        rerank_query = reranked = reranked_scores = None
        if reranks:  # the solver's own reranked list (its tie order), scored again for the scores
            rerank_query = str(sample.metadata.get("question", ""))
            texts = {h.provision.key: h.provision.text for h in hits}
            reranked = [positions[key] for key in keys]
            reranked_scores = [
                float(s) for s in retriever.reranker.scores(rerank_query, [texts[k] for k in keys])
            ]
        out.append(
            OurRetrieval(
                query,
                [positions[h.provision.key] for h in hits],
                [float(h.bm25_score or 0.0) for h in hits],
                rerank_query,
                reranked,
                reranked_scores,
            )
        )
    return out


def run_folder(folder: Path, setup: Conformance, only: list[str] | None = None) -> list[FileReport]:
    """Every fixture of the folder (or those named in `only`), in name order."""
    fixtures = [f for f in read_folder(folder) if not only or f.name in only]
    with process_server() as server:
        return [_run_versions(f, setup, server) for f in fixtures]


def _run_versions(fixture: Fixture, setup: Conformance, server: ResponderServer) -> FileReport:
    """The fixture against each script version its method has (a recording does not say which scripts
    made it): the first identical one, else the closest, named in the report."""
    versions = setup.versions.get(fixture.method)
    if not versions:
        return run_fixture(fixture, setup, server)
    reports = []
    for label, switches in versions.items():
        args = {
            **setup.solver_args,
            fixture.method: {**setup.solver_args.get(fixture.method, {}), **switches},
        }
        report = run_fixture(fixture, replace(setup, solver_args=args), server)
        report.version = label
        if report.ok:
            return report
        reports.append(report)
    return max(reports, key=lambda r: (r.error is None, r.calls.identical, r.results.identical))


# Inspect's vLLM provider keeps a model's server URL for the whole process (one server per base model), so
# every server in a process listens on the port of the first.
_port: int | None = None


def process_server(**options: Any) -> ResponderServer:
    """A responder server (not started) on this process' port."""
    global _port
    server = ResponderServer(port=_port or 0, **options)
    _port = server.port
    return server
