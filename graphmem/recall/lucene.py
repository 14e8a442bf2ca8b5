"""Turning user text into a safe Lucene query for Neo4j's full-text indexes (BM25 scoring).

User text never reaches Lucene's query parser as syntax: it is split into word tokens, each token is escaped
(`escape`, the special characters of the Lucene classic query parser: + - && || ! ( ) { } [ ] ^ " ~ * ? : \\ /)
and the tokens are OR-ed. Neo4j's default full-text analyzer (`standard-no-stop-words`) neither drops stop words
nor stems, so `build_query` drops English function words itself and adds light inflection variants
("researched" -> research, researches, researching) at a lower boost: query rewriting without a language model.
"""
from __future__ import annotations

import re

_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
_OPERATORS = {"and", "or", "not", "to"}

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


def terms(text: str) -> list[str]:
    """Lower-cased word tokens of `text` without stop words, first occurrence order, no duplicates.
    If every token is a stop word, the tokens themselves (so "who is it" still searches something)."""
    words = [w.lower().replace("'s", "") for w in _WORD.findall(text)]
    words = [w for w in words if w]
    kept = [w for w in words if w not in STOP_WORDS and len(w) > 1]
    return list(dict.fromkeys(kept or words))


def _stem(word: str) -> str:
    """A crude suffix stripper (not Porter): enough to join 'painted', 'paints', 'painting' to 'paint'."""
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix in ("ing", "ed") and len(base) >= 2 and base[-1] == base[-2] and base[-1] not in "ls":
                base = base[:-1]  # running -> run, planned -> plan
            return base
    return word


def variants(word: str) -> list[str]:
    """Inflection variants of `word` (not including it): stem, stem+s, stem+ed, stem+ing, stem+e (for 'made')."""
    if not word.isalpha() or len(word) < 4:
        return []
    stem = _stem(word)
    out = [stem, stem + "s", stem + "ed", stem + "ing", stem + "e", stem + "es"]
    return [v for v in dict.fromkeys(out) if v != word and len(v) >= 3]


def build_query(text: str, *, expand: bool = True, variant_boost: float = 0.5) -> str | None:
    """A Lucene query string for `text`: escaped terms OR-ed; with `expand`, each term's inflection variants too,
    boosted by `variant_boost` (< 1, so an exact form outranks a variant). None when `text` has no words."""
    ts = terms(text)
    if not ts:
        return None
    parts = []
    for t in ts:
        q = escape(t) if t not in _OPERATORS else f'"{t}"'
        vs = variants(t) if expand else []
        if vs:
            alts = " ".join(f"{escape(v)}^{variant_boost}" for v in vs)
            parts.append(f"({q} {alts})")
        else:
            parts.append(q)
    return " ".join(parts)
