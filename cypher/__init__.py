"""Every Cypher statement graphmem runs, one named query per `.cypher` file, parameters only.

A query's name is its path below this folder without the suffix: `facts/create` is
`cypher/facts/create.cypher`. The first comment lines document the query; a query that touches tenant
data filters on `$tenant_id` (checked by `tests/test_cypher_tenancy.py`); the few that cannot say why in
a `// tenant-free:` line.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def query(name: str) -> str:
    """The text of the named query. Raises `KeyError` for an unknown name."""
    path = ROOT / f"{name}.cypher"
    if ".." in name or not path.is_file():
        raise KeyError(f"no Cypher query named {name!r}")
    return path.read_text()


def names(folder: str = "") -> list[str]:
    """All query names below `folder`, sorted (e.g. `names("schema")` gives the schema statements in order)."""
    base = ROOT / folder if folder else ROOT
    return sorted(p.relative_to(ROOT).with_suffix("").as_posix() for p in base.rglob("*.cypher"))
