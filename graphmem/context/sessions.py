"""Sessions: tenant + user + session id (two browser tabs are two sessions), their TTL, and preference consent.

A `:Session` node is keyed by (tenant_id, id) (constraint `session_key_unique`); it is created explicitly
(`SessionStore.create`) or by the first episode appended to it (`cypher/episodes/append.cypher`). A session created
by an episode without a user has none until the first turn, episode or `create` that names one claims it; from then
on another user's turn or episode is refused (422 naming user_id; `create`: 409).
TTL: a session idle longer than `settings.session_ttl_s` starts a fresh window - `window_from_seq` moves past every
stored episode, so old turns (and summaries of them) stay stored but no longer enter the window; the reset time is
kept in `window_reset_at` and reported.

Consent (DESIGN.md "Sessions, pins, compaction"): preferences (facts of fact class `preference`) learned in one
session enter another session of the same user only when the tenant (`:Consent {subject: '*'}`) or that user
(`subject: 'user:<id>'`) has `share_preferences = true` (the user's own record wins over the tenant's), and never
for another user. The window's search applies the rule, with the session's visibility
(`graphmem.recall.models.Viewer`, cypher/search/rank). Never across tenants: every query filters on the tenant.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, Field

from graphmem.errors import Conflict, InvalidInput, NotFound
from graphmem.identifiers import blank
from graphmem.models import Input, UserIdText, UtcDatetime, new_id, session_id
from graphmem.store import Database, require_tenant
from graphmem.timeutil import utcnow


class SessionInfo(BaseModel):
    """A session as the API shows it. `window_from_seq`: episodes with a lower sequence number are outside the
    window (TTL reset); `window_reset_at`: when that happened (UTC), if ever."""

    id: str
    user_id: str | None = None
    agent_id: str | None = None
    created_at: UtcDatetime
    last_active_at: UtcDatetime
    version: int = 0
    window_from_seq: int = 0
    window_reset_at: UtcDatetime | None = None
    pins: int | None = Field(default=None, description="active pins (single-session reads only)")
    episodes: int | None = Field(default=None, description="stored episodes (single-session reads only)")


class ConsentIn(Input):
    """Whether preferences may cross sessions: for the whole tenant (`scope` tenant) or one user."""

    scope: Literal["tenant", "user"] = Field(examples=["user"])
    user_id: UserIdText | None = Field(default=None, examples=["u-42"])
    share_preferences: bool = Field(strict=True, examples=[True], description="a JSON boolean (not \"true\" or 1)")


class Consent(ConsentIn):
    """A stored consent: `ConsentIn` and when it was last set (UTC; set by the server)."""

    updated_at: UtcDatetime | None = None


def session_info(row: dict, pins: int | None = None, episodes: int | None = None) -> SessionInfo:
    """A stored Session node's properties (`row`) as the API shows the session; the counts only for single-session
    reads."""
    data = {k: v for k, v in row.items() if not k.startswith("_")}
    data["window_from_seq"] = data.get("window_from_seq") or 0
    data.setdefault("last_active_at", data.get("created_at"))
    return SessionInfo(**data, pins=pins, episodes=episodes)


def check_session_id(sid: str, field: str = "session_id") -> str:
    """A valid session id (`graphmem.models.session_id`); else `InvalidInput` naming `field`."""
    try:
        return session_id(sid if isinstance(sid, str) else "")
    except ValueError as exc:
        raise InvalidInput(str(exc), field=field) from None


class SessionStore:
    """Session and consent records. Every method raises `TenantRequired` without a tenant."""

    def __init__(self, db: Database, ttl_s: float):
        self.db = db
        self.ttl_s = ttl_s

    def create(self, tenant_id: str, user_id: str, session_id: str | None = None,
               agent_id: str | None = None) -> tuple[SessionInfo, bool]:
        """Create a session for `user_id` (a new id when `session_id` is None). Returns (session, created).
        The same id again for the same user returns it unchanged; a session of that id without a user (created by
        an episode sent without one) is claimed: it becomes `user_id`'s, and so do its episodes stored without a
        user (atomic: of two users claiming at once, the second finds the first's). For another user's session
        raises `Conflict` (field `user_id`)."""
        require_tenant(tenant_id)
        if not user_id or blank(user_id):
            raise InvalidInput("user_id is required", field="user_id")
        sid = check_session_id(session_id) if session_id is not None else new_id()
        row = self.db.execute("sessions/create", tenant_id=tenant_id, session_id=sid, user_id=user_id,
                              agent_id=agent_id, now=utcnow(), call_id=new_id())[0]
        info = session_info(row["session"])
        if not row["created"] and info.user_id != user_id:
            raise Conflict(f"session {sid!r} belongs to another user", field="user_id")
        return info, row["created"]

    def get(self, tenant_id: str, session_id: str) -> SessionInfo:
        """One session with its counts; `NotFound` (field `session_id`) if this tenant has none by that id."""
        require_tenant(tenant_id)
        row = self.db.one("sessions/get", tenant_id=tenant_id, session_id=session_id, now=utcnow())
        if row is None:
            raise NotFound(f"no session {session_id!r}", field="session_id")
        return session_info(row["session"], row["pins"], row["episodes"])

    def find(self, tenant_id: str, session_id: str) -> SessionInfo | None:
        """Like `get` without the counts; None when absent."""
        require_tenant(tenant_id)
        row = self.db.one("sessions/get", tenant_id=tenant_id, session_id=session_id, now=utcnow())
        return session_info(row["session"]) if row else None

    def list(self, tenant_id: str, user_id: str | None = None, offset: int = 0, limit: int = 50) -> list[SessionInfo]:
        """The tenant's sessions (of one user if given), most recently active first."""
        require_tenant(tenant_id)
        return [session_info(r["session"]) for r in self.db.rows("sessions/list", tenant_id=tenant_id, user_id=user_id,
                                                          now=utcnow(), offset=offset, limit=limit)]

    def is_expired(self, info: SessionInfo) -> bool:
        """True when the session has been idle longer than the TTL."""
        return info.last_active_at < utcnow() - timedelta(seconds=self.ttl_s)

    def reset_if_expired(self, tenant_id: str, session_id: str) -> tuple[SessionInfo | None, bool]:
        """Start a fresh window if the session is past its TTL (atomic; concurrent callers reset once).
        Returns (session or None if absent, reset_now)."""
        require_tenant(tenant_id)
        now = utcnow()
        rows = self.db.execute("sessions/reset_window", tenant_id=tenant_id, session_id=session_id, now=now,
                               idle_before=now - timedelta(seconds=self.ttl_s))
        if not rows:
            return None, False
        return session_info(rows[0]["session"]), bool(rows[0]["expired"])

    # ---- consent -----------------------------------------------------------------------------
    def set_consent(self, tenant_id: str, consent: ConsentIn) -> Consent:
        """Record a consent flag. A user-scoped consent needs `user_id`; a tenant-scoped one must not have one."""
        require_tenant(tenant_id)
        if consent.scope == "user" and not consent.user_id:
            raise InvalidInput("a user consent needs user_id", field="user_id")
        if consent.scope == "tenant" and consent.user_id:
            raise InvalidInput("a tenant consent applies to every user; leave user_id out", field="user_id")
        subject = "*" if consent.scope == "tenant" else f"user:{consent.user_id}"
        row = self.db.execute("consent/set", tenant_id=tenant_id, subject=subject,
                              share_preferences=consent.share_preferences, now=utcnow())[0]
        return Consent(**{**consent.model_dump(), "updated_at": row["consent"]["updated_at"]})

    def consents(self, tenant_id: str, user_id: str | None) -> list[Consent]:
        """The consent records that apply to `user_id` (tenant-wide first)."""
        require_tenant(tenant_id)
        out = []
        for r in self.db.rows("consent/get", tenant_id=tenant_id, user_subject=f"user:{user_id}" if user_id else None):
            c = r["consent"]
            scope = "tenant" if c["subject"] == "*" else "user"
            out.append(Consent(scope=scope, user_id=None if scope == "tenant" else c["subject"][5:],
                               share_preferences=c["share_preferences"], updated_at=c["updated_at"]))
        return out

