"""Fixtures for the context service: `make_context(**settings)` builds a `ContextService` on the shared test
database through a real `Services` object (optionally with a replacement recall service, e.g. one that fails)."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from graphmem.services import Services

PATIENT_SEARCH: dict[str, float] = {"context_search_timeout_s": 30.0, "context_latency_budget_s": 60.0}
"""Context search limits for tests whose windows must hold what the search finds (the timeout paths have their own
tests with short limits). A search is only as slow as it is; the limit matters only on a slow machine, where a cold
first search (Neo4j plans each query on its first run) took 1.5-2 s on an idle 2-core box: 10 s was a thin margin
for a CI machine 3-5 times slower."""


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
