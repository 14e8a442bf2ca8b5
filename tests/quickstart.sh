#!/usr/bin/env bash
# The README quick start from a fresh clone: git clone, `make demo`, check what the demo prints.
# Usage: tests/quickstart.sh [REPO]   (REPO defaults to this checkout; its committed HEAD is what gets cloned)
# Needs what the README needs (Python 3.11+, Java 17+, Maven, make). Uses a throwaway GRAPHMEM_HOME and a free port
# for the local Neo4j unless NEO4J_URI is set, and stops that Neo4j at the end. Slow (venv + install): minutes.
set -euo pipefail
REPO="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/graphmem-quickstart.XXXXXX")"
export GRAPHMEM_HOME="$WORK/home"
if [ -z "${NEO4J_URI:-}" ]; then
  export GRAPHMEM_LOCAL_NEO4J_PORT="${GRAPHMEM_LOCAL_NEO4J_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}"
fi
cleanup() {
  if [ -z "${NEO4J_URI:-}" ] && [ -x "$WORK/graphmem/.venv/bin/graphmem" ]; then
    (cd "$WORK/graphmem" && .venv/bin/graphmem neo4j stop) || true
  fi
  [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT

git clone --quiet "$REPO" "$WORK/graphmem"
cd "$WORK/graphmem"
make demo > "$WORK/demo.out" 2>&1 || { cat "$WORK/demo.out"; echo "quickstart: make demo failed" >&2; exit 1; }
cat "$WORK/demo.out"
for expect in "What we know about Dana Reyes now" "Dana's employment history" "Provenance of:" "Globex" "Hooli" \
              "Channel preferences:"; do
  grep -q "$expect" "$WORK/demo.out" || { echo "quickstart: demo output lacks: $expect" >&2; exit 1; }
done
echo "quickstart: OK"
