"""Entity disambiguation for LLM-extracted mentions, end to end through the worker, the real `openai` client and the
scripted OpenAI-compatible server: only mentions that stay ambiguous after the deterministic rules go to the LLM,
all of an episode's in one call; its answer links a mention to an existing entity or lets the resolver create one;
a failing or malformed answer falls back to the deterministic resolver with the reason on the job."""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import pytest

from pydantic import ValidationError

from graphmem.ingest.disambiguate import find_ambiguous, similarity
from graphmem.ingest.worker import Worker
from graphmem.models import EntityRef, EpisodeIn
from graphmem.settings import Settings
from tests.fake_openai import Reply, chat_completion_body, error_body
from tests.ingest_fixture import LLM_TIMEOUT_S

UTC = timezone.utc
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
PATH = "/v1/chat/completions"
TEXT = "Dana called from Globex: she now leads procurement there, and Ari Noor joined as CTO."
EXTRACTION = {
    "entities": [{"ref": "d", "kind": "Person", "name": "Dana"},
                 {"ref": "g", "kind": "Organization", "name": "Globex"},
                 {"ref": "a", "kind": "Person", "name": "Ari Noor"}],
    "facts": [{"subject": "d", "predicate": "WORKS_AT", "object": "g", "confidence": 0.9},
              {"subject": "d", "predicate": "HAS_TITLE", "value": "Head of Procurement", "confidence": 0.9},
              {"subject": "a", "predicate": "WORKS_AT", "object": "g", "confidence": 0.9},
              {"subject": "a", "predicate": "HAS_TITLE", "value": "CTO", "confidence": 0.9}],
}


def ok(content, p=100, c=20) -> Reply:
    return Reply(200, chat_completion_body(content if isinstance(content, str) else json.dumps(content),
                                           prompt_tokens=p, completion_tokens=c))


def mentions_in(req) -> list[dict] | None:
    """The mentions block of a disambiguation request (None for any other chat request)."""
    text = req.json()["messages"][0]["content"]
    m = re.search(r"<<<MENTIONS\n(.*)\nMENTIONS>>>", text, re.S)
    return json.loads(m.group(1)) if m else None


def disambiguation_requests(fake_llm):
    return [r for r in fake_llm.requests_for(PATH) if mentions_in(r) is not None]


def pick(name: str | None):
    """A responder answering every mention with its candidate called `name` (None: "new")."""
    def answer(req) -> Reply:
        choices = []
        for m in mentions_in(req):
            ids = [c["id"] for c in m["candidates"] if c["name"] == name]
            choices.append({"mention": m["mention"], "entity_id": ids[0] if ids else "new"})
        return ok({"choices": choices}, p=300, c=15)
    return answer


@pytest.fixture
def known(llm_services, tenant):
    """Existing entities: two Danas and Globex."""
    g = llm_services.graph
    return {n: g.upsert_entity(tenant, EntityRef(kind=k, name=n)) for k, n in
            [("Person", "Dana Smith"), ("Person", "Dana Lee"), ("Organization", "Globex")]}


def ingest(services, tenant, text=TEXT):
    ep, _ = services.ingest.append_episodes(tenant, [EpisodeIn(content=text, occurred_at=T0, session_id="s1",
                                                               role="user", speaker="Sam")])[0]
    Worker(services, tenants=[tenant], poll_s=0.05).run(until_idle=True)
    return services.ingest.job_status(tenant, ep.id)


def subject_of(services, tenant, predicate, value):
    """The subject entity id of the current `predicate` = `value` fact (searched over the given names)."""
    for name in ("Dana", "Dana Smith", "Dana Lee"):
        for e in services.graph.find_entities(tenant, name, "Person"):
            for f in services.graph.facts_about(tenant, e.id, predicates=[predicate]):
                if f.value == value and f.subject_id == e.id:
                    return e.id
    return None


def test_only_the_ambiguous_mention_goes_to_the_llm_and_the_answer_links_it(llm_services, fake_llm, tenant, known):
    fake_llm.script(PATH, ok(EXTRACTION, p=500, c=80), pick("Dana Lee"))
    job = ingest(llm_services, tenant)
    assert job.status == "done" and job.reason is None and job.attempts == 1

    [req] = disambiguation_requests(fake_llm)                    # exactly one disambiguation call
    assert len(fake_llm.requests_for(PATH)) == 2                 # plus the extraction
    [mention] = mentions_in(req)                                 # only "Dana": not Globex (exact), not Ari (no kin)
    assert (mention["name"], mention["kind"]) == ("Dana", "Person")
    assert sorted(c["name"] for c in mention["candidates"]) == ["Dana Lee", "Dana Smith"]
    assert {c["id"] for c in mention["candidates"]} == {known["Dana Lee"].id, known["Dana Smith"].id}
    assert TEXT in req.json()["messages"][0]["content"]

    g = llm_services.graph
    lee = known["Dana Lee"]
    facts = {f.predicate: f for f in g.facts_about(tenant, lee.id) if f.subject_id == lee.id}
    assert facts["WORKS_AT"].object_id == known["Globex"].id
    assert facts["HAS_TITLE"].value == "Head of Procurement"
    assert g.find_entities(tenant, "Dana", "Person") == []      # no new "Dana", and no alias "Dana" on Dana Lee
    assert g.facts_about(tenant, known["Dana Smith"].id) == []
    assert len(g.find_entities(tenant, "Globex")) == 1
    [ari] = g.find_entities(tenant, "Ari Noor", "Person")        # the new person was created as before
    assert {f.value for f in g.facts_about(tenant, ari.id, predicates=["HAS_TITLE"])} == {"CTO"}
    # both calls are in the job's usage, and the job says what disambiguation did
    assert (job.llm_calls, job.prompt_tokens, job.completion_tokens) == (2, 800, 95)
    assert (job.disambiguation_mentions, job.disambiguation_linked, job.disambiguation_prompt_version) == \
        (1, 1, "disambiguate_v1")
    assert abs(job.cost_usd - (800 * 0.15 + 95 * 0.60) / 1e6) < 1e-12


def test_an_episode_past_retention_after_its_extraction_is_not_sent_to_disambiguation(llm_services, fake_llm, db,
                                                                                      tenant, known):
    """The worker looks again before every LLM call that carries the episode's content: one that passed its
    retention while its extraction ran is not sent to disambiguation; the job goes back to pending for the
    sweeper and nothing of it is written."""
    ep, _ = llm_services.ingest.append_episodes(tenant, [EpisodeIn(content=TEXT, occurred_at=T0, session_id="s1",
                                                                   role="user", speaker="Sam")])[0]

    def extract_then_expire(req) -> Reply:
        with db.driver.session() as s:
            s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $t", id=ep.id, t=datetime(2020, 1, 1, tzinfo=UTC))
        return ok(EXTRACTION)
    fake_llm.script(PATH, extract_then_expire, pick("Dana Lee"))
    Worker(llm_services, tenants=[tenant], poll_s=0.05).run(until_idle=True)
    assert len(fake_llm.requests_for(PATH)) == 1 and disambiguation_requests(fake_llm) == []
    with db.driver.session() as s:
        assert s.run("MATCH (e:Episode {id: $id}) RETURN e.extraction_status AS st", id=ep.id).single()["st"] == \
            "pending"
    assert llm_services.graph.facts_about(tenant, known["Dana Lee"].id) == []


def test_an_episode_past_retention_during_disambiguation_gets_no_retry(llm_services, fake_llm, db, tenant, known):
    """Found by a helper: the worker looked at retention once before the disambiguation call, but the client's
    retries of a 429/5xx (after a Retry-After wait) and the repair call sent the content again without looking.
    Now every request looks first: the episode passed its retention during the first call, so no retry is sent, the
    job goes back to pending (not the resolver's fallback) and nothing of it is written."""
    ep, _ = llm_services.ingest.append_episodes(tenant, [EpisodeIn(content=TEXT, occurred_at=T0, session_id="s1",
                                                                   role="user", speaker="Sam")])[0]

    def expire_then_overloaded(req) -> Reply:
        with db.driver.session() as s:
            s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $t", id=ep.id, t=datetime(2020, 1, 1, tzinfo=UTC))
        return Reply(503, error_body("overloaded"), headers={"Retry-After": "0"})
    fake_llm.script(PATH, ok(EXTRACTION), expire_then_overloaded)
    fake_llm.set_default(PATH, pick("Dana Lee"))
    Worker(llm_services, tenants=[tenant], poll_s=0.05).run(until_idle=True)
    assert len(fake_llm.requests_for(PATH)) == 2 and len(disambiguation_requests(fake_llm)) == 1
    with db.driver.session() as s:
        row = s.run("MATCH (e:Episode {id: $id}) RETURN e.extraction_status AS st, e.extraction_reason AS reason",
                    id=ep.id).single()
    assert row["st"] == "pending" and "retention" in row["reason"], row
    assert llm_services.graph.facts_about(tenant, known["Dana Lee"].id) == []
    assert llm_services.graph.find_entities(tenant, "Ari Noor", "Person") == []


def test_answer_new_creates_a_new_entity(llm_services, fake_llm, tenant, known):
    fake_llm.script(PATH, ok(EXTRACTION), pick(None))
    job = ingest(llm_services, tenant)
    assert job.status == "done" and job.reason is None and job.llm_calls == 2
    assert (job.disambiguation_mentions, job.disambiguation_linked) == (1, 0)
    [dana] = llm_services.graph.find_entities(tenant, "Dana", "Person")
    assert dana.id not in {known["Dana Lee"].id, known["Dana Smith"].id}
    assert subject_of(llm_services, tenant, "HAS_TITLE", "Head of Procurement") == dana.id


def test_unknown_candidate_id_is_repaired_once(llm_services, fake_llm, tenant, known):
    bogus = ok({"choices": [{"mention": "m1", "entity_id": "0" * 32}]})
    fake_llm.script(PATH, ok(EXTRACTION), bogus, pick("Dana Smith"))
    job = ingest(llm_services, tenant)
    assert job.status == "done" and job.reason is None and job.llm_calls == 3
    repair = fake_llm.requests_for(PATH)[2].json()["messages"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert "is not a candidate of m1" in repair[2]["content"]
    assert subject_of(llm_services, tenant, "HAS_TITLE", "Head of Procurement") == known["Dana Smith"].id


def test_unknown_candidate_id_twice_falls_back_to_the_resolver(llm_services, fake_llm, tenant, known):
    bogus = ok({"choices": [{"mention": "m1", "entity_id": "0" * 32}]})
    fake_llm.script(PATH, ok(EXTRACTION), bogus, bogus)
    job = ingest(llm_services, tenant)
    assert job.status == "done" and job.attempts == 1 and job.llm_calls == 3
    assert "fell back to the deterministic resolver" in job.reason and "DisambiguationMalformed" in job.reason
    assert job.facts_asserted == 4
    assert (job.disambiguation_mentions, job.disambiguation_linked) == (1, 0)
    [dana] = llm_services.graph.find_entities(tenant, "Dana", "Person")      # the resolver made a new "Dana"
    assert subject_of(llm_services, tenant, "HAS_TITLE", "Head of Procurement") == dana.id
    assert len(fake_llm.requests_for(PATH)) == 3                               # no retry of the whole job


def test_server_errors_fall_back_and_the_job_completes(llm_services, fake_llm, tenant, known):
    fake_llm.script(PATH, ok(EXTRACTION))
    fake_llm.set_default(PATH, lambda req: Reply(500, error_body("model overloaded"), headers={"Retry-After": "0"}))
    job = ingest(llm_services, tenant)
    assert job.status == "done" and job.attempts == 1
    assert job.llm_calls == 1 + 3                                 # extraction + 1 call and 2 retries (llm_max_retries=2)
    assert len(disambiguation_requests(fake_llm)) == 3
    assert "fell back to the deterministic resolver" in job.reason and "LLMUnavailable" in job.reason
    assert "500" in job.reason
    [dana] = llm_services.graph.find_entities(tenant, "Dana", "Person")
    assert subject_of(llm_services, tenant, "HAS_TITLE", "Head of Procurement") == dana.id


def test_no_candidates_means_no_call(llm_services, fake_llm, tenant):
    g = llm_services.graph
    smith = g.upsert_entity(tenant, EntityRef(kind="Person", name="Dana Smith"))
    g.upsert_entity(tenant, EntityRef(kind="Organization", name="Dana Lee Partners"))   # near, another kind
    reply = {"entities": [{"ref": "a", "kind": "Person", "name": "Dana Lee"},          # 1 of 2 words: not near
                          {"ref": "b", "kind": "Person", "name": "Dana Smith"},        # exact: the resolver's
                          {"ref": "c", "kind": "Person", "name": "Dana", "email": "dana@example.com"},  # strong id
                          {"ref": "o", "kind": "Organization", "name": "Initech"}],
             "facts": [{"subject": s, "predicate": "WORKS_AT", "object": "o", "confidence": 0.9} for s in "abc"]}
    fake_llm.script(PATH, ok(reply))
    job = ingest(llm_services, tenant, "Dana Lee, Dana Smith and dana@example.com all work at Initech.")
    assert job.status == "done" and job.reason is None
    assert job.llm_calls == 1 and len(fake_llm.requests_for(PATH)) == 1
    assert (job.disambiguation_mentions, job.disambiguation_linked, job.disambiguation_prompt_version) == (0, 0, None)
    assert [f.predicate for f in g.facts_about(tenant, smith.id)] == ["WORKS_AT"]
    assert len(g.find_entities(tenant, "Dana Lee", "Person")) == 1


def test_near_names_are_found_in_the_index_within_the_tenant_only(llm_services, db, tenant):
    g = llm_services.graph
    acme = g.upsert_entity(tenant, EntityRef(kind="Organization", name="ACME Corporation"))
    g.upsert_entity(tenant, EntityRef(kind="Organization", name="Initech"))
    g.upsert_entity(tenant + "-other", EntityRef(kind="Organization", name="Acme Corp Europe"))
    refs = [EntityRef(kind="Organization", name="Acme Corp"), EntityRef(kind="Organization", name="Initech"),
            EntityRef(kind="Organization", name="Umbrella")]
    found = db.read(lambda tx: find_ambiguous(tx, tenant, refs, min_similarity=0.75, max_candidates=5))
    assert [(m.key, m.ref.name, [c.id for c in m.candidates]) for m in found] == [("m1", "Acme Corp", [acme.id])]


@pytest.mark.parametrize("mention", ["L. O'Sullivan", "L. O\u2019Sullivan", "Liam O'Sullivan-Byrne"])
def test_a_near_name_with_an_apostrophe_is_a_candidate(llm_services, db, tenant, mention):
    """The index holds "o'sullivan" whole: the query must ask for that term, not the name key's "osullivan"."""
    liam = llm_services.graph.upsert_entity(tenant, EntityRef(kind="Person", name="Liam O'Sullivan"))
    llm_services.graph.upsert_entity(tenant, EntityRef(kind="Person", name="Lara Byrne"))
    refs = [EntityRef(kind="Person", name=mention)]
    found = db.read(lambda tx: find_ambiguous(tx, tenant, refs, min_similarity=0.75, max_candidates=5))
    assert [[c.id for c in m.candidates] for m in found] == [[liam.id]], found


@pytest.mark.parametrize("stored,mention", [("Liam OSullivan", "L. O'Sullivan"), ("Jürgen Strasse", "J. Straße"),
                                            ("José Müller", "J. Muller"), ("Jose Muller", "J. Müller")])
def test_a_near_name_spelt_like_its_name_key_is_a_candidate(llm_services, db, tenant, stored, mention):
    """A stored name without the apostrophe ("OSullivan", as systems that drop punctuation write it) or in the
    case-folded spelling is the mention's name key: similarity 1.0, and the query asks for those terms as well as
    the index's split of the mention ("o'sullivan" alone found the stored "O'Sullivan" but no longer "OSullivan")."""
    liam = llm_services.graph.upsert_entity(tenant, EntityRef(kind="Person", name=stored))
    llm_services.graph.upsert_entity(tenant, EntityRef(kind="Person", name="Lara Byrne"))
    refs = [EntityRef(kind="Person", name=mention)]
    found = db.read(lambda tx: find_ambiguous(tx, tenant, refs, min_similarity=0.75, max_candidates=5))
    assert [[c.id for c in m.candidates] for m in found] == [[liam.id]], found


@pytest.mark.parametrize("a,b,near", [
    ("Dana", "Dana Smith", True), ("Acme Corp", "ACME Corporation", True), ("J. Smith", "John Smith", True),
    ("Dana Smith", "Dana Lee", False), ("Globex", "Initech", False), ("Jo", "John", False),
    ("Jose Muller", "José Müller", True), ("Ｄａｎａ", "Dana Reyes", True),
])
def test_similarity_threshold(a, b, near):
    assert (similarity(a, b) >= Settings().disambiguation_min_similarity) is near


# ---- settings: disambiguation_prompt, disambiguation_min_similarity, disambiguation_max_candidates --------------
def test_disambiguation_settings_come_from_the_environment(monkeypatch):
    defaults = Settings()
    assert (defaults.disambiguation_prompt, defaults.disambiguation_min_similarity,
            defaults.disambiguation_max_candidates) == ("disambiguate_v1", 0.75, 5)
    monkeypatch.setenv("GRAPHMEM_DISAMBIGUATION_MIN_SIMILARITY", "0.5")
    monkeypatch.setenv("GRAPHMEM_DISAMBIGUATION_MAX_CANDIDATES", "2")
    monkeypatch.setenv("GRAPHMEM_DISAMBIGUATION_PROMPT", "disambiguate_v1")
    s = Settings()
    assert (s.disambiguation_prompt, s.disambiguation_min_similarity, s.disambiguation_max_candidates) == \
        ("disambiguate_v1", 0.5, 2)


@pytest.mark.parametrize("field,value,message", [
    ("disambiguation_min_similarity", 1.5, "less than or equal to 1"),
    ("disambiguation_min_similarity", -0.1, "greater than or equal to 0"),
    ("disambiguation_max_candidates", 0, "greater than or equal to 1"),
    ("disambiguation_max_candidates", 21, "less than or equal to 20"),
    ("disambiguation_prompt", "disambiguate_v9", "no prompt file disambiguate_v9.md"),
    ("disambiguation_prompt", "../extract_v1", "should match pattern"),
])
def test_bad_disambiguation_settings_are_refused_naming_the_setting(field, value, message):
    with pytest.raises(ValidationError) as err:
        Settings(**{field: value})
    assert err.value.errors()[0]["loc"] == (field,) and message in str(err.value)


def test_max_candidates_caps_what_the_llm_sees(make_services, fake_llm, tenant, known):
    s = make_services(llm_base_url=fake_llm.base_url, llm_api_key="test", llm_timeout_s=LLM_TIMEOUT_S,
                      llm_max_retries=2, disambiguation_max_candidates=1)
    fake_llm.script(PATH, ok(EXTRACTION), pick("Dana Lee"))
    job = ingest(s, tenant)
    [mention] = mentions_in(disambiguation_requests(fake_llm)[0])
    assert [c["name"] for c in mention["candidates"]] == ["Dana Lee"]      # equally similar: by name
    assert (job.disambiguation_mentions, job.disambiguation_linked) == (1, 1)
    assert subject_of(s, tenant, "HAS_TITLE", "Head of Procurement") == known["Dana Lee"].id


def test_a_lower_min_similarity_makes_more_mentions_ambiguous(make_services, fake_llm, tenant):
    g = make_services().graph
    smith = g.upsert_entity(tenant, EntityRef(kind="Person", name="Dana Smith"))

    def works_at_initech(name: str) -> dict:
        return {"entities": [{"ref": "a", "kind": "Person", "name": name},
                             {"ref": "o", "kind": "Organization", "name": "Initech"}],
                "facts": [{"subject": "a", "predicate": "WORKS_AT", "object": "o", "confidence": 0.9}]}
    strict = make_services(llm_base_url=fake_llm.base_url, llm_api_key="test", llm_max_retries=2)
    fake_llm.script(PATH, ok(works_at_initech("Dana Lee")))
    job = ingest(strict, tenant, "Dana Lee works at Initech.")
    assert (job.disambiguation_mentions, job.llm_calls) == (0, 1)          # 0.5 < 0.75: not near, no call

    loose = make_services(llm_base_url=fake_llm.base_url, llm_api_key="test", llm_max_retries=2,
                          disambiguation_min_similarity=0.5)
    fake_llm.script(PATH, ok(works_at_initech("Dana Kim")), pick(None))
    job = ingest(loose, tenant, "Dana Kim works at Initech.")
    [mention] = mentions_in(disambiguation_requests(fake_llm)[0])
    [lee] = g.find_entities(tenant, "Dana Lee", "Person")
    assert mention["name"] == "Dana Kim" and [c["id"] for c in mention["candidates"]] == [lee.id, smith.id]
    assert (job.disambiguation_mentions, job.disambiguation_linked, job.llm_calls) == (1, 0, 2)
