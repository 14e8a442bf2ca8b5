"""Every temporal rule of DESIGN.md, with exact expected timelines, against the real Neo4j."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from graphmem.errors import NotFound
from graphmem.models import EntityRef, EpisodeIn, FactIn
from graphmem.temporal import SAME_START

UTC = timezone.utc


def d(y, m=1, day=1):
    return datetime(y, m, day, tzinfo=UTC)


def ep(graph, tenant, when, text="said something", key=None):
    e, _ = graph.append_episode(tenant, EpisodeIn(content=text, occurred_at=when, idempotency_key=key,
                                                  session_id="s1", user_id="u1"))
    return e.id


DANA = EntityRef(kind="Person", name="Dana Scully", email="dana@fbi.gov")


def works_at(graph, tenant, org, when, **kw):
    return graph.assert_fact(tenant, FactIn(subject=DANA, predicate="WORKS_AT",
                                            object=EntityRef(kind="Organization", name=org),
                                            valid_from=when, episode_id=ep(graph, tenant, when), **kw))


def timeline(graph, tenant, fact_id):
    return [(f.value or graph.get_entity(tenant, f.object_id).name, f.valid_from, f.valid_to, f.status)
            for f in graph.fact_history(tenant, fact_id)]


def test_duplicate_adds_provenance_not_a_fact(graph, tenant):
    a = works_at(graph, tenant, "Acme", d(2020))
    b = works_at(graph, tenant, "ACME", d(2021))       # same org by normalised name, later mention
    assert a.action == "created" and b.action == "duplicate" and b.fact_id == a.fact_id
    prov = graph.fact_provenance(tenant, a.fact_id)
    assert [(p.occurred_at, p.role) for p in prov] == [(d(2020), "assertion"), (d(2021), "confirmation")]
    first = graph.get_fact(tenant, a.fact_id).last_confirmed_at
    assert first is not None and first >= graph.get_fact(tenant, a.fact_id).recorded_at
    # the confirming episode sent again (a retry) adds no second edge and keeps its role
    again = graph.assert_fact(tenant, FactIn(subject=DANA, predicate="WORKS_AT", valid_from=d(2021),
                                             object=EntityRef(kind="Organization", name="Acme"),
                                             episode_id=prov[1].episode_id))
    assert again.action == "duplicate" and again.fact_id == a.fact_id
    assert [(p.episode_id, p.role) for p in graph.fact_provenance(tenant, a.fact_id)] == \
        [(p.episode_id, p.role) for p in prov]
    c = works_at(graph, tenant, "Acme", d(2022))       # a third episode confirms it again: the stamp moves on
    assert c.action == "duplicate" and graph.get_fact(tenant, a.fact_id).last_confirmed_at > first
    assert [p.role for p in graph.fact_provenance(tenant, a.fact_id)] == ["assertion", "confirmation", "confirmation"]
    assert timeline(graph, tenant, a.fact_id) == [("Acme", d(2020), None, "current")]


def test_a_duplicate_keeps_the_end_and_the_stronger_belief_it_brings(graph, tenant):
    """Found by two helpers: "Ann worked at Vandelay until 2025-12" sent for a stored open fact was a duplicate
    and the end was dropped; a user stating an inferred fact left it inferred at 0.6, so a later inference
    replaced what the user said. The duplicate now closes the fact at the given end, and strengthens it."""
    a = works_at(graph, tenant, "Acme", d(2020), source="inferred", confidence=0.6)
    again = works_at(graph, tenant, "Acme", d(2021), source="user_explicit")
    assert (again.action, again.fact_id) == ("duplicate", a.fact_id)
    f = graph.get_fact(tenant, a.fact_id)
    assert (f.source, f.confidence) == ("user_explicit", 1.0)
    beta = works_at(graph, tenant, "Beta", d(2024), source="inferred", confidence=0.9)
    assert beta.action == "rejected" and "user_explicit" in beta.reason
    ended = works_at(graph, tenant, "Acme", d(2022), valid_to=d(2025, 12))
    assert (ended.action, ended.fact_id, ended.closed_fact_id) == ("duplicate", a.fact_id, a.fact_id)
    assert timeline(graph, tenant, a.fact_id) == [("Acme", d(2020), d(2025, 12), "closed")]
    # an inference may not end what the user stated: recorded, the end not applied, and the answer says so
    late = works_at(graph, tenant, "Acme", d(2023), valid_to=d(2024), source="inferred", confidence=0.99)
    assert late.action == "duplicate" and late.closed_fact_id is None and "end was not applied" in late.reason
    assert timeline(graph, tenant, a.fact_id) == [("Acme", d(2020), d(2025, 12), "closed")]
    # "still there" for a fact that has ended is not silently taken: the reason says the end stays (helper-found)
    still = works_at(graph, tenant, "Acme", d(2024))
    assert still.action == "duplicate" and "ends at 2025-12-01" in still.reason
    assert timeline(graph, tenant, a.fact_id) == [("Acme", d(2020), d(2025, 12), "closed")]
    # a weaker restatement changes nothing
    works_at(graph, tenant, "Acme", d(2021), source="inferred", confidence=0.3)
    assert (graph.get_fact(tenant, a.fact_id).source, graph.get_fact(tenant, a.fact_id).confidence) == (
        "user_explicit", 1.0)


def test_an_explicit_earlier_start_of_an_inferred_value_makes_it_the_users(graph, tenant):
    """Found by a helper: an inferred "Acme since 2024", then the user's own "Acme since 2020" (no end: still
    there), stored the user's statement as history before 2024 and left the current fact inferred, so a later
    inference replaced what the user said; in the other order it was a duplicate that made the fact the user's.
    The stored fact it runs into is confirmed by it and strengthened, as a duplicate would be."""
    inferred = works_at(graph, tenant, "Acme", d(2024), source="inferred", confidence=0.6)
    stated = works_at(graph, tenant, "Acme", d(2020))
    assert stated.action == "history"
    f = graph.get_fact(tenant, inferred.fact_id)
    assert (f.source, f.confidence) == ("user_explicit", 1.0)
    assert [p.role for p in graph.fact_provenance(tenant, inferred.fact_id)] == ["assertion", "confirmation"]
    beta = works_at(graph, tenant, "Beta", d(2025), source="inferred", confidence=0.9)
    assert beta.action == "rejected" and "user_explicit" in beta.reason
    assert timeline(graph, tenant, inferred.fact_id) == [("Acme", d(2020), d(2024), "closed"),
                                                         ("Acme", d(2024), None, "current")]
    # an earlier stint that ended before it says nothing of the later fact
    old = works_at(graph, tenant, "Acme", d(2010), valid_to=d(2012), source="user_confirmed")
    assert old.action == "history"
    assert [p.role for p in graph.fact_provenance(tenant, inferred.fact_id)] == ["assertion", "confirmation"]
    # a multi-valued value too: the friend the user says they know since 2019 is theirs
    def knows(when, **kw):
        return graph.assert_fact(tenant, FactIn(subject=DANA, predicate="KNOWS", object=EntityRef(
            kind="Person", name="Friend Two"), valid_from=when, episode_id=ep(graph, tenant, when), **kw))
    later = knows(d(2023), source="inferred", confidence=0.7)
    assert knows(d(2019)).action == "history"
    assert graph.get_fact(tenant, later.fact_id).source == "user_explicit"


def test_a_multi_valued_fact_from_an_earlier_start_is_history_not_a_second_open_fact(graph, tenant):
    """Found by a helper: KNOWS Friend One from 2023, then from 2022, made two open facts (the neighbourhood
    listed the friend twice). The earlier start is history up to the stored fact's start, as for single-valued
    predicates."""
    def knows(when, **kw):
        return graph.assert_fact(tenant, FactIn(subject=DANA, predicate="KNOWS", object=EntityRef(
            kind="Person", name="Friend One"), valid_from=when, episode_id=ep(graph, tenant, when), **kw))
    first = knows(d(2023))
    earlier = knows(d(2022))
    assert earlier.action == "history"
    dana = graph.find_entities(tenant, "dana scully")[0]
    now = graph.facts_about(tenant, dana.id, predicates=["KNOWS"])
    assert [f.id for f in now] == [first.fact_id]
    assert [f.id for f in graph.facts_about(tenant, dana.id, as_of=d(2022, 6), predicates=["KNOWS"])] == [
        earlier.fact_id]
    assert timeline(graph, tenant, first.fact_id) == [("Friend One", d(2022), d(2023), "closed"),
                                                      ("Friend One", d(2023), None, "current")]
    # one that ends before the stored one starts is history as it was given
    short = knows(d(2019), valid_to=d(2020))
    assert short.action == "created" and graph.get_fact(tenant, short.fact_id).valid_to == d(2020)


def test_corrections_of_one_fact_sent_at_once_correct_it_once(graph, tenant):
    """Found by a helper: of 6 corrections of one fact sent at once, two could succeed (two replacement facts, one
    of them closed at its own start). The first wins; the others find it corrected."""
    import threading

    from graphmem.errors import InvalidInput
    title = graph.assert_fact(tenant, FactIn(subject=DANA, predicate="HAS_TITLE", value="Dev", valid_from=d(2020),
                                             episode_id=ep(graph, tenant, d(2020))))
    eps = [ep(graph, tenant, d(2024), f"it was Title{i}") for i in range(6)]
    results, gate = [], threading.Barrier(6)

    def fix(i):
        gate.wait()
        try:
            results.append(graph.correct(tenant, title.fact_id, eps[i], value=f"Title{i}").action)
        except InvalidInput as exc:
            results.append(exc.field)
    threads = [threading.Thread(target=fix, args=(i,)) for i in range(6)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert sorted(results) == ["corrected"] + ["fact_id"] * 5, results
    dana = graph.get_fact(tenant, title.fact_id).subject_id
    [now] = graph.facts_about(tenant, dana, predicates=["HAS_TITLE"], include_superseded=True)
    assert now.value.startswith("Title") and (now.valid_from, now.valid_to) == (d(2020), None)   # no zero-length one


def test_single_valued_new_object_supersedes(graph, tenant):
    a = works_at(graph, tenant, "Acme", d(2020))
    b = works_at(graph, tenant, "Globex", d(2022, 3))
    assert b.action == "superseded" and b.closed_fact_id == a.fact_id
    assert timeline(graph, tenant, b.fact_id) == [
        ("Acme", d(2020), d(2022, 3), "closed"), ("Globex", d(2022, 3), None, "current")]
    hist = graph.fact_history(tenant, b.fact_id)
    dana = graph.find_entities(tenant, "dana scully")[0]
    current = graph.facts_about(tenant, dana.id, predicates=["WORKS_AT"])
    assert [f.id for f in current] == [b.fact_id]
    past = graph.facts_about(tenant, dana.id, as_of=d(2021), predicates=["WORKS_AT"])
    assert [f.id for f in past] == [a.fact_id]
    assert hist[0].id == a.fact_id


def test_an_episode_that_asserted_a_fact_and_retracts_it_keeps_both_records(graph, tenant):
    """Provenance is one edge per (fact, episode) for support and one per other role: an episode's retraction of a
    fact it asserted is recorded beside the assertion, and an episode that retracted a fact and then states it
    again supports it (helper-found: the first edge's role stayed, so erasing the other asserting episode took
    the fact although this one had asserted it)."""
    e1 = ep(graph, tenant, d(2023), "Dana prefers email")
    pref = graph.assert_fact(tenant, FactIn(subject=DANA, predicate="PREFERS_CHANNEL", value="email",
                                            episode_id=e1, valid_from=d(2023)))
    dana = graph.get_fact(tenant, pref.fact_id).subject_id
    assert graph.retract(tenant, dana, "PREFERS_CHANNEL", e1, value="email", at=d(2023, 6)) == [pref.fact_id]
    assert [(p.episode_id, p.role) for p in graph.fact_provenance(tenant, pref.fact_id)] == \
        [(e1, "assertion"), (e1, "retraction")]

    e4, e5 = ep(graph, tenant, d(2024), "Dana: use sms"), ep(graph, tenant, d(2024, 2), "no, sms after all")
    sms = graph.assert_fact(tenant, FactIn(subject=DANA, predicate="PREFERS_CHANNEL", value="sms",
                                           episode_id=e4, valid_from=d(2024)))
    assert graph.retract(tenant, dana, "PREFERS_CHANNEL", e5, value="sms", at=d(2024, 6)) == [sms.fact_id]
    again = graph.assert_fact(tenant, FactIn(subject=DANA, predicate="PREFERS_CHANNEL", value="sms",
                                             episode_id=e5, valid_from=d(2024, 2)))
    assert again.action == "duplicate" and again.fact_id == sms.fact_id
    assert [(p.episode_id, p.role) for p in graph.fact_provenance(tenant, sms.fact_id)] == \
        [(e4, "assertion"), (e5, "retraction"), (e5, "confirmation")]
    # said again by the same episode: nothing new
    graph.assert_fact(tenant, FactIn(subject=DANA, predicate="PREFERS_CHANNEL", value="sms", episode_id=e5,
                                     valid_from=d(2024, 2)))
    assert len(graph.fact_provenance(tenant, sms.fact_id)) == 3


def test_out_of_order_is_history_and_current_stays(graph, tenant):
    cur = works_at(graph, tenant, "Globex", d(2022))
    old = works_at(graph, tenant, "Initech", d(2015))
    assert old.action == "history"
    assert timeline(graph, tenant, cur.fact_id) == [
        ("Initech", d(2015), d(2022), "closed"), ("Globex", d(2022), None, "current")]
    mid = works_at(graph, tenant, "Acme", d(2018))     # lands inside Initech's interval
    assert mid.action == "history"
    assert timeline(graph, tenant, cur.fact_id) == [
        ("Initech", d(2015), d(2018), "closed"), ("Acme", d(2018), d(2022), "closed"),
        ("Globex", d(2022), None, "current")]


def test_retraction_closes_and_keeps_history(graph, tenant):
    pref = graph.assert_fact(tenant, FactIn(subject=DANA, predicate="PREFERS_CHANNEL", value="email",
                                            episode_id=ep(graph, tenant, d(2023)), valid_from=d(2023)))
    dana = graph.get_fact(tenant, pref.fact_id).subject_id
    closed = graph.retract(tenant, dana, "PREFERS_CHANNEL", ep(graph, tenant, d(2024), "I no longer want email"),
                           value="email")
    assert closed == [pref.fact_id]
    f = graph.get_fact(tenant, pref.fact_id)
    assert (f.status, f.valid_to) == ("retracted", d(2024))
    assert graph.facts_about(tenant, dana, predicates=["PREFERS_CHANNEL"]) == []
    assert [p.role for p in graph.fact_provenance(tenant, pref.fact_id)] == ["assertion", "retraction"]
    with pytest.raises(NotFound):
        graph.retract(tenant, dana, "PREFERS_CHANNEL", ep(graph, tenant, d(2025)), value="email")


def test_late_value_inside_a_retracted_interval_ends_at_the_retraction(graph, tenant):
    """Title CTO from 2020, retracted in 2022 (no title since); a late "VP from 2021" is history that ends in 2022."""
    def title(value, when):
        return graph.assert_fact(tenant, FactIn(subject=DANA, predicate="HAS_TITLE", value=value, valid_from=when,
                                                episode_id=ep(graph, tenant, when)))
    cto = title("CTO", d(2020))
    dana = graph.get_fact(tenant, cto.fact_id).subject_id
    graph.retract(tenant, dana, "HAS_TITLE", ep(graph, tenant, d(2022), "no title any more"))
    late = title("VP", d(2021))
    assert timeline(graph, tenant, late.fact_id) == [
        ("CTO", d(2020), d(2021), "closed"), ("VP", d(2021), d(2022), "retracted")]
    assert graph.facts_about(tenant, dana, predicates=["HAS_TITLE"]) == []
    assert [f.value for f in graph.facts_about(tenant, dana, as_of=d(2021, 6), predicates=["HAS_TITLE"])] == ["VP"]


def test_late_value_inside_a_retraction_of_another_value_stays_open(graph, tenant):
    """Email preferred from 2020; "I no longer want email" in 2024; then a late "SMS from 2022": the retraction
    was of email, not of every channel, so SMS (which ended email in 2022) is the current preference. Found by a
    helper: SMS took email's retraction and came back retracted in 2024, leaving no preference."""
    def channel(value, when):
        return graph.assert_fact(tenant, FactIn(subject=DANA, predicate="PREFERS_CHANNEL", value=value,
                                                valid_from=when, episode_id=ep(graph, tenant, when)))
    email = channel("email", d(2020))
    dana = graph.get_fact(tenant, email.fact_id).subject_id
    graph.retract(tenant, dana, "PREFERS_CHANNEL", ep(graph, tenant, d(2024), "stop emailing me"), value="email")
    sms = channel("sms", d(2022))
    assert timeline(graph, tenant, sms.fact_id) == [
        ("email", d(2020), d(2022), "closed"), ("sms", d(2022), None, "current")]
    assert [f.value for f in graph.facts_about(tenant, dana, predicates=["PREFERS_CHANNEL"])] == ["sms"]


def test_a_correction_keeps_the_retraction_of_the_value_it_corrects(graph, tenant):
    """Email from 2020, no channel since 2024 (retracted), then corrected: it was phone, not email. The corrected
    fact is retracted in 2024 too, so a late "SMS from 2022" still ends there. Found by a helper: the correction
    came back `closed`, and SMS stayed current past the retraction."""
    def channel(value, when):
        return graph.assert_fact(tenant, FactIn(subject=DANA, predicate="PREFERS_CHANNEL", value=value,
                                                valid_from=when, episode_id=ep(graph, tenant, when)))
    email = channel("email", d(2020))
    dana = graph.get_fact(tenant, email.fact_id).subject_id
    graph.retract(tenant, dana, "PREFERS_CHANNEL", ep(graph, tenant, d(2024), "no channel any more"))
    phone = graph.correct(tenant, email.fact_id, ep(graph, tenant, d(2024, 2), "it was phone"), value="phone")
    wrong = ("email", d(2020), d(2024), "corrected")
    assert timeline(graph, tenant, phone.fact_id) == [wrong, ("phone", d(2020), d(2024), "retracted")]
    sms = channel("sms", d(2022))
    assert timeline(graph, tenant, sms.fact_id) == [
        wrong, ("phone", d(2020), d(2022), "closed"), ("sms", d(2022), d(2024), "retracted")]
    assert graph.facts_about(tenant, dana, predicates=["PREFERS_CHANNEL"]) == []


def test_correcting_a_retracted_value_into_one_already_held_leaves_that_one_be(graph, tenant):
    """Interests golf (2020) and tennis (2021); tennis retracted in 2024; then "it was golf, not tennis": the
    correction is a duplicate of golf, which nobody retracted, so golf stays current. Found by a helper: golf came
    back retracted."""
    def interest(value, when):
        return graph.assert_fact(tenant, FactIn(subject=DANA, predicate="INTERESTED_IN", value=value,
                                                valid_from=when, episode_id=ep(graph, tenant, when)))
    golf, tennis = interest("golf", d(2020)), interest("tennis", d(2021))
    dana = graph.get_fact(tenant, golf.fact_id).subject_id
    graph.retract(tenant, dana, "INTERESTED_IN", ep(graph, tenant, d(2024), "no more tennis"), value="tennis")
    out = graph.correct(tenant, tennis.fact_id, ep(graph, tenant, d(2024, 2), "it was golf"), value="golf")
    assert out.fact_id == golf.fact_id
    g = graph.get_fact(tenant, golf.fact_id)
    assert (g.status, g.valid_to) == ("current", None)


def test_inferred_never_supersedes_explicit(graph, tenant):
    a = works_at(graph, tenant, "Acme", d(2020))
    b = works_at(graph, tenant, "Globex", d(2021), source="inferred", confidence=0.95)
    assert b.action == "rejected" and "inferred" in b.reason
    assert timeline(graph, tenant, a.fact_id) == [("Acme", d(2020), None, "current")]


def test_low_confidence_inference_never_supersedes_higher(graph, tenant):
    a = works_at(graph, tenant, "Acme", d(2020), source="inferred", confidence=0.9)
    low = works_at(graph, tenant, "Globex", d(2021), source="inferred", confidence=0.5)
    assert low.action == "rejected"
    explicit = works_at(graph, tenant, "Globex", d(2021))     # an explicit statement beats the inference
    assert explicit.action == "superseded" and explicit.closed_fact_id == a.fact_id


def test_multi_valued_never_closes(graph, tenant):
    for name in ("Fox Mulder", "Walter Skinner", "Fox Mulder"):
        graph.assert_fact(tenant, FactIn(subject=DANA, predicate="KNOWS", object=EntityRef(kind="Person", name=name),
                                         episode_id=ep(graph, tenant, d(2020))))
    dana = graph.find_entities(tenant, "Dana Scully", "Person")[0]
    knows = graph.facts_about(tenant, dana.id, predicates=["KNOWS"])
    assert sorted(f.statement for f in knows) == ["Dana Scully knows Fox Mulder", "Dana Scully knows Walter Skinner"]
    assert all(f.status == "current" for f in knows)


def test_correction_is_a_supersession_and_known_at_sees_the_old_belief(graph, tenant):
    title = graph.assert_fact(tenant, FactIn(subject=DANA, predicate="HAS_TITLE", value="Agnet",
                                             valid_from=d(2020), episode_id=ep(graph, tenant, d(2020))))
    before = datetime.now(UTC)
    fix = graph.correct(tenant, title.fact_id, ep(graph, tenant, d(2020, 2), "it's Agent"), value="Agent")
    dana = graph.get_fact(tenant, title.fact_id).subject_id
    now_titles = graph.facts_about(tenant, dana, predicates=["HAS_TITLE"])
    assert [(f.value, f.valid_from, f.source) for f in now_titles] == [("Agent", d(2020), "user_explicit")]
    then_titles = graph.facts_about(tenant, dana, predicates=["HAS_TITLE"], known_at=before)
    assert [(f.value, f.status) for f in then_titles] == [("Agnet", "current")]   # not yet corrected then
    hist = graph.fact_history(tenant, fix.fact_id)
    assert [(f.value, f.status) for f in hist] == [("Agnet", "corrected"), ("Agent", "current")]


def test_known_at_does_not_see_a_later_closing(graph, tenant):
    a = works_at(graph, tenant, "Acme", d(2020))
    mid = datetime.now(UTC)
    works_at(graph, tenant, "Globex", d(2021))
    dana = graph.get_fact(tenant, a.fact_id).subject_id
    # As known before Globex was recorded, Dana still worked at Acme in 2022.
    assert [f.id for f in graph.facts_about(tenant, dana, as_of=d(2022), known_at=mid,
                                           predicates=["WORKS_AT"])] == [a.fact_id]


def test_values_starting_at_the_same_instant_leave_one_current(graph, tenant):
    """Three employers with one valid_from (say a CRM import that stamps them all with the import day): each
    supersedes the one before, so one is current, never two (a fact closed at its own start holds no instant)."""
    outs = [works_at(graph, tenant, org, d(2024)) for org in ("Alpha", "Beta", "Gamma")]
    assert [o.action for o in outs] == ["created", "superseded", "superseded"]
    # the caller is told that the value closed now holds for no time (helper-found: nothing said so, and the API
    # refuses such an interval as input)
    assert [o.reason for o in outs] == [None, SAME_START, SAME_START]
    dana = graph.get_fact(tenant, outs[0].fact_id).subject_id
    current = graph.facts_about(tenant, dana, predicates=["WORKS_AT"])
    assert [f.id for f in current] == [outs[2].fact_id]
    assert [f.valid_to for f in graph.facts_about(tenant, dana, include_superseded=True, predicates=["WORKS_AT"])
            if f.id != outs[2].fact_id] == [d(2024), d(2024)]


def test_known_at_keeps_the_end_believed_before_late_history_moved_it(graph, db, tenant):
    """Hooli (2016), then Globex (2021) closes it at 2021; later Initech (2019) arrives and moves Hooli's end to
    2019. As known between the two, Dana worked at Hooli until 2021, not at two places at once (facts and paths)."""
    from graphmem.recall.service import RecallService

    hooli = works_at(graph, tenant, "Hooli", d(2016))
    first = datetime.now(UTC)
    globex = works_at(graph, tenant, "Globex", d(2021))
    between = datetime.now(UTC)
    initech = works_at(graph, tenant, "Initech", d(2019))
    dana = graph.get_fact(tenant, hooli.fact_id).subject_id

    def ids(as_of, known_at):
        return {f.id for f in graph.facts_about(tenant, dana, as_of=as_of, known_at=known_at, predicates=["WORKS_AT"])}
    assert ids(d(2024), first) == {hooli.fact_id}
    assert ids(d(2024), between) == {globex.fact_id}
    assert ids(d(2020), between) == {hooli.fact_id}       # Initech was not known yet, Hooli ran until 2021
    assert ids(d(2020), None) == {initech.fact_id}
    assert ids(d(2024), None) == {globex.fact_id}
    moved = graph.get_fact(tenant, hooli.fact_id)
    assert (moved.valid_to, moved.prior_valid_to) == (d(2019), d(2021)) and moved.closed_at < between < moved.reclosed_at

    def seen(as_of, known_at):   # each fact as it was believed then
        return [(f.id, f.valid_to, f.status) for f in graph.facts_about(tenant, dana, as_of=as_of, known_at=known_at,
                                                                          predicates=["WORKS_AT"])]
    assert seen(d(2024), first) == [(hooli.fact_id, None, "current")]
    assert seen(d(2020), between) == [(hooli.fact_id, d(2021), "closed")]
    assert seen(d(2024), None) == [(globex.fact_id, None, "current")]
    recall = RecallService(db, graph)

    def walked(as_of, known_at):   # the hop's fact on a path, as believed then
        return [(p.target.name, p.hops[0].fact.id, p.hops[0].fact.valid_to)
                for p in recall.paths_around(tenant, dana, max_hops=1, as_of=as_of, known_at=known_at)]
    assert walked(d(2020), between) == [("Hooli", hooli.fact_id, d(2021))]
    assert walked(d(2018), None) == [("Hooli", hooli.fact_id, d(2019))]
    assert walked(d(2018), first) == [("Hooli", hooli.fact_id, None)]


def test_known_at_shows_the_status_believed_before_a_retraction_or_late_history(graph, tenant):
    """Closed by a successor, then retracted later: before the retraction it reads closed. Retracted, then moved
    by late history: before the move it reads retracted."""
    hooli = works_at(graph, tenant, "Hooli", d(2016))
    works_at(graph, tenant, "Globex", d(2021))
    dana = graph.get_fact(tenant, hooli.fact_id).subject_id
    before = datetime.now(UTC)
    graph.retract(tenant, dana, "WORKS_AT", ep(graph, tenant, d(2024), "never worked at Hooli after 2019"),
                  at=d(2019))

    def status(known_at):
        return [(f.valid_to, f.status) for f in graph.facts_about(tenant, dana, known_at=known_at,
                                                                  include_superseded=True, predicates=["WORKS_AT"])
                if f.id == hooli.fact_id]
    assert status(before) == [(d(2021), "closed")]
    assert status(None) == [(d(2019), "retracted")]


def test_sensitive_inferred_fact_is_held_as_candidate(graph, tenant):
    out = graph.assert_fact(tenant, FactIn(subject=DANA, predicate="HAS_HEALTH_CONDITION", value="migraine",
                                           source="inferred", confidence=0.9, episode_id=ep(graph, tenant, d(2020))))
    assert out.action == "candidate"
    dana = graph.find_entities(tenant, "Dana Scully")[0]
    assert graph.facts_about(tenant, dana.id) == []
    assert graph.get_fact(tenant, out.fact_id).status == "candidate"


def test_bulk_applies_the_same_rules_in_order(graph, tenant):
    e = ep(graph, tenant, d(2020))
    orgs = ["Acme", "Globex", "Initech", "Acme"]
    facts = [FactIn(subject=DANA, predicate="WORKS_AT", object=EntityRef(kind="Organization", name=o),
                    valid_from=d(2020 + i), episode_id=e) for i, o in enumerate(orgs)]
    facts.insert(2, FactIn(subject=DANA, predicate="WORKS_AT", object=EntityRef(kind="Organization", name="Globex"),
                           valid_from=d(2021, 6), episode_id=e))         # duplicate within the batch
    out = graph.assert_facts(tenant, facts)
    assert [o.action for o in out] == ["created", "superseded", "duplicate", "superseded", "superseded"]
    assert timeline(graph, tenant, out[-1].fact_id) == [
        ("Acme", d(2020), d(2021), "closed"), ("Globex", d(2021), d(2022), "closed"),
        ("Initech", d(2022), d(2023), "closed"), ("Acme", d(2023), None, "current")]


def supersedes_links(db, tenant):
    with db.driver.session() as s:
        rows = s.run("MATCH (n:Fact {tenant_id: $t})-[:SUPERSEDES]->(o:Fact) "
                     "MATCH (n)-[:OBJECT]->(a), (o)-[:OBJECT]->(b) RETURN a.name AS newer, b.name AS older",
                     t=tenant).data()
    return sorted((r["newer"], r["older"]) for r in rows)


def test_out_of_order_within_one_batch_links_like_separate_calls(graph, db, tenant):
    """A value that lands between two values asserted earlier in the same batch replaces their link, exactly as if
    the three had come in three calls (the link made earlier in the batch must not survive)."""
    e = ep(graph, tenant, d(2020))
    facts = [FactIn(subject=DANA, predicate="WORKS_AT", object=EntityRef(kind="Organization", name=o),
                    valid_from=when, episode_id=e) for o, when in [("Acme", d(2015)), ("Globex", d(2022)),
                                                                    ("Initech", d(2018))]]
    out = graph.assert_facts(tenant, facts)
    assert [o.action for o in out] == ["created", "superseded", "history"]
    assert timeline(graph, tenant, out[1].fact_id) == [
        ("Acme", d(2015), d(2018), "closed"), ("Initech", d(2018), d(2022), "closed"),
        ("Globex", d(2022), None, "current")]
    assert supersedes_links(db, tenant) == [("Globex", "Initech"), ("Initech", "Acme")]


def test_out_of_order_across_calls_links(graph, db, tenant):
    works_at(graph, tenant, "Acme", d(2015))
    works_at(graph, tenant, "Globex", d(2022))
    works_at(graph, tenant, "Initech", d(2018))
    assert supersedes_links(db, tenant) == [("Globex", "Initech"), ("Initech", "Acme")]


def test_a_retraction_of_the_whole_predicate_outlives_an_earlier_end_given_later(graph, tenant):
    """Found by a helper: "no employer since 2023" (a retraction of WORKS_AT), then "Acme until 2022" (a duplicate
    that closed Acme earlier) made the retraction forgotten: Beta from mid-2022, arriving later, stayed open. It
    ends in 2023, retracted, as it did without the duplicate."""
    acme = works_at(graph, tenant, "Acme", d(2020))
    dana = graph.get_fact(tenant, acme.fact_id).subject_id
    graph.retract(tenant, dana, "WORKS_AT", ep(graph, tenant, d(2023), "I have no employer now"), at=d(2023))
    assert works_at(graph, tenant, "Acme", d(2021), valid_to=d(2022)).closed_fact_id == acme.fact_id
    beta = works_at(graph, tenant, "Beta", d(2022, 6))
    b = graph.get_fact(tenant, beta.fact_id)
    assert (b.valid_to, b.status) == (d(2023), "retracted")
    assert graph.facts_about(tenant, dana, predicates=["WORKS_AT"]) == []


def test_a_symmetric_fact_stated_the_other_way_round_is_the_same_fact(graph, tenant):
    """Left alone before, now done: "Dana knows Frank" and later "Frank knows Dana" were two facts, so Dana's
    neighbours listed Frank twice. KNOWS holds both ways (`symmetric`): the second is a duplicate of the first
    (provenance added), one from an earlier start is history, and a retraction from either end closes the pair's
    fact. REPORTS_TO is one way: the reverse is a fact of its own."""
    frank = EntityRef(kind="Person", name="Frank Wu")

    def say(subject, predicate, obj, when, **kw):
        return graph.assert_fact(tenant, FactIn(subject=subject, predicate=predicate, object=obj, valid_from=when,
                                                episode_id=ep(graph, tenant, when), **kw))
    first = say(DANA, "KNOWS", frank, d(2022))
    again = say(frank, "KNOWS", DANA, d(2023), source="user_confirmed")
    assert (again.action, again.fact_id) == ("duplicate", first.fact_id)
    dana_id = graph.get_fact(tenant, first.fact_id).subject_id
    frank_id = graph.get_fact(tenant, first.fact_id).object_id
    for who in (dana_id, frank_id):
        assert [f.id for f in graph.facts_about(tenant, who, predicates=["KNOWS"])] == [first.fact_id]
    assert [p.occurred_at for p in graph.fact_provenance(tenant, first.fact_id)] == [d(2022), d(2023)]
    # the same pair from an earlier start, stated from Frank's end: history up to the stored fact's start
    earlier = say(frank, "KNOWS", DANA, d(2020), valid_to=d(2021, 6))
    older = say(frank, "KNOWS", DANA, d(2021, 9))
    assert earlier.action == "created" and older.action == "history"
    assert graph.get_fact(tenant, older.fact_id).valid_to == d(2022)
    # the pair's history, stated from either end, is one timeline whichever fact it is read from
    pair = [earlier.fact_id, older.fact_id, first.fact_id]
    for fid in pair:
        assert [f.id for f in graph.fact_history(tenant, fid)] == pair
    assert [f.id for f in graph.facts_about(tenant, dana_id, predicates=["KNOWS"])] == [first.fact_id]
    # one way only: Frank reports to Dana and Dana to Frank are two facts (and a single-valued timeline each)
    up = say(frank, "REPORTS_TO", DANA, d(2022))
    down = say(DANA, "REPORTS_TO", frank, d(2023))
    assert up.action == down.action == "created" and up.fact_id != down.fact_id
    # "Frank no longer knows Dana": the pair's fact, stored from Dana's end, is retracted; Dana keeps other friends
    sam = say(DANA, "KNOWS", EntityRef(kind="Person", name="Sam Me"), d(2022))
    closed = graph.retract(tenant, frank_id, "KNOWS", ep(graph, tenant, d(2024), "Frank: I no longer know Dana"),
                           object_id=dana_id)
    assert closed == [first.fact_id]
    gone = graph.get_fact(tenant, first.fact_id)
    assert (gone.status, gone.valid_to) == ("retracted", d(2024))
    assert [f.id for f in graph.facts_about(tenant, dana_id, predicates=["KNOWS"])] == [sam.fact_id]
    # a retraction of the whole predicate by one end closes the facts stored from the other end too
    ann = say(EntityRef(kind="Person", name="Ann Lee"), "KNOWS", frank, d(2023))
    mine = say(frank, "KNOWS", EntityRef(kind="Person", name="Bo Chan"), d(2023))
    closed = graph.retract(tenant, frank_id, "KNOWS", ep(graph, tenant, d(2025), "Frank: I know nobody here"))
    assert sorted(closed) == sorted([ann.fact_id, mine.fact_id])
    assert graph.facts_about(tenant, frank_id, predicates=["KNOWS"]) == []
    assert [f.id for f in graph.facts_about(tenant, dana_id, predicates=["KNOWS"])] == [sam.fact_id]
    # both ways in one batch, between two people new to the graph: one fact
    kim, lou = EntityRef(kind="Person", name="Kim Ode"), EntityRef(kind="Person", name="Lou Pry")
    e = ep(graph, tenant, d(2024))
    one, two = graph.assert_facts(tenant, [FactIn(subject=kim, predicate="KNOWS", object=lou, episode_id=e),
                                           FactIn(subject=lou, predicate="KNOWS", object=kim, episode_id=e)])
    assert (one.action, two.action, two.fact_id) == ("created", "duplicate", one.fact_id)


def test_a_retraction_of_a_symmetric_predicate_closes_the_facts_naming_a_hub_as_object(graph, tenant):
    """Found by a helper: "Hub knows nobody any more" closed Hub's 1000 own KNOWS facts but not "Late knows Hub":
    the facts naming the subject as object were read as one page of 1000 facts about it, its own first."""
    hub = EntityRef(kind="Person", name="Hub Person")
    e = ep(graph, tenant, d(2020))
    out = graph.assert_facts(tenant, [FactIn(subject=hub, predicate="KNOWS", object=EntityRef(kind="Person",
                                                                                               name=f"Spoke {i}"),
                                             valid_from=d(2020), episode_id=e) for i in range(1000)])
    late = graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Late Friend"), predicate="KNOWS",
                                            object=hub, valid_from=d(2021), episode_id=ep(graph, tenant, d(2021))))
    hub_id = graph.get_fact(tenant, out[0].fact_id).subject_id
    closed = graph.retract(tenant, hub_id, "KNOWS", ep(graph, tenant, d(2024), "Hub: I know nobody here"))
    assert len(closed) == 1001 and late.fact_id in closed
    assert graph.get_fact(tenant, late.fact_id).status == "retracted"


def test_a_recorded_clear_ends_a_late_older_value_of_either_cardinality():
    """`decide` with `clears` (a CRM field set to null, recorded even when it closed nothing): a new fact that starts
    before a clear and would run past it ends there, retracted; one starting at or after the clear is untouched; a
    multi-valued history cut by a clear does not run into (nor confirm) the later fact of its object."""
    from graphmem.temporal import Assertion, TimelineFact, decide
    mar = [d(2024, 3)]
    new = Assertion("n", "v:cto", d(2024, 2), None, 1.0, "system")
    for single in (True, False):
        got = decide([], new, single, set(), clears=mar)
        assert (got.action, got.valid_to, got.retracted) == ("created", d(2024, 3), True)
        at_clear = decide([], Assertion("n", "v:cto", d(2024, 3), None, 1.0, "system"), single, set(), clears=mar)
        assert (at_clear.valid_to, at_clear.retracted) == (None, False)
    ends_first = decide([], Assertion("n", "v:cto", d(2024, 2), d(2024, 2, 20), 1.0, "system"), True, set(),
                        clears=mar)
    assert (ends_first.valid_to, ends_first.retracted) == (d(2024, 2, 20), False)
    later = TimelineFact("l", "v:cto", d(2024, 4), None, 0.5, "inferred")
    got = decide([later], new, False, set(), clears=mar)
    assert (got.action, got.valid_to, got.retracted, got.confirms, got.strengthen) == (
        "history", d(2024, 3), True, None, None)
    got = decide([later], new, True, set(), clears=mar)
    assert (got.action, got.valid_to, got.retracted, got.confirms) == ("history", d(2024, 3), True, None)
