"""Request bodies parsed as JSON with unique member names: `UniqueKeysRoute`, the route class of every router.

RFC 8259 (section 4) says the names within an object SHOULD be unique and leaves what a parser does with a repeated
one to the parser; Python's keeps the last. So `{"content": "a", "content": "b"}` stored "b" and dropped "a"
without a word. Here a repeated name is a 422 naming it, as FastAPI answers a body that is not JSON at all.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from graphmem import strict_json


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """One JSON object as a dict (`json.loads`' object_pairs_hook); `json.JSONDecodeError` naming a repeated name."""
    out: dict[str, Any] = {}
    for name, value in pairs:
        if name in out:
            raise json.JSONDecodeError(f"the name {name!r} appears twice in one object (RFC 8259, section 4: names "
                                       "should be unique; which value counts would be a guess)", "", 0)
        out[name] = value
    return out


class UniqueKeysRequest(Request):
    """A `Request` whose `json()` reads the body with `graphmem.strict_json.loads`: an object with a repeated name, a
    body that is not UTF-8 (RFC 8259, section 8.1; a leading UTF-8 byte order mark is ignored, as it allows:
    `json.loads` given bytes would guess UTF-16 or UTF-32 from them), NaN or Infinity, a number out of range and
    nesting too deep are each a `json.JSONDecodeError` saying so, which FastAPI answers as a 422 `json_invalid`,
    rendered by `api.problems` after the key and the role are checked."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = strict_json.loads(await self.body(), object_pairs_hook=_unique)
        return self._json


class UniqueKeysRoute(APIRoute):
    """An `APIRoute` that hands its endpoint a `UniqueKeysRequest` (FastAPI's documented way to change how a body is
    read: "Custom Request and APIRoute class")."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def unique_keys_handler(request: Request) -> Response:
            return await handler(UniqueKeysRequest(request.scope, request.receive))
        return unique_keys_handler
