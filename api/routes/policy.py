"""Write-policy refusals: what was refused or redacted, why, and where (never the refused content)."""
from __future__ import annotations

from fastapi import APIRouter

from api.deps import PageDep, Reader, ServicesDep
from api.json_body import UniqueKeysRoute
from api.pages import ItemPage
from graphmem.ingest.refusals import Refusal

router = APIRouter(route_class=UniqueKeysRoute, prefix="/v1", tags=["policy"])


class RefusalPage(ItemPage[Refusal]):
    """A page of write-policy refusals, newest first."""


@router.get("/refusals", response_model=RefusalPage, summary="Write-policy refusals, newest first",
            responses={200: {"content": {"application/json": {"example": {"items": [
                {"id": "8edb255ef05c0ddeccdaacbf38e7f5fd", "reason": "secret", "field": "facts[0].value",
                 "detail": "the fact contains a secret and is never stored", "episode_id": "3f2b...",
                 "predicate": "HAS_PHONE", "created_at": "2024-05-01T09:00:01Z"}], "offset": 0, "limit": 50}}}}})
def list_refusals(who: Reader, services: ServicesDep, page: PageDep) -> RefusalPage:
    return RefusalPage.of(services.ingest.list_refusals(who.tenant_id, page.offset, page.limit), page)
