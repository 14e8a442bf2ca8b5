"""The turn API, sessions and pins through the real HTTP server (problem+json errors, 409 on stale pins)."""
from __future__ import annotations

POLICY = "You are Acme's support agent."


def turn(key, text, minute=0, pins=()):
    return {"idempotency_key": key, "user_id": "u-42", "agent_version": "bot-1",
            "episodes": [{"role": "user", "content": text, "occurred_at": f"2024-05-01T09:{minute:02d}:00Z"}],
            "pins": list(pins)}


def test_turn_loop_over_http(client_for, tenant):
    c = client_for(tenant)
    r = c.post("/v1/sessions", json={"id": "tab-1", "user_id": "u-42"})
    assert r.status_code == 201 and r.json()["user_id"] == "u-42"
    assert c.post("/v1/sessions", json={"id": "tab-1", "user_id": "u-42"}).status_code == 200
    assert c.post("/v1/sessions", json={"id": "tab-1", "user_id": "intruder"}).status_code == 409
    body = turn("t1", "Refund order A-10293 please, I paid 129.99 EUR", pins=[
        {"key": "order_id", "value": {"type": "order_id", "value": "A-10293"}},
        {"key": "amount", "value": {"type": "amount", "value": "129.99"}},
        {"key": "currency", "value": {"type": "currency", "value": "EUR"}}])
    r = c.post("/v1/sessions/tab-1/turns", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["pins"] == {"order_id": 1, "amount": 1, "currency": 1}
    replay = c.post("/v1/sessions/tab-1/turns", json=body)
    assert replay.status_code == 200 and replay.json()["replayed"] and replay.json()["episode_ids"] == r.json()["episode_ids"]
    restamped = {**body, "episodes": [{**e, "occurred_at": "2024-05-01T09:00:09Z"} for e in body["episodes"]]}
    assert c.post("/v1/sessions/tab-1/turns", json=restamped).json()["replayed"]   # a retry may stamp times anew
    other = turn("t1", "Actually, cancel the order instead")                       # the key of another turn
    r2 = c.post("/v1/sessions/tab-1/turns", json=other)
    assert r2.status_code == 422 and r2.json()["field"] == "idempotency_key", r2.text
    assert len(c.get("/v1/sessions/tab-1/episodes").json()["items"]) == 1
    bad_json = {**turn("t2", "here is the order record"), "episodes": [
        turn("t2", "here is the order record")["episodes"][0],
        {"kind": "json", "content": "{not json", "occurred_at": "2024-05-01T09:00:10Z"}]}
    r2 = c.post("/v1/sessions/tab-1/turns", json=bad_json)   # named where it sits, as /v1/episodes/batch names it
    assert r2.status_code == 422 and r2.json()["field"] == "episodes[1].content", r2.text
    assert len(c.get("/v1/sessions/tab-1/episodes").json()["items"]) == 1
    r3 = c.post("/v1/sessions", json={"id": "team/beta", "user_id": "u-42"})      # unreachable under /v1/sessions/
    assert r3.status_code == 422 and r3.json()["field"] == "id", r3.text
    r4 = c.post("/v1/episodes", json={"content": "x", "occurred_at": "2024-05-01T09:00:00Z", "session_id": "a/b"})
    assert r4.status_code == 422 and r4.json()["field"] == "session_id", r4.text
    for odd in ("..", ".", "a\nb"):                                  # "." and ".." resolve away in a URL path
        r5 = c.post("/v1/sessions", json={"id": odd, "user_id": "u-42"})
        assert r5.status_code == 422 and r5.json()["field"] == "id", r5.text

    req = {"query": "refund status", "budget_tokens": 800, "model": "gpt-4", "system_policy": POLICY,
           "goal": "Refund order A-10293", "documents": [{"id": "kb-7", "title": "Refund policy",
                                                          "text": "Refunds take five business days. " * 50}]}
    w1 = c.post("/v1/sessions/tab-1/context", json=req)
    assert w1.status_code == 200, w1.text
    w = w1.json()
    assert "- amount (amount): 129.99\n" in w["text"] and "Refund order A-10293 please" in w["text"]
    assert w["total_tokens"] <= 800 and {p["tier"] for p in w["pieces"]} >= {"system", "goal", "pins", "recent"}
    doc = next(p for p in w["pieces"] if p["tier"] == "documents")
    assert doc["citations"][0] == {"kind": "document", "id": "kb-7", "episode_ids": [], "date": None, "source": None}
    assert "Server-Timing" in w1.headers
    assert not [d for d in w["degraded"] if d["source"] == "search"], w["degraded"]
    assert c.post("/v1/sessions/tab-1/context", json=req).content == w1.content          # byte-stable

    too_small = c.post("/v1/sessions/tab-1/context", json={**req, "budget_tokens": 3, "system_policy": POLICY * 5})
    assert too_small.status_code == 422 and too_small.headers["content-type"] == "application/problem+json"
    assert too_small.json()["field"] == "budget_tokens"
    bad_amount = c.post("/v1/sessions/tab-1/turns", json=turn("t2", "x", pins=[
        {"key": "amount", "value": {"type": "amount", "value": 12.5}, "expected_version": 1}]))
    assert bad_amount.status_code == 422 and "float" in bad_amount.json()["detail"]


def test_pin_routes_with_versions(client_for, tenant):
    c = client_for(tenant)
    c.post("/v1/sessions", json={"id": "s1", "user_id": "u1"})
    r = c.put("/v1/sessions/s1/pins/amount", json={"value": {"type": "amount", "value": "10.00"}})
    assert r.status_code == 201 and r.headers["ETag"] == '"1"' and r.json()["value"]["value"] == "10.00"
    r = c.put("/v1/sessions/s1/pins/amount", json={"value": {"type": "amount", "value": "12.00"}},
              headers={"If-Match": '"1"'})
    assert r.status_code == 200 and r.json()["version"] == 2
    stale = c.put("/v1/sessions/s1/pins/amount", json={"value": {"type": "amount", "value": "99.00"}, "version": 1})
    assert stale.status_code == 409 and stale.json()["field"] == "version"
    assert c.get("/v1/sessions/s1/pins/amount").json()["value"]["value"] == "12.00"
    bad = c.put("/v1/sessions/s1/pins/currency", json={"value": {"type": "currency", "value": "XYZ"}})
    assert bad.status_code == 422 and "ISO 4217" in bad.json()["detail"]
    # a value sent bare, or without its type, says what is missing (helper-found: "a valid dictionary or object to
    # extract fields from")
    for value, field, said in (("A-10293", "value", "value: must be a JSON object"),
                               ({"value": "A-10293"}, "value.type", "value.type: is required")):
        bad = c.put("/v1/sessions/s1/pins/order_id", json={"value": value})
        assert bad.status_code == 422 and (bad.json()["field"], bad.json()["detail"]) == (field, said), bad.text
    bad = c.post("/v1/sessions/s1/turns", json={"idempotency_key": "bare", "user_id": "u1", "episodes": [],
                                                "pins": [{"key": "order_id", "value": "A-10293"}]})
    assert bad.status_code == 422 and bad.json()["field"] == "pins[0].value", bad.text
    assert c.delete("/v1/sessions/s1/pins/amount").status_code == 422                 # version required
    assert c.delete("/v1/sessions/s1/pins/amount", headers={"If-Match": '"1"'}).status_code == 409
    assert c.delete("/v1/sessions/s1/pins/amount", params={"version": 2}).status_code == 204
    listed = c.get("/v1/sessions/s1/pins", params={"limit": 10})
    assert listed.status_code == 200 and listed.json()["items"] == []
    assert c.get("/v1/sessions/nope/pins").status_code == 404
    assert client_for(tenant, "analyst").put("/v1/sessions/s1/pins/amount", json={
        "value": {"type": "amount", "value": "1"}}).status_code == 403
    assert client_for(tenant + "-other").get("/v1/sessions/s1").status_code == 404      # tenants never mix


def test_sessions_list_consent_and_summaries(client_for, tenant):
    c = client_for(tenant)
    for sid in ("a", "b", "c"):
        c.post("/v1/sessions", json={"id": sid, "user_id": "u1" if sid != "c" else "u2"})
    page = c.get("/v1/sessions", params={"user_id": "u1", "limit": 1})
    assert page.status_code == 200 and len(page.json()["items"]) == 1
    assert len(c.get("/v1/sessions", params={"user_id": "u1"}).json()["items"]) == 2
    r = c.put("/v1/consent", json={"scope": "user", "user_id": "u1", "share_preferences": True})
    assert r.status_code == 200 and r.json()["share_preferences"] is True
    assert c.get("/v1/consent", params={"user_id": "u1"}).json()[0]["scope"] == "user"
    assert c.put("/v1/consent", json={"scope": "user", "share_preferences": True}).json()["field"] == "user_id"
    for user in ("  ", "", "u" * 201):   # a user id no turn could give (they were stored)
        r = c.put("/v1/consent", json={"scope": "user", "user_id": user, "share_preferences": True})
        assert r.status_code == 422 and r.json()["field"] == "user_id", r.text
    for flag in ("true", 1):   # a privacy switch takes a JSON boolean only
        r = c.put("/v1/consent", json={"scope": "user", "user_id": "u1", "share_preferences": flag})
        assert r.status_code == 422 and r.json()["field"] == "share_preferences", r.text
    base = {"query": "refund", "budget_tokens": 800, "system_policy": POLICY}
    for bad, field in (({"budget_tokens": True}, "budget_tokens"), ({"budget_tokens": "100"}, "budget_tokens"),
                       ({"system_policy": "   "}, "system_policy"), ({"goal": " "}, "goal"),
                       ({"user_id": "  "}, "user_id"), ({"model": "  "}, "model"),
                       ({"constraints": ["ok", "  "]}, "constraints[1]"),
                       ({"documents": [{"id": "  ", "text": "one"}]}, "documents[0].id"),
                       ({"documents": [{"id": "d1 ", "text": "one"}]}, "documents[0].id"),
                       ({"documents": [{"id": "d1", "text": "  "}]}, "documents[0].text"),
                       ({"documents": [{"id": "d", "text": "one"}, {"id": "d", "text": "two"}]}, "documents")):
        r = c.post("/v1/sessions/tab-v/context", json={**base, **bad})
        assert r.status_code == 422 and r.json()["field"] == field, (bad, r.text)
    assert c.post("/v1/sessions/tab-v/context", json=base).status_code == 200
    assert c.get("/v1/sessions/a/summaries").json()["items"] == []
    assert c.post("/v1/sessions/a/summaries/rollback").status_code == 404


def test_an_episode_key_of_another_session_is_refused_not_dropped(client_for, tenant):
    """A turn's episode may carry its own idempotency key; a key another session already used does not name a
    new episode. The turn is refused naming the key, stores nothing, and never hands back the other session's
    episode id."""
    c = client_for(tenant)
    first = turn("t1", "My parcel never arrived.")
    first["episodes"][0]["idempotency_key"] = "shared-k"
    r = c.post("/v1/sessions/tab-a/turns", json=first)
    assert r.status_code == 201, r.text
    theirs = r.json()["episode_ids"]
    second = {**turn("t1", "Please cancel my subscription."), "user_id": "u-7"}
    second["episodes"][0]["idempotency_key"] = "shared-k"
    r = c.post("/v1/sessions/tab-b/turns", json=second)
    assert r.status_code == 422 and r.json()["field"].endswith("idempotency_key"), r.text
    assert theirs[0] not in r.text
    missing = c.get("/v1/sessions/tab-b/episodes")                  # the refused turn did not create the session
    assert missing.status_code == 404 and missing.json()["field"] == "session_id", missing.text


def test_loading_another_users_session_is_refused(client_for, tenant):
    """Loading a window names the user like appending a turn does: another user's session is a 422 naming
    user_id, and its turns and pins stay out of the answer."""
    c = client_for(tenant)
    body = turn("t1", "Refund order A-10293 please", pins=[{"key": "order_id",
                                                            "value": {"type": "order_id", "value": "A-10293"}}])
    assert c.post("/v1/sessions/tab-1/turns", json=body).status_code == 201
    req = {"query": "refund", "budget_tokens": 800, "system_policy": POLICY}
    r = c.post("/v1/sessions/tab-1/context", json={**req, "user_id": "u-7"})
    assert r.status_code == 422 and r.json()["field"] == "user_id" and "A-10293" not in r.text, r.text
    assert "A-10293" in c.post("/v1/sessions/tab-1/context", json={**req, "user_id": "u-42"}).json()["text"]
    assert "A-10293" in c.post("/v1/sessions/tab-1/context", json=req).json()["text"]   # no user named: the owner's


def test_concurrent_retries_of_a_turn_with_a_pin_all_get_its_answer(client_for, tenant):
    """A client that retries a turn before the first try answered sends the same turn several times at once. One
    of them writes it; the others replay that answer (not a 409 from the pin the first one just set)."""
    from concurrent.futures import ThreadPoolExecutor

    body = turn("t-race", "Order 42 please", pins=[{"key": "order_id", "value": {"type": "order_id", "value": "42"}}])
    clients = [client_for(tenant) for _ in range(6)]
    with ThreadPoolExecutor(len(clients)) as pool:
        replies = list(pool.map(lambda c: c.post("/v1/sessions/tab-race/turns", json=body), clients))
    assert sorted(r.status_code for r in replies) == [200] * 5 + [201], [r.text for r in replies]
    assert len({tuple(r.json()["episode_ids"]) for r in replies}) == 1
    assert {r.json()["pins"]["order_id"] for r in replies} == {1}
    assert len(clients[0].get("/v1/sessions/tab-race/episodes").json()["items"]) == 1


def test_concurrent_retries_of_a_turn_without_pins_all_get_its_answer(client_for, db, tenant):
    """The same turn retried at once, without a pin: no pin conflict shows the race, so every try answered 201 as if it
    had written the turn, and two receipts could be stored. One writes it, the others replay its answer."""
    from concurrent.futures import ThreadPoolExecutor

    body = turn("t-race", "Order 42 please")
    for n in range(5):
        sid = f"tab-race{n}"
        clients = [client_for(tenant) for _ in range(6)]
        with ThreadPoolExecutor(len(clients)) as pool:
            replies = list(pool.map(lambda c: c.post(f"/v1/sessions/{sid}/turns", json=body), clients))
        assert sorted(r.status_code for r in replies) == [200] * 5 + [201], [r.text for r in replies]
        assert [r.json()["replayed"] for r in replies if r.status_code == 200] == [True] * 5
        assert len({tuple(r.json()["episode_ids"]) for r in replies}) == 1
        assert len(clients[0].get(f"/v1/sessions/{sid}/episodes").json()["items"]) == 1
        with db.driver.session(database=db.database) as s:
            receipts = s.run("MATCH (t:TurnReceipt {tenant_id: $t, session_id: $s}) RETURN count(t) AS n",
                             t=tenant, s=sid).single()["n"]
        assert receipts == 1


def test_one_turn_key_with_other_bodies_at_once_names_the_turn_key(client_for, tenant):
    """helper-found: tries of one turn key with other messages, sent at once, were refused naming
    `episodes[0].idempotency_key` and a key the client never sent ('turn:<hash>:0'); one after the other the same
    request named `idempotency_key`. One try writes its turn, each other one is a 422 naming the turn's key."""
    from concurrent.futures import ThreadPoolExecutor

    for n in range(3):
        sid = f"tab-clash{n}"
        clients = [client_for(tenant) for _ in range(6)]
        with ThreadPoolExecutor(len(clients)) as pool:
            replies = list(pool.map(lambda ic: ic[1].post(f"/v1/sessions/{sid}/turns",
                                                          json=turn("t-clash", f"message variant {ic[0]}")),
                                    enumerate(clients)))
        assert sorted(r.status_code for r in replies) == [201] + [422] * 5, [r.text for r in replies]
        for r in replies:
            if r.status_code == 422:
                assert r.json()["field"] == "idempotency_key" and "turn:" not in r.json()["detail"], r.text
        assert len(clients[0].get(f"/v1/sessions/{sid}/episodes").json()["items"]) == 1
    # helper-found: the losing body's episodes beyond the winner's were stored although it answered 422 (they showed
    # in the window as the user's words); whichever try wins, the session holds its episodes only, chained in order
    for n in range(4):
        sid = f"tab-more{n}"
        short = turn("t-more", "Order 42 please")
        long = {**short, "episodes": short["episodes"] + [
            {"role": "user", "content": f"Cancel order {770 + i} please", "occurred_at": "2024-05-01T09:01:00Z"}
            for i in range(3)]}
        pair = [client_for(tenant), client_for(tenant)]
        with ThreadPoolExecutor(2) as pool:
            replies = list(pool.map(lambda cb: cb[0].post(f"/v1/sessions/{sid}/turns", json=cb[1]),
                                    zip(pair, (short, long))))
        won = [r for r in replies if r.status_code == 201]
        assert len(won) == 1 and sorted(r.status_code for r in replies) == [201, 422], [r.text for r in replies]
        stored = pair[0].get(f"/v1/sessions/{sid}/episodes").json()["items"]
        assert [e["id"] for e in stored] == won[0].json()["episode_ids"], (stored, won[0].text)


def test_a_pin_key_redefined_during_a_turn_is_the_race_409_never_a_half_written_422(client_for, tenant):
    """helper-found: a turn whose pin key the tenant redefined between the turn's check and its pin write answered
    a 422 though its episodes were stored (the docs: a 4xx other than the pin race's 409 stores nothing)."""
    import threading
    import uuid

    c, admin = client_for(tenant), client_for(tenant)
    stop = threading.Event()

    def toggle():
        i = 0
        while not stop.is_set():
            admin.put("/v1/pin-keys/tier", json={"type": "custom", "value_type": ("string", "integer")[i % 2]})
            i += 1
    toggler = threading.Thread(target=toggle)
    toggler.start()
    seen = []
    try:
        for n in range(40):
            sid = f"tab-{uuid.uuid4().hex[:8]}"
            r = c.post(f"/v1/sessions/{sid}/turns", json=turn("t", f"hello {n}", pins=[
                {"key": "tier", "value": {"type": "custom", "value_type": "string", "value": "gold"}}]))
            if r.status_code == 201:   # a stored string pin blocks the redefinition: make room again
                assert c.delete(f"/v1/sessions/{sid}/pins/tier", params={"version": 1}).status_code == 204
            stored = c.get(f"/v1/sessions/{sid}/episodes")
            held = stored.status_code == 200 and bool(stored.json()["items"])
            seen.append((r.status_code, r.json().get("field"), held))
    finally:
        stop.set()
        toggler.join()
    for status, field, held in seen:
        assert status in (201, 409, 422), seen
        assert held == (status != 422), seen            # a 422 stored nothing; 201 and the race's 409 stored the turn
        if status != 201:
            assert field == "pins[0].value.type", seen
    assert {s for s, _, _ in seen} >= {201, 422}, seen   # both sides of the race were met


def test_concurrent_retries_of_a_turn_that_deletes_a_pin_all_get_its_answer(client_for, tenant):
    """Tries of one turn that deletes a pin, sent at once: all pass the pin check, one deletes the pin, and the
    others replay its answer (they answered 404 "no pin", the pin being gone by their write)."""
    from concurrent.futures import ThreadPoolExecutor

    c = client_for(tenant)
    for n in range(3):
        sid = f"tab-del{n}"
        pin = {"key": "order_id", "value": {"type": "order_id", "value": "42"}}
        assert c.post(f"/v1/sessions/{sid}/turns", json=turn("t-set", "Order 42 please", pins=[pin])).status_code == 201
        body = turn("t-del", "Forget the order", minute=1, pins=[{"key": "order_id", "delete": True,
                                                                  "expected_version": 1}])
        clients = [client_for(tenant) for _ in range(6)]
        with ThreadPoolExecutor(len(clients)) as pool:
            replies = list(pool.map(lambda x: x.post(f"/v1/sessions/{sid}/turns", json=body), clients))
        assert sorted(r.status_code for r in replies) == [200] * 5 + [201], [r.text for r in replies]
        assert {r.json()["pins"]["order_id"] for r in replies} == {None}
        assert c.get(f"/v1/sessions/{sid}/pins/order_id").status_code == 404
        assert len(c.get(f"/v1/sessions/{sid}/episodes").json()["items"]) == 2


def window(c, sid, query, user_id=None, budget=2000):
    body = {"query": query, "budget_tokens": budget, "system_policy": POLICY}
    r = c.post(f"/v1/sessions/{sid}/context", json={**body, **({"user_id": user_id} if user_id else {})})
    assert r.status_code == 200, r.text
    return r.json()


def test_other_users_matches_do_not_push_a_users_own_memory_out(client_for, tenant):
    """The window's search ranks only what the session may see: 25 other users' episodes that match the query
    better no longer fill the top k and leave the user's own episode out (the hits were filtered after ranking)."""
    c = client_for(tenant)
    others = [{"content": f"My favourite colour is teal, says other{i}.", "occurred_at": "2024-05-01T09:00:00Z",
               "user_id": f"other{i}"} for i in range(25)]
    assert c.post("/v1/episodes/batch", json={"episodes": others}).status_code == 201
    mine = {"content": "My favourite colour is teal and my locker code is 77", "occurred_at": "2024-05-01T10:00:00Z",
            "user_id": "u1"}
    assert c.post("/v1/episodes", json=mine).status_code == 201
    assert c.post("/v1/sessions", json={"id": "s1", "user_id": "u1"}).status_code == 201
    w = window(c, "s1", "what is my favourite colour?")
    retrieved = [p for p in w["pieces"] if p["tier"] == "retrieved"]
    assert any("locker code is 77" in p["text"] for p in retrieved), w["text"]
    assert "says other" not in w["text"], w["text"]
    plain = c.post("/v1/search", json={"query": "what is my favourite colour?", "k": 8, "targets": ["episode"]})
    assert plain.status_code == 200 and len(plain.json()["hits"]) == 8      # plain search: unchanged, tenant-wide
    assert sum("says other" in h["text"] for h in plain.json()["hits"]) >= 7


def test_a_window_finds_the_users_memory_below_many_better_matches_and_ignores_invisible_query_text(
        client_for, tenant):
    """More other users' matches than the window's search reads at first (60 against 2 x depth 20): the search
    reads deeper and still finds the user's own episode (helper-found: the window came back empty). A query of
    invisible characters is no query (no search, nothing degraded; it was a failed search quoting pydantic), and
    invisible characters before a query do not use up the 2,000 characters searched."""
    c = client_for(tenant)
    others = [{"content": f"Refund kettle {i}", "occurred_at": "2024-05-01T09:00:00Z", "user_id": f"other{i}"}
              for i in range(60)]
    assert c.post("/v1/episodes/batch", json={"episodes": others}).status_code == 201
    mine = {"content": "I asked for a refund on the kettle I bought downtown last week",
            "occurred_at": "2024-05-02T10:00:00Z", "user_id": "wu1"}
    assert c.post("/v1/episodes", json=mine).status_code == 201
    assert c.post("/v1/sessions", json={"id": "w1", "user_id": "wu1"}).status_code == 201
    for query in ("refund kettle", "\u200b" * 2500 + " refund kettle \u3164"):
        w = window(c, "w1", query)
        retrieved = [p["text"] for p in w["pieces"] if p["tier"] == "retrieved"]
        assert len(retrieved) == 1 and mine["content"] in retrieved[0], w["pieces"]
        assert [d["source"] for d in w["degraded"]] == ["search.vector"], w["degraded"]   # no embedder here
    for query in ("\u200b", "\u3164 \ufe0f", "\u200b" * 3000):
        w = window(c, "w1", query)
        assert not [p for p in w["pieces"] if p["tier"] == "retrieved"] and w["degraded"] == [], (query, w)


def test_a_windows_recent_turns_do_not_take_its_retrieved_places(client_for, tenant):
    """Found by a helper: the window searched for its 8 hits and then dropped those already among its recent turns,
    so 8 matching turns and 8 matching facts gave 4 retrieved facts. The search now passes over the window's recent
    turns (and their replies) before it keeps its k."""
    c = client_for(tenant)
    for i in range(8):
        r = c.post("/v1/sessions/snar/turns", json={"idempotency_key": f"n{i}", "user_id": "nu", "episodes": [
            {"role": "user", "content": f"Narwhal question number {i}: tell me about narwhal tusks?",
             "occurred_at": f"2024-05-01T09:{i:02d}:00Z"}]})
        assert r.status_code == 201, r.text
    facts = [{"subject": {"kind": "Person", "name": f"Narwhal Keeper{i}"}, "predicate": "HAS_TITLE",
              "value": f"narwhal specialist {i}"} for i in range(8)]
    assert c.post("/v1/facts", json={"facts": facts}).status_code == 200
    w = c.post("/v1/sessions/snar/context", json={"budget_tokens": 8000, "system_policy": "p", "query": "narwhal",
                                                  "user_id": "nu"}).json()
    recent = [p for p in w["pieces"] if p["tier"] == "recent"]
    retrieved = [p["text"] for p in w["pieces"] if p["tier"] == "retrieved"]
    assert len(recent) == 8 and [d["source"] for d in w["degraded"]] == ["search.vector"]   # no embedder here
    assert len(retrieved) == 8 and all("narwhal specialist" in t for t in retrieved), w["text"]


def test_sensitive_facts_stay_with_the_sessions_that_said_them(client_for, tenant):
    """A health, finance or legal fact enters a window only through a provenance episode that session may see
    (never through another user's, never through consent), and a window's fact citations list only the episodes
    the session may see."""
    c = client_for(tenant)

    def say(sid, user, key, text):
        r = c.post(f"/v1/sessions/{sid}/turns", json={"idempotency_key": key, "user_id": user, "episodes": [
            {"role": "user", "content": text, "occurred_at": "2024-05-01T09:00:00Z"}]})
        assert r.status_code == 201, r.text
        return r.json()["episode_ids"][0]

    def facts(items):
        r = c.post("/v1/facts", json={"facts": items})
        assert r.status_code in (200, 201) and all(o["action"] != "rejected" for o in r.json()["outcomes"]), r.text

    ursula = {"kind": "Person", "name": "Ursula One"}
    e1 = say("s1", "u1", "t1", "I am Ursula One, I work at Initrode and I have asthma.")
    e2 = say("s2", "u2", "t1", "Hello, I am Ulrich Two. Ursula One works at Initrode, I hear.")
    say("s1b", "u1", "t1", "Hi again")
    facts([{"subject": ursula, "predicate": "HAS_HEALTH_CONDITION", "value": "asthma", "source": "user_explicit",
            "episode_id": e1},
           {"subject": ursula, "predicate": "WORKS_AT", "object": {"kind": "Organization", "name": "Initrode"},
            "source": "user_explicit", "episode_id": e1},
           {"subject": ursula, "predicate": "WORKS_AT", "object": {"kind": "Organization", "name": "Initrode"},
            "source": "user_explicit", "episode_id": e2}])
    q = "does anyone have asthma health condition? where does Ursula One work at Initrode?"
    theirs = window(c, "s2", q)
    assert "health condition asthma" not in theirs["text"], theirs["text"]
    assert any("withheld" in n and "sensitive" in n for n in theirs["notes"]), theirs["notes"]
    works = next(p for p in theirs["pieces"] if p["tier"] == "retrieved" and "Initrode" in p["text"]
                 and p["citations"][0]["kind"] == "fact")
    assert works["citations"][0]["episode_ids"] == [e2] and e1 not in theirs["text"], works
    own = window(c, "s1", q)
    assert "Ursula One has the health condition asthma" in own["text"], own["text"]
    works = next(p for p in own["pieces"] if p["tier"] == "retrieved" and p["citations"][0]["kind"] == "fact"
                 and "works at" in p["text"].lower())
    assert works["citations"][0]["episode_ids"] == [e1] and e2 not in own["text"], works
    # consent shares preferences across a user's sessions, never sensitive facts
    assert c.put("/v1/consent", json={"scope": "user", "user_id": "u1", "share_preferences": True}).status_code == 200
    facts([{"subject": ursula, "predicate": "PREFERS_CHANNEL", "value": "email", "source": "user_explicit",
            "episode_id": e1}])
    other_tab = window(c, "s1b", q + " how does Ursula One prefer to be contacted by email?")
    assert "prefers" in other_tab["text"].lower() and "asthma" not in other_tab["text"], other_tab["text"]



def test_the_first_user_claims_a_session_created_without_one(client_for, tenant):
    """A session created by an episode without a user belongs to the first turn or episode that names one: a
    later turn or episode of another user is a 422 naming user_id (as for a session created with a user), the
    session's earlier user-less episodes become the owner's, and two users claiming at once get one owner."""
    from concurrent.futures import ThreadPoolExecutor

    c = client_for(tenant)
    note = c.post("/v1/episodes", json={"session_id": "shared1", "content": "system note: be kind",
                                        "occurred_at": "2024-05-01T09:00:00Z"})
    assert note.status_code == 201 and note.json()["episode"]["user_id"] is None, note.text
    assert c.get("/v1/sessions/shared1").json()["user_id"] is None
    alice = {"idempotency_key": "a1", "user_id": "alice", "episodes": [
        {"role": "user", "content": "alice secret: my pin is 1234", "occurred_at": "2024-05-01T09:01:00Z"}]}
    assert c.post("/v1/sessions/shared1/turns", json=alice).status_code == 201
    assert c.get("/v1/sessions/shared1").json()["user_id"] == "alice"
    assert c.get(f"/v1/episodes/{note.json()['episode']['id']}").json()["user_id"] == "alice"
    bob = {**alice, "idempotency_key": "b1", "user_id": "bob", "episodes": [
        {"role": "user", "content": "bob here, what did alice say?", "occurred_at": "2024-05-01T09:02:00Z"}]}
    r = c.post("/v1/sessions/shared1/turns", json=bob)
    assert r.status_code == 422 and r.json()["field"] == "user_id", r.text
    r = c.post("/v1/sessions/shared1/context", json={"query": "pin", "budget_tokens": 800, "system_policy": POLICY,
                                                      "user_id": "bob"})
    assert r.status_code == 422 and r.json()["field"] == "user_id" and "1234" not in r.text, r.text
    r = c.post("/v1/episodes", json={"session_id": "shared1", "content": "bob again", "user_id": "bob",
                                     "occurred_at": "2024-05-01T09:03:00Z"})
    assert r.status_code == 422 and r.json()["field"] == "user_id", r.text
    assert len(c.get("/v1/sessions/shared1/episodes").json()["items"]) == 2

    # a batch: the first episode with a user claims the session for the rest of the batch; refused whole
    c.post("/v1/episodes", json={"session_id": "shared2", "content": "note", "occurred_at": "2024-05-01T09:00:00Z"})
    batch = [{"session_id": "shared2", "content": f"{u} was here", "user_id": u,
              "occurred_at": "2024-05-01T09:05:00Z"} for u in ("carol", "dave")]
    r = c.post("/v1/episodes/batch", json={"episodes": batch})
    assert r.status_code == 422 and r.json()["field"] == "episodes[1].user_id", r.text
    assert len(c.get("/v1/sessions/shared2/episodes").json()["items"]) == 1
    assert c.get("/v1/sessions/shared2").json()["user_id"] is None
    # creating a session that exists without a user claims it
    r = c.post("/v1/sessions", json={"id": "shared2", "user_id": "carol"})
    assert r.status_code == 200 and r.json()["user_id"] == "carol", r.text

    # a second user reusing the owner's turn key or episode key is told whose session it is, not about the key
    c.post("/v1/episodes", json={"session_id": "keyed", "content": "note", "occurred_at": "2024-05-01T09:00:00Z"})
    turn = {"idempotency_key": "k", "episodes": [{"role": "user", "content": "mine", "occurred_at": "2024-05-01T09:01:00Z"}]}
    assert c.post("/v1/sessions/keyed/turns", json={**turn, "user_id": "xena"}).status_code == 201
    r = c.post("/v1/sessions/keyed/turns", json={**turn, "user_id": "yuri"})
    assert r.status_code == 422 and r.json()["field"] == "user_id", r.text
    r = c.post("/v1/sessions/keyed/turns", json={**turn, "user_id": "xena", "episodes": [
        {"role": "user", "content": "other", "occurred_at": "2024-05-01T09:01:00Z"}]})
    assert r.status_code == 422 and r.json()["field"] == "idempotency_key", r.text
    ep = {"session_id": "keyed", "content": "hers", "occurred_at": "2024-05-01T09:02:00Z", "idempotency_key": "e1"}
    assert c.post("/v1/episodes", json={**ep, "user_id": "xena"}).status_code == 201
    r = c.post("/v1/episodes", json={**ep, "user_id": "yuri", "content": "his"})
    assert r.status_code == 422 and r.json()["field"] == "user_id", r.text
    r = c.post("/v1/episodes/batch", json={"episodes": [{**ep, "user_id": "yuri"}]})
    assert r.status_code == 422 and r.json()["field"] == "episodes[0].user_id", r.text
    r = c.post("/v1/episodes", json={**ep, "user_id": "xena", "content": "other"})
    assert r.status_code == 422 and r.json()["field"] == "idempotency_key", r.text
    assert {e["user_id"] for e in c.get("/v1/sessions/keyed/episodes").json()["items"]} == {"xena"}

    # two users claiming at once: one owner, the other a 422
    for n in range(3):
        sid = f"race{n}"
        c.post("/v1/episodes", json={"session_id": sid, "content": "note", "occurred_at": "2024-05-01T09:00:00Z"})
        bodies = [{"idempotency_key": "k", "user_id": u, "episodes": [
            {"role": "user", "content": f"{u} claims", "occurred_at": "2024-05-01T09:01:00Z"}]} for u in ("x", "y")]
        episodes = [{"session_id": sid, "user_id": u, "content": f"{u} writes", "occurred_at": "2024-05-01T09:02:00Z"}
                    for u in ("v", "w")]
        clients = [client_for(tenant) for _ in range(4)]
        with ThreadPoolExecutor(4) as pool:
            replies = list(pool.map(lambda a: a[0].post(a[1], json=a[2]),
                                    [(clients[0], f"/v1/sessions/{sid}/turns", bodies[0]),
                                     (clients[1], f"/v1/sessions/{sid}/turns", bodies[1]),
                                     (clients[2], "/v1/episodes", episodes[0]),
                                     (clients[3], "/v1/episodes", episodes[1])]))
        assert sorted(r.status_code for r in replies) == [201, 422, 422, 422], [r.text for r in replies]
        assert [r.json()["field"] for r in replies if r.status_code == 422] == ["user_id"] * 3, \
            [r.json().get("field") for r in replies]
        owner = c.get(f"/v1/sessions/{sid}").json()["user_id"]
        users = {e["user_id"] for e in c.get(f"/v1/sessions/{sid}/episodes").json()["items"]}
        assert users == {owner}, (owner, users)


def test_a_lone_surrogate_in_a_pin_is_bad_input_and_the_turn_writes_nothing(client_for, tenant):
    """A constraint pin holding half a UTF-16 pair ("\ud83d") was a 500 after the turn's episode and session
    were stored; it is a 422 naming the pin's field, and nothing of the turn is stored."""
    c = client_for(tenant)
    body = ('{"idempotency_key": "k-sur", "user_id": "u-sur", "episodes": [{"content": "hello", '
            '"occurred_at": "2024-05-01T09:00:00Z"}], "pins": [{"key": "c", "value": {"type": "constraint", '
            '"value": "x \\ud83d y"}}]}')
    r = c.post("/v1/sessions/sur-s/turns", content=body.encode(), headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json()["field"].startswith("pins[0].value"), r.text
    assert c.get("/v1/sessions/sur-s").status_code == 404
    r = c.put("/v1/sessions/sur-s/pins/c", content=b'{"value": {"type": "obligation", "value": "\\udfff"}}',
              headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json()["field"].startswith("value"), r.text


def test_a_lone_surrogate_in_a_tool_schema_is_bad_input_not_a_500(client_for, tenant):
    """A tool's `parameters` is free JSON: a string in it escaping half a UTF-16 pair ("\\ud800") went into the
    window, which could not be encoded as the reply (500). It is a 422 naming the tool's parameters."""
    c = client_for(tenant)
    body = ('{"query": "refund?", "budget_tokens": 1000, "system_policy": "Be brief.", "tools": [{"name": "t", '
            '"parameters": {"type": "object", "description": "x \\ud800"}}]}')
    r = c.post("/v1/sessions/tab-s/context", content=body.encode(), headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json()["field"] == "tools[0].parameters", r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    r = c.post("/v1/sessions/tab-s/context", json={"query": "refund?", "budget_tokens": 1000,
                                                   "system_policy": "Be brief.",
                                                   "tools": [{"name": "t", "parameters": {"type": "object"}}]})
    assert r.status_code == 200, r.text


def test_loose_json_types_and_blank_text_are_refused_naming_the_field(client_for, tenant):
    """Found by a helper: a pin `version: true`, `expected_version: "1"`, `"delete": "yes"`, a fact's
    `confidence: "0.5"` or `true`, a whitespace-only episode or idempotency key were coerced or stored. Each is a
    422 naming its field, and nothing is written."""
    c = client_for(tenant)
    c.post("/v1/sessions", json={"id": "loose", "user_id": "u-42"})
    assert c.post("/v1/sessions/loose/turns", json=turn("k0", "Order A-1", pins=[
        {"key": "order_id", "value": {"type": "order_id", "value": "A-1"}}])).status_code == 201
    pin = {"key": "order_id", "value": {"type": "order_id", "value": "A-2"}}
    for i, (change, field) in enumerate((({"expected_version": True}, "pins[0].expected_version"),
                                         ({"expected_version": "1"}, "pins[0].expected_version"),
                                         ({"delete": "yes", "expected_version": 1}, "pins[0].delete"),
                                         ({"episode_index": True}, "pins[0].episode_index"))):
        r = c.post("/v1/sessions/loose/turns", json=turn(f"k{i + 1}", "change it", pins=[{**pin, **change}]))
        assert r.status_code == 422 and r.json()["field"] == field, (change, r.text)
    for i, (ep, field) in enumerate((({"content": "  \n "}, "episodes[0].content"),
                                     ({"idempotency_key": "  "}, "episodes[0].idempotency_key"))):
        body = turn(f"b{i}", "x")
        body["episodes"][0].update(ep)
        r = c.post("/v1/sessions/loose/turns", json=body)
        assert r.status_code == 422 and r.json()["field"] == field, (ep, r.text)
    # a delete names the version it read, in a turn as on DELETE /v1/sessions/{id}/pins/{key}: 422, not 409
    r = c.post("/v1/sessions/loose/turns", json=turn("k9", "drop it", pins=[{"key": "order_id", "delete": True}]))
    assert r.status_code == 422 and r.json()["field"] == "pins[0].expected_version", r.text
    assert c.delete("/v1/sessions/loose/pins/order_id").status_code == 422
    assert len(c.get("/v1/sessions/loose/episodes").json()["items"]) == 1
    assert c.get("/v1/sessions/loose/pins/order_id").json()["value"]["value"] == "A-1"
    r = c.put("/v1/sessions/loose/pins/order_id", json={"value": pin["value"], "version": True})
    assert r.status_code == 422 and r.json()["field"] == "version", r.text
    r = c.post("/v1/episodes", json={"content": " ", "occurred_at": "2024-05-01T09:00:00Z"})
    assert r.status_code == 422 and r.json()["field"] == "content", r.text
    for conf in ("0.5", True):
        r = c.post("/v1/facts", json={"facts": [{"subject": {"kind": "Person", "name": "Loose Lee"},
                                                 "predicate": "HAS_TITLE", "value": "CFO", "confidence": conf}]})
        assert r.status_code == 422 and r.json()["field"] == "facts[0].confidence", r.text
    assert c.get("/v1/entities", params={"name": "Loose Lee"}).json()["items"] == []
    # more blank text, found by a helper: each a 422 naming the field
    ep = {"content": "x", "occurred_at": "2024-05-01T09:00:00Z"}
    for route, body, field in (
            ("/v1/episodes", {**ep, "user_id": " "}, "user_id"), ("/v1/episodes", {**ep, "role": " "}, "role"),
            ("/v1/episodes", {**ep, "speaker": "  "}, "speaker"),
            ("/v1/episodes", {**ep, "content": "\u200b"}, "content"),   # a zero-width space is blank too
            ("/v1/episodes", {**ep, "content": "\x00"}, "content"), ("/v1/episodes", {**ep, "content": "\u3164"}, "content"),
            ("/v1/episodes", {**ep, "content": "\U000e0100\U000e0020"}, "content"),  # invisible beyond the BMP
            ("/v1/sessions", {"id": "zw-user", "user_id": "\u200b"}, "user_id"),
            ("/v1/sessions", {"id": "\ufeff\u2060", "user_id": "u-42"}, "id"),
            ("/v1/facts", {"facts": [{"subject": {"kind": "Person", "name": "Loose Lee"}, "predicate": "HAS_TITLE",
                                      "value": "\u200b"}]}, "facts[0].value"),
            ("/v1/sessions/loose/turns", {**turn("k20", "x"), "idempotency_key": "   "}, "idempotency_key"),
            ("/v1/sessions/loose/turns", {**turn("k21", "x"), "user_id": " "}, "user_id"),
            ("/v1/facts", {"facts": [{"subject": {"kind": "Person", "name": "Loose Lee"}, "predicate": "HAS_TITLE",
                                      "value": "CFO", "statement": "  "}]}, "facts[0].statement"),
            ("/v1/facts", {"facts": [{"subject": {"kind": "Person", "name": "Loose Lee", "summary": " "},
                                      "predicate": "HAS_TITLE", "value": "CFO"}]}, "facts[0].subject.summary"),
            ("/v1/facts/retract", {"subject_id": "x", "predicate": "HAS_TITLE", "value": "   "}, "value"),
            ("/v1/sessions", {"id": "blank-agent", "user_id": "u-42", "agent_id": " "}, "agent_id")):
        r = c.post(route, json=body)
        assert r.status_code == 422 and r.json()["field"] == field, (route, body, r.text)
        assert "Value error" not in r.text and "pattern" not in r.text, r.text   # said in words
    assert c.get("/v1/entities", params={"name": "Loose Lee"}).json()["items"] == []


def test_an_episode_takes_its_source_from_its_role_unless_given(client_for, tenant):
    """Found by a helper: an assistant's own message and a tool's output were recorded, and cited in the window,
    as `user_explicit`. Without a `source`, the assistant's words are `inferred`, a tool's `system`."""
    c = client_for(tenant)
    body = turn("roles", "Where is my parcel?")
    body["episodes"] += [
        {"role": "assistant", "content": "It ships Friday.", "occurred_at": "2024-05-01T09:01:00Z"},
        {"kind": "tool_result", "content": "carrier: DHL", "occurred_at": "2024-05-01T09:02:00Z"},
        {"role": "assistant", "content": "Per the user it ships Monday.", "occurred_at": "2024-05-01T09:03:00Z",
         "source": "user_confirmed"}]
    assert c.post("/v1/sessions/roles/turns", json=body).status_code == 201
    eps = c.get("/v1/sessions/roles/episodes").json()["items"]
    assert {e["content"]: e["source"] for e in eps} == {
        "Where is my parcel?": "user_explicit", "It ships Friday.": "inferred", "carrier: DHL": "system",
        "Per the user it ships Monday.": "user_confirmed"}
    r = c.post("/v1/episodes", json={"content": "I can do that.", "role": "Assistant",
                                     "occurred_at": "2024-05-01T09:00:00Z"})
    assert r.status_code == 201 and r.json()["episode"]["source"] == "inferred", r.text
    # an episode stored before the default by role (an assistant's, as user_explicit) replays for a retry that
    # names no source: found by a helper (the retry was a 422 naming idempotency_key after the upgrade)
    old = {"content": "Sure.", "role": "assistant", "occurred_at": "2024-05-01T09:00:00Z", "idempotency_key": "pre"}
    assert c.post("/v1/episodes", json={**old, "source": "user_explicit"}).status_code == 201
    again = c.post("/v1/episodes", json=old)
    assert again.status_code == 200 and again.json()["created"] is False, again.text
    assert again.json()["episode"]["source"] == "user_explicit"
    other = c.post("/v1/episodes", json={**old, "source": "system"})       # a source named differs: refused
    assert other.status_code == 422 and other.json()["field"] == "idempotency_key", other.text
    pre = turn("pre-turn", "Hello")
    pre["episodes"] = [{**pre["episodes"][0], "role": "assistant", "source": "user_explicit"}]
    assert c.post("/v1/sessions/roles-pre/turns", json=pre).status_code == 201
    pre["episodes"][0].pop("source")
    r = c.post("/v1/sessions/roles-pre/turns", json=pre)
    assert r.status_code == 200 and r.json()["replayed"], r.text


def test_a_turn_replayed_with_another_version_names_the_field_that_differs(client_for, tenant):
    """Helper-found: a turn resent under its key with only `agent_version` changed was a 422 saying "other
    episodes, user or pin updates", none of which differed. The message names the field(s) that differ."""
    c = client_for(tenant)
    turn = {"idempotency_key": "t-v", "user_id": "u1", "agent_version": "bot 1.0",
            "episodes": [{"content": "hello there", "occurred_at": "2024-09-02T10:00:00Z"}]}
    assert c.post("/v1/sessions/s-ver/turns", json=turn).status_code == 201
    r = c.post("/v1/sessions/s-ver/turns", json={**turn, "agent_version": "bot 1.1"})
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json"), r.text
    assert r.json()["field"] == "idempotency_key" and "agent_version" in r.json()["detail"], r.text
    for other in ("episodes", "user_id", "pins", "prompt_version"):
        assert other not in r.json()["detail"], r.text
    r = c.post("/v1/sessions/s-ver/turns", json={**turn, "agent_version": "bot 1.1", "prompt_version": "p2",
                                                 "episodes": [{"content": "bye", "occurred_at": "2024-09-02T10:00:00Z"}]})
    assert r.status_code == 422, r.text
    assert all(f in r.json()["detail"] for f in ("agent_version", "prompt_version", "episodes")), r.text
    r = c.post("/v1/sessions/s-ver/turns", json=turn)   # the same turn still replays
    assert r.status_code == 200 and r.json()["replayed"] is True, r.text


def test_a_turn_resent_after_its_receipt_went_names_what_differs_from_its_stored_episodes(client_for, tenant):
    """Helper-found: a turn key resent with another body when the turn under it has no receipt (erasing one of its
    episodes takes the receipt with it; or the first try's receipt is not written yet) was a 422 saying "other
    episodes, user or pin updates" whatever differed. Its stored episodes say what they carry: the message names
    the episode fields and versions that differ, and says that the pin updates cannot be compared."""
    c = client_for(tenant)
    turn = {"idempotency_key": "t-gone", "user_id": "u1", "agent_version": "bot 1.0",
            "episodes": [{"content": "my cat is called Mirko", "occurred_at": "2024-09-02T10:00:00Z"},
                         {"content": "refund order A-1 please", "occurred_at": "2024-09-02T10:00:01Z"}]}
    r = c.post("/v1/sessions/s-gone/turns", json=turn)
    assert r.status_code == 201, r.text
    assert c.post("/v1/forget", json={"episode_id": r.json()["episode_ids"][0]}).status_code == 200
    other = {**turn, "agent_version": "bot 1.1",
             "episodes": [turn["episodes"][0], {**turn["episodes"][1], "content": "refund order A-2 please"}]}
    r = c.post("/v1/sessions/s-gone/turns", json=other)
    assert r.status_code == 422 and r.json()["field"] == "idempotency_key", r.text
    detail = r.json()["detail"]
    assert "episodes[1].content" in detail and "agent_version" in detail and "pin" in detail, detail
    for same in ("episodes[0]", "user_id", "prompt_version", "tool_version", "role", "speaker"):
        assert same not in detail, detail
    assert len(c.get("/v1/sessions/s-gone/episodes").json()["items"]) == 1      # nothing of it was stored
