"""The stored form of each identifier: the pure functions that turn a name, a literal value, an email, a domain or an
external id into the one key it is stored and resolved by, and what counts as blank text (which an identifier is
trimmed of and must not be).

Specifications:
- Unicode normalisation form NFKC (Unicode Standard Annex #15, "Unicode Normalization Forms"): every name and value
  key (`name_key`, `value_key`) and an email's local part (`email_address`), so that compatibility forms
  (fullwidth letters, ligatures) and canonical equivalents (composed and decomposed accents) are one;
- default case folding (Unicode Standard, section 3.13; CaseFolding.txt), with the Turkish i's as one
  (`turkish_i`, CaseFolding.txt status T);
- the apostrophe (U+0027) as the one form of the characters typed for it (`APOSTROPHES`: U+2019, U+02BC, ...; the
  Unicode Standard, section 6.2 "General Punctuation", "Apostrophes": U+2019 for the punctuation mark, U+02BC where
  it is a letter, U+0027 what keyboards type for both), dropped from name and value keys;
- IDNA 2008 (RFC 5890-5893) with the UTS #46 mapping (Unicode Technical Standard #46, "Unicode IDNA Compatibility
  Processing"), through the `idna` package: an internationalised domain, of an email or on its own
  (`email_address`, `domain_name`), is stored in Unicode;
- variation selectors (Unicode Standard, section 23.4) and the default ignorable and blank characters, which
  `blank` finds blank and `trim_blank` trims from an external id's ends.

Nothing here touches the store or pydantic: `graphmem.models` validates with these functions, and
`graphmem.store.schema`'s migrations rewrite stored keys with them (and with copies of their earlier versions).
"""
from __future__ import annotations

import re
import unicodedata

import idna

_SELECTOR_CHARS = "\u180b-\u180d\u180f\ufe00-\ufe0f"
"""The variation selectors of the BMP (Mongolian free variation selectors, VS1-16), as a character-class body."""
_ASTRAL_SELECTOR_CHARS = "\U000e0100-\U000e01ef"
"""The variation selectors supplement (VS17-256), as a character-class body."""
_FILLER_CHARS = "\u115f\u1160\u3164\uffa0"
"""The Hangul fillers (choseong and jungseong fillers, compatibility and halfwidth fillers), a character-class body."""
INVISIBLE_CHARS = ("\x00-\x1f\x7f-\xa0\u00ad\u034f\u061c\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                   "\u2066-\u206f\u2800\ufeff\ufff9-\ufffb" + _SELECTOR_CHARS + _FILLER_CHARS)
"""The characters that render as nothing in the Basic Multilingual Plane, as a character-class body (besides
whitespace, `\\s`): control characters (C0, DEL, C1), the invisible format characters of Unicode category Cf (soft
hyphen, zero-width space U+200B, joiners, direction marks, word joiner, U+FEFF ...), variation selectors and the
combining grapheme joiner, and the blank fillers (Hangul fillers U+115F, U+1160, U+3164, U+FFA0; braille blank
U+2800). The characters are literal in the class and the controls listed (whose `\\s` membership differs between
engines), so a pattern built of it (`graphmem.models.VISIBLE`) means the same to pydantic-core, Python's `re` and
the ECMA-262 regexes of OpenAPI clients. Characters outside the BMP (tag characters, variation selectors 17-256,
format controls) are not listed: an ECMA regex without the `u` flag reads them as surrogate pairs; `blank` counts
those too."""
_UNSEEN = re.compile("[\\s" + INVISIBLE_CHARS + "]")
_UNSEEN_ASTRAL = ("Cc", "Cf")
_ASTRAL_SELECTOR = re.compile(f"[{_ASTRAL_SELECTOR_CHARS}]")


def blank(text: str) -> bool:
    """Whether `text` has no visible character: only whitespace and `INVISIBLE_CHARS` (controls, invisible
    format characters, variation selectors, blank fillers), or such characters outside the BMP (Unicode categories
    Cc and Cf, variation selectors supplement U+E0100-U+E01EF), or nothing."""
    return all(_UNSEEN.fullmatch(c) or (c > "\uffff" and (unicodedata.category(c) in _UNSEEN_ASTRAL
                                                          or _ASTRAL_SELECTOR.fullmatch(c))) for c in text)


def trim_blank(text: str) -> str:
    """`text` without the characters `blank` finds blank at either end ("\u200b hi \u3164" -> "hi"); "" when it
    is blank. What `str.strip` would be if it knew every invisible character."""
    start, end = 0, len(text)
    while start < end and blank(text[start]):
        start += 1
    while end > start and blank(text[end - 1]):
        end -= 1
    return text[start:end]


EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
"""What an email address must look like: something, "@", a domain with a dot, no whitespace."""
_LOCAL_PART = re.compile(r"[^@\s]+")


def email_address(v: str) -> str:
    """The one form of the email address `v` that entities are keyed by: stripped, lower-cased, its local part in
    Unicode normalisation form NFKC (`_local_part`) and its domain, when internationalised (a character outside
    ASCII, or a punycode "xn--" label), in Unicode as IDNA 2008 decodes it with the UTS 46 mapping
    (`idna.decode(..., uts46=True)`): "ann@xn--bcher-kva.example", "Ann@BÜCHER.example",
    "ann@bu\\u0308cher.example" (a combining diaeresis) and "ann@ｂüｃｈｅｒ.example" (fullwidth) are all
    "ann@bücher.example", and "jose\\u0301@example.com" (decomposed, NFD) and "ｊｏｓé@example.com" are
    "josé@example.com". A domain IDNA refuses ("exa_mple.com", "☃.example") is kept as written, lower-cased, as
    before. Raises `ValueError` for text that is no address (`EMAIL_RE`)."""
    v = v.strip().lower()
    if not EMAIL_RE.fullmatch(v):
        raise ValueError("email is not a valid address")
    local, _, domain = v.rpartition("@")
    local = _local_part(local)
    unicode_domain = _unicode_domain(domain) or domain   # no valid IDNA name: keep what was given
    return f"{local}@{unicode_domain}" if EMAIL_RE.fullmatch(f"{local}@{unicode_domain}") else f"{local}@{domain}"


def _unicode_domain(domain: str) -> str | None:
    """`domain` (lower-cased), when internationalised (a character outside ASCII, or a punycode "xn--" label), in
    Unicode as IDNA 2008 decodes it with the UTS 46 mapping (`idna.decode(..., uts46=True)`: "xn--bcher-kva.example",
    "BÜCHER.example" and "ｂüｃｈｅｒ.example" are "bücher.example"); `domain` itself when it is ASCII without "xn--";
    None when IDNA refuses it ("☃.example", "xn--zz.example")."""
    if domain.isascii() and "xn--" not in domain:
        return domain
    try:
        return idna.decode(domain, uts46=True)
    except UnicodeError:   # idna.IDNAError and its kinds: no valid IDNA name
        return None


def _local_part(local: str) -> str:
    """The one form of an email address's local part (the text before its "@", lower-cased): Unicode normalisation
    form NFKC, then lower-cased again, as the UTS 46 mapping folds the domain (compatibility forms such as fullwidth
    letters too, not only the canonical equivalents NFC joins: "jose\\u0301" and "ｊｏｓé" are "josé"). A local part
    NFKC would give an "@" or a space (a small commercial at U+FE6B, say) is only composed (NFC), so the address
    stays one address."""
    folded = unicodedata.normalize("NFKC", local).lower()
    return folded if _LOCAL_PART.fullmatch(folded) else unicodedata.normalize("NFC", local)


HOST_RE = re.compile(r"[a-z0-9-]+(\.[a-z0-9-]+)+")
"""What a domain must look like in ASCII (punycode for an internationalised one): two or more labels of letters,
digits and hyphens, lower-cased."""


def domain_name(v: str) -> str:
    """The one form of the domain `v` that entities are keyed by: stripped, lower-cased, without a leading "www.",
    and, when internationalised, in Unicode as an email's domain is (`_unicode_domain`, IDNA 2008 with the UTS 46
    mapping), so "xn--bcher-kva.example", "www.BÜCHER.example" and "bücher.example" are all "bücher.example", the
    domain of "ann@bücher.example". A punycode domain IDNA refuses ("xn--zz.example") is kept as written, as
    before. Raises `ValueError` for text that is no host name (`HOST_RE`, in punycode for a Unicode domain), and for
    a domain outside ASCII that IDNA refuses ("☃.example", "-bücher.example")."""
    v = v.strip().lower()
    unicode = _unicode_domain(v)
    if unicode is None and not v.isascii():
        raise ValueError("domain is not a valid host name")
    v = (unicode or v).removeprefix("www.")
    try:
        ascii_form = v if v.isascii() else idna.encode(v).decode("ascii")
    except UnicodeError:
        ascii_form = ""
    if not HOST_RE.fullmatch(ascii_form):
        raise ValueError("domain is not a valid host name")
    return v


def _mark_ranges() -> str:
    """The body of a regular-expression character class holding every combining mark (Unicode general category M)
    of the Basic Multilingual Plane: the vowel signs and viramas of Indic and Southeast Asian scripts, accents.
    Python's `\\w` holds no mark, so a class of word characters must add these (~30 ms, once, at import)."""
    ranges, start = [], None
    for cp in range(0x10000):
        mark = unicodedata.category(chr(cp))[0] == "M"
        if mark and start is None:
            start = cp
        elif not mark and start is not None:
            ranges.append(f"\\u{start:04x}-\\u{cp - 1:04x}")
            start = None
    return "".join(ranges)


MARKS = _mark_ranges()
"""Every combining mark of the BMP, as a character-class body (`_mark_ranges`); `name_key` and
`graphmem.store.fulltext.WORD` keep them inside words."""
_NOT_NAME = re.compile(rf"[^\w\s@.{MARKS}-]")
_NOT_VALUE = re.compile(rf"[^\w\s@.+#{MARKS}-]")
SELECTORS = re.compile(f"[{_SELECTOR_CHARS}{_ASTRAL_SELECTOR_CHARS}]")
"""The variation selectors (Unicode 15.1, chapter 23.4: VS1-16, the supplement's VS17-256 and the Mongolian free
variation selectors): they choose how a character looks ("❤" or "❤️"), not which it is, so `name_key` drops
them."""
ZWSP = re.compile("\u200b")
"""The zero-width space: it separates words without showing a gap (text copied from web pages holds it), so
`name_key` reads it as a space; other invisible format characters (joiners, soft hyphens) are dropped with the
punctuation ("Norm\u200bAl" was "normal")."""
WORD_END = re.compile(r"\.+(?=\s|$)")
"""Periods that end a word ("Inc.", a sentence's last word): `name_key` drops them, so "Norm Al." is "Norm Al"
(it became a second person); a period inside a word ("acme.com", "J.R.R", ".NET") stays."""
FILLERS = re.compile(f"[{_FILLER_CHARS}]")
"""The Hangul fillers (choseong and jungseong fillers U+115F, U+1160; compatibility U+3164 and halfwidth U+FFA0,
which NFKC makes U+1160): letters to Unicode but blank on screen, so `name_key` reads them as spaces
("Dana\u3164Scully" is "Dana Scully")."""


APOSTROPHES = "\u2019\u2018\u02bc`\u00b4\uff07\u2032\u02bb\u02b9"
"""What is typed for an apostrophe besides the straight one (U+0027): the right and left single quotation marks
(U+2019, U+2018; typed text and LLM output use the first), the modifier letter apostrophe (U+02BC, which keyboard
layouts and autocorrect give), the grave and acute accents (backtick U+0060, U+00B4) and the prime (U+2032) of
keyboards without an apostrophe key, the fullwidth apostrophe (U+FF07), and the modifier letters turned comma
(U+02BB, the Hawaiian ʻokina) and prime (U+02B9, a transliterated soft sign: "Kolʹtsov"), which keyboards without
them give as the straight one ("Hawai'i"). The one list of them: `name_key` and `value_key` read each as U+0027,
before NFKC, and drop it with the punctuation, so "O’Neil", "OʼNeil", "O´Neil" and "O'Neil" are one name ("oneil"),
and "Hawaiʻi", "Hawai'i" and "Hawaii" one ("hawaii"); search folds them alike (`graphmem.store.fulltext.fold`).
Before schema 22 the modifier letter apostrophe, a letter to Unicode, stayed in the key ("oʼneil"), and NFKC made
the acute accent a space and a combining acute ("o ́neil"): each such spelling was a second person; before schema
24 the ʻokina and the modifier prime stayed in the key as letters ("hawaiʻi")."""
_APOSTROPHE_FOLD = str.maketrans(dict.fromkeys(APOSTROPHES, "'"))


def name_key(name: str) -> str:
    """Normalise a name for resolution: apostrophes typed any way as the straight one (`APOSTROPHES`), NFKC, Hangul
    fillers and the zero-width space as spaces (`FILLERS`, `ZWSP`), case-folded, variation selectors dropped
    (`SELECTORS`), punctuation dropped (the apostrophe too) except `@`, `-` and a `.` inside a word (an email, a
    domain, "Jean-Luc", ".NET" keep theirs; "Norm Al." and "Acme Inc." end with a word), whitespace collapsed.
    Combining marks stay: in Devanagari or Tamil they are the vowels ("मोहन" and "मोहिनी" are two names; with the
    marks dropped both were "महन", and the second person resolved to the first). A name with no letter or digit
    left has no key (""): callers refuse it ("has no letters or digits"), or drop it where
    an identifier names the entity, so "❤️", "★" or "..." never name an entity.

    "  Dana  O'Neil " -> "dana oneil" (as "Dana O’Neil" and "Dana OʼNeil"); "ACME, Inc." -> "acme inc";
    "❤️ Fund" -> "fund" (as "❤ Fund"); "Norm\u200bAl" -> "norm al";
    "İLKAY IŞIK" -> "ilkay işik" (as "İlkay Işık": the Turkish i's fold together, `turkish_i`).
    """
    return _key(name, _NOT_NAME)


def turkish_i(text: str) -> str:
    """Case-folded `text` with the four Turkish i's as one: dotless "ı" and "i" + combining dot above (what
    `str.casefold` makes of "İ") are "i". Unicode's default folding pairs "I" with "i", Turkish pairs it with "ı"
    and "İ" with "i" (Unicode CaseFolding.txt, status T), so without this "İLKAY IŞIK" and "İlkay Işık" keyed apart,
    and "ilkay işık" typed in lower case missed both. Text that held either comes back NFC, so that a mark after
    the dot composes again (Lithuanian "i̇̃" is "ĩ"); other text is returned as it is."""
    if "\u0131" not in text and "\u0307" not in text:
        return text
    return unicodedata.normalize("NFC", text.replace("\u0131", "i").replace("i\u0307", "i"))


def _key(text: str, dropped: re.Pattern) -> str:
    """`name_key`'s normalisation, dropping what `dropped` matches and the periods that end a word (`WORD_END`)."""
    s = unicodedata.normalize("NFKC", text.translate(_APOSTROPHE_FOLD))
    s = turkish_i(SELECTORS.sub("", FILLERS.sub(" ", ZWSP.sub(" ", s)).casefold()))
    s = re.sub(r"\s+", " ", WORD_END.sub("", dropped.sub("", s))).strip()
    return s if any(c.isalnum() for c in s) else ""


def value_key(value: str) -> str:
    """Normalise a literal fact value for duplicate detection: as `name_key`, but keeping `+` and `#`, which tell
    values apart ("C++", "C#" and "C"; "A+" and "A" were one value before schema 14); or for a value with no letter
    or digit ("★", "+", "-") its NFKC, case-folded text without variation selectors, apostrophes as the straight one
    (`APOSTROPHES`), whitespace collapsed, so that "★" and "☆" stay two values (both were ""). The two kinds of key
    cannot meet: the first always holds a letter or digit."""
    if key := _key(value, _NOT_VALUE):
        return key
    folded = unicodedata.normalize("NFKC", value.translate(_APOSTROPHE_FOLD)).casefold()
    return re.sub(r"\s+", " ", SELECTORS.sub("", folded)).strip()
