"""The erasure cascade on the real Neo4j: forget a user (full scan for leftovers), shared provenance, erasing a
superseding fact, NEXT repair, summaries and pins, legal hold, audit records, tenant isolation."""
from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from graphmem.embeddings import make_embedder
from graphmem.errors import InvalidInput, NotFound, Refused
from graphmem.governance.erasure import ERASURE_KINDS, End, plan_repairs
from graphmem.governance.service import Governance
from graphmem.graph import TemporalGraph
from graphmem.indexer import Indexer
from graphmem.models import EntityRef, EpisodeIn
from tests.test_governance_support import (T0, episode, fact, fact_node, gov, org, person, raw,  # noqa: F401
                                           tenant_counts, uniq)

SCAN_NODES = """
MATCH (n)
UNWIND [k IN keys(n) WHERE k <> 'embedding'] AS k
WITH n, k, n[k] AS v
WITH n, k, CASE WHEN valueType(v) STARTS WITH 'LIST' THEN reduce(s = '', x IN v | s + ' ' + toString(x))
                ELSE toString(v) END AS text
WHERE any(needle IN $needles WHERE text CONTAINS needle)
RETURN labels(n) AS labels, k AS key, text LIMIT 20
"""
SCAN_RELS = """
MATCH ()-[r]->()
UNWIND keys(r) AS k
WITH r, k, toString(r[k]) AS text
WHERE any(needle IN $needles WHERE text CONTAINS needle)
RETURN type(r) AS type, k AS key, text LIMIT 20
"""
SCAN_VECTORS = "MATCH (n) WHERE n.embedding IS NOT NULL AND n.embedding IN $vectors RETURN labels(n) AS l, n.id AS id"


@pytest.fixture(scope="module")
def embedded(db, settings):
    """A graph and governance service that embed facts, entities and episodes with the local model."""
    indexer = Indexer(db, make_embedder(settings.model_copy(update={"embedder": "local"})))
    graph = TemporalGraph(db, settings, indexer)
    return graph, Governance(db, settings, graph)


def test_forget_user_leaves_nothing_of_theirs(embedded, db, tenant):
    graph, gov = embedded
    mark = uniq("zq")                       # a string only user A's data contains
    user_a, user_b = f"userA-{mark}", uniq("userB-")
    globex = graph.upsert_entity(tenant, org("Globex Corporation"))           # an episode-free shared entity
    me = person(f"Alex {mark}", external_ids=[f"user:{user_a}"], email=f"alex.{mark}@example.com")
    a1 = episode(graph, tenant, f"My friend Mulder{mark} works at Globex", user=user_a, session=f"sa-{mark}")
    a2 = episode(graph, tenant, f"Please email me, code {mark}", user=user_a, session=f"sa-{mark}", minutes=1)
    b1 = episode(graph, tenant, "Scully works at Globex and knows Alex", user=user_b, session="sb")
    f_mulder = fact(graph, tenant, person(f"Mulder{mark}"), "WORKS_AT", a1, obj=_ref(globex.id)).fact_id
    f_pref = fact(graph, tenant, me, "PREFERS_CHANNEL", a2, value=f"email {mark}").fact_id
    f_scully = fact(graph, tenant, person("Scully"), "WORKS_AT", b1, obj=_ref(globex.id)).fact_id
    f_knows = fact(graph, tenant, person("Scully"), "KNOWS", b1, obj=me).fact_id    # about A, said by B
    graph.indexer.index_episodes(tenant, [a1, a2, b1])
    vectors = [r["v"] for r in raw(db, "MATCH (n) WHERE n.tenant_id = $t AND n.embedding IS NOT NULL "
                                       "AND (n.id IN $ids OR n.name CONTAINS $m) RETURN n.embedding AS v",
                                   t=tenant, ids=[a1, a2, f_mulder, f_pref, f_knows], m=mark)]
    assert len(vectors) >= 6                # 2 episodes, 3 facts, Mulder and Alex entities
    erased_ids = [a1, a2, f_mulder, f_pref, f_knows]
    a_entities = [r["id"] for r in raw(db, "MATCH (e:Entity {tenant_id: $t}) WHERE e.name CONTAINS $m RETURN e.id AS id",
                                       t=tenant, m=mark)]

    receipt = gov.forget(tenant, user_id=user_a, actor="test")

    assert receipt.counts["episodes"] == 2 and receipt.counts["facts"] == 3 and receipt.counts["sessions"] == 1
    assert receipt.counts["entities"] == 2 and receipt.counts["external_ids"] == 1
    needles = [mark, user_a, *erased_ids, *a_entities, f"sa-{mark}"]
    assert raw(db, SCAN_NODES, needles=needles) == []
    assert raw(db, SCAN_RELS, needles=needles) == []
    assert raw(db, SCAN_VECTORS, vectors=vectors) == []
    # the other user's fact about the shared, episode-free entity is intact, with its provenance
    assert fact_node(db, f_scully)["status"] == "current"
    assert [p.episode_id for p in graph.fact_provenance(tenant, f_scully)] == [b1]
    assert [f.id for f in graph.facts_about(tenant, globex.id)] == [f_scully]
    # the audit record says what was done, not to whom or what
    audit = gov.audit_records(tenant)[0]
    assert audit.action == "forget" and audit.target_kind == "user" and audit.counts == receipt.counts
    assert audit.target_hash == hashlib.sha256(f"{tenant}:user:{user_a}".encode()).hexdigest()


def _ref(entity_id):
    from graphmem.models import EntityRef
    return EntityRef(id=entity_id)


def test_shared_provenance_keeps_the_fact(gov, graph, db, tenant):
    a = episode(graph, tenant, "Dana works at Globex", user="ua", session="sa")
    b = episode(graph, tenant, "Dana is at Globex", user="ub", session="sb")
    f = fact(graph, tenant, person("Dana"), "WORKS_AT", a, obj=org("Globex")).fact_id
    assert fact(graph, tenant, person("Dana"), "WORKS_AT", b, obj=org("Globex")).action == "duplicate"

    receipt = gov.forget(tenant, user_id="ua")

    assert receipt.counts["facts"] == 0 and receipt.counts["facts_kept"] == 1 and receipt.counts["episodes"] == 1
    # every kind is listed, zero or not, so a client can index any of them (docs/governance.md)
    assert receipt.counts["facts_reopened"] == 0 and receipt.counts["links_repaired"] == 0
    assert set(ERASURE_KINDS) <= set(receipt.counts)
    assert [p.episode_id for p in graph.fact_provenance(tenant, f)] == [b]
    assert fact_node(db, f)["status"] == "current"
    assert gov.memories.list(tenant, "ua").total == 0            # no longer the erased user's memory
    assert [m.fact.id for m in gov.memories.list(tenant, "ub").items] == [f]


def test_erasing_the_superseding_fact_reopens_the_old_value(gov, graph, db, tenant):
    e1 = episode(graph, tenant, "Dana works at Globex", minutes=0)
    e2 = episode(graph, tenant, "Dana moved to Initech", minutes=1)
    old = fact(graph, tenant, person("Dana"), "WORKS_AT", e1, obj=org("Globex")).fact_id
    new = fact(graph, tenant, person("Dana"), "WORKS_AT", e2, obj=org("Initech"), days=30)
    assert new.action == "superseded" and new.closed_fact_id == old

    receipt = gov.forget(tenant, episode_id=e2)

    assert receipt.counts["facts"] == 1 and receipt.counts["facts_reopened"] == 1
    o = fact_node(db, old)
    assert o["status"] == "current" and o.get("valid_to") is None and o.get("closed_at") is None
    dana = graph.find_entities(tenant, "Dana")[0]
    assert [f.id for f in graph.facts_about(tenant, dana.id, predicates=["WORKS_AT"])] == [old]
    assert [f.id for f in graph.fact_history(tenant, old)] == [old]
    assert graph.find_entities(tenant, "Initech") == []          # left with no facts and no mentions


def test_erasing_a_retracted_fact_leaves_the_retraction_on_the_value_it_extends(gov, graph, db, tenant):
    """Globex from T0, Initech from T0+10d, no employer since T0+20d (retracted); Initech erased: Globex ends where
    the retraction said, retracted, so a late "Hooli from T0+15d" ends there too, as it would have had Initech never
    been asserted. Found by a helper: Globex came back closed, and Hooli stayed current."""
    e = [episode(graph, tenant, f"e{i}", minutes=i) for i in range(4)]
    globex = fact(graph, tenant, person("Dana"), "WORKS_AT", e[0], obj=org("Globex")).fact_id
    initech = fact(graph, tenant, person("Dana"), "WORKS_AT", e[1], obj=org("Initech"), days=10).fact_id
    dana = graph.get_fact(tenant, initech).subject_id
    graph.retract(tenant, dana, "WORKS_AT", e[2], at=T0 + timedelta(days=20))
    assert gov.forget(tenant, fact_id=initech).counts["facts_extended"] == 1
    g = fact_node(db, globex)
    assert (g["status"], g["valid_to"].to_native()) == ("retracted", T0 + timedelta(days=20))
    hooli = fact(graph, tenant, person("Dana"), "WORKS_AT", e[3], obj=org("Hooli"), days=15).fact_id
    h = fact_node(db, hooli)
    assert (h["status"], h["valid_to"].to_native()) == ("retracted", T0 + timedelta(days=20))
    assert graph.facts_about(tenant, dana, predicates=["WORKS_AT"]) == []


def test_erasing_a_fact_never_brings_back_a_value_the_user_retracted(gov, graph, db, tenant):
    """Found by a helper: email from T0 retracted ("no more email") at T0+20d, then phone from T0+10d closed email at
    T0+10d (and lost its retracted mark); erasing phone made email current again. Email ends at its retraction."""
    e = [episode(graph, tenant, f"e{i}", minutes=i) for i in range(3)]
    email = fact(graph, tenant, person("Dana"), "PREFERS_CHANNEL", e[0], value="email").fact_id
    dana = graph.get_fact(tenant, email).subject_id
    graph.retract(tenant, dana, "PREFERS_CHANNEL", e[1], at=T0 + timedelta(days=20), value="email")
    phone = fact(graph, tenant, person("Dana"), "PREFERS_CHANNEL", e[2], value="phone", days=10).fact_id
    assert fact_node(db, email)["status"] == "closed"
    receipt = gov.forget(tenant, fact_id=phone)
    assert (receipt.counts["facts_reopened"], receipt.counts["facts_extended"]) == (0, 1)
    m = fact_node(db, email)
    assert (m["status"], m["valid_to"].to_native()) == ("retracted", T0 + timedelta(days=20))
    assert graph.facts_about(tenant, dana, predicates=["PREFERS_CHANNEL"]) == []


def test_a_retracted_value_stays_retracted_through_two_closes_and_their_erasure(gov, graph, db, tenant):
    """Found by a helper: email retracted at T0+40d, then phone from T0+20d and sms from T0+10d (each its own call)
    closed it twice; the second close overwrote what the first kept, and erasing sms then phone made email current.
    It ends at its retraction, as had neither been said."""
    e = [episode(graph, tenant, f"r{i}", minutes=i) for i in range(4)]
    email = fact(graph, tenant, person("Lee Era"), "PREFERS_CHANNEL", e[0], value="email").fact_id
    lee = graph.get_fact(tenant, email).subject_id
    graph.retract(tenant, lee, "PREFERS_CHANNEL", e[1], at=T0 + timedelta(days=40), value="email")
    phone = fact(graph, tenant, person("Lee Era"), "PREFERS_CHANNEL", e[2], value="phone", days=20).fact_id
    sms = fact(graph, tenant, person("Lee Era"), "PREFERS_CHANNEL", e[3], value="sms", days=10).fact_id
    gov.forget(tenant, fact_id=sms)
    m = fact_node(db, email)
    assert (m["status"], m["valid_to"].to_native()) == ("closed", T0 + timedelta(days=20))
    gov.forget(tenant, fact_id=phone)
    m = fact_node(db, email)
    assert (m["status"], m["valid_to"].to_native()) == ("retracted", T0 + timedelta(days=40))
    assert graph.facts_about(tenant, lee, predicates=["PREFERS_CHANNEL"]) == []


def test_an_end_stated_by_an_assertion_survives_erasure_and_says_nothing_of_others(gov, graph, db, tenant):
    """Found by a helper. Aco from T0 (open), then Bco from T0+10d "until T0+20d": erasing Bco made Aco end at
    T0+20d, Bco's own end; had Bco never been said, Aco is current. And Globex "from T0-10d until T0" sent after
    Initech from T0: erasing Initech re-opened Globex, whose end its assertion stated."""
    e = [episode(graph, tenant, f"e{i}", minutes=i) for i in range(4)]
    aco = fact(graph, tenant, person("Era One"), "WORKS_AT", e[0], obj=org("Aco")).fact_id
    bco = fact(graph, tenant, person("Era One"), "WORKS_AT", e[1], obj=org("Bco"), days=10,
               valid_to=T0 + timedelta(days=20)).fact_id
    assert gov.forget(tenant, fact_id=bco).counts["facts_reopened"] == 1
    a = fact_node(db, aco)
    assert (a["status"], a.get("valid_to")) == ("current", None)

    initech = fact(graph, tenant, person("Era Two"), "WORKS_AT", e[2], obj=org("Initech")).fact_id
    globex = fact(graph, tenant, person("Era Two"), "WORKS_AT", e[3], obj=org("Globex"), days=-10, valid_to=T0)
    assert globex.action == "history"
    receipt = gov.forget(tenant, fact_id=initech)
    assert (receipt.counts["facts_reopened"], receipt.counts["facts_extended"]) == (0, 0)
    g = fact_node(db, globex.fact_id)
    assert (g["status"], g["valid_to"].to_native()) == ("closed", T0)


def test_erasure_leaves_one_value_where_a_later_one_follows_a_stated_end(gov, graph, db, tenant):
    """Found by a helper: Engineer from T0, Manager from T0+20d "until T0+40d" (it closed Engineer), Director from
    T0+60d (nothing to close). Erasing Manager re-opened Engineer beside Director: two current titles. Had Manager
    never been said, Engineer runs to Director's start, which supersedes it; so for a multi-valued KNOWS too."""
    e = [episode(graph, tenant, f"t{i}", minutes=i) for i in range(6)]
    eng = fact(graph, tenant, person("Era Three"), "HAS_TITLE", e[0], value="Engineer").fact_id
    mgr = fact(graph, tenant, person("Era Three"), "HAS_TITLE", e[1], value="Manager", days=20,
               valid_to=T0 + timedelta(days=40)).fact_id
    dire = fact(graph, tenant, person("Era Three"), "HAS_TITLE", e[2], value="Director", days=60)
    assert dire.action == "created"
    gov.forget(tenant, fact_id=mgr)
    g = fact_node(db, eng)
    assert (g["status"], g["valid_to"].to_native()) == ("closed", T0 + timedelta(days=60))
    links = raw(db, "MATCH (n:Fact)-[:SUPERSEDES]->(o:Fact {id: $id}) RETURN n.id AS n", id=eng)
    assert [r["n"] for r in links] == [dire.fact_id]
    sam = graph.get_fact(tenant, eng).subject_id
    assert [f.value for f in graph.facts_about(tenant, sam, predicates=["HAS_TITLE"])] == ["Director"]

    stated = fact(graph, tenant, person("Era Four"), "KNOWS", e[3], obj=person("Frank Era"), days=20,
                  valid_to=T0 + timedelta(days=40)).fact_id
    early = fact(graph, tenant, person("Era Four"), "KNOWS", e[4], obj=person("Frank Era"))
    late = fact(graph, tenant, person("Era Four"), "KNOWS", e[5], obj=person("Frank Era"), days=60)
    assert (early.action, late.action) == ("history", "created")
    gov.forget(tenant, fact_id=stated)
    era = graph.get_fact(tenant, early.fact_id).subject_id
    assert [f.id for f in graph.facts_about(tenant, era, predicates=["KNOWS"])] == [late.fact_id]
    assert graph.get_fact(tenant, early.fact_id).valid_to == T0 + timedelta(days=60)


def test_an_end_a_duplicate_gave_survives_erasing_a_later_value(gov, graph, db, tenant):
    """Found by a helper: Acme from T0, then "Acme until T0+30d" (a duplicate that closed it there), then Beta from
    T0+20d (it closed Acme at its start). Erasing Beta re-opened Acme with no end: the end the duplicate stated
    was not kept as Acme's own."""
    e = [episode(graph, tenant, f"d{i}", minutes=i) for i in range(3)]
    acme = fact(graph, tenant, person("Pat Era"), "WORKS_AT", e[0], obj=org("Acme Era")).fact_id
    again = fact(graph, tenant, person("Pat Era"), "WORKS_AT", e[1], obj=org("Acme Era"), days=5,
                 valid_to=T0 + timedelta(days=30))
    assert (again.action, again.closed_fact_id) == ("duplicate", acme)
    beta = fact(graph, tenant, person("Pat Era"), "WORKS_AT", e[2], obj=org("Beta Era"), days=20).fact_id
    gov.forget(tenant, fact_id=beta)
    a = fact_node(db, acme)
    assert (a["status"], a["valid_to"].to_native()) == ("closed", T0 + timedelta(days=30))


def test_erasing_a_middle_value_extends_the_older_one_to_the_next(gov, graph, db, tenant):
    eps = [episode(graph, tenant, f"Dana works at org {i}", minutes=i) for i in range(3)]
    ids = [fact(graph, tenant, person("Dana"), "WORKS_AT", eps[i], obj=org(f"Org{i}"), days=10 * i).fact_id
           for i in range(3)]

    receipt = gov.forget(tenant, episode_id=eps[1])

    assert receipt.counts["facts_extended"] == 1 and receipt.counts["links_repaired"] == 1
    first = fact_node(db, ids[0])
    assert first["status"] == "closed" and first["valid_to"].to_native() == T0 + timedelta(days=20)
    history = graph.fact_history(tenant, ids[2])
    assert [f.id for f in history] == [ids[0], ids[2]]
    links = raw(db, "MATCH (n:Fact {tenant_id: $t})-[:SUPERSEDES]->(o) RETURN n.id AS n, o.id AS o", t=tenant)
    assert links == [{"n": ids[2], "o": ids[0]}]
    # and the next assertion still follows the temporal rules on the repaired timeline
    e3 = episode(graph, tenant, "Dana joined Org3", minutes=9)
    assert fact(graph, tenant, person("Dana"), "WORKS_AT", e3, obj=org("Org3"), days=40).closed_fact_id == ids[2]


def test_erasing_late_history_keeps_transaction_time_and_reads_work(gov, graph, db, tenant):
    """Hooli (day 0), Globex (day 20) closes it, then Initech (day 10) arrives late and moves Hooli's end; erasing
    Initech gives Hooli back its end at Globex's start without re-dating when that end was learned, so a read at
    an earlier known_at still sees one employer, and search and paths over the repaired facts answer."""
    from datetime import datetime, timezone

    from graphmem.recall.models import SearchRequest
    from graphmem.recall.service import RecallService
    eps = [episode(graph, tenant, f"Dana works at org {i}", minutes=i) for i in range(3)]
    hooli = fact(graph, tenant, person("Dana"), "WORKS_AT", eps[0], obj=org("Hooli"), days=0).fact_id
    globex = fact(graph, tenant, person("Dana"), "WORKS_AT", eps[1], obj=org("Globex"), days=20).fact_id
    between = datetime.now(timezone.utc)
    initech = fact(graph, tenant, person("Dana"), "WORKS_AT", eps[2], obj=org("Initech"), days=10).fact_id
    gov.forget(tenant, fact_id=initech)
    dana = graph.get_fact(tenant, hooli).subject_id
    later = T0 + timedelta(days=30)
    then = graph.facts_about(tenant, dana, as_of=later, known_at=between, predicates=["WORKS_AT"])
    assert [(f.id, f.status) for f in then] == [(globex, "current")]
    assert graph.get_fact(tenant, hooli).valid_to == T0 + timedelta(days=20)
    recall = RecallService(db, graph)
    hits = recall.search(tenant, SearchRequest(query="Dana Hooli", include_superseded=True, targets=["fact"]))
    assert hooli in [h.id for h in hits.hits]
    assert recall.paths_around(tenant, dana, max_hops=1, as_of=T0 + timedelta(days=5), known_at=between)


def test_a_corrected_fact_is_not_believed_again_when_the_correction_is_erased(gov, graph, db, tenant):
    e1 = episode(graph, tenant, "Dana's title is CFO")
    old = fact(graph, tenant, person("Dana"), "HAS_TITLE", e1, value="CFO").fact_id
    e2 = episode(graph, tenant, "No, Dana is the CTO", user="u2", session="s2")
    corrected = graph.correct(tenant, old, e2, value="CTO")

    gov.forget(tenant, user_id="u2")

    assert fact_node(db, corrected.fact_id) is None
    o = fact_node(db, old)
    assert o["status"] == "corrected" and o["expired_at"] is not None


def test_forgetting_an_episode_relinks_next_and_drops_its_summaries_and_pins(gov, graph, db, tenant):
    ids = [episode(graph, tenant, f"turn {i}", minutes=i) for i in range(4)]
    # the context service's compaction lineage and a pin set by turn 1 (graph shapes from DESIGN.md)
    raw(db, """MATCH (e0:Episode {id: $e0}), (e1:Episode {id: $e1}), (e2:Episode {id: $e2})
               CREATE (s1:Summary {tenant_id: $t, id: $s1, session_id: 's1', rev: 1, text: 'turns 0-1'})
               CREATE (s2:Summary {tenant_id: $t, id: $s2, session_id: 's1', rev: 2, text: 'turns 0-2'})
               CREATE (s3:Summary {tenant_id: $t, id: $s3, session_id: 's1', rev: 1, text: 'turn 2 only'})
               CREATE (s1)-[:COVERS]->(e0), (s1)-[:COVERS]->(e1), (s2)-[:COVERS]->(e2), (s2)-[:REVISES]->(s1),
                      (s3)-[:COVERS]->(e2)
               CREATE (:Pin {tenant_id: $t, id: $p1, session_id: 's1', key: 'order_id', value: 'A-1', set_by: $e1,
                             version: 3})
               CREATE (:Pin {tenant_id: $t, id: $p2, session_id: 's1', key: 'currency', value: 'EUR', set_by: $e2,
                             version: 1})""",
        t=tenant, e0=ids[0], e1=ids[1], e2=ids[2], s1=uniq("s"), s2=uniq("s"), s3=uniq("s"), p1=uniq("p"),
        p2=uniq("p"))

    receipt = gov.forget(tenant, episode_id=ids[1])

    assert receipt.counts["summaries"] == 2 and receipt.counts["pins"] == 1
    chain = db.rows("episodes/chain", tenant_id=tenant, session_id="s1")
    assert chain == [{"ids": [ids[0], ids[2], ids[3]]}]
    assert [r["text"] for r in raw(db, "MATCH (s:Summary {tenant_id: $t}) RETURN s.text AS text", t=tenant)] == ["turn 2 only"]
    assert [r["k"] for r in raw(db, "MATCH (p:Pin {tenant_id: $t}) RETURN p.key AS k", t=tenant)] == ["currency"]
    # the session lives on: a pin created again under the key continues its versions (a stale writer gets a 409)
    assert raw(db, "MATCH (s:Session {tenant_id: $t, id: 's1'}) RETURN s.retired_pin_versions AS r",
               t=tenant) == [{"r": ["order_id:3"]}]


def test_forget_a_session_and_a_fact(gov, graph, db, tenant):
    keep = episode(graph, tenant, "Dana prefers email", session="s-keep")
    gone = episode(graph, tenant, "Dana likes chess", session="s-gone")
    f_keep = fact(graph, tenant, person("Dana"), "PREFERS_CHANNEL", keep, value="email").fact_id
    fact(graph, tenant, person("Dana"), "INTERESTED_IN", gone, value="chess")
    r = gov.forget(tenant, session_id="s-gone")
    assert r.counts["sessions"] == 1 and r.counts["episodes"] == 1 and r.counts["facts"] == 1
    assert raw(db, "MATCH (s:Session {tenant_id: $t}) RETURN s.id AS id", t=tenant) == [{"id": "s-keep"}]
    r = gov.forget(tenant, fact_id=f_keep)
    assert r.counts["facts"] == 1 and r.counts["entities"] == 0      # Dana: no facts left, but mentioned by ...
    assert graph.session_episodes(tenant, "s-keep")[0].id == keep    # ... the episode, which stays
    assert [e.name for e in graph.find_entities(tenant, "Dana")] == ["Dana"]
    r = gov.forget(tenant, session_id="s-keep")
    assert r.counts["episodes"] == 1 and r.counts["entities"] == 1   # no facts, no mentions left: Dana goes
    assert graph.find_entities(tenant, "Dana") == []
    with pytest.raises(NotFound) as err:
        gov.forget(tenant, fact_id=f_keep)
    assert err.value.field == "fact_id"
    with pytest.raises(NotFound):
        gov.forget(tenant, session_id="s-gone")
    with pytest.raises(InvalidInput) as err:
        gov.forget(tenant, user_id="u1", episode_id=keep)
    with pytest.raises(InvalidInput):
        gov.forget(tenant)


def test_forgetting_a_fact_written_through_the_api_takes_its_entity(gov, graph, db, tenant):
    """A fact written through `POST /v1/facts` derives from the call's record episode (`searchable: false`), which
    names the call, not anything said: it mentions no entity, so forgetting the fact removes its entity, as it
    does for an episode-free CRM entity, while a message episode's mention keeps its entity."""
    record, _ = graph.append_episode(tenant, EpisodeIn(kind="event", source="system", occurred_at=T0, role="system",
                                                       content="API call POST /v1/facts by key k1"),
                                     extraction_status="skipped", searchable=False)
    api_fact = fact(graph, tenant, person("Quinn Api"), "HAS_TITLE", record.id, value="CTO").fact_id
    said = episode(graph, tenant, "Rae is our CTO")
    said_fact = fact(graph, tenant, person("Rae Said"), "HAS_TITLE", said, value="CTO").fact_id
    assert gov.forget(tenant, fact_id=api_fact).counts["entities"] == 1
    assert graph.find_entities(tenant, "Quinn Api") == []
    assert gov.forget(tenant, fact_id=said_fact).counts["entities"] == 0
    assert [e.name for e in graph.find_entities(tenant, "Rae Said")] == ["Rae Said"]


def test_forgetting_a_fact_between_kept_entities_leaves_no_path(gov, graph, db, tenant):
    """Both people stay (they have other facts), so only the forgotten fact's RELATED edge can take it off the
    paths; the `tenant` fixture checks at teardown that no edge outlives its fact."""
    from graphmem.recall.service import RecallService

    e = episode(graph, tenant, "Dana knows Eli; both work at Globex")
    knows = fact(graph, tenant, person("Dana"), "KNOWS", e, obj=person("Eli")).fact_id
    for who in ("Dana", "Eli"):
        fact(graph, tenant, person(who), "WORKS_AT", e, obj=org("Globex"))
    dana = graph.find_entities(tenant, "Dana")[0].id
    recall = RecallService(db, graph)
    assert {(p.target.name, p.length) for p in recall.paths_around(tenant, dana)} == {("Eli", 1), ("Globex", 1)}
    assert gov.forget(tenant, fact_id=knows).counts["facts"] == 1
    assert {(p.target.name, p.length) for p in recall.paths_around(tenant, dana)} == {("Eli", 2), ("Globex", 1)}


def test_legal_hold_refuses_erasure_until_released(gov, graph, db, tenant):
    e1 = episode(graph, tenant, "Dana works at Globex", user="held", session="sh")
    e2 = episode(graph, tenant, "Dana likes chess", user="free", session="sf")
    f1 = fact(graph, tenant, person("Dana"), "WORKS_AT", e1, obj=org("Globex")).fact_id
    fact(graph, tenant, person("Dana"), "INTERESTED_IN", e2, value="chess")
    hold, created = gov.holds.place(tenant, "user", "held", "case 2024-17")
    assert created and gov.holds.place(tenant, "user", "held", "again")[0].id == hold.id
    before = tenant_counts(db, tenant)[:2]

    for kwargs, field in (({"user_id": "held"}, "user_id"), ({"session_id": "sh"}, "session_id"),
                          ({"episode_id": e1}, "episode_id"), ({"fact_id": f1}, "fact_id")):
        with pytest.raises(Refused) as err:
            gov.forget(tenant, **kwargs)
        assert err.value.field == field and "hold" in err.value.detail
    assert tenant_counts(db, tenant)[:2] == before          # nothing half-written (audit of the hold aside)
    assert gov.forget(tenant, user_id="free").counts["episodes"] == 1   # others are not blocked

    gov.holds.release(tenant, hold.id)
    assert gov.forget(tenant, user_id="held").counts["facts"] == 1
    assert [r.action for r in gov.audit_records(tenant)] == ["forget", "release", "forget", "hold"]


def test_erasure_never_touches_another_tenant(gov, graph, db, tenant):
    other = tenant + "-other"
    for t in (tenant, other):
        e = episode(graph, t, "Dana works at Globex", user="u1")
        fact(graph, t, person("Dana"), "WORKS_AT", e, obj=org("Globex"))
    before = tenant_counts(db, other)
    assert gov.forget(tenant, user_id="u1").counts["facts"] == 1
    assert tenant_counts(db, other) == before
    with pytest.raises(NotFound):                      # another tenant's ids are simply not found
        gov.forget(tenant, episode_id=before[2][0]["id"])


def test_plan_repairs_follows_runs_of_erased_facts():
    t = [T0 + timedelta(days=i) for i in range(4)]
    around = [
        {"id": "b", "valid_from": t[1], "valid_to": t[2], "status": "closed", "newers": ["c"],
         "olders": [{"id": "a", "valid_from": t[0], "valid_to": t[1], "status": "closed", "superseders": ["b"]}]},
        {"id": "c", "valid_from": t[2], "valid_to": t[3], "status": "closed", "newers": ["d"],
         "olders": [{"id": "b", "valid_from": t[1], "valid_to": t[2], "status": "closed", "superseders": ["c"]}]},
    ]
    assert plan_repairs({"b", "c"}, around) == ({"a": End(t[3])}, {("d", "a")})
    around[1]["status"] = "retracted"           # the run ended in a retraction: "a" inherits it with the end
    assert plan_repairs({"b", "c"}, around) == ({"a": End(t[3], "retracted", False)}, {("d", "a")})
    around[1]["newers"] = []
    around[1]["valid_to"] = None
    around[1]["status"] = "current"
    assert plan_repairs({"b", "c"}, around) == ({"a": End(None)}, set())
    around[0]["olders"][0]["status"] = "retracted"
    assert plan_repairs({"b", "c"}, around) == ({}, set())


def test_erasing_a_restatement_takes_back_the_belief_it_brought(gov, graph, db, tenant):
    """Found by a helper: an inferred title (0.6) stated again by the user (user_explicit, 1.0); erasing the user's
    episode left the fact user_explicit at 1.0, so a later inference still could not replace it. It believes
    again what its remaining provenance says."""
    e = [episode(graph, tenant, f"b{i}", minutes=i) for i in range(3)]
    title = fact(graph, tenant, person("Dana Belief"), "HAS_TITLE", e[0], value="Manager", source="inferred",
                 confidence=0.6).fact_id
    assert fact(graph, tenant, person("Dana Belief"), "HAS_TITLE", e[1], value="Manager", days=1).action == "duplicate"
    assert (fact_node(db, title)["source"], fact_node(db, title)["confidence"]) == ("user_explicit", 1.0)
    receipt = gov.forget(tenant, episode_id=e[1])
    assert receipt.counts["facts_kept"] == 1
    assert (fact_node(db, title)["source"], fact_node(db, title)["confidence"]) == ("inferred", 0.6)
    later = fact(graph, tenant, person("Dana Belief"), "HAS_TITLE", e[2], value="Director", days=2,
                 source="inferred", confidence=0.9)
    assert later.action == "superseded"


def test_two_erasures_of_one_timeline_at_once_repair_it_as_one_after_the_other(gov, graph, db, tenant):
    """Found by a helper: Engineer, Manager until T0+40d, Director from T0+40d; erasing Manager and Director at
    once answered a 500 (a link to the fact the other erasure deleted) or left Engineer closed with no current
    title. They run one after the other now: Engineer is current, as when erased in turn."""
    import threading
    for run in range(4):
        who = person(f"Race Era{run}")
        e = [episode(graph, tenant, f"race{run}-{i}", minutes=i) for i in range(3)]
        eng = fact(graph, tenant, who, "HAS_TITLE", e[0], value="Engineer").fact_id
        mgr = fact(graph, tenant, who, "HAS_TITLE", e[1], value="Manager", days=20,
                   valid_to=T0 + timedelta(days=40)).fact_id
        dire = fact(graph, tenant, who, "HAS_TITLE", e[2], value="Director", days=40).fact_id
        gate, errors = threading.Barrier(2), []

        def forget(fid):
            gate.wait()
            try:
                gov.forget(tenant, fact_id=fid)
            except Exception as exc:   # noqa: BLE001 - any failure is the finding
                errors.append(repr(exc))
        threads = [threading.Thread(target=forget, args=(f,)) for f in (mgr, dire)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert errors == [], errors
        g = fact_node(db, eng)
        assert (g["status"], g.get("valid_to")) == ("current", None), (run, g)


def test_counts_of_other_and_expired_sources_count_episodes_not_edges(gov, graph, db, tenant):
    """An episode that confirmed a fact and later retracted it has two provenance edges (one per role); a user's
    memory counts it once among the other users' supporting episodes, not at all once it only retracted, and
    once when retention removes it (helper-found: both counted edges)."""
    mine = episode(graph, tenant, "I like golf", user="u1")
    theirs = episode(graph, tenant, "she likes golf, and later: not any more", user="u2", session="s2")
    golf = fact(graph, tenant, person("Dana"), "INTERESTED_IN", mine, value="golf").fact_id
    assert fact(graph, tenant, person("Dana"), "INTERESTED_IN", theirs, value="golf").action == "duplicate"
    [m] = gov.memories.list(tenant, "u1").items
    assert m.other_sources == 1
    dana = graph.get_fact(tenant, golf).subject_id
    assert graph.retract(tenant, dana, "INTERESTED_IN", theirs, value="golf",
                         at=T0 + timedelta(days=30)) == [golf]
    assert [p.role for p in graph.fact_provenance(tenant, golf)] == ["assertion", "confirmation", "retraction"]
    [m] = gov.memories.list(tenant, "u1").items
    assert m.other_sources == 1                              # one episode, two edges
    raw(db, "MATCH (e:Episode {id: $id}) SET e.retain_until = datetime() - duration('P1D')", id=theirs)
    receipt = gov.sweep(tenant)
    assert receipt.tenants[tenant].counts["episodes"] == 1
    [m] = gov.memories.list(tenant, "u1").items
    assert m.expired_sources == 1 and m.other_sources == 0


def test_a_retried_correction_to_a_value_already_stated_replays(graph, tenant):
    """Correcting "golf" to "tennis" when "tennis" is already a fact makes the correcting episode confirm it; a
    retried call finds that correction (helper-found: only an assertion edge was looked for, so the retry was a
    422 "already corrected")."""
    said = episode(graph, tenant, "Dana likes golf and tennis")
    golf = fact(graph, tenant, person("Dana"), "INTERESTED_IN", said, value="golf").fact_id
    tennis = fact(graph, tenant, person("Dana"), "INTERESTED_IN", said, value="tennis").fact_id
    fix = episode(graph, tenant, "User corrected: not golf, tennis", minutes=5)
    out = graph.correct(tenant, golf, fix, value="tennis")
    assert out.action == "corrected" and out.fact_id == tennis
    replay = graph.corrected_by(tenant, golf, fix)
    assert replay is not None and (replay.fact_id, replay.closed_fact_id) == (tennis, golf)


# ---- attributes only erased episodes declared ------------------------------------------------------------------
def _dana(graph, tenant, mark):
    """The CRM story: episode A (the CRM's sync) creates contact Dana Reyes with external id email:dana@corp.com, alias
    "D. Reyes" and a summary, and says she works at Acme; chat episode B, another user's, calls her DR, gives her
    personal mail (as her email and a chat id) and another summary, and says she is CFO. Returns (A, B, Dana's id,
    the two fact ids)."""
    a = episode(graph, tenant, "CRM: contact Dana Reyes, Acme", user="crm", session="crm-sync")
    b = episode(graph, tenant, f"Dana, aka DR, her personal mail is dana.home.{mark}@gmail.com", user="ub",
                session="sb", minutes=1)
    works = fact(graph, tenant, person("Dana Reyes", external_ids=["email:dana@corp.com"], aliases=["D. Reyes"],
                                       summary="Contact at Acme"), "WORKS_AT", a, obj=org("Acme")).fact_id
    title = fact(graph, tenant, person("Dana Reyes", aliases=["DR"], email=f"dana.home.{mark}@gmail.com",
                                       external_ids=[f"chat:dana.home.{mark}"],
                                       summary=f"Goes by DR; personal mail dana.home.{mark}@gmail.com"),
                 "HAS_TITLE", b, value="CFO").fact_id
    [dana] = graph.find_entities(tenant, "Dana Reyes", "Person")
    return a, b, dana.id, works, title


def _search_text(db, entity_id):
    return raw(db, "MATCH (e:Entity {id: $id}) RETURN e.search_text AS t", id=entity_id)[0]["t"]


def _search(db, graph, tenant, query, targets=("fact", "episode", "entity")):
    """The search service's hits for `query`."""
    from graphmem.recall.models import SearchRequest
    from graphmem.recall.service import RecallService
    return RecallService(db, graph).search(tenant, SearchRequest(query=query, targets=list(targets))).hits


def _entity_hits(db, graph, tenant, query):
    return [h.entity.name for h in _search(db, graph, tenant, query, ["entity"])]


def test_forgetting_a_user_strips_what_only_their_episodes_said_of_a_kept_entity(gov, graph, db, tenant):
    mark = uniq("m")
    a, b, dana, works, title = _dana(graph, tenant, mark)
    before = graph.get_entity(tenant, dana)
    assert sorted(before.aliases) == ["D. Reyes", "DR"] and before.email == f"dana.home.{mark}@gmail.com"
    assert sorted(before.external_ids) == sorted(["email:dana@corp.com", f"chat:dana.home.{mark}"])
    assert _entity_hits(db, graph, tenant, "DR") == ["Dana Reyes"]
    assert "dana.home" in str(_search(db, graph, tenant, f"dana.home.{mark}"))

    receipt = gov.forget(tenant, user_id="ub")

    assert receipt.counts["facts"] == 1 and receipt.counts["entities"] == 0     # Dana stays: A still uses her
    assert receipt.counts["aliases"] == 1 and receipt.counts["external_ids"] == 1
    after = graph.get_entity(tenant, dana)
    assert after.aliases == ["D. Reyes"] and after.external_ids == ["email:dana@corp.com"]
    assert after.email is None and after.summary is None   # B's summary had replaced A's: neither is left
    assert _search_text(db, dana) == "Dana Reyes | D. Reyes"
    assert graph.find_entities(tenant, "DR") == [] and [e.id for e in graph.find_entities(tenant, "D. Reyes")] == [dana]
    assert _entity_hits(db, graph, tenant, "DR") == []
    assert _entity_hits(db, graph, tenant, "Reyes") == ["Dana Reyes"]
    assert _search(db, graph, tenant, mark) == []
    # "dana.home" still finds Dana by her name ("dana"), but nothing found carries the erased mail
    hits = _search(db, graph, tenant, f"dana.home.{mark}")
    assert "Dana Reyes" in [h.entity.name for h in hits if h.entity] and "dana.home" not in str(hits)
    assert raw(db, SCAN_NODES, needles=[f"dana.home.{mark}", b, title]) == []
    assert raw(db, SCAN_RELS, needles=[f"dana.home.{mark}", b, title]) == []
    # the CRM's fact and identifiers are intact, and still resolve to her
    assert [f.id for f in graph.facts_about(tenant, dana)] == [works]
    assert [e.id for e in graph.find_entities(tenant, "Dana Reyes")] == [dana]
    again = fact(graph, tenant, person("Dana Reyes", external_ids=["email:dana@corp.com"]), "WORKS_AT", a,
                 obj=org("Acme"))
    assert again.action == "duplicate" and again.fact_id == works


def test_an_attribute_a_kept_episode_also_declared_stays(gov, graph, db, tenant):
    mark = uniq("m")
    a, b, dana, works, title = _dana(graph, tenant, mark)
    c = episode(graph, tenant, "DR is in Lisbon", user="uc", session="sc")
    fact(graph, tenant, person("Dana Reyes", aliases=["DR"]), "LOCATED_IN", c, value="Lisbon")

    receipt = gov.forget(tenant, user_id="ub")

    assert receipt.counts["aliases"] == 0 and receipt.counts["external_ids"] == 1
    after = graph.get_entity(tenant, dana)
    assert sorted(after.aliases) == ["D. Reyes", "DR"] and after.external_ids == ["email:dana@corp.com"]
    assert _entity_hits(db, graph, tenant, "DR") == ["Dana Reyes"]
    # forgetting the CRM's episode strips what only it said; what B said went with B
    receipt = gov.forget(tenant, episode_id=a)
    assert receipt.counts["entities"] == 1                        # Acme, with its name's alias
    assert receipt.counts["aliases"] == 2 and receipt.counts["external_ids"] == 1   # and Dana's "D. Reyes"
    after = graph.get_entity(tenant, dana)
    assert after.aliases == ["DR"] and after.external_ids == [] and _search_text(db, dana) == "Dana Reyes | DR"


def test_a_stripped_alias_stays_with_the_namesake_it_also_names(gov, graph, db, tenant):
    mark = uniq("m")
    a, b, dana, works, title = _dana(graph, tenant, mark)
    c = episode(graph, tenant, "Dr Rao is another DR", user="uc", session="sc")
    other = fact(graph, tenant, person("DR", email="dr@other.example"), "HAS_TITLE", c, value="Surgeon")
    [dr] = [e for e in graph.find_entities(tenant, "DR") if e.id != dana]

    gov.forget(tenant, user_id="ub")

    assert [e.id for e in graph.find_entities(tenant, "DR")] == [dr.id]
    assert raw(db, "MATCH (a:Alias {tenant_id: $t, key: 'Person:dr'}) RETURN a.entity_id AS owner", t=tenant) \
        == [{"owner": dr.id}]
    assert graph.get_entity(tenant, dana).aliases == ["D. Reyes"]
    assert graph.get_fact(tenant, other.fact_id).subject_id == dr.id


def test_a_stripped_entity_is_embedded_again_without_what_was_erased(embedded, db, tenant):
    graph, gov = embedded
    mark = uniq("m")
    a, b, dana, works, title = _dana(graph, tenant, mark)
    vector = lambda: raw(db, "MATCH (e:Entity {id: $id}) RETURN e.embedding AS v", id=dana)[0]["v"]  # noqa: E731
    assert vector() is not None

    gov.forget(tenant, user_id="ub")

    assert vector() is None                      # stale: the worker's backfill embeds the text left
    assert graph.indexer.backfill(tenant) >= 1
    [expected] = graph.indexer.embedder.embed(["Dana Reyes | D. Reyes"])
    assert vector() == pytest.approx(list(expected), abs=1e-6)


def test_expiry_strips_nothing(gov, graph, db, tenant):
    from graphmem.governance.models import RetentionSettings
    from graphmem.timeutil import utcnow
    mark = uniq("m")
    a, b, dana, works, title = _dana(graph, tenant, mark)
    before = graph.get_entity(tenant, dana)
    gov.retention.update(tenant, RetentionSettings(episode_retention_days=30))

    receipt = gov.sweep(tenant, utcnow() + timedelta(days=31))

    assert receipt.tenants[tenant].counts["episodes"] == 2 and receipt.tenants[tenant].counts["aliases"] == 0
    after = graph.get_entity(tenant, dana)      # the facts live on, and so does what the episodes said of Dana
    assert (sorted(after.aliases), sorted(after.external_ids), after.email, after.summary) == \
        (sorted(before.aliases), sorted(before.external_ids), before.email, before.summary)
    assert _entity_hits(db, graph, tenant, "DR") == ["Dana Reyes"]


def test_the_summary_an_entity_ends_up_with_is_the_one_declared(gov, graph, db, tenant):
    """Helper-found: one episode of B's gave Dana a new summary and, in a second fact of the batch, repeated her old
    one; the entity took B's text but B was recorded as declaring the old one, so forgetting B kept B's text. And a
    summary replaced by a write with no episode kept B's declaration, so forgetting B stripped the new text."""
    from graphmem.models import FactIn
    a = episode(graph, tenant, "CRM: contact Dana Reyes", user="crm", session="crm")
    fact(graph, tenant, person("Dana Reyes", summary="Contact at Acme"), "WORKS_AT", a, obj=org("Acme"))
    b = episode(graph, tenant, "Dana is in rehab", user="ub", session="sb", minutes=1)
    graph.assert_facts(tenant, [
        FactIn(subject=person("Dana Reyes", summary="Dana is in rehab"), predicate="LOCATED_IN", value="Clinic",
               episode_id=b, valid_from=T0),
        FactIn(subject=person("Dana Reyes", summary="Contact at Acme"), predicate="HAS_TITLE", value="CFO",
               episode_id=b, valid_from=T0)])
    [dana] = graph.find_entities(tenant, "Dana Reyes")
    assert dana.summary == "Dana is in rehab"
    gov.forget(tenant, user_id="ub")
    assert graph.get_entity(tenant, dana.id).summary is None

    c = episode(graph, tenant, "Dana, personal", user="uc", session="sc", minutes=2)
    fact(graph, tenant, person("Dana Reyes", summary="C's private note"), "HAS_TITLE", c, value="CFO")
    graph.upsert_entity(tenant, person("Dana Reyes", summary="Official bio"))
    gov.forget(tenant, user_id="uc")
    assert graph.get_entity(tenant, dana.id).summary == "Official bio"


def _nickname(graph, tenant):
    """User B's chat names Dana "Dee Dee Boss" (with her work mail) and says she is CFO, creating her entity; the
    CRM's episode later sends contact "Dana Reyes" with the same mail (her entity, found by the mail: "Dana Reyes"
    becomes an alias the CRM declared) and says she works at Acme. Returns (CRM episode, B's episode, Dana's id,
    the WORKS_AT fact's id)."""
    b = episode(graph, tenant, "my boss Dee Dee Boss (dana@corp.com) is CFO", user="ub", session="sb")
    fact(graph, tenant, person("Dee Dee Boss", email="dana@corp.com"), "HAS_TITLE", b, value="CFO")
    a = episode(graph, tenant, "CRM: contact Dana Reyes", user="crm", session="crm", minutes=1)
    works = fact(graph, tenant, person("Dana Reyes", email="dana@corp.com"), "WORKS_AT", a, obj=org("Acme"))
    return a, b, graph.get_fact(tenant, works.fact_id).subject_id, works.fact_id


def test_an_entity_named_only_by_erased_episodes_takes_a_name_a_kept_one_gave(gov, graph, db, tenant):
    a, b, dana, works = _nickname(graph, tenant)
    before = graph.get_entity(tenant, dana)
    assert (before.name, before.aliases) == ("Dee Dee Boss", ["Dana Reyes"])
    assert graph.get_fact(tenant, works).statement == "Dee Dee Boss works at Acme"

    receipt = gov.forget(tenant, user_id="ub")

    assert receipt.counts["entities_renamed"] == 1 and receipt.counts["entities"] == 0
    after = graph.get_entity(tenant, dana)
    assert (after.name, after.aliases, after.email) == ("Dana Reyes", [], "dana@corp.com")
    assert graph.get_fact(tenant, works).statement == "Dana Reyes works at Acme"
    assert _search_text(db, dana) == "Dana Reyes"
    assert _entity_hits(db, graph, tenant, "Dee Dee Boss") == []
    assert "Dee Dee" not in str(_search(db, graph, tenant, "Dee Dee Boss"))
    assert [h.fact.statement for h in _search(db, graph, tenant, "Dana Reyes Acme", ["fact"])] == \
        ["Dana Reyes works at Acme"]
    assert graph.find_entities(tenant, "Dee Dee Boss") == []
    assert [e.id for e in graph.find_entities(tenant, "Dana Reyes")] == [dana]
    assert raw(db, "MATCH (n {tenant_id: $t}) WHERE any(k IN ['name', 'name_key', 'search_text', 'search_terms', "
                   "'statement'] WHERE toLower(toString(n[k])) CONTAINS 'dee dee') OR any(x IN coalesce(n.aliases, "
                   "[]) WHERE x CONTAINS 'Dee') RETURN labels(n) AS l, n.id AS id", t=tenant) == []
    assert raw(db, "MATCH (n:Alias {tenant_id: $t}) WHERE n.key CONTAINS 'dee' RETURN n.key AS k", t=tenant) == []
    # the CRM's reference still finds her, as a duplicate; the name is now the CRM's: forgetting it renames again
    again = fact(graph, tenant, person("Dana Reyes", email="dana@corp.com"), "WORKS_AT", a, obj=org("Acme"))
    assert again.action == "duplicate" and again.fact_id == works
    c = episode(graph, tenant, "Dana is in Lisbon", user="uc", session="sc", minutes=2)
    fact(graph, tenant, EntityRef(kind="Person", email="dana@corp.com"), "LOCATED_IN", c, value="Lisbon")
    assert gov.forget(tenant, episode_id=a).counts["entities_renamed"] == 1
    assert graph.get_entity(tenant, dana).name == "dana@corp.com"   # no name left: the mail C gave
    assert _entity_hits(db, graph, tenant, "Reyes") == []


def test_a_name_a_kept_episode_also_declared_stays(gov, graph, db, tenant):
    a, b, dana, works = _nickname(graph, tenant)
    c = episode(graph, tenant, "Dee Dee Boss is in Lisbon", user="uc", session="sc", minutes=2)
    fact(graph, tenant, person("Dee Dee Boss"), "LOCATED_IN", c, value="Lisbon")

    receipt = gov.forget(tenant, user_id="ub")

    assert receipt.counts["entities_renamed"] == 0
    after = graph.get_entity(tenant, dana)
    assert (after.name, after.aliases) == ("Dee Dee Boss", ["Dana Reyes"])
    assert graph.get_fact(tenant, works).statement == "Dee Dee Boss works at Acme"
    assert _entity_hits(db, graph, tenant, "Dee Dee Boss") == ["Dee Dee Boss"]


def test_a_name_written_without_an_episode_is_not_renamed(gov, graph, db, tenant):
    """Globex is written without an episode; user B's chat names it, and C's episode refers to it by id: B only
    repeated a name it did not give, so forgetting B leaves Globex its name."""
    globex = graph.upsert_entity(tenant, org("Globex"))
    b = episode(graph, tenant, "I interviewed at Globex", user="ub", session="sb")
    fact(graph, tenant, person("Bea"), "WORKS_AT", b, obj=org("Globex"))
    c = episode(graph, tenant, "Cy works at Globex", user="uc", session="sc", minutes=1)
    works = fact(graph, tenant, person("Cy"), "WORKS_AT", c, obj=EntityRef(id=globex.id)).fact_id

    assert gov.forget(tenant, user_id="ub").counts["entities_renamed"] == 0

    assert graph.get_entity(tenant, globex.id).name == "Globex"
    assert graph.get_fact(tenant, works).statement == "Cy works at Globex"


def test_a_statement_the_caller_gave_is_not_rewritten_by_a_rename(gov, graph, db, tenant):
    a, b, dana, works = _nickname(graph, tenant)
    given = fact(graph, tenant, person("Dana Reyes", email="dana@corp.com"), "LOCATED_IN", a, value="Lisbon",
                 statement="Our contact is based in Lisbon").fact_id

    gov.forget(tenant, user_id="ub")

    assert graph.get_fact(tenant, given).statement == "Our contact is based in Lisbon"
    assert graph.get_fact(tenant, works).statement == "Dana Reyes works at Acme"


def test_a_renamed_entitys_facts_are_embedded_again(embedded, db, tenant):
    graph, gov = embedded
    a, b, dana, works = _nickname(graph, tenant)
    def vector(label, id):
        return raw(db, f"MATCH (n:{label} {{id: $id}}) RETURN n.embedding AS v", id=id)[0]["v"]
    assert vector("Entity", dana) is not None and vector("Fact", works) is not None

    gov.forget(tenant, user_id="ub")

    assert vector("Entity", dana) is None and vector("Fact", works) is None
    assert graph.indexer.backfill(tenant) >= 2
    [expected] = graph.indexer.embedder.embed(["Dana Reyes works at Acme"])
    assert vector("Fact", works) == pytest.approx(list(expected), abs=1e-6)


def test_expiry_renames_nothing(gov, graph, db, tenant):
    from graphmem.governance.models import RetentionSettings
    from graphmem.timeutil import utcnow
    a, b, dana, works = _nickname(graph, tenant)
    gov.retention.update(tenant, RetentionSettings(episode_retention_days=30))

    receipt = gov.sweep(tenant, utcnow() + timedelta(days=31))

    assert receipt.tenants[tenant].counts["episodes"] == 2
    assert graph.get_entity(tenant, dana).name == "Dee Dee Boss"
    assert graph.get_fact(tenant, works).statement == "Dee Dee Boss works at Acme"


def test_a_fact_write_racing_the_erasure_of_its_episode_leaves_nothing_of_it(gov, graph, db, tenant, monkeypatch):
    """Helper-found: a write citing B's episode checked that the episode existed, then an erasure of B committed,
    then the write went on: it gave Dana B's alias "Dee" and created B's "Secret Lover" with B's private mail, with
    no record of who declared them and no fact (yet answered "created"). The write now locks its episodes first, so
    the erasure waits for it and then erases what it wrote."""
    import threading

    from graphmem.models import FactIn
    from graphmem.store import entities as entity_store
    a = episode(graph, tenant, "CRM: contact Dana Reyes", user="crm", session="crm")
    fact(graph, tenant, person("Dana Reyes"), "WORKS_AT", a, obj=org("Acme"))
    b = episode(graph, tenant, "Dana aka Dee, mail dee.private@example.com", user="ub", session="sb", minutes=1)
    go, paused, erased = threading.Event(), threading.Event(), threading.Event()
    real = entity_store.resolve

    def held_resolve(*args, **kw):   # the write, its episode checked, waits here until the erasure has started
        paused.set()
        assert go.wait(30)
        return real(*args, **kw)
    monkeypatch.setattr(entity_store, "resolve", held_resolve)
    out = {}

    def write():
        try:
            out["write"] = graph.assert_facts(tenant, [FactIn(
                subject=person("Dana Reyes", aliases=["Dee"]), predicate="KNOWS", episode_id=b, valid_from=T0,
                object=person("Secret Lover", email="lover.private@example.com"))])
        except Exception as exc:   # noqa: BLE001 - reported below
            out["write_error"] = exc

    def forget():
        out["receipt"] = gov.forget(tenant, user_id="ub")
        erased.set()
    writer = threading.Thread(target=write)
    writer.start()
    assert paused.wait(30)
    eraser = threading.Thread(target=forget)
    eraser.start()
    assert not erased.wait(1.5), "the erasure did not wait for the write citing its episode"
    go.set()
    writer.join(60)
    eraser.join(60)
    assert "write_error" not in out and out["receipt"].counts["facts"] == 1, out
    [dana] = graph.find_entities(tenant, "Dana Reyes")
    assert "Dee" not in dana.aliases and graph.find_entities(tenant, "Secret Lover") == []
    assert raw(db, "MATCH (n {tenant_id: $t}) WHERE n.email = 'lover.private@example.com' OR n.key CONTAINS 'dee' "
                   "RETURN n", t=tenant) == []


def test_a_name_a_kept_episode_gave_as_an_alias_stays(gov, graph, db, tenant):
    """Helper-found: C named Dana by her email with the alias "Dee Dee Boss", her name, which B had given; that alias
    was absorbed into the name unrecorded, so forgetting B renamed her to her email address."""
    from graphmem.models import EntityRef
    b = episode(graph, tenant, "my boss Dee Dee Boss is CFO", user="ub", session="sb")
    fact(graph, tenant, person("Dee Dee Boss", email="dee@corp.example"), "HAS_TITLE", b, value="CFO")
    c = episode(graph, tenant, "Dee Dee Boss is in Lisbon", user="uc", session="sc", minutes=1)
    f = fact(graph, tenant, EntityRef(kind="Person", email="dee@corp.example", aliases=["Dee Dee Boss"]),
             "LOCATED_IN", c, value="Lisbon")
    receipt = gov.forget(tenant, user_id="ub")
    dana = graph.get_entity(tenant, graph.get_fact(tenant, f.fact_id).subject_id)
    assert dana.name == "Dee Dee Boss" and receipt.counts["entities_renamed"] == 0, (dana.name, receipt.counts)


def test_what_was_written_without_an_episode_stays_when_an_erased_episode_repeated_it(gov, graph, db, tenant):
    """Helper-found: an email and summary written without an episode (`upsert_entity`) and repeated by B's episode
    counted as B's, so forgetting B stripped them; "stays until the entity goes" is what docs/governance.md says."""
    graph.upsert_entity(tenant, person("Dana Reyes", email="dana@corp.example", summary="Official bio"))
    a = episode(graph, tenant, "CRM: Dana Reyes works at Acme", user="crm", session="crm")
    fact(graph, tenant, person("Dana Reyes"), "WORKS_AT", a, obj=org("Acme"))
    b = episode(graph, tenant, "Dana Reyes, dana@corp.example, is CFO", user="ub", session="sb", minutes=1)
    fact(graph, tenant, person("Dana Reyes", email="dana@corp.example", summary="Official bio"), "HAS_TITLE", b,
         value="CFO")
    gov.forget(tenant, user_id="ub")
    [dana] = graph.find_entities(tenant, "Dana Reyes")
    assert (dana.email, dana.summary) == ("dana@corp.example", "Official bio")


@pytest.mark.parametrize("pause_at", ["held_values", "summarize"])
def test_a_compaction_racing_the_erasure_of_a_turn_keeps_nothing_of_it(gov, db, tenant, make_context, monkeypatch,
                                                                      pause_at):
    """Helper-found: compaction read the session's turns, then an erasure of one of them committed, then the
    compaction went on: its summary (no previous revision, so no conflict) quoted the erased turn's order id and
    amount while covering only the turns that were left, and, paused before its pin write, it proposed candidate
    pins set by the erased episode. The compaction now writes only what its turns still exist for."""
    import threading

    from graphmem.context.models import TurnEpisode, TurnIn
    ctx = make_context(compaction_keep_tokens=0)
    ids = []
    for i, text in enumerate(["Please cancel order ZX-99107, I was charged €731.45 twice.",
                              "Also my address changed last week.", "Thanks, anything else you need?",
                              "ok bye"]):
        ids += ctx.append_turn(tenant, "s-race", TurnIn(idempotency_key=f"k{i}", user_id="u-race", episodes=[
            TurnEpisode(role="user", content=text, occurred_at=T0 + timedelta(minutes=i))])).episode_ids
    go, paused = threading.Event(), threading.Event()
    target = ctx.compactor.pins if pause_at == "held_values" else ctx.compactor.summarizer
    real = getattr(target, pause_at)

    def held(*args, **kw):   # the compaction, its turns read, waits here until the erasure has committed
        paused.set()
        assert go.wait(30)
        return real(*args, **kw)
    monkeypatch.setattr(target, pause_at, held)
    out = {}
    compaction = threading.Thread(target=lambda: out.update(result=ctx.compact_now(tenant, "s-race", force=True)))
    compaction.start()
    assert paused.wait(30), out
    gov.forget(tenant, episode_id=ids[0])
    go.set()
    compaction.join(60)
    assert "result" in out
    leaks = raw(db, """MATCH (n {tenant_id: $t}) WHERE n:Summary OR n:Pin
                       WITH n, [k IN keys(n) WHERE toString(n[k]) CONTAINS 'ZX-99107' OR toString(n[k]) CONTAINS '731'
                                OR toString(n[k]) = $gone] AS hits
                       WHERE size(hits) > 0 RETURN labels(n) AS labels, hits""", t=tenant, gone=ids[0])
    assert leaks == []
