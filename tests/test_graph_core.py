"""Episodes, entity resolution, schema, bad input, concurrency and tenant isolation on the real Neo4j."""
from __future__ import annotations

import functools
import threading
from datetime import datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from graphmem.errors import InvalidInput, NotFound, SchemaMismatch, TenantRequired
from graphmem.models import BLANK_WORDS, EntityRef, EpisodeIn, FactIn, error_message
from graphmem.store.schema import UNKEYED as UNKEYED_PATTERN, apply_schema, schema_objects
from tests.graph_fixture import related_out_of_step, set_old_name_key, stored_keys, tenant_node_count

UTC = timezone.utc
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def msg(text, minutes=0, key=None, session="s1"):
    return EpisodeIn(content=text, occurred_at=T0 + timedelta(minutes=minutes), idempotency_key=key,
                     session_id=session, user_id="u1", role="user")


# ---- schema ---------------------------------------------------------------------------------
def test_schema_twice_changes_nothing(db, settings):
    before = [(o["name"], o["type"]) for o in schema_objects(db)]
    again = apply_schema(db, settings.embedding_dimension)
    assert [(o["name"], o["type"]) for o in schema_objects(db)] == before
    assert {o["state"] for o in schema_objects(db)} == {"ONLINE"}
    assert again["migrated"] is False
    names = {name for name, _ in before}
    assert {"entity_text", "fact_text", "episode_text", "entity_embedding", "fact_embedding",
            "alias_key_unique", "episode_idempotency_unique"} <= names


def test_dimension_change_refused_unless_migration(db, settings):
    with pytest.raises(SchemaMismatch) as err:
        apply_schema(db, settings.embedding_dimension + 1)
    assert "GRAPHMEM_ALLOW_SCHEMA_MIGRATION" in err.value.detail
    try:
        assert apply_schema(db, 8, migrate=True)["migrated"] is True
        dims = {r["name"]: r for r in schema_objects(db)}
        assert dims["fact_embedding"]["type"] == "VECTOR"
    finally:
        apply_schema(db, settings.embedding_dimension, migrate=True)


def test_schema_4_graph_gets_per_tenant_search_terms(db, settings, graph, tenant):
    """A graph written before schema 5 has no search_terms: start-up rebuilds the full-text indexes over terms it
    computes for every searchable node, and search finds the old facts, episodes and entities again."""
    from graphmem.recall.models import SearchRequest
    from graphmem.recall.service import RecallService
    from graphmem.store.fulltext import search_terms

    ep, _ = graph.append_episode(tenant, msg("Quentin Okafor signed the renewal for Zyntrex"))
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Quentin Okafor"), predicate="WORKS_AT",
                                       object=EntityRef(kind="Organization", name="Zyntrex"), episode_id=ep.id)])
    with db.driver.session(database=db.database) as s:   # what a schema-4 graph looks like
        s.run("MATCH (n) WHERE (n:Fact OR n:Episode OR n:Entity) AND n.tenant_id = $t REMOVE n.search_terms",
              t=tenant).consume()
    db.execute("meta/set_schema", version=4, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert {o["state"] for o in schema_objects(db)} == {"ONLINE"}
    with db.driver.session(database=db.database) as s:
        terms = s.run("MATCH (f:Fact {tenant_id: $t}) RETURN f.search_terms AS t", t=tenant).single()["t"]
    assert terms == search_terms(tenant, "Quentin Okafor works at Zyntrex")
    hits = RecallService(db, graph).search(tenant, SearchRequest(query="Zyntrex okafor", k=10)).hits
    assert {h.kind for h in hits} == {"fact", "episode", "entity"}


def test_schema_5_graph_gets_related_edges(db, settings, graph, tenant):
    """A graph written before schema 6 has no RELATED edges: start-up derives one per fact with an entity object,
    and multi-hop recall walks the old facts again."""
    from graphmem.recall.service import RecallService

    ep, _ = graph.append_episode(tenant, msg("Quentin Okafor works at Zyntrex and knows Ada Brun"))
    q = EntityRef(kind="Person", name="Quentin Okafor")
    graph.assert_facts(tenant, [
        FactIn(subject=q, predicate="WORKS_AT", object=EntityRef(kind="Organization", name="Zyntrex"), episode_id=ep.id),
        FactIn(subject=q, predicate="KNOWS", object=EntityRef(kind="Person", name="Ada Brun"), episode_id=ep.id),
        FactIn(subject=q, predicate="HAS_TITLE", value="CFO", episode_id=ep.id)])
    with db.driver.session(database=db.database) as s:   # what a schema-5 graph looks like
        s.run("MATCH (:Entity {tenant_id: $t})-[l:RELATED]->() DELETE l", t=tenant).consume()
    ada = graph.find_entities(tenant, "Ada Brun")[0].id
    recall = RecallService(db, graph)
    assert recall.paths_around(tenant, ada) == []
    assert related_out_of_step(db, tenant) != []
    db.execute("meta/set_schema", version=5, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert related_out_of_step(db, tenant) == []
    assert [(p.target.name, p.length) for p in recall.paths_around(tenant, ada)] == [("Quentin Okafor", 1),
                                                                                   ("Zyntrex", 2)]


def test_schema_6_graph_is_migrated_to_7(db, settings, graph, tenant):
    """Before schema 7 the episode that records an API write ("API call POST /v1/facts by key ...") was searchable
    like any other, and a closed fact's RELATED edge had no closed_at; start-up marks those records (search stops
    returning them; the facts keep them as provenance) and copies closed_at onto the edges."""
    from graphmem.recall.models import SearchRequest
    from graphmem.recall.service import RecallService
    from graphmem.store.fulltext import search_terms

    text = "API call POST /v1/facts by key k_quokka"
    record, _ = graph.append_episode(tenant, msg(text).model_copy(update={"kind": "event"}),
                                     extraction_status="skipped", extraction_reason="explicit facts",
                                     searchable=False)
    talk, _ = graph.append_episode(tenant, msg("The quokka call went well"))
    lee = EntityRef(kind="Person", name="Quokka Lee")
    [fact] = graph.assert_facts(tenant, [FactIn(subject=lee, predicate="HAS_TITLE", value="CFO", episode_id=record.id)])
    for org in ("Quokka Inc", "Wombat Ltd"):  # the second closes the first: a closed fact with a RELATED edge
        graph.assert_facts(tenant, [FactIn(subject=lee, predicate="WORKS_AT", object=EntityRef(
            kind="Organization", name=org), episode_id=talk.id)])
    recall = RecallService(db, graph)
    found = lambda: {h.id for h in recall.search(tenant, SearchRequest(query="quokka call", k=10,  # noqa: E731
                                                                       targets=["episode"])).hits}
    assert found() == {talk.id}
    with db.driver.session(database=db.database) as s:   # what a schema-6 graph looks like
        s.run("MATCH (e:Episode {id: $id}) REMOVE e.searchable SET e.search_terms = $terms", id=record.id,
              terms=search_terms(tenant, text)).consume()
        s.run("MATCH (:Entity {tenant_id: $t})-[l:RELATED]->() REMOVE l.closed_at", t=tenant).consume()
    assert found() == {talk.id, record.id}
    assert len(related_out_of_step(db, tenant)) == 1
    db.execute("meta/set_schema", version=6, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert found() == {talk.id}
    assert [p.episode_id for p in graph.fact_provenance(tenant, fact.fact_id)] == [record.id]
    assert related_out_of_step(db, tenant) == []


def test_schema_12_graph_takes_memory_records_out_of_search(db, settings, graph, tenant):
    """Before schema 13 the episode recording a user's confirmation or correction of a memory ("User corrected
    memory <id>: phone") was searchable, and came first for many queries; start-up marks those records, and leaves
    a user's own words that start the same way alone when they are not such a record."""
    from graphmem.recall.models import SearchRequest
    from graphmem.recall.service import RecallService

    records = [graph.append_episode(tenant, msg(text).model_copy(update={"kind": "event"}),
                                    extraction_status="skipped", extraction_reason="explicit facts")[0].id
               for text in ("User corrected memory f1: phone", "User confirmed memory f2")]
    said, _ = graph.append_episode(tenant, msg("User corrected memory settings on the phone"))
    recall = RecallService(db, graph)
    found = lambda: {h.id for h in recall.search(tenant, SearchRequest(query="user memory phone", k=10,  # noqa: E731
                                                                       targets=["episode"])).hits}
    assert found() == {*records, said.id}
    db.execute("meta/set_schema", version=12, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert found() == {said.id}


def test_schema_7_graph_is_migrated_to_8(db, settings, graph, tenant):
    """Before schema 8 an episode sent without a user_id into a user's session stayed without one (a search scoped
    to the user missed it); start-up gives it the session's user."""
    first, _ = graph.append_episode(tenant, msg("Wombat budget approved"))             # session s1 of user u1
    later, _ = graph.append_episode(tenant, msg("Wombat rollout next week").model_copy(update={"user_id": None}))
    assert graph.get_episode(tenant, later.id).user_id == first.user_id == "u1"
    with db.driver.session(database=db.database) as s:   # what a schema-7 graph looks like
        s.run("MATCH (e:Episode {id: $id}) REMOVE e.user_id", id=later.id).consume()
    assert graph.get_episode(tenant, later.id).user_id is None
    db.execute("meta/set_schema", version=7, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert graph.get_episode(tenant, later.id).user_id == "u1"


def stored_terms(db, tenant: str) -> dict[str, tuple[str, str | None]]:
    """Each searchable node's id -> (its text, its search_terms) in `tenant`."""
    with db.driver.session(database=db.database) as s:
        return {r["id"]: (r["text"], r["terms"]) for r in s.run(
            "MATCH (n) WHERE (n:Fact OR n:Episode OR n:Entity) AND n.tenant_id = $t RETURN n.id AS id, "
            "coalesce(n.statement, n.content, n.search_text) AS text, n.search_terms AS terms", t=tenant)}


def test_schema_8_graph_gets_terms_of_curly_apostrophes_folded(db, settings, graph, tenant):
    """Before schema 9 a curly apostrophe split a word in stored terms ("O’Hara" was "o" and "hara"); queries now
    fold it to the straight one ("o'hara"), so start-up recomputes the terms of every searchable node whose text
    holds one, tenant by tenant in batches, and search finds them again. Other nodes, and an episode kept out of
    search, are left as they are."""
    from graphmem.recall.models import SearchRequest
    from graphmem.recall.service import RecallService
    from graphmem.store.fulltext import search_terms
    from graphmem.store.schema import refold_search_terms

    ep, _ = graph.append_episode(tenant, msg("Fionnuala O\u2019Hara joined Quillfeather"))
    hidden, _ = graph.append_episode(tenant, msg("API call by O\u2019Hara").model_copy(update={"kind": "event"}),
                                     extraction_status="skipped", searchable=False)
    plain, _ = graph.append_episode(tenant, msg("Quillfeather renewal"))
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Fionnuala O\u2018Hara"),
                                       predicate="WORKS_AT", object=EntityRef(kind="Organization",
                                                                              name="Quillfeather"),
                                       episode_id=ep.id)])
    recall = RecallService(db, graph)

    def terms():
        return stored_terms(db, tenant)

    def age():   # what a schema-8 graph holds: the old tokenizer split words at a curly apostrophe
        with db.driver.session(database=db.database) as s:
            for nid, (text, t) in terms().items():
                if t is not None and ("\u2019" in text or "\u2018" in text):
                    s.run("MATCH (n {id: $id}) SET n.search_terms = $terms", id=nid,
                          terms=search_terms(tenant, text.replace("\u2019", " ").replace("\u2018", " "))).consume()

    def found():
        return {h.kind for h in recall.search(tenant, SearchRequest(query="O'Hara", k=10)).hits}

    expected = terms()
    assert found() == {"fact", "episode", "entity"}
    age()
    aged = terms()
    assert aged != expected and aged[hidden.id][1] is None and aged[plain.id] == expected[plain.id]
    assert found() == set()
    db.execute("meta/set_schema", version=8, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert terms() == expected and found() == {"fact", "episode", "entity"}
    age()
    assert refold_search_terms(db, batch=1) >= 3 and terms() == expected   # one node a transaction, every one


def age_terms(db, terms, old_terms) -> None:
    """Give every searchable node of `terms()` (`stored_terms`) the terms `old_terms(text)`: what an older schema
    wrote (test-only raw write)."""
    with db.driver.session(database=db.database) as s:
        for nid, (text, _) in terms().items():
            s.run("MATCH (n {id: $id}) SET n.search_terms = $terms", id=nid, terms=old_terms(text)).consume()


def assert_terms_migrate(db, settings, version: int, pattern: str, terms, expected, found, hits, age) -> None:
    """A graph recorded at schema `version` with aged terms (`age`) gets `expected` back at start-up (`found()`
    then finds `hits` again), and so does `refold_search_terms` with `pattern`, one node a transaction."""
    from graphmem.store.schema import refold_search_terms
    db.execute("meta/set_schema", version=version, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert terms() == expected and found() == hits
    age()
    assert refold_search_terms(db, batch=1, pattern=pattern) >= 3 and terms() == expected


def matched(db, pattern: str, texts) -> dict[str, bool]:
    """Each of `texts` -> whether the Java regular expression `pattern` (Cypher's =~) matches it: which text a
    migration reads again."""
    with db.driver.session(database=db.database) as s:
        return {t: s.run("RETURN $t =~ $p AS m", t=t, p=pattern).single()["m"] for t in texts}


def knows_fionn(graph, tenant: str, said: str, name: str):
    """An episode saying `said` and the fact it gives, Person `name` KNOWS Person "Fionn Byrne"; returns the
    episode."""
    ep, _ = graph.append_episode(tenant, msg(said))
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name=name), predicate="KNOWS",
                                       object=EntityRef(kind="Person", name="Fionn Byrne"), episode_id=ep.id)])
    return ep


def test_schema_17_graph_gets_the_joined_terms_of_names_with_an_apostrophe(db, settings, graph, tenant):
    """Since schema 18 a word with an inner apostrophe that is no English possessive or contraction is also indexed
    without it ("O'Neil" as "o'neil" and "oneil"), so that "ONeil" finds it. Start-up recomputes the terms of the
    searchable nodes whose text holds such a word (straight, curly or modifier-letter apostrophe), tenant by tenant
    in batches; text without one ("Dana's car" included) is not read again."""
    from graphmem.recall.models import SearchRequest
    from graphmem.recall.service import RecallService
    from graphmem.store.fulltext import INDEX_STOP_WORDS, search_terms, words
    from graphmem.store.schema import JOINED, refold_search_terms

    knows_fionn(graph, tenant, "Niamh O\u2019Neil knows Fionn Byrne", "Niamh O'Neil")
    possessive, _ = graph.append_episode(tenant, msg("Dana's car isn't here"))
    recall = RecallService(db, graph)
    terms = functools.partial(stored_terms, db, tenant)

    def age():   # what a schema-17 graph holds: the words with an apostrophe only as they are written
        with db.driver.session(database=db.database) as s:
            for nid, (_, t) in terms().items():
                s.run("MATCH (n {id: $id}) SET n.search_terms = $terms", id=nid,
                      terms=" ".join(w for w in t.split() if not w.endswith("_oneil"))).consume()

    def found():
        return {h.kind for h in recall.search(tenant, SearchRequest(query="ONeil", k=10)).hits}

    expected = terms()
    assert found() == {"fact", "episode", "entity"}
    age()
    aged = terms()
    assert aged != expected and aged[possessive.id] == expected[possessive.id]
    assert found() == set()
    db.execute("meta/set_schema", version=17, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert terms() == expected and found() == {"fact", "episode", "entity"}
    age()
    assert refold_search_terms(db, batch=1, pattern=JOINED) >= 3 and terms() == expected
    with db.driver.session(database=db.database) as s:   # which text the migration reads again
        read = {t: s.run("RETURN $t =~ $p AS m", t=t, p=JOINED).single()["m"] for t in (
            "O'Neil", "o\u2019neil", "D\u02bcAngelo", "L'Or\u00e9al", "Dana's car", "don't", "we'll", "it\u2019s",
            "O'S\u00e9", "no apostrophe", "rock 'n' roll")}
    assert read == {"O'Neil": True, "o\u2019neil": True, "D\u02bcAngelo": True, "L'Or\u00e9al": True,
                    "Dana's car": False, "don't": False, "we'll": False, "it\u2019s": False, "O'S\u00e9": True,
                    "no apostrophe": False, "rock 'n' roll": False}, read
    for text in read:   # every text whose terms gain a joined form is read again
        gains = len(search_terms(tenant, text).split()) > len([w for w in words(text) if w not in INDEX_STOP_WORDS])
        assert read[text] or not gains, text


def test_schema_18_graph_gets_the_terms_of_names_with_a_backtick_or_prime_apostrophe(db, settings, graph, tenant):
    """Since schema 19 a backtick or a prime (U+2032) between letters is an apostrophe to search, as it is to the name
    keys ("O`Neil", "O\u2032Neil" and "ONeil" name one entity): "ONeil" finds text that says "O`Neil" or
    "O\u2032Neil" (and "O\u02bcneil", which was an apostrophe already). Start-up recomputes the terms of the
    searchable nodes whose text holds a backtick or prime between a letter or digit and a letter or digit, tenant by
    tenant in batches; other text is not read again."""
    from graphmem.recall.models import SearchRequest
    from graphmem.recall.service import RecallService
    from graphmem.store.fulltext import search_terms

    ep = knows_fionn(graph, tenant, "Niamh O`Neil knows Fionn Byrne", "Niamh O\u2032Neil")
    modifier, _ = graph.append_episode(tenant, msg("Ciara O\u02bcneil called"))
    other, _ = graph.append_episode(tenant, msg("Dana's `car` isn't here"))
    recall = RecallService(db, graph)
    terms = functools.partial(stored_terms, db, tenant)

    def old_terms(text):   # what a schema-18 graph holds: a backtick or prime split the word
        return search_terms(tenant, text.replace("`", " ").replace("\u2032", " "))

    def age():
        age_terms(db, terms, old_terms)

    def found():
        return {(h.kind, h.id) for h in recall.search(tenant, SearchRequest(query="ONeil", k=10)).hits}

    expected = terms()
    hits = found()
    assert {k for k, _ in hits} == {"fact", "episode", "entity"} and ("episode", ep.id) in hits, hits
    assert ("episode", modifier.id) in hits, hits
    assert {h.kind for h in recall.search(tenant, SearchRequest(query="O'Neil", k=10)).hits} == \
        {"fact", "episode", "entity"}
    age()
    aged = terms()
    assert aged != expected and aged[other.id] == expected[other.id] and aged[modifier.id] == expected[modifier.id]
    assert found() == {("episode", modifier.id)}
    from graphmem.store.schema import QUOTED
    assert_terms_migrate(db, settings, 18, QUOTED, terms, expected, found, hits, age)
    read = matched(db, QUOTED, ("O`Neil", "o\u2032neil", "it`s", "`code` block", "5\u203210\u2033", "x \u2032 y",
                                "no apostrophe", "O\u02bcneil", "O'Neil", "caf\u00e9`s"))
    assert read == {"O`Neil": True, "o\u2032neil": True, "it`s": True, "`code` block": False,
                    "5\u203210\u2033": True, "x \u2032 y": False, "no apostrophe": False, "O\u02bcneil": False,
                    "O'Neil": False, "caf\u00e9`s": True}, read
    for text in read:   # every text whose terms change is read again
        assert read[text] or old_terms(text) == search_terms(tenant, text), text


def test_schema_19_graph_gets_the_terms_of_words_with_an_invisible_format_character(db, settings, graph, tenant):
    """Since schema 20 an invisible format character (a soft hyphen, a joiner, a word joiner, a byte-order mark ...:
    `graphmem.store.fulltext.INVISIBLE_FORMAT`) does not split a word for search, as it does not for the name keys:
    "Renewal" finds text that says "re\u00adnewal". Start-up recomputes the terms of the searchable nodes whose text
    holds one, tenant by tenant in batches; other text is not read again."""
    from graphmem.recall.models import SearchRequest
    from graphmem.recall.service import RecallService
    from graphmem.store.fulltext import INVISIBLE_FORMAT, search_terms
    from graphmem.store.schema import INVISIBLE

    soft = knows_fionn(graph, tenant, "Quarterly re\u00adnewal with Fionn Byrne", "Ria Re\u2060newal")
    plain, _ = graph.append_episode(tenant, msg("The renewal is due"))
    spaced, _ = graph.append_episode(tenant, msg("re\u200bnewal"))
    recall = RecallService(db, graph)
    terms = functools.partial(stored_terms, db, tenant)
    split = str.maketrans(dict.fromkeys(INVISIBLE_FORMAT, " "))
    old_terms = lambda text: search_terms(tenant, text.translate(split))  # noqa: E731 - schema 19 split the word
    age = functools.partial(age_terms, db, terms, old_terms)
    found = lambda: {(h.kind, h.id) for h in recall.search(  # noqa: E731
        tenant, SearchRequest(query="Renewal", k=10)).hits}
    expected = terms()
    hits = found()
    assert {k for k, _ in hits} == {"fact", "episode", "entity"} and {("episode", soft.id), ("episode", plain.id)} \
        <= hits and ("episode", spaced.id) not in hits, hits
    age()
    aged = terms()
    assert aged != expected and aged[plain.id] == expected[plain.id] and aged[spaced.id] == expected[spaced.id]
    assert found() == {("episode", plain.id)}
    assert_terms_migrate(db, settings, 19, INVISIBLE, terms, expected, found, hits, age)
    read = matched(db, INVISIBLE, [f"re{c}newal" for c in INVISIBLE_FORMAT] + ["re\u200bnewal", "renewal", "caf\u00e9"])
    assert read == {t: "\u200b" not in t and t not in ("renewal", "caf\u00e9") for t in read}, read
    for text in read:   # every text whose terms change is read again
        assert read[text] or old_terms(text) == search_terms(tenant, text), text


def test_search_folds_accents_fullwidth_letters_and_ligatures(db, settings, graph, tenant):
    """A name written with accents is found without them and the other way round, as are fullwidth letters and
    ligatures ("José Müller" by "jose muller", "Ｊｏｓｅ", "JOSÉ"; "Straße" by "strasse"; "Łódź" by "lodz"); marks
    that spell a word (Devanagari vowel signs) are kept in it. A schema-10 graph, whose terms kept the accents, gets its terms
    folded at start-up (only nodes with text outside ASCII are read), and search finds them again."""
    from graphmem.recall.models import SearchRequest
    from graphmem.recall.service import RecallService
    from graphmem.store.fulltext import tenant_prefix, words

    assert words("José Müller, Ｄａｎａ, ﬁnance, Straße, Łódź Ørsted") == [
        "jose", "muller", "dana", "finance", "strasse", "lodz", "orsted"]
    assert words("Дмитрий Йовович") == ["дмитрий", "йовович"]   # й keeps its breve: another letter, not an accent
    assert words("ΑΘΗΝΑ, Αθήνα, βοΐδιο") == ["αθηνα", "αθηνα", "βοιδιο"]   # Greek capitals are written unaccented
    assert words("Acme™ Corp, 3½ years") == ["acme", "tm", "corp", "3", "1", "2", "years"]   # NFKC spells apart
    assert words("CO₂ and H₂O, 5 m²") == ["co2", "and", "h2o", "5", "m2"]   # a sub- or superscript digit stays
    assert words("Ёлка, हिंदी कुत्ता") == ["елка", "हिंदी", "कुत्ता"]       # vowel signs stay inside their word
    ep, _ = graph.append_episode(tenant, msg("José Müller moved to the Łódź office on Hauptstraße"))
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="José Müller"), predicate="WORKS_AT",
                                       object=EntityRef(kind="Organization", name="Œuvre Łódź"), episode_id=ep.id)])
    recall = RecallService(db, graph)

    def found(query):
        return {h.kind for h in recall.search(tenant, SearchRequest(query=query, k=10)).hits}

    for query in ("jose muller", "José Müller", "ＪＯＳＥ", "JOSÉ MÜLLER"):
        assert found(query) == {"fact", "episode", "entity"}, query
    graph.upsert_entity(tenant, EntityRef(kind="Organization", name="Quorvex™"))
    assert {h.entity.name for h in recall.search(tenant, SearchRequest(query="quorvex", targets=["entity"])).hits} \
        == {"Quorvex™"}
    assert found("lodz") == {"fact", "episode", "entity"} and found("oeuvre") == {"fact", "entity"}
    assert found("hauptstrasse") == {"episode"}

    def terms():
        with db.driver.session(database=db.database) as s:
            return {r["id"]: r["terms"] for r in s.run(
                "MATCH (n) WHERE (n:Fact OR n:Episode OR n:Entity) AND n.tenant_id = $t "
                "RETURN n.id AS id, n.search_terms AS terms", t=tenant)}

    plain, _ = graph.append_episode(tenant, msg("plain ascii notes", minutes=1))
    expected = terms()
    old = " ".join(tenant_prefix(tenant) + w for w in "josé müller łódź œuvre hauptstraße".split())
    with db.driver.session(database=db.database) as s:   # what a schema-10 graph holds: terms lower-cased only
        for nid, t in expected.items():
            if t is not None:
                s.run("MATCH (n {id: $id}) SET n.search_terms = $terms", id=nid, terms=old).consume()
    assert found("jose muller") == set()
    db.execute("meta/set_schema", version=10, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert found("jose muller") == {"fact", "episode", "entity"}
    # every node with text outside ASCII got its terms again; a text in ASCII alone was not read
    assert terms() == {**expected, plain.id: old}


def test_names_that_differ_in_their_vowel_signs_are_two_entities(db, settings, graph, tenant):
    """Devanagari and Tamil write vowels as combining marks: "मोहन" (Mohan) and "मोहिनी" (Mohini) are two people,
    and a title written in Hindi is its own value. A schema-11 graph, whose keys had the marks dropped ("महन" for
    both names), gets its keys again at start-up: each name resolves to its own entity, and a value said again is
    the same fact."""
    from graphmem.identifiers import name_key
    from graphmem.store.schema import _name_key_before_12, rekey_marked_names

    assert name_key("मोहन") != name_key("मोहिनी") and _name_key_before_12("मोहन") == _name_key_before_12("मोहिनी")
    ep, _ = graph.append_episode(tenant, msg("मोहन टाटा में, मोहिनी इंफोसिस में"))

    def say(name, org, title):
        return [o.action for o in graph.assert_facts(tenant, [
            FactIn(subject=EntityRef(kind="Person", name=name), predicate="WORKS_AT",
                   object=EntityRef(kind="Organization", name=org), episode_id=ep.id),
            FactIn(subject=EntityRef(kind="Person", name=name), predicate="HAS_TITLE", value=title,
                   episode_id=ep.id)])]
    assert say("मोहन", "Tata", "प्रबंधक") == ["created", "created"]
    assert say("मोहिनी", "Infosys", "प्रबंधक") == ["created", "created"]    # not Mohan's job, superseded
    mohan, mohini = (graph.find_entities(tenant, n, "Person")[0] for n in ("मोहन", "मोहिनी"))
    assert mohan.id != mohini.id and mohini.name == "मोहिनी"

    def keys():
        with db.driver.session(database=db.database) as s:
            return {"entities": sorted(s.run("MATCH (e:Entity {tenant_id: $t}) RETURN e.name AS n, e.name_key AS k",
                                             t=tenant).values()),
                    "aliases": sorted(s.run("MATCH (a:Alias {tenant_id: $t})-[:ALIAS_OF]->(e) "
                                            "RETURN a.key AS k, e.name AS n, a.entity_id = e.id AS owner",
                                            t=tenant).values()),
                    "values": sorted(s.run("MATCH (f:Fact {tenant_id: $t}) WHERE f.value IS NOT NULL "
                                           "RETURN f.value AS v, f.object_key AS k", t=tenant).values())}

    def age():   # what a schema-11 graph holds: one alias key for both names, values keyed without their marks
        with db.driver.session(database=db.database) as s:
            s.run("MATCH (a:Alias {tenant_id: $t}) WHERE a.key STARTS WITH 'Person:' DETACH DELETE a",
                  t=tenant).consume()
            for e in (mohan, mohini):
                old = _name_key_before_12(e.name)
                s.run("MATCH (e:Entity {id: $id}) SET e.name_key = $k "
                      "MERGE (a:Alias {tenant_id: $t, key: 'Person:' + $k}) "
                      "  ON CREATE SET a.entity_id = e.id, a.name_key = $k "
                      "MERGE (a)-[:ALIAS_OF]->(e)", id=e.id, k=old, t=tenant).consume()
            s.run("MATCH (f:Fact {tenant_id: $t}) WHERE f.value IS NOT NULL SET f.object_key = 'v:' + $k",
                  t=tenant, k=_name_key_before_12("प्रबंधक")).consume()

    expected = keys()
    age()
    assert keys() != expected
    db.execute("meta/set_schema", version=11, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert keys() == expected
    assert say("मोहिनी", "Infosys", "प्रबंधक") == ["duplicate", "duplicate"]   # her own facts, said again
    age()
    assert rekey_marked_names(db, batch=1) >= 4 and keys() == expected        # one entity or fact a transaction


def test_variation_selectors_and_symbol_only_text_in_keys(db, settings, graph, tenant):
    """A variation selector chooses how a character looks, not which it is: "❤️ Fund" and "❤ Fund" are one
    organisation. A name of symbols alone ("❤️", "...") has no letter or digit to resolve it by and is refused, and
    a literal value of symbols alone keeps its own key: "☆" after "★" is a new title, not the same one said again.
    A schema-13 graph, whose keys kept the selector and keyed such values "", gets its keys again at start-up."""
    from graphmem.identifiers import name_key, value_key
    from graphmem.store.schema import _name_key_before_14, rekey_marked_names

    ep, _ = graph.append_episode(tenant, msg("Ada runs the heart fund"))
    ada = EntityRef(kind="Person", name="Ada Ng")

    def works(org, title=None):
        facts = [FactIn(subject=ada, predicate="WORKS_AT", object=EntityRef(kind="Organization", name=org),
                        episode_id=ep.id)]
        if title:
            facts.append(FactIn(subject=ada, predicate="HAS_TITLE", value=title, episode_id=ep.id))
        return graph.assert_facts(tenant, facts)

    first = works("❤️ Fund", "★")
    assert [o.action for o in first] == ["created", "created"]
    assert [o.action for o in works("❤ Fund", "★️")] == ["duplicate", "duplicate"]    # the same org and title
    star = works("❤ Fund", "☆")[1]
    assert star.action == "superseded" and star.closed_fact_id == first[1].fact_id    # a new title supersedes
    for name in ("❤️", "★️", "...", "\u2764\ufe0f \u2605"):
        with pytest.raises(InvalidInput) as err:
            works(name)
        assert "has no letters or digits" in str(err.value) and err.value.field == "facts[0].object", err.value
    # a value keeps its + and #: "C#" is not "C++" said again (helper-found), "c++" is
    assert [o.action for o in graph.assert_facts(tenant, [
        FactIn(subject=ada, predicate="INTERESTED_IN", value=v, episode_id=ep.id) for v in ("C++", "C#", "c++")])] \
        == ["created", "created", "duplicate"]
    [fund] = graph.find_entities(tenant, "❤️ Fund", "Organization")
    assert fund.name == "❤️ Fund" and graph.find_entities(tenant, "❤️", "Organization") == []
    # with an id (or an email, domain or external id) naming the entity, a keyless name is dropped, not refused
    [by_id] = graph.assert_facts(tenant, [FactIn(subject=ada, predicate="WORKS_AT", episode_id=ep.id,
                                                 object=EntityRef(id=fund.id, kind="Organization", name="❤️"))])
    assert by_id.action == "duplicate" and graph.get_entity(tenant, fund.id).aliases == []

    def keys():
        with db.driver.session(database=db.database) as s:
            return {"entities": sorted(s.run("MATCH (e:Entity {tenant_id: $t}) RETURN e.name AS n, e.name_key AS k",
                                             t=tenant).values()),
                    "aliases": sorted(s.run("MATCH (a:Alias {tenant_id: $t})-[:ALIAS_OF]->(e) "
                                            "RETURN a.key AS k, e.name AS n", t=tenant).values()),
                    "values": sorted(s.run("MATCH (f:Fact {tenant_id: $t}) WHERE f.value IS NOT NULL "
                                           "RETURN f.value AS v, f.object_key AS k", t=tenant).values())}

    def age():   # what a schema-13 graph holds: the selector in the org's keys, "" for both titles
        with db.driver.session(database=db.database) as s:
            s.run("MATCH (a:Alias {tenant_id: $t, key: 'Organization:fund'}) DETACH DELETE a", t=tenant).consume()
            old = _name_key_before_14("❤️ Fund")
            s.run("MATCH (e:Entity {id: $id}) SET e.name_key = $k "
                  "MERGE (a:Alias {tenant_id: $t, key: 'Organization:' + $k}) "
                  "  ON CREATE SET a.entity_id = e.id, a.name_key = $k "
                  "MERGE (a)-[:ALIAS_OF]->(e)", id=fund.id, k=old, t=tenant).consume()
            s.run("MATCH (f:Fact {tenant_id: $t}) WHERE f.value IS NOT NULL SET f.object_key = 'v:'",
                  t=tenant).consume()

    expected = keys()
    assert ["❤️ Fund", "fund"] in expected["entities"] and ["Organization:fund", "❤️ Fund"] in expected["aliases"]
    assert sorted(k for _, k in expected["values"]) == ["v:c#", "v:c++", "v:★", "v:☆"]
    assert name_key("❤️ Fund") == name_key("❤ Fund") == "fund" and value_key("★️") == "★"
    for filler in "\u3164\uffa0\u1160\u115f":                 # a Hangul filler reads as the space it shows
        assert name_key(f"Ada{filler}Ng") == name_key("Ada Ng"), repr(filler)
    age()
    assert keys() != expected and _name_key_before_14("❤️ Fund") == "\ufe0f fund"
    db.execute("meta/set_schema", version=13, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert keys() == expected
    assert [o.action for o in works("❤ Fund", "☆")] == ["duplicate", "duplicate"]     # found by the new keys
    age()
    assert rekey_marked_names(db, batch=1, pattern=UNKEYED_PATTERN, old_key=_name_key_before_14) >= 3
    assert keys() == expected


def test_turkish_names_resolve_in_either_case(db, settings, graph, tenant):
    """Found by a helper: "İlkay Işık" was not found as "ilkay işık" or "İLKAY IŞIK" (Unicode's default case
    folding pairs "I" with "i" and makes "İ" an "i" with a combining dot; Turkish pairs "I" with "ı"). The Turkish
    i's now key as one (`turkish_i`), values too; a schema-14 graph gets its keys again at start-up."""
    from graphmem.identifiers import name_key
    from graphmem.store.schema import TURKISH_I, _name_key_before_15, rekey_marked_names

    ep, _ = graph.append_episode(tenant, msg("Ilkay's title"))
    [first] = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="İlkay Işık"),
                                                 predicate="HAS_TITLE", value="Işık Mühendisi", episode_id=ep.id)])
    ilkay = graph.get_fact(tenant, first.fact_id).subject_id
    for name in ("ilkay işık", "İLKAY IŞIK", "ILKAY IŞIK", "İlkay Işık"):
        assert [e.id for e in graph.find_entities(tenant, name, "Person")] == [ilkay], name
    assert graph.find_entities(tenant, "Ilkay Isik", "Person") == []     # "ş" is not "s", as "é" is not "e"
    # a mark after the dot composes again, and a key is its own key (helper-found)
    assert name_key("i\u0307\u0303") == name_key("\u0129") == "\u0129" and name_key("\u0131\u0307") == "i"
    assert all(name_key(name_key(n)) == name_key(n) for n in ("İlkay Işık", "i\u0307\u0303", "\U0001D6A4lkay"))
    [again] = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="İLKAY IŞIK"),
                                                 predicate="HAS_TITLE", value="IŞIK MÜHENDISI", episode_id=ep.id)])
    assert again.action == "duplicate" and again.fact_id == first.fact_id

    def keys():
        return stored_keys(db, tenant, ilkay, first.fact_id)

    def age():   # what a schema-14 graph holds: the name's key with a combining dot and a dotless i
        set_old_name_key(db, tenant, ilkay, _name_key_before_15("İlkay Işık"))
        with db.driver.session(database=db.database) as s:
            s.run("MATCH (f:Fact {id: $id}) SET f.object_key = 'v:ışık mühendisi'", id=first.fact_id).consume()

    expected = keys()
    assert expected == ("ilkay işik", ["Person:ilkay işik"], "v:işik mühendisi")
    age()
    assert keys() != expected and graph.find_entities(tenant, "ilkay işık", "Person") == []
    db.execute("meta/set_schema", version=14, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert keys() == expected
    age()
    assert rekey_marked_names(db, batch=1, pattern=TURKISH_I, old_key=_name_key_before_15) >= 2
    assert keys() == expected


def test_a_final_period_or_a_zero_width_space_does_not_make_another_name(db, settings, graph, tenant):
    """Helper-found: "Norm Al." (a name copied with its sentence's period) became a second person, and "Norm\u200bAl"
    (a zero-width space) a third, keyed "normal". A word's final period is dropped from keys and the zero-width
    space is a space; a period inside a word stays ("acme.com", ".NET"); a schema-15 graph gets its keys again."""
    from graphmem.identifiers import name_key, value_key
    from graphmem.store.schema import PERIODS, _name_key_before_16, rekey_marked_names

    ep, _ = graph.append_episode(tenant, msg("Norm's title"))
    [first] = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Norm Al."),
                                                 predicate="HAS_TITLE", value="Head of Sales.", episode_id=ep.id)])
    norm = graph.get_fact(tenant, first.fact_id).subject_id
    for name in ("Norm Al", "norm al.", "Norm\u200bAl", "Norm Al..."):
        assert [e.id for e in graph.find_entities(tenant, name, "Person")] == [norm], name
    assert graph.find_entities(tenant, "Normal", "Person") == []
    [again] = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Norm\u200bAl"),
                                                 predicate="HAS_TITLE", value="head of sales", episode_id=ep.id)])
    assert again.action == "duplicate" and again.fact_id == first.fact_id
    assert [name_key(n) for n in ("acme.com", ".NET", "J.R.R. Tolkien", "ACME, Inc.")] == \
        ["acme.com", ".net", "j.r.r tolkien", "acme inc"]
    assert value_key("v2.") == "v2" and value_key("12.50") == "12.50" and value_key("...") == "..."

    def keys():
        return stored_keys(db, tenant, norm, first.fact_id)

    def age():   # what a schema-15 graph holds: the keys with their final periods
        set_old_name_key(db, tenant, norm, _name_key_before_16("Norm Al."))
        with db.driver.session(database=db.database) as s:
            s.run("MATCH (f:Fact {id: $id}) SET f.object_key = 'v:head of sales.'", id=first.fact_id).consume()

    expected = keys()
    assert expected == ("norm al", ["Person:norm al"], "v:head of sales")
    age()
    assert keys() != expected and graph.find_entities(tenant, "Norm Al", "Person") == []
    db.execute("meta/set_schema", version=15, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert keys() == expected
    age()
    assert rekey_marked_names(db, batch=1, pattern=PERIODS, old_key=_name_key_before_16) >= 2
    assert keys() == expected


def test_a_schema_16_graph_counts_its_attributes_as_declared_by_every_episode_that_could_have(db, settings, graph,
                                                                                             tenant):
    """Schema 17 records which episodes declared each entity attribute, so that erasure strips what only erased
    episodes said (docs/governance.md, step 8). A schema-16 graph has no such record: at start-up each attribute
    counts as declared by every episode that mentions its entity or that a fact about it came from. Erasing one of
    those keeps it (any of them may have said it); once all are erased it goes, though a later episode keeps the
    entity."""
    from graphmem.governance.service import Governance
    from graphmem.store.schema import backfill_declarations

    crm, _ = graph.append_episode(tenant, EpisodeIn(content="CRM: Dana Reyes", occurred_at=T0, user_id="crm",
                                                    session_id="crm"))
    chat, _ = graph.append_episode(tenant, EpisodeIn(content="Dana, aka DR", occurred_at=T0, user_id="ub",
                                                     session_id="sb"))
    graph.assert_facts(tenant, [
        FactIn(subject=EntityRef(kind="Person", name="Dana Reyes", external_ids=["crm:c1"]), predicate="WORKS_AT",
               object=EntityRef(kind="Organization", name="Acme"), episode_id=crm.id),
        FactIn(subject=EntityRef(kind="Person", name="Dana Reyes", aliases=["DR"]), predicate="HAS_TITLE",
               value="CFO", episode_id=chat.id)])
    [dana] = graph.find_entities(tenant, "Dana Reyes", "Person")

    def declarers():
        with db.driver.session(database=db.database) as s:
            return sorted((r["what"], r["ep"]) for r in s.run(
                "MATCH (ep:Episode)-[d:DECLARED]->(x) WHERE x.tenant_id = $t "
                "RETURN coalesce(d.attr, x.key) AS what, ep.id AS ep", t=tenant))

    names = [("name", chat.id), ("name", crm.id), ("name", crm.id)]    # Dana's by both, Acme's by the CRM
    assert declarers() == sorted([("Person:dr", chat.id), ("crm:c1", crm.id), *names])
    with db.driver.session(database=db.database) as s:   # what a schema-16 graph holds: no record
        s.run("MATCH (x {tenant_id: $t})<-[d:DECLARED]-(:Episode) DELETE d", t=tenant).consume()
    db.execute("meta/set_schema", version=16, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert declarers() == sorted([("Person:dr", chat.id), ("Person:dr", crm.id), ("crm:c1", chat.id),
                                  ("crm:c1", crm.id), *names])
    assert backfill_declarations(db) == 0                       # again: nothing to record
    later, _ = graph.append_episode(tenant, EpisodeIn(content="Dana is in Lisbon", occurred_at=T0, user_id="uc",
                                                      session_id="sc"))
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Dana Reyes"), predicate="LOCATED_IN",
                                       value="Lisbon", episode_id=later.id)])
    gov = Governance(db, settings, graph)

    assert gov.forget(tenant, user_id="ub").counts["aliases"] == 0
    assert graph.get_entity(tenant, dana.id).aliases == ["DR"]      # the CRM's episode may have said it
    assert gov.forget(tenant, user_id="crm").counts["external_ids"] == 1
    kept = graph.get_entity(tenant, dana.id)                        # the later episode keeps her, without them
    assert (kept.name, kept.aliases, kept.external_ids) == ("Dana Reyes", [], [])   # it named her: no rename


def test_the_schema_14_migration_reports_entities_that_now_share_a_key(db, settings, graph, tenant, caplog):
    """Before schema 14 "❤ Fund" and "❤️ Fund" keyed apart, so a graph may hold both as two entities. The
    migration gives them one key: they become namesakes (a name alone is ambiguous, an id names each), and it
    logs a warning naming both (helper-found: nothing said so)."""
    import logging

    ep, _ = graph.append_episode(tenant, msg("two funds"))
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Ada Ng"), predicate="KNOWS",
                                       object=EntityRef(kind="Person", name=n), episode_id=ep.id)
                                for n in ("Fund Alpha", "Fund Beta")])
    a, b = (graph.find_entities(tenant, n, "Person")[0] for n in ("Fund Alpha", "Fund Beta"))
    with db.driver.session(database=db.database) as s:   # what a schema-13 graph could hold
        s.run("MATCH (al:Alias {tenant_id: $t}) WHERE al.key IN ['Person:fund alpha', 'Person:fund beta'] "
              "DETACH DELETE al", t=tenant).consume()
        for e, name, key in ((a, "\u2764 Fund", "fund"), (b, "\u2764\ufe0f Fund", "\ufe0f fund")):
            s.run("MATCH (e:Entity {id: $id}) SET e.name = $name, e.name_key = $k "
                  "MERGE (al:Alias {tenant_id: $t, key: 'Person:' + $k}) ON CREATE SET al.entity_id = e.id, "
                  "al.name_key = $k MERGE (al)-[:ALIAS_OF]->(e)", id=e.id, name=name, k=key, t=tenant).consume()
    db.execute("meta/set_schema", version=13, embedding_dimension=settings.embedding_dimension)
    with caplog.at_level(logging.WARNING, logger="graphmem.store.schema"):
        apply_schema(db, settings.embedding_dimension)
    [warning] = [r.getMessage() for r in caplog.records if tenant in r.getMessage()]
    assert f"{b.id} with {a.id}" in warning and "namesakes" in warning, warning
    assert sorted(e.id for e in graph.find_entities(tenant, "Fund", "Person")) == sorted([a.id, b.id])


def test_schema_9_graph_gets_the_mentions_of_its_episodes(db, settings, graph, tenant):
    """Before schema 10 no write linked an episode to the entities it mentions; start-up links every episode to the
    subject and object of each fact derived from it, once per pair, tenant by tenant in batches."""
    from graphmem.store.schema import backfill_mentions

    first, _ = graph.append_episode(tenant, msg("Ona joined Pellucid; Ona knows Rui"))
    second, _ = graph.append_episode(tenant, msg("Ona is at Pellucid", minutes=1))
    quiet, _ = graph.append_episode(tenant, msg("nothing to extract", minutes=2))
    ona, pel, rui = (EntityRef(kind=k, name=n) for k, n in
                     (("Person", "Ona Sato"), ("Organization", "Pellucid"), ("Person", "Rui Dias")))
    graph.assert_facts(tenant, [FactIn(subject=ona, predicate="WORKS_AT", object=pel, episode_id=first.id),
                                FactIn(subject=ona, predicate="KNOWS", object=rui, episode_id=first.id),
                                FactIn(subject=ona, predicate="HAS_TITLE", value="CTO", episode_id=first.id)])
    graph.assert_facts(tenant, [FactIn(subject=ona, predicate="WORKS_AT", object=pel, episode_id=second.id)])

    def mentions():
        with db.driver.session(database=db.database) as s:
            return sorted((r["e"], r["n"], r["times"]) for r in s.run(
                "MATCH (e:Episode {tenant_id: $t})-[m:MENTIONS]->(n:Entity) "
                "RETURN e.content AS e, n.name AS n, count(m) AS times", t=tenant))

    def forget():   # what a schema-9 graph holds
        with db.driver.session(database=db.database) as s:
            s.run("MATCH (:Episode {tenant_id: $t})-[m:MENTIONS]->() DELETE m", t=tenant).consume()

    expected = [("Ona is at Pellucid", "Ona Sato", 1), ("Ona is at Pellucid", "Pellucid", 1),
                ("Ona joined Pellucid; Ona knows Rui", "Ona Sato", 1),
                ("Ona joined Pellucid; Ona knows Rui", "Pellucid", 1),
                ("Ona joined Pellucid; Ona knows Rui", "Rui Dias", 1)]
    assert mentions() == expected     # as the writes make them
    forget()
    db.execute("meta/set_schema", version=9, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert mentions() == expected
    forget()
    assert backfill_mentions(db, batch=1) >= 5 and mentions() == expected   # one episode a transaction
    assert backfill_mentions(db, batch=1) == 0 and mentions() == expected   # re-run: nothing made twice


# ---- episodes -------------------------------------------------------------------------------
def test_episode_idempotent_by_key(graph, db, tenant):
    first, created = graph.append_episode(tenant, msg("hello", key="k1"))
    count = tenant_node_count(db, tenant)
    again, created2 = graph.append_episode(tenant, msg("hello", key="k1"))
    assert created and not created2
    assert again.id == first.id and again.content == "hello"
    with pytest.raises(InvalidInput) as err:   # a used key with other content is not a replay: never dropped silently
        graph.append_episode(tenant, msg("hello, different text", key="k1"))
    assert err.value.field == "idempotency_key"
    with pytest.raises(InvalidInput):
        graph.append_episode(tenant, msg("hello", key="k1").model_copy(update={"session_id": "another"}))
    assert tenant_node_count(db, tenant) == count
    assert first.token_count == 1 and first.extraction_status == "pending"


def test_next_chain_follows_occurred_at_even_out_of_order(graph, db, tenant):
    order = [3, 0, 5, 1, 4, 2]
    ids = {}
    for m in order:
        e, _ = graph.append_episode(tenant, msg(f"turn {m}", minutes=m))
        ids[m] = e.id
    with db.driver.session() as s:
        chain = s.run("MATCH (a:Episode {tenant_id:$t})-[:NEXT]->(b) RETURN a.id AS a, b.id AS b", t=tenant).data()
    nxt = {r["a"]: r["b"] for r in chain}
    assert len(nxt) == 5
    assert [nxt.get(ids[m]) for m in range(5)] == [ids[m + 1] for m in range(5)]
    assert [e.content for e in graph.session_episodes(tenant, "s1")] == [f"turn {m}" for m in range(6)]


# ---- entity resolution ----------------------------------------------------------------------
def test_resolution_identifiers_then_names(graph, tenant):
    a = graph.upsert_entity(tenant, EntityRef(kind="Person", name="Dana Scully", email="Dana@FBI.gov"))
    assert graph.upsert_entity(tenant, EntityRef(kind="Person", name="D. Scully", email="dana@fbi.gov")).id == a.id
    assert graph.upsert_entity(tenant, EntityRef(kind="Person", name="  dana   SCULLY ")).id == a.id
    assert graph.upsert_entity(tenant, EntityRef(kind="Person", name="Agent Scully", aliases=["Starbuck"])).id != a.id
    alias = graph.upsert_entity(tenant, EntityRef(kind="Person", name="d. scully"))   # alias learned above
    assert alias.id == a.id
    other = graph.upsert_entity(tenant, EntityRef(kind="Person", name="Dana Scully", email="dana@other.org"))
    assert other.id != a.id                     # same name, conflicting email: somebody else
    org = graph.upsert_entity(tenant, EntityRef(kind="Organization", name="Dana Scully"))
    assert org.id != a.id                       # names resolve within a kind
    ext = graph.upsert_entity(tenant, EntityRef(kind="Organization", name="Globex", external_ids=["crm:42"]))
    assert graph.upsert_entity(tenant, EntityRef(kind="Organization", name="Globex Corp",
                                                 external_ids=["crm:42"])).id == ext.id
    assert graph.get_entity(tenant, a.id).aliases == ["D. Scully"]


def test_namesakes_with_other_emails_in_one_batch_are_two_people(graph, tenant):
    """Within one batch as across calls: the same name with another email is somebody else (the second person
    became the first, lost her email and closed the first's job). Both are found by the name."""
    ep, _ = graph.append_episode(tenant, msg("two people called Yan Li"))
    out = graph.assert_facts(tenant, [
        FactIn(subject=EntityRef(kind="Person", name="Yan Li", email="yan@acme.com"), predicate="WORKS_AT",
               object=EntityRef(kind="Organization", name="Acme"), valid_from=T0, episode_id=ep.id),
        FactIn(subject=EntityRef(kind="Person", name="Yan Li", email="yan@globex.com"), predicate="WORKS_AT",
               object=EntityRef(kind="Organization", name="Globex"), valid_from=T0 + timedelta(days=365),
               episode_id=ep.id)])
    assert [o.action for o in out] == ["created", "created"]
    people = graph.find_entities(tenant, "Yan Li", "Person")
    assert sorted(p.email for p in people) == ["yan@acme.com", "yan@globex.com"]
    for p in people:
        assert len(graph.facts_about(tenant, p.id, predicates=["WORKS_AT"])) == 1
    # later, a caller's write by the name alone is refused, listing both (a fact went to one of them silently);
    # an email names one; an extracted fact (refuse_self_reference) takes the name's owner
    with pytest.raises(InvalidInput) as err:
        graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="yan li"), predicate="LOCATED_IN",
                                           value="Tokyo", episode_id=ep.id)])
    assert err.value.field == "facts[0].subject.name" and "yan@globex.com" in err.value.detail
    out = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Yan Li", email="yan@globex.com"),
                                             predicate="LOCATED_IN", value="Tokyo", episode_id=ep.id)])
    assert graph.get_fact(tenant, out[0].fact_id).subject_id == next(p.id for p in people
                                                                     if p.email == "yan@globex.com")
    from graphmem.store import facts as fact_store
    owner = next(p.id for p in people if p.email == "yan@acme.com")
    extracted = graph.db.write(lambda tx: fact_store.assert_batch(
        tx, tenant, [FactIn(subject=EntityRef(kind="Person", name="Yan Li"), predicate="LOCATED_IN", value="Kyoto",
                            episode_id=ep.id)], graph.ontology(tenant), graph.settings, refuse_self_reference=True))
    assert graph.get_fact(tenant, extracted[0].fact_id).subject_id == owner


def test_a_name_of_namesakes_with_an_unknown_identifier_is_refused_not_merged(graph, tenant):
    """Two CRM records named Jo Twin are two people; a write naming Jo Twin with an external id or email that names
    neither cannot tell which one is meant: a caller's write is refused naming the name (it went to the first
    record, which took the new id and email and lost its title to the other's); extraction and CRM mapping
    create a third entity beside them."""
    ep, _ = graph.append_episode(tenant, msg("three records called Jo Twin"))
    one, two = (graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Jo Twin",
                                                                      external_ids=[f"hubspot:{n}"]),
                                                   predicate="HAS_TITLE", value=title, episode_id=ep.id)])[0]
                for n, title in ((1, "One"), (2, "Two")))
    first = graph.get_fact(tenant, one.fact_id).subject_id
    for ref, said in ((EntityRef(kind="Person", name="Jo Twin", external_ids=["salesforce:9"]),
                       "external id 'salesforce:9' names none of them"),
                      (EntityRef(kind="Person", name="jo twin", email="jo@x.test"), "email 'jo@x.test'")):
        with pytest.raises(InvalidInput) as err:
            graph.assert_facts(tenant, [FactIn(subject=ref, predicate="HAS_TITLE", value="Three", episode_id=ep.id)])
        assert err.value.field == "facts[0].subject.name", err.value.detail
        assert said in err.value.detail and "hubspot:" not in said, err.value.detail
    kept = graph.get_entity(tenant, first)
    assert kept.external_ids == ["hubspot:1"] and kept.email is None
    assert [f.value for f in graph.facts_about(tenant, first, predicates=["HAS_TITLE"])] == ["One"]
    # an identifier of one of them still names it, with or without the name
    out = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Jo Twin",
                                                               external_ids=["hubspot:2"]),
                                             predicate="LOCATED_IN", value="Oslo", episode_id=ep.id)])
    assert graph.get_fact(tenant, out[0].fact_id).subject_id == graph.get_fact(tenant, two.fact_id).subject_id
    # extraction (refuse_self_reference, namesakes "owner") makes a third Jo Twin with that id
    from graphmem.store import facts as fact_store
    extracted = graph.db.write(lambda tx: fact_store.assert_batch(
        tx, tenant, [FactIn(subject=EntityRef(kind="Person", name="Jo Twin", external_ids=["salesforce:9"]),
                            predicate="HAS_TITLE", value="Three", episode_id=ep.id)],
        graph.ontology(tenant), graph.settings, refuse_self_reference=True))
    third = graph.get_fact(tenant, extracted[0].fact_id).subject_id
    assert third not in (first, graph.get_fact(tenant, two.fact_id).subject_id)
    assert graph.get_entity(tenant, third).external_ids == ["salesforce:9"]
    assert len(graph.find_entities(tenant, "Jo Twin", "Person")) == 3
    assert [f.value for f in graph.facts_about(tenant, first, predicates=["HAS_TITLE"])] == ["One"]


def test_a_name_of_namesakes_told_apart_by_emails_or_ids_of_one_system(graph, tenant):
    """Beside namesakes told apart by email (or by ids of one CRM), the name with a third email (or a third id of
    that CRM) is a third person, as a second email made a second; the name with an identifier that sets it apart
    from not every one of them (an id of another system; an email beside a namesake with none) is refused naming
    the name, as subject or object, and writes nothing (helper-found: the refusal was skipped when the name's
    owner had another email)."""
    ep, _ = graph.append_episode(tenant, msg("Sam Lee and Sam Lee, Kim Ode and Kim Ode, Ada Roe and Ada Roe"))
    for name, ident in (("Sam Lee", {"email": "a@x.test"}), ("Sam Lee", {"email": "b@x.test"}),
                        ("Kim Ode", {"external_ids": ["crm:contact:c10"]}),
                        ("Kim Ode", {"external_ids": ["crm:contact:c11"]}),
                        ("Ada Roe", {"email": "a@x.test", "external_ids": ["hubspot:1"]}),
                        ("Ada Roe", {"external_ids": ["hubspot:2"]})):
        graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name=name, **ident),
                                           predicate="LOCATED_IN", value="Oslo", episode_id=ep.id)])
    for name, ident, said in (("sam lee", {"external_ids": ["salesforce:9"]}, "'salesforce:9' names none of them"),
                              ("kim ode", {"external_ids": ["salesforce:9"]}, "'salesforce:9' names none of them"),
                              ("ada roe", {"email": "c@x.test"}, "'c@x.test' names none of them")):
        ref = EntityRef(kind="Person", name=name, **ident)
        for fact, field in ((FactIn(subject=ref, predicate="LOCATED_IN", value="Rome", episode_id=ep.id),
                             "facts[0].subject.name"),
                            (FactIn(subject=EntityRef(kind="Person", name="Ari Moss"), predicate="KNOWS", object=ref,
                                    episode_id=ep.id), "facts[0].object.name")):
            with pytest.raises(InvalidInput) as err:
                graph.assert_facts(tenant, [fact])
            assert err.value.field == field and said in err.value.detail, err.value.detail
        assert len(graph.find_entities(tenant, name, "Person")) == 2
    assert graph.find_entities(tenant, "Ari Moss", "Person") == []   # nothing of a refused write is stored
    for ref in (EntityRef(kind="Person", name="Sam Lee", email="c@x.test"),
                EntityRef(kind="Person", name="Kim Ode", external_ids=["crm:contact:c12"])):
        out = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Ari Moss"),
                                                 predicate="KNOWS", object=ref, episode_id=ep.id)])
        third = graph.get_entity(tenant, graph.get_fact(tenant, out[0].fact_id).object_id)
        assert (third.email, third.external_ids) == (ref.email, ref.external_ids), third
        assert len(graph.find_entities(tenant, ref.name, "Person")) == 3


def test_identities_within_one_batch_are_checked_as_across_calls(graph, tenant):
    """In one batch, as in separate calls: a kind beside an email another reference creates an entity of another
    kind with is refused (it merged); identifiers naming two entities the batch creates are refused (the external
    id went to the wrong one); a name alone that namesakes of the batch answer to is refused (it went to the first);
    two CRM records of one name (ids of one system) are two people (they were merged)."""
    ep, _ = graph.append_episode(tenant, msg("identities in one batch"))

    def facts(*subjects):
        return [FactIn(subject=s, predicate="LOCATED_IN", value=f"city {i}", episode_id=ep.id)
                for i, s in enumerate(subjects)]
    cases = [
        (facts(EntityRef(kind="Person", name="Zo Ra", email="zo@zo.io"),
               EntityRef(kind="Organization", name="ZoCorp", email="zo@zo.io")), "facts[1].subject.kind"),
        (facts(EntityRef(email="p@x.io", external_ids=["crm:contact:q1"]),
               EntityRef(kind="Person", name="Pat", email="p@x.io"),
               EntityRef(kind="Person", name="Quinn", external_ids=["crm:contact:q1"])), "facts[0].subject"),
        (facts(EntityRef(kind="Person", name="Jo Park", email="jo1@a.io"),
               EntityRef(kind="Person", name="Jo Park", email="jo2@b.io"),
               EntityRef(kind="Person", name="Jo Park")), "facts[2].subject.name")]
    for batch, field in cases:
        with pytest.raises(InvalidInput) as err:
            graph.assert_facts(tenant, batch)
        assert err.value.field == field, (field, err.value.detail)
    assert graph.find_entities(tenant, "Zo Ra") == [] and graph.find_entities(tenant, "Jo Park") == []
    graph.assert_facts(tenant, facts(EntityRef(kind="Person", name="Sam Lee", external_ids=["crm:contact:c10"]),
                                     EntityRef(kind="Person", name="Sam Lee", external_ids=["crm:contact:c11"])))
    graph.assert_facts(tenant, facts(EntityRef(kind="Person", name="Sam Lee", external_ids=["crm:contact:c12"])))
    assert sorted(e.external_ids[0] for e in graph.find_entities(tenant, "Sam Lee")) == [
        "crm:contact:c10", "crm:contact:c11", "crm:contact:c12"]
    with pytest.raises(ValidationError):   # an empty external id was a key every entity sent with it merged into
        EntityRef(kind="Person", name="Eve", external_ids=[" "])
    assert EntityRef(kind="Person", name="Eve", external_ids=[" crm:contact:e1 "]).external_ids == ["crm:contact:e1"]


def test_a_name_given_as_an_alias_in_the_same_batch_names_that_entity(graph, tenant):
    """Found by a helper: "Theodora Quill" (alias "Teddy") and a fact about "Teddy" in one batch made two people, and
    Theodora lost her alias to the new "Teddy"; sent in two calls, "Teddy" was Theodora. Now a batch resolves as
    calls in batch order do, in either order: through chains of aliases, references that name each other, the first
    of two that give one alias, and an alias one of two namesakes gives (it was refused as ambiguous)."""
    teddy = EntityRef(kind="Person", name="Theodora Quill", aliases=["Teddy"])
    for n, (first, second) in enumerate(((teddy, EntityRef(kind="Person", name="Teddy")),
                                         (EntityRef(kind="Person", name="Teddy"), teddy))):
        t = f"{tenant}-{n}"
        e, _ = graph.append_episode(t, msg("aliases in one batch"))
        graph.assert_facts(t, [FactIn(subject=first, predicate="LOCATED_IN", value="Oslo", episode_id=e.id),
                               FactIn(subject=second, predicate="HAS_TITLE", value="CEO", episode_id=e.id)])
        [who] = graph.find_entities(t, "Teddy")
        assert (who.name, who.aliases) == ("Theodora Quill", ["Teddy"])
        assert sorted(f.predicate for f in graph.facts_about(t, who.id)) == ["HAS_TITLE", "LOCATED_IN"]

    def batch(t, *refs):
        e, _ = graph.append_episode(t, msg("aliases in one batch"))
        graph.assert_facts(t, [FactIn(subject=r, predicate="LOCATED_IN", value=f"city {i}", episode_id=e.id)
                               for i, r in enumerate(refs)])

    def people(t):
        found = {e.id: (e.name, sorted(e.aliases)) for name in ("Theodora Quill", "Edward Bear", "X Ray", "Yankee",
                                                                 "Teddy", "T") for e in graph.find_entities(t, name)}
        return sorted(found.values())
    # a chain, references that name each other, two that give one alias, and an alias among namesakes (helper-found)
    batch(f"{tenant}-chain", EntityRef(kind="Person", name="T"), teddy.model_copy(),
          EntityRef(kind="Person", name="Teddy", aliases=["T"]))
    assert people(f"{tenant}-chain") == [("Theodora Quill", ["T", "Teddy"])]
    batch(f"{tenant}-cycle", EntityRef(kind="Person", name="X Ray", aliases=["Yankee"]),
          EntityRef(kind="Person", name="Yankee", aliases=["X Ray"]))
    assert people(f"{tenant}-cycle") == [("X Ray", ["Yankee"])]
    batch(f"{tenant}-two", teddy, EntityRef(kind="Person", name="Edward Bear", aliases=["Teddy"]),
          EntityRef(kind="Person", name="Teddy"))
    assert people(f"{tenant}-two") == [("Edward Bear", []), ("Theodora Quill", ["Teddy"])]   # the first claims it
    batch(f"{tenant}-dana", EntityRef(kind="Person", name="Dana Reyes", email="a@x.io", aliases=["DR"]),
          EntityRef(kind="Person", name="Dana Reyes", email="b@y.io"), EntityRef(kind="Person", name="DR"))
    [dr] = graph.find_entities(f"{tenant}-dana", "DR", "Person")
    assert dr.email == "a@x.io" and len(graph.facts_about(f"{tenant}-dana", dr.id, include_superseded=True)) == 2
    # a reference by id brings its aliases too (helper-found: they were dropped), not its identifiers
    batch(f"{tenant}-dana", EntityRef(id=dr.id, aliases=["Dee"], email="c@z.io"))
    assert graph.get_entity(f"{tenant}-dana", dr.id).aliases == ["DR", "Dee"]
    assert graph.get_entity(f"{tenant}-dana", dr.id).email == "a@x.io"


def test_namesakes_written_at_once_stay_apart(graph, tenant):
    """Six writers each adding a "Kai Moe" with their own email at the same moment: six people, each with their own
    title (a writer that lost the name's alias to another became that person and closed their title)."""
    ep, _ = graph.append_episode(tenant, msg("six Kai Moes"))
    outcomes, errors = [], []

    def work(i):
        try:
            outcomes.append(graph.assert_facts(tenant, [FactIn(
                subject=EntityRef(kind="Person", name="Kai Moe", email=f"kai{i}@x.io"), predicate="HAS_TITLE",
                value=f"T{i}", episode_id=ep.id)])[0].action)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors and outcomes == ["created"] * 6
    people = graph.find_entities(tenant, "Kai Moe", "Person")
    assert sorted(p.email for p in people) == [f"kai{i}@x.io" for i in range(6)]
    for p in people:
        assert [f.value for f in graph.facts_about(tenant, p.id)] == [f"T{p.email[3]}"]


def test_a_batch_that_creates_a_namesake_counts_it_as_separate_calls_would(graph, tenant):
    """Helper-found: with Kim Ode <a@> stored, a batch whose first fact adds Kim Ode <b@> and whose second names
    "Kim Ode" (alone, or with an id of another system) gave the second to <a@>, where the same two calls refuse
    it; and the seventh Sam Lee, one without an email, was never compared (only six namesakes were), so a new
    email beside it made an eighth instead of a refusal."""
    ep, _ = graph.append_episode(tenant, msg("namesakes"))

    def fact(ref, value="Oslo"):
        return FactIn(subject=ref, predicate="LOCATED_IN", value=value, episode_id=ep.id)
    graph.assert_facts(tenant, [fact(EntityRef(kind="Person", name="Kim Ode", email="a@x.io"))])
    for second in ({}, {"external_ids": ["hubspot:1"]}):
        with pytest.raises(InvalidInput) as err:
            graph.assert_facts(tenant, [fact(EntityRef(kind="Person", name="Kim Ode", email="b@x.io"), "Rome"),
                                        fact(EntityRef(kind="Person", name="Kim Ode", **second), "Rome")])
        assert err.value.field == "facts[1].subject.name" and "a@x.io" not in str(err.value), err.value
    # nothing was written, and the name mentioned before the batch creates its namesake is the stored one
    assert [p.email for p in graph.find_entities(tenant, "Kim Ode", "Person")] == ["a@x.io"]
    graph.assert_facts(tenant, [fact(EntityRef(kind="Person", name="Kim Ode"), "Rome"),
                                fact(EntityRef(kind="Person", name="Kim Ode", email="b@x.io"), "Rome")])
    assert sorted(p.email for p in graph.find_entities(tenant, "Kim Ode", "Person")) == ["a@x.io", "b@x.io"]
    for i in range(6):
        graph.assert_facts(tenant, [fact(EntityRef(kind="Person", name="Sam Lee", email=f"s{i}@x.io",
                                                   external_ids=[f"hubspot:{i}"]))])
    graph.assert_facts(tenant, [fact(EntityRef(kind="Person", name="Sam Lee", external_ids=["hubspot:6"]))])
    with pytest.raises(InvalidInput) as err:
        graph.assert_facts(tenant, [fact(EntityRef(kind="Person", name="Sam Lee", email="new@x.io"))])
    assert err.value.field == "facts[0].subject.name" and "and more" in str(err.value)


def test_one_new_namesake_written_by_many_at_once_is_one_person(graph, tenant):
    """Helper-found: with "Sam Lee" <a@> and <b@> stored, eight writers adding Sam Lee <r@> at the same moment got
    Neo4j's email uniqueness error (HTTP 500), as a name set apart from its namesakes took no lock; the same with a
    new id of the CRM that two "Ana Ruiz" have ids of made several Ana Ruiz, all but one without the id. Each now
    resolves to the one new person."""
    ep, _ = graph.append_episode(tenant, msg("namesakes"))
    for i in (1, 2):
        for ref in (EntityRef(kind="Person", name="Sam Lee", email=f"s{i}@x.io"),
                    EntityRef(kind="Person", name="Ana Ruiz", external_ids=[f"hubspot:{i}"])):
            graph.assert_facts(tenant, [FactIn(subject=ref, predicate="HAS_TITLE", value="Old", episode_id=ep.id)])
    errors = []

    def work(ref):
        try:
            graph.assert_facts(tenant, [FactIn(subject=ref, predicate="PREFERS_CHANNEL", value="email",
                                               episode_id=ep.id)])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
    for rnd in range(3, 5):
        for ref in (EntityRef(kind="Person", name="Sam Lee", email=f"s{rnd}@x.io"),
                    EntityRef(kind="Person", name="Ana Ruiz", external_ids=[f"hubspot:{rnd}"])):
            threads = [threading.Thread(target=work, args=(ref,)) for _ in range(8)]
            [t.start() for t in threads]
            [t.join() for t in threads]
            assert not errors, (ref, errors)
    assert sorted(p.email for p in graph.find_entities(tenant, "Sam Lee", "Person")) == \
        ["s1@x.io", "s2@x.io", "s3@x.io", "s4@x.io"]
    assert sorted(p.external_ids for p in graph.find_entities(tenant, "Ana Ruiz", "Person")) == \
        [["hubspot:1"], ["hubspot:2"], ["hubspot:3"], ["hubspot:4"]]


def test_concurrent_creation_of_one_new_entity_gives_one_entity(graph, tenant):
    ids, errors = [], []

    def work():
        try:
            ids.append(graph.upsert_entity(tenant, EntityRef(kind="Person", name="Walter Skinner")).id)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work) for _ in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors and len(set(ids)) == 1


# ---- the concurrency guarantee --------------------------------------------------------------
def test_parallel_writers_never_leave_two_current_values(graph, tenant):
    e, _ = graph.append_episode(tenant, msg("org changes"))
    person = EntityRef(kind="Person", name="Fox Mulder")
    errors = []

    def work(i):
        try:
            for j in range(5):
                graph.assert_fact(tenant, FactIn(subject=person, predicate="WORKS_AT",
                                                 object=EntityRef(kind="Organization", name=f"Org {i}-{j}"),
                                                 valid_from=T0 + timedelta(days=i * 10 + j), episode_id=e.id))
        except Exception as exc:  # pragma: no cover
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    mulder = graph.find_entities(tenant, "Fox Mulder")[0]
    all_facts = graph.facts_about(tenant, mulder.id, include_superseded=True, predicates=["WORKS_AT"])
    assert len(all_facts) == 40
    assert len([f for f in all_facts if f.valid_to is None]) == 1
    ordered = sorted(all_facts, key=lambda f: f.valid_from)
    assert ordered[-1].valid_to is None and ordered[-1].valid_from == T0 + timedelta(days=74)
    for older, newer in zip(ordered, ordered[1:]):          # a gap-free, overlap-free timeline
        assert older.valid_to == newer.valid_from


@pytest.mark.parametrize("mode", ["read", "write"])
def test_a_transaction_out_of_memory_is_not_retried(db, mode):
    """A managed transaction whose query ran out of Neo4j's transaction memory ends at once as `Unavailable` (503):
    running it again fills the pool again, and the driver's retries went on for two minutes (a paths-between call
    on a dense graph answered after 7 tries). Other transient errors (a deadlock) are still retried."""
    import time

    from neo4j.exceptions import Neo4jError

    from graphmem.errors import Unavailable

    def failing(code):
        calls = []

        def work(tx):
            calls.append(1)
            if len(calls) == 1:
                raise Neo4jError._hydrate_neo4j(code=code, message="refused")
            return len(calls)
        return work, calls
    run = db.read if mode == "read" else db.write
    work, calls = failing("Neo.TransientError.General.MemoryPoolOutOfMemoryError")
    started = time.monotonic()
    with pytest.raises(Unavailable, match="more memory than Neo4j allows"):
        run(work)
    assert calls == [1] and time.monotonic() - started < 5
    work, calls = failing("Neo.TransientError.Transaction.DeadlockDetected")
    assert run(work) == 2


# ---- bad input: clear errors, nothing written -----------------------------------------------
@pytest.mark.parametrize("fact, field", [
    (dict(predicate="LIKES_PIZZA", value="yes"), "facts[0].predicate"),
    (dict(predicate="WORKS_AT", object=EntityRef(kind="Person", name="Bob")), "facts[0].object"),
    (dict(predicate="HAS_TITLE", object=EntityRef(kind="Organization", name="Acme")), "facts[0].object"),
    (dict(predicate="HAS_TITLE", value="x" * 5000), "facts[0].value"),
])
def test_bad_facts_are_refused_and_nothing_is_written(graph, db, tenant, fact, field):
    e, _ = graph.append_episode(tenant, msg("context"))
    before = tenant_node_count(db, tenant)
    with pytest.raises(InvalidInput) as err:
        graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="New Person"), episode_id=e.id,
                                           **fact)])
    assert err.value.field == field
    assert tenant_node_count(db, tenant) == before


def test_a_bad_fact_late_in_a_batch_rolls_back_the_whole_batch(graph, db, tenant):
    e, _ = graph.append_episode(tenant, msg("context"))
    before = tenant_node_count(db, tenant)
    good = [FactIn(subject=EntityRef(kind="Person", name=f"P{i}"), predicate="HAS_TITLE", value="CFO",
                   episode_id=e.id) for i in range(50)]
    bad = FactIn(subject=EntityRef(kind="Person", name="Q"), predicate="WORKS_AT",
                 object=EntityRef(kind="Deal", name="Big deal"), episode_id=e.id)
    with pytest.raises(InvalidInput):
        graph.assert_facts(tenant, good + [bad])
    assert tenant_node_count(db, tenant) == before


def test_unknown_episode_and_entity_ids_are_not_found(graph, tenant):
    with pytest.raises(NotFound) as err:
        graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="A"), predicate="HAS_TITLE",
                                         value="CEO", episode_id="nope"))
    assert err.value.field == "facts[0].episode_id"
    e, _ = graph.append_episode(tenant, msg("x"))
    with pytest.raises(NotFound) as err:
        graph.assert_fact(tenant, FactIn(subject=EntityRef(id="missing"), predicate="HAS_TITLE", value="CEO",
                                         episode_id=e.id))
    assert err.value.field == "facts[0].subject.id"


def test_model_validation_errors():
    with pytest.raises(ValidationError, match="timezone"):
        EpisodeIn(content="x", occurred_at=datetime(2024, 1, 1))                 # naive datetime
    with pytest.raises(ValidationError) as blank_name:
        EntityRef(kind="Person", name="   ")
    assert error_message(blank_name.value.errors()[0]) == BLANK_WORDS, blank_name.value   # as every field words it
    with pytest.raises(ValidationError, match="exactly one of object"):
        FactIn(subject=EntityRef(kind="Person", name="A"), predicate="HAS_TITLE")
    with pytest.raises(ValidationError, match="PascalCase"):
        EntityRef(kind="person; DROP", name="A")


def test_oversized_episode_refused(graph, db, tenant, settings):
    with pytest.raises(InvalidInput) as err:
        graph.append_episode(tenant, msg("x" * (settings.max_episode_chars + 1)))
    assert err.value.field == "content"
    assert tenant_node_count(db, tenant) == 0


# ---- tenancy --------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [None, "", "   "])
def test_missing_tenant_raises_before_any_query(graph, bad):
    with pytest.raises(TenantRequired):
        graph.append_episode(bad, msg("x"))
    with pytest.raises(TenantRequired):
        graph.find_entities(bad, "Dana")
    with pytest.raises(TenantRequired):
        graph.get_fact(bad, "f1")


def test_tenants_never_see_each_other(graph):
    import uuid
    a, b = f"ta-{uuid.uuid4().hex[:8]}", f"tb-{uuid.uuid4().hex[:8]}"
    out = {}
    for t in (a, b):
        e, _ = graph.append_episode(t, msg("same words", key="same-key"))
        f = graph.assert_fact(t, FactIn(subject=EntityRef(kind="Person", name="Dana", email="dana@x.com"),
                                        predicate="WORKS_AT", object=EntityRef(kind="Organization", name="Acme"),
                                        episode_id=e.id))
        out[t] = (e.id, f.fact_id, graph.find_entities(t, "Dana")[0].id)
    assert out[a][0] != out[b][0] and out[a][2] != out[b][2]
    for me, other in ((a, b), (b, a)):
        ep_id, fact_id, ent_id = out[other]
        with pytest.raises(NotFound):
            graph.get_episode(me, ep_id)
        with pytest.raises(NotFound):
            graph.get_fact(me, fact_id)
        with pytest.raises(NotFound):
            graph.get_entity(me, ent_id)
        with pytest.raises(NotFound):
            graph.fact_history(me, fact_id)
        with pytest.raises(NotFound):
            graph.facts_about(me, ent_id)
        assert [e.id for e in graph.find_entities(me, "Dana")] == [out[me][2]]
        assert len(graph.facts_about(me, out[me][2])) == 1


def test_a_graph_before_schema_18_refolds_its_terms_in_one_pass_that_reads_what_each_step_would(db):
    """Schemas 18, 19 and 20 each recompute the search terms of some text (`JOINED`, `QUOTED`, `INVISIBLE`); a graph
    older than all three reads its searchable nodes once, through `any_of` of the three patterns, which must match
    exactly the text that one of them matches (Java's inline (?s) and lookaheads inside each alternative)."""
    from graphmem.store.schema import INVISIBLE, JOINED, QUOTED, any_of

    texts = ["O'Neil", "Dana's car", "O`Neil", "re\u00adnewal", "re\u200bnewal", "plain text", "line\nO`Neil",
             "don't", "caf\u00e9"]
    each = [matched(db, p, texts) for p in (JOINED, QUOTED, INVISIBLE)]
    assert matched(db, any_of([JOINED, QUOTED, INVISIBLE]), texts) == {t: any(m[t] for m in each) for t in texts}
    assert [t for t in texts if any(m[t] for m in each)] == ["O'Neil", "O`Neil", "re\u00adnewal", "line\nO`Neil"]
    assert any_of([QUOTED]) == QUOTED
