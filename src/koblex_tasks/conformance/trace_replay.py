"""`koblex conformance --traces`: the package's solvers re-run on the released rows, call for call.

For each file, the solver of its method runs with its defaults (the paper's protocol) and the file's chat format
(`gpt4o` rows: the OpenAI scripts' one user message; the others: the vLLM scripts' system + user turns) on the
rows' questions, one Inspect eval per file, with:
- a scripted model returning each row's released outputs in order, after applying the request's stop strings
  as the script's server would (vLLM: excluded unless `include_stop_str_in_output`; OpenAI: excluded);
- a scripted retriever returning what the released run retrieved at each step (looked up in `--corpus`).
Both find their row through a context variable set by a first solver, so rows run concurrently. Then, per row:
the number of calls, each call's prompt text after its provisions, each retrieval's depth, the answer the
scorers read and the provisions relied on (`comb`) are compared with the row.
"""

from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalSample
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, chain, solver
from inspect_ai.tool import ToolChoice, ToolInfo

from koblex_tasks.conformance.compare import _first_divergence
from koblex_tasks.conformance.run import CHAT_FORMAT, _evidence
from koblex_tasks.conformance.traces import Reply, Script, TraceFile, TraceRow
from koblex_tasks.corpus.provision import Provision
from koblex_tasks.corpus.retriever import Hit, Retriever, aget_retriever, install_retriever
from koblex_tasks.corpus.statutes import load_statutes
from koblex_tasks.data.koblex.released import question_key
from koblex_tasks.errors import DataError
from koblex_tasks.providers.koblexmock import usage_for
from koblex_tasks.scorers.koblex.answer import sample_answer
from koblex_tasks.solvers.common import retriever_settings
from koblex_tasks.solvers.koblex.beamaggr import beamaggr
from koblex_tasks.solvers.koblex.chain_of_thought import chain_of_thought
from koblex_tasks.solvers.koblex.flare import flare
from koblex_tasks.solvers.koblex.ircot import ircot
from koblex_tasks.solvers.koblex.one_time_retrieval import one_time_retrieval
from koblex_tasks.solvers.koblex.parser import parser
from koblex_tasks.solvers.koblex.probtree import probtree
from koblex_tasks.solvers.koblex.self_ask import self_ask
from koblex_tasks.solvers.koblex.standard_prompting import standard_prompting
from koblex_tasks.tasks.koblex.task import koblex

# Each released method's solver, with its defaults (what `koblex_tasks/<method>` runs).
SOLVERS: dict[str, Callable[[], Solver]] = {
    "standard_prompting": standard_prompting,
    "chain_of_thought": chain_of_thought,
    "one_time_retrieval": one_time_retrieval,
    "cot_one_time_retrieval": lambda: one_time_retrieval(cot=True),
    "self_ask": self_ask,
    "ircot": ircot,
    "flare": flare,
    "probtree": probtree,
    "beamaggr": beamaggr,
    "parser": parser,
}
UNCERTAIN_LOGPROB = -10.0  # a token no threshold trusts: the released run retrieved after this sentence
VLLM_KEEP_STOP = "include_stop_str_in_output"
PROMPT_START = "\nQuestion: "  # a step prompt's text after its provisions starts here


@dataclass
class RowRun:
    """One row's replay: its script, and what our solver asked of the model and the retriever."""

    script: Script
    backend: str
    question: str  # the row's own text of background + question
    prompts: list[str] = field(default_factory=list)  # each call's last message
    depths: list[int] = field(default_factory=list)  # each retrieval's k


_ROW: ContextVar[RowRun | None] = ContextVar("koblex_trace_row", default=None)


def _row() -> RowRun:
    run = _ROW.get()
    if run is None:
        raise RuntimeError("a trace replay call outside a replayed row")
    return run


def served(reply: str, config: GenerateConfig, backend: str) -> str:
    """The reply as the script's server returns it: cut at the request's first stop string, which vLLM keeps
    only when asked (`include_stop_str_in_output`) and OpenAI never keeps."""
    stops = [s for s in config.stop_seqs or [] if s]
    found = [(i, -len(s)) for s in stops if (i := reply.find(s)) >= 0]
    if not found:
        return reply
    at, minus_length = min(found)
    keep = backend == "vllm" and bool((config.extra_body or {}).get(VLLM_KEEP_STOP))
    return reply[: at - minus_length] if keep else reply[:at]


def replay_output(
    messages: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
) -> ModelOutput:
    """The row's next released output (an empty reply past the last one: the call count then differs)."""
    run = _row()
    run.prompts.append(messages[-1].text if messages else "")
    index = len(run.prompts) - 1
    scripted = run.script.replies[index] if index < len(run.script.replies) else Reply("")
    text = served(scripted.text, config, run.backend)
    output = ModelOutput.from_content(model="replay", content=text)
    output.usage = usage_for("\n".join(m.text for m in messages), text)
    if config.logprobs:
        logprob = UNCERTAIN_LOGPROB if scripted.uncertain else 0.0
        output.choices[0].logprobs = Logprobs(
            content=[Logprob(token=c, logprob=logprob if i == 0 else 0.0) for i, c in enumerate(text)]
        )
    return output


class ScriptedRetriever(Retriever):
    """Returns the row's released provisions for its i-th retrieval, whatever the query (no index)."""

    def __init__(self, base: Retriever, provisions: dict[str, Provision]) -> None:
        self.corpus, self.index, self.dense = base.corpus, None, None
        self.reranker, self.settings = base.reranker, base.settings
        self._provisions = provisions

    def search(self, query: str, k: int) -> list[Hit]:
        raise RuntimeError("a trace replay retrieves only through asearch")

    async def asearch(self, query: str, k: int) -> list[Hit]:
        run = _row()
        run.depths.append(k)
        index = len(run.depths) - 1
        texts = run.script.retrievals[index] if index < len(run.script.retrievals) else []
        return [Hit(rank, self._provisions[t], None) for rank, t in enumerate(texts)]


def as_sent(text: str, background: str, question: str) -> dict[str, str]:
    """Background and question as the released run sent them: the row's text, split where its tail is the
    question (whitespace ignored); the dataset's own when the row's text is theirs joined."""
    if text == background + question:
        return {"background": background, "question": question}
    key = question_key(question)
    cut = next((i for i in range(len(text), -1, -1) if question_key(text[i:]) == key), None)
    if cut is None:  # matched by the question alone: the row's text is the question
        return {"background": background, "question": question}
    return {"background": text[:cut], "question": text[cut:]}


@solver
def replay_row(runs: dict[str, RowRun], provisions: dict[str, Provision]) -> Solver:
    """Bind the sample to its row (the context variable the model and retriever read) and install the
    scripted retriever for the settings the method's solver asks for."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        run = runs[str(state.sample_id)]
        _ROW.set(run)
        state.metadata.update(as_sent(run.question, state.metadata["background"], state.metadata["question"]))
        settings = retriever_settings(state, reranker="none")
        base = await aget_retriever(settings)
        if not isinstance(base, ScriptedRetriever):
            install_retriever(settings, ScriptedRetriever(base, provisions))
        return state

    return solve


@dataclass
class FileResult:
    name: str
    identical: int = 0
    replayable: int = 0
    not_replayable: Counter[str] = field(default_factory=Counter)
    differences: list[str] = field(default_factory=list)  # the first difference of each differing row

    @property
    def ok(self) -> bool:
        return not self.differences

    def summary(self) -> str:
        reasons = "; ".join(f"{r}: {n}" for r, n in self.not_replayable.most_common())
        skipped = sum(self.not_replayable.values())
        head = f"{self.name}: {self.identical}/{self.replayable} rows identical, {skipped} not replayable" + (
            f" ({reasons})" if reasons else ""
        )
        return "\n".join([head, *(f"  {d}" for d in self.differences)])


@dataclass
class TraceSetup:
    data: Path
    corpus: Path
    log_dir: Path | None = None


def corpus_provisions(corpus: Path) -> dict[str, Provision]:
    """Every provision of the corpus by its identity (`hierarchy + content`) and by its text."""
    statutes = load_statutes(str(corpus), use_cache=False)
    found: dict[str, Provision] = {}
    for p in statutes.provisions:
        found.setdefault(p.text, p)
        found[p.key] = p
    return found


def replay_file(trace: TraceFile, setup: TraceSetup, provisions: dict[str, Provision]) -> FileResult:
    result = FileResult(trace.name)
    runs: dict[str, RowRun] = {}
    rows: dict[str, TraceRow] = {}
    for row in trace.rows:
        if row.sample_id is None:
            result.replayable += 1
            result.differences.append(f"row {row.line}: its question is not in --data")
            continue
        missing = next((t for s in _scripted(row) for t in s if t not in provisions), None)
        if row.script is not None and missing is not None:
            row.reason, row.script = "a released provision is not in --corpus", None
        if row.script is None:
            result.not_replayable[row.reason or "no script"] += 1
            if row.held is not None:
                result.differences.append(f"row {row.line} (question {row.sample_id}): {row.held}")
            continue
        if row.sample_id in runs:
            result.replayable += 1
            result.differences.append(f"row {row.line}: a second row answers question {row.sample_id}")
            continue
        runs[row.sample_id] = RowRun(row.script, trace.backend, row.question)
        rows[row.sample_id] = row
    if runs:
        samples = _run(trace, setup, runs, provisions)
        for sample_id, row in rows.items():
            result.replayable += 1
            sample = samples.get(sample_id)
            difference = (
                "the eval lost the sample"
                if sample is None
                else first_difference(row, runs[sample_id], sample, trace.backend)
            )
            if difference is None:
                result.identical += 1
            else:
                result.differences.append(f"row {row.line} (question {sample_id}): {difference}")
    return result


def _scripted(row: TraceRow) -> list[list[str]]:
    return row.script.retrievals if row.script is not None else []


def _run(
    trace: TraceFile, setup: TraceSetup, runs: dict[str, RowRun], provisions: dict[str, Provision]
) -> dict[str, EvalSample]:
    task = koblex(
        data=str(setup.data),
        corpus=str(setup.corpus),
        reranker="none",  # the task's; every replayed method retrieves with BM25 alone (the scripted lists)
        chat_format=CHAT_FORMAT[trace.backend],
        solver=chain(replay_row(runs, provisions), SOLVERS[trace.method]()),
    )
    logs = inspect_eval(
        task,
        model=get_model("koblexmock/replay", custom_outputs=replay_output),
        sample_id=list(runs),
        display="none",
        log_dir=str(setup.log_dir) if setup.log_dir else None,
        score=False,
        fail_on_error=False,
        max_connections=64,
    )
    log = logs[0]
    if log.status != "success" and not log.samples:
        raise DataError(trace.name, None, f"the replay did not run: {log.error.message if log.error else ''}")
    return {str(s.id): s for s in log.samples or []}


def first_difference(row: TraceRow, run: RowRun, sample: EvalSample, backend: str) -> str | None:
    """The first way our run differs from the row: error, calls, prompts, retrievals, answer, provisions."""
    script = run.script
    if sample.error is not None:
        return f"our run failed: {sample.error.message.splitlines()[0]}"
    if len(run.prompts) != len(script.replies):
        return f"calls: released {len(script.replies)}, ours {len(run.prompts)}"
    for i, (expected, ours) in enumerate(zip(script.prompts, run.prompts, strict=False)):
        ours = ours if script.whole_prompts else _after_provisions(ours)
        if expected is not None and ours != expected:
            theirs, mine = _first_divergence(expected, ours)
            return f"call {i} prompt after its provisions: released {theirs} / ours {mine}"
    if len(run.depths) != len(script.retrievals):
        return f"retrievals: released {len(script.retrievals)}, ours {len(run.depths)}"
    for i, (depth, released) in enumerate(zip(run.depths, script.retrievals, strict=True)):
        if depth != len(released):
            return f"retrieval {i} depth: released {len(released)}, ours {depth}"
    answer = sample_answer(sample)
    if answer.strip() != row.answer.strip():  # the scorers strip; some files keep a leading space
        theirs, mine = _first_divergence(row.answer, answer)
        return f"answer: released {theirs} / ours {mine}"
    predicted = _evidence(sample).get("predicted")
    ours_comb = list(predicted) if isinstance(predicted, list) else None
    if row.comb is not None and ours_comb != row.comb:
        return f"comb: released {len(row.comb)} provisions, ours {len(ours_comb or [])} (or another order)"
    return None


def _after_provisions(prompt: str) -> str:
    at = prompt.find(PROMPT_START)
    return prompt[at:] if at >= 0 else prompt


def run_traces(files: list[TraceFile], setup: TraceSetup) -> list[FileResult]:
    provisions = corpus_provisions(setup.corpus)
    return [replay_file(f, setup, provisions) for f in files]
