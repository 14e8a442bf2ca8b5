"""Extraction job routes: a job's state, failed and dead-lettered jobs with their reasons, retry."""
from __future__ import annotations

from fastapi import APIRouter

from api.deps import PageDep, Reader, ServicesDep, Writer
from api.ids import EpisodeId
from api.json_body import UniqueKeysRoute
from api.pages import ItemPage
from graphmem.ingest.jobs import Job

router = APIRouter(route_class=UniqueKeysRoute, prefix="/v1/jobs", tags=["jobs"])


class JobPage(ItemPage[Job]):
    """A page of extraction jobs."""


@router.get("/failed", response_model=JobPage, summary="Failed and dead-lettered extraction jobs",
            responses={200: {"content": {"application/json": {"example": {"items": [
                {"episode_id": "3f2b9c0e8d7a4b6c9e1f2a3b4c5d6e7f", "kind": "message", "status": "dead", "attempts": 5,
                 "reason": "dead after 5 attempts; last error: LLMUnavailable: ..."}], "offset": 0, "limit": 50}}}}})
def failed(who: Reader, services: ServicesDep, page: PageDep) -> JobPage:
    return JobPage.of(services.ingest.failed_jobs(who.tenant_id, page.offset, page.limit), page)


@router.get("/{episode_id}", response_model=Job, summary="The extraction job of an episode",
            responses={404: {"description": "No such episode in this tenant"}})
def job(episode_id: EpisodeId, who: Reader, services: ServicesDep) -> Job:
    return services.ingest.job_status(who.tenant_id, episode_id)


@router.post("/{episode_id}/retry", response_model=Job, summary="Re-queue a failed, dead or skipped job",
             responses={409: {"description": "The job is pending, running or done"}})
def retry(episode_id: EpisodeId, who: Writer, services: ServicesDep) -> Job:
    return services.ingest.retry_job(who.tenant_id, episode_id)
