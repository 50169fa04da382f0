"""The cross-encoder reranker's real loading code, on a tiny random-weight model built here (no downloads)."""

import itertools
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from koblex_tasks.corpus.rerank import CrossEncoderReranker, NoReranker, StubOverlapReranker, get_reranker
from koblex_tasks.corpus.retriever import RetrieverSettings, build_retriever, clear_retrievers, get_retriever
from tests.conftest import TINY_STATUTES, statute_key


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch", reason="the rerank extra (torch) is not installed")
    transformers = pytest.importorskip(
        "transformers", reason="the rerank extra (transformers) is not installed"
    )
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    texts = [statute_key(r) for r in TINY_STATUTES] * 3
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        texts, trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    )
    hf_tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]"
    )
    config = transformers.BertConfig(
        vocab_size=len(hf_tok),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
        max_position_embeddings=256,
    )
    transformers.set_seed(0)
    path = tmp_path_factory.mktemp("tiny-cross-encoder")
    transformers.BertForSequenceClassification(config).save_pretrained(path)
    hf_tok.save_pretrained(path)
    return path


def test_cross_encoder_scores_are_sigmoid_probabilities(tiny_cross_encoder: Path) -> None:
    reranker = get_reranker(str(tiny_cross_encoder), device="cpu")
    assert isinstance(reranker, CrossEncoderReranker)
    passages = [statute_key(r) for r in TINY_STATUTES]
    scores = reranker.scores("강도가 상해를 입히면?", passages)
    assert len(scores) == len(passages) and all(0.0 < s < 1.0 for s in scores)
    assert scores == reranker.scores("강도가 상해를 입히면?", passages)  # deterministic
    assert reranker.scores("q", []) == []


def test_retriever_reorders_by_reranker(tiny_cross_encoder: Path, tiny_corpus: Path) -> None:
    retriever = build_retriever(
        RetrieverSettings(corpus=str(tiny_corpus), tokenizer="official", reranker=str(tiny_cross_encoder))
    )
    hits = retriever.search("강도가 사람을 상해하거나 재량권의 한계를 넘거나 운송물을", 5)
    reranked = retriever.rerank("질문", hits, top=2)
    scores = retriever.reranker.scores("질문", [h.provision.key for h in hits])
    best = sorted(range(len(hits)), key=lambda i: (-scores[i], i))[:2]
    assert [h.provision.key for h in reranked] == [hits[i].provision.key for i in best]
    assert [h.rank for h in reranked] == [0, 1] and reranked[0].rerank_score == pytest.approx(scores[best[0]])


def test_missing_dependencies_message(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_torch(name: str, *args, **kwargs):
        if name == "torch":
            raise ImportError("no torch")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    with pytest.raises(RuntimeError, match=r'pip install -e "\.\[rerank\]".*--index-url .*/whl/cpu'):
        CrossEncoderReranker("some/model").scores("q", ["p"])
    assert NoReranker().scores("q", ["a", "b"]) == [0.0, -1.0]


def test_settings_differing_only_in_reranker_share_corpus_and_index(
    tiny_cross_encoder: Path, tiny_corpus: Path
) -> None:
    """The task builds with the paper's reranker, most baselines search the same pool with none: one load."""
    clear_retrievers()
    try:
        plain = RetrieverSettings(corpus=str(tiny_corpus), tokenizer="official", reranker="none")
        first = get_retriever(plain)
        reranked = get_retriever(replace(plain, reranker=str(tiny_cross_encoder)))
        assert reranked is not first and reranked.settings.reranker == str(tiny_cross_encoder)
        assert reranked.corpus is first.corpus and reranked.index is first.index
        assert reranked.reranker.name != first.reranker.name == "none"
        other_tokens = get_retriever(replace(plain, tokenizer="kiwi"))  # another index: built on its own
        assert other_tokens.index is not first.index
        query = "강도가 사람을 상해하거나 재량권의 한계를 넘거나 운송물을"
        assert reranked.search(query, 5) == first.search(query, 5)
    finally:
        clear_retrievers()


def test_the_cross_encoder_cuts_at_the_tokenizers_own_maximum(
    tiny_cross_encoder: Path, tmp_path: Path
) -> None:
    """As the official code (no max_length): the tokenizer's model_max_length decides, not a fixed 512."""
    limited = tmp_path / "limited"
    shutil.copytree(tiny_cross_encoder, limited)
    config_path = limited / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config_path.write_text(json.dumps({**config, "model_max_length": 12}))
    passages = [" ".join(statute_key(r) for r in TINY_STATUTES)]  # far past 12 tokens
    own = CrossEncoderReranker(str(limited), device="cpu")
    assert own.config()["max_length"] is None
    at_12 = CrossEncoderReranker(str(limited), device="cpu", max_length=12).scores("강도", passages)
    at_6 = CrossEncoderReranker(str(limited), device="cpu", max_length=6).scores("강도", passages)
    assert own.scores("강도", passages) == at_12 != at_6


def test_stub_overlap_scores_characters_and_ties_sort_as_the_scripts(tiny_corpus: Path) -> None:
    """The fixtures' stub (tests only): shared characters / (1 + length); equal scores by text, descending."""
    from koblex_tasks.solvers.koblex._common import rerank_as_scripts

    stub = get_reranker("stub-overlap")
    assert isinstance(stub, StubOverlapReranker) and stub.config()["testing_only"] is True
    assert stub.scores("가나", ["가다", "라마바", ""]) == [1 / 3, 0.0, 0.0]
    retriever = build_retriever(
        RetrieverSettings(corpus=str(tiny_corpus), tokenizer="official", reranker="stub-overlap")
    )
    hits = retriever.search("강도가 사람을 상해하거나 재량권의 한계를 넘거나 운송물을", 5)
    top = rerank_as_scripts(retriever, "qxz", hits, 5)  # no shared character: every score ties at 0
    texts = [h.provision.text for h in top]
    assert texts == sorted(texts, reverse=True) and [h.rank for h in top] == list(range(len(top)))


def test_parsers_original_scripts_keep_the_first_stage_order_of_equal_scores(tiny_corpus: Path) -> None:
    """ParSeR's original scripts sort by the score alone (stable): ties stay in BM25 order, not text order."""
    from koblex_tasks.solvers.koblex._common import rerank_as_scripts

    retriever = build_retriever(
        RetrieverSettings(corpus=str(tiny_corpus), tokenizer="official", reranker="stub-overlap")
    )
    hits = retriever.search("강도가 사람을 상해하거나 재량권의 한계를 넘거나 운송물을", 5)
    bm25 = [h.provision.key for h in hits]
    first_stage = [h.provision.key for h in rerank_as_scripts(retriever, "qxz", hits, 5, ties="first_stage")]
    by_text = [h.provision.key for h in rerank_as_scripts(retriever, "qxz", hits, 5, ties="text")]
    assert first_stage == bm25 and by_text != bm25  # every score ties at 0: only the tie rule orders them
    # distinct scores decide first either way; only the equal ones keep the first-stage order
    scored = rerank_as_scripts(retriever, "강도 운송", hits, 5, ties="first_stage")
    scores = [h.rerank_score for h in scored]
    assert scores == sorted(scores, reverse=True)
    for a, b in itertools.pairwise(scored):
        if a.rerank_score == b.rerank_score:
            assert bm25.index(a.provision.key) < bm25.index(b.provision.key)


def test_pairs_of_many_queries_scored_by_length_equal_the_serialised_scores(tiny_cross_encoder: Path) -> None:
    from koblex_tasks.corpus.rerank_stage import RerankSetup, build_stage

    reranker = CrossEncoderReranker(str(tiny_cross_encoder), device="cpu", batch_size=3)
    passages = [statute_key(r) for r in TINY_STATUTES]
    queries = ["강도가 상해를 입히면?", "운송물 인도 후 손해배상"]
    pairs = [(q, p) for q in queries for p in reversed(passages)]
    expected = [s for q in queries for s in reranker.scores(q, list(reversed(passages)))]
    assert reranker.score_pairs(pairs) == pytest.approx(expected, abs=1e-6)
    stage = build_stage(RerankSetup(str(tiny_cross_encoder), device="cpu", cache=False))
    assert stage.scores(queries[0], passages) == pytest.approx(
        reranker.scores(queries[0], passages), abs=1e-6
    )
    assert stage.config()["dtype"] == "float32" and stage.config()["batching"]
    with pytest.raises(ValueError, match="reranker_dtype"):
        CrossEncoderReranker(str(tiny_cross_encoder), dtype="float16")
    bf16 = CrossEncoderReranker(str(tiny_cross_encoder), device="cpu", dtype="bfloat16")
    assert bf16.scores(queries[0], passages) == pytest.approx(expected[: len(passages)][::-1], abs=0.05)


def test_length_batches_sort_by_length_and_bound_padded_tokens() -> None:
    from koblex_tasks.corpus.rerank_batch import length_batches

    lengths = [7, 3, 9, 3, 40, 5, 9, 2, 8]
    batches = length_batches(lengths, max_tokens=20)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(lengths)))  # every pair once
    assert [lengths[i] for i in flat] == sorted(lengths) and flat.index(1) < flat.index(3)  # stable
    for batch in batches:
        padded = len(batch) * max(lengths[i] for i in batch)
        assert padded <= 20 or len(batch) == 1  # a pair longer than the bound runs alone
    assert batches == [[7, 1, 3, 5], [0, 8], [2, 6], [4]]
    assert length_batches([], 10) == []


def test_the_batching_queue_pools_concurrent_queries_by_length_with_the_unbatched_scores(
    tiny_cross_encoder: Path,
) -> None:
    """Concurrent samples through one queue, scored in length-sorted micro-batches of few tokens: each caller
    gets its own scores in its own order, equal to the one-query-at-a-time path's up to float noise."""
    from concurrent.futures import ThreadPoolExecutor

    from koblex_tasks.corpus.rerank_batch import BatchQueue

    encoder = CrossEncoderReranker(str(tiny_cross_encoder), device="cpu", max_batch_tokens=64)
    passages = [statute_key(r) for r in TINY_STATUTES]
    samples = [
        (q, passages[i:] + passages[:i])
        for i, q in enumerate(["강도 상해", "운송물 인도 후 손해배상", "혼인", "q"])
    ]
    unbatched = [encoder.scores(q, ps) for q, ps in samples]
    forwarded: list[list[list[int]]] = []
    original = encoder.forward
    encoder.forward = lambda encoded, batches: forwarded.append(batches) or original(encoded, batches)  # type: ignore[method-assign]
    queue = BatchQueue(encoder.score_pairs, wait_s=0.5)
    with ThreadPoolExecutor(len(samples)) as pool:
        batched = list(pool.map(lambda s: queue.scores(*s), samples))
    assert len(forwarded) == 1 and len(forwarded[0]) > 1  # one pooled call, several micro-batches
    for got, want, (_, ps) in zip(batched, unbatched, samples, strict=True):
        assert got == pytest.approx(want, abs=1e-5)
        top = sorted(range(len(ps)), key=lambda i: -want[i])[:3]
        assert sorted(range(len(ps)), key=lambda i: -got[i])[:3] == top
    assert sorted(batched[0]) != sorted(batched[1])  # the callers' scores are not interchangeable
