"""A pin's text that is blank (a goal's `constraints[i]`, its `value`, a constraint, an obligation, a gate, a custom
string) is a 422 naming it in the words every other field uses, the `VISIBLE` pattern's ("must not be blank: ..."):
helper-found, a pin's `value.constraints[1]` of "\\u200b" said "must not be empty" where a context window's
`constraints[1]` said "must not be blank". Real HTTP server on loopback; nothing written."""
from __future__ import annotations

from tests.test_api_astral_blank_id import ASTRAL_BLANKS
from tests.test_api_blank_entity_id import BLANKS, _refused

GOAL = {"type": "goal", "value": "Refund order A-10293"}
VALUES = [("value.constraints[1]", {**GOAL, "constraints": ["refund to the original card", "{b}"]}),
          ("value.value", {**GOAL, "value": "{b}"}),
          ("value.value", {"type": "constraint", "value": "{b}"}),
          ("value.value", {"type": "obligation", "value": "{b}"}),
          ("value.gate", {"type": "human_gate", "value": "approved", "gate": "{b}"}),
          ("value", {"type": "custom", "value_type": "string", "value": "{b}"})]


def _with(value: dict, b: str) -> dict:
    return {k: ([x.replace("{b}", b) for x in v] if isinstance(v, list) else v.replace("{b}", b))
            for k, v in value.items()}


def test_a_blank_pin_text_is_a_422_in_the_words_of_every_other_field(client_for, tenant):
    c = client_for(tenant)
    assert c.post("/v1/sessions", json={"id": "s1", "user_id": "u1"}).status_code == 201
    window = c.post("/v1/sessions/s1/context", json={"budget_tokens": 1000, "system_policy": "Be brief.",
                                                     "constraints": ["Be kind.", "\u200b"]})
    _refused(window, "constraints[1]", "window")
    words = window.json()["errors"][0]["message"]
    for blank in BLANKS + ASTRAL_BLANKS:
        for field, value in VALUES:
            r = c.put("/v1/sessions/s1/pins/goal", json={"value": _with(value, blank)})
            _refused(r, field, (field, blank))
            assert [e["message"] for e in r.json()["errors"]] == [words], r.text      # one message source
            assert r.json()["detail"] == f"{field}: {words}", r.text
            turn = c.post("/v1/sessions/s1/turns", json={"idempotency_key": "t1", "user_id": "u1", "pins": [
                {"key": "goal", "value": _with(value, blank)}]})
            _refused(turn, f"pins[0].{field}", (field, blank))
    assert c.get("/v1/sessions/s1/pins").json()["items"] == []                          # nothing written
