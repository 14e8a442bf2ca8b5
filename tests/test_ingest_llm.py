"""The LLM extractor through the real `openai` client against the scripted OpenAI-compatible server, end to end:
episode appended -> worker -> facts in Neo4j. Covers 429 + Retry-After, 500, timeouts, malformed output with one
repair, schema echoes, dead-lettering, usage and cost accounting, and the no-LLM path."""
from __future__ import annotations

import json
import time
from datetime import datetime, timezone

import pytest

from graphmem.ingest.extract_llm import Extraction, resolve_time
from graphmem.ingest.worker import Worker
from graphmem.metrics import LLM_TOKENS
from graphmem.models import EpisodeIn
from tests.fake_openai import Reply, chat_completion_body, error_body
from tests.ingest_fixture import LLM_TIMEOUT_S

UTC = timezone.utc
WED = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)   # a Wednesday; "last Tuesday" is 2024-04-30
PATH = "/v1/chat/completions"

GOOD = {
    "entities": [{"ref": "e1", "kind": "Person", "name": "Dana Reyes", "email": "dana@reyes.io"},
                 {"ref": "e2", "kind": "Organization", "name": "Globex", "domain": "globex.com"}],
    "facts": [
        {"subject": "e1", "predicate": "WORKS_AT", "object": "e2", "valid_from": "last Tuesday", "confidence": 0.95},
        {"subject": "e1", "predicate": "HAS_TITLE", "value": "Head of Procurement", "valid_from": "2024-04-30",
         "confidence": 0.9},
        {"subject": "e1", "predicate": "PREFERS_CHANNEL", "value": "carrier pigeon", "confidence": 0.3},
        {"subject": "e1", "predicate": "LIKES_GOLF", "value": "yes", "confidence": 0.9},
    ],
}


def ok(content, **kw) -> Reply:
    return Reply(200, chat_completion_body(content if isinstance(content, str) else json.dumps(content),
                                           prompt_tokens=kw.get("p", 120), completion_tokens=kw.get("c", 40)))


def append(services, tenant, text="I moved to Globex last Tuesday as Head of Procurement.", key="k1"):
    ep, created = services.ingest.append_episodes(tenant, [EpisodeIn(
        content=text, occurred_at=WED, session_id="s1", user_id="u1", role="user", speaker="Dana Reyes",
        idempotency_key=key)])[0]
    assert created and ep.extraction_status == "pending"
    return ep


def run(services, tenant, until=None, timeout=30):
    w = Worker(services, tenants=[tenant], poll_s=0.05)
    deadline = time.monotonic() + timeout
    while True:
        w.run(until_idle=True)
        if until is None or until() or time.monotonic() > deadline:
            return w
        time.sleep(0.05)


def extract_one(services, fake_llm, tenant, reply: dict):
    """One episode extracted by a worker with the LLM answering `reply`; returns (episode, its job)."""
    fake_llm.script(PATH, ok(reply))
    ep = append(services, tenant)
    run(services, tenant)
    return ep, services.ingest.job_status(tenant, ep.id)


def current(services, tenant, name="Dana Reyes"):
    ents = services.graph.find_entities(tenant, name, "Person")
    assert len(ents) == 1
    return {f.predicate: f for f in services.graph.facts_about(tenant, ents[0].id)}


def test_relative_dates_resolve_against_occurred_at():
    assert resolve_time("last Tuesday", WED) == datetime(2024, 4, 30, tzinfo=UTC)
    assert resolve_time("since March", WED) == datetime(2024, 3, 1, tzinfo=UTC)
    assert resolve_time("2023-06-02", WED) == datetime(2023, 6, 2, tzinfo=UTC)
    assert resolve_time("2023-06-02T10:00:00+02:00", WED) == datetime(2023, 6, 2, 8, tzinfo=UTC)
    assert resolve_time(None, WED) is None
    for beyond in ("9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+05:00"):   # outside years 1-9999 in UTC
        with pytest.raises(ValueError):
            resolve_time(beyond, WED)


def test_a_year_alone_is_its_first_day():
    """ISO 8601's reduced precision "2023" (also a JSON number, or "since 2021") is the year's start, not the
    reference time's month in that year (it read as 2023-05-01 against an episode of May 2024)."""
    assert resolve_time("2023", WED) == datetime(2023, 1, 1, tzinfo=UTC)
    assert resolve_time("since 2021", WED) == datetime(2021, 1, 1, tzinfo=UTC)
    assert resolve_time("in 2022", WED) == datetime(2022, 1, 1, tzinfo=UTC)
    fact = Extraction.model_validate({"entities": [{"ref": "e1", "kind": "Person", "name": "Dana Reyes"}],
                                      "facts": [{"subject": "e1", "predicate": "HAS_TITLE", "value": "CTO",
                                                 "valid_from": 2019}]}).facts[0]
    assert resolve_time(fact.valid_from, WED) == datetime(2019, 1, 1, tzinfo=UTC)
    assert resolve_time("2023-06", WED) == datetime(2023, 6, 1, tzinfo=UTC)
    assert resolve_time("since March", WED) == datetime(2024, 3, 1, tzinfo=UTC)


@pytest.mark.parametrize("text, start", [
    ("Q1 2023", (2023, 1, 1)), ("Q2 2023", (2023, 4, 1)), ("Q3 2023", (2023, 7, 1)), ("q4 2023", (2023, 10, 1)),
    ("2023 Q3", (2023, 7, 1)), ("3Q 2023", (2023, 7, 1)), ("Q3-2023", (2023, 7, 1)), ("since Q3 2023", (2023, 7, 1)),
    ("in Q2 2021", (2021, 4, 1)), ("H1 2022", (2022, 1, 1)), ("H2 2022", (2022, 7, 1)), ("2022 H2", (2022, 7, 1)),
    ("early 2021", (2021, 1, 1)), ("mid-2022", (2022, 7, 1)), ("mid 2022", (2022, 7, 1)),
    ("late 2020", (2020, 10, 1)), ("since late 2020", (2020, 10, 1)), ("in early 2019", (2019, 1, 1))])
def test_a_quarter_half_or_part_of_a_year_is_its_start(text, start):
    """A quarter, half or early/mid/late part of a year reads as the first day of the period it names, whatever the
    reference time: "Q3 2023" read as the reference time's month plus some in 2023 (2023-08-01 against an episode
    of May 2024, 2023-09-01 against one of September), "H2 2022" as 2022-02-01, "mid-2022" not at all."""
    for reference in (WED, datetime(2025, 9, 30, tzinfo=UTC), datetime(2024, 1, 3, tzinfo=UTC)):
        assert resolve_time(text, reference) == datetime(*start, tzinfo=UTC), (text, reference)


@pytest.mark.parametrize("text", ["Q5 2023", "Q0 2023", "mid-ish 2022", "sometime", "H3 2022", "X3 2022",
                                  "B2 2022", "since 5Q 2021"])
def test_an_unreadable_period_is_still_unreadable(text):
    with pytest.raises(ValueError):
        resolve_time(text, WED)


def test_extracted_quarters_and_parts_of_years_are_stored_from_their_start(llm_services, fake_llm, tenant):
    """End to end: the LLM's "Q3 2023" and "mid-2022" become the facts' starts (2023-07-01, 2022-07-01); an
    unreadable date is still refused alone as `invalid_date`, on the field that holds it."""
    reply = {"entities": [*GOOD["entities"], {"ref": "e3", "kind": "Person", "name": "Sam Ortiz"}],
             "facts": [{"subject": "e1", "predicate": "WORKS_AT", "object": "e2", "valid_from": "Q3 2023",
                        "confidence": 0.9},
                       {"subject": "e1", "predicate": "HAS_TITLE", "value": "Buyer", "valid_from": "mid-2022",
                        "valid_to": "late 2023", "confidence": 0.9},
                       {"subject": "e1", "predicate": "REPORTS_TO", "object": "e3", "valid_from": "mid-ish 2022",
                        "confidence": 0.9},
                       {"subject": "e3", "predicate": "WORKS_AT", "object": "e2", "valid_from": "2023-01-01",
                        "valid_to": "Q5 2023", "confidence": 0.9}]}
    ep, job = extract_one(llm_services, fake_llm, tenant, reply)
    assert job.status == "done" and (job.facts_asserted, job.facts_refused) == (2, 2), job
    [dana] = llm_services.graph.find_entities(tenant, "Dana Reyes", "Person")
    facts = {f.predicate: f for f in llm_services.graph.facts_about(tenant, dana.id, as_of=datetime(2023, 8, 1,
                                                                                                    tzinfo=UTC))}
    assert facts["WORKS_AT"].valid_from == datetime(2023, 7, 1, tzinfo=UTC), facts["WORKS_AT"]
    assert (facts["HAS_TITLE"].valid_from, facts["HAS_TITLE"].valid_to) == (
        datetime(2022, 7, 1, tzinfo=UTC), datetime(2023, 10, 1, tzinfo=UTC)), facts["HAS_TITLE"]
    refused = sorted((r.reason, r.field) for r in llm_services.ingest.list_refusals(tenant) if r.episode_id == ep.id)
    assert refused == [("invalid_date", "extraction.facts[2].valid_from"),
                       ("invalid_date", "extraction.facts[3].valid_to")], refused


def test_extraction_end_to_end_with_policy_and_usage(llm_services, fake_llm, tenant):
    fake_llm.script(PATH, ok(GOOD))
    ep = append(llm_services, tenant)
    before = LLM_TOKENS.labels(tenant, "prompt")._value.get()
    run(llm_services, tenant)

    job = llm_services.ingest.job_status(tenant, ep.id)
    assert job.status == "done" and job.attempts == 1 and job.extractor == "llm"
    assert job.prompt_version == "extract_v2"
    assert (job.llm_calls, job.prompt_tokens, job.completion_tokens) == (1, 120, 40)
    assert abs(job.cost_usd - (120 * 0.15 + 40 * 0.60) / 1e6) < 1e-12
    assert job.facts_asserted == 2 and job.facts_refused == 2
    assert LLM_TOKENS.labels(tenant, "prompt")._value.get() - before == 120
    assert llm_services.ingest.llm_usage(tenant)["llm_calls"] == 1

    facts = current(llm_services, tenant)
    assert set(facts) == {"WORKS_AT", "HAS_TITLE"}
    assert facts["WORKS_AT"].valid_from == datetime(2024, 4, 30, tzinfo=UTC)
    assert facts["WORKS_AT"].source == "inferred" and facts["WORKS_AT"].confidence == 0.95
    assert facts["HAS_TITLE"].value == "Head of Procurement"
    reasons = {r.reason for r in llm_services.ingest.list_refusals(tenant)}
    assert reasons == {"low_confidence", "unknown_predicate"}

    prompt = fake_llm.requests_for(PATH)[0].json()["messages"][0]["content"]
    assert "2024-05-01T09:00:00Z" in prompt and "WORKS_AT: Person -> Organization (single)" in prompt
    assert "I moved to Globex" in prompt


def test_an_oversized_or_letterless_name_is_refused_alone_not_the_job(llm_services, fake_llm, tenant):
    """An entity whose name is over the limit, or has no letter or digit, or a fact naming its subject as its own
    object, costs its own facts (refused, recorded as oversized / invalid_name / self_reference), not the
    episode's other facts."""
    long = {**GOOD, "entities": [*GOOD["entities"], {"ref": "e3", "kind": "Person", "name": "N" * 301},
                                 {"ref": "e4", "kind": "Person", "name": "???"}],
            "facts": [GOOD["facts"][1], {"subject": "e3", "predicate": "HAS_TITLE", "value": "CFO", "confidence": 0.9},
                      {"subject": "e4", "predicate": "HAS_TITLE", "value": "CTO", "confidence": 0.9},
                      {"subject": "e1", "predicate": "KNOWS", "object": "e1", "confidence": 0.9}]}
    _, job = extract_one(llm_services, fake_llm, tenant, long)
    assert job.status == "done" and (job.facts_asserted, job.facts_refused) == (1, 3), job
    assert current(llm_services, tenant)["HAS_TITLE"].value == "Head of Procurement"
    refused = [(r.reason, r.field) for r in llm_services.ingest.list_refusals(tenant)]
    assert ("oversized", "extraction.facts[1].subject.name") in refused, refused
    assert ("invalid_name", "extraction.facts[2].subject.name") in refused, refused
    assert ("self_reference", "extraction.facts[3].object") in refused, refused


def test_a_bidi_control_in_an_extracted_name_or_alias_refuses_its_facts(llm_services, fake_llm, tenant):
    """An extracted entity whose name or alias holds a bidirectional control ("Alice\\u202eecilA" displays
    reversed) costs its facts, refused as invalid_name naming the name or the alias; the alias is not dropped
    silently and the episode's other facts are stored."""
    reply = {**GOOD, "entities": [*GOOD["entities"], {"ref": "e3", "kind": "Person", "name": "Alice\u202eecilA"},
                                  {"ref": "e4", "kind": "Person", "name": "Bob Hart", "aliases": ["B\u2067ob"]}],
             "facts": [GOOD["facts"][1], {"subject": "e3", "predicate": "HAS_TITLE", "value": "CFO", "confidence": 0.9},
                       {"subject": "e4", "predicate": "HAS_TITLE", "value": "CTO", "confidence": 0.9}]}
    _, job = extract_one(llm_services, fake_llm, tenant, reply)
    assert job.status == "done" and (job.facts_asserted, job.facts_refused) == (1, 2), job
    refused = {r.field: (r.reason, r.detail) for r in llm_services.ingest.list_refusals(tenant)}
    assert refused["extraction.facts[1].subject.name"][0] == "invalid_name", refused
    assert refused["extraction.facts[2].subject.aliases[0]"][0] == "invalid_name", refused
    assert all("bidirectional" in d for _, d in refused.values()), refused
    assert llm_services.graph.find_entities(tenant, "Bob Hart", "Person") == []


def test_an_entity_kind_in_another_case_is_the_ontology_kind(llm_services, fake_llm, tenant):
    """A kind the LLM writes in another case than the ontology's ("person", "ORGANIZATION") is that kind, as a
    predicate in lower case is that predicate: its facts are stored (they were refused as "needs a valid subject",
    which the subject was). A kind that is no word at all is still refused, naming the kind."""
    reply = {"entities": [{"ref": "e1", "kind": "person", "name": "Dana Reyes"},
                          {"ref": "e2", "kind": "ORGANIZATION", "name": "Globex"},
                          {"ref": "e3", "kind": "job title", "name": "Buyer"}],
             "facts": [{"subject": "e1", "predicate": "works_at", "object": "e2", "confidence": 0.95},
                       {"subject": "e1", "predicate": "HAS_TITLE", "value": "Buyer", "confidence": 0.9},
                       {"subject": "e3", "predicate": "HAS_TITLE", "value": "Buyer", "confidence": 0.9}]}
    _, job = extract_one(llm_services, fake_llm, tenant, reply)
    assert job.status == "done" and (job.facts_asserted, job.facts_refused) == (2, 1), job
    facts = current(llm_services, tenant)
    assert facts["HAS_TITLE"].value == "Buyer"
    [globex] = llm_services.graph.find_entities(tenant, "Globex")
    assert globex.kind == "Organization" and facts["WORKS_AT"].object_id == globex.id
    [refusal] = llm_services.ingest.list_refusals(tenant)
    assert (refusal.reason, refusal.field) == ("invalid_fact", "extraction.facts[2].subject"), refusal
    assert "kind" in refusal.detail, refusal.detail


def test_a_fact_the_temporal_rules_reject_is_a_refusal_not_an_assertion(llm_services, fake_llm, tenant):
    """Chat says "Intern" where the user stated "Manager": the inferred fact may not supersede the stated one. The
    job counted it as asserted and nothing said why it was not stored; it is a `temporal_rule` refusal now."""
    from graphmem.models import EntityRef, FactIn
    stated, _ = llm_services.graph.append_episode(tenant, EpisodeIn(content="Dana is a Manager", occurred_at=WED,
                                                                    source="user_explicit"),
                                                  extraction_status="skipped", extraction_reason="explicit facts")
    llm_services.graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Dana Reyes"),
                                                    predicate="HAS_TITLE", value="Manager", source="user_explicit",
                                                    valid_from=WED.replace(year=2023), episode_id=stated.id)])
    intern = {**GOOD, "facts": [GOOD["facts"][3], GOOD["facts"][0],
                                {"subject": "e1", "predicate": "HAS_TITLE", "value": "Intern",
                                 "valid_from": "2024-04-30", "confidence": 0.9}]}
    ep, job = extract_one(llm_services, fake_llm, tenant, intern)
    assert job.status == "done" and (job.facts_asserted, job.facts_refused) == (1, 2), job
    assert current(llm_services, tenant)["HAS_TITLE"].value == "Manager"
    refused = {r.reason: r for r in llm_services.ingest.list_refusals(tenant) if r.episode_id == ep.id}
    assert refused["unknown_predicate"].field == "extraction.facts[0].predicate"
    # named by its place in the LLM's reply (it said facts[1], counting only the facts the extractor kept)
    assert (refused["temporal_rule"].field, refused["temporal_rule"].predicate) == ("extraction.facts[2]",
                                                                                    "HAS_TITLE")
    assert "user_explicit" in refused["temporal_rule"].detail


def test_a_reference_resolution_refuses_costs_its_fact_only(llm_services, fake_llm, tenant):
    """The LLM gives an Organization Dana's email: resolution never merges across kinds, and it used to fail the
    whole job (the title was lost with it). Now that fact alone is an `invalid_reference` refusal."""
    from graphmem.models import EntityRef, FactIn
    told, _ = llm_services.graph.append_episode(tenant, EpisodeIn(content="Dana's card", occurred_at=WED),
                                                extraction_status="skipped", extraction_reason="explicit facts")
    llm_services.graph.assert_facts(tenant, [FactIn(
        subject=EntityRef(kind="Person", name="Dana Reyes", email="dana@reyes.io"), predicate="HAS_PHONE",
        value="+1 555 0100", episode_id=told.id)])
    reply = {"entities": [GOOD["entities"][0], {"ref": "e3", "kind": "Organization", "name": "Reyes Consulting",
                                                "email": "dana@reyes.io"}],
             "facts": [{"subject": "e1", "predicate": "WORKS_AT", "object": "e3", "confidence": 0.9},
                       GOOD["facts"][1]]}
    ep, job = extract_one(llm_services, fake_llm, tenant, reply)
    assert job.status == "done" and (job.facts_asserted, job.facts_refused) == (1, 1), job
    assert set(current(llm_services, tenant)) == {"HAS_PHONE", "HAS_TITLE"}
    [refused] = [r for r in llm_services.ingest.list_refusals(tenant) if r.episode_id == ep.id]
    assert (refused.reason, refused.field, refused.predicate) == (
        "invalid_reference", "extraction.facts[0].object.kind", "WORKS_AT"), refused
    assert "dana@" not in refused.detail
    assert llm_services.graph.find_entities(tenant, "Reyes Consulting", "Organization") == []


def dana_at_acme(services, tenant, source: str):
    """An episode "Dana joined Acme" and the fact it gave, Dana Reyes WORKS_AT Acme since 2023-01-01 from `source`:
    (episode, its assert outcome)."""
    from graphmem.models import EntityRef, FactIn
    told, _ = services.graph.append_episode(tenant, EpisodeIn(content="Dana joined Acme", occurred_at=WED),
                                            extraction_status="skipped", extraction_reason="explicit facts")
    [works] = services.graph.assert_facts(tenant, [FactIn(
        subject=EntityRef(kind="Person", name="Dana Reyes"), predicate="WORKS_AT", source=source,
        object=EntityRef(kind="Organization", name="Acme"), valid_from=datetime(2023, 1, 1, tzinfo=UTC),
        episode_id=told.id)])
    return told, works


def test_an_extracted_end_without_a_start_ends_the_stored_fact_or_is_refused(llm_services, fake_llm, tenant):
    """"Dana left Acme in March 2024": the LLM gives WORKS_AT Acme a valid_to and no valid_from. That was refused
    as an invalid date (March is before the episode), and extraction had no way to say a fact stopped being true. It
    now ends the stored fact of that subject, predicate and object valid then (retracted at March 1, the episode its
    provenance as a retraction); an end with no such fact (Dana's title was never stored; Zed is unknown) is refused
    alone as `no_current_fact`, and creates nothing (no Zed, no Initech)."""
    told, works = dana_at_acme(llm_services, tenant, "inferred")
    reply = {"entities": [GOOD["entities"][0], {"ref": "e2", "kind": "Organization", "name": "Acme"},
                          {"ref": "e3", "kind": "Person", "name": "Zed Unknown"},
                          {"ref": "e4", "kind": "Organization", "name": "Initech"}],
             "facts": [{"subject": "e1", "predicate": "WORKS_AT", "object": "e2", "valid_from": None,
                        "valid_to": "March 2024", "confidence": 0.9},
                       {"subject": "e1", "predicate": "HAS_TITLE", "value": "CFO", "valid_to": "2024-03-01",
                        "confidence": 0.9},
                       {"subject": "e3", "predicate": "WORKS_AT", "object": "e4", "valid_to": "2024-03-01",
                        "confidence": 0.9}]}
    ep, job = extract_one(llm_services, fake_llm, tenant, reply)
    assert job.status == "done" and (job.facts_asserted, job.facts_refused, job.facts_retracted) == (0, 2, 1), job
    fact = llm_services.graph.get_fact(tenant, works.fact_id)
    assert (fact.status, fact.valid_to) == ("retracted", datetime(2024, 3, 1, tzinfo=UTC)), fact
    assert {(p.episode_id, p.role) for p in llm_services.graph.fact_provenance(tenant, works.fact_id)} == {
        (told.id, "assertion"), (ep.id, "retraction")}
    refused = sorted((r.reason, r.field, r.predicate) for r in llm_services.ingest.list_refusals(tenant)
                     if r.episode_id == ep.id)
    assert refused == [("no_current_fact", "extraction.facts[1]", "HAS_TITLE"),
                       ("no_current_fact", "extraction.facts[2]", "WORKS_AT")], refused
    assert "2024-03-01" in llm_services.ingest.list_refusals(tenant)[0].detail
    assert llm_services.graph.find_entities(tenant, "Zed Unknown") == []
    assert llm_services.graph.find_entities(tenant, "Initech") == []


@pytest.mark.parametrize("predicate, subject, obj, other", [
    ("WORKS_AT", ("Person", "Dana Reyes"), ("Organization", "Acme"), ("Organization", "Acme")),
    # KNOWS is symmetric: the user's "Frank knows Dana" is stored with Frank as subject, and the extracted "Dana no
    # longer knows Frank" names the pair the other way round (the check read only facts with Dana as subject, and
    # the retraction then closed the user's fact through the symmetric pair)
    ("KNOWS", ("Person", "Frank Ocean"), ("Person", "Dana Reyes"), ("Person", "Frank Ocean"))])
def test_an_inferred_end_does_not_end_what_a_user_stated(llm_services, fake_llm, tenant, predicate, subject, obj,
                                                         other):
    """Explicit beats inferred (DESIGN.md, "Temporal rules"), for ends too: the user stated the fact; an extracted
    end of it ("Dana left Acme in March 2024") is refused as `temporal_rule`, and the user's fact stays current."""
    from graphmem.models import EntityRef, FactIn
    told, _ = llm_services.graph.append_episode(tenant, EpisodeIn(content="what the user said", occurred_at=WED),
                                                extraction_status="skipped", extraction_reason="explicit facts")
    [stated] = llm_services.graph.assert_facts(tenant, [FactIn(
        subject=EntityRef(kind=subject[0], name=subject[1]), predicate=predicate, source="user_explicit",
        object=EntityRef(kind=obj[0], name=obj[1]), valid_from=datetime(2023, 1, 1, tzinfo=UTC), episode_id=told.id)])
    reply = {"entities": [GOOD["entities"][0], {"ref": "e2", "kind": other[0], "name": other[1]}],
             "facts": [{"subject": "e1", "predicate": predicate, "object": "e2", "valid_from": None,
                        "valid_to": "March 2024", "confidence": 0.9}]}
    ep, job = extract_one(llm_services, fake_llm, tenant, reply)
    assert job.status == "done" and (job.facts_asserted, job.facts_refused) == (0, 1), job
    assert not job.facts_retracted, job
    fact = llm_services.graph.get_fact(tenant, stated.fact_id)
    assert (fact.status, fact.valid_to) == ("current", None), fact
    [refused] = [r for r in llm_services.ingest.list_refusals(tenant) if r.episode_id == ep.id]
    assert (refused.reason, refused.field, refused.predicate) == ("temporal_rule", "extraction.facts[0]", predicate)
    assert "user_explicit" in refused.detail, refused


def test_a_restatement_committed_while_an_end_is_applied_is_not_ended(llm_services, fake_llm, tenant, monkeypatch):
    """Found by a helper: `_end` checked that the fact it ends was not stated by a user or a system before
    `retract` took the subject's lock, so a user's restatement committing in between (it makes the inferred fact
    the user's: `strengthen`) was ended all the same. Reproduced deterministically: the restatement runs, in its
    own transaction, when the extraction's transaction calls `retract`, and commits before it goes on. (The
    extraction locks an entity when it first links its episode to it, `episodes/mention`; here the episode already
    mentions Dana and Acme, as when an agent sent explicit facts citing it before the worker extracted it, so
    nothing but the retraction's own lock keeps the restatement out.) The check now runs under that lock: the end
    is refused as `temporal_rule`, and the user's fact stays current."""
    import threading

    from graphmem.models import EntityRef, FactIn
    from graphmem.store import facts as fact_store
    graph = llm_services.graph
    _, works = dana_at_acme(llm_services, tenant, "inferred")
    dana, acme = EntityRef(kind="Person", name="Dana Reyes"), EntityRef(kind="Organization", name="Acme")
    ep = append(llm_services, tenant, text="Dana left Acme in March 2024.")
    graph.assert_facts(tenant, [FactIn(subject=who, predicate="OBSERVED", value=f"{who.name} was named",
                                       episode_id=ep.id) for who in (dana, acme)])
    said, _ = graph.append_episode(tenant, EpisodeIn(content="I work at Acme", occurred_at=WED),
                                   extraction_status="skipped", extraction_reason="explicit facts")
    restated: list = []
    committed = threading.Event()

    def restate():
        restated.extend(graph.assert_facts(tenant, [FactIn(
            subject=dana, predicate="WORKS_AT", object=acme, source="user_explicit",
            valid_from=datetime(2023, 1, 1, tzinfo=UTC), episode_id=said.id)]))
        committed.set()

    real_retract = fact_store.retract

    def retract_after_a_restatement(*args, **kwargs):
        if not restated:      # once: the driver may run the transaction again
            threading.Thread(target=restate, daemon=True).start()
            assert committed.wait(60), "the restatement waited for the extraction's lock: no race to reproduce"
        return real_retract(*args, **kwargs)

    monkeypatch.setattr(fact_store, "retract", retract_after_a_restatement)
    fake_llm.script(PATH, ok({"entities": [{"ref": "e1", "kind": "Person", "name": "Dana Reyes"},
                                           {"ref": "e2", "kind": "Organization", "name": "Acme"}],
                              "facts": [{"subject": "e1", "predicate": "WORKS_AT", "object": "e2", "valid_from": None,
                                         "valid_to": "March 2024", "confidence": 0.9}]}))
    run(llm_services, tenant)
    job = llm_services.ingest.job_status(tenant, ep.id)

    assert [o.action for o in restated] == ["duplicate"] and restated[0].fact_id == works.fact_id, restated
    fact = graph.get_fact(tenant, works.fact_id)
    assert (fact.status, fact.valid_to, fact.source) == ("current", None, "user_explicit"), fact
    assert job.status == "done" and (job.facts_refused, job.facts_retracted) == (1, 0), job
    [refused] = [r for r in llm_services.ingest.list_refusals(tenant) if r.episode_id == ep.id]
    assert (refused.reason, refused.field) == ("temporal_rule", "extraction.facts[0]"), refused
    assert "user_explicit" in refused.detail, refused


def test_the_earlier_prompt_keeps_its_reading_of_an_end_without_a_start(make_services, fake_llm, tenant):
    """`extract_v1` is kept as it was, and so is how its replies read: a `valid_to` with no `valid_from` is a fact
    from the reference time until then ("Dana is at Globex until June": null = at the reference time), not an end
    of a stored fact. It was refused as `no_current_fact` (the ended-fact rule of `extract_v2` applied to every
    prompt's reply)."""
    services = make_services(llm_base_url=fake_llm.base_url, llm_api_key="test", llm_timeout_s=LLM_TIMEOUT_S,
                             llm_max_retries=2, extraction_prompt="extract_v1")
    reply = {"entities": GOOD["entities"],
             "facts": [{"subject": "e1", "predicate": "WORKS_AT", "object": "e2", "valid_from": None,
                        "valid_to": "2024-06-01", "confidence": 0.9}]}
    ep, job = extract_one(services, fake_llm, tenant, reply)
    assert job.status == "done" and job.prompt_version == "extract_v1", job
    assert (job.facts_asserted, job.facts_refused, job.facts_retracted) == (1, 0, 0), job
    [dana] = services.graph.find_entities(tenant, "Dana Reyes", "Person")
    [works] = services.graph.facts_about(tenant, dana.id, as_of=WED, predicates=["WORKS_AT"])
    assert (works.valid_from, works.valid_to) == (WED, datetime(2024, 6, 1, tzinfo=UTC)), works


def test_429_retry_after_is_honoured(llm_services, fake_llm, tenant):
    fake_llm.script(PATH, Reply(429, error_body("slow down", "rate_limit_exceeded"), headers={"Retry-After": "1"}),
                    ok(GOOD))
    ep = append(llm_services, tenant)
    run(llm_services, tenant)
    reqs = fake_llm.requests_for(PATH)
    assert len(reqs) == 2 and reqs[1].received_at - reqs[0].received_at >= 0.95
    job = llm_services.ingest.job_status(tenant, ep.id)
    assert job.status == "done" and job.llm_calls == 2 and job.attempts == 1


def test_500_and_timeout_are_retried(make_services, fake_llm, tenant):
    # a 3 s client timeout against a reply held for 60 s: the second call always times out, and the third (answered
    # at once) has 3 s to arrive, however busy the machine
    services = make_services(llm_base_url=fake_llm.base_url, llm_api_key="test", llm_timeout_s=3.0, llm_max_retries=2)
    fake_llm.script(PATH, Reply(500, error_body("boom")), Reply(200, chat_completion_body("{}"), delay_s=60),
                    ok(GOOD))
    ep = append(services, tenant)
    run(services, tenant)
    job = services.ingest.job_status(tenant, ep.id)
    assert job.status == "done" and job.llm_calls == 3
    assert "WORKS_AT" in current(services, tenant)


def test_malformed_output_gets_one_repair(llm_services, fake_llm, tenant):
    fake_llm.script(PATH, ok('{"entities": [{"ref": "e1", "kind": "Person", "name": "Dana Reyes"}], "facts": [trunc'),
                    ok(GOOD))
    ep = append(llm_services, tenant)
    run(llm_services, tenant)
    job = llm_services.ingest.job_status(tenant, ep.id)
    assert job.status == "done" and job.llm_calls == 2
    repair = fake_llm.requests_for(PATH)[1].json()["messages"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert "not valid JSON" in repair[2]["content"]


def test_schema_echo_twice_fails_the_job_with_reason(llm_services, fake_llm, tenant):
    echo = json.dumps(Extraction.model_json_schema())
    fake_llm.script(PATH, ok(echo), ok(echo))
    ep = append(llm_services, tenant)
    run(llm_services, tenant)
    job = llm_services.ingest.job_status(tenant, ep.id)
    assert job.status == "failed" and job.llm_calls == 2
    assert "malformed LLM output after one repair attempt" in job.reason
    assert [j.episode_id for j in llm_services.ingest.failed_jobs(tenant)] == [ep.id]
    assert len(fake_llm.requests_for(PATH)) == 2          # no retries of a permanent failure


def test_unavailable_llm_dead_letters_after_n_attempts_then_retry(make_services, fake_llm, tenant):
    services = make_services(llm_base_url=fake_llm.base_url, llm_api_key="test", llm_timeout_s=LLM_TIMEOUT_S,
                             llm_max_retries=1, job_max_attempts=2)
    fake_llm.set_default(PATH, lambda req: Reply(503, error_body("overloaded"), headers={"Retry-After": "0"}))
    ep = append(services, tenant)
    run(services, tenant, until=lambda: services.ingest.job_status(tenant, ep.id).status == "dead")
    job = services.ingest.job_status(tenant, ep.id)
    assert job.status == "dead" and job.attempts == 2 and job.llm_calls == 4   # 2 attempts x (1 call + 1 retry)
    assert "LLMUnavailable" in job.reason and "503" in job.reason
    assert [j.status for j in services.ingest.failed_jobs(tenant)] == ["dead"]

    fake_llm.reset()
    fake_llm.script(PATH, ok(GOOD))
    assert services.ingest.retry_job(tenant, ep.id).status == "pending"
    run(services, tenant)
    assert services.ingest.job_status(tenant, ep.id).status == "done"
    assert "WORKS_AT" in current(services, tenant)


def test_no_llm_configured_skips_messages_but_maps_json(make_services, tenant):
    services = make_services(llm_base_url=None, llm_api_key=None)
    ep = append(services, tenant)
    run(services, tenant)
    job = services.ingest.job_status(tenant, ep.id)
    assert job.status == "skipped" and job.reason == "no LLM configured"
    assert services.ingest.failed_jobs(tenant) == []


def test_an_event_of_plain_text_is_text_not_a_failed_record(make_services, llm_services, fake_llm, tenant):
    """An `event` episode is mapped as a record when it holds a JSON document; one of plain text ("Carrier note:
    parcel P-5521 was returned", as a turn sends it) is text: extracted by the LLM, or skipped without one. Its job
    failed instead ("MappingError: episode content is not JSON"), listed among the failed jobs."""
    note = EpisodeIn(kind="event", content="Carrier note: Dana Reyes now heads procurement at Globex.",
                     occurred_at=WED, idempotency_key="ev1")
    bare = make_services(llm_base_url=None, llm_api_key=None)
    ep, _ = bare.ingest.append_episodes(tenant, [note])[0]
    run(bare, tenant)
    job = bare.ingest.job_status(tenant, ep.id)
    assert (job.status, job.reason) == ("skipped", "no LLM configured"), job
    assert bare.ingest.failed_jobs(tenant) == []
    fake_llm.script(PATH, ok(GOOD))
    ep, _ = llm_services.ingest.append_episodes(tenant, [note.model_copy(update={"idempotency_key": "ev2"})])[0]
    run(llm_services, tenant)
    job = llm_services.ingest.job_status(tenant, ep.id)
    assert job.status == "done" and job.extractor == "llm" and job.facts_asserted == 2, job
    assert current(llm_services, tenant)["HAS_TITLE"].value == "Head of Procurement"


def test_chatter_is_gated_without_an_llm_call(llm_services, fake_llm, tenant):
    ep, created = llm_services.ingest.append_episodes(tenant, [EpisodeIn(content="ok thanks!", occurred_at=WED)])[0]
    assert created and ep.extraction_status == "skipped"
    run(llm_services, tenant)
    assert llm_services.ingest.job_status(tenant, ep.id).reason == "chatter"
    assert fake_llm.requests_for(PATH) == []


def test_the_worker_leaves_episodes_past_retention_to_the_sweeper(llm_services, fake_llm, db, tenant):
    """Found by a helper: the claim had no retention filter, so the worker sent to the LLM the content of an episode
    past its own `retain_until`, or of a session idle past the tenant's `session_ttl_days`, which every read already
    hides and the sweep will delete. The claim skips them (left pending for the sweeper); a live episode of the same
    run is still extracted."""
    from graphmem.governance.models import RetentionSettings
    from tests.test_context_sessions import say
    llm_services.governance.retention.update(tenant, RetentionSettings(session_ttl_days=1))
    ctx = llm_services.context
    for sid, text in (("idle", "Zanzibar walrus invoice"), ("own", "Quokka harbour contract"),
                      ("live", "Dana Reyes moved to Globex")):
        ctx.append_turn(tenant, sid, say(sid, "u1", text))
    [idle], [own], [live] = (llm_services.graph.session_episodes(tenant, s) for s in ("idle", "own", "live"))
    with db.driver.session() as s:      # their extraction is due; three days of idleness for "idle"; "own" past its
        s.run("MATCH (e:Episode) WHERE e.id IN $ids SET e.extraction_status = 'pending', e.not_before = null",
              ids=[idle.id, own.id, live.id])           # own retention (test-only raw writes)
        s.run("MATCH (x:Session {tenant_id: $t, id: 'idle'}) SET x.last_active_at = x.last_active_at - "
              "duration({days: 3}), x.retain_until = x.retain_until - duration({days: 3})", t=tenant)
        s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $t", id=own.id, t=datetime(2020, 1, 1, tzinfo=UTC))
    fake_llm.set_default(PATH, lambda req: ok(GOOD))
    run(llm_services, tenant)

    sent = " ".join(json.dumps(r.json()) for r in fake_llm.requests_for(PATH))
    assert "Dana Reyes moved to Globex" in sent
    assert [w for w in ("Zanzibar", "Quokka") if w in sent] == []
    assert llm_services.ingest.job_status(tenant, live.id).status == "done"
    with db.driver.session() as s:
        assert s.run("MATCH (e:Episode) WHERE e.id IN $ids RETURN collect(DISTINCT e.extraction_status) AS st",
                     ids=[idle.id, own.id]).single()["st"] == ["pending"]


def idle_and_own_due(services, db, tenant):
    """Two turns whose extraction is due, in sessions "idle" ("Zanzibar walrus invoice") and "own" ("Quokka harbour
    contract") of a tenant with a one-day session TTL; returns their episodes (idle, own)."""
    from graphmem.governance.models import RetentionSettings
    from tests.test_context_sessions import say
    services.governance.retention.update(tenant, RetentionSettings(session_ttl_days=1))
    for sid, text in (("idle", "Zanzibar walrus invoice"), ("own", "Quokka harbour contract")):
        services.context.append_turn(tenant, sid, say(sid, "u1", text))
    [idle], [own] = (services.graph.session_episodes(tenant, s) for s in ("idle", "own"))
    with db.driver.session() as s:
        s.run("MATCH (e:Episode) WHERE e.id IN $ids SET e.extraction_status = 'pending', e.not_before = null",
              ids=[idle.id, own.id])
    return idle, own


def test_a_job_claimed_before_its_episode_passes_retention_sends_nothing_to_the_llm(llm_services, fake_llm, db,
                                                                                    tenant):
    """Found by a helper: the claim skips episodes past retention, but the worker did not look again between the
    claim and the LLM call, so a job claimed just before its episode's `retain_until` (or its session's idle TTL)
    passed still sent the content. The worker looks again right before: the job goes back to pending, the attempt
    not counted, and the episode stays as it is for the sweeper."""
    from graphmem.ingest import jobs
    idle, own = idle_and_own_due(llm_services, db, tenant)
    fake_llm.set_default(PATH, lambda req: ok(GOOD))
    w = Worker(llm_services, tenants=[tenant], poll_s=0.05)
    claims = jobs.claim(db, tenant, w.worker_id, 10, 60)
    assert sorted(c.episode.id for c in claims) == sorted([idle.id, own.id])
    with db.driver.session() as s:      # then the session goes idle past its TTL, and "own" past its own retention
        s.run("MATCH (x:Session {tenant_id: $t, id: 'idle'}) SET x.last_active_at = x.last_active_at - "
              "duration({days: 3}), x.retain_until = x.retain_until - duration({days: 3})", t=tenant)
        s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $t", id=own.id, t=datetime(2020, 1, 1, tzinfo=UTC))
    assert [w.process(c) for c in claims] == ["pending", "pending"]

    sent = " ".join(json.dumps(r.json()) for r in fake_llm.requests_for(PATH))
    assert [x for x in ("Zanzibar", "Quokka") if x in sent] == []
    with db.driver.session() as s:
        rows = s.run("MATCH (e:Episode) WHERE e.id IN $ids RETURN e.extraction_status AS st, e.attempts AS n, "
                     "e.claim_token AS token, e.extraction_reason AS reason", ids=[idle.id, own.id]).data()
    assert [(r["st"], r["n"], r["token"]) for r in rows] == [("pending", 0, None)] * 2
    assert all("retention" in r["reason"] for r in rows), rows


def test_no_repair_call_nor_retry_sends_the_content_of_an_episode_past_retention(llm_services, fake_llm, db, tenant):
    """Found by a helper: the worker looked at retention once before the extraction call, but a reply that did not
    parse got a repair call, and a 429/5xx or a timeout a retry, each sending the content again after the first
    call (and any Retry-After wait, up to a minute) without looking again; the disambiguation call's repair and
    retries likewise. The client now looks right before every request it sends (`ChatClient.complete`'s
    `before_send`): once the episode is past retention (its own, or its session's idle TTL) nothing more is sent,
    and the job goes back to pending, the attempt not counted, as before the first call."""
    from graphmem.ingest import jobs
    idle, own = idle_and_own_due(llm_services, db, tenant)

    def expire_own_then_malformed(req):      # "own" passes its own retention during the call (test-only raw write)
        with db.driver.session() as s:
            s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $t", id=own.id, t=datetime(2020, 1, 1, tzinfo=UTC))
        return ok('{"entities": [], "facts": [trunc')

    def idle_session_then_overloaded(req):   # the session goes idle past its TTL during the call (test-only)
        with db.driver.session() as s:
            s.run("MATCH (x:Session {tenant_id: $t, id: 'idle'}) SET x.last_active_at = x.last_active_at - "
                  "duration({days: 3}), x.retain_until = x.retain_until - duration({days: 3})", t=tenant)
        return Reply(503, error_body("overloaded"), headers={"Retry-After": "0"})

    fake_llm.set_default(PATH, lambda req: ok(GOOD))
    w = Worker(llm_services, tenants=[tenant], poll_s=0.05)
    claims = {c.episode.id: c for c in jobs.claim(db, tenant, w.worker_id, 10, 60)}
    assert set(claims) == {idle.id, own.id}
    fake_llm.script(PATH, expire_own_then_malformed)
    assert w.process(claims[own.id]) == "pending"
    fake_llm.script(PATH, idle_session_then_overloaded)
    assert w.process(claims[idle.id]) == "pending"

    sent = [json.dumps(r.json()) for r in fake_llm.requests_for(PATH)]
    assert [("Quokka" in x, "Zanzibar" in x) for x in sent] == [(True, False), (False, True)]   # one call each
    with db.driver.session() as s:
        rows = s.run("MATCH (e:Episode) WHERE e.id IN $ids RETURN e.extraction_status AS st, e.attempts AS n, "
                     "e.extraction_reason AS reason", ids=[idle.id, own.id]).data()
        assert s.run("MATCH (n:Entity {tenant_id: $t}) RETURN count(n) AS n", t=tenant).single()["n"] == 0
    assert [(r["st"], r["n"]) for r in rows] == [("pending", 0)] * 2
    assert all("retention" in r["reason"] for r in rows), rows
