"""Settings as a user sets them: environment values that read like a shell's, and mistakes caught when the settings
load, named by the variable to fix (graphmem.settings). No server needed."""
from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from graphmem.settings import MAVEN_CENTRAL, Settings, describe_invalid


def _problem(monkeypatch, **env: str) -> str:
    """Load Settings from these environment variables; the one-line description of why they are refused."""
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(ValidationError) as exc:
        Settings(_env_file=None)
    return describe_invalid(exc.value)


def test_empty_values_mean_unset_and_paths_read_like_a_shells() -> None:
    assert Settings(model_dir="").resolved_model_dir == Settings().cache_dir / "models"
    assert Settings(model_dir="~/gm-models").resolved_model_dir == Path.home() / "gm-models"
    assert Settings(maven_repo=" ").maven_repo == MAVEN_CENTRAL
    assert Settings(NEO4J_URI="").neo4j_uri is None
    assert Settings(embedder=" Local ").embedder == "local"


def test_an_empty_environment_variable_counts_as_unset(monkeypatch) -> None:
    """docker/compose.yaml passes `${GRAPHMEM_LLM_BASE_URL:-}`, an empty string: with only a key set, extraction and
    summaries use OpenAI's own endpoint (the client was given an empty base URL and every call failed)."""
    for var in ("GRAPHMEM_LLM_BASE_URL", "GRAPHMEM_EMBEDDING_BASE_URL", "GRAPHMEM_NPM_REGISTRY"):
        monkeypatch.setenv(var, "")
    monkeypatch.setenv("GRAPHMEM_LLM_API_KEY", "sk-test")
    s = Settings(_env_file=None)
    assert s.llm_base_url is None and s.embedding_base_url is None and s.llm_configured
    from graphmem.context.summarizer import LLMSummarizer, build_summarizer
    from graphmem.ingest.llm import ChatClient
    summarizer = build_summarizer(s)
    assert isinstance(summarizer, LLMSummarizer) and isinstance(summarizer.client, ChatClient)   # the shared client
    assert str(summarizer.client._client.base_url) == "https://api.openai.com/v1/"
    assert str(ChatClient(s)._client.base_url) == "https://api.openai.com/v1/"
    monkeypatch.setenv("OPENAI_BASE_URL", "")   # the openai client's own variable never redirects graphmem's calls
    assert str(ChatClient(Settings(_env_file=None))._client.base_url) == "https://api.openai.com/v1/"
    monkeypatch.setenv("GRAPHMEM_LLM_API_KEY", "")
    assert not Settings(_env_file=None).llm_configured


@pytest.mark.parametrize("env, named", [
    ({"GRAPHMEM_API_PORT": "99999"}, "GRAPHMEM_API_PORT='99999': Input should be less than or equal to 65535"),
    ({"GRAPHMEM_LOCAL_NEO4J_PORT": "0"}, "GRAPHMEM_LOCAL_NEO4J_PORT='0': Input should be greater than or equal to 1"),
    ({"GRAPHMEM_EMBEDDER": "word2vec"}, "GRAPHMEM_EMBEDDER='word2vec': Input should be 'none', 'local' or 'openai'"),
    ({"GRAPHMEM_NEO4J_SOURCE": "apt"}, "GRAPHMEM_NEO4J_SOURCE='apt': Input should be 'maven' or 'dist'"),
    ({"NEO4J_URI": "localhost:7687"}, "NEO4J_URI='localhost:7687': Value error, expected <scheme>://host[:port]"),
    ({"NEO4J_URI": "http://localhost:7474"}, "NEO4J_URI='http://localhost:7474'"),
    ({"GRAPHMEM_MODEL_DIR": "~nosuchuser-graphmem/models"}, "GRAPHMEM_MODEL_DIR='~nosuchuser-graphmem/models': "
                                                            "Value error, cannot expand"),
    # limits of 0 or below (helper-found: taken, so a server started with GRAPHMEM_MAX_BODY_BYTES=0, "no limit" in
    # many tools, answered every body with a 413, "request bodies are limited to 0 bytes", and reported ready)
    ({"GRAPHMEM_MAX_BODY_BYTES": "0"}, "GRAPHMEM_MAX_BODY_BYTES='0': Input should be greater than or equal to 1"),
    ({"GRAPHMEM_MAX_EPISODE_CHARS": "-1"}, "GRAPHMEM_MAX_EPISODE_CHARS='-1': Input should be greater than or equal"),
    ({"GRAPHMEM_MAX_VALUE_CHARS": "0"}, "GRAPHMEM_MAX_VALUE_CHARS='0': Input should be greater than or equal to 1"),
])
def test_a_bad_value_is_refused_naming_its_variable(monkeypatch, env, named) -> None:
    assert named in _problem(monkeypatch, **env)


def test_every_bad_value_is_named_at_once(monkeypatch) -> None:
    problem = _problem(monkeypatch, GRAPHMEM_API_PORT="x", GRAPHMEM_LOCAL_MODEL="bge-large")
    assert problem.startswith("invalid settings: ") and "GRAPHMEM_API_PORT='x'" in problem
    assert ("GRAPHMEM_LOCAL_MODEL='bge-large': Input should be 'e5-small-v2', 'bge-small-en-v1.5' or "
            "'all-MiniLM-L6-v2'") in problem


@pytest.mark.parametrize("uri", ["bolt://127.0.0.1:7687", "neo4j+s://x.databases.neo4j.io", "bolt+ssc://h"])
def test_the_drivers_uri_schemes_are_accepted(uri) -> None:
    assert Settings(NEO4J_URI=uri).neo4j_uri == uri
