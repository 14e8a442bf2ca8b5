"""Every Cypher file that touches tenant data filters on $tenant_id; the others say why they need not."""
from __future__ import annotations

import re

import cypher


def test_every_query_filters_on_tenant():
    names = cypher.names()
    assert len(names) > 30
    offenders = []
    for name in names:
        text = cypher.query(name)
        body = "\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))
        if "// tenant-free:" in text:
            assert not re.search(r"\$tenant_id", body), f"{name} says tenant-free but uses $tenant_id"
            continue
        if not re.search(r"tenant_id\s*[:=]\s*\$tenant_id", body):
            offenders.append(name)
    assert offenders == [], f"queries without a tenant filter: {offenders}"


def test_no_query_is_built_from_strings():
    """Queries are files with parameters; graphmem code never formats Cypher text."""
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[1]
    for py in list((root / "graphmem").rglob("*.py")) + list((root / "api").rglob("*.py")):
        src = py.read_text()
        assert not re.search(r"\.run\(\s*f[\"']", src), f"{py}: f-string passed to run()"
        assert "MATCH (" not in src or py.name.startswith("test_"), f"{py}: inline Cypher"
