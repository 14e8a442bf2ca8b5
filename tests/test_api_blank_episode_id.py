"""A fact write's `episode_id` names the episode the write came from; a blank one is a 422 naming it. Helper-found:
`"episode_id": ""` on `POST /v1/facts`, a correction or a retraction read as "no episode given", so the call was
recorded as an event episode of its own and the facts cited it instead of the episode the caller meant, without a
word; `"   "` answered a 404 "no episode '   '"."""
from __future__ import annotations

FACT = {"subject": {"kind": "Person", "name": "Blank Cite"}, "predicate": "HAS_TITLE", "value": "CTO"}


def test_a_blank_episode_id_is_a_422_naming_it_and_writes_nothing(client_for, tenant):
    c = client_for(tenant)
    for blank in ("", "   ", "\u200b"):
        r = c.post("/v1/facts", json={"facts": [{**FACT, "episode_id": blank}]})
        assert r.status_code == 422 and r.json()["field"] == "facts[0].episode_id", (blank, r.text)
    assert c.get("/v1/entities", params={"name": "Blank Cite"}).json()["items"] == []   # nothing written
    fid = c.post("/v1/facts", json={"facts": [FACT]}).json()["outcomes"][0]["fact_id"]
    subject = c.get(f"/v1/facts/{fid}").json()["subject_id"]
    for blank in ("", "  "):
        r = c.post(f"/v1/facts/{fid}/correct", json={"value": "CEO", "episode_id": blank})
        assert r.status_code == 422 and r.json()["field"] == "episode_id", (blank, r.text)
        r = c.post("/v1/facts/retract", json={"subject_id": subject, "predicate": "HAS_TITLE", "episode_id": blank})
        assert r.status_code == 422 and r.json()["field"] == "episode_id", (blank, r.text)
    fact = c.get(f"/v1/facts/{fid}").json()
    assert fact["status"] == "current" and fact["value"] == "CTO"                      # neither corrected nor retracted
    assert len(c.get(f"/v1/facts/{fid}/provenance").json()["items"]) == 1
