"""The `graphmem worker` and `graphmem ingest FILE` commands (registered in graphmem/cli.py).

Also runnable alone: `python -m graphmem.ingest.cli worker --tenant acme`.
"""
from __future__ import annotations

import json
import signal
import sys
import time

import click

from graphmem.cli import named_tenant


def _services():
    """The process's `Services`; a Neo4j that cannot be reached (or a graph of another schema) stops the command
    with one line, as `graphmem serve` does, not a traceback."""
    from graphmem.errors import GraphmemError
    from graphmem.services import Services
    from graphmem.settings import get_settings
    try:
        return Services.from_settings(get_settings())
    except GraphmemError as e:
        click.echo(f"error: {e.detail}", err=True)
        sys.exit(1)


@click.command()
@click.option("--tenant", "tenants", multiple=True, callback=named_tenant,
              help="Only process these tenants (repeatable); default: all.")
@click.option("--concurrency", default=1, show_default=True, help="Jobs processed in parallel (threads).")
@click.option("--batch", type=int, default=None, help="Jobs claimed per claim (default GRAPHMEM_WORKER_BATCH).")
@click.option("--lease-s", type=float, default=None, help="Claim lease in seconds (default GRAPHMEM_JOB_LEASE_S).")
@click.option("--poll-s", type=float, default=None, help="Idle poll interval in seconds.")
@click.option("--until-idle", is_flag=True, help="Exit when no job is left, printing a JSON summary.")
@click.option("--sweep/--no-sweep", default=True, show_default=True,
              help="Also run the retention sweeper every GRAPHMEM_SWEEP_INTERVAL_S seconds (not with --until-idle).")
def worker(tenants: tuple[str, ...], concurrency: int, batch: int | None, lease_s: float | None,
           poll_s: float | None, until_idle: bool, sweep: bool) -> None:
    """Run an extraction worker: claim pending jobs, extract facts, retry, dead-letter; and the retention sweeper.
    SIGTERM/Ctrl-C stop it gracefully (jobs it holds are released)."""
    from graphmem.errors import GraphmemError
    from graphmem.ingest.worker import Worker
    services = _services()
    try:
        services.embedder  # a configured embedder that cannot load stops the worker here, with its message
    except GraphmemError as e:
        services.close()
        click.echo(f"error: {e.detail}", err=True)   # the same form as every other graphmem command
        sys.exit(1)
    stop_sweeper = None
    w = Worker(services, tenants=list(tenants) or None, concurrency=concurrency, batch=batch, lease_s=lease_s,
               poll_s=poll_s)
    click.echo(f"worker {w.worker_id} started" + (f" for tenants {', '.join(tenants)}" if tenants else ""), err=True)
    try:
        if until_idle:
            w.run(until_idle=True)
            click.echo(json.dumps({"worker_id": w.worker_id, "processed": w.processed,
                                   "jobs": [{"episode_id": e, "status": s} for e, s in w.history]}))
        else:
            signal.signal(signal.SIGTERM, lambda signum, frame: w.request_stop())
            signal.signal(signal.SIGINT, lambda signum, frame: w.request_stop())
            w.start()
            if sweep:
                stop_sweeper = services.governance.sweeper.start()
            while not w.stopping:
                time.sleep(0.2)
            if stop_sweeper:
                stop_sweeper()
            released = w.stop()
            click.echo(f"worker {w.worker_id} stopped; {w.processed} jobs processed, {released} released", err=True)
    finally:
        services.close()


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--tenant", required=True, callback=named_tenant,
              help="Tenant to import into (required: never defaulted).")
@click.option("--kind", type=click.Choice(["episodes", "facts"]), default="episodes", show_default=True,
              help="What each line is: an episode (EpisodeIn) or a fact (FactIn with episode_id).")
@click.option("--batch", default=500, show_default=True, help="Lines per write batch.")
@click.option("--checkpoint", type=click.Path(dir_okay=False), default=None,
              help="Checkpoint file (default FILE.checkpoint.json); a re-run resumes from it.")
@click.option("--no-progress", is_flag=True, help="Do not draw the progress bar.")
def ingest(file: str, tenant: str, kind: str, batch: int, checkpoint: str | None, no_progress: bool) -> None:
    """Import a JSONL file of episodes or facts, resuming where a previous run stopped. Prints a JSON report."""
    from graphmem.errors import GraphmemError
    from graphmem.ingest.bulk import import_jsonl, report_dict
    services = _services()
    try:
        report = import_jsonl(services.ingest, tenant, file, kind=kind, batch=batch, checkpoint=checkpoint,
                              progress=not no_progress)
        click.echo(json.dumps(report_dict(report)))
    except GraphmemError as exc:
        click.echo(f"error: {exc.detail}", err=True)
        sys.exit(1)
    finally:
        services.close()


main = click.Group("graphmem-ingest", commands={"worker": worker, "ingest": ingest},
                   help="Ingestion commands (also available as `graphmem worker` / `graphmem ingest`).")

if __name__ == "__main__":
    main()
