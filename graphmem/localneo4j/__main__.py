"""`python -m graphmem.localneo4j start|stop|status` (stand-in until `graphmem neo4j ...` exists)."""
from __future__ import annotations

import argparse
import json
import sys

from graphmem.localneo4j import LocalNeo4j, LocalNeo4jError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphmem.localneo4j", description=__doc__)
    parser.add_argument("command", choices=["start", "stop", "status"])
    parser.add_argument("--timeout", type=float, default=None, help="seconds to wait (start: 120, stop: 60)")
    args = parser.parse_args(argv)
    server = LocalNeo4j()
    try:
        if args.command == "start":
            print(server.start(args.timeout or 120.0))
        elif args.command == "stop":
            print("stopped" if server.stop(args.timeout or 60.0) else "not running")
        else:
            print(json.dumps(server.status(), indent=2))
    except LocalNeo4jError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
