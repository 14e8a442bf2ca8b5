"""Secret detection and redaction: API keys, passwords, bearer tokens, private keys, card numbers.

`redact(text)` returns the text with each secret replaced by `[REDACTED:<kind>]` plus the kinds found; it never
returns or logs the secret itself. Patterns (sources):
- private keys: PEM armour, RFC 7468 section 2 ("-----BEGIN ... PRIVATE KEY-----");
- bearer tokens: the `b64token` syntax of RFC 6750 section 2.1 after "Bearer";
- JSON Web Tokens: three base64url segments, the first two starting with `eyJ` (RFC 7519, a JSON object header);
- vendor API keys by their documented prefixes: OpenAI `sk-`, Stripe `sk_live_`/`rk_live_`, AWS access key ids
  `AKIA`/`ASIA` + 16 (AWS IAM docs), GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`, Slack `xox?-`,
  Google `AIza` + 35;
- labelled secrets: "password: x", "api_key=x", "token is x" (the label stays, the value goes; a quoted value,
  `password: "two words"` or a JSON string's `"pwd": "a\\"b"`, up to its closing quote; an unquoted one up to
  whitespace, with the commas, semicolons and quotes inside it, "password: hunter2,xyz9", "pwd=it'sme"; a final
  comma or semicolon is left as punctuation, "password is hunter2, and", and a quote not between two letters or
  digits as the text's own, "'password: x' he said");
- payment card numbers: 13-19 digits (ISO/IEC 7812), spaces or hyphens between them, that pass the Luhn check
  (ISO/IEC 7812-1 Annex B) and stand alone, not inside a longer token such as a hex id.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from graphmem import strict_json

_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
                  re.S)
_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{8,}=*")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}")
_VENDOR = re.compile(
    r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35})")
_LABEL_WORD = (r"(?:password|passwd|pwd|passphrase|passcode|pin code|api[ _-]?key|apikey|secret(?:[ _-]?key)?|"
               r"access[ _-]?token|auth[ _-]?token|refresh[ _-]?token|client[ _-]?secret|private[ _-]?key|token)")
_LABEL = r"\b" + _LABEL_WORD + r"\b[\"']?\s*(?:is|was|=|:|:=)\s*"
_SECRET_KEY = re.compile(r"(?i)\s*" + _LABEL_WORD + r"\s*")
# An unquoted value runs to whitespace: a comma or semicolon inside it is part of it ("hunter2,xyz9"), one that ends
# it is punctuation ("is hunter2, and", `{"pwd":1234,"a":1}`); a quote between two letters or digits is part of it
# ("it'sme"), another one closes the text around it ("'password: x' he said", `{"a":"pwd: x"}`, `1234,"a"`).
# `\x`: one escape, never split.
_LABELLED = re.compile(r"(?i)(" + _LABEL + r"[\"']?)((?:\\\S|[^\s\"'\\]|(?<=[^\W_])[\"'](?=[^\W_])){3,}(?<![,;]))")
# A value in quotes (`"...`, `'...'`, or `\"...\"` inside a JSON string) runs to its closing quote, spaces, commas
# and escaped quotes included: the value group is 3, the quote group 2.
_LABELLED_QUOTED = re.compile(r"(?i)(" + _LABEL + r"(\\?[\"']))((?:(?!\2)(?:\\.|[^\\\r\n])){3,})(?=\2)")
# A card number stands alone: no letter, digit or "-" right before or after it ("[^\W_]" is a letter or digit), so
# never the digits that open a hex id ("2669078111044164b738...": one random UUID in about 460 was redacted).
_CARD = re.compile(r"(?<![^\W_]|-)\d(?:[ -]?\d){12,18}(?![^\W_]|-)")


def luhn_ok(digits: str) -> bool:
    """The Luhn (mod 10) check of ISO/IEC 7812-1 Annex B over a string of digits."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


@dataclass(frozen=True)
class Redaction:
    """Redacted text and the kinds of secret removed (e.g. ["api_key", "card_number"]); empty if none."""

    text: str
    kinds: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


def redact(text: str) -> Redaction:
    """Replace every secret in `text` with `[REDACTED:<kind>]`. Idempotent: redacting twice changes nothing more."""
    kinds: list[str] = []

    def sub(pattern: re.Pattern, kind: str, s: str, group: int | None = None) -> str:
        def repl(m: re.Match) -> str:
            if group is not None and m.group(group).startswith("[REDACTED"):
                return m.group(0)
            kinds.append(kind)
            if group is None:
                return f"[REDACTED:{kind}]"
            return m.group(0)[: m.start(group) - m.start(0)] + f"[REDACTED:{kind}]"
        return pattern.sub(repl, s)

    out = sub(_PEM, "private_key", text)
    out = sub(_BEARER, "bearer_token", out)
    out = sub(_JWT, "token", out)
    out = sub(_VENDOR, "api_key", out)
    out = sub(_LABELLED_QUOTED, "labelled_secret", out, group=3)
    out = sub(_LABELLED, "labelled_secret", out, group=2)

    def card(m: re.Match) -> str:
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and luhn_ok(digits):
            kinds.append("card_number")
            return "[REDACTED:card_number]"
        return m.group(0)
    out = _CARD.sub(card, out)
    return Redaction(out, tuple(dict.fromkeys(kinds)))


def redact_json(text: str) -> Redaction:
    """`redact` for a JSON document, value by value, so that it stays JSON: each key and string is redacted as text,
    and a number or string under a secret's key (`"pwd": 1234`, `"api_key": "..."`) is replaced by the redaction
    mark (a string); null and booleans are no secrets and stay. Changed only when something was redacted (it is then
    written again as compact JSON). Text that is not JSON is redacted as text."""
    try:
        data = strict_json.loads(text)
    except ValueError:
        return redact(text)
    kinds: list[str] = []

    def one(s: str) -> str:
        r = redact(s)
        kinds.extend(r.kinds)
        return r.text

    def walk(v, secret: bool = False):
        if isinstance(v, dict):
            return {one(k): walk(x, isinstance(k, str) and bool(_SECRET_KEY.fullmatch(k))) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if secret and (isinstance(v, (int, float)) and not isinstance(v, bool)
                       or isinstance(v, str) and v.strip() and not v.startswith("[REDACTED")):
            kinds.append("labelled_secret")
            return "[REDACTED:labelled_secret]"
        return one(v) if isinstance(v, str) else v
    try:
        clean = walk(data)
    except RecursionError:
        return redact(text)
    if not kinds:
        return Redaction(text, ())
    return Redaction(json.dumps(clean, ensure_ascii=False), tuple(dict.fromkeys(kinds)))


def contains_secret(text: str | None) -> bool:
    """True if `redact` would change `text`.

    Decided without rewriting the text: `redact` applies its patterns in turn, and while none has matched the text is
    unchanged, so the first pattern that would redact anything in the original text decides (the labelled pattern and
    card numbers only count a match that `redact` would replace). Short texts (names, values) repeat a lot in bulk
    imports and are cached."""
    if not text:
        return False
    return _has_secret_cached(text) if len(text) <= 256 else _has_secret(text)


def _has_secret(text: str) -> bool:
    if _PEM.search(text) or _BEARER.search(text) or _JWT.search(text) or _VENDOR.search(text):
        return True
    if any(not m.group(3).startswith("[REDACTED") for m in _LABELLED_QUOTED.finditer(text)):
        return True
    if any(not m.group(2).startswith("[REDACTED") for m in _LABELLED.finditer(text)):
        return True
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and luhn_ok(digits):
            return True
    return False


_has_secret_cached = lru_cache(maxsize=8192)(_has_secret)
