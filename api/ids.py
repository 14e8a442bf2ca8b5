"""The ids a route's path names (`/v1/facts/{fact_id}`, `/v1/sessions/{session_id}/pins/{key}` ...) or its query
string (`?user_id=`), typed once.

Each is a path or query parameter with the `graphmem.models.VISIBLE` pattern, and the `graphmem.models.Visible`
check for what the pattern cannot list (invisible characters outside the BMP, "\U000e0020"): an id of whitespace or
invisible characters alone is a 422 naming the parameter ("must not be blank", the pattern's string_pattern_mismatch
as a body field gives it), never a 404 "no fact ' '" or a filter that matches nothing. The OpenAPI schema shows the
pattern only. An unknown id that is not blank stays the route's 404 (a filter's empty page). The tenant of an admin
route (`/v1/admin/tenants/{tenant_id}`) is checked by `api.deps.tenant_admin` instead
(`graphmem.store.require_named_tenant`)."""
from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from graphmem.models import VISIBLE, SameUser, Visible

_BLANK = "; a blank one (only whitespace or invisible characters) is a 422."
_SAME = " Invisible characters at its ends are dropped (\"u1\\u200b\" is user u1)."

EntityId = Annotated[str, Path(pattern=VISIBLE, description="An entity id of the tenant" + _BLANK), Visible]
"""An entity id in the path (`entity_id`, `other_id`)."""
FactId = Annotated[str, Path(pattern=VISIBLE, description="A fact id of the tenant" + _BLANK), Visible]
"""A fact id in the path (`fact_id`)."""
EpisodeId = Annotated[str, Path(pattern=VISIBLE, description="An episode id of the tenant" + _BLANK), Visible]
"""An episode id in the path (`episode_id`: the episode, or its extraction job)."""
SessionId = Annotated[str, Path(pattern=VISIBLE, description="A session id of the tenant" + _BLANK), Visible]
"""A session id in the path (`session_id`)."""
PinKey = Annotated[str, Path(pattern=VISIBLE, description="A pin key" + _BLANK), Visible]
"""A pin key in the path (`key`); a write checks its form too (`graphmem.context.pins.check_key`)."""
HoldId = Annotated[str, Path(pattern=VISIBLE, description="A legal hold id of the tenant" + _BLANK), Visible]
"""A legal hold id in the path (`hold_id`)."""
KeyId = Annotated[str, Path(pattern=VISIBLE, description="An API key id of the tenant" + _BLANK), Visible]
"""An API key id in the path (`key_id`)."""
UserId = Annotated[str, Query(min_length=1, max_length=200, pattern=VISIBLE, examples=["user-42"],
                              description="whose memory" + _BLANK + _SAME), Visible, SameUser]
"""The user a route reads or writes for (`?user_id=` of the memory routes): required, 1-200 characters, trimmed as
every user id is (`graphmem.models.SameUser`)."""
UserFilter = Annotated[str | None, Query(min_length=1, max_length=200, pattern=VISIBLE, examples=["u-42"],
                                         description="only this user's" + _BLANK + _SAME), Visible, SameUser]
"""A list's optional `?user_id=` filter (sessions, consent): 1-200 characters when given, trimmed as every user id
is (`graphmem.models.SameUser`)."""
