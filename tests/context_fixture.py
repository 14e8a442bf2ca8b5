"""Fixtures for the context service: `make_context(**settings)` builds a `ContextService` on the shared test
database through a real `Services` object (optionally with a replacement recall service, e.g. one that fails)."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from graphmem.services import Services


@pytest.fixture
def make_context(db, settings) -> Iterator[Callable[..., Any]]:
    """make_context(recall=None, **settings_overrides) -> ContextService (closed after the test)."""
    built = []

    def make(recall: Any = None, **overrides: Any):
        s = settings.model_copy(update={"embed_on_write": False, **overrides})
        services = Services(db, s, **({"recall": recall} if recall is not None else {}))
        built.append(services.context)
        return services.context
    yield make
    for ctx in built:
        ctx.close()
