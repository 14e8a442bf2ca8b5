"""The exceptions graphmem raises. The HTTP layer maps each to an RFC 9457 problem+json reply.

Every error names the field at fault when there is one (`field`, a dotted path such as
`facts[3].valid_from`), so a caller can fix its request without reading logs.
"""
from __future__ import annotations

import copy


class GraphmemError(Exception):
    """Base class. `status` is the HTTP status the API answers with; `title` a short fixed summary."""

    status = 500
    title = "Internal error"

    def __init__(self, detail: str, *, field: str | None = None):
        super().__init__(detail)
        self.detail = detail
        self.field = field

    def under(self, prefix: str) -> "GraphmemError":
        """A copy of this error (same type, status, detail and attributes) whose field is named inside an item of
        the request: `prefix` + `field` ("episodes[2]." + "session_id" is "episodes[2].session_id"); one without a
        field stays without; a detail that starts with the field starts with the new one. How a batch names the item
        an error of one of its items is about."""
        out = copy.copy(self)
        out.field = f"{prefix}{self.field}" if self.field else None
        if self.field and self.detail.startswith(self.field):   # "session_id: ..." -> "episodes[2].session_id: ..."
            out.detail = f"{prefix}{self.detail}"
        return out


class InvalidInput(GraphmemError):
    """The request is malformed: a bad value, an unknown predicate, a wrong kind (HTTP 422)."""

    status = 422
    title = "Invalid input"


class TenantRequired(InvalidInput):
    """A call reached the store without a tenant id (HTTP 422). Never defaulted."""

    title = "Tenant required"

    def __init__(self, detail: str = "tenant_id is required and must be a non-empty string"):
        super().__init__(detail, field="tenant_id")


class NotFound(GraphmemError):
    """No such record in this tenant (HTTP 404). Another tenant's ids answer exactly the same."""

    status = 404
    title = "Not found"


class UnsupportedMediaType(GraphmemError):
    """A request body in a format the operation does not read, such as a form-encoded one (HTTP 415); the field is
    the `Content-Type` header."""

    status = 415
    title = "Unsupported media type"


class Conflict(GraphmemError):
    """A stale version or a clash with the current state (HTTP 409)."""

    status = 409
    title = "Conflict"


class EmailTaken(Conflict):
    """A reference names an entity by its external id and gives it an email that another entity holds (HTTP 409,
    `field` `<reference>.email`): the email is not moved and the two are not merged. `email` and `external_ids` are
    the reference's, so a caller can drop that email from it."""

    def __init__(self, detail: str, *, field: str | None = None, email: str = "",
                 external_ids: tuple[str, ...] = ()):
        super().__init__(detail, field=field)
        self.email = email
        self.external_ids = tuple(external_ids)


class Refused(GraphmemError):
    """A write the write policy or a legal hold refuses (HTTP 422 by default)."""

    status = 422
    title = "Refused"


class SchemaMismatch(GraphmemError):
    """The graph's recorded schema (version, vector dimension) disagrees with the settings."""

    status = 500
    title = "Schema mismatch"


class Unavailable(GraphmemError):
    """A dependency (Neo4j, the LLM, the embedder) cannot be reached (HTTP 503)."""

    status = 503
    title = "Service unavailable"


class QueryTimedOut(Unavailable):
    """Neo4j did not finish a transaction within the timeout its caller set (`Database.timeout`, seconds): it ended
    the transaction, nothing of it was written (HTTP 503)."""
