"""Episode writes and reads.

Appending is idempotent by a client key (the same key twice returns the first episode and creates nothing).
Episodes of a session are chained by `NEXT` in (`occurred_at`, arrival) order, even when they arrive out of
order; the session node is locked for the append so concurrent appends to one session serialise. An episode gets
`retain_until` = ingestion time + the tenant's episode retention (governance), unless a legal hold covers its user
or session.
"""
from __future__ import annotations

from datetime import timedelta

from graphmem.errors import InvalidInput, NotFound
from graphmem.models import Episode, EpisodeIn, new_id
from graphmem.settings import Settings
from graphmem.store.db import Tx, tenant_token
from graphmem.timeutil import utcnow


def append(tx: Tx, tenant_id: str, ep: EpisodeIn, settings: Settings, *, token_count: int,
           extraction_status: str = "pending", agent_id: str | None = None) -> tuple[Episode, bool]:
    """Store `ep` (already redacted by the write policy). Returns (episode, created).

    Raises `InvalidInput` (field `content`) when the content exceeds `settings.max_episode_chars`.
    """
    if len(ep.content) > settings.max_episode_chars:
        raise InvalidInput(f"content is {len(ep.content)} characters; the limit is {settings.max_episode_chars}",
                           field="content")
    prep = tx.one("episodes/prepare", tenant_id=tenant_id, idempotency_key=ep.idempotency_key,
                  user_id=ep.user_id, session_id=ep.session_id)
    if prep["episode"]:
        return Episode(**prep["episode"]), False
    now = utcnow()
    eid = new_id()
    seq = 0
    if ep.session_id:
        lock = tx.one("episodes/lock_session", tenant_id=tenant_id, session_id=ep.session_id, now=now,
                      user_id=ep.user_id, agent_id=agent_id)
        if lock["user_id"] and ep.user_id and lock["user_id"] != ep.user_id:
            raise InvalidInput(f"session {ep.session_id!r} belongs to another user", field="user_id")
        seq = lock["seq"]
    props = ep.model_dump(exclude_none=True)
    props.update(id=eid, tenant_id=tenant_id, tenant_token=tenant_token(tenant_id), ingested_at=now, seq=seq, token_count=token_count,
                 extraction_status=extraction_status, legal_hold=False,
                 idempotency_key=ep.idempotency_key or eid)
    if prep["days"] and not prep["held"]:
        props["retain_until"] = now + timedelta(days=prep["days"])
    row = tx.one("episodes/append", tenant_id=tenant_id, episode=props, call_id=eid)
    episode, created = Episode(**row["episode"]), row["created"]
    if created and ep.session_id:
        tx.run("episodes/link_next", tenant_id=tenant_id, session_id=ep.session_id, id=episode.id)
    return episode, created


def get(tx: Tx, tenant_id: str, episode_id: str) -> Episode:
    """The episode `episode_id` of this tenant; `NotFound` otherwise."""
    row = tx.one("episodes/get", tenant_id=tenant_id, id=episode_id, now=utcnow())
    if row is None:
        raise NotFound(f"no episode {episode_id!r}", field="episode_id")
    return Episode(**row["episode"])


def list_session(tx: Tx, tenant_id: str, session_id: str, offset: int = 0, limit: int = 100) -> list[Episode]:
    """A session's episodes in chain order."""
    return [Episode(**r["episode"]) for r in tx.rows("episodes/list_session", tenant_id=tenant_id,
                                                     session_id=session_id, offset=offset, limit=limit,
                                                     now=utcnow())]
