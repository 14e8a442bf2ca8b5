"""Episode writes and reads.

Appending is idempotent by a client key (the same key twice returns the first episode and creates nothing).
Episodes of a session are chained by `NEXT` in (`occurred_at`, arrival) order, even when they arrive out of
order; the session node is locked for the append so concurrent appends to one session serialise. An episode gets
`retain_until` = ingestion time + the tenant's episode retention (governance), unless a legal hold covers its user
or session.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from graphmem.errors import Conflict, InvalidInput, NotFound
from graphmem.models import Episode, EpisodeIn, new_id
from graphmem.settings import Settings
from graphmem.store.db import Tx, tenant_token, whole
from graphmem.store.fulltext import search_terms
from graphmem.timeutil import from_us, utcnow


def append(tx: Tx, tenant_id: str, ep: EpisodeIn, settings: Settings, *, token_count: int,
           extraction_status: str = "pending", agent_id: str | None = None,
           extraction_reason: str | None = None, searchable: bool = True,
           now: datetime | None = None,
           expire: Callable[[Tx, list[str]], object] | None = None) -> tuple[Episode, bool]:
    """Store `ep` (already redacted by the write policy), ingested at `now` (UTC, default the current time).
    Returns (episode, created).

    With `searchable` false (the record of an API write, api/routes/facts.py) the episode is stored with
    `searchable: false` and no full-text terms: search never returns it (`cypher/search/rank`), while it stays the
    provenance of the facts that call wrote.

    One query (`episodes/append`): idempotency check, retention, session lock, the episode and its place in the
    session's NEXT chain. A created episode is returned from what was sent, not read back. `extraction_reason`
    (e.g. "chatter" for a job skipped at intake) is stored with `finished_at` = the ingestion time.
    An episode stored under the key that is past retention at `now` as every read treats it (unheld; its own
    `retain_until` or its session's passed) is gone to every read: with `expire` (`expire(tx, [episode id])`, the
    sweeper's cascade in this transaction: `graphmem.governance.sweeper.Sweeper.expire_episodes`; truthy when it
    expired it, which it alone decides) it is expired here and `ep` is stored as a new episode (created True), never
    replayed; without `expire` it is replayed as before.
    A session without a user is claimed by the first episode with one (`episodes/append`: the session's user is
    set under its write lock, and its earlier episodes stored without a user become that user's).
    Raises `InvalidInput` (field `content`) when the content exceeds `settings.max_episode_chars`, (field `user_id`)
    when the session belongs to another user (also when the key names that user's episode in it), and (field
    `idempotency_key`) when the key already names an episode with other content, kind, session, user, role, speaker
    or source (`same_episode`): a replay is the same episode sent again, and anything else under a used key would
    be dropped silently (422 as the IETF draft "The Idempotency-Key HTTP Header Field",
    draft-ietf-httpapi-idempotency-key-header, asks for a key reused with another payload).
    """
    if len(ep.content) > settings.max_episode_chars:
        raise InvalidInput(f"content is {len(ep.content)} characters; the limit is {settings.max_episode_chars}",
                           field="content")
    now = now or utcnow()
    eid = new_id()
    props = ep.model_dump(exclude_none=True)
    occurred_at = props.pop("occurred_at")
    props.update(id=eid, tenant_id=tenant_id, tenant_token=tenant_token(tenant_id), token_count=token_count,
                 search_terms=search_terms(tenant_id, ep.content) if searchable else None,
                 extraction_status=extraction_status, legal_hold=False, idempotency_key=ep.idempotency_key or eid)
    if extraction_reason:
        props["extraction_reason"] = extraction_reason
    if not searchable:
        props["searchable"] = False
    now_iso = now.isoformat()
    for _ in range(3):
        row = tx.one("episodes/append", tenant_id=tenant_id, idempotency_key=props["idempotency_key"],
                     session_id=ep.session_id, user_id=ep.user_id, agent_id=agent_id, call_id=eid, episode=props,
                     occurred_at=occurred_at.isoformat(), now=now_iso,
                     finished_at=now_iso if extraction_reason else None)
        if row["created"] or row["conflict"]:
            break
        # a replay whose episode another transaction deleted while this one read it (the record of an API call that
        # failed, api.idempotency) is gone, wholly or in part (`whole`): store this one; so is one past its
        # retention, once expired
        if not whole(row["episode"], Episode):
            continue
        if expire is not None and expire(tx, [row["episode"]["id"]]):
            continue
        break
    if row["conflict"]:
        raise InvalidInput(f"session {ep.session_id!r} belongs to another user", field="user_id")
    if not row["created"]:
        refuse_held_expired(tx, tenant_id, [row["episode"]["id"]])
        stored = Episode(**row["episode"])
        if not same_episode(stored, ep):
            raise _key_refusal(stored, ep)
        return stored, False
    days = row["retain_days"]
    props.update(user_id=row["user_id"], legal_hold=row["held"])
    return Episode(**props, occurred_at=occurred_at, ingested_at=now,
                   retain_until=now + timedelta(days=days) if days is not None else None), True


IDENTITY = ("content", "kind", "session_id", "user_id", "role", "speaker", "source")
"""The attributes that make two episodes under one idempotency key the same episode sent again (`identity`)."""


def identity(ep: Episode | EpisodeIn) -> tuple:
    """What makes two episodes under one idempotency key the same episode sent again: content, kind, session,
    user, role, speaker and source (not the times: a retry may stamp them anew)."""
    return tuple(getattr(ep, a) for a in IDENTITY)


def _key_refusal(stored: Episode, ep: EpisodeIn) -> InvalidInput:
    """Why `ep` cannot take the key of `stored` (another episode): the session belongs to another user (field
    `user_id`) when both are in one session and their users differ, since every episode of a claimed session is its
    owner's; otherwise the key is reused (field `idempotency_key`)."""
    if ep.session_id and stored.session_id == ep.session_id and ep.user_id and stored.user_id \
            and stored.user_id != ep.user_id:
        return InvalidInput(f"session {ep.session_id!r} belongs to another user", field="user_id")
    return InvalidInput(f"idempotency_key {ep.idempotency_key!r} already names another episode (other content, "
                        "kind, session, user, role, speaker or source); use a new key for a new episode",
                        field="idempotency_key")


def batch_conflict(tx: Tx, tenant_id: str, episodes: list[EpisodeIn]) -> tuple[int, InvalidInput | Conflict] | None:
    """The first episode of a batch that `append` would refuse for its stored state, with the error (its field as
    for one episode sent alone: the caller names the item, `GraphmemError.under`), or None: its idempotency key
    names another stored episode (`InvalidInput`), or one past retention but kept under a legal hold (`Conflict`,
    `idempotency_key`: `refuse_held_expired`), or its session belongs to another user (`InvalidInput`, `user_id`). A
    session without a user (stored, or created by an earlier episode of the batch) belongs to the first episode of
    the batch that has one, as `append` claims it. Run before a batch writes anything, so a refused batch stores
    nothing (a concurrent writer can still win between the two)."""
    stored = _by_keys(tx, tenant_id, [ep.idempotency_key for ep in episodes if ep.idempotency_key])
    held = set(_held_expired_keys(tx, tenant_id, [e.id for e in stored.values()]))
    sessions = sorted({ep.session_id for ep in episodes if ep.session_id})
    owners = {r["id"]: r["user_id"] for r in (tx.rows("sessions/owners", tenant_id=tenant_id, ids=sessions)
                                              if sessions else [])}
    for i, ep in enumerate(episodes):
        seen = stored.get(ep.idempotency_key) if ep.idempotency_key else None
        if seen is not None:
            if seen.idempotency_key in held:
                return i, _held_key_conflict(seen.idempotency_key)
            if not same_episode(seen, ep):
                return i, _key_refusal(seen, ep)
            continue
        if ep.session_id is None:
            continue
        owner = owners.get(ep.session_id)
        if owner is None:
            owners[ep.session_id] = ep.user_id    # creates the session, or claims one without a user (if it has one)
        elif ep.user_id is not None and owner != ep.user_id:
            return i, InvalidInput(f"session {ep.session_id!r} belongs to another user", field="user_id")
    return None


def same_episode(stored: Episode, sent: EpisodeIn) -> bool:
    """`sent` is `stored` sent again (`identity`); a `sent` without user_id into a session counts as the session
    owner's, which is what the stored episode got (`episodes/append`), and one without `source` counts as the
    stored one's (the default by role came later: an episode stored before took user_explicit)."""
    return not differences(stored, sent)


def differences(stored: Episode, sent: EpisodeIn) -> list[str]:
    """The `IDENTITY` attributes in which `sent` is not `stored` sent again, in `IDENTITY` order ([]: the same
    episode, read as `same_episode` says)."""
    if sent.user_id is None and sent.session_id is not None:
        sent = sent.model_copy(update={"user_id": stored.user_id})
    if not sent.source_given:
        sent = sent.model_copy(update={"source": stored.source})
    return [a for a in IDENTITY if getattr(stored, a) != getattr(sent, a)]


def by_keys(tx: Tx, tenant_id: str, keys: list[str]) -> dict[str, Episode]:
    """The episodes stored under idempotency keys `keys` in this tenant, by key ({} for no keys). One past retention
    (unheld; its own `retain_until` or its session's passed: what every read treats as gone) is left out: a re-send
    of its key expires it and is stored anew (`append`). Raises `Conflict` (field `idempotency_key`) when one is
    past retention but held (`refuse_held_expired`)."""
    stored = _by_keys(tx, tenant_id, keys)
    refuse_held_expired(tx, tenant_id, [e.id for e in stored.values()])
    return stored


def _by_keys(tx: Tx, tenant_id: str, keys: list[str]) -> dict[str, Episode]:
    """`by_keys` without its refusal of held keys past retention (`batch_conflict` names the item instead)."""
    return {r["episode"]["idempotency_key"]: Episode(**r["episode"])
            for r in (tx.rows("episodes/by_keys", tenant_id=tenant_id, keys=keys, now=utcnow()) if keys else [])
            if whole(r["episode"], Episode)}


def _held_expired_keys(tx: Tx, tenant_id: str, episode_ids: list[str]) -> list[str]:
    """The idempotency keys of those of `episode_ids` past retention as every read treats them but kept under a
    legal hold (`governance/held_expired_episodes`), in key order ([] for no ids)."""
    return [r["key"] for r in tx.rows("governance/held_expired_episodes", tenant_id=tenant_id, ids=episode_ids,
                                      now=utcnow())] if episode_ids else []


def _held_key_conflict(key: str) -> Conflict:
    """The refusal of a re-send under `key`, taken by an episode past retention kept under a legal hold."""
    return Conflict(f"idempotency_key {key!r} is taken by an episode past retention, kept under a legal hold: use a "
                    "new key", field="idempotency_key")


def refuse_held_expired(tx: Tx, tenant_id: str, episode_ids: list[str]) -> None:
    """Raise `Conflict` (field `idempotency_key`) when one of `episode_ids` is past retention as every read treats
    it but kept under a legal hold (`governance/held_expired_episodes`): its key is taken by data kept under the
    hold, so a re-send under it is neither replayed (the episode stays hidden) nor stored anew."""
    for key in _held_expired_keys(tx, tenant_id, episode_ids):
        raise _held_key_conflict(key)


def by_key(tx: Tx, tenant_id: str, idempotency_key: str) -> Episode | None:
    """The episode stored under `idempotency_key` in this tenant, or None (also for one past its retention:
    `by_keys`)."""
    return by_keys(tx, tenant_id, [idempotency_key]).get(idempotency_key)


def get(tx: Tx, tenant_id: str, episode_id: str) -> Episode:
    """The episode `episode_id` of this tenant; `NotFound` otherwise."""
    row = tx.one("episodes/get", tenant_id=tenant_id, id=episode_id, now=utcnow())
    if row is None or not whole(row["episode"], Episode):   # none, or deleted while it was read
        raise NotFound(f"episode_id: no episode {episode_id!r}", field="episode_id")
    return Episode(**row["episode"])


def list_session(tx: Tx, tenant_id: str, session_id: str, offset: int = 0, limit: int = 100) -> list[Episode]:
    """A session's episodes in chain order."""
    return [Episode(**r["episode"]) for r in tx.rows("episodes/list_session", tenant_id=tenant_id,
                                                     session_id=session_id, offset=offset, limit=limit,
                                                     now=utcnow()) if whole(r["episode"], Episode)]


def lock_retained_episodes(tx: Tx, tenant_id: str, ids: set[str], now: datetime) -> dict[str, datetime]:
    """{episode id: occurred_at} of those of `ids` the tenant has and that are not past retention at `now` (UTC: their
    own, nor their session's), each write-locked (`episodes/lock_many`): an erasure of one either sees this write's
    facts or this write sees the episode gone. A fact write calls it for the episodes it cites, and a compaction's
    summary write for the turns it folds (graphmem/context/compaction.py)."""
    return {r["id"]: from_us(r["occurred_us"])
            for r in tx.rows("episodes/lock_many", tenant_id=tenant_id, ids=sorted(ids))
            if all(r[k] is None or from_us(r[k]) > now for k in ("retain_until_us", "session_retain_until_us"))}
