"""Where things are (`/`), liveness, readiness (checks Neo4j) and Prometheus metrics. No API key needed."""
from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from api.deps import ServicesDep
from api.json_body import UniqueKeysRoute
from api.problems import problem
from graphmem.errors import Unavailable
from graphmem.ops import vector_search

router = APIRouter(route_class=UniqueKeysRoute, tags=["operations"])


@router.get("/", summary="Where the API's documents are", include_in_schema=False)
def root() -> dict:
    """A pointer for whoever opens the server's address (it was a 404): the docs, the schema, the health routes."""
    return {"service": "graphmem", "docs": "/v1/docs", "openapi": "/v1/openapi.json", "health": "/healthz",
            "ready": "/readyz"}


@router.get("/healthz", summary="Liveness: the process answers",
            responses={200: {"content": {"application/json": {"example": {"status": "ok"}}}}})
def healthz() -> dict:
    return {"status": "ok"}


@router.get("/readyz", summary="Readiness: Neo4j answers; whether search can use vectors",
            responses={200: {"content": {"application/json": {"example": {
                "status": "ready", "neo4j": "ok", "vector_search": "ok", "warm_up": "done"}}}},
                       503: {"description": "Neo4j is not reachable (problem+json)"}})
def readyz(request: Request, services: ServicesDep):
    """Ready when Neo4j answers. `vector_search` is "ok" or "off: <reason>": with no embedder configured, or with
    an embedder that did not make the stored vectors (search then runs on full-text and graph, still ready).
    `warm_up` is the start's warm-up (`api.app.WarmUp`): "running", "done", "failed: <error>" or "off"; the
    service is ready meanwhile, but until it is "done" the first context windows may come back without their
    retrieved tier."""
    try:
        services.db.ping()
        vectors = vector_search(services)
    except Unavailable as exc:
        return problem(503, exc.title, exc.detail, request=request)
    status = getattr(request.app.state, "warm_up", None)
    return {"status": "ready", "neo4j": "ok", "vector_search": vectors, "warm_up": status.state if status else "off"}


@router.get("/metrics", summary="Prometheus metrics", response_class=Response,
            responses={200: {"content": {"text/plain": {"example": "graphmem_http_request_duration_seconds_count 1"}}}})
def metrics(services: ServicesDep) -> Response:
    sample = getattr(services, "sample_metrics", None)
    if callable(sample):
        sample()
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
