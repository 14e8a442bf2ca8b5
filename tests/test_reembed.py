"""Changing the local model: vectors of the old model are refused for search (a `degraded` note that names the
fix), and `graphmem embeddings reembed` replaces every vector in every tenant with the new model's.

Re-embedding is database-wide (it clears every vector and rewrites the recorded model), so this runs on a private
Neo4j of its own instead of the session's shared one."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

import httpx
import numpy as np
import pytest

from graphmem.embeddings import OpenAIEmbedder
from graphmem.models import EntityRef, EpisodeIn, FactIn
from graphmem.recall.embedding_guard import EmbeddingGuard
from graphmem.recall.models import SearchRequest
from graphmem.services import Services
from graphmem.settings import Settings
from graphmem.store import Database
from graphmem.store.schema import apply_schema
from tests.http_fixture import serve
from tests.neo4j_fixture import private_neo4j

GRAPHMEM = str(Path(sys.executable).parent / "graphmem")
WHEN = datetime(2024, 3, 1, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def private(tmp_path_factory) -> Settings:
    with private_neo4j(tmp_path_factory.mktemp("reembed-home")) as (_, settings):
        yield settings.model_copy(update={"embedder": "local", "embed_on_write": True})


def _services(settings: Settings, model: str) -> Services:
    db = Database.from_settings(settings)
    apply_schema(db, settings.embedding_dimension)
    return Services(db, settings.model_copy(update={"local_model": model}))


def _write(services: Services, tenant: str) -> list[str]:
    """An episode, a fact, and a fact corrected by the user (history, searched with an earlier known_at)."""
    ep, _ = services.ingest.append_episodes(tenant, [EpisodeIn(
        content="My cat Luna chewed the charger cable again", occurred_at=WHEN, session_id="s1")])[0]
    fact = services.graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Ana"),
                                                     predicate="OBSERVED", value="Ana adopted a kitten in March",
                                                     episode_id=ep.id))
    wrong = services.graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Ana"),
                                                      predicate="OBSERVED", value="Ana has a parrot",
                                                      episode_id=ep.id))
    services.graph.correct(tenant, wrong.fact_id, ep.id, value="Ana has a budgie")
    return [ep.id, fact.fact_id, wrong.fact_id]


def test_changed_model_is_refused_then_reembed_replaces_every_vector(private: Settings) -> None:
    old = _services(private, "bge-small-en-v1.5")
    tenants = [f"t-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    try:
        ids = {t: _write(old, t) for t in tenants}
    finally:
        old.close()

    new = _services(private, "e5-small-v2")
    try:
        res = new.recall.search(tenants[0], SearchRequest(query="pet animal", k=5))
        note = " ".join(d.reason for d in res.degraded if d.source == "vector")
        assert "'local:bge-small-en-v1.5'" in note and "graphmem embeddings reembed" in note
        assert "GRAPHMEM_EMBEDDER=local GRAPHMEM_LOCAL_MODEL=bge-small-en-v1.5" in note  # as it is set
        with serve(new) as url:  # an operator sees it without searching: readiness and a metric
            ready = httpx.get(f"{url}/readyz")
            assert ready.status_code == 200  # still serving (full-text and graph)
            assert ready.json()["vector_search"].startswith("off: stored vectors were made by 'local:bge-small-en-v1.5'")
            assert "graphmem_embedding_model_mismatch 1.0" in httpx.get(f"{url}/metrics").text
    finally:
        new.close()
    stale = _services(private, "bge-small-en-v1.5")  # a process still running the old model during the change
    assert not stale.recall.search(tenants[0], SearchRequest(query="pet animal", k=5)).degraded

    env = {**os.environ, "NEO4J_URI": private.neo4j_uri, "GRAPHMEM_EMBEDDER": "local",
           "GRAPHMEM_LOCAL_MODEL": "e5-small-v2"}
    run = subprocess.run([GRAPHMEM, "embeddings", "reembed", "--yes"], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["embedding_model"] == "local:e5-small-v2"
    assert out["vectors"] >= 2 * 5  # per tenant: the episode, three facts and their subject entity
    assert all(t in run.stderr for t in tenants)

    stale.recall.hybrid.guard.recheck_s = 0  # (30 s by default) the old-model process re-reads the recorded model
    try:
        res = stale.recall.search(tenants[0], SearchRequest(query="pet animal", k=5))
        note = " ".join(d.reason for d in res.degraded)
        assert "'local:e5-small-v2'" in note  # it stops comparing its vectors with the new model's
    finally:
        stale.close()

    new = _services(private, "e5-small-v2")
    try:
        with new.db.driver.session() as s:
            rows = s.run("MATCH (n) WHERE n.id IN $ids RETURN n.id AS id, n.embedding AS v, "
                         "coalesce(n.statement, n.content) AS text", ids=ids[tenants[1]]).data()
            missing = s.run("MATCH (n) WHERE n.tenant_id IN $t AND (n:Fact OR n:Entity OR n:Episode) "
                            "AND n.embedding IS NULL RETURN count(n) AS n", t=tenants).single()["n"]
        assert len(rows) == 3 and missing == 0  # the corrected fact too
        for r in rows:  # the new model's vectors of the texts the indexer embeds (no speaker here)
            np.testing.assert_allclose(r["v"], new.embedder.embed([r["text"]])[0], atol=1e-5)
        res = new.recall.search(tenants[1], SearchRequest(query="pet animal", k=5))
        assert not [d for d in res.degraded if d.source == "vector"]
        with serve(new) as url:
            assert httpx.get(f"{url}/readyz").json()["vector_search"] == "ok"
            assert "graphmem_embedding_model_mismatch 0.0" in httpx.get(f"{url}/metrics").text
        reasons = {h.id: " ".join(h.reasons) for h in res.hits}
        assert "vector" in reasons.get(ids[tenants[1]][0], "")
    finally:
        new.close()


def test_changed_endpoint_prefixes_count_as_a_model_change(private: Settings) -> None:
    """E5 served behind an OpenAI-compatible endpoint, embedded first without its prefixes: turning them on changes
    every vector, so vector search refuses the old vectors and the note names the settings that made them."""
    plain = OpenAIEmbedder("e5-small-v2", 8, base_url="http://127.0.0.1:9/v1")
    prefixed = OpenAIEmbedder("e5-small-v2", 8, base_url="http://127.0.0.1:9/v1", query_prefix="query: ",
                              document_prefix="passage: ")
    db = Database.from_settings(private)
    restore = db.execute("search/embedding_model", model="unused")[0]["embedding_model"]
    try:
        db.execute("meta/set_embedding_model", model=plain.name)  # as `graphmem embeddings reembed` records it
        assert EmbeddingGuard(db, plain.name).problem() is None
        log = logging.getLogger("graphmem.recall")
        records: list[logging.LogRecord] = []
        handler = logging.Handler()
        handler.emit = records.append
        log.addHandler(handler)
        try:  # a process has a guard for search and one per indexer: the problem is logged once
            notes = [EmbeddingGuard(db, prefixed.name).problem() for _ in range(3)]
        finally:
            log.removeHandler(handler)
        assert len(set(notes)) == 1 and len(records) == 1 and records[0].getMessage() == notes[0]
        note = notes[0]
        assert note and "stored vectors were made by 'openai:e5-small-v2' but the configured embedder is " \
            "\"openai:e5-small-v2 query_prefix='query: ' document_prefix='passage: '\"" in note
        assert "GRAPHMEM_EMBEDDING_MODEL=e5-small-v2 and no GRAPHMEM_EMBEDDING_QUERY_PREFIX" in note
        db.execute("meta/set_embedding_model", model=prefixed.name)  # the other way round
        note = EmbeddingGuard(db, plain.name).problem()
        assert note and ("GRAPHMEM_EMBEDDING_QUERY_PREFIX='query: ' GRAPHMEM_EMBEDDING_DOCUMENT_PREFIX='passage: '"
                         in note)
    finally:
        db.execute("meta/set_embedding_model", model=restore)
        db.close()


def test_reembed_without_a_usable_embedder_is_refused(private: Settings, tmp_path) -> None:
    env = {**os.environ, "NEO4J_URI": private.neo4j_uri, "GRAPHMEM_EMBEDDER": "none"}
    run = subprocess.run([GRAPHMEM, "embeddings", "reembed", "--yes"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1 and "GRAPHMEM_EMBEDDER=none" in run.stderr
    env.update(GRAPHMEM_EMBEDDER="local", GRAPHMEM_MODEL_DIR=str(tmp_path))  # the model was never fetched there
    run = subprocess.run([GRAPHMEM, "embeddings", "reembed", "--yes"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1 and "graphmem models fetch" in run.stderr and "Traceback" not in run.stderr
