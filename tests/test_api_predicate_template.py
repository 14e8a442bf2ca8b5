"""A predicate's `template` names `{subject}`, `{object}` and `{predicate}`, nothing more. It was checked by
formatting it once with Python's `str.format`, which also runs format specs, conversions, attribute and index
lookups: helper-found, `"{subject:>999999999}"` was accepted (a 1 GB string built once to check it) and every fact
of the predicate then built it again (the write did not answer; the server grew by gigabytes), and
`"{subject.__class__}"` stored the statement "<class 'str'>"."""
from __future__ import annotations

import time

from tests.test_governance_support import raw

NOTE = {"name": "NOTED", "cardinality": "multi", "subject_kinds": ["Person"], "object_kinds": ["literal"],
        "fact_class": "observation", "template": "{subject} noted {object}"}


def test_a_template_with_format_specs_conversions_or_lookups_is_a_422(client_for, tenant):
    c = client_for(tenant)
    for template in ("{subject:>999999999}", "{subject:,}", "{object!r}", "{subject!s}", "{subject.__class__}",
                     "{object[0]}", "{subject.upper}", "{}", "{0}"):
        r = c.post("/v1/ontology/predicates", json={**NOTE, "template": template})
        assert r.status_code == 422 and r.json()["field"] == "template", (template, r.text)
    names = [p["name"] for p in c.get("/v1/ontology/predicates", params={"limit": 500}).json()["items"]]
    assert "NOTED" not in names
    # plain fields and literal braces ({{ and }}) stay fine
    r = c.post("/v1/ontology/predicates", json={**NOTE, "template": "{subject} noted {{{object}}} ({predicate})"})
    assert r.status_code == 201, r.text
    r = c.post("/v1/facts", json={"facts": [{"subject": {"kind": "Person", "name": "Dana Reyes"},
                                             "predicate": "NOTED", "value": "hi"}]})
    fact = c.get(f"/v1/facts/{r.json()['outcomes'][0]['fact_id']}").json()
    assert fact["statement"] == "Dana Reyes noted {hi} (noted)"


def test_a_template_stored_before_the_check_is_written_as_text(client_for, tenant, db):
    """A tenant predicate stored while such templates were accepted (stored predicates are read as stored) renders
    its plain fields and leaves the rest as text: no format spec runs, no attribute is looked up."""
    raw(db, "CREATE (:Predicate {tenant_id: $t, name: 'OLD_WIDE', cardinality: 'multi', subject_kinds: ['Person'], "
            "object_kinds: ['literal'], fact_class: 'observation', "
            "template: '{subject:>999999999} / {subject.__class__} / {object}'})", t=tenant)
    c = client_for(tenant)
    started = time.monotonic()
    r = c.post("/v1/facts", json={"facts": [{"subject": {"kind": "Person", "name": "Dana Reyes"},
                                             "predicate": "OLD_WIDE", "value": "hi"}]})
    assert r.status_code == 200 and time.monotonic() - started < 10, r.text
    fact = c.get(f"/v1/facts/{r.json()['outcomes'][0]['fact_id']}").json()
    assert fact["statement"] == "{subject:>999999999} / {subject.__class__} / hi"
