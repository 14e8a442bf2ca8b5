"""Schema 21: an internationalised email is stored in one form (graphmem.identifiers.email_address, the local part in
NFKC, the domain in Unicode). A graph from before holds either form, and punycode and Unicode (or a decomposed and a
composed local part, "gu\u0301s" and "g\u00fas") named two entities: start-up
writes each such email in the one form, so a reference in either form finds the entity; of one person stored twice,
once per form, the entity that holds the one form (else the older) keeps it, the other keeps its email as written,
and a warning names both (they are not merged). An entity's domain, kept in punycode before (a Unicode one was
refused), is written in Unicode, the form of an email's domain."""
from __future__ import annotations

import logging

from graphmem.identifiers import domain_name, email_address
from graphmem.models import EntityRef
from graphmem.store.schema import IDN, apply_schema
from tests.test_graph_core import matched

AS_STORED = {"Ann": "ann@xn--bcher-kva.example",          # punycode
             "Bea": "bea@xn--bcher-kva.example", "Bea Two": "bea@bücher.example",   # two, one in the one form
             "Cal": "cal@xn--bcher-kva.example", "Cal Two": "cal@bu\u0308cher.example",  # two, neither (older wins)
             "Dee": "dee@exa_mple.com", "Eve": "eve@xn--n3h.example",   # no valid IDNA name: kept as written
             "Fay": "fay@example.com",
             "Gus": "gu\u0301s@example.com",                                   # NFD local part: NFC now
             "Hal": "ｈａｌ@bücher.example"}                                      # fullwidth local part: NFKC now


def _person(graph, tenant, name: str, email: str | None = None) -> str:
    return graph.upsert_entity(tenant, EntityRef(kind="Person", name=name, email=email)).id


def _migrate_from_20(db, settings, caplog, tenant: str, attr: str, stored: dict[str, str], ids: dict[str, str]):
    """Gives each entity `ids[name]` the `attr` ('email' or 'domain') `stored[name]`, as a schema-20 graph may hold
    it (a test-only raw write, past today's checks), then starts at schema 20: the migration must run."""
    with db.driver.session() as s:
        for name, value in stored.items():
            s.run("MATCH (e:Entity {tenant_id: $t, id: $id}) SET e[$attr] = $value", t=tenant, id=ids[name],
                  attr=attr, value=value)
    db.execute("meta/set_schema", version=20, embedding_dimension=settings.embedding_dimension)
    with caplog.at_level(logging.WARNING, logger="graphmem.store.schema"):
        assert apply_schema(db, settings.embedding_dimension)["migrated"] is True


def test_schema_20_graph_gets_one_form_of_each_idn_email(db, settings, graph, tenant, caplog):
    ids = {name: _person(graph, tenant, name) for name in AS_STORED}
    _migrate_from_20(db, settings, caplog, tenant, "email", AS_STORED, ids)   # each email as it was sent
    stored = {name: graph.get_entity(tenant, ids[name]).email for name in AS_STORED}
    assert stored == {**AS_STORED, "Ann": "ann@bücher.example", "Cal": "cal@bücher.example",
                      "Gus": "gús@example.com", "Hal": "hal@bücher.example"}, stored
    warned = caplog.text
    assert f"{ids['Bea']} (bea@bücher.example, held by {ids['Bea Two']})" in warned, warned
    assert f"{ids['Cal Two']} (cal@bücher.example, held by {ids['Cal']})" in warned, warned
    for form in ("ann@xn--bcher-kva.example", "ann@bücher.example", "ANN@BÜCHER.EXAMPLE"):
        assert _person(graph, tenant, "Ann", form) == ids["Ann"], form
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is False   # once

    read = matched(db, IDN, ("ann@bücher.example", "ann@xn--bcher-kva.example", "änn@example.com",
                             "a\u0308nn@example.com", "ann@example.com", "ann@sub.xn--bcher-kva.example",
                             "ann@exa_mple.com"))
    assert read == {"ann@bücher.example": True, "ann@xn--bcher-kva.example": True, "änn@example.com": True,
                    "a\u0308nn@example.com": True, "ann@example.com": False, "ann@sub.xn--bcher-kva.example": True,
                    "ann@exa_mple.com": False}, read
    for email in read:   # every email whose form changes is read again
        assert read[email] or email_address(email) == email, email


DOMAINS_STORED = {"Umlaut Co": "xn--bcher-kva.example",       # punycode: Unicode now
                  "Bad Puny Co": "xn--zz.example",             # punycode IDNA refuses: kept as written
                  "Plain Co": "example.com",
                  "Twice Co": "xn--mnchen-3ya.example", "Twice Co Two": "münchen.example"}   # one org stored twice


def test_schema_20_graph_gets_one_form_of_each_idn_domain(db, settings, graph, tenant, caplog):
    """Before schema 21 a domain outside ASCII was refused, so a graph holds an internationalised domain in punycode
    only: start-up writes it in Unicode, the form an email's domain is in, so a reference in either form finds it."""
    ids = {name: graph.upsert_entity(tenant, EntityRef(kind="Organization", name=name)).id for name in DOMAINS_STORED}
    # "münchen.example" could not be written then: it stands for the one form held by another entity
    _migrate_from_20(db, settings, caplog, tenant, "domain", DOMAINS_STORED, ids)
    stored = {name: graph.get_entity(tenant, ids[name]).domain for name in DOMAINS_STORED}
    assert stored == {**DOMAINS_STORED, "Umlaut Co": "bücher.example"}, stored
    assert f"{ids['Twice Co']} (münchen.example, held by {ids['Twice Co Two']})" in caplog.text, caplog.text
    for form in ("xn--bcher-kva.example", "bücher.example", "www.BÜCHER.example"):
        assert graph.upsert_entity(tenant, EntityRef(kind="Organization", domain=form)).id == ids["Umlaut Co"], form
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is False   # once
    read = matched(db, IDN, DOMAINS_STORED.values())
    for domain in read:   # every domain whose form changes is read again
        assert read[domain] or domain_name(domain) == domain, domain
