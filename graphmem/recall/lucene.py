"""Turning user text into a safe Lucene query for Neo4j's full-text indexes (BM25 scoring).

User text never reaches Lucene's query parser as syntax: it is split into word tokens, each token is escaped
(`escape`, the special characters of the Lucene classic query parser: + - && || ! ( ) { } [ ] ^ " ~ * ? : \\ /),
and the tokens are OR-ed in the tenant's terms (`graphmem.store.fulltext.tenant_query`: the indexes hold per-tenant
terms). The full-text indexes use Lucene's English analyzer (Porter stemming, a small stop list),
so inflections match; `terms` also drops the question words that analyzer keeps ("what", "did", "when"), which
otherwise add BM25 noise to every question.
"""
from __future__ import annotations

import re

from graphmem.store.fulltext import forms, tenant_query, words as _tokens

_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')

STOP_WORDS = frozenset("""
a an the of to in on and or is are was were be been being do did does doing done i you he she it we they me him her
us them my your his its our their mine yours what when where who whom whose which how why that this these those
with for at by from as about into over under than then there here so if but not no yes can could would should will
shall may might must have has had having am any some all also just very too much many more most other such only own
same s t don't didn't doesn't isn't aren't wasn't weren't ever kind sort lot thing things get got go going went
""".split())


def escape(term: str) -> str:
    """Escape Lucene query-parser syntax in `term` (backslash before each special character)."""
    return _SPECIAL.sub(r"\\\1", term)


def _words(text: str) -> list[str]:
    words = [re.sub(r"'s$", "", w) for w in _tokens(text)]   # a possessive only: O'Sullivan stays
    return [w for w in words if w]


def _content(words: list[str]) -> list[str]:
    return [w for w in words if w not in STOP_WORDS and len(w) > 1]


def terms(text: str) -> list[str]:
    """Lower-cased word tokens of `text` without stop words, first occurrence order, no duplicates.
    If every token is a stop word, the tokens themselves (so "who is it" still searches something)."""
    words = _words(text)
    return list(dict.fromkeys(_content(words) or words))


def only_stop_words(text: str) -> bool:
    """True when `text` has words but every one is a stop word (or a single character): its search then matches
    on those common words alone, which says little about relevance."""
    words = _words(text)
    return bool(words) and not _content(words)


def fuzzy_query(text: str, tenant_id: str) -> str | None:
    """A Lucene query for the words of `text` misspelt: each plain word of 4 or more letters and digits as a fuzzy
    term, within 1 edit (Damerau-Levenshtein, Lucene's `FuzzyQuery`) for up to 5 characters and 2 beyond, in
    tenant `tenant_id`'s terms. For naming the closest entities when a name matches none ("Globx": Globex); None
    when `text` has no such word."""
    return tenant_query(tenant_id, [f"{t}~{1 if len(t) <= 5 else 2}" for t in terms(text)
                                    if len(t) >= 4 and re.fullmatch(r"[a-z0-9]+", t)])


def build_query(text: str, tenant_id: str) -> str | None:
    """The whole Lucene query string for `text` in tenant `tenant_id`'s terms: its escaped `terms`, each in its
    `graphmem.store.fulltext.forms` ("O'Neil" as "o'neil" and "oneil", so that it finds a stored "ONeil"), OR-ed
    (`tenant_query`). None when `text` has no words."""
    return tenant_query(tenant_id, list(dict.fromkeys(escape(f) for t in terms(text) for f in forms(t))))
