"""Per-tenant full-text terms: what the Lucene full-text indexes (`entity_text`, `fact_text`, `episode_text`) hold.

Every searchable node stores `search_terms`: the words of its text (a fact's statement, an episode's content, an
entity's name and aliases; `words`, which queries share), folded (`fold`: case, accents on Latin and Greek letters,
fullwidth forms, ligatures), Lucene's English stop words left out, a word with an inner apostrophe also without it
(`forms`: "o'neil" and "oneil", not "dana's" and "danas"), each prefixed with its tenant's
`tenant_prefix` ("t<digits>_"). The index's English analyzer still stems each term (Porter) and strips possessives;
the prefix has no vowel, so Porter's measure, and hence the stem, is that of the bare word (except that a leading
"y" now counts as a vowel; index and query terms go through the same analyzer, so they still match).

Why: a query must be confined to one tenant inside Lucene. With one shared term per word ("report"), Lucene walks
every document of the tenant (or every document with the word, across tenants) to score the few that match: in a
tenant of 100k facts a three-word question cost ~3 ms of server CPU. With prefixed terms the postings Lucene reads
are the tenant's own (~1 ms for the same question, bench/context.py graph), and BM25's document frequencies are
per tenant.

Queries (`tenant_query`): a prefixed term that Lucene keeps whole (ASCII letters and digits, with an apostrophe
between letters) can only match the tenant's own nodes, so a query made of such terms is a plain disjunction,
`search_terms:t.._carol search_terms:t.._wu ...`. The tokenizer splits some prefixed words (UAX#29: Han and
Hiragana are one token per character, without the prefix), so a query with any other term also requires the tenant
inside Lucene (`+tenant_token:... +search_terms:(...)`), and such a term is searched as phrases (see
`tenant_query`) so that the bare prefix Lucene cuts off never matches on its own. The required clause is not free:
in the bench/context.py tenant (100k facts) "who does Carol Wu report to" matches 35k facts and took ~1.9 ms of
server time with it, ~1.0 ms as a plain disjunction (same hits, same order: the clause adds one constant to every
score).
Every query also checks `tenant_id` on what the index returns.
"""
from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

from graphmem.identifiers import APOSTROPHES, MARKS
from graphmem.store.db import require_tenant, tenant_token

# A word: a letter or digit, then letters, digits and combining marks (Devanagari vowel signs, viramas: Lucene's
# tokenizer keeps them inside a word too, UAX#29), with at most one inner apostrophe.
_LETTER = rf"(?:[^\W_]|[{MARKS}])"
WORD = re.compile(rf"[^\W_]{_LETTER}*(?:'[^\W_]{_LETTER}*)?")
# Invisible format characters (Unicode category Cf) dropped before `WORD` splits text, as the name keys drop them
# (`graphmem.identifiers.name_key`): they show nothing, so a word holding one reads as the word without it ("re\u00adnewal"
# with a soft hyphen from a hyphenated web page is "renewal"; Persian text with a zero-width non-joiner and without
# it one word), where they split the word before (schema 20 recomputed the terms of text with one,
# `graphmem.store.schema.INVISIBLE`): the soft hyphen, Arabic letter mark, Mongolian vowel separator, zero-width
# non-joiner and joiner, direction marks, embeddings, overrides and isolates, word joiner and invisible operators,
# deprecated format characters, byte-order mark (zero-width no-break space), interlinear annotation controls, and
# the tag characters. The zero-width space (U+200B) is not among them: it separates words, as a space does for the
# name keys.
INVISIBLE_FORMAT = ("\u00ad\u061c\u180e\u200c\u200d\u200e\u200f" + "".join(map(chr, range(0x202A, 0x202F)))
                    + "".join(map(chr, range(0x2060, 0x2065))) + "".join(map(chr, range(0x2066, 0x2070)))
                    + "\ufeff\ufff9\ufffa\ufffb\U000e0001" + "".join(map(chr, range(0xE0020, 0xE0080))))
# What `fold` reads as the straight apostrophe (the characters typed for one, `graphmem.identifiers.APOSTROPHES`: the
# one list, which the name keys read so too) and the invisible format characters it drops.
_FOLD = str.maketrans({**dict.fromkeys(APOSTROPHES, "'"), **dict.fromkeys(INVISIBLE_FORMAT)})
# Latin letters with a stroke or ligatures, which NFD does not split into a letter and a mark (as Lucene's
# ASCIIFoldingFilter folds them), lower case: "Łódź Ørsted" is "lodz orsted"; and Russian "ё", mostly written "е".
_BASE = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ħ": "h", "ŧ": "t", "ı": "i", "æ": "ae", "œ": "oe", "ð": "d",
                       "þ": "th", "ŋ": "n", "ё": "е"})
# Unicode categories of the symbols and numbers `_spaced` sets apart: math, currency, modifier and other symbols,
# letter-like and other numbers (not decimal digits, which NFKC turns into digits of a number: "１２" is "12").
_SPELLED = frozenset(("Sm", "Sc", "Sk", "So", "Nl", "No"))
# Lucene's EnglishAnalyzer stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET): the index never held these words.
INDEX_STOP_WORDS = frozenset("a an and are as at be but by for if in into is it no not of on or such that the "
                             "their then there these they this to was will with".split())
# A prefixed term the English analyzer keeps as one token (UAX#29: letters and digits join the prefix's "_"; an
# apostrophe joins two letters), optionally a prefix query ("corp*").
WHOLE_TERM = re.compile(r"(?:[a-z0-9]+|[a-z0-9]*[a-z]'[a-z][a-z0-9]*)(?:\*|~[12])?")
# Lucene refuses a query of more than IndexSearcher.getMaxClauseCount() leaf clauses (1024 by default; Neo4j keeps
# it) with TooManyClauses. A query keeps the terms that fit in 900 (room for the tenant clause); a term's cost is
# counted as Lucene will see it (`_clauses`).
MAX_CLAUSES = 900


@functools.lru_cache(maxsize=4096)
def tenant_prefix(tenant_id: str) -> str:
    """"t" + 19 or 20 decimal digits of the tenant id's BLAKE2b-64 hash + "_": one Lucene token with the word
    it prefixes (UAX#29 keeps letters, digits and underscores together) and no vowel."""
    digest = hashlib.blake2b(require_tenant(tenant_id).encode(), digest_size=8).digest()
    return f"t{int.from_bytes(digest, 'big')}_"


def fold(text: str) -> str:
    """`text` as search compares it. Lucene's English analyzer folds none of these, so the terms are folded before
    they reach it, stored text and queries alike:
    - the characters typed for an apostrophe (`graphmem.identifiers.APOSTROPHES`: curly and modifier-letter
      apostrophes, backticks, acute accents, primes, the ʻokina ...) as the straight one, first, as the name keys
      read them ("O´Neil" -> "o'neil", where NFKC made the acute accent a space and a combining acute, and
      "Hawaiʻi" -> "hawai'i"), and again after NFKC for those it makes of other characters (a fullwidth grave
      accent, "ŉ");
    - NFKC: fullwidth forms and ligatures as their plain letters ("Ｄａｎａ" -> "Dana", "ﬁ" -> "fi"); a symbol or
      number that NFKC spells out stands apart from its neighbours (`_spaced`: "Acme™" -> "acme tm", not
      "acmetm"; "3½" -> "3 1⁄2");
    - invisible format characters (`INVISIBLE_FORMAT`: soft hyphen, joiners, direction marks ...) dropped, so that
      they do not split a word ("re\u00adnewal" is "renewal");
    - Unicode case folding ("Straße" -> "strasse");
    - accents off Latin letters: the combining marks NFD splits off a letter of Basic Latin, Latin-1, Latin
      Extended-A/B or Latin Extended Additional ("José Müller" -> "jose muller"), and the Latin letters NFD keeps
      whole as their base letters (`_BASE`: "Łódź Ørsted" -> "lodz orsted"); and off Greek letters, whose
      capitals are written without them ("ΑΘΗΝΑ" and "Αθήνα" are "αθηνα"); "ё" as "е", as Russian is mostly
      written. Other marks are kept (recomposed, NFC): they spell the word (Devanagari vowel signs, `WORD`)."""
    t = unicodedata.normalize("NFKC", _spaced((text or "").translate(_FOLD))).translate(_FOLD).casefold()
    if t.isascii():
        return t
    kept, accented = [], False
    for c in unicodedata.normalize("NFD", t):
        if not unicodedata.combining(c):
            accented = _accented(ord(c))
        elif accented:
            continue
        kept.append(c)
    return unicodedata.normalize("NFC", "".join(kept)).translate(_BASE)


def _accented(cp: int) -> bool:
    """A letter whose accents search ignores: Latin (Basic Latin to Latin Extended-B, Latin Extended Additional) or
    Greek (Greek and Coptic, Greek Extended)."""
    return cp <= 0x024F or 0x0370 <= cp <= 0x03FF or 0x1E00 <= cp <= 0x1FFF


def _spaced(text: str) -> str:
    """`text` with a space either side of each symbol or number that NFKC spells out otherwise than as digits
    (™ -> "TM", ½ -> "1⁄2"), so that it does not join the word beside it; a superscript or subscript digit stays
    in its word ("CO₂" is "co2", "m²" "m2")."""
    if text.isascii():
        return text
    return "".join(f" {c} " if not c.isascii() and unicodedata.category(c) in _SPELLED
                   and not (n := unicodedata.normalize("NFKC", c)).isdigit() and n != c else c for c in text)


# An English possessive or contraction after an apostrophe ("dana's", "don't", "we'll", "i'm", "they've"): such a
# word is not also indexed joined (`forms`).
CLITIC = re.compile(r"'(?:s|t|d|m|ll|re|ve)$")


def forms(word: str) -> list[str]:
    """The terms one word token (`words`) stands for: itself, and for a word with an inner apostrophe that is no
    English possessive or contraction (`CLITIC`) the word without it too: "o'neil" is "o'neil" and "oneil",
    "d'angelo" also "dangelo"; "dana's" and "don't" are themselves only. Stored terms (`search_terms`) and queries
    (`graphmem.recall.lucene.build_query`) take both, so a name written with or without its apostrophe ("O'Neil",
    "O’Neil", "O´Neil", "O`Neil", "O′Neil", "ONeil", "oneil"; "Hawaiʻi", "Hawai'i", "Hawaii") finds the other, as the
    name keys resolve them alike."""
    if "'" in word and not CLITIC.search(word):
        return [word, word.replace("'", "")]
    return [word]


def words(text: str) -> list[str]:
    """Word tokens of `fold(text)` in order (letters and digits, with inner apostrophes: "dana's", "o'sullivan").
    The one tokenizer of stored terms (`search_terms`) and of queries (`graphmem.recall.lucene`)."""
    return WORD.findall(fold(text))


def search_terms(tenant_id: str, text: str) -> str:
    """The `search_terms` property for `text` of tenant `tenant_id` (see the module docstring): each word's `forms`
    ("O'Neil" is "t.._o'neil t.._oneil")."""
    prefix = tenant_prefix(tenant_id)
    return " ".join(prefix + f for w in words(text) if w not in INDEX_STOP_WORDS for f in forms(w))


def tenant_query(tenant_id: str, terms: list[str]) -> str | None:
    """The Lucene query string OR-ing `terms` (lower-cased words, Lucene-escaped, a trailing `*` for a prefix
    query or `~1`/`~2` for a fuzzy one) in tenant `tenant_id`'s search terms; None when `terms` is empty. A plain disjunction when every term
    is one Lucene token with its prefix (`WHOLE_TERM`), else the disjunction with the tenant's token required (see
    the module docstring). A term that may split is two phrases, with and without the prefix: Lucene keeps
    "t.._müller" whole, but cuts "t.._北京" into the bare prefix and one token per character, where "北京" may
    stand mid-word in the text (Han text has no spaces) and, as loose terms, the bare prefix would match every
    such text of the tenant. Terms past Lucene's clause limit (`MAX_CLAUSES`) are left out, in order: a query of
    hundreds of distinct words then searches the first ones instead of failing."""
    terms = _within_clause_limit(terms)
    if not terms:
        return None
    prefix = tenant_prefix(tenant_id)
    if all(WHOLE_TERM.fullmatch(t) for t in terms):
        return " ".join(f"search_terms:{prefix}{t}" for t in terms)
    return (f"+tenant_token:{tenant_token(tenant_id)} +search_terms:("
            + " ".join(prefix + t if WHOLE_TERM.fullmatch(t) or t.endswith("*") else f'"{prefix}{t}" "{t}"'
                       for t in terms)
            + ")")


# A fuzzy term ("globx~1") is rewritten by Lucene into a disjunction of up to FuzzyQuery's default maxExpansions (50)
# index terms, each a leaf clause the limit counts after the rewrite: 40 misspelt words near many of a tenant's terms
# failed with TooManyClauses (a 500 for the hint of a 404).
FUZZY_EXPANSIONS = 50


def _clauses(term: str) -> int:
    """Leaf clauses a term costs Lucene at most: 1 when it stays one token (or is a prefix query), `FUZZY_EXPANSIONS`
    for a fuzzy term, else two phrases of up to one token per character plus the cut-off prefix."""
    if re.search(r"~[12]$", term) and WHOLE_TERM.fullmatch(term):
        return FUZZY_EXPANSIONS
    return 1 if WHOLE_TERM.fullmatch(term) or term.endswith("*") else 2 * len(term) + 1


def _within_clause_limit(terms: list[str]) -> list[str]:
    kept, used = [], 0
    for t in terms:
        cost = _clauses(t)
        if used + cost <= MAX_CLAUSES:
            kept.append(t)
            used += cost
    return kept
