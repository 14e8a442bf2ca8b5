"""A user's export streams its episodes a page at a time, each read holding at most `EXPORT_PAGE_CHARS` characters
of content; the document is the one `Memories.export` builds. Helper-found: a user of 2,800 episodes of 99k
characters was a 503 (one statement read every episode's content); here a page is 1,500 characters and an episode
700, so two episodes a read."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from graphmem.governance import memories
from graphmem.models import EpisodeIn

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


def test_an_export_streams_its_episodes_in_pages(services, client_for, tenant, monkeypatch):
    texts = [(f"Note {i}: the renewal terms for Hooli, again and again. " * 20)[:700] for i in range(7)]
    for i, text in enumerate(texts):      # stored out of order: the export lists them oldest first
        services.ingest.append_episodes(tenant, [EpisodeIn(content=text, user_id="u1", session_id=f"s{i % 2}",
                                                           occurred_at=T0 + timedelta(minutes=(i * 3) % 7))])
    services.ingest.append_episodes(tenant, [EpisodeIn(content="someone else", user_id="u2", occurred_at=T0)])
    monkeypatch.setattr(memories, "EXPORT_PAGE_CHARS", 1500)
    reads, rows = [], services.db.rows

    def counted(name, **params):
        if name == "governance/user_episodes":
            reads.append(len(params["ids"]))
        return rows(name, **params)
    monkeypatch.setattr(services.db, "rows", counted)

    r = client_for(tenant, "agent").get("/v1/memories/export", params={"user_id": "u1"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    doc = r.json()
    assert reads == [2, 2, 2, 1]
    assert [e["content"] for e in doc["episodes"]] == [texts[(i * 5) % 7] for i in range(7)]   # minute i*3 % 7
    assert sorted(s["id"] for s in doc["sessions"]) == ["s0", "s1"] and "someone else" not in r.text
    whole = services.governance.memories.export(tenant, "u1")
    assert {k: v for k, v in doc.items() if k != "exported_at"} == {k: v for k, v in whole.items() if k != "exported_at"}

    blank = client_for(tenant, "agent").get("/v1/memories/export", params={"user_id": " "})
    assert blank.status_code == 422 and blank.json()["field"] == "user_id"      # refused before the stream starts
    empty = client_for(tenant, "agent").get("/v1/memories/export", params={"user_id": "nobody"}).json()
    assert empty["episodes"] == [] and empty["facts"] == [] and json.dumps(empty)
