"""Shapes of search requests and results, shared by the recall service, the context assembler and the API."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from graphmem.models import (VISIBLE, Degraded, Entity, Episode, Fact, Id, Input, KindName, PredicateName,
                             ProvenanceRole, UserIdText, UtcDatetime)
from graphmem.ontology import SENSITIVE_CLASSES

Target = Literal["fact", "entity", "episode"]


class SearchRequest(Input):
    """A search over one tenant. Times are UTC. `as_of` filters facts by valid time, `known_at` by transaction
    time; by default only facts valid now are returned (`include_superseded` = false). Episodes that occurred after
    `as_of` are left out when `as_of` is given; without it every stored episode counts, one whose `occurred_at` is
    ahead of the server's clock included. Unknown fields are refused:
    a misspelt filter ("as_off") would otherwise be dropped and the search run without it. An empty `predicates`
    or `entity_kinds` list filters nothing (as if left out). Numbers and flags are JSON numbers and booleans only
    (`true` is not 1, `"yes"` or 1 not true)."""

    query: str = Field(min_length=1, max_length=2000, pattern=VISIBLE, examples=["who does Dana report to?"],
                       description="Free text, not only whitespace.")
    k: int = Field(default=10, ge=1, le=100, strict=True)
    targets: list[Target] = Field(default_factory=lambda: ["fact", "episode", "entity"], min_length=1)
    as_of: UtcDatetime | None = None
    known_at: UtcDatetime | None = None
    include_superseded: bool = Field(default=False, strict=True, description=(
        "Also facts not valid at as_of: ended, superseded, retracted or not yet started (valid time). A corrected "
        "fact was never true, so the correction expired it in transaction time: it shows only with a known_at "
        "before the correction. Only with \"fact\" in targets (a 422 naming it otherwise: it would do nothing)."))
    predicates: list[PredicateName] | None = Field(default=None, max_length=100, description=(
        "Only facts of these predicates (each must be in the tenant's ontology); entity and episode hits are not "
        "filtered by predicate, so a non-empty list needs \"fact\" in targets (a 422 naming it otherwise)."))
    entity_kinds: list[KindName] | None = Field(default=None, max_length=100, description=(
        "Only entities of these kinds, facts whose subject or object is of one, and episodes that mention one "
        "(an episode mentions the entities of the facts derived from it, and those its extraction found)."))
    session_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=VISIBLE)
    user_id: UserIdText | None = None
    occurred_after: UtcDatetime | None = Field(default=None, description=(
        "Only what episodes that occurred at or after this time (inclusive: occurred_at >= occurred_after) said: "
        "episode hits by their occurred_at, facts by the episodes that asserted or confirmed them, entities by the "
        "episodes that mention them or their facts. Goes by when it was said, not by a fact's valid time (as_of). "
        "With occurred_before it must be the earlier of the two (a 422 naming occurred_after otherwise)."))
    occurred_before: UtcDatetime | None = Field(default=None, description=(
        "Only what episodes that occurred before this time said (exclusive: occurred_at < occurred_before), as "
        "occurred_after: the two make a half-open range [occurred_after, occurred_before), so consecutive ranges "
        "(a day, then the next) neither share nor miss an episode."))
    seed_entity_ids: list[Id] = Field(
        default_factory=list, max_length=100, description=(
            "Entities whose graph neighbourhood ranks hits (graph proximity); each must be an entity of the tenant "
            "(a 404 naming seed_entity_ids[i] otherwise) and not blank (a 422 naming it)."))
    min_similarity: float | None = Field(default=None, ge=0.0, le=1.0, strict=True, description=(
        "Relevance floor of the vector retriever: only nodes whose similarity to the query is at least this count "
        "as vector hits (Neo4j's cosine similarity, scaled to 0..1 as (1 + cos) / 2: the `score` of a `vector` "
        "reason). Full-text and graph hits are not affected. Unset, the nearest nodes are hits however far they are, "
        "so a query about nothing stored still gets vector hits. Where relevance starts depends on the model: see "
        "docs/http.md."))
    mmr: bool = Field(default=False, strict=True, description=(
        "Re-rank by maximal marginal relevance (Carbonell & Goldstein 1998): hits come in MMR order, each still "
        "with its fused score, so scores need not descend."))
    mmr_lambda: float = Field(default=0.7, ge=0.0, le=1.0, strict=True)
    depth: int | None = Field(default=None, ge=1, le=500, strict=True, description=(
        "Hits each retriever contributes to fusion (at least k); default 50. Smaller is faster in a large tenant "
        "(the full-text index call's cost grows with it), larger lets more items found by two retrievers meet."))


# Fact classes that cross from one session of a user to another only with consent (DESIGN.md "Sessions, pins,
# compaction"; `Consent.share_preferences`).
CONSENT_CLASSES: tuple[str, ...] = ("preference",)


class Viewer(BaseModel):
    """Whom a search answers for: the context window of `session_id`, asked as `user_id` (the request's; the
    session's own user wins when it has one). Not part of `SearchRequest`: `POST /v1/search` is tenant-wide.

    The search (cypher/search/rank) then ranks only what that session may see, before each retriever keeps its top
    hits: an episode of this session, or of no session and of no user or this user ("visible"); a fact, except
    that one of a consent class (`CONSENT_CLASSES`) needs a visible provenance episode, or one of the same user when
    consent shares preferences, and one of a sensitive class (`graphmem.ontology.SENSITIVE_CLASSES`) needs a
    visible provenance episode (never through consent). A fact hit cites only those provenance episodes. The user is
    the session's (or `user_id` when the session has none, or does not exist yet); consent is the user's flag, else
    the tenant's (`:Consent`, graphmem.context.sessions). When the session's user is not `user_id` the search
    answers nothing (the window is refused for it anyway). Entities are not filtered (a window retrieves none).
    `shown`: ids of episodes the window already holds (its recent turns), which the search passes over, as a hit
    and as a reply, so that they do not take the places of other hits."""

    session_id: str
    user_id: str | None = None
    shown: list[str] = []

    def params(self) -> dict:
        """The `$viewer` map of search/rank."""
        return {"session_id": self.session_id, "user_id": self.user_id, "consent_classes": list(CONSENT_CLASSES),
                "sensitive_classes": list(SENSITIVE_CLASSES), "shown": list(self.shown)}


class Provenance(BaseModel):
    """One provenance episode of a fact hit: its id, when it occurred (UTC), the session and user it was part of
    (None when none), and its `role`: it asserted the fact, confirmed it, retracted it (ended it; a retracted fact
    shows with `include_superseded`) or corrected it (said it was wrong)."""

    episode_id: str
    occurred_at: UtcDatetime
    session_id: str | None = None
    user_id: str | None = None
    role: ProvenanceRole = "assertion"


class SearchHit(BaseModel):
    """One result. `score` is the fused RRF score; `reasons` says which retrievers found it and at what rank.
    `episode_ids` are the episodes it cites: those of a fact's provenance that asserted or confirmed it
    (`SUPPORTING_ROLES`; a context window cites these), or the episode itself. `provenance` details every episode of
    a fact, with its role (empty for entities and episodes; an episode hit carries its session and user itself)."""

    kind: Target
    id: str
    text: str
    score: float
    reasons: list[str] = Field(default_factory=list)
    fact: Fact | None = None
    entity: Entity | None = None
    episode: Episode | None = None
    episode_ids: list[str] = Field(default_factory=list)
    provenance: list[Provenance] = Field(default_factory=list)
    occurred_at: UtcDatetime | None = None


class SearchResponse(BaseModel):
    """Hits best first, plus the retrievers that were skipped or failed, each as a `Degraded` (source `vector` or
    `fulltext`, and why)."""

    hits: list[SearchHit]
    degraded: list[Degraded] = Field(default_factory=list)


class ViewedSearchResponse(SearchResponse):
    """A search for a `Viewer`: its hits, and how many facts it withheld from them that would have ranked in a
    retriever's top k (`withheld_consent`: of a consent class, learned only outside what the session may see;
    `withheld_sensitive`: of a sensitive class, without a provenance episode the session may see)."""

    withheld_consent: int = 0
    withheld_sensitive: int = 0
