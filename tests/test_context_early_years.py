"""A context window writes its times as ISO 8601 (`2024-05-01T09:00:00Z`) for every year the API takes (1-9999).
`strftime("%Y")` does not pad the year on Linux: helper-found, a turn of 0999-03-01 read "[999-03-01T09:30:00Z]" and
a fact valid from year 42 "valid from 42-01-01T00:00:00Z" in the window's text."""
from __future__ import annotations

POLICY = "You are Acme's support agent."


def test_a_window_writes_early_years_with_four_digits(client_for, tenant):
    c = client_for(tenant)
    r = c.post("/v1/facts", json={"facts": [{"subject": {"kind": "Person", "name": "Hypatia Theon"},
                                             "predicate": "HAS_TITLE", "value": "Librarian",
                                             "valid_from": "0042-01-01T00:00:00Z"}]})
    assert r.status_code == 200, r.text
    turn = {"idempotency_key": "t1", "user_id": "u-1",
            "episodes": [{"role": "user", "content": "Who was Hypatia Theon?", "occurred_at": "0999-03-01T09:30:00Z"}]}
    assert c.post("/v1/sessions/old/turns", json=turn).status_code == 201
    r = c.post("/v1/sessions/old/context", json={"budget_tokens": 2000, "system_policy": POLICY,
                                                  "query": "Hypatia Theon librarian"})
    assert r.status_code == 200, r.text
    text = r.json()["text"]
    assert "[0999-03-01T09:30:00Z] user: Who was Hypatia Theon?" in text, text
    assert "valid from 0042-01-01T00:00:00Z" in text, text
