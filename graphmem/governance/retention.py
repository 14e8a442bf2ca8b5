"""Retention: TTLs by fact class (ontology defaults, per-tenant overrides), episode retention and session TTL
per tenant, and the `retain_until` stamps that make expired data disappear from every read at once.

Effective TTL of a fact (days after it was last asserted, `last_confirmed_at`):
the predicate's own `ttl_days`, else the tenant's override for its fact class, else the ontology's class default
(graphmem/data/ontology_crm.json `fact_classes`). An episode's `retain_until` is `ingested_at` + the tenant's
`episode_retention_days`; a session's is `last_active_at` + the tenant's `session_ttl_days` (the writes that move
`last_active_at` stamp it too). Anything a legal hold covers gets `retain_until = null` (a hold blocks expiry).
What is already past its `retain_until` keeps that stamp through every restamp: a longer retention set later does
not bring back what every read already treats as swept, and a hold placed after it keeps it from the sweep (which
skips held data) but no read shows it again.
"""
from __future__ import annotations

import json

from graphmem.errors import InvalidInput
from graphmem.governance import audit
from graphmem.governance.models import Days, RetentionSettings, RetentionView
from graphmem.graph import TemporalGraph
from graphmem.models import new_id
from graphmem.ontology import Ontology
from graphmem.store import Database, require_named_tenant, require_tenant
from graphmem.timeutil import utcnow


class Retention:
    """Per-tenant retention settings and the stamping of `retain_until` on facts and episodes."""

    def __init__(self, db: Database, graph: TemporalGraph):
        self.db, self.graph = db, graph

    # ---- settings ---------------------------------------------------------------------------
    def settings(self, tenant_id: str) -> RetentionView:
        """The tenant's settings (defaults when none were set) with the effective fact-class TTLs."""
        require_tenant(tenant_id)
        row = self.db.one("tenants/get_settings", tenant_id=tenant_id)
        stored = row["settings"] if row else {}
        view = RetentionView(
            tenant_id=tenant_id, version=stored.get("version", 0), updated_at=stored.get("updated_at"),
            episode_retention_days=stored.get("episode_retention_days"),
            session_ttl_days=stored.get("session_ttl_days"),
            fact_class_ttl_days=json.loads(stored.get("fact_class_ttl_json") or "{}"))
        view.effective_fact_class_ttl_days = self._class_ttls(self.graph.ontology(tenant_id), view)
        return view

    def update(self, tenant_id: str, new: RetentionSettings, *, actor: str | None = None) -> RetentionView:
        """Replace the tenant's settings and recompute `retain_until` of all its facts, episodes and sessions (what
        had already passed its `retain_until` keeps it: a longer retention revives nothing). The change is
        audited with the settings in one transaction (action `retention`, target the tenant, counts the days set:
        `episode_retention_days`, `session_ttl_days`, `fact_class_ttl_days.<class>`; `actor` the admin key id).

        Raises `InvalidInput` (field `fact_class_ttl_days.<class>`) for a fact class the tenant's ontology
        does not have, (field `tenant_id`) for a tenant id no key can have (`require_named_tenant`); nothing is
        stored then.
        """
        require_named_tenant(tenant_id)
        ontology = self.graph.ontology(tenant_id)
        classes = self._classes(ontology)
        for name in new.fact_class_ttl_days:
            if name not in classes:
                raise InvalidInput(f"fact_class_ttl_days.{name}: unknown fact class {name!r}; known: "
                                   f"{', '.join(sorted(classes))}", field=f"fact_class_ttl_days.{name}")
        now = utcnow()
        days = {k: v for k, v in (("episode_retention_days", new.episode_retention_days),
                                  ("session_ttl_days", new.session_ttl_days),
                                  *((f"fact_class_ttl_days.{c}", d) for c, d in new.fact_class_ttl_days.items()))
                if v is not None}

        def work(tx):
            tx.run("tenants/put_settings", tenant_id=tenant_id, id=new_id(), now=now,
                   episode_retention_days=new.episode_retention_days, session_ttl_days=new.session_ttl_days,
                   fact_class_ttl_json=json.dumps(new.fact_class_ttl_days, sort_keys=True))
            audit.write(tx, tenant_id, "retention", "tenant", tenant_id, days, now, actor)
        self.db.write(work)
        recomputed = self.recompute(tenant_id)
        view = self.settings(tenant_id)
        view.recomputed = recomputed
        return view

    # ---- stamping ---------------------------------------------------------------------------
    def recompute(self, tenant_id: str) -> dict[str, int]:
        """Recompute `retain_until` of every fact, episode and session of the tenant. Returns {"facts": n,
        "episodes": n, "sessions": n} (sessions: how many changed)."""
        view = self.settings(tenant_id)
        return {"facts": self._stamp_facts(tenant_id, view, only_stale=False),
                "episodes": self._stamp_episodes(tenant_id, view.episode_retention_days, only_missing=False),
                "sessions": self._stamp_sessions(tenant_id, view.session_ttl_days)}

    def stamp(self, tenant_id: str) -> dict[str, int]:
        """The sweeper's incremental pass: stamp episodes that have no `retain_until` yet, facts written or
        re-asserted since their last stamp (the store stamps new facts with the ontology default, which a tenant
        override may change) and sessions whose `retain_until` or hold flag is not what the settings and holds make
        it. Returns {"facts": n, "episodes": n, "sessions": n}."""
        view = self.settings(tenant_id)
        episodes = (self._stamp_episodes(tenant_id, view.episode_retention_days, only_missing=True)
                    if view.episode_retention_days else 0)
        return {"facts": self._stamp_facts(tenant_id, view, only_stale=True), "episodes": episodes,
                "sessions": self._stamp_sessions(tenant_id, view.session_ttl_days)}

    def sync_holds(self, tenant_id: str, *, stamp_sessions: bool = True) -> int:
        """Set episodes' `legal_hold` flags from the tenant's holds; when any flag changed, recompute retention
        (held data gets no `retain_until`, unless its stamp had already passed: it keeps it and stays hidden;
        released data gets it back); else restamp the sessions alone (a hold on
        a session or a user with no episodes changes no episode flag), unless `stamp_sessions` is false (the
        sweeper's `stamp` pass, which follows, restamps them). Returns how many episode flags changed."""
        require_tenant(tenant_id)
        changed = self.db.execute("governance/sync_hold_flags", tenant_id=tenant_id)
        if changed:
            self.recompute(tenant_id)
        elif stamp_sessions:
            self._stamp_sessions(tenant_id, self.settings(tenant_id).session_ttl_days)
        return len(changed)

    def _stamp_facts(self, tenant_id: str, view: RetentionView, *, only_stale: bool) -> int:
        ontology = self.graph.ontology(tenant_id)
        ttls = [{"predicate": p.name, "days": self.fact_ttl_days(ontology, view, p.name)} for p in ontology.predicates.values()]
        return self.db.execute("governance/stamp_fact_retention", tenant_id=tenant_id, ttls=ttls,
                               only_stale=only_stale, now=utcnow())[0]["stamped"]

    def _stamp_sessions(self, tenant_id: str, days: Days) -> int:
        return self.db.execute("governance/stamp_session_retention", tenant_id=tenant_id, days=days,
                               now=utcnow())[0]["stamped"]

    def _stamp_episodes(self, tenant_id: str, days: Days, *, only_missing: bool) -> int:
        return self.db.execute("governance/stamp_episode_retention", tenant_id=tenant_id, days=days,
                               only_missing=only_missing, now=utcnow())[0]["stamped"]

    # ---- TTL rules --------------------------------------------------------------------------
    @staticmethod
    def _classes(ontology: Ontology) -> set[str]:
        return set(ontology.class_ttl_days) | {p.fact_class for p in ontology.predicates.values()}

    def _class_ttls(self, ontology: Ontology, view: RetentionSettings) -> dict[str, Days]:
        return {c: (view.fact_class_ttl_days[c] if c in view.fact_class_ttl_days else ontology.class_ttl_days.get(c))
                for c in sorted(self._classes(ontology))}

    @staticmethod
    def fact_ttl_days(ontology: Ontology, view: RetentionSettings, predicate: str) -> Days:
        """Effective TTL in days of facts with `predicate`: the predicate's own `ttl_days`, else the tenant's
        override for its class, else the ontology's class default; None = no TTL."""
        p = ontology.predicates[predicate]
        if p.ttl_days:
            return p.ttl_days
        if p.fact_class in view.fact_class_ttl_days:
            return view.fact_class_ttl_days[p.fact_class]
        return ontology.class_ttl_days.get(p.fact_class)
