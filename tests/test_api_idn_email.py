"""An email whose domain is internationalised names one person whichever form it is written in: Unicode
("ann@bücher.example", the form kept: IDNA 2008 U-labels, UTS 46 mapping) or its punycode ("ann@xn--bcher-kva.example").
Helper-found: the two forms made two people. So does an email whose local part is written in Unicode composed or
decomposed (the form kept: NFKC)."""
from __future__ import annotations

FORMS = ("ann@bücher.example", "ann@xn--bcher-kva.example", "Ann@XN--BCHER-KVA.example",
         "ann@bu\u0308cher.example",   # "ü" as u + a combining diaeresis
         "ann@ＢÜＣＨＥＲ.example")       # fullwidth letters, as UTS 46 maps them


def _one_person(c, name: str, emails, kept: str) -> str:
    """Writes a fact about the Person `name` with each of `emails`; checks that they all went to one entity, which
    holds the email `kept`, and returns its id."""
    ids = set()
    for i, email in enumerate(emails):
        fact = {"subject": {"kind": "Person", "name": name, "email": email}, "predicate": "HAS_TITLE",
                "value": f"title {i}"}
        r = c.post("/v1/facts", json={"facts": [fact]})
        assert r.status_code == 200, (email, r.text)
        ids.add(c.get(f"/v1/facts/{r.json()['outcomes'][0]['fact_id']}").json()["subject_id"])
    assert len(ids) == 1, ids
    [one] = c.get("/v1/entities", params={"name": name}).json()["items"]
    assert one["email"] == kept, one
    return one["id"]


def _by_email(c, email: str):
    """The answer to a fact whose subject is named by `email` alone."""
    return c.post("/v1/facts", json={"facts": [{"subject": {"email": email}, "predicate": "HAS_TITLE",
                                                "value": "by email"}]})


def test_both_forms_of_an_idn_email_name_one_person(client_for, tenant):
    c = client_for(tenant)
    ann = _one_person(c, "Ann Bücher", FORMS, "ann@bücher.example")
    r = _by_email(c, "ann@xn--bcher-kva.example")   # an email alone names her too, in either form
    assert r.status_code == 200, r.text
    assert c.get(f"/v1/facts/{r.json()['outcomes'][0]['fact_id']}").json()["subject_id"] == ann


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


LOCAL_FORMS = ("josé@example.com",            # NFC: "é" precomposed
               "jose\u0301@example.com",     # NFD: "e" + a combining acute accent
               "JOSE\u0301@example.com",
               "ｊｏｓé@example.com")          # fullwidth letters, NFKC as the domain's UTS 46 mapping folds them


def test_the_unicode_forms_of_an_emails_local_part_name_one_person(client_for, tenant):
    """Helper-found: the local part was not normalised, so "josé@example.com" written precomposed (NFC) and
    decomposed (NFD, as macOS file names and some keyboards give it) made two people."""
    c = client_for(tenant)
    jose = _one_person(c, "José Local", LOCAL_FORMS, "josé@example.com")
    r = _by_email(c, "jose\u0301@example.com")      # an email alone names him too, decomposed
    assert r.status_code == 200, r.text
    assert c.get(f"/v1/facts/{r.json()['outcomes'][0]['fact_id']}").json()["subject_id"] == jose
