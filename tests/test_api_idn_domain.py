"""An entity's internationalised domain is accepted and kept in the form an email's domain is kept in: Unicode, as
IDNA 2008 decodes it with the UTS 46 mapping (`graphmem.identifiers.email_address`), its punycode naming the same entity.
Helper-found: `"domain": "bücher.example"` was a 422 ("domain is not a valid host name") while
`ann@bücher.example` was a valid email, and the punycode `xn--bcher-kva.example` was kept as sent, so the two strong
identifiers of one organisation never agreed in form."""
from __future__ import annotations

FORMS = ("bücher.example", "xn--bcher-kva.example", "XN--BCHER-KVA.Example", "www.bücher.example",
         "BÜCHER.example", "bu\u0308cher.example",   # "ü" as u + a combining diaeresis
         "ＢÜＣＨＥＲ.example")                         # fullwidth letters, as UTS 46 maps them


def _org(c, domain: str, name: str = "Bücher GmbH"):
    """The answer to a fact that Person "Staff" works at the Organization `name` with `domain`."""
    fact = {"subject": {"kind": "Person", "name": "Staff"}, "predicate": "WORKS_AT",
            "object": {"kind": "Organization", "name": name, "domain": domain}}
    return c.post("/v1/facts", json={"facts": [fact]})


def test_an_idn_domain_is_kept_in_unicode_whichever_form_it_is_sent_in(client_for, tenant):
    c = client_for(tenant)
    ids = set()
    for domain in FORMS:
        r = _org(c, domain)
        assert r.status_code == 200, (domain, r.text)
        ids.add(c.get(f"/v1/facts/{r.json()['outcomes'][0]['fact_id']}").json()["object_id"])
    assert len(ids) == 1, ids
    [org] = c.get("/v1/entities", params={"name": "Bücher GmbH"}).json()["items"]
    assert org["domain"] == "bücher.example", org
    fact = {"subject": {"kind": "Person", "name": "Ann Bücher", "email": "ann@xn--bcher-kva.example"},
            "predicate": "WORKS_AT", "object": {"domain": "xn--bcher-kva.example"}}   # a domain alone names it too
    r = c.post("/v1/facts", json={"facts": [fact]})
    assert r.status_code == 200, r.text
    stored = c.get(f"/v1/facts/{r.json()['outcomes'][0]['fact_id']}").json()
    assert stored["object_id"] == org["id"], stored
    ann = c.get(f"/v1/entities/{stored['subject_id']}").json()
    assert ann["email"].partition("@")[2] == org["domain"], (ann, org)   # the two identifiers agree in form


def test_a_domain_idna_refuses_stays_refused(client_for, tenant):
    c = client_for(tenant)
    for domain in ("\u2603.example", "exa_mple.com", "bücher", "-bücher.example", "bü cher.example"):
        r = _org(c, domain, f"Bad {domain}")
        assert r.status_code == 422 and r.json()["field"] == "facts[0].object.domain", (domain, r.text)
    assert _org(c, "example.com", "Plain").status_code == 200   # an ASCII domain as before
