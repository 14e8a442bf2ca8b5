"""Apply the graph schema idempotently at start-up and guard the vector dimension.

The statements are `cypher/schema/*.cypher`, applied in file-name order, each `IF NOT EXISTS`, so starting
twice changes nothing. The schema version and the embedding dimension are recorded on one
`(:GraphmemSchema {id: 'graphmem'})` node. A dimension different from the recorded one is refused with
`SchemaMismatch` unless `migrate=True` (GRAPHMEM_ALLOW_SCHEMA_MIGRATION), which drops the vector indexes and
the stored embeddings and recreates the indexes at the new size. Version 2 added `tenant_token` to the full-text
indexes and version 3 their English analyzer; an older graph is migrated at start-up (full-text indexes rebuilt,
tokens backfilled per tenant). Version 4 dropped four single-property range indexes that no query plan uses
(`UNUSED_INDEXES`, checked with EXPLAIN over every file in cypher/) but every fact or episode write maintained.
Version 5 indexes per-tenant terms (`search_terms`, graphmem.store.fulltext) instead of the raw text: the full-text
indexes are dropped, every searchable node gets its terms (per tenant, in batches) and the indexes are rebuilt.
Version 6 adds the derived `(Entity)-[:RELATED {fact_id, ...}]->(Entity)` edge of every fact with an entity object,
which multi-hop recall walks (cypher/recall/around): an older graph gets them after the schema statements, per
tenant in batches. Version 7 keeps the records of API writes (episodes "API call ... by key ...") out of search
(`searchable: false`, graphmem.store.episodes.append) and copies a closed fact's `closed_at` onto its RELATED
edge, so that paths as known before the close walk it (cypher/recall/around): an older graph gets both at start-up.
Version 8 gives an episode stored without a user_id in a session that has a user that user's id (as
graphmem.store.episodes.append now does), so the user's search scope, erasure and legal holds cover it.
Version 9 folds curly and modifier-letter apostrophes to the straight one when text becomes terms
(graphmem.store.fulltext.words: "O’Sullivan" is one term, "o'sullivan", where it was "o" and "sullivan"): the
searchable nodes whose text holds one get their search_terms again (`refold_search_terms`), so queries, folded the
same way, find them.
Version 10 writes the episode's `(Episode)-[:MENTIONS]->(Entity)` edges (DESIGN.md "Graph model") that no write
made before: an episode mentions the subject and object of every fact derived from it (facts/create_batch,
facts/add_provenance) and the entities its extraction found (graphmem.ingest.apply); an older graph gets the
first kind at start-up (`backfill_mentions`), so search's graph proximity, its `entity_kinds` and scope filters,
and erasure's clean-up of entities see them.
Version 11 folds accents off Latin letters, fullwidth forms and ligatures, and case by Unicode case folding, when
text becomes terms ("José Müller" is "jose muller", "Ｄａｎａ" is "dana", "Straße" is "strasse"): the searchable
nodes whose text holds any character outside ASCII get their terms again (`refold_search_terms`, as for version 9).
A word keeps its combining marks too (Devanagari vowel signs used to split "कुत्ता" into three terms).
Version 12 keeps combining marks in the keys names and literal values resolve by (`graphmem.identifiers.name_key`):
entities whose name or an alias holds one, and facts whose value does, get their keys again (`rekey_marked_names`).
Version 14 drops variation selectors from those keys ("❤️ Fund" is "❤ Fund"), reads Hangul fillers as spaces,
and gives a name with no letter or digit no key ("❤️" had the key "\ufe0f" and named an entity); a literal value
with no letter or digit is keyed by its own folded text ("★" and "☆" had one key, ""), and value keys keep `+`
and `#` ("C++" and "C#" had one): entities and facts whose text holds a selector, a filler, `+` or `#`, or no
letter or digit, get their keys again (`rekey_marked_names`, `UNKEYED`).
Version 15 folds the Turkish i's together in those keys (`graphmem.identifiers.turkish_i`: "İLKAY IŞIK" is "İlkay
Işık"): entities and facts whose text holds "İ", "ı" or a combining dot above get their keys again
(`rekey_marked_names`, `TURKISH_I`).
Version 16 reads the zero-width space as a space and drops the periods that end a word from those keys ("Norm Al."
is "Norm Al", "Norm\u200bAl" is not "Normal"): entities and facts whose text holds a period (or a character NFKC
makes one) or a zero-width space get their keys again (`rekey_marked_names`, `PERIODS`).
Version 17 records which episodes declared each entity attribute (`(Episode)-[:DECLARED]->(Alias|ExternalId)`, and
`(Episode)-[:DECLARED {attr}]->(Entity)` for its name, email, domain and summary; graphmem.store.entities.resolve), so
that erasure strips what only erased episodes declared (and renames an entity whose name only they gave): an older
graph's attributes count as declared by every episode
that mentions their entity or that a fact about it came from (`backfill_declarations`).
Version 18 also indexes a word with an inner apostrophe that is no English possessive or contraction without it
(graphmem.store.fulltext.forms: "O'Neil" is "o'neil" and "oneil"), so that "ONeil" or "oneil" finds "O'Neil" as
the name keys already resolve them alike: the searchable nodes whose text holds such a word (`JOINED`) get their
search_terms again (`refold_search_terms`, as for version 9).
Version 19 folds a backtick or a prime (U+2032) to an apostrophe in search terms (graphmem.store.fulltext.fold:
"O`Neil" and "O\u2032Neil" are "o'neil" and "oneil", as the name keys already resolve them), where they split the
word before: the searchable nodes whose text holds one between letters or digits (`QUOTED`) get their search_terms
again (`refold_search_terms`, as for version 9).
Version 20 drops invisible format characters (graphmem.store.fulltext.INVISIBLE_FORMAT: soft hyphen, joiners,
direction marks, word joiner, byte-order mark, tag characters) from search terms ("re\u00adnewal" is "renewal", as the
name keys already read it), where they split the word before: the searchable nodes whose text holds one
(`INVISIBLE`) get their search_terms again (`refold_search_terms`, as for version 9).
A graph older than several of versions 18-20 reads its searchable nodes once for them all (`any_of` their patterns).
Version 21 writes an internationalised email in one form (graphmem.identifiers.email_address: the domain in Unicode,
"ann@xn--bcher-kva.example" is "ann@bücher.example", and the local part in NFKC, "jose\u0301@example.com" is
"jos\u00e9@example.com"), where the punycode and the Unicode form, or the decomposed and the composed one, named two
entities, and an entity's domain in the same form (graphmem.identifiers.domain_name: "xn--bcher-kva.example" is
"bücher.example", once refused): the entities whose email or domain has a character outside ASCII or an "xn--" label
(`IDN`) get them again (`renormalise_identifiers`). It also trims external ids of the characters
graphmem.identifiers.blank finds blank at either end (graphmem.identifiers.trim_blank: "crm:1\u200b" is "crm:1"), where only
whitespace was trimmed and the two named two entities: the ExternalId nodes whose key begins or ends with one
(`blank_ends()`) get the trimmed key (`retrim_external_ids`).
Version 22 reads every apostrophe typed for one as the straight one in name and value keys
(graphmem.identifiers.APOSTROPHES: "OʼNeil" with a modifier letter apostrophe and "O´Neil" with an acute accent are
"O'Neil", where they keyed "oʼneil" and "o ́neil" and named a second person): entities and facts whose text holds one
(`APOSTROPHE_VARIANTS`) get their keys again (`rekey_marked_names`, as for version 16); two entities whose names now
key alike are namesakes, logged with both ids, not merged.
Version 23 trims user ids so too (graphmem.models.SameUser: "u3\u200b" is user "u3"), where they were stored as sent:
the episodes, sessions, legal holds on a user and consents ("user:<id>") whose user id begins or ends with such a
character, and the external id "user:<id>" of the user's own entity when its id does ("user:\u200bu3", which schema
21 kept: its blank is inside the key), get the trimmed id (`retrim_user_ids`).
Version 24 reads the ʻokina (U+02BB) and the modifier letter prime (U+02B9) as apostrophes too, in name and value
keys and in search terms ("Hawaiʻi" is "Hawai'i" and "Hawaii", where it keyed "hawaiʻi" and was one term,
"hawaiʻi"), and search folds every apostrophe of `graphmem.identifiers.APOSTROPHES` before NFKC, as the keys do
("O´Neil" with an acute accent is "o'neil" and "oneil", where NFKC made the accent a space and it was "o" and
"neil"): the searchable nodes whose text holds an apostrophe search folds otherwise now (`REFOLDED_APOSTROPHES`) get
their search_terms again (in the one pass of versions 18-20, `any_of`), and entities and facts whose text holds
U+02BB or U+02B9 (`NEW_APOSTROPHES`) their keys (`rekey_marked_names`, `_name_key_before_24`); two entities whose
names now key alike ("Hawaiʻi" and "Hawaii") are namesakes, logged with both ids, not merged.
"""
from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator

import cypher
from graphmem.errors import SchemaMismatch
from graphmem.identifiers import (APOSTROPHES, FILLERS, MARKS, SELECTORS, WORD_END, ZWSP, blank, domain_name,
                                  email_address, name_key, trim_blank, turkish_i, value_key)
from graphmem.store.db import Database, tenant_token
from graphmem.store.entities import alias_key
from graphmem.store.fulltext import INVISIBLE_FORMAT, search_terms

log = logging.getLogger(__name__)
SCHEMA_VERSION = 24
LEGACY_DECLARERS_CAP = 1000
"""Schema 17's migration records legacy attributes as declared by every episode that mentions their entity (or is
the provenance of a fact about it), for entities with at most this many such episodes (`backfill_declarations`)."""
BACKFILL_BATCH = 10_000
FULLTEXT_INDEXES = ("entity_text", "fact_text", "episode_text")
VECTOR_INDEXES = ("entity_embedding", "fact_embedding", "episode_embedding")
UNUSED_INDEXES = ("fact_valid_from", "fact_valid_to", "fact_recorded_at", "episode_occurred_at")
NON_ASCII = "(?s).*[^\\x00-\\x7F].*"
"""A Java regular expression (Cypher's =~) matching text with a character outside ASCII: the text whose terms a
change of `words`' folding can change."""
MARKED = "(?s).*\\p{M}.*"
"""A Java regular expression (Cypher's =~) matching text with a combining mark: the names and values whose keys
`name_key` made otherwise before schema 12."""
UNKEYED = ("(?s)(.*[\\x{FE00}-\\x{FE0F}\\x{E0100}-\\x{E01EF}\\x{180B}-\\x{180D}\\x{180F}"
           "\\x{115F}\\x{1160}\\x{3164}\\x{FFA0}+#].*|[^\\p{L}\\p{N}]*)")
"""A Java regular expression (Cypher's =~) matching text with a variation selector, a Hangul filler, `+` or `#`
(which value keys keep now), or without any letter or digit: the names and values whose keys `name_key` /
`value_key` made otherwise before schema 14."""
TURKISH_I = "(?s).*[\\x{0130}\\x{0131}\\x{0307}\\x{1D6A4}].*"
"""A Java regular expression (Cypher's =~) matching text with "İ", "ı" (or the mathematical "𝚤", which NFKC makes
"ı") or a combining dot above: the names and values whose keys `name_key` / `value_key` made otherwise before
schema 15 (`graphmem.identifiers.turkish_i`)."""
PERIODS = "(?s).*[.\\x{2024}\\x{FE52}\\x{FF0E}\\x{200B}].*"
"""A Java regular expression (Cypher's =~) matching text with a period (or a one-dot leader, small or fullwidth full
stop, which NFKC makes one) or a zero-width space: the names and values whose keys `name_key` / `value_key` made
otherwise before schema 16 (`graphmem.identifiers.WORD_END`, `graphmem.identifiers.ZWSP`)."""
JOINED = ("(?s).*[\\p{L}\\p{N}\\p{M}]['\\x{2019}\\x{2018}\\x{02BC}\\x{FF07}]"
          "(?!(?i:s|t|d|m|ll|re|ve)(?![\\p{L}\\p{N}\\p{M}]))[\\p{L}\\p{N}].*")
"""A Java regular expression (Cypher's =~) matching text with a letter or digit, an apostrophe (straight, curly,
modifier letter or fullwidth: what `graphmem.store.fulltext.fold` makes "'") and a letter or digit that does not
start an English possessive or contraction ("'s", "'t", "'ll", ...: `graphmem.store.fulltext.CLITIC`): the text
whose terms gained a joined form in schema 18 ("O'Neil"; not "Dana's car" or "don't")."""

QUOTED = "(?s).*[\\p{L}\\p{N}\\p{M}][`\\x{2032}][\\p{L}\\p{N}].*"
"""A Java regular expression (Cypher's =~) matching text with a backtick or prime between a letter or digit and a
letter or digit: the text whose terms `graphmem.store.fulltext.words` made otherwise before schema 19 ("O`Neil",
"it`s": one word now, two before)."""

INVISIBLE = "(?s).*[" + "".join(f"\\x{{{ord(c):04X}}}" for c in INVISIBLE_FORMAT) + "].*"
"""A Java regular expression (Cypher's =~) matching text with an invisible format character that
`graphmem.store.fulltext.fold` drops (built from `INVISIBLE_FORMAT`, so the two cannot drift): the text whose terms
`words` made otherwise before schema 20 ("re\u00adnewal": one word now, two before)."""

APOSTROPHE_VARIANTS = "(?s).*[" + "".join(f"\\x{{{ord(c):04X}}}" for c in APOSTROPHES) + "].*"
"""A Java regular expression (Cypher's =~) matching text with an apostrophe other than the straight one that
`graphmem.identifiers.name_key` and `value_key` now read as it (built from `APOSTROPHES`, so the two cannot drift):
the names and values whose keys they made otherwise before schema 22 ("OʼNeil", "O´Neil")."""

APOSTROPHES_BEFORE_24 = "\u2019\u2018\u02bc`\u00b4\uff07\u2032"
"""`graphmem.identifiers.APOSTROPHES` as it was in schemas 22 and 23 (a copy, as `_name_key_before_22` copies the
key): the characters the name keys read as the straight apostrophe then."""

NEW_APOSTROPHES = "(?s).*[" + "".join(f"\\x{{{ord(c):04X}}}" for c in APOSTROPHES
                                      if c not in APOSTROPHES_BEFORE_24) + "].*"
"""A Java regular expression (Cypher's =~) matching text with an apostrophe `graphmem.identifiers.APOSTROPHES` holds
since schema 24 (the ʻokina U+02BB, the modifier letter prime U+02B9; built from the two lists, so it cannot drift):
the names and values whose keys `name_key` / `value_key` made otherwise before."""

REFOLDED_APOSTROPHES = "(?s).*[\\x{00B4}" + NEW_APOSTROPHES[len("(?s).*["):]
"""A Java regular expression (Cypher's =~) matching text whose search terms `graphmem.store.fulltext.fold` made
otherwise before schema 24: an acute accent (U+00B4, which NFKC made a space and a combining acute before `fold` read
it as an apostrophe) or an apostrophe new in `graphmem.identifiers.APOSTROPHES` (`NEW_APOSTROPHES`). The others of
the list `fold` read as the straight one already (after NFKC: the same terms)."""

IDN = "(?s).*(?:[^\\x00-\\x7F]|xn--).*"
"""A Java regular expression (Cypher's =~) matching an internationalised email or domain: a character outside ASCII
(in an email's local part or domain) or a punycode "xn--" label: the emails and domains
`graphmem.identifiers.email_address` and `domain_name` may write otherwise than a graph before schema 21 holds (an ASCII
local part and an ASCII domain without "xn--" are kept as they are)."""


@functools.cache
def blank_ends(prefix: str = "") -> str:
    """A Java regular expression (Cypher's =~) matching text that begins or ends with a character
    `graphmem.identifiers.blank` finds blank (whitespace, controls, invisible format characters, variation
    selectors, blank fillers; outside the BMP too): the external ids `graphmem.identifiers.trim_blank` trims now,
    where only whitespace was trimmed before schema 21, and the user ids it trims now, stored as sent before schema 23. With `prefix` (literal
    text without regular-expression characters, e.g. `USER_PREFIX`), text that is `prefix` followed by such text: the
    consent subjects and external ids "user:<id>" whose id `trim_blank` trims. Only those migrations need it, so it is
    built on first call (a scan of the BMP) and cached. Built from `blank` so the two cannot drift: a character class
    of the BMP's characters `blank` finds blank (listed as ranges), and of every control and format character (Cc,
    Cf: those outside the BMP, as `blank` reads them, and a few visible format characters of the BMP such as U+0600,
    which `trim_blank` then keeps) and the variation selectors supplement."""
    cls = _blank_class()
    return f"(?s){prefix}(?:{cls}.*|.*{cls})"


@functools.cache
def _blank_class() -> str:
    """The character class of `blank_ends` (a scan of the BMP, built once)."""
    ranges, start = [], None
    for cp in range(0x10001):
        is_blank = cp < 0x10000 and not 0xD800 <= cp <= 0xDFFF and blank(chr(cp))
        if is_blank and start is None:
            start = cp
        elif not is_blank and start is not None:
            ranges.append(f"\\x{{{start:04X}}}" + (f"-\\x{{{cp - 1:04X}}}" if cp - 1 > start else ""))
            start = None
    return "[" + "".join(ranges) + "\\p{Cc}\\p{Cf}\\x{E0100}-\\x{E01EF}]"


def apply_schema(db: Database, dimension: int, *, migrate: bool = False) -> dict:
    """Create constraints and indexes; record version and dimension.

    Returns {"version", "embedding_dimension", "migrated": bool}. Raises `SchemaMismatch` when the graph was
    created with another vector dimension (and `migrate` is false) or by a newer graphmem.
    """
    records = db.rows("meta/get_schema")
    if len(records) > 1:   # processes that started at once before schema/009 made two: keep the newer
        db.execute("meta/dedupe_schema_record")
        records = db.rows("meta/get_schema")
    recorded = records[0] if records else None
    migrated = False
    if recorded:
        if recorded["version"] and recorded["version"] > SCHEMA_VERSION:
            raise SchemaMismatch(f"the graph has schema version {recorded['version']}; this graphmem knows "
                                 f"{SCHEMA_VERSION}. Upgrade graphmem.")
        old_dim = recorded["embedding_dimension"]
        if old_dim is not None and old_dim != dimension:
            if not migrate:
                raise SchemaMismatch(
                    f"the graph's vector indexes have dimension {old_dim} but settings ask for {dimension} "
                    f"(GRAPHMEM_EMBEDDING_DIMENSION). Set GRAPHMEM_ALLOW_SCHEMA_MIGRATION=true to drop the old "
                    f"embeddings and rebuild the indexes, or keep the old dimension.",
                    field="embedding_dimension")
            for name in VECTOR_INDEXES:
                db.schema_statement("meta/drop_index", name=name)
            db.schema_statement("meta/clear_embeddings")
            migrated = True
    if recorded and (recorded["version"] or 1) < 3:   # full-text indexes: tenant_token (2), english analyzer (3)
        for name in FULLTEXT_INDEXES:
            db.schema_statement("meta/drop_index", name=name)
        for row in db.rows("meta/tenant_ids"):
            db.execute("meta/backfill_tenant_token", tenant_id=row["tenant_id"],
                       tenant_token=tenant_token(row["tenant_id"]))
        migrated = True
    if recorded and (recorded["version"] or 1) < 4:   # range indexes no query uses, paid for by every write
        for name in UNUSED_INDEXES:
            db.schema_statement("meta/drop_index", name=name)
        migrated = True
    if recorded and (recorded["version"] or 1) < 5:   # full-text indexes over per-tenant search_terms
        for name in FULLTEXT_INDEXES:
            db.schema_statement("meta/drop_index", name=name)
        backfill_search_terms(db)
        migrated = True
    for name in cypher.names("schema"):
        db.schema_statement(name, dimension=dimension)
    db.schema_statement("meta/await_indexes", timeout_s=300)
    if recorded and (recorded["version"] or 1) < 6:   # RELATED edges for multi-hop recall (needs related_fact_id)
        backfill_related(db)
        migrated = True
    if recorded and (recorded["version"] or 1) < 7:   # records of API writes leave search; closed_at on RELATED
        for name in ("meta/unsearchable_api_records", "meta/related_closed_at"):
            while db.execute(name, limit=BACKFILL_BATCH)[0]["updated"]:
                pass
        migrated = True
    if recorded and (recorded["version"] or 1) < 8:   # episodes of a user's session without the user's id
        while db.execute("meta/episode_users_from_sessions", limit=BACKFILL_BATCH)[0]["updated"]:
            pass
        migrated = True
    if recorded and (recorded["version"] or 1) < 10:  # episodes mention their facts' entities
        backfill_mentions(db)
        migrated = True
    if recorded and (recorded["version"] or 1) < 11:  # terms of non-ASCII text, folded (curly apostrophes: 9)
        refold_search_terms(db)
        migrated = True
    if recorded and (recorded["version"] or 1) < 12:  # name and value keys keep combining marks
        rekey_marked_names(db)
        migrated = True
    if recorded and (recorded["version"] or 1) < 13:  # records of memory confirmations and corrections leave search
        while db.execute("meta/unsearchable_memory_records", limit=BACKFILL_BATCH)[0]["updated"]:
            pass
        migrated = True
    if recorded and (recorded["version"] or 1) < 14:  # keys drop variation selectors; symbol-only names have none
        rekey_marked_names(db, pattern=UNKEYED, old_key=_name_key_before_14)
        migrated = True
    if recorded and (recorded["version"] or 1) < 15:  # keys fold the Turkish i's together
        rekey_marked_names(db, pattern=TURKISH_I, old_key=_name_key_before_15)
        migrated = True
    if recorded and (recorded["version"] or 1) < 16:  # keys drop a word's final period; a zero-width space spaces
        rekey_marked_names(db, pattern=PERIODS, old_key=_name_key_before_16)
        migrated = True
    if recorded and (recorded["version"] or 1) < 17:  # who declared each entity attribute (erasure strips them)
        backfill_declarations(db)
        migrated = True
    # the terms of text the tokenizer reads otherwise since: words with an apostrophe also indexed without it (18),
    # a backtick or prime between letters an apostrophe (19), invisible format characters no split (20), every
    # apostrophe of the one list folded before NFKC, the okina and modifier prime among them (24); one pass
    before = (recorded["version"] or 1) if recorded else None
    refold = [p for v, p in ((18, JOINED), (19, QUOTED), (20, INVISIBLE), (24, REFOLDED_APOSTROPHES))
              if before is not None and before < v]
    if refold:
        refold_search_terms(db, pattern=any_of(refold))
        migrated = True
    if recorded and (recorded["version"] or 1) < 21:  # one form of an internationalised email or domain
        renormalise_identifiers(db)
        retrim_external_ids(db)
        migrated = True
    if recorded and (recorded["version"] or 1) < 22:  # keys read every apostrophe as the straight one
        rekey_marked_names(db, pattern=APOSTROPHE_VARIANTS, old_key=_name_key_before_22)
    if recorded and (recorded["version"] or 1) < 23:  # user ids trimmed as external ids are (SameUser)
        retrim_user_ids(db)
        migrated = True
    if recorded and (recorded["version"] or 1) < 24:  # keys read the okina and modifier prime as apostrophes
        rekey_marked_names(db, pattern=NEW_APOSTROPHES, old_key=_name_key_before_24)
        migrated = True
    db.execute("meta/set_schema", version=SCHEMA_VERSION, embedding_dimension=dimension)
    return {"version": SCHEMA_VERSION, "embedding_dimension": dimension, "migrated": migrated}


def backfill_search_terms(db: Database, batch: int = BACKFILL_BATCH) -> int:
    """Give every searchable node without `search_terms` its terms (schema 4 -> 5), one tenant and `batch` nodes
    per transaction. Returns the number of nodes updated."""
    done = 0
    for row in db.rows("meta/search_terms_tenants"):
        tenant = row["tenant_id"]
        while True:
            nodes = db.rows("meta/search_terms_missing", tenant_id=tenant, limit=batch)
            if not nodes:
                break
            done += db.execute("meta/set_search_terms", tenant_id=tenant, rows=[
                {"eid": n["eid"], "terms": search_terms(tenant, n["text"])} for n in nodes])[0]["updated"]
    return done


def _batches(rows: Iterable[dict], size: int) -> Iterator[list[dict]]:
    """`rows` in lists of `size` (the last one shorter), as they come."""
    chunk: list[dict] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def any_of(patterns: list[str]) -> str:
    """One Java regular expression (Cypher's =~, which matches the whole text) matching text that any of `patterns`
    matches: start-up reads the text of every searchable node once for several schema steps' refolds, not once per
    step."""
    return patterns[0] if len(patterns) == 1 else "|".join(f"(?:{p})" for p in patterns)


def refold_search_terms(db: Database, batch: int = BACKFILL_BATCH, *, pattern: str = NON_ASCII) -> int:
    """Recompute `search_terms` of the searchable nodes whose text matches `pattern` (a Java regular expression):
    by default text with a character outside ASCII (`NON_ASCII`), whose terms were made before
    `graphmem.store.fulltext.words` folded curly apostrophes (schema 8 -> 9) and accents, fullwidth letters and
    ligatures (10 -> 11); `JOINED`, text with a word whose apostrophe `graphmem.store.fulltext.forms` now also drops
    (17 -> 18); `QUOTED`, text with a backtick or prime `graphmem.store.fulltext.words` now reads as an apostrophe
    (18 -> 19); `INVISIBLE`, text with an invisible format character `graphmem.store.fulltext.fold` now drops
    (19 -> 20); `REFOLDED_APOSTROPHES`, text with an apostrophe `fold` now reads before NFKC or newly (23 -> 24).
    Each tenant's such nodes read in one pass (`meta/refold_terms`, `Database.stream`), written `batch` per
    transaction; safe to re-run after an interruption (the terms come out the same). Returns the number of nodes
    updated."""
    done = 0
    for row in db.rows("meta/refold_terms_tenants", pattern=pattern):
        tenant = row["tenant_id"]
        for nodes in _batches(db.stream("meta/refold_terms", tenant_id=tenant, pattern=pattern), batch):
            done += db.execute("meta/set_search_terms", tenant_id=tenant, rows=[
                {"eid": n["eid"], "terms": search_terms(tenant, n["text"])} for n in nodes])[0]["updated"]
    return done


def _name_key_before_12(name: str) -> str:
    """`graphmem.identifiers.name_key` as it was before schema 12, which dropped combining marks with the punctuation:
    the keys a graph written then holds, which `rekey_marked_names` replaces."""
    s = unicodedata.normalize("NFKC", name).casefold()
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s@.-]", "", s)).strip()


def _name_key_before_14(name: str) -> str:
    """`graphmem.identifiers.name_key` as it was in schemas 12 and 13, which kept variation selectors (as combining marks)
    and gave a name of punctuation alone ("...") a key: the keys such a graph holds, which `rekey_marked_names`
    replaces."""
    s = unicodedata.normalize("NFKC", name).casefold()
    return re.sub(r"\s+", " ", re.sub(rf"[^\w\s@.{MARKS}-]", "", s)).strip()


def _name_key_before_15(name: str) -> str:
    """`graphmem.identifiers.name_key` as it was in schema 14, which kept the Turkish i's apart ("İ" as "i" + a combining
    dot above, "ı" as itself): the keys such a graph holds, which `rekey_marked_names` replaces."""
    s = SELECTORS.sub("", FILLERS.sub(" ", unicodedata.normalize("NFKC", name)).casefold())
    s = re.sub(r"\s+", " ", re.sub(rf"[^\w\s@.{MARKS}-]", "", s)).strip()
    return s if any(c.isalnum() for c in s) else ""


def _name_key_before_16(name: str) -> str:
    """`graphmem.identifiers.name_key` as it was in schema 15, which kept the periods that end a word and dropped the
    zero-width space with the punctuation: the keys such a graph holds, which `rekey_marked_names` replaces."""
    s = turkish_i(SELECTORS.sub("", FILLERS.sub(" ", unicodedata.normalize("NFKC", name)).casefold()))
    s = re.sub(r"\s+", " ", re.sub(rf"[^\w\s@.{MARKS}-]", "", s)).strip()
    return s if any(c.isalnum() for c in s) else ""


def _name_key_before_22(name: str) -> str:
    """`graphmem.identifiers.name_key` as it was in schemas 16 to 21, which read an apostrophe other than the
    straight one as NFKC leaves it (`APOSTROPHES`: the modifier letter apostrophe kept as a letter, the acute accent
    as a space and a combining acute): the keys such a graph holds, which `rekey_marked_names` replaces."""
    s = turkish_i(SELECTORS.sub("", FILLERS.sub(" ", ZWSP.sub(" ", unicodedata.normalize("NFKC", name))).casefold()))
    s = re.sub(r"\s+", " ", WORD_END.sub("", re.sub(rf"[^\w\s@.{MARKS}-]", "", s))).strip()
    return s if any(c.isalnum() for c in s) else ""


_FOLD_BEFORE_24 = str.maketrans(dict.fromkeys(APOSTROPHES_BEFORE_24, "'"))


def _name_key_before_24(name: str) -> str:
    """`graphmem.identifiers.name_key` as it was in schemas 22 and 23, which read only `APOSTROPHES_BEFORE_24` as the
    straight apostrophe (the ʻokina and the modifier letter prime stayed in the key as letters: "hawaiʻi"): that
    list's apostrophes straightened, then the key of schemas 16 to 21: the keys such a graph holds, which
    `rekey_marked_names` replaces."""
    return _name_key_before_22(name.translate(_FOLD_BEFORE_24))


def rekey_marked_names(db: Database, batch: int = BACKFILL_BATCH, *, pattern: str = MARKED,
                       old_key: Callable[[str], str] = _name_key_before_12) -> int:
    """Give entities whose name or an alias matches `pattern`, and facts whose literal value does, the keys
    `name_key` / `value_key` make now, in place of those `old_key` made. Schema 11 -> 12 (`MARKED`, the default):
    combining marks, vowels in Devanagari or Tamil, used to be dropped, so "मोहन" and "मोहिनी" had one key and
    resolved to one person. Schema 12/13 -> 14 (`UNKEYED`, `_name_key_before_14`): variation selectors, and text
    with no letter or digit. Schema 14 -> 15 (`TURKISH_I`, `_name_key_before_15`): the Turkish i's. Schema 15 ->
    16 (`PERIODS`, `_name_key_before_16`): a word's final period, the zero-width space. Schema 21 -> 22
    (`APOSTROPHE_VARIANTS`, `_name_key_before_22`): apostrophes other than the straight one. Schema 22/23 -> 24
    (`NEW_APOSTROPHES`, `_name_key_before_24`): the ʻokina and the modifier letter prime. Each tenant's
    such entities, then facts, read in one pass (`Database.stream`), written
    `batch` per transaction; safe to re-run. Entities already merged that way stay one entity (what was said of the
    second name is on the first); two entities whose names now key alike ("❤ Fund" and "❤️ Fund", made twice
    before schema 14) are namesakes, which is logged (a warning naming both ids): a name alone then gets the
    ambiguity answer, an id still names each. Returns the number of entities and facts updated."""
    done = 0
    for row in db.rows("meta/marked_tenants", pattern=pattern):
        tenant = row["tenant_id"]
        for ents in _batches(db.stream("meta/marked_entities", tenant_id=tenant, pattern=pattern), batch):
            rows = []
            for e in ents:
                names = [e["name"], *e["aliases"]]
                keys = {alias_key(e["kind"], name_key(n)): name_key(n) for n in names if name_key(n)}
                old = {alias_key(e["kind"], old_key(n)) for n in names if old_key(n)}
                rows.append({"id": e["id"], "name_key": name_key(e["name"]),
                             "add": [{"key": k, "name_key": v} for k, v in keys.items() if k not in old],
                             "drop": sorted(old - keys.keys())})
            out = db.execute("meta/set_entity_keys", tenant_id=tenant, rows=rows)[0]
            done += out["updated"]
            if out["namesakes"]:
                log.warning("schema migration: in tenant %r, %d entities now share a name key with another entity "
                            "of their kind (namesakes; their name alone is now ambiguous, their ids are not): %s",
                            tenant, len(out["namesakes"]),
                            ", ".join(f"{n['id']} with {n['owner']}" for n in out["namesakes"][:20]))
        for facts in _batches(db.stream("meta/marked_values", tenant_id=tenant, pattern=pattern), batch):
            done += db.execute("meta/set_object_keys", tenant_id=tenant, rows=[
                {"id": f["id"], "object_key": f"v:{value_key(f['value'])}"} for f in facts])[0]["updated"]
    return done


IDENTIFIER_FORMS: dict[str, Callable[[str], str]] = {"email": email_address, "domain": domain_name}
"""The strong identifiers schema 21 writes in one form, and the function that makes it."""


def renormalise_identifiers(db: Database, batch: int = BACKFILL_BATCH) -> int:
    """Give entities whose email or domain is internationalised (`IDN`) the one `email_address` or `domain_name`
    makes now (schema 20 -> 21): "ann@xn--bcher-kva.example" and "ann@bücher.example", or "jose\u0301@example.com"
    (NFD) and "jos\u00e9@example.com" (NFC), were two keys, and named two entities; a domain was kept in punycode
    ("xn--bcher-kva.example"), where an email's is in Unicode now ("bücher.example").
    Each tenant's such entities read in one pass, oldest first (`meta/idn_identifiers`, `Database.stream`), written
    `batch` per transaction (`meta/set_entity_identifiers`); safe to re-run. Of two entities whose emails (or
    domains) are now one (one person stored twice, once per form), the one that holds it already, else the older,
    takes it; the other keeps its own as it was, its id still names it, and a warning names both ids (they are not
    merged). Returns the number of emails and domains written."""
    done = 0
    for row in db.rows("meta/idn_identifier_tenants", pattern=IDN):
        tenant, claimed, taken = row["tenant_id"], {}, []
        for ents in _batches(db.stream("meta/idn_identifiers", tenant_id=tenant, pattern=IDN), batch):
            rows = []
            for e in ents:
                new = {attr: _one_form(e, attr, claimed, taken) for attr in IDENTIFIER_FORMS}
                if any(new.values()):
                    rows.append({"id": e["id"], **new})
            if rows:
                out = db.execute("meta/set_entity_identifiers", tenant_id=tenant, rows=rows)[0]
                done += out["updated"]
                taken += out["taken"]
        if taken:
            log.warning("schema migration: in tenant %r, %d entities keep their email or domain as written because "
                        "another entity holds it in its one form (one entity stored twice? their ids still name "
                        "each): %s", tenant, len(taken),
                        ", ".join(f"{t['id']} ({t['value']}, held by {t['owner']})" for t in taken[:20]))
    return done


def retrim_external_ids(db: Database, batch: int = BACKFILL_BATCH, *, prefix: str = "") -> int:
    """Store each external id whose key begins or ends with a character `blank` finds blank (`blank_ends()`) under the
    key `trim_blank` makes now (schema 20 -> 21): "crm:1\u200b" and "crm:1" were two keys, and named two entities.
    With `prefix` (`USER_PREFIX`, schema 22 -> 23), the keys `prefix` + such an id, whose id is trimmed
    ("user:\u200bu3" is "user:u3", `_trimmed_after`).
    Each tenant's such ids read in one pass (`meta/blank_ended_ids`, `Database.stream`), written `batch` per
    transaction (`meta/set_external_keys`); safe to re-run. An entity holding both forms keeps one ExternalId, which
    the episodes that declared either declare; when another entity holds the trimmed key (one entity stored twice,
    once per form), the id stays as written, its entity is not merged, and a warning names both ids. A key of blank
    characters alone (stored before they were refused) has no trimmed form and stays. Returns the number of keys
    written."""
    done, pattern = 0, blank_ends(prefix)
    for row in db.rows("meta/blank_ended_id_tenants", pattern=pattern):
        tenant, taken = row["tenant_id"], []
        for ids in _batches(db.stream("meta/blank_ended_ids", tenant_id=tenant, pattern=pattern), batch):
            rows = [{"key": x["key"], "new_key": new} for x in ids
                    if (new := _trimmed_after(prefix, x["key"])) not in ("", x["key"])]
            done += _write_per_key(db, "meta/set_external_keys", tenant, rows, "new_key", taken)
        if taken:
            log.warning("schema migration: in tenant %r, %d external ids stay as written because another entity holds "
                        "them trimmed (one entity stored twice? their ids still name each): %s", tenant, len(taken),
                        ", ".join(f"{t['id']} ({t['value']!r}, held by {t['owner']})" for t in taken[:20]))
    return done


USER_PREFIX = "user:"
"""What a user id follows in a consent's subject and in the external id of the user's own entity ("user:<id>",
graphmem.governance.erasure.USER_KEY)."""


def _trimmed_after(prefix: str, text: str) -> str:
    """`text` (which starts with `prefix`) with what follows `prefix` trimmed by `trim_blank`; "" when nothing but
    blank characters follows (no trimmed form)."""
    rest = trim_blank(text[len(prefix):])
    return prefix + rest if rest else ""


def _write_per_key(db: Database, query: str, tenant: str, rows: list[dict], key: str, taken: list[dict]) -> int:
    """Run the migration write `query` (which returns {updated, taken}) over the tenant's `rows` in writes with no
    two rows of one `key`: two old forms of one trimmed value ("\u200bk", "k\u200b") go in successive writes, so the
    second sees the first's as another record holding it. Appends what each write reports taken to `taken`; returns
    the number of records updated."""
    done = 0
    while rows:
        seen: set[str] = set()
        now, later = [], []
        for r in rows:
            (later if r[key] in seen else now).append(r)
            seen.add(r[key])
        out = db.execute(query, tenant_id=tenant, rows=now)[0]
        done += out["updated"]
        taken += out["taken"]
        rows = later
    return done


def retrim_user_ids(db: Database, batch: int = BACKFILL_BATCH) -> int:
    """Store each user id that begins or ends with a character `blank` finds blank (`blank_ends()`) as `trim_blank`
    (graphmem.models.SameUser) makes it now (schema 22 -> 23): "u3\u200b" was stored as sent, and no call reaches it
    since a sent user id is trimmed. Per tenant: the episodes' and sessions' `user_id` (`meta/set_user_ids`, `batch`
    of each per transaction), then the legal holds on the user and the consents of subject "user:<id>"
    (`meta/set_user_records`), then the external id "user:<id>" of the user's own entity (`retrim_external_ids` with
    `USER_PREFIX`). A user has one legal hold and one consent record: where the trimmed user has its own already, the
    old one stays as written (both are kept, nothing is merged or lost) and a warning names both; so does an external
    id another entity holds trimmed. A user id of blank characters alone has no trimmed form and stays. Safe to re-run.
    A hold moved to the trimmed id covers that user's episodes: the sweeper's next pass sets their `legal_hold` flags
    and retention (`Retention.sync_holds`) before it deletes anything, as after any change of holds.
    Returns the number of records written."""
    done, pattern, subject = 0, blank_ends(), blank_ends(USER_PREFIX)
    for row in db.rows("meta/blank_user_tenants", pattern=pattern, subject=subject):
        tenant, taken = row["tenant_id"], []
        users = [{"old": u["user_id"], "new": new}
                 for u in db.rows("meta/blank_user_ids", tenant_id=tenant, pattern=pattern, subject=subject)
                 if (new := trim_blank(u["user_id"])) not in ("", u["user_id"])]
        for user in users:
            while True:
                out = db.execute("meta/set_user_ids", tenant_id=tenant, limit=batch, **user)[0]
                done += out["episodes"] + out["sessions"]
                if max(out["episodes"], out["sessions"]) < batch:
                    break
        for rows in _batches(users, batch):
            done += _write_per_key(db, "meta/set_user_records", tenant, rows, "new", taken)
        if taken:
            log.warning("schema migration: in tenant %r, %d records of a user stay under the user id as written because "
                        "the trimmed user has its own (kept both; release or set the one no longer wanted): %s",
                        tenant, len(taken), ", ".join(
                            f"legal hold {t['id']} on {t['value']!r} (user {t['user']!r} has {t['owner']})"
                            if t["record"] == "legal hold" else
                            f"consent of {USER_PREFIX + t['value']!r} ({USER_PREFIX + t['user']!r} has one)"
                            for t in taken[:20]))
    return done + retrim_external_ids(db, batch, prefix=USER_PREFIX)


def _one_form(entity: dict, attr: str, claimed: dict[tuple[str, str], str], taken: list[dict]) -> str | None:
    """The one form of `entity`'s `attr` ('email' or 'domain', `IDENTIFIER_FORMS`) to write, or None: when it has
    none, is in that form already or cannot be read as one (a value stored before today's checks is left as it is),
    or when an entity read before claimed that form this migration (`claimed`: (attr, value) -> entity id; then it
    goes to `taken`, as the write query reports one another entity holds)."""
    value = entity[attr]
    try:
        new = IDENTIFIER_FORMS[attr](value) if value is not None else value
    except ValueError:
        return None
    if new == value:
        return None
    if (attr, new) in claimed:   # a batch's rows are checked before any is written: one entity per value
        taken.append({"id": entity["id"], "attr": attr, "value": new, "owner": claimed[attr, new]})
        return None
    claimed[attr, new] = entity["id"]
    return new


def backfill_related(db: Database, batch: int = BACKFILL_BATCH) -> int:
    """Give every fact with an entity object its RELATED edge (schema 5 -> 6), one tenant and `batch` facts per
    transaction; safe to re-run after an interruption. Returns the number of edges created."""
    done = 0
    for row in db.rows("meta/related_tenants"):
        while created := db.execute("meta/backfill_related", tenant_id=row["tenant_id"], limit=batch)[0]["created"]:
            done += created
    return done


def backfill_mentions(db: Database, batch: int = BACKFILL_BATCH) -> int:
    """Link every episode to the subject and object entities of the facts derived from it (`MENTIONS`; schema
    9 -> 10): each tenant's episodes with facts read in one pass (`meta/mention_episodes`, `Database.stream`), linked
    `batch` per transaction; safe to re-run after an interruption (an existing mention is not made twice). Returns
    the number of mentions created."""
    done = 0
    for row in db.rows("meta/mention_tenants"):
        tenant = row["tenant_id"]
        for eps in _batches(db.stream("meta/mention_episodes", tenant_id=tenant), batch):
            done += db.execute("meta/backfill_mentions", tenant_id=tenant,
                               ids=[e["id"] for e in eps])[0]["created"]
    return done


def backfill_declarations(db: Database, batch: int = 200, cap: int = LEGACY_DECLARERS_CAP) -> int:
    """Record who declared the attributes stored before schema 17 (16 -> 17): the name, an alias (other than the
    name), an external id, an email, a domain or a summary of an entity, without any DECLARED edge, counts as declared
    by each episode that mentions the entity or that a fact about it was derived from (every episode that could have
    declared it), so that erasing all of them strips it and erasing some keeps it (docs/architecture.md). An entity
    with more than `cap` such episodes, or none, gets no record: its attributes stay whatever is erased. Each tenant's
    entities are read in one pass (`meta/declaring_entities`, `Database.stream`), recorded `batch` per transaction;
    safe to re-run (an attribute with a record is not touched). Returns the number of DECLARED edges created."""
    done = 0
    for row in db.rows("meta/declaration_tenants"):
        tenant = row["tenant_id"]
        for ents in _batches(db.stream("meta/declaring_entities", tenant_id=tenant), batch):
            done += db.execute("meta/backfill_declarations", tenant_id=tenant, cap=cap,
                               ids=[e["id"] for e in ents])[0]["created"]
    return done


def schema_objects(db: Database) -> list[dict]:
    """The indexes and constraints' backing indexes present now: [{name, type, state}]."""
    return db.rows("meta/schema_objects")
