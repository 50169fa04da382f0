"""Record what the official ParSeR scripts send to the model, call by call (the shared `official_requests` way).

    python tools/record_official_requests.py --repo KOBLEX --shared DATA --version original --out DIR

KOBLEX is a checkout of `daehuikim/KoBLEX` or a git mirror of it (its `experiments/` is exported at --rev);
DATA is the folder holding `koblex.jsonl`, `statutes.jsonl` and `official_requests/responder.py`.
Run it with a Python that has `bm25s==0.2.13`, numpy and tqdm, and nothing of the model stack: vllm,
transformers, torch and sentence_transformers are replaced here by fakes (a separate venv keeps the shared
environment untouched: `python -m venv /tmp/rec && /tmp/rec/bin/pip install bm25s==0.2.13 tqdm`).

The scripts run unchanged, stage by stage, as their own `__main__`:
- `--version original`: `experiments/parser/original/{1.parametric_provision,2.selection_retrieval,3.parser_qa}.py`
- `--version refactored`: `experiments/parser/vllm/{parametric_provision,selection_retrieval,question_answering}.py`
  (run as modules of the `parser.vllm` package: they import `..prompts`).
The fakes record every request and answer with the shared responder (`respond(T, stop)`, T = the prompt
string the script hands to `LLM.generate`, which the fake tokenizer renders with Qwen3's chat template);
the cross-encoder is replaced by `len(set(q) & set(p)) / (1 + len(p))` (float64), and the scripts' own code
sorts its scores. Nothing about the scripts' rules is assumed: the reranked top 10 of each BM25 call is read
back from the candidates the script put in its selection prompt.

Writes `parser_vllm.jsonl` (call lines, then the script's result rows) and `parser_vllm.retrieval.jsonl` (one
line per BM25 call) in the format of `official_requests/README.md`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import runpy
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

STAGES = ("parametric_provision", "selection_retrieval", "question_answering")
SCRIPTS = {
    "original": ("1.parametric_provision.py", "2.selection_retrieval.py", "3.parser_qa.py"),
    "refactored": STAGES,
}
IM_START, IM_END = "<|im_start|>", "<|im_end|>"


class Recorder:
    """Everything the fakes saw, in order."""

    def __init__(self, respond: Any, questions: list[dict[str, Any]]) -> None:
        self.respond = respond
        self.questions = questions
        self.stage = ""
        self.calls: list[dict[str, Any]] = []
        self.rendered: dict[str, tuple[list[dict[str, str]], dict[str, Any]]] = {}
        self.retrievals: list[dict[str, Any]] = []
        self.reranks: list[tuple[str, list[str], list[float], dict[str, Any]]] = []
        self.query_texts: dict[int, str] = {}

    def question_of(self, messages: list[dict[str, str]]) -> str:
        """The dataset question whose text the request's last message holds (the longest, if several)."""
        text = messages[-1]["content"]
        found = [q for q in self.questions if q["question"] in text]
        if not found:
            raise SystemExit(f"a request holds no dataset question: {text[-200:]!r}")
        return str(max(found, key=lambda q: len(q["question"]))["id"])


REC: Recorder


# ---- fake vllm / transformers -------------------------------------------------------------------------


def render_qwen3(messages: list[dict[str, str]], add_generation_prompt: bool, enable_thinking: Any) -> str:
    """Qwen3's chat template for plain turns (what the scripts decode and pass to `LLM.generate`)."""
    out = "".join(f"{IM_START}{m['role']}\n{m['content']}{IM_END}\n" for m in messages)
    if add_generation_prompt:
        out += f"{IM_START}assistant\n"
        if enable_thinking is False:
            out += "<think>\n\n</think>\n\n"
    return out


class FakeTokenizer:
    padding_side = "left"

    @classmethod
    def from_pretrained(cls, name: str, *args: Any, **kwargs: Any) -> FakeTokenizer:
        return cls()

    def apply_chat_template(self, messages: list[dict[str, str]], **kwargs: Any) -> Any:
        text = render_qwen3(
            messages, bool(kwargs.get("add_generation_prompt")), kwargs.get("enable_thinking")
        )
        template_args = {k: v for k, v in kwargs.items() if k == "enable_thinking"}
        REC.rendered[text] = ([{"role": m["role"], "content": m["content"]} for m in messages], template_args)
        return [text] if kwargs.get("tokenize", True) else text

    def decode(self, tokens: Any, skip_special_tokens: bool = False) -> str:
        return str(tokens)


class SamplingParams:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        for key, value in kwargs.items():
            setattr(self, key, value)


class Logprob:
    def __init__(self, logprob: float, rank: int, decoded_token: str) -> None:
        self.logprob, self.rank, self.decoded_token = logprob, rank, decoded_token


class LLM:
    def __init__(self, model: str, **kwargs: Any) -> None:
        self.model = model

    def generate(self, prompts: Any, sampling_params: SamplingParams, **kwargs: Any) -> list[Any]:
        prompts = [prompts] if isinstance(prompts, str) else list(prompts)
        return [self._one(p, sampling_params) for p in prompts]

    def _one(self, prompt: str, sp: SamplingParams) -> Any:
        messages, template_args = REC.rendered[prompt]
        stop = sp.kwargs.get("stop")
        reply, cls = REC.respond(prompt, [stop] if isinstance(stop, str) else stop)
        wants_logprobs = sp.kwargs.get("logprobs") is not None
        qid = REC.question_of(messages)
        REC.calls.append(
            {
                "type": "call",
                "question_id": qid,
                "index_in_question": sum(c["question_id"] == qid for c in REC.calls),
                "stage": f"{REC.stage}:{cls}",
                "backend": "vllm",
                "model": self.model,
                "messages": messages,
                "params": {**sp.kwargs, **template_args},
                "reply": reply,
                "reply_has_logprobs": wants_logprobs,
            }
        )
        logprobs = (
            [{ord(c): Logprob(-(1 + ord(c) % 10) / 10, 1, c)} for c in reply] if wants_logprobs else None
        )
        completion = types.SimpleNamespace(
            text=reply, token_ids=[ord(c) for c in reply], logprobs=logprobs, finish_reason="stop"
        )
        return types.SimpleNamespace(prompt=prompt, outputs=[completion])


# ---- fake torch / sentence_transformers ---------------------------------------------------------------


class Sigmoid:
    def __repr__(self) -> str:
        return "Sigmoid()"


def stub_score(query: str, passage: str) -> float:
    """The shared recordings' reranker: shared characters over passage length."""
    return len(set(query) & set(passage)) / (1 + len(passage))


class CrossEncoder:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.init = {"model_name": args[0] if args else kwargs.pop("model_name", None)}
        self.init.update({k: repr(v) for k, v in kwargs.items()})

    def predict(self, pairs: list[tuple[str, str]], **kwargs: Any) -> Any:
        import numpy as np

        scores = np.array([stub_score(q, p) for q, p in pairs], dtype=np.float64)
        REC.reranks.append((pairs[0][0] if pairs else "", [p for _, p in pairs], scores.tolist(), self.init))
        return scores

    def to(self, *args: Any) -> CrossEncoder:
        return self

    def eval(self) -> CrossEncoder:
        return self


def install_fakes() -> None:
    def module(name: str, **attrs: Any) -> types.ModuleType:
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
        return mod

    module("vllm", LLM=LLM, SamplingParams=SamplingParams)
    module("transformers", AutoTokenizer=FakeTokenizer)
    module("sentence_transformers", CrossEncoder=CrossEncoder)
    cuda = types.SimpleNamespace(empty_cache=lambda: None, is_available=lambda: False)
    module("torch", nn=types.SimpleNamespace(Sigmoid=Sigmoid), cuda=cuda)
    if importlib.util.find_spec("Stemmer") is None:  # imported (unused) by the original stage 1
        module("Stemmer")


def hook_bm25() -> None:
    """Record every BM25 call: the query text (from `tokenize`), its tokens, k, ids and scores."""
    import bm25s

    tokenize, retrieve = bm25s.tokenize, bm25s.BM25.retrieve

    def tokenize_hook(texts: Any, *args: Any, **kwargs: Any) -> Any:
        out = tokenize(texts, *args, **kwargs)
        if isinstance(texts, list) and len(texts) == 1:
            REC.query_texts[id(out)] = texts[0]
        return out

    def retrieve_hook(self: Any, query_tokens: Any, *args: Any, **kwargs: Any) -> Any:
        docs, scores = retrieve(self, query_tokens, *args, **kwargs)
        vocab = {i: t for t, i in query_tokens.vocab.items()}
        REC.retrievals.append(
            {
                "query": REC.query_texts[id(query_tokens)],
                "query_tokens": [vocab[i] for i in query_tokens.ids[0]],
                "k": kwargs.get("k", args[0] if args else 10),
                "bm25_ids": [int(i) for i in docs[0]],
                "bm25_scores": [float(s) for s in scores[0]],
            }
        )
        return docs, scores

    bm25s.tokenize = tokenize_hook
    bm25s.BM25.retrieve = retrieve_hook


# ---- running the scripts ------------------------------------------------------------------------------


def export_experiments(repo: Path, rev: str, into: Path) -> Path:
    """`experiments/` of a checkout, or exported from a git mirror at `rev`."""
    if (repo / "experiments").is_dir():
        return repo / "experiments"
    archive = subprocess.run(
        ["git", f"--git-dir={repo}", "archive", rev, "experiments/parser"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "experiments"


def run_stage(experiments: Path, version: str, stage: int, argv: list[str]) -> None:
    REC.stage = STAGES[stage]
    script = SCRIPTS[version][stage]
    if version == "original":
        path = experiments / "parser" / "original" / script
        sys.argv = [str(path), *argv]
        runpy.run_path(str(path), run_name="__main__")
    else:
        sys.argv = [script, *argv]
        runpy.run_module(f"parser.vllm.{script}", run_name="__main__", alter_sys=True)


def stage_args(version: str, stage: int, src: Path, dst: Path, statutes: Path, model: str) -> list[str]:
    if version == "original":
        args = ["--input_path", str(src), "--output_path", str(dst), "--model_name", model]
        return args + (["--statute_path", str(statutes)] if stage == 1 else [])
    if stage == 0:
        return ["--input_file", str(src), "--output_file", str(dst), "--model_name", model]
    args = ["--input", str(src), "--output", str(dst), "--model_name", model]
    return args + (["--statute_pool", str(statutes)] if stage == 1 else [])


def read_back_reranks(selection_calls: list[dict[str, Any]], statutes: list[str]) -> list[dict[str, Any]]:
    """Each BM25 call's reranked top 10, read from the selection prompt the script built for it."""
    out = []
    for retrieval, call, (query, passages, scores, init) in zip(
        REC.retrievals, selection_calls, REC.reranks, strict=True
    ):
        shown = call["messages"][-1]["content"].rsplit("<Query>", 1)[1]
        block = shown.split("Candidates: \n", 1)[1].rsplit("\nAnswer: ", 1)[0]
        order = shown_order(block, passages)
        out.append(
            {
                "reranked_top10_ids": [retrieval["bm25_ids"][i] for i in order],
                "rerank_query": query,
                "reranker_init": init,
                "reranked_top10_scores": [scores[i] for i in order],
            }
        )
        assert all(statutes[retrieval["bm25_ids"][i]] == passages[i] for i in order)
    return out


def shown_order(block: str, passages: list[str]) -> list[int]:
    """Positions in `passages` of the candidates `"0: text\\n1: text..."` shows, in order (duplicates: the
    first unused one; several prefixes matching: the one after which the rest still parses)."""

    def parse(pos: int, i: int, used: frozenset[int]) -> list[int] | None:
        if pos == len(block):
            return []
        head = f"{i}: " if i == 0 else f"\n{i}: "
        if not block.startswith(head, pos):
            return None
        start = pos + len(head)
        for j, text in enumerate(passages):
            if j not in used and block.startswith(text, start):
                rest = parse(start + len(text), i + 1, used | {j})
                if rest is not None:
                    return [j, *rest]
        return None

    order = parse(0, 0, frozenset())
    if order is None:
        raise SystemExit("the selection prompt's candidates are not the reranked BM25 candidates")
    return order


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True, help="KoBLEX checkout or git mirror")
    ap.add_argument("--rev", default="HEAD", help="revision of a git mirror (default HEAD)")
    ap.add_argument("--shared", type=Path, required=True, help="folder with koblex.jsonl, statutes.jsonl")
    ap.add_argument("--version", choices=sorted(SCRIPTS), required=True)
    ap.add_argument("--questions", type=int, default=8, help="first N questions of koblex.jsonl")
    ap.add_argument("--model", default="Qwen/Qwen3-8B")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    spec = importlib.util.spec_from_file_location(
        "responder", args.shared / "official_requests" / "responder.py"
    )
    if spec is None or spec.loader is None:
        raise SystemExit(f"no responder.py under {args.shared / 'official_requests'}")
    responder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(responder)
    with (args.shared / "koblex.jsonl").open(encoding="utf-8") as f:
        questions = [json.loads(line) for line, _ in zip(f, range(args.questions), strict=False)]
    statutes_path = args.shared / "statutes.jsonl"
    with statutes_path.open(encoding="utf-8") as f:
        statutes = [(r := json.loads(line))["hierarchy"] + r["content"] for line in f]

    global REC
    REC = Recorder(lambda text, stop: responder.respond(text, stop), questions)
    install_fakes()
    hook_bm25()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        experiments = export_experiments(args.repo.resolve(), args.rev, tmp)
        sys.path[:0] = [str(experiments), str(experiments / "parser" / "vllm")]
        files = [tmp / "input.jsonl", tmp / "provisions.jsonl", tmp / "selected.jsonl", tmp / "answers.jsonl"]
        files[0].write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), "utf-8")
        for stage in range(3):
            argv = stage_args(args.version, stage, files[stage], files[stage + 1], statutes_path, args.model)
            run_stage(experiments, args.version, stage, argv)
        rows = [json.loads(line) for line in files[3].read_text("utf-8").splitlines()]

    selection = [c for c in REC.calls if c["stage"].startswith("selection_retrieval:")]
    reranks = read_back_reranks(selection, statutes)
    args.out.mkdir(parents=True, exist_ok=True)
    name = "parser_vllm"
    with (args.out / f"{name}.jsonl").open("w", encoding="utf-8") as f:
        for call in REC.calls:
            f.write(json.dumps(call, ensure_ascii=False) + "\n")
        for q, row in zip(questions, rows, strict=True):
            f.write(
                json.dumps({"type": "final_output", "question_id": q["id"], "row": row}, ensure_ascii=False)
            )
            f.write("\n")
    with (args.out / f"{name}.retrieval.jsonl").open("w", encoding="utf-8") as f:
        for i, (call, retrieval, rerank) in enumerate(zip(selection, REC.retrievals, reranks, strict=True)):
            line = {"question_id": call["question_id"], "retrieval_index": i, "stage": "selection_retrieval"}
            f.write(json.dumps({**line, **retrieval, **rerank}, ensure_ascii=False) + "\n")
    print(
        f"{args.version}: {len(REC.calls)} calls, {len(REC.retrievals)} BM25 calls -> {args.out / name}.jsonl"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
