"""Bulk JSONL import: resumes from its checkpoint after a crash, replays idempotently without one, names a bad
line, imports facts, and runs as the `ingest` command."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from graphmem.errors import InvalidInput
from graphmem.ingest.bulk import import_jsonl
from tests.ingest_fixture import ROOT


def write(path, n, bad_line=None):
    with path.open("w") as fh:
        for i in range(1, n + 1):
            if i == bad_line:
                fh.write('{"content": "no time"}\n')
                continue
            fh.write(json.dumps({"kind": "message", "content": f"note {i} about Dana",
                                 "occurred_at": f"2024-05-01T09:{i:02d}:00Z", "session_id": "bulk"}) + "\n")
    return path


class CrashAfter:
    """The real IngestService, but the process 'dies' (raises) on the n-th batch."""

    def __init__(self, ingest, n):
        self.ingest, self.n = ingest, n

    def append_episodes(self, *a, **kw):
        self.n -= 1
        if self.n == 0:
            raise KeyboardInterrupt("simulated crash")
        return self.ingest.append_episodes(*a, **kw)


def count(services, tenant):
    return len(services.graph.session_episodes(tenant, "bulk", 0, 1000))


def test_resume_after_crash_from_checkpoint(make_services, tenant, tmp_path):
    s = make_services()
    f = write(tmp_path / "eps.jsonl", 30)
    with pytest.raises(KeyboardInterrupt):
        import_jsonl(CrashAfter(s.ingest, 3), tenant, f, batch=10, progress=False)
    assert count(s, tenant) == 20
    assert json.loads((tmp_path / "eps.jsonl.checkpoint.json").read_text())["line"] == 20
    report = import_jsonl(s.ingest, tenant, f, batch=10, progress=False)
    assert (report.resumed_from_line, report.lines, report.created, report.replayed) == (20, 10, 10, 0)
    assert count(s, tenant) == 30 and report.done
    assert not (tmp_path / "eps.jsonl.checkpoint.json").exists()
    again = import_jsonl(s.ingest, tenant, f, batch=10, progress=False)       # no checkpoint: idempotent replay
    assert (again.created, again.replayed) == (0, 30) and count(s, tenant) == 30


def test_bad_line_is_named_and_its_batch_not_written(make_services, tenant, tmp_path):
    s = make_services()
    f = write(tmp_path / "bad.jsonl", 25, bad_line=17)
    with pytest.raises(InvalidInput) as err:
        import_jsonl(s.ingest, tenant, f, batch=10, progress=False)
    assert "line 17" in err.value.detail and "occurred_at" in err.value.detail
    assert count(s, tenant) == 10
    # a blank line's message is said in words, not as the pattern (which holds control characters)
    blank = tmp_path / "blank.jsonl"
    blank.write_text(json.dumps({"content": "\u200b\u2800", "occurred_at": "2024-01-01T00:00:00Z"}) + "\n")
    with pytest.raises(InvalidInput) as err:
        import_jsonl(s.ingest, tenant, blank, batch=10, progress=False)
    assert err.value.detail.startswith("line 1: content: must not be blank"), err.value.detail
    assert err.value.detail.isprintable(), err.value.detail


def test_a_line_not_in_utf8_is_named_and_its_batch_not_written(make_services, tenant, tmp_path):
    """A line that is not UTF-8 stops the import naming it, as a malformed line does (a UnicodeDecodeError's
    traceback came out of `graphmem ingest`, naming no line)."""
    s = make_services()
    f = write(tmp_path / "latin1.jsonl", 25)
    lines = f.read_bytes().splitlines(keepends=True)
    lines[12] = lines[12].replace(b"about Dana", b"about Ren\xe9e")     # latin-1, as a spreadsheet export writes it
    f.write_bytes(b"".join(lines))
    with pytest.raises(InvalidInput) as err:
        import_jsonl(s.ingest, tenant, f, batch=10, progress=False)
    assert err.value.detail.startswith("line 13: not UTF-8"), err.value.detail
    assert err.value.field == "line 13"
    assert count(s, tenant) == 10


def test_a_byte_order_mark_is_not_part_of_the_first_line(make_services, tenant, tmp_path):
    """A UTF-8 file that starts with a byte order mark (as Windows tools write it; RFC 8259 lets a parser ignore
    it) imports from its first line (it was 'line 1: not JSON (Unexpected UTF-8 BOM)')."""
    s = make_services()
    plain = write(tmp_path / "plain.jsonl", 5)
    f = tmp_path / "bom.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes().replace(b"\n", b"\r\n"))
    report = import_jsonl(s.ingest, tenant, f, batch=2, progress=False)
    assert (report.lines, report.created) == (5, 5) and count(s, tenant) == 5
    assert import_jsonl(s.ingest, tenant, plain, batch=2, progress=False).replayed == 5   # the same lines, keys


def test_fact_lines(make_services, tenant, tmp_path):
    s = make_services()
    from datetime import datetime, timezone
    from graphmem.models import EpisodeIn
    ep, _ = s.ingest.append_episodes(tenant, [EpisodeIn(content="import", occurred_at=datetime(2024, 1, 1,
                                                                                             tzinfo=timezone.utc))])[0]
    f = tmp_path / "facts.jsonl"
    f.write_text("\n".join(json.dumps({"subject": {"kind": "Person", "name": f"P{i}"}, "predicate": "HAS_TITLE",
                                       "value": "Engineer", "episode_id": ep.id}) for i in range(12)) + "\n")
    report = import_jsonl(s.ingest, tenant, f, kind="facts", batch=5, progress=False)
    assert report.facts == {"created": 12}
    assert import_jsonl(s.ingest, tenant, f, kind="facts", progress=False).facts == {"duplicate": 12}
    rows = [{"subject": {"kind": "Person", "name": "Q"}, "predicate": "HAS_TITLE", "value": "CTO",
             "episode_id": ep.id}] * 3
    rows[2] = {**rows[2], "predicate": "BOGUS_PRED"}   # well-formed, but not in the ontology: the core refuses it
    bad = tmp_path / "bad_facts.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(InvalidInput) as err:
        import_jsonl(s.ingest, tenant, bad, kind="facts", progress=False)
    assert err.value.field == "line 3.predicate" and "line 3" in err.value.detail, err.value.detail
    assert "facts[" not in err.value.detail


def test_ingest_command(settings, make_services, tenant, tmp_path):
    f = write(tmp_path / "cli.jsonl", 7)
    out = subprocess.run([sys.executable, "-m", "graphmem.ingest.cli", "ingest", str(f), "--tenant", tenant,
                          "--batch", "3"], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1])["created"] == 7
    assert count(make_services(), tenant) == 7
    missing = subprocess.run([sys.executable, "-m", "graphmem.ingest.cli", "ingest", str(f)], cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "--tenant" in missing.stderr


def test_a_batch_larger_than_a_transaction_names_the_bad_fact_by_its_place(make_services, tenant):
    """`Graph.assert_facts` writes a long batch in transactions of `bulk_batch_size`; an error names the fact by its
    place in the whole batch (it named its place in its transaction)."""
    from graphmem.errors import NotFound
    from graphmem.models import EntityRef, EpisodeIn, FactIn
    s = make_services(bulk_batch_size=2)
    ep, _ = s.graph.append_episode(tenant, EpisodeIn(content="roster", occurred_at="2024-05-01T09:00:00Z"),
                                   extraction_status="skipped", extraction_reason="explicit facts")
    facts = [FactIn(subject=EntityRef(kind="Person", name=f"P{i}"), predicate="HAS_TITLE", value="CFO",
                    episode_id=ep.id) for i in range(3)]
    facts.append(FactIn(subject=EntityRef(id="no-such-entity"), predicate="HAS_TITLE", value="CEO", episode_id=ep.id))
    with pytest.raises(NotFound) as err:
        s.graph.assert_facts(tenant, facts)
    assert err.value.field == "facts[3].subject.id"
