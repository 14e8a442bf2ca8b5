"""GRAPHMEM_EMBEDDER=local, wired through `Services` as the API builds it: episodes and facts get vectors when they
are written, and search runs its vector retriever (a hit found by meaning, with no shared word)."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone

from graphmem.models import EntityRef, EpisodeIn, FactIn
from graphmem.recall.models import SearchRequest
from graphmem.services import Services

def test_local_embedder_vectors_on_write_and_in_search(db, settings):
    services = Services(db, settings.model_copy(update={"embedder": "local", "embed_on_write": True}))
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    when = datetime(2024, 3, 1, tzinfo=timezone.utc)
    ep, _ = services.ingest.append_episodes(tenant, [EpisodeIn(content="My cat Luna chewed the charger cable again",
                                                               occurred_at=when, session_id="s1")])[0]
    fact = services.graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Ana"),
                                                     predicate="OBSERVED", value="Ana adopted a kitten in March",
                                                     episode_id=ep.id))
    with db.driver.session() as s:
        dims = s.run("MATCH (n) WHERE n.id IN $ids RETURN size(n.embedding) AS d", ids=[ep.id, fact.fact_id]).value()
    assert dims == [384, 384]
    res = services.recall.search(tenant, SearchRequest(query="pet animal", k=5))
    assert not [d for d in res.degraded if d.source == "vector"]
    reasons = {h.id: " ".join(h.reasons) for h in res.hits}
    assert "vector" in reasons.get(ep.id, "") and "vector" in reasons.get(fact.fact_id, "")



def test_min_similarity_is_a_floor_for_vector_hits_only(db, settings):
    """Without a floor the nearest nodes are vector hits however unrelated; `min_similarity` keeps only those at or
    above it (the score a `vector` reason shows), and full-text hits stay whatever it is."""
    import re
    services = Services(db, settings.model_copy(update={"embedder": "local", "embed_on_write": True}))
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    when = datetime(2024, 3, 1, tzinfo=timezone.utc)
    (cat, _), (tax, _) = services.ingest.append_episodes(tenant, [
        EpisodeIn(content="My cat Luna chewed the charger cable again", occurred_at=when, session_id="s1"),
        EpisodeIn(content="The quarterly VAT return is due on the fifth", occurred_at=when, session_id="s1")])

    def vector_scores(**floor):
        res = services.recall.search(tenant, SearchRequest(query="pet animal", k=5, targets=["episode"], **floor))
        return {h.id: float(m.group(1)) for h in res.hits for r in h.reasons
                if (m := re.match(r"vector rank \d+ \(score ([0-9.]+)\)", r))}

    everything = vector_scores()
    assert set(everything) == {cat.id, tax.id} and everything[cat.id] > everything[tax.id], everything
    between = (everything[cat.id] + everything[tax.id]) / 2
    assert set(vector_scores(min_similarity=between)) == {cat.id}
    assert vector_scores(min_similarity=1.0) == {}
    res = services.recall.search(tenant, SearchRequest(query="VAT return", targets=["episode"], min_similarity=1.0))
    assert [h.id for h in res.hits] == [tax.id] and all("vector" not in r for r in res.hits[0].reasons)


def test_free_text_names_an_entity_only_when_a_word_matches(db, settings):
    """With an embedder the nearest entity by meaning always exists: free text that shares no word with any
    entity is a 404 (it named Globex for "Zorblax Secretcorp"), as without an embedder; text that does share a
    word resolves, and the 404 names the closest entity by meaning as a hint. Text with no word at all is a 422."""
    from graphmem.errors import InvalidInput, NotFound
    services = Services(db, settings.model_copy(update={"embedder": "local", "embed_on_write": True}))
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    ep, _ = services.ingest.append_episodes(tenant, [EpisodeIn(content="Sam met Globex", session_id="s1",
                                                               occurred_at=datetime(2024, 3, 1, tzinfo=timezone.utc))])[0]
    services.graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Sam Carter"), predicate="WORKS_AT",
                                              object=EntityRef(kind="Organization", name="Globex"), episode_id=ep.id))
    assert services.recall.resolve_entity(tenant, query="the Globex company").name == "Globex"
    try:
        services.recall.resolve_entity(tenant, query="Zorblax Secretcorp")
        raise AssertionError("'Zorblax Secretcorp' resolved")
    except NotFound as exc:
        assert exc.field == "entity.query" and "closest by meaning" in exc.detail, exc.detail
    try:   # no word at all: refused as a name of no letters or digits is, not a search that finds nothing
        services.recall.resolve_entity(tenant, query="***")
        raise AssertionError("'***' resolved")
    except InvalidInput as exc:
        assert exc.field == "entity.query" and "no letters or digits" in exc.detail, exc.detail

def test_turning_the_embedder_on_embeds_what_is_stored(db, settings):
    """A graph written without an embedder, then a worker started with one: it finds the tenant's nodes that have no
    vector and embeds them in the background, so vector search finds what was stored before."""
    from graphmem.ingest.worker import Worker

    plain = Services(db, settings.model_copy(update={"embedder": "none"}))
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    when = datetime(2024, 3, 1, tzinfo=timezone.utc)
    ep, _ = plain.ingest.append_episodes(tenant, [EpisodeIn(content="My cat Luna chewed the charger cable again",
                                                            occurred_at=when, session_id="s1")], extract=False)[0]
    fact = plain.graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Ana"), predicate="OBSERVED",
                                                  value="Ana adopted a kitten in March", episode_id=ep.id))
    ids = [ep.id, fact.fact_id, plain.graph.find_entities(tenant, "Ana")[0].id]

    def dims():
        with db.driver.session() as s:
            return s.run("MATCH (n) WHERE n.id IN $ids RETURN size(n.embedding) AS d ORDER BY d", ids=ids).value()

    assert dims() == [None, None, None]
    local = Services(db, settings.model_copy(update={"embedder": "local", "embed_on_write": True}))
    assert "vector" not in " ".join(h for hit in local.recall.search(tenant, SearchRequest(query="pet animal", k=5))
                                    .hits for h in hit.reasons)
    Worker(local, tenants=[tenant]).run(until_idle=True)  # no job to claim: only the start-up backfill runs
    assert dims() == [384, 384, 384]
    reasons = {h.id: " ".join(h.reasons) for h in local.recall.search(tenant, SearchRequest(query="pet animal",
                                                                                           k=5)).hits}
    assert "vector" in reasons.get(ep.id, "") and "vector" in reasons.get(fact.fact_id, "")


def test_the_record_of_an_api_write_gets_no_vector(db, settings):
    """Search never returns the episode that records an API write, so it is never embedded: not when it is
    written, not by a worker's backfill."""
    from graphmem.ingest.worker import Worker

    local = Services(db, settings.model_copy(update={"embedder": "local", "embed_on_write": True}))
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    when = datetime(2024, 3, 1, tzinfo=timezone.utc)
    record, _ = local.ingest.append_episodes(tenant, [EpisodeIn(content="API call POST /v1/facts by key k1",
                                                                occurred_at=when, kind="event")],
                                             extract=False, searchable=False)[0]
    talk, _ = local.ingest.append_episodes(tenant, [EpisodeIn(content="Ana adopted a kitten", occurred_at=when)],
                                           extract=False)[0]
    Worker(local, tenants=[tenant]).run(until_idle=True)
    with db.driver.session() as s:
        dims = dict(s.run("MATCH (e:Episode) WHERE e.id IN $ids RETURN e.id, size(e.embedding)",
                          ids=[record.id, talk.id]).values())
    assert dims == {record.id: None, talk.id: 384}
