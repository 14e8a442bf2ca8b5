"""The answer of every paginated list route: `items`, and the `offset` and `limit` the page was asked with
(`api.deps.PageDep`). Each route names its own subclass (`FactPage(ItemPage[Fact])`), so the OpenAPI schema keeps
one named component per list."""
from __future__ import annotations

from typing import Generic, Self, TypeVar

from pydantic import BaseModel

from api.deps import Page

T = TypeVar("T")


class ItemPage(BaseModel, Generic[T]):
    """One page of a list: `items` in the route's order, after skipping `offset`, at most `limit` of them."""

    items: list[T]
    offset: int
    limit: int

    @classmethod
    def of(cls, items: list[T], page: Page, **extra) -> Self:
        """This page's answer: `items` read with `page`'s offset and limit (plus any fields a subclass adds)."""
        return cls(items=items, offset=page.offset, limit=page.limit, **extra)
