"""Runtime configuration, read from the environment and a `.env` file (pydantic-settings).

Every knob graphmem reads lives here; modules receive a `Settings` instance instead of reading
`os.environ` themselves. Variable names are the field names upper-cased with the `GRAPHMEM_`
prefix, except the Neo4j connection, which uses the names Neo4j's own tools use (`NEO4J_URI`,
`NEO4J_USER`, `NEO4J_PASSWORD`, `NEO4J_DATABASE`).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def _home() -> Path:
    return Path.home() / ".graphmem"


class Settings(BaseSettings):
    """All graphmem settings. Units are in the field names (`_s` seconds, `_tokens` tokens)."""

    model_config = SettingsConfigDict(env_prefix="GRAPHMEM_", env_file=".env", extra="ignore")

    # --- Neo4j -------------------------------------------------------------------------------
    neo4j_uri: str | None = Field(
        default=None, validation_alias=AliasChoices("NEO4J_URI", "GRAPHMEM_NEO4J_URI"),
        description="bolt:// or neo4j:// URI of an existing server; unset = use the locally managed server.",
    )
    neo4j_user: str = Field(default="neo4j", validation_alias=AliasChoices("NEO4J_USER", "NEO4J_USERNAME", "GRAPHMEM_NEO4J_USER"))
    neo4j_password: str | None = Field(default=None, validation_alias=AliasChoices("NEO4J_PASSWORD", "GRAPHMEM_NEO4J_PASSWORD"))
    neo4j_database: str = Field(default="neo4j", validation_alias=AliasChoices("NEO4J_DATABASE", "GRAPHMEM_NEO4J_DATABASE"))

    # --- locally managed Neo4j (`graphmem neo4j start`) ----------------------------------------
    home: Path = Field(default_factory=_home, description="Directory graphmem owns: local Neo4j data and logs.")
    cache_dir: Path = Field(default_factory=lambda: Path.home() / ".cache" / "graphmem",
                            description="Downloaded Neo4j distribution and other one-time artefacts.")
    local_neo4j_port: int = 7687
    local_neo4j_heap: str = "1g"
    local_neo4j_pagecache: str = "512m"
    neo4j_source: str = Field(default="maven", description="'maven' (Maven Central jars) or 'dist' (official tarball).")

    # --- schema / embeddings -----------------------------------------------------------------
    embedding_dimension: int = Field(default=384, ge=1, le=4096)
    embedder: str = Field(default="none", description="'none', 'local' (bundled MiniLM, no network) or 'openai'.")
    embedding_model: str = "text-embedding-3-small"
    embedding_base_url: str | None = None
    embedding_api_key: str | None = None
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

    # --- limits --------------------------------------------------------------------------------
    max_value_chars: int = Field(default=4000, description="Longest fact value / statement accepted (characters).")
    max_episode_chars: int = Field(default=100_000, description="Longest episode content accepted (characters).")
    max_name_chars: int = 300
    bulk_batch_size: int = 1000

    # --- HTTP service ----------------------------------------------------------------------------
    api_host: str = "127.0.0.1"
    api_port: int = 8080
    max_body_bytes: int = Field(default=2_000_000, description="Largest request body accepted (bytes); 413 beyond.")
    bootstrap_admin_key: str | None = Field(
        default=None, description="If set, an admin key with this secret is ensured at start-up (tenant 'admin').")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (FastAPI dependency style: override in tests with a fresh `Settings`)."""
    return Settings()
