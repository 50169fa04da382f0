"""Dense retrieval (real loading and pooling code on a tiny random-weight encoder), its cache, RRF, hybrid."""

import json
import logging
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import anyio
import numpy as np
import pytest

from koblex_tasks.corpus.dense import DenseEncoder, DenseIndex, get_encoder, top_k
from koblex_tasks.corpus.hybrid import reciprocal_rank_fusion
from koblex_tasks.corpus.retriever import Hit, RetrieverSettings, build_retriever, get_retriever
from koblex_tasks.corpus.statutes import load_statutes
from tests.conftest import TINY_STATUTES, statute_key

KEYS = [statute_key(r) for r in TINY_STATUTES]


def _tiny_encoder(path: Path, seed: int, hidden: int = 32) -> Path:
    transformers = pytest.importorskip(
        "transformers", reason="the dense extra (transformers) is not installed"
    )
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        KEYS * 3,
        trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"]),
    )
    hf_tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]"
    )
    config = transformers.BertConfig(
        vocab_size=len(hf_tok),
        hidden_size=hidden,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
    )
    transformers.set_seed(seed)
    transformers.BertModel(config).save_pretrained(path)
    hf_tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch", reason="the dense extra (torch) is not installed")
    return _tiny_encoder(tmp_path_factory.mktemp("tiny-encoder"), seed=0)


@pytest.fixture(scope="module")
def other_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch", reason="the dense extra (torch) is not installed")
    return _tiny_encoder(tmp_path_factory.mktemp("other-encoder"), seed=1)


# --- reciprocal rank fusion: pure arithmetic ----------------------------------------------------------


def test_rrf_scores_by_hand() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a", "d"]], rrf_k=60)
    got = {f.doc: f.score for f in fused}
    assert got["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert got["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert got["b"] == pytest.approx(1 / 62) and got["d"] == pytest.approx(1 / 63)
    assert [f.doc for f in fused] == ["a", "c", "b", "d"]
    assert fused[0].ranks == (1, 2) and fused[3].ranks == (None, 3)


def test_rrf_weights_k_cut_and_ties() -> None:
    fused = reciprocal_rank_fusion([[1, 2], [2, 1]], weights=[2.0, 1.0], rrf_k=0, k=1)
    assert [(f.doc, f.score) for f in fused] == [(1, pytest.approx(2 / 1 + 1 / 2))]
    # equal scores: the better best rank wins, then the earlier ranking, then the id
    tie = reciprocal_rank_fusion([[7, 3], [3, 7]], rrf_k=10)
    assert [f.doc for f in tie] == [7, 3] and tie[0].score == pytest.approx(tie[1].score)
    # zero weight: the second ranking only adds documents, never score
    only_first = reciprocal_rank_fusion([["x"], ["y", "x"]], weights=[1.0, 0.0], rrf_k=60)
    assert [(f.doc, f.score) for f in only_first] == [("x", pytest.approx(1 / 61)), ("y", 0.0)]
    # a repeated document counts at its best position only
    assert reciprocal_rank_fusion([["a", "a"]], rrf_k=0)[0].score == pytest.approx(1.0)
    assert reciprocal_rank_fusion([[], []]) == []
    with pytest.raises(ValueError, match="weights"):
        reciprocal_rank_fusion([[1]], weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="non-negative"):
        reciprocal_rank_fusion([[1]], weights=[-1.0])


def test_top_k_ties_by_position() -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.9, 0.1])
    assert top_k(scores, 3).tolist() == [1, 3, 0]
    assert top_k(scores, 10).tolist() == [1, 3, 0, 2, 4]


# --- the encoder ------------------------------------------------------------------------------------


def test_encoder_cls_pooling_normalised_and_order_preserving(tiny_encoder: Path) -> None:
    encoder = DenseEncoder(str(tiny_encoder), device="cpu", batch_size=2)
    vectors = encoder.encode(KEYS)
    assert vectors.shape == (len(KEYS), 32) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # batching sorts by length internally; rows still come back in input order
    singles = np.stack([encoder.encode([k])[0] for k in KEYS])
    assert np.allclose(vectors, singles, atol=1e-5)
    # BGE-M3 dense = normalised [CLS] vector of the last layer: recompute by hand
    import torch
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(tiny_encoder)
    model = transformers.AutoModel.from_pretrained(tiny_encoder).eval()
    with torch.inference_mode():
        cls = model(**tok([KEYS[0]], return_tensors="pt")).last_hidden_state[:, 0]
    assert np.allclose(vectors[0], torch.nn.functional.normalize(cls, dim=-1)[0].numpy(), atol=1e-5)
    mean = DenseEncoder(str(tiny_encoder), pooling="mean", device="cpu").encode(KEYS[:1])
    assert not np.allclose(mean, vectors[:1])
    with pytest.raises(ValueError, match="pooling"):
        DenseEncoder("x", pooling="max")


def test_encoder_config_identifies_model_and_pooling(tiny_encoder: Path, other_encoder: Path) -> None:
    a = DenseEncoder(str(tiny_encoder)).config()
    assert a == DenseEncoder(str(tiny_encoder)).config()
    assert a["model_fingerprint"] != DenseEncoder(str(other_encoder)).config()["model_fingerprint"]
    assert a != DenseEncoder(str(tiny_encoder), pooling="mean").config()
    assert a != DenseEncoder(str(tiny_encoder), normalize=False).config()
    assert get_encoder(str(tiny_encoder)) is get_encoder(str(tiny_encoder))  # one model per process


def test_encoding_is_serialised(tiny_encoder: Path) -> None:
    encoder = DenseEncoder(str(tiny_encoder), device="cpu")
    model = encoder._model.get().model
    active, peak, original = [0], [0], model.forward

    def forward(*args, **kwargs):
        active[0] += 1
        peak[0] = max(peak[0], active[0])
        time.sleep(0.02)
        try:
            return original(*args, **kwargs)
        finally:
            active[0] -= 1

    model.forward = forward
    results: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: results.append(encoder.encode(KEYS[:2]))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(results) == 4 and peak[0] == 1
    assert all(np.allclose(r, results[0]) for r in results)


def test_flagembedding_backend_matches_when_importable(tiny_encoder: Path) -> None:
    try:
        import FlagEmbedding  # noqa: F401
    except Exception as exc:  # not installed, or broken under transformers 5
        pytest.skip(f"FlagEmbedding is not importable here: {exc}")
    ours = DenseEncoder(str(tiny_encoder), device="cpu").encode(KEYS)
    theirs = DenseEncoder(str(tiny_encoder), device="cpu", backend="flagembedding").encode(KEYS)
    assert np.allclose(ours, theirs, atol=1e-4)


# --- the cached index -------------------------------------------------------------------------------


def test_dense_index_cache_hit_and_search(tiny_encoder: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    corpus = load_statutes(str(tiny_corpus))
    encoder = DenseEncoder(str(tiny_encoder), device="cpu")
    first = DenseIndex.open(corpus, encoder, cache_dir=tmp_path)
    second = DenseIndex.open(corpus, encoder, cache_dir=tmp_path)
    assert not first.loaded_from_cache and second.loaded_from_cache and first.key == second.key
    assert np.array_equal(first.embeddings, second.embeddings)
    manifest = json.loads((tmp_path / "dense" / first.key / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["size"] == len(KEYS) and manifest["encoder"]["pooling"] == "cls"
    # a provision's own text is its nearest neighbour (cosine 1)
    for i, key in enumerate(KEYS):
        hits = second.search(key, 3)
        assert hits[0].index == i and hits[0].score == pytest.approx(1.0, abs=1e-5)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(second.search("아무 질문", 99)) == len(KEYS)
    assert [len(h) for h in second.search_many(["a", "b"], 2)] == [2, 2]
    assert second.search_many([], 2) == []
    # another pooling is another entry
    assert DenseIndex.key_for(corpus, DenseEncoder(str(tiny_encoder), pooling="mean")) != first.key


def test_dense_index_corruption_rebuilds(
    tiny_encoder: Path, tiny_corpus: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    corpus = load_statutes(str(tiny_corpus))
    encoder = DenseEncoder(str(tiny_encoder), device="cpu")
    first = DenseIndex.open(corpus, encoder, cache_dir=tmp_path)
    stored = tmp_path / "dense" / first.key / "embeddings.npy"
    data = bytearray(stored.read_bytes())
    data[-4:] = b"\x00\x00\x80\x7f"  # flip the last float: the manifest hash no longer matches
    stored.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING):
        rebuilt = DenseIndex.open(corpus, encoder, cache_dir=tmp_path)
    assert not rebuilt.loaded_from_cache and "stale or corrupted" in caplog.text
    assert np.array_equal(rebuilt.embeddings, first.embeddings)
    assert DenseIndex.open(corpus, encoder, cache_dir=tmp_path).loaded_from_cache
    (tmp_path / "dense" / first.key / "manifest.json").unlink()  # half-written entry
    assert not DenseIndex.open(corpus, encoder, cache_dir=tmp_path).loaded_from_cache


# --- wired into the retriever -----------------------------------------------------------------------


def test_settings_new_fields_serialise_and_old_logs_load() -> None:
    old = {
        "corpus": "x.jsonl",
        "lang": "ko",
        "corpus_revision": None,
        "tokenizer": "kiwi",
        "reranker": "none",
    }
    assert RetrieverSettings.from_dict(old).retrieval == "bm25"
    s = RetrieverSettings(retrieval="hybrid", dense_model="/m", hybrid_weights=[1, 0.5], rrf_k=10)
    assert s.hybrid_weights == (1.0, 0.5) and hash(s)
    assert RetrieverSettings.from_dict(json.loads(json.dumps(s.as_dict()))) == s
    assert RetrieverSettings.from_dict({**s.as_dict(), "dense_model": None}).dense_model == "BAAI/bge-m3"
    with pytest.raises(ValueError, match="retrieval"):
        RetrieverSettings(retrieval="splade")
    with pytest.raises(ValueError, match="hybrid_weights"):
        RetrieverSettings(hybrid_weights=(1.0,))


def test_dense_retriever_returns_hits(tiny_encoder: Path, tiny_corpus: Path) -> None:
    retriever = get_retriever(
        RetrieverSettings(corpus=str(tiny_corpus), retrieval="dense", dense_model=str(tiny_encoder))
    )
    assert retriever.index is None and retriever.describe()["dense_index_key"] == retriever.dense.key
    hits = anyio.run(retriever.asearch, KEYS[3], 2)
    assert all(isinstance(h, Hit) for h in hits) and [h.rank for h in hits] == [0, 1]
    assert hits[0].provision.key == KEYS[3] and hits[0].bm25_score is None and hits[0].source == "dense"
    assert hits[0].first_stage_score == pytest.approx(1.0, abs=1e-5)


def test_hybrid_retriever_fuses_bm25_and_dense(tiny_encoder: Path, tiny_corpus: Path) -> None:
    base = {"corpus": str(tiny_corpus), "tokenizer": "official", "dense_model": str(tiny_encoder)}
    hybrid = build_retriever(RetrieverSettings(retrieval="hybrid", hybrid_weights=(1.0, 0.5), **base))
    bm25 = build_retriever(RetrieverSettings(retrieval="bm25", **base))
    dense = build_retriever(RetrieverSettings(retrieval="dense", **base))
    query = "강도가 사람을 상해하거나 재량권의 한계를 넘거나"
    lexical, semantic = bm25.search(query, 100), dense.search(query, 100)
    expected = reciprocal_rank_fusion(
        [[h.provision.key for h in lexical], [h.provision.key for h in semantic]], weights=[1.0, 0.5], k=3
    )
    hits = hybrid.search(query, 3)
    assert [h.provision.key for h in hits] == [f.doc for f in expected]
    assert [h.fused_score for h in hits] == pytest.approx([f.score for f in expected])
    assert all(h.source == "hybrid" and h.dense_score is not None for h in hits)
    in_bm25 = {h.provision.key: h.bm25_score for h in lexical}
    assert [h.bm25_score for h in hits] == [in_bm25.get(h.provision.key) for h in hits]
    for batch in anyio.run(hybrid.asearch_many, [query, "운송물"], 3)[:1]:  # batched queries: same ranking
        assert [h.provision.key for h in batch] == [h.provision.key for h in hits]
        assert [h.dense_score for h in batch] == pytest.approx([h.dense_score for h in hits], abs=1e-5)
    # the reranker stage applies to hybrid hits and keeps their first-stage scores
    reranked = hybrid.rerank(query, hits, top=2)
    assert [h.rank for h in reranked] == [0, 1] and reranked[0].fused_score is not None
    assert reranked[0].rerank_score == 0.0  # NoReranker keeps the order
    assert anyio.run(hybrid.arerank, query, hits, 1) == hits[:1]


def test_hybrid_through_the_task_settings(tiny_encoder: Path, tiny_corpus: Path) -> None:
    """The way solvers resolve settings: task metadata dict (JSON-shaped) plus overrides."""
    from koblex_tasks.solvers.common import retriever_settings

    stored = RetrieverSettings(corpus=str(tiny_corpus), retrieval="hybrid", dense_model=str(tiny_encoder))
    state = SimpleNamespace(metadata={"retrieval": json.loads(json.dumps(stored.as_dict()))})

    settings = retriever_settings(state, tokenizer="official", reranker=None)
    assert settings.retrieval == "hybrid" and settings.tokenizer == "official"
    retriever = get_retriever(settings)
    assert retriever is get_retriever(RetrieverSettings.from_dict(settings.as_dict()))
    assert retriever.search(KEYS[1], 1)[0].provision.key == KEYS[1]
