"""Embeddings: the local ONNX models (MiniLM against published sentence-transformers numbers), the cache, the
factory, and the OpenAI embedder through the real `openai` client against a local fake server."""
from __future__ import annotations

import math
import time
from typing import get_args

import numpy as np
import openai
import pytest
from pydantic import ValidationError

from graphmem.embeddings import (
    CachedEmbedder,
    Embedder,
    EmbedderMismatch,
    EmbedderUnavailable,
    OpenAIEmbedder,
    _retry_after_s,
    cosine,
    make_embedder,
)
from graphmem.local_models import LOCAL_MODELS, OnnxEmbedder
from graphmem.settings import LocalModelName, Settings

try:
    from fake_openai import FakeOpenAIServer, Reply, chat_completion_body, deterministic_vector, embeddings_handler, error_body
except ImportError:  # tests/ imported as a package
    from tests.fake_openai import (FakeOpenAIServer, Reply, chat_completion_body, deterministic_vector,
                                   embeddings_handler, error_body)

EMB = "/v1/embeddings"


# --- local models -----------------------------------------------------------------------------
# The models are fetched by the install step (`make venv` runs `graphmem models fetch --all`).

def _local(name: str) -> OnnxEmbedder:
    return OnnxEmbedder(LOCAL_MODELS[name], Settings().resolved_model_dir)


@pytest.fixture(scope="module")
def minilm() -> OnnxEmbedder:
    return _local("all-MiniLM-L6-v2")


@pytest.fixture(scope="module", params=sorted(LOCAL_MODELS))
def local(request) -> OnnxEmbedder:
    return _local(request.param)


def test_local_similarity_ordering(local: OnnxEmbedder) -> None:
    food, bread, baby = local.embed(["A man is eating food.", "A man is eating a piece of bread.",
                                     "The girl is carrying a baby."])
    assert cosine(food, bread) > 0.7
    # E5's cosines sit highest (unrelated sentences ~0.66), bge's lower (~0.4), MiniLM's spread widest (~0)
    unrelated_below, margin = {"e5-small-v2": (0.72, 0.15), "bge-small-en-v1.5": (0.5, 0.3),
                               "all-MiniLM-L6-v2": (0.3, 0.4)}[local.model.name]
    assert cosine(food, baby) < unrelated_below
    assert cosine(food, bread) > cosine(food, baby) + margin


def test_local_finds_the_paraphrase(local: OnnxEmbedder) -> None:
    # the LoCoMo miss lexical search cannot bridge: the answer shares no content word with the question
    q = local.embed_query("What does Andrew view his pets as?")
    hit, other = local.embed(["Pets bring such joy and feel like family. I can't imagine life without them.",
                              "Rock climbing was awesome! It was a challenge, but so satisfying."])
    assert cosine(q, hit) > cosine(q, other) + {"e5-small-v2": 0.05}.get(local.model.name, 0.1)


def test_local_query_and_stored_text_prefixes(local: OnnxEmbedder) -> None:
    # E5 is trained on "query: ..." against "passage: ..." (its model card's example below); the others take
    # a query as it is
    text = "how much protein should a female eat"
    q, as_stored = local.embed_query(text), local.embed([text])[0]
    if local.model.name == "e5-small-v2":
        assert (local.model.query_prefix, local.model.document_prefix) == ("query: ", "passage: ")
        assert cosine(q, as_stored) < 0.99
    else:
        np.testing.assert_allclose(q, as_stored, atol=1e-6)
    answer, unrelated = local.embed([
        "As a general guideline, the CDC's average requirement of protein for women ages 19 to 70 is 46 grams per "
        "day. But, as you can see from this chart, you'll need to increase that if you're expecting or training for "
        "a marathon. Check out the chart below to see how much protein you should be eating each day.",
        "Definition of summit for English Language Learners. : 1  the highest point of a mountain : the top of a "
        "mountain. : 2  the highest level. : 3  a meeting or series of meetings between the leaders of two or more "
        "governments."])
    assert cosine(q, answer) > cosine(q, unrelated) + 0.15


def test_minilm_matches_published_sentence_transformers_values(minilm: OnnxEmbedder) -> None:
    # sbert.net "Semantic Textual Similarity" and "Quickstart" pages, model all-MiniLM-L6-v2 (4 decimals)
    s1 = ["The new movie is awesome", "The cat sits outside", "A man is playing guitar"]
    s2 = ["The dog plays in the garden", "The new movie is so great", "A woman watches TV"]
    expected = np.array([[0.0543, 0.8939, -0.0502], [0.2838, -0.0029, 0.1310], [0.2277, -0.0136, -0.0327]])
    got = np.asarray(minilm.embed(s1)) @ np.asarray(minilm.embed(s2)).T
    np.testing.assert_allclose(got, expected, atol=6e-4)

    weather = minilm.embed(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    sims = np.asarray(weather) @ np.asarray(weather).T
    np.testing.assert_allclose([sims[0, 1], sims[0, 2], sims[1, 2]], [0.6660, 0.1046, 0.1411], atol=6e-4)


def test_local_shape_norm_and_batch_invariance(local: OnnxEmbedder) -> None:
    texts = ["hi", "A considerably longer sentence, so that the batch needs padding for the others.",
             "", "word " * 600]  # empty and over-long (truncated to the model's length) inputs are fine
    batched = local.embed(texts)
    assert local.dimension == 384 and local.name == f"local:{local.model.name}"
    assert isinstance(local, Embedder) and isinstance(CachedEmbedder(local), Embedder)
    assert len(batched) == len(texts) and all(len(v) == 384 for v in batched)
    assert all(isinstance(x, float) for x in batched[0])
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    single = [local.embed([t])[0] for t in texts]  # padding must not change a text's vector
    np.testing.assert_allclose(batched, single, atol=1e-5)
    assert local.embed([]) == []


def test_local_model_not_fetched_names_the_command(tmp_path) -> None:
    with pytest.raises(EmbedderUnavailable, match="graphmem models fetch"):
        OnnxEmbedder(LOCAL_MODELS["bge-small-en-v1.5"], tmp_path)


# --- cache ------------------------------------------------------------------------------------

class CountingEmbedder:
    name = "counting:v1"
    dimension = 3

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[float(len(t)), 1.0, 0.0] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.calls.append(["query: " + text])
        return [float(len(text)), 0.0, 1.0]


def test_cache_hit_does_not_recompute() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner)
    first = cached.embed(["a", "bb", "a"])
    assert inner.calls == [["a", "bb"]]  # duplicate within a call embedded once
    second = cached.embed(["bb", "a"])
    assert inner.calls == [["a", "bb"]]  # all hits: inner not called
    assert second == [first[1], first[0]]
    cached.embed(["bb", "ccc"])
    assert inner.calls[-1] == ["ccc"]  # only the miss reaches the inner embedder
    assert (cached.name, cached.dimension) == (inner.name, inner.dimension)


def test_cache_evicts_least_recently_used() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_items=2)
    cached.embed(["a"])
    cached.embed(["b"])
    cached.embed(["a"])  # a is now most recent
    cached.embed(["c"])  # evicts b
    assert cached.size == 2
    cached.embed(["a"])
    assert inner.calls[-1] == ["c"]
    cached.embed(["b"])
    assert inner.calls[-1] == ["b"]


def test_cache_keeps_query_vectors_apart_from_stored_text_vectors() -> None:
    # a model with query prefixes (E5) embeds the same words differently as a query: the cache must not answer
    # a query with the stored text's vector, nor the other way round
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner)
    stored = cached.embed(["pets"])[0]
    query = cached.embed_query("pets")
    assert inner.calls == [["pets"], ["query: pets"]]
    assert (stored, query) == ([4.0, 1.0, 0.0], [4.0, 0.0, 1.0])
    assert cached.embed_query("pets") == query and cached.embed(["pets"])[0] == stored
    assert len(inner.calls) == 2 and cached.size == 2  # both served from the cache


def test_cosine() -> None:
    assert cosine([1, 0], [0, 1]) == 0.0
    assert math.isclose(cosine([1, 1], [2, 2]), 1.0)
    assert cosine([0, 0], [1, 0]) == 0.0
    with pytest.raises(ValueError):
        cosine([1], [1, 2])


# --- factory ----------------------------------------------------------------------------------

def test_make_embedder_none_and_unknown() -> None:
    assert make_embedder(Settings(embedder="none")) is None
    with pytest.raises(ValueError, match="GRAPHMEM_EMBEDDER"):   # Settings refuses the name; model_copy does not
        make_embedder(Settings().model_copy(update={"embedder": "word2vec"}))


def test_make_embedder_local() -> None:
    emb = make_embedder(Settings(embedder="local", embedding_dimension=384))
    assert isinstance(emb, CachedEmbedder) and isinstance(emb.inner, OnnxEmbedder)
    assert (emb.name, emb.dimension) == ("local:e5-small-v2", 384)
    emb = make_embedder(Settings(embedder="local", local_model="all-MiniLM-L6-v2"))
    assert emb.name == "local:all-MiniLM-L6-v2"
    with pytest.raises(ValidationError, match="'e5-small-v2', 'bge-small-en-v1.5' or 'all-MiniLM-L6-v2'"):
        Settings(local_model="bge-large")
    assert set(get_args(LocalModelName)) == set(LOCAL_MODELS)
    with pytest.raises(EmbedderMismatch, match="GRAPHMEM_EMBEDDING_DIMENSION=768"):
        make_embedder(Settings(embedder="local", embedding_dimension=768))


def test_make_embedder_openai(fake: FakeOpenAIServer) -> None:
    fake.set_default(EMB, embeddings_handler(16))
    emb = make_embedder(Settings(embedder="openai", embedding_model="my-embedder", embedding_dimension=16,
                                 embedding_base_url=fake.base_url, embedding_api_key="k"))
    assert isinstance(emb, CachedEmbedder) and isinstance(emb.inner, OpenAIEmbedder)
    assert emb.embed(["x"]) == emb.embed(["x"])
    assert len(fake.requests_for(EMB)) == 1
    assert fake.requests_for(EMB)[0].headers["authorization"] == "Bearer k"
    assert emb.embed_query("x") == emb.embed(["x"])[0]  # no prefixes by default: a query is sent as it is
    assert [r.json()["input"] for r in fake.requests_for(EMB)] == [["x"], ["x"]]


def test_openai_prefixes_for_a_model_trained_with_them(fake: FakeOpenAIServer, monkeypatch) -> None:
    """E5 served behind an OpenAI-compatible endpoint: the settings put "query: " before a search query and
    "passage: " before a stored text, so the same words embed differently on the two sides."""
    fake.set_default(EMB, embeddings_handler(16))
    monkeypatch.setenv("GRAPHMEM_EMBEDDING_QUERY_PREFIX", "query: ")
    monkeypatch.setenv("GRAPHMEM_EMBEDDING_DOCUMENT_PREFIX", "passage: ")
    emb = make_embedder(Settings(embedder="openai", embedding_model="e5-small-v2", embedding_dimension=16,
                                 embedding_base_url=fake.base_url))
    stored, query = emb.embed(["Ana adopted a kitten", ""]), emb.embed_query("who has a cat?")
    assert [r.json()["input"] for r in fake.requests_for(EMB)] == [["passage: Ana adopted a kitten", "passage: "],
                                                                   ["query: who has a cat?"]]
    assert emb.embed_query("Ana adopted a kitten") != stored[0]  # the cache keeps the two sides apart too
    assert len(query) == 16


# --- OpenAI-compatible API ----------------------------------------------------------------------

@pytest.fixture
def fake() -> FakeOpenAIServer:
    with FakeOpenAIServer() as srv:
        yield srv


def test_openai_retries_429_then_succeeds(fake: FakeOpenAIServer) -> None:
    fake.script(EMB, Reply(429, error_body("rate limited", "rate_limit_error"), headers={"Retry-After": "0"}))
    fake.set_default(EMB, embeddings_handler(8))
    emb = OpenAIEmbedder("fake-embed", 8, base_url=fake.base_url, api_key="test")
    waits: list[float] = []
    backoff = emb._wait
    emb._wait = lambda state: waits.append(backoff(state)) or waits[-1]   # what the retry sleeps, not the clock
    t0 = time.monotonic()
    vecs = emb.embed(["alpha", "beta"])
    assert waits == [0.0]               # Retry-After: 0 honoured, not the exponential backoff (0.5-1 s)
    assert time.monotonic() - t0 < 10   # and nothing else waited (a bound only against a hang: a loaded machine)
    assert len(fake.requests_for(EMB)) == 2
    np.testing.assert_allclose(vecs, [deterministic_vector("alpha", 8), deterministic_vector("beta", 8)], atol=1e-6)
    body = fake.requests_for(EMB)[-1].json()
    assert body["input"] == ["alpha", "beta"] and body["model"] == "fake-embed" and "dimensions" not in body


def test_openai_honours_retry_after_seconds(fake: FakeOpenAIServer) -> None:
    fake.script(EMB, Reply(503, error_body("busy"), headers={"Retry-After": "1"}))
    fake.set_default(EMB, embeddings_handler(4))
    t0 = time.monotonic()
    OpenAIEmbedder("m", 4, base_url=fake.base_url).embed(["x"])
    assert time.monotonic() - t0 >= 0.9
    assert len(fake.requests_for(EMB)) == 2


def test_openai_batches_of_at_most_128(fake: FakeOpenAIServer) -> None:
    fake.set_default(EMB, embeddings_handler(4))
    texts = [f"text {i}" for i in range(300)]
    vecs = OpenAIEmbedder("m", 4, base_url=fake.base_url).embed(texts)
    assert [len(r.json()["input"]) for r in fake.requests_for(EMB)] == [128, 128, 44]
    np.testing.assert_allclose(vecs[299], deterministic_vector("text 299", 4), atol=1e-6)


def test_openai_dimension_mismatch(fake: FakeOpenAIServer) -> None:
    fake.set_default(EMB, embeddings_handler(12))
    with pytest.raises(EmbedderMismatch, match="12-dimensional.*GRAPHMEM_EMBEDDING_DIMENSION=8"):
        OpenAIEmbedder("m", 8, base_url=fake.base_url).embed(["x"])


def test_openai_text_embedding_3_requests_dimensions(fake: FakeOpenAIServer) -> None:
    fake.set_default(EMB, embeddings_handler(1536))  # the fake honours `dimensions`, as OpenAI does
    vecs = OpenAIEmbedder("text-embedding-3-small", 384, base_url=fake.base_url).embed(["x"])
    assert fake.requests_for(EMB)[0].json()["dimensions"] == 384 and len(vecs[0]) == 384


def test_openai_gives_up_after_max_attempts(fake: FakeOpenAIServer) -> None:
    fake.script(EMB, *[Reply(500, error_body("boom"), headers={"Retry-After": "0"}) for _ in range(3)])
    with pytest.raises(EmbedderUnavailable, match="after 3 attempts"):
        OpenAIEmbedder("m", 4, base_url=fake.base_url, max_attempts=3).embed(["x"])
    assert len(fake.requests_for(EMB)) == 3


def test_openai_client_errors_are_not_retried(fake: FakeOpenAIServer) -> None:
    fake.script(EMB, Reply(400, error_body("bad input", "invalid_request_error")))
    with pytest.raises(openai.BadRequestError):
        OpenAIEmbedder("m", 4, base_url=fake.base_url).embed(["x"])
    assert len(fake.requests_for(EMB)) == 1


def test_openai_retries_timeouts(fake: FakeOpenAIServer) -> None:
    # 3 s against a reply held 60 s: the first call always times out, the retry (answered at once) has 3 s to arrive
    fake.script(EMB, Reply(200, {"data": []}, delay_s=60))
    fake.set_default(EMB, embeddings_handler(4))
    vecs = OpenAIEmbedder("m", 4, base_url=fake.base_url, timeout_s=3.0).embed(["x"])
    assert len(vecs) == 1 and len(fake.requests_for(EMB)) == 2


def test_openai_without_key_or_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EmbedderUnavailable, match="GRAPHMEM_EMBEDDING_API_KEY"):
        OpenAIEmbedder("text-embedding-3-small", 384)


def test_retry_after_parsing() -> None:
    class Resp:
        def __init__(self, headers: dict[str, str]) -> None:
            self.headers = headers

    class Exc(Exception):
        def __init__(self, headers: dict[str, str]) -> None:
            self.response = Resp(headers)

    assert _retry_after_s(Exc({"retry-after": "2"})) == 2.0
    assert _retry_after_s(Exc({"retry-after-ms": "250"})) == 0.25
    assert 0.0 <= _retry_after_s(Exc({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) < 1.0  # in the past
    assert _retry_after_s(Exc({})) is None
    assert _retry_after_s(ValueError()) is None


def test_fake_server_scripts_chat_completions(fake: FakeOpenAIServer) -> None:
    """The fake also serves /v1/chat/completions, for the LLM extractor's tests."""
    fake.script("/v1/chat/completions", Reply(500, error_body("oops")), Reply(200, chat_completion_body('{"ok": true}')))
    client = openai.OpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    out = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert out.choices[0].message.content == '{"ok": true}'
    assert fake.requests_for("/v1/chat/completions")[1].json()["messages"][0]["content"] == "hi"
    assert fake.pending("/v1/chat/completions") == 0
