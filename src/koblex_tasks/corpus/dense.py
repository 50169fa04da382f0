"""Dense retrieval: BGE-M3 dense vectors of `hierarchy + content`, cached on disk, inner-product top-k.

BGE-M3's dense representation is the [CLS] vector of the last hidden layer, L2-normalised (FlagEmbedding's
`BGEM3FlagModel(..., normalize_embeddings=True).encode(...)["dense_vecs"]`; no query instruction). This module
computes exactly that with `transformers` (optional extra `dense`): FlagEmbedding 1.4.2, the
current release, does not import under transformers 5 (it needs the removed `modeling_attn_mask_utils`), and
it would add sentence-transformers, peft and accelerate for a pooling step of two lines. When FlagEmbedding
does import (transformers 4.x), `backend="flagembedding"` uses `BGEM3FlagModel` itself.

Corpus embeddings are cached like the BM25 index (`corpus/cache.py`): the key covers the corpus fingerprint,
the model (id or path plus a fingerprint of its config/weights), pooling, normalisation, maximum length,
backend and the format version; the manifest is verified on load and a bad entry is rebuilt. Each model is
loaded once per process and its inference is serialised with a lock (samples run concurrently).
"""

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from koblex_tasks.corpus.bm25 import top_k
from koblex_tasks.corpus.cache import corpus_key, file_blocks, open_cached
from koblex_tasks.corpus.models import (
    LazyModel,
    LoadedModel,
    import_torch,
    install_hint,
    load_transformers,
    pick_device,
)
from koblex_tasks.corpus.statutes import StatuteCorpus

DEFAULT_DENSE_MODEL = "BAAI/bge-m3"
DENSE_FORMAT = 1
EMBEDDINGS_FILE = "embeddings.npy"
POOLINGS = ("cls", "mean")
BACKENDS = ("transformers", "flagembedding")
INSTALL_HINT = install_hint("dense retrieval", "dense", "retrieval=bm25")


@dataclass(frozen=True)
class DenseHit:
    """A corpus position and its inner-product (cosine, when normalised) score."""

    index: int
    score: float


def model_fingerprint(model: str) -> dict[str, object]:
    """What identifies the weights: for a local directory, the SHA-256 of every file in it (config,
    tokenizer, weights); for a hub id, the config's hash and the resolved commit."""
    path = Path(model)
    if path.is_dir():
        digest = hashlib.sha256()
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(str(file.relative_to(path)).encode("utf-8") + b"\x00")
            for block in file_blocks(file):
                digest.update(block)
        return {"kind": "local", "files_sha256": digest.hexdigest()}
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(model)
    data = {k: v for k, v in config.to_dict().items() if k not in ("transformers_version", "_name_or_path")}
    blob = json.dumps(data, sort_keys=True, default=str).encode("utf-8")
    return {
        "kind": "hub",
        "config_sha256": hashlib.sha256(blob).hexdigest(),
        "commit": getattr(config, "_commit_hash", None),
    }


class DenseEncoder:
    """A BGE-M3-style bi-encoder; the model loads lazily on first use and inference holds a lock."""

    def __init__(
        self,
        model: str = DEFAULT_DENSE_MODEL,
        pooling: str = "cls",
        normalize: bool = True,
        max_length: int = 512,
        batch_size: int = 32,
        device: str | None = None,
        backend: str = "transformers",
    ) -> None:
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        if backend == "flagembedding" and pooling != "cls":
            raise ValueError("the flagembedding backend (BGEM3FlagModel) pools the [CLS] vector only")
        self.model_name = model
        self.pooling = pooling
        self.normalize = normalize
        self.max_length = max_length
        self.batch_size = batch_size
        self.device = device
        self.backend = backend
        self._fingerprint: dict[str, object] | None = None
        self._model = LazyModel(self._load)

    def config(self) -> dict[str, object]:
        """Everything that determines the vectors (goes into the cache key and the log)."""
        with self._model.lock:
            if self._fingerprint is None:
                self._fingerprint = model_fingerprint(self.model_name)
        return {
            "model": self.model_name,
            "model_fingerprint": self._fingerprint,
            "pooling": self.pooling,
            "normalize": self.normalize,
            "max_length": self.max_length,
            "backend": self.backend,
        }

    def _load(self) -> LoadedModel:
        if self.backend == "transformers":
            return load_transformers(self.model_name, "AutoModel", self.device, INSTALL_HINT)
        torch, _ = import_torch(INSTALL_HINT)
        device = pick_device(torch, self.device)
        try:
            from FlagEmbedding import BGEM3FlagModel
        except Exception as exc:  # ImportError, or its own import errors under transformers 5
            raise RuntimeError(
                f"backend 'flagembedding' needs an importable FlagEmbedding ({exc}); "
                "use the default 'transformers' backend, which computes the same dense vectors"
            ) from exc
        model = BGEM3FlagModel(
            self.model_name, normalize_embeddings=self.normalize, use_fp16=False, devices=device
        )
        return LoadedModel(torch, None, model, device)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dim), rows in input order."""
        with self._model.use() as loaded:
            if not texts:
                return np.zeros((0, 0), dtype=np.float32)
            if self.backend == "flagembedding":
                out = loaded.model.encode(
                    list(texts),
                    batch_size=self.batch_size,
                    max_length=self.max_length,
                    return_dense=True,
                    return_sparse=False,
                    return_colbert_vecs=False,
                )
                return np.asarray(out["dense_vecs"], dtype=np.float32).reshape(len(texts), -1)
            # Longest first, so each batch pads little; results are put back in input order.
            order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
            vectors: list[np.ndarray] = [np.empty(0)] * len(texts)
            with loaded.torch.inference_mode():
                for start in range(0, len(order), self.batch_size):
                    batch = order[start : start + self.batch_size]
                    enc = loaded.inputs([texts[i] for i in batch], max_length=self.max_length)
                    hidden = loaded.model(**enc).last_hidden_state.float()
                    if self.pooling == "cls":
                        pooled = hidden[:, 0]
                    else:
                        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
                    if self.normalize:
                        pooled = loaded.torch.nn.functional.normalize(pooled, dim=-1)
                    for i, row in zip(batch, pooled.cpu().numpy(), strict=True):
                        vectors[i] = row
            return np.stack(vectors).astype(np.float32, copy=False)


_encoders: dict[tuple[str, str, bool, int, str, str | None], DenseEncoder] = {}
_encoders_lock = threading.Lock()


def get_encoder(
    model: str = DEFAULT_DENSE_MODEL,
    pooling: str = "cls",
    normalize: bool = True,
    max_length: int = 512,
    backend: str = "transformers",
    device: str | None = None,
) -> DenseEncoder:
    """The process-wide encoder for this model and configuration (one model instance per process)."""
    key = (model, pooling, normalize, max_length, backend, device)
    with _encoders_lock:
        encoder = _encoders.get(key)
        if encoder is None:
            encoder = DenseEncoder(
                model,
                pooling=pooling,
                normalize=normalize,
                max_length=max_length,
                device=device,
                backend=backend,
            )
            _encoders[key] = encoder
        return encoder


class DenseIndex:
    """Corpus embeddings (one row per provision, in corpus order) and their encoder. Use `DenseIndex.open`."""

    def __init__(
        self, embeddings: np.ndarray, encoder: DenseEncoder, key: str, loaded_from_cache: bool
    ) -> None:
        self.embeddings = embeddings
        self.encoder = encoder
        self.size = int(embeddings.shape[0])
        self.key = key
        self.loaded_from_cache = loaded_from_cache

    @staticmethod
    def key_for(corpus: StatuteCorpus, encoder: DenseEncoder) -> str:
        return corpus_key(corpus, encoder=encoder.config(), format=DENSE_FORMAT)

    @classmethod
    def open(
        cls,
        corpus: StatuteCorpus,
        encoder: DenseEncoder,
        cache_dir: Path | None = None,
        use_cache: bool = True,
    ) -> "DenseIndex":
        """Load the embeddings from a verified cache entry, or encode the corpus (and cache it)."""
        key = cls.key_for(corpus, encoder)

        def load(entry: Path) -> np.ndarray:
            embeddings = np.load(entry / EMBEDDINGS_FILE, allow_pickle=False)
            if embeddings.ndim != 2 or embeddings.shape[0] != len(corpus):
                raise ValueError(f"shape {embeddings.shape} does not match {len(corpus)} provisions")
            return embeddings.astype(np.float32, copy=False)

        def save(embeddings: np.ndarray, directory: Path) -> None:
            np.save(directory / EMBEDDINGS_FILE, embeddings, allow_pickle=False)

        def manifest(embeddings: np.ndarray) -> dict[str, object]:
            return {
                "corpus_source": corpus.source,
                "size": len(corpus),
                "dim": int(embeddings.shape[1]),
                "encoder": encoder.config(),
            }

        embeddings, loaded = open_cached(
            "dense",
            key,
            load=load,
            build=lambda: encoder.encode(
                corpus.texts()
            ),  # not corpus.provisions: it would keep every Provision
            save=save,
            extra=manifest,
            cache_dir=cache_dir,
            use_cache=use_cache,
        )
        return cls(embeddings, encoder, key, loaded_from_cache=loaded)

    def search_vectors(self, queries: np.ndarray, k: int) -> list[list[DenseHit]]:
        k = min(k, self.size)
        if k <= 0:
            return [[] for _ in range(len(queries))]
        scores = queries @ self.embeddings.T
        return [[DenseHit(int(i), float(row[i])) for i in top_k(row, k)] for row in scores]

    def search(self, query: str, k: int) -> list[DenseHit]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: list[str], k: int) -> list[list[DenseHit]]:
        if not queries:
            return []
        return self.search_vectors(self.encoder.encode(queries), k)
