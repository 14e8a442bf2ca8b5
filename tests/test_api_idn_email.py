"""An email whose domain is internationalised names one person whichever form it is written in: Unicode
("ann@bücher.example", the form kept: IDNA 2008 U-labels, UTS 46 mapping) or its punycode ("ann@xn--bcher-kva.example").
Helper-found: the two forms made two people."""
from __future__ import annotations

FORMS = ("ann@bücher.example", "ann@xn--bcher-kva.example", "Ann@XN--BCHER-KVA.example",
         "ann@bu\u0308cher.example",   # "ü" as u + a combining diaeresis
         "ann@ＢÜＣＨＥＲ.example")       # fullwidth letters, as UTS 46 maps them


def test_both_forms_of_an_idn_email_name_one_person(client_for, tenant):
    c = client_for(tenant)
    ids = set()
    for i, email in enumerate(FORMS):
        fact = {"subject": {"kind": "Person", "name": "Ann Bücher", "email": email}, "predicate": "HAS_TITLE",
                "value": f"title {i}"}
        r = c.post("/v1/facts", json={"facts": [fact]})
        assert r.status_code == 200, (email, r.text)
        ids.add(c.get(f"/v1/facts/{r.json()['outcomes'][0]['fact_id']}").json()["subject_id"])
    assert len(ids) == 1, ids
    [ann] = c.get("/v1/entities", params={"name": "Ann Bücher"}).json()["items"]
    assert ann["email"] == "ann@bücher.example", ann
    # an email alone names her too, in either form
    r = c.post("/v1/facts", json={"facts": [{"subject": {"email": "ann@xn--bcher-kva.example"},
                                             "predicate": "HAS_TITLE", "value": "by email"}]})
    assert r.status_code == 200, r.text
    assert c.get(f"/v1/facts/{r.json()['outcomes'][0]['fact_id']}").json()["subject_id"] == ann["id"]


def test_an_email_whose_domain_idna_refuses_is_kept_as_written(client_for, tenant):
    """A domain that is no valid IDNA name (an underscore, a snowman) is not refused: it is kept lower-cased, as
    before (such an address was accepted, and a CRM or an extractor may hold one)."""
    c = client_for(tenant)
    for email in ("bo@exa_mple.com", "bo@\u2603.example"):
        fact = {"subject": {"kind": "Person", "name": f"Bo {email}", "email": email.upper()},
                "predicate": "HAS_TITLE", "value": "x"}
        r = c.post("/v1/facts", json={"facts": [fact]})
        assert r.status_code == 200, (email, r.text)
        subject = c.get(f"/v1/facts/{r.json()['outcomes'][0]['fact_id']}").json()["subject_id"]
        assert c.get(f"/v1/entities/{subject}").json()["email"] == email
