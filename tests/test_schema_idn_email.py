"""Schema 21: an internationalised email is stored in one form (graphmem.models.email_address, the local part in
NFKC, the domain in Unicode). A graph from before holds either form, and punycode and Unicode (or a decomposed and a
composed local part, "gu\u0301s" and "g\u00fas") named two entities: start-up
writes each such email in the one form, so a reference in either form finds the entity; of one person stored twice,
once per form, the entity that holds the one form (else the older) keeps it, the other keeps its email as written,
and a warning names both (they are not merged)."""
from __future__ import annotations

import logging

from graphmem.models import EntityRef, email_address
from graphmem.store.schema import IDN_EMAIL, apply_schema
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


def test_schema_20_graph_gets_one_form_of_each_idn_email(db, settings, graph, tenant, caplog):
    ids = {name: _person(graph, tenant, name) for name in AS_STORED}
    with db.driver.session() as s:   # what a schema-20 graph holds: each email as it was sent (test-only raw write)
        for name, email in AS_STORED.items():
            s.run("MATCH (e:Entity {tenant_id: $t, id: $id}) SET e.email = $email", t=tenant, id=ids[name],
                  email=email)
    db.execute("meta/set_schema", version=20, embedding_dimension=settings.embedding_dimension)
    with caplog.at_level(logging.WARNING, logger="graphmem.store.schema"):
        assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    stored = {name: graph.get_entity(tenant, ids[name]).email for name in AS_STORED}
    assert stored == {**AS_STORED, "Ann": "ann@bücher.example", "Cal": "cal@bücher.example",
                      "Gus": "gús@example.com", "Hal": "hal@bücher.example"}, stored
    warned = caplog.text
    assert f"{ids['Bea']} (bea@bücher.example, held by {ids['Bea Two']})" in warned, warned
    assert f"{ids['Cal Two']} (cal@bücher.example, held by {ids['Cal']})" in warned, warned
    for form in ("ann@xn--bcher-kva.example", "ann@bücher.example", "ANN@BÜCHER.EXAMPLE"):
        assert _person(graph, tenant, "Ann", form) == ids["Ann"], form
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is False   # once

    read = matched(db, IDN_EMAIL, ("ann@bücher.example", "ann@xn--bcher-kva.example", "änn@example.com",
                                   "a\u0308nn@example.com", "ann@example.com", "ann@sub.xn--bcher-kva.example",
                                   "ann@exa_mple.com"))
    assert read == {"ann@bücher.example": True, "ann@xn--bcher-kva.example": True, "änn@example.com": True,
                    "a\u0308nn@example.com": True, "ann@example.com": False, "ann@sub.xn--bcher-kva.example": True,
                    "ann@exa_mple.com": False}, read
    for email in read:   # every email whose form changes is read again
        assert read[email] or email_address(email) == email, email
