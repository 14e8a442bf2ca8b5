"""Text embeddings behind one interface: a local model, an OpenAI-compatible API, a cache.

Shapes and units: `embed(texts)` takes N stored texts (facts, entities, episodes) and returns N vectors, each a
`list[float]` of length `dimension`, L2-normalised (unit length), so the dot product of two vectors is their
cosine similarity in [-1, 1]. `embed_query(text)` returns one such vector for a search query: models trained
with asymmetric inputs (E5: "query: " / "passage: ") embed the two sides differently (the local E5 always, an
OpenAI-compatible endpoint when its prefixes are configured); for the others it is `embed([text])[0]`.

Backends:

* `graphmem.local_models.OnnxEmbedder` - a local model (e5-small-v2 by default, bge-small-en-v1.5 or
  all-MiniLM-L6-v2; 384 dimensions) run with onnxruntime on the CPU: no GPU, and no network once
  `graphmem models fetch` has run.
* `OpenAIEmbedder` - any server speaking the OpenAI `/v1/embeddings` API.
* `CachedEmbedder` - an in-process LRU in front of either, so a text is embedded once.

`make_embedder(settings)` picks one from `GRAPHMEM_EMBEDDER` (`none`, `local`, `openai`).
"""
from __future__ import annotations

import email.utils
import hashlib
import os
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from graphmem.errors import SchemaMismatch, Unavailable

if TYPE_CHECKING:
    from graphmem.settings import Settings

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "EmbedderMismatch",
    "EmbedderUnavailable",
    "OpenAIEmbedder",
    "cosine",
    "l2_normalise",
    "make_embedder",
]


class EmbedderUnavailable(Unavailable):
    """The embedder cannot run: local model not fetched, no API key, or the API keeps failing."""

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
        """N stored texts -> N vectors of `dimension` floats each, L2 norm 1, in input order."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """A search query -> one vector of `dimension` floats, L2 norm 1, comparable with `embed`'s."""
        ...


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two equal-length vectors, in [-1, 1]; 0.0 if either is all zeros."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"cosine of vectors of different lengths: {x.shape[0]} vs {y.shape[0]}")
    denom = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / denom if denom > 0.0 else 0.0


def l2_normalise(m: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation of an (N, D) array, as torch.nn.functional.normalize (eps 1e-12)."""
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.maximum(norms, 1e-12)


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
    `query_prefix` / `document_prefix` are put before each search query / stored text, for models served behind
    such an endpoint that were trained with them (E5: "query: " / "passage: ", Wang et al. 2022; nomic-embed:
    "search_query: " / "search_document: "); both empty by default, as OpenAI's models want. A prefix changes
    every vector, so it is part of `name` (`openai:e5-small-v2 query_prefix='query: ' document_prefix='passage: '`),
    which the embedding guard records and compares: changing a prefix is detected like changing the model.
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
        query_prefix: str = "",
        document_prefix: str = "",
        client: Any | None = None,
    ) -> None:
        # the prefixes change every vector, so they are part of the name the embedding guard records and compares
        self.name = f"openai:{model}" + "".join(
            f" {label}={value!r}" for label, value in (("query_prefix", query_prefix), ("document_prefix", document_prefix))
            if value)
        self.query_prefix, self.document_prefix = query_prefix, document_prefix
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
        """N stored texts -> N unit vectors of `dimension` floats, each text sent after `document_prefix`."""
        return self._embed([self.document_prefix + t for t in texts])

    def embed_query(self, text: str) -> list[float]:
        """A search query -> one unit vector, sent after `query_prefix`."""
        return self._embed([self.query_prefix + text])[0]

    def _embed(self, texts: list[str]) -> list[list[float]]:
        """N texts as sent -> N unit vectors. Empty strings are sent as " " (the API rejects "")."""
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
            out.extend(l2_normalise(np.asarray(rows, dtype=np.float32)).tolist())
        return out


# --------------------------------------------------------------------------------------------
# Cache and factory
# --------------------------------------------------------------------------------------------

class CachedEmbedder:
    """An in-process LRU in front of another embedder; same interface, same `name` and `dimension`.

    Keyed by (inner.name, role, sha256(text)), role "document" (`embed`) or "query" (`embed_query`); holds at
    most `max_items` vectors as float32 arrays (384 dims: ~1.5 KB each, ~80 MB at 50,000). Duplicates within one
    call are embedded once.
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
        self._lru: OrderedDict[tuple[str, str, bytes], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Vectors held in the cache. (Not `__len__`: an empty cache must not make the embedder falsy.)"""
        return len(self._lru)

    def embed(self, texts: list[str]) -> list[list[float]]:
        """N stored texts -> N unit vectors; only texts not in the cache reach the inner embedder."""
        return self._cached(texts, "document", self.inner.embed)

    def embed_query(self, text: str) -> list[float]:
        """A search query -> one unit vector, cached apart from the same text's `embed` vector."""
        return self._cached([text], "query", lambda todo: [self.inner.embed_query(t) for t in todo])[0]

    def _cached(self, texts: list[str], role: str,
                compute: Callable[[list[str]], list[list[float]]]) -> list[list[float]]:
        keys = [(self.inner.name, role, hashlib.sha256(t.encode("utf-8")).digest()) for t in texts]
        found: dict[tuple[str, str, bytes], np.ndarray] = {}
        todo: dict[tuple[str, str, bytes], str] = {}
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
            vectors = compute(list(todo.values()))
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
    """The embedder `settings.embedder` (GRAPHMEM_EMBEDDER) names, cached; None for "none".

    Raises ValueError for an unknown embedder (reachable only through `model_copy`: `Settings` validates the
    name), EmbedderMismatch when the configured dimension differs from the local model's, EmbedderUnavailable
    when the local model has not been fetched."""
    kind = settings.embedder
    if kind == "none":
        return None
    if kind == "local":
        from graphmem.local_models import LOCAL_MODELS, OnnxEmbedder

        model = LOCAL_MODELS[settings.local_model]  # validated by Settings
        if settings.embedding_dimension != model.dimension:
            raise EmbedderMismatch(
                f"GRAPHMEM_EMBEDDER=local ({model.name}) produces {model.dimension}-dimensional vectors, "
                f"but GRAPHMEM_EMBEDDING_DIMENSION={settings.embedding_dimension}; set it to {model.dimension} "
                f"or use GRAPHMEM_EMBEDDER=openai with a {settings.embedding_dimension}-dimensional model")
        return CachedEmbedder(OnnxEmbedder(model, settings.resolved_model_dir))
    if kind == "openai":
        return CachedEmbedder(OpenAIEmbedder(
            settings.embedding_model,
            settings.embedding_dimension,
            base_url=settings.embedding_base_url,
            api_key=settings.embedding_api_key,
            query_prefix=settings.embedding_query_prefix,
            document_prefix=settings.embedding_document_prefix,
        ))
    raise ValueError(f"unknown GRAPHMEM_EMBEDDER={settings.embedder!r}: expected 'none', 'local' or 'openai'")


def build(services) -> Embedder | None:
    """`Services` factory: the configured embedder (None when GRAPHMEM_EMBEDDER=none)."""
    return make_embedder(services.settings)
