"""The write policy on the real Neo4j: secrets never reach the database, refusals are recorded and listable,
confidence and size limits, sensitive inferred facts held as candidates, and the redaction rules themselves."""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone

import pytest

from graphmem.errors import InvalidInput, NotFound
from graphmem.ingest.policy import redact_episode
from graphmem.ingest.secrets import luhn_ok, redact
from graphmem.ingest.worker import Worker
from graphmem.models import EntityRef, EpisodeIn, FactIn
from tests.graph_fixture import tenant_labels
from tests.ingest_fixture import tenant_strings

UTC = timezone.utc
T0 = datetime(2024, 5, 1, 9, tzinfo=UTC)
PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
SECRETS = {
    "api_key": "sk-proj-Zx8yQw3ErT5uIo9PaSdFgHjKl0",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "password": "Tr0ub4dor&3horse",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "pem": PEM_BODY,
    "card": "4111 1111 1111 1111",
    "github": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
}
TEXT = (f"Here's the prod key {SECRETS['api_key']} and AWS {SECRETS['aws']}. My password is {SECRETS['password']}. "
        f"curl -H 'Authorization: Bearer {SECRETS['bearer']}'. Card {SECRETS['card']} exp 12/27. "
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n"
        f"token: {SECRETS['github']}. Also Dana now works at Globex.")


@pytest.mark.parametrize("text,kind", [
    ("my password is hunter22!", "labelled_secret"), ("api_key=abcd1234efgh", "labelled_secret"),
    ("use sk-abcdefghijklmnopqrstuvwxyz12", "api_key"), ("Authorization: Bearer abc.def-ghi_jkl012", "bearer_token"),
    ("card 5500-0000-0000-0004 please", "card_number"), ("xoxb-123456789012-abcdefghij", "api_key"),
])
def test_redaction_catches_each_kind(text, kind):
    r = redact(text)
    assert kind in r.kinds and "[REDACTED:" in r.text
    assert redact(r.text).text == r.text                       # idempotent


@pytest.mark.parametrize("text", ["order 1234567890123 shipped", "call +1 415 555 0100", "deal worth 120000 EUR",
                                  "the password policy changed", "Dana moved to Globex on 2024-04-30",
                                  # ids whose digits alone would pass the Luhn check: part of a longer token
                                  "trace 2669078111044164b7389b13c65fce38 failed", "SKU ab4111111111111111"])
def test_redaction_leaves_ordinary_text(text):
    assert redact(text).text == text


@pytest.mark.parametrize("text,secret", [
    ('portal password: "Blue Horse 42"', "Horse"),                           # a quoted pass phrase, whole
    ("pwd = 'Blue Horse 42'", "Horse"),
    (json.dumps({"notes": 'portal password: "Blue Horse" 42'}), "Horse"),    # quoted inside a JSON string
    (json.dumps({"pwd": 'Sup3r"Secret'}), "Secret"),                          # an escaped quote in the value
    (json.dumps({"password": "a b, c;d"}), "c;d"),
    (json.dumps({"notes": 'password: abc"def'}), "def"),                      # unquoted, an escaped quote inside
])
def test_redaction_takes_a_quoted_value_whole(text, secret):
    """A labelled secret written in quotes is redacted up to its closing quote (only its first word was, or none of
    it inside a JSON string), and a JSON episode stays JSON (an escaped quote in a password broke the CRM record)."""
    r = redact(text)
    assert r.kinds == ("labelled_secret",) and secret not in r.text, r.text
    assert redact(r.text).text == r.text
    if text.startswith("{"):
        json.loads(r.text)


@pytest.mark.parametrize("text,redacted", [
    ("password: hunter2,xyz9 and more", "password: [REDACTED:labelled_secret] and more"),
    ("pwd=a1;b2;c3 ok", "pwd=[REDACTED:labelled_secret] ok"),
    ("api_key=ab,cd;ef,gh", "api_key=[REDACTED:labelled_secret]"),
    # a comma or semicolon that ends the value is the sentence's (or a JSON text's), not the secret's
    ("my password is hunter2, and more", "my password is [REDACTED:labelled_secret], and more"),
    ("token: abc,def; next", "token: [REDACTED:labelled_secret]; next"),
    ('{"pwd":1234,"title":"CTO"}', '{"pwd":[REDACTED:labelled_secret],"title":"CTO"}'),
])
def test_an_unquoted_secret_runs_to_whitespace_commas_included(text, redacted):
    """An unquoted labelled secret is redacted up to whitespace: a comma or semicolon inside it is part of it (the
    value stopped at the first one, so "password: hunter2,xyz9" kept "xyz9")."""
    r = redact(text)
    assert r.text == redacted and r.kinds == ("labelled_secret",), r.text
    assert redact(r.text).text == r.text


@pytest.mark.parametrize("text,redacted", [
    ("password: it'sme,x9 ok", "password: [REDACTED:labelled_secret] ok"),
    ('pwd=ab"cd ok', "pwd=[REDACTED:labelled_secret] ok"),
    ("token is x'y'z9 ok", "token is [REDACTED:labelled_secret] ok"),
    # a quote that ends the value closes the text around it, and stays
    ("'password: hunter2' he said", "'password: [REDACTED:labelled_secret]' he said"),
    ('{"note":"password: abc9","x":1}', '{"note":"password: [REDACTED:labelled_secret]","x":1}'),
])
def test_a_quote_inside_an_unquoted_secret_is_part_of_it(text, redacted):
    """A quote between two letters or digits of an unquoted secret is part of it: "password: it'sme,x9" was kept
    whole (the value stopped at the apostrophe, and "it" is too short to be one), and "pwd=ab\"cd" kept "cd"."""
    r = redact(text)
    assert r.text == redacted and r.kinds == ("labelled_secret",), r.text
    assert redact(r.text).text == r.text


def test_crm_record_with_a_quoted_password_keeps_its_facts(make_services, db, tenant):
    services = make_services()
    ep, _ = services.ingest.append_episodes(tenant, [EpisodeIn(kind="json", occurred_at=T0, content=json.dumps(
        {"object": "contact", "id": "c-q", "name": "Pim Ode", "title": "CTO", "pwd": 'Sup3r"Secret'}))])[0]
    Worker(services, tenants=[tenant]).run(until_idle=True)
    assert services.ingest.job_status(tenant, ep.id).status == "done"
    [pim] = services.graph.find_entities(tenant, "Pim Ode")
    assert [f.value for f in services.graph.facts_about(tenant, pim.id)] == ["CTO"]
    assert "Secret" not in "\n".join(tenant_strings(db, tenant))


@pytest.mark.parametrize("record,gone", [
    ({"pwd": 12345678, "title": "CTO"}, "12345678"),      # a number under a secret's key
    ({"pin code": 4321, "notes": "password: abc def"}, "4321"),
    ({"api_key": None, "token": False, "title": "CTO"}, None),   # null and false are no secrets: kept as they are
])
def test_a_json_episode_stays_json_after_redaction(record, gone):
    """A JSON episode's secrets are redacted value by value, so it stays JSON: a bare number under a secret's key
    became `"pwd": [REDACTED:labelled_secret]` (no JSON: its CRM record failed), and `"api_key": null` was
    redacted as a secret, breaking the record too."""
    ep = EpisodeIn(kind="json", content=json.dumps(record), occurred_at=T0)
    clean, kinds = redact_episode(ep)
    data = json.loads(clean.content)
    assert data.keys() == record.keys()
    if gone is None:
        assert kinds == () and clean.content == ep.content
    else:
        assert kinds == ("labelled_secret",) and gone not in clean.content
        assert data["title" if "title" in record else "notes"] in ("CTO", "password: [REDACTED:labelled_secret] def")


def test_crm_record_with_a_numeric_pin_keeps_its_facts(make_services, db, tenant):
    services = make_services()
    ep, _ = services.ingest.append_episodes(tenant, [EpisodeIn(kind="json", occurred_at=T0, content=json.dumps(
        {"object": "contact", "id": "c-n", "name": "Nia Ode", "title": "CTO", "pwd": 20240501, "phone": None}))])[0]
    Worker(services, tenants=[tenant]).run(until_idle=True)
    assert services.ingest.job_status(tenant, ep.id).status == "done"
    [nia] = services.graph.find_entities(tenant, "Nia Ode")
    assert [f.value for f in services.graph.facts_about(tenant, nia.id)] == ["CTO"]
    assert "20240501" not in "\n".join(tenant_strings(db, tenant))


def test_luhn():
    assert luhn_ok("4111111111111111") and luhn_ok("79927398713") and not luhn_ok("4111111111111112")


def test_secret_never_appears_anywhere_in_the_database(make_services, db, tenant, fake_llm):
    from tests.fake_openai import Reply, chat_completion_body
    reply = {"entities": [{"ref": "d", "kind": "Person", "name": "Dana"}, {"ref": "g", "kind": "Organization",
                                                                          "name": "Globex"}],
             "facts": [{"subject": "d", "predicate": "WORKS_AT", "object": "g", "confidence": 0.9},
                       {"subject": "d", "predicate": "HAS_PHONE", "value": f"pin code: {SECRETS['password']}",
                        "confidence": 0.9}]}
    fake_llm.set_default("/v1/chat/completions", lambda req: Reply(200, chat_completion_body(json.dumps(reply))))
    services = make_services(llm_base_url=fake_llm.base_url, llm_api_key="test")
    ingest = services.ingest
    msg, _ = ingest.append_episodes(tenant, [EpisodeIn(content=TEXT, occurred_at=T0, session_id="s1",
                                                       speaker=f"bot {SECRETS['api_key']}")])[0]
    crm, _ = ingest.append_episodes(tenant, [EpisodeIn(kind="json", occurred_at=T0, content=json.dumps(
        {"object": "contact", "id": "c-9", "name": "Sam Ito", "title": f"password={SECRETS['password']}",
         "phone": SECRETS["card"]}))])[0]
    assert SECRETS["api_key"] not in msg.content and "[REDACTED:api_key]" in msg.content
    assert "Dana now works at Globex" in msg.content
    # the LLM (which only ever sees redacted text) and explicit callers can still try to smuggle secrets in as facts
    outcomes = ingest.assert_facts(tenant, [
        FactIn(subject=EntityRef(kind="Person", name="Dana"), predicate="HAS_PHONE", value=SECRETS["aws"],
               episode_id=msg.id),
        FactIn(subject=EntityRef(kind="Person", name=f"key {SECRETS['github']}"), predicate="HAS_TITLE",
               value="CTO", episode_id=msg.id),
        FactIn(subject=EntityRef(kind="Person", name="Dana"), predicate="HAS_TITLE", value="VP Sales",
               episode_id=msg.id)])
    assert [o.action for o in outcomes] == ["rejected", "rejected", "created"]
    Worker(services, tenants=[tenant]).run(until_idle=True)
    assert ingest.job_status(tenant, msg.id).status == "done"
    assert ingest.job_status(tenant, crm.id).status == "done"

    everything = "\n".join(tenant_strings(db, tenant))
    assert "Dana now works at Globex" in everything            # the scan does see the tenant's data
    for name, secret in SECRETS.items():
        assert secret not in everything, f"{name} leaked"
        assert secret.replace(" ", "") not in everything.replace(" ", ""), f"{name} leaked"
    reasons = [r.reason for r in ingest.list_refusals(tenant, 0, 100)]
    assert reasons.count("secret_redacted") == 2
    assert reasons.count("secret") == 5        # 2 explicit, 1 from the LLM, 2 redaction marks in the CRM record
    [sam] = services.graph.find_entities(tenant, "Sam Ito")           # the record's entity is kept ...
    assert services.graph.facts_about(tenant, sam.id, include_superseded=True) == []   # ... its secret facts not


def test_fact_policy_refusals_are_recorded_and_listed(make_services, tenant):
    services = make_services(extraction_min_confidence=0.7, max_value_chars=50)
    ing = services.ingest
    ep, _ = ing.append_episodes(tenant, [EpisodeIn(content="Dana told us a lot today.", occurred_at=T0)])[0]
    dana = EntityRef(kind="Person", name="Dana Reyes")
    out = ing.assert_facts(tenant, [
        FactIn(subject=dana, predicate="HAS_TITLE", value="CFO", source="inferred", confidence=0.5, episode_id=ep.id),
        FactIn(subject=dana, predicate="HAS_TITLE", value="x" * 51, episode_id=ep.id),
        FactIn(subject=dana, predicate="HAS_HEALTH_CONDITION", value="asthma", source="inferred", confidence=0.9,
               episode_id=ep.id),
        FactIn(subject=dana, predicate="HAS_TITLE", value="COO", source="inferred", confidence=0.8, episode_id=ep.id),
    ])
    assert [o.action for o in out] == ["rejected", "rejected", "candidate", "created"]
    assert out[0].reason.startswith("low_confidence") and out[1].reason.startswith("oversized")
    refusals = ing.list_refusals(tenant)
    assert {(r.reason, r.field) for r in refusals} == {("low_confidence", "facts[0].confidence"),
                                                        ("oversized", "facts[1].value")}
    assert all(r.episode_id == ep.id and "x" * 51 not in r.detail for r in refusals)
    assert len(ing.list_refusals(tenant, offset=1, limit=1)) == 1


def test_explicit_facts_bad_input_is_a_clear_error_and_writes_nothing(make_services, db, tenant):
    ing = make_services().ingest
    ep, _ = ing.append_episodes(tenant, [EpisodeIn(content="Dana joined Globex", occurred_at=T0)])[0]
    dana = EntityRef(kind="Person", name="Dana")
    before = tenant_strings(db, tenant)
    with pytest.raises(InvalidInput) as err:
        ing.assert_facts(tenant, [FactIn(subject=dana, predicate="HAS_TITLE", value="CEO", episode_id=ep.id),
                                  FactIn(subject=dana, predicate="HAS_TITLE", value="CEO")])
    assert err.value.field == "facts[1].episode_id"
    with pytest.raises(InvalidInput) as err:
        ing.assert_facts(tenant, [FactIn(subject=dana, predicate="FLIES_TO", value="Mars", episode_id=ep.id)])
    assert err.value.field == "facts[0].predicate"
    with pytest.raises(NotFound):
        ing.assert_facts(tenant, [FactIn(subject=dana, predicate="HAS_TITLE", value="CEO", episode_id="nope")])
    assert tenant_strings(db, tenant) == before


def test_a_discarded_call_record_takes_its_refusals_with_it(make_services, db, tenant):
    """The record of an API write that then failed is deleted again (api.idempotency), and whatever the write policy
    recorded with it goes too: a refused request leaves nothing behind (a redaction refusal was left once)."""
    services = make_services()
    ep, created = services.ingest.append_episodes(tenant, [EpisodeIn(
        kind="event", source="system", role="system", occurred_at=T0,
        content="API call POST /v1/facts by key 4111 1111 1111 1111")], extract=False, searchable=False)[0]
    assert created and "[REDACTED:card_number]" in ep.content
    assert [r.reason for r in services.ingest.list_refusals(tenant)] == ["secret_redacted"]
    assert services.graph.discard_episode(tenant, ep.id)
    assert tenant_labels(db, tenant) == Counter()
    assert not services.graph.discard_episode(tenant, ep.id)   # gone: nothing more to delete


def test_oversized_episode_refused_before_any_write(make_services, db, tenant):
    ing = make_services(max_episode_chars=100).ingest
    with pytest.raises(InvalidInput) as err:
        ing.append_episodes(tenant, [EpisodeIn(content="fine", occurred_at=T0),
                                     EpisodeIn(content="y" * 101, occurred_at=T0)])
    assert err.value.field == "episodes[1].content"
    assert tenant_strings(db, tenant) == []
