"""The write policy: what may be stored, decided before anything is written (DESIGN.md "Write policy").

- Episodes: secrets are redacted from `content` and `speaker` (`graphmem.ingest.secrets`); chatter is gated out of
  extraction (`is_chatter`).
- Facts: a fact whose value, statement or entity names contain a secret (or a redaction mark) is refused; an inferred fact below
  `settings.extraction_min_confidence` is refused; a value or statement over `settings.max_value_chars`
  characters is refused; an unknown predicate is refused (extracted facts only; explicit callers get 422).
  Sensitive classes (health, finance, legal) that are only inferred are held as candidates by the core
  (`AssertOutcome.action == "candidate"`).
Each refusal becomes a `Refusal` (reason and field, never the refused content) recorded by `graphmem.ingest.refusals`.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from graphmem import strict_json
from graphmem.identifiers import name_key
from graphmem.ingest.secrets import contains_secret, redact, redact_json
from graphmem.models import EntityRef, Episode, EpisodeIn, FactIn
from graphmem.ontology import Ontology
from graphmem.settings import Settings
from graphmem.store.entities import keyless_name_dropped

# Short acknowledgements and greetings that carry no facts. A message is chatter when every word is in this list
# and it has at most CHATTER_MAX_WORDS words.
CHATTER_WORDS = frozenset("""
ok okay k kk okey alright allright right sure yes yeah yep yup no nope nah thanks thank you thx ty cheers cool great
nice good perfect awesome fine got it noted understood hi hello hey bye goodbye see ya later lol haha hm hmm mhm uh
um oh ah wow welcome np sounds will do done please pls much very so a the that works
""".split())
CHATTER_MAX_WORDS = 6
TEXT_KINDS = ("message", "text", "tool_result")


def is_chatter(content: str) -> bool:
    """True for short acknowledgements ("ok thanks", "👍", "great, will do!") that extraction would waste a call on."""
    text = unicodedata.normalize("NFKC", content).casefold()
    words = re.findall(r"[^\W\d_]+|\d+", text)
    if not words:  # only emoji / punctuation
        return len(text.strip()) <= 16
    return len(words) <= CHATTER_MAX_WORDS and all(w in CHATTER_WORDS for w in words)


@dataclass(frozen=True)
class PolicyRefusal:
    """Why one item was refused. `reason` is a short code; `detail` a sentence without the refused content."""

    reason: str
    field: str
    detail: str
    episode_id: str | None = None
    predicate: str | None = None


def redact_episode(ep: EpisodeIn) -> tuple[EpisodeIn, tuple[str, ...]]:
    """The episode with secrets removed from `content` and `speaker`; and the kinds of secret removed. A JSON
    episode (kind json or event) is redacted value by value and stays JSON (`redact_json`)."""
    content = redact_json(ep.content) if ep.kind in ("json", "event") else redact(ep.content)
    speaker = redact(ep.speaker) if ep.speaker else None
    kinds = content.kinds + (speaker.kinds if speaker else ())
    if not kinds:
        return ep, ()
    return ep.model_copy(update={"content": content.text, "speaker": speaker.text if speaker else None}), kinds


def is_text(ep: EpisodeIn | Episode) -> bool:
    """Whether extraction reads the episode as text (the LLM's): a message, text or tool result, or an `event` that
    is not a JSON object or list (a JSON record is mapped, `graphmem.ingest.mapping`; "Carrier note: parcel P-5521
    was returned" is text)."""
    if ep.kind in TEXT_KINDS:
        return True
    if ep.kind != "event":
        return False
    try:
        return not isinstance(strict_json.loads(ep.content), (dict, list))
    except ValueError:
        return True


def initial_status(ep: EpisodeIn, settings: Settings) -> tuple[str, str | None]:
    """(extraction_status, reason) for a new episode: "skipped"/"chatter" for gated chatter, else "pending"."""
    if settings.extraction_chatter_gate and is_text(ep) and is_chatter(ep.content):
        return "skipped", "chatter"
    return "pending", None


def _texts(f: FactIn) -> list[tuple[str, str | None]]:
    out = [("value", f.value), ("statement", f.statement)]
    for side, ref in (("subject", f.subject), ("object", f.object)):
        if ref is not None:
            out += [(f"{side}.name", ref.name), (f"{side}.summary", ref.summary)]
            out += [(f"{side}.aliases", a) for a in ref.aliases]
    return out


def check_fact(f: FactIn, field: str, settings: Settings, ontology: Ontology | None = None) -> PolicyRefusal | None:
    """The first policy rule `f` breaks, or None if it may be asserted. `field` is its place, e.g. "facts[2]"."""
    ep = f.episode_id
    for name, text in _texts(f):
        if text and ("[REDACTED:" in text or contains_secret(text)):
            return PolicyRefusal("secret", f"{field}.{name}", "the fact contains a secret and is never stored",
                                 ep, f.predicate)
    for name in ("value", "statement"):
        text = getattr(f, name)
        if text is not None and len(text) > settings.max_value_chars:
            return PolicyRefusal("oversized", f"{field}.{name}",
                                 f"{name} is {len(text)} characters; the limit is {settings.max_value_chars}",
                                 ep, f.predicate)
    if f.source == "inferred" and f.confidence < settings.extraction_min_confidence:
        return PolicyRefusal("low_confidence", f"{field}.confidence",
                             f"inferred with confidence {f.confidence:.2f}, below the threshold "
                             f"{settings.extraction_min_confidence:.2f}", ep, f.predicate)
    if ontology is not None and f.predicate not in ontology.predicates:
        return PolicyRefusal("unknown_predicate", f"{field}.predicate",
                             f"predicate {f.predicate} is not in the tenant's ontology", ep, f.predicate)
    return None


def oversized_name(ref: EntityRef, field: str, settings: Settings, episode_id: str | None,
                   predicate: str | None = None) -> PolicyRefusal | None:
    """A refusal when the entity's name or an alias is longer than `settings.max_name_chars` (reason oversized)
    or has no letter or digit to match it by (reason invalid_name; a name, not an alias, is let through when an id
    or a strong identifier names the entity: `graphmem.store.entities.keyless_name_dropped` drops it), else None.
    For extracted items, which are refused one by one; a caller's own facts get a 422 for it instead
    (`graphmem.store.entities`)."""
    ref = keyless_name_dropped(ref)   # a keyless name is no refusal when an identifier names the entity
    for name, text in [("name", ref.name), *(("aliases", a) for a in ref.aliases)]:
        if text is not None and len(text) > settings.max_name_chars:
            return PolicyRefusal("oversized", f"{field}.{name}", f"an entity {name} is {len(text)} characters; the "
                                 f"limit is {settings.max_name_chars}", episode_id, predicate)
        if text is not None and not name_key(text):
            return PolicyRefusal("invalid_name", f"{field}.{name}", f"an entity {name} {text!r} has no letters or "
                                 "digits", episode_id, predicate)
    return None


def screen_facts(facts: list[FactIn], settings: Settings, ontology: Ontology | None = None,
                 prefix: str = "facts", names: bool = False,
                 numbers: list[int] | None = None) -> tuple[list[int], list[tuple[int, PolicyRefusal]]]:
    """Split `facts` into the indexes that pass and (index, refusal) pairs for those that do not; a refusal's
    field names the fact `prefix[numbers[i]]` (default its index i). With `names`
    (extracted facts) an oversized subject or object name is refused too (`oversized_name`). Whether a fact's
    object is its subject is known only once both are resolved: the core checks it (`self_reference`,
    `graphmem.store.facts.assert_batch`; a caller's fact is a 422 instead)."""
    ok, refused = [], []
    for i, f in enumerate(facts):
        at = f"{prefix}[{numbers[i] if numbers else i}]"
        r = check_fact(f, at, settings, ontology)
        for side, ref in ((("subject", f.subject), ("object", f.object)) if names and r is None else ()):
            if ref is not None and (r := oversized_name(ref, f"{at}.{side}", settings, f.episode_id,
                                                        f.predicate)):
                break
        (refused.append((i, r)) if r else ok.append(i))
    return ok, refused


def screen_entities(refs: list[EntityRef], episode_id: str | None, prefix: str = "entities",
                    settings: Settings | None = None) -> tuple[list[EntityRef], list[PolicyRefusal]]:
    """Drop entity references whose name, aliases or summary hold a secret (or a redaction mark), and with
    `settings` those whose name or an alias is oversized (`oversized_name`)."""
    ok, refused = [], []
    for i, ref in enumerate(refs):
        texts = [ref.name, ref.summary, *ref.aliases]
        if any(t and ("[REDACTED:" in t or contains_secret(t)) for t in texts):
            refused.append(PolicyRefusal("secret", f"{prefix}[{i}].name", "the entity name contains a secret",
                                         episode_id))
        elif settings is not None and (r := oversized_name(ref, f"{prefix}[{i}]", settings, episode_id)):
            refused.append(r)
        else:
            ok.append(ref)
    return ok, refused
