"""A scoped search's entities are those of its episodes: mentioned by an episode in scope and still retained, or the
subject or object of a fact such an episode asserted or confirmed (cypher/search/rank). Helper-checked against how
fact hits are scoped: that fact must be one a search could return, whatever its valid time (a retracted or
superseded one shows with include_superseded, so it keeps its entity in scope), never a held candidate, a fact
past its own retention or one a correction expired (it was never true). Before, the record of an API write (which
mentions nothing: cypher/facts/create_batch) kept the entity of such a fact in the scope of its time, while the fact
itself was in no answer. A session's or user's entities follow its episodes' mentions: a fact retracted or erased
does not take away an entity that an episode still in scope names, and an episode past retention gives none."""
from __future__ import annotations

from datetime import timedelta

from graphmem.timeutil import utcnow


def _fact(c, subject: str, predicate: str, **rest) -> dict:
    body = {"facts": [{"subject": {"kind": "Person", "name": subject}, "predicate": predicate, **rest}]}
    r = c.post("/v1/facts", json=body)
    assert r.status_code == 200, r.text
    return r.json()["outcomes"][0]


def _scoped_entities(c, query: str, **scope) -> set[str]:
    r = c.post("/v1/search", json={"query": query, "targets": ["entity"], "k": 50, **scope})
    assert r.status_code == 200, r.text
    return {h["entity"]["name"] for h in r.json()["hits"]}


def test_an_entity_is_in_a_time_scope_only_through_a_fact_a_search_could_return(client_for, db, tenant):
    c = client_for(tenant)
    since = (utcnow() - timedelta(seconds=5)).isoformat()
    _fact(c, "Kept Kim", "WORKS_AT", object={"kind": "Organization", "name": "Kept Works"})
    held = _fact(c, "Held Hana", "HAS_HEALTH_CONDITION", value="asthma", source="inferred")
    assert held["action"] == "candidate" or c.get(f"/v1/facts/{held['fact_id']}").json()["status"] == "candidate"
    wrong = _fact(c, "Wendy Wu", "WORKS_AT", object={"kind": "Organization", "name": "Initehc"})
    assert c.post(f"/v1/facts/{wrong['fact_id']}/correct",
                  json={"object": {"kind": "Organization", "name": "Initech"}}).status_code == 200
    gone = _fact(c, "Old Olga", "WORKS_AT", object={"kind": "Organization", "name": "Lapsed Labs"})
    with db.driver.session() as s:   # what the passage of the fact's own TTL does to it (test-only raw write)
        s.run("MATCH (f:Fact {id: $id}) OPTIONAL MATCH ()-[l:RELATED {fact_id: $id}]->() "
              "SET f.retain_until = $t, l.retain_until = $t", id=gone["fact_id"], t=utcnow() - timedelta(seconds=1))
    ended = _fact(c, "Ruth Ray", "WORKS_AT", object={"kind": "Organization", "name": "Retracto"})
    subject = c.get(f"/v1/facts/{ended['fact_id']}").json()["subject_id"]
    assert c.post("/v1/facts/retract", json={"subject_id": subject, "predicate": "WORKS_AT"}).status_code == 200

    names = ["Kept Kim", "Kept Works", "Held Hana", "Wendy Wu", "Initehc", "Initech", "Old Olga", "Lapsed Labs",
             "Ruth Ray", "Retracto"]
    query = " ".join(names)
    assert set(names) <= _scoped_entities(c, query)          # unscoped: every entity is still stored
    scoped = _scoped_entities(c, query, occurred_after=since)
    assert {"Kept Kim", "Kept Works", "Wendy Wu", "Initech", "Ruth Ray", "Retracto"} <= scoped, scoped
    assert not {"Held Hana", "Initehc", "Old Olga", "Lapsed Labs"} & scoped, scoped
    # the facts agree: a fact search in that scope returns none of those three facts, at any valid time
    r = c.post("/v1/search", json={"query": query, "targets": ["fact"], "k": 50, "occurred_after": since,
                                   "include_superseded": True}).json()
    ids = {h["id"] for h in r["hits"]}
    assert ended["fact_id"] in ids and not {held["fact_id"], wrong["fact_id"], gone["fact_id"]} & ids, r


def test_a_sessions_entities_follow_its_episodes_whatever_becomes_of_their_facts(client_for, tenant):
    """The other half, checked and kept: in a session's (or user's) scope an entity is there while an episode of it
    still names it (the episode is a hit in that scope too), though the fact it came with was retracted or erased;
    erasing the episode takes it out. (An episode past retention: tests/test_retention_reads.py.)"""
    c = client_for(tenant)
    r = c.post("/v1/episodes", json={"content": "Pia Quist left Zorbex Zinc last spring", "session_id": "s-pia",
                                     "user_id": "u-pia", "occurred_at": utcnow().isoformat()})
    assert r.status_code == 201, r.text
    ep = r.json()["episode"]["id"]
    fid = _fact(c, "Pia Quist", "WORKS_AT", object={"kind": "Organization", "name": "Zorbex Zinc"},
                episode_id=ep)["fact_id"]
    query, both = "Pia Quist Zorbex Zinc", {"Pia Quist", "Zorbex Zinc"}
    subject = c.get(f"/v1/facts/{fid}").json()["subject_id"]
    assert c.post("/v1/facts/retract", json={"subject_id": subject, "predicate": "WORKS_AT"}).status_code == 200
    assert _scoped_entities(c, query, session_id="s-pia") == both
    assert c.post("/v1/forget", json={"fact_id": fid}).status_code == 200
    assert _scoped_entities(c, query, session_id="s-pia") == both == _scoped_entities(c, query, user_id="u-pia")
    hits = c.post("/v1/search", json={"query": query, "targets": ["episode"], "session_id": "s-pia"}).json()["hits"]
    assert [h["id"] for h in hits] == [ep]
    assert c.post("/v1/forget", json={"episode_id": ep}).status_code == 200
    assert _scoped_entities(c, query, session_id="s-pia") == set() == _scoped_entities(c, query, user_id="u-pia")
