"""The demo: a small CRM story loaded into tenant "demo", then the graph's answers printed.

People change jobs, a reporting line moves, a channel preference is revoked, and an old job arrives out of
order. Re-running it is harmless: episodes are idempotent by key and repeated facts only add provenance.
"""
from __future__ import annotations

from datetime import datetime, timezone

from rich.console import Console
from rich.table import Table

from graphmem.graph import TemporalGraph
from graphmem.ingest.jobs import EXPLICIT_FACTS
from graphmem.models import EntityRef, EpisodeIn, FactIn

TENANT = "demo"
UTC = timezone.utc
DANA = EntityRef(kind="Person", name="Dana Reyes", email="dana@reyes.io")
PRIYA = EntityRef(kind="Person", name="Priya Shah", email="priya@globex.com")
MARCUS = EntityRef(kind="Person", name="Marcus Lee", email="marcus@globex.com")
SAM = EntityRef(kind="Person", name="Sam Carter")
INITECH = EntityRef(kind="Organization", name="Initech", domain="initech.com")
GLOBEX = EntityRef(kind="Organization", name="Globex", domain="globex.com")
HOOLI = EntityRef(kind="Organization", name="Hooli", domain="hooli.xyz")

# (key, when, kind, source, text, facts); a fact is (subject, predicate, object-or-value, valid_from or None)
STORY = [
    ("crm-1", "2019-03-04", "event", "system", "CRM: contact Dana Reyes created, account Initech, title Account Executive",
     [(DANA, "WORKS_AT", INITECH, None), (DANA, "HAS_TITLE", "Account Executive", None)]),
    ("mail-1", "2021-06-14", "message", "user_explicit", "Dana: I've moved to Globex as Head of Procurement.",
     [(DANA, "WORKS_AT", GLOBEX, None), (DANA, "HAS_TITLE", "Head of Procurement", None)]),
    ("mail-2", "2021-07-01", "message", "user_explicit", "Dana: email is the best way to reach me.",
     [(DANA, "PREFERS_CHANNEL", "email", None)]),
    ("crm-2", "2022-01-10", "event", "system", "CRM: Dana Reyes reports to Priya Shah (CFO, Globex)",
     [(DANA, "REPORTS_TO", PRIYA, None), (PRIYA, "WORKS_AT", GLOBEX, None), (PRIYA, "HAS_TITLE", "CFO", None)]),
    ("note-1", "2022-05-02", "text", "user_explicit", "Sam Carter knows Dana from a conference.",
     [(SAM, "KNOWS", DANA, None)]),
    ("crm-3", "2023-02-01", "event", "system", "CRM: reorg, Dana Reyes now reports to Marcus Lee",
     [(DANA, "REPORTS_TO", MARCUS, None), (MARCUS, "WORKS_AT", GLOBEX, None)]),
    ("mail-3", "2023-06-20", "message", "user_explicit", "Dana: I'd rather get calls than emails now.",
     [(DANA, "PREFERS_CHANNEL", "phone", None)]),
    ("note-2", "2023-08-30", "text", "user_explicit", "Old CV found: Dana was at Hooli from 2016 until 2019.",
     [(DANA, "WORKS_AT", HOOLI, "2016-01-01")]),
]
RETRACTION = ("mail-4", "2024-01-15", "Dana: please stop calling me, no phone calls at all.")


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def load_story(graph: TemporalGraph) -> str:
    """Load the story (idempotently) and return Dana's entity id. Every episode comes with its facts, so none is
    queued for extraction (job status `skipped`, reason "explicit facts", as for `POST /v1/facts`): a worker
    would otherwise map the plain-text CRM lines as JSON records and dead-letter them."""
    explicit = {"extraction_status": "skipped", "extraction_reason": EXPLICIT_FACTS}
    for key, day, kind, source, text, facts in STORY:
        ep, _ = graph.append_episode(TENANT, EpisodeIn(kind=kind, content=text, occurred_at=_at(day),
                                                       idempotency_key=key, source=source, session_id="crm-feed"),
                                     **explicit)
        graph.assert_facts(TENANT, [
            FactIn(subject=s, predicate=p, episode_id=ep.id, source=source,
                   valid_from=_at(vf) if vf else None,
                   **({"object": o} if isinstance(o, EntityRef) else {"value": o})) for s, p, o, vf in facts])
    dana = graph.upsert_entity(TENANT, DANA)
    key, day, text = RETRACTION
    ep, created = graph.append_episode(TENANT, EpisodeIn(content=text, occurred_at=_at(day), idempotency_key=key,
                                                         session_id="crm-feed"), **explicit)
    if created:
        graph.retract(TENANT, dana.id, "PREFERS_CHANNEL", ep.id, value="phone")
    return dana.id


def _day(d: datetime | None) -> str:
    return d.date().isoformat() if d else "now"


def run(graph: TemporalGraph, console: Console | None = None) -> dict:
    """Load the story and print current facts, Dana's employment history and a fact's provenance.

    Returns what was printed as data (used by the tests)."""
    console = console or Console()
    dana = load_story(graph)
    current = graph.facts_about(TENANT, dana)
    t = Table(title="What we know about Dana Reyes now")
    for col in ("predicate", "statement", "valid from", "source"):
        t.add_column(col)
    for f in current:
        t.add_row(f.predicate, f.statement, _day(f.valid_from), f.source)
    console.print(t)

    works = [f for f in graph.facts_about(TENANT, dana, include_superseded=True, predicates=["WORKS_AT"])
             if f.subject_id == dana]
    history = graph.fact_history(TENANT, works[-1].id)
    h = Table(title="Dana's employment history (WORKS_AT timeline)")
    for col in ("statement", "valid from", "valid to", "status"):
        h.add_column(col)
    for f in history:
        h.add_row(f.statement, _day(f.valid_from), _day(f.valid_to), f.status)
    console.print(h)

    reports = next(f for f in current if f.predicate == "REPORTS_TO")
    prov = graph.fact_provenance(TENANT, reports.id)
    p = Table(title=f"Provenance of: {reports.statement}")
    for col in ("episode", "occurred", "source", "confidence", "content"):
        p.add_column(col)
    for e in prov:
        p.add_row(e.episode_id[:8], _day(e.occurred_at), e.source, f"{e.confidence:.2f}", e.content or "")
    console.print(p)
    then = graph.facts_about(TENANT, dana, as_of=_at("2022-06-01"), predicates=["REPORTS_TO"])
    console.print("As of 2022-06-01 (valid time), Dana reported to: " +
                  ", ".join(graph.get_entity(TENANT, f.object_id).name for f in then))
    prefs = [f for f in graph.facts_about(TENANT, dana, include_superseded=True, predicates=["PREFERS_CHANNEL"])]
    console.print("Channel preferences: " + "; ".join(
        f"{f.value} {_day(f.valid_from)}..{_day(f.valid_to)} ({f.status})" for f in prefs))
    return {"current": current, "history": history, "provenance": prov, "preferences": prefs, "reported_to": then}
