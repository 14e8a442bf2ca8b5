"""Bulk import of JSONL files (one `EpisodeIn` or one `FactIn` per line) that resumes where it stopped.

Lines are UTF-8 (a byte order mark at the start is ignored) and read in batches of `batch` lines; a batch is
parsed and validated whole before anything of it is written (a bad line stops the import with its line number and
writes nothing of its batch). After each written batch the checkpoint file (`<file>.checkpoint.json` by default: byte offset, line number, the file's size and a sha256 of its
first 64 KiB) is replaced atomically; a re-run with the same file continues after the last checkpoint. Episodes
without an `idempotency_key` get `bulk:<sha256(line)[:24]>:<line number>`, so a batch written just before a crash
(whose checkpoint was not saved) is replayed idempotently. Facts re-asserted after a crash are duplicates to the core
(provenance is merged, no new fact). Progress is shown with rich (bytes read, lines, rate).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from graphmem import strict_json
from graphmem.errors import GraphmemError, InvalidInput
from graphmem.models import EpisodeIn, FactIn, error_message


@dataclass
class BulkReport:
    """What an import did: lines read in this run, episodes created or replayed, fact outcomes by action."""

    file: str
    kind: str
    lines: int = 0
    resumed_from_line: int = 0
    created: int = 0
    replayed: int = 0
    facts: dict[str, int] = field(default_factory=dict)
    done: bool = False


def _identity(path: Path) -> dict:
    with path.open("rb") as fh:
        head = hashlib.sha256(fh.read(65536)).hexdigest()
    return {"file": str(path.resolve()), "head_sha256": head}


def _batches(path: Path, offset: int, line_no: int, batch: int) -> Iterator[tuple[list[tuple[int, str]], int]]:
    with path.open("rb") as fh:
        fh.seek(offset)
        lines: list[tuple[int, str]] = []
        pos = offset
        for raw in fh:
            pos += len(raw)
            line_no += 1
            if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):   # a byte order mark (RFC 8259 lets it be ignored)
                raw = raw[3:]
            try:
                text = raw.decode("utf-8").strip()
            except UnicodeDecodeError as exc:
                raise InvalidInput(f"line {line_no}: not UTF-8 (byte 0x{raw[exc.start]:02x} at character "
                                   f"{exc.start})", field=f"line {line_no}") from None
            if text:
                lines.append((line_no, text))
            if len(lines) >= batch:
                yield lines, pos
                lines = []
        if lines:
            yield lines, pos


def _parse(kind: str, line_no: int, text: str):
    try:
        data = strict_json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"line {line_no}: not JSON ({exc.msg})", field=f"line {line_no}") from exc
    try:
        if kind == "episodes":
            ep = EpisodeIn.model_validate(data)
            if not ep.idempotency_key:
                ep.idempotency_key = f"bulk:{hashlib.sha256(text.encode()).hexdigest()[:24]}:{line_no}"
            return ep
        return FactIn.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        loc = ".".join(str(p) for p in e["loc"])
        raise InvalidInput(f"line {line_no}: {loc}: {error_message(e)}", field=f"line {line_no}.{loc}") from exc


_ITEM = re.compile(r"^(?:episodes|facts)\[(\d+)\]\.?")


@contextmanager
def _at_line(lines: list[tuple[int, str]]) -> Iterator[None]:
    """Re-raise a graphmem error that names a batch item (`facts[3].predicate`) as the file line it came from
    (`line 42.predicate`), as a malformed line is named."""
    try:
        yield
    except GraphmemError as exc:
        m = _ITEM.match(exc.field or "")
        if m is None or int(m.group(1)) >= len(lines):
            raise
        n, rest = lines[int(m.group(1))][0], exc.field[m.end():]
        field = f"line {n}.{rest}" if rest else f"line {n}"
        detail = exc.detail.replace(m.group(0).rstrip("."), f"line {n}")   # facts[2].subject -> line 4.subject
        raise type(exc)(detail if f"line {n}" in detail else f"{field}: {detail}", field=field) from None


def import_jsonl(ingest, tenant_id: str, path: str | Path, *, kind: Literal["episodes", "facts"] = "episodes",
                 batch: int = 500, checkpoint: str | Path | None = None, progress: bool = True,
                 agent_id: str | None = None) -> BulkReport:
    """Import `path` into `tenant_id` through `ingest` (an `IngestService`: write policy, idempotency, refusals).

    Raises `InvalidInput` naming the line for a malformed line, and the graphmem error that refused a batch
    (an unknown predicate or episode) naming the line it came from, `line N.<field>` (earlier batches stay written
    and checkpointed),
    `TenantRequired`. The checkpoint is removed when the file is fully imported.
    """
    from graphmem.store import require_tenant
    require_tenant(tenant_id)
    path = Path(path)
    ckpt = Path(checkpoint) if checkpoint else path.with_name(path.name + ".checkpoint.json")
    ident = _identity(path)
    offset = line_no = 0
    if ckpt.exists():
        saved = json.loads(ckpt.read_text())
        if {k: saved.get(k) for k in ident} == ident and saved.get("kind") == kind and saved.get("tenant_id") == tenant_id:
            offset, line_no = saved["offset"], saved["line"]
    report = BulkReport(file=str(path), kind=kind, resumed_from_line=line_no)
    size = path.stat().st_size

    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                   TextColumn("{task.fields[lines]} lines"), TimeRemainingColumn(), disable=not progress)
    with bar:
        task = bar.add_task(f"{kind} {path.name}", total=size, completed=offset, lines=line_no)
        for lines, pos in _batches(path, offset, line_no, batch):
            items = [_parse(kind, n, t) for n, t in lines]
            with _at_line(lines):
                if kind == "episodes":
                    for _, created in ingest.append_episodes(tenant_id, items, agent_id=agent_id):
                        if created:
                            report.created += 1
                        else:
                            report.replayed += 1
                else:
                    for o in ingest.assert_facts(tenant_id, items):
                        report.facts[o.action] = report.facts.get(o.action, 0) + 1
            line_no = lines[-1][0]
            report.lines += len(lines)
            tmp = ckpt.with_name(ckpt.name + ".tmp")
            tmp.write_text(json.dumps({**ident, "kind": kind, "tenant_id": tenant_id, "offset": pos, "line": line_no,
                                       "size": size}))
            os.replace(tmp, ckpt)
            bar.update(task, completed=pos, lines=line_no)
    ckpt.unlink(missing_ok=True)
    report.done = True
    return report


def report_dict(r: BulkReport) -> dict:
    return asdict(r)
