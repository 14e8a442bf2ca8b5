// Hybrid search for the target kinds in $targets ("entity", "fact", "episode"): every retriever's ranked list, and
// the full records of the likely winners (see "Prefetch" below). Each kind has up to three retrievers, each ranked
// within itself:
//   full-text (Lucene BM25 over fact_text / episode_text / entity_text; $opt.lucene is the whole Lucene query over the
//     tenant's prefixed terms, graphmem.store.fulltext.tenant_query, so it matches this tenant's nodes only),
//   vector (cosine, exact over the tenant's own nodes: the shared vector index cannot filter by tenant; Neo4j's
//     similarity is (1 + cos) / 2, and only nodes at or above $opt.min_similarity count),
//   graph proximity to the seed entities ($seed_ids): facts touching a seed (1.0) or else one entity further (0.5,
//     once however many facts lead there), summed over the seeds, every one of them, so the filters below choose
//     among all (a cut in no particular order missed the one fact a filter asked for among a hub's many);
//     episodes that mention a seed (1.0; a mention graphmem recorded by $known_at) or else are provenance of a
//     seed's facts (0.5; provenance recorded by $known_at), summed over the seeds, every one of them;
//     entities one fact away. The walk from a seed to an entity one fact away (entities, and facts one entity
//     further) takes only facts that paths walk (cypher/recall/around): valid at $as_of as known at $known_at,
//     never candidates, never past retention, whatever $include_superseded says (it widens which facts are
//     returned, not the graph walked);
//     an episode is provenance of a seed's fact recorded by $known_at, whatever its valid time (the episode said it).
// Candidates ($fetch per retriever) are filtered BEFORE each retriever keeps its top $limit (a flag `ok`, not a
// WHERE, so that a list the filters emptied still says how many candidates it read: `starved` below):
//   facts: tenant, valid at $as_of (unless $include_superseded) as known at $known_at, never candidates, never past
//     retention ($now), optional predicates, entity kinds, and scope through provenance ($scoped: session, user,
//     occurred_at range; the episodes still inside retention that asserted or confirmed the fact, not one that only
//     retracted or corrected it, as for the viewer below);
//   episodes: tenant, retention, transaction time ($known_at vs ingested_at), valid time (nothing that occurred
//     after $opt.episodes_until: the request's as_of when it gave one; without one every stored episode counts,
//     so a client whose clock runs ahead still finds the turn it just stored),
//     entity kinds (an episode that MENTIONS an entity of one of them, as recorded by $known_at) and the scope
//     filters; never the record of an API write (`searchable: false`, graphmem.store.episodes.append);
//   entities: tenant, entity kinds, created by $known_at, and the scope filters ($scoped: mentioned by an episode
//     in scope and still retained, or the subject or object of a fact that such an episode asserted or confirmed
//     and that a search could return at some valid time: never a candidate, past its retention or expired by a
//     correction as of $known_at; a retracted or superseded fact counts, as it shows with $include_superseded.
//     This matters for the record of an API write, which mentions nothing (cypher/facts/create_batch); any other
//     episode mentions the entities of its facts, whatever becomes of them);
//   and, with a $viewer (a context window: {session_id, user_id, consent_classes, sensitive_classes, shown}, or null
//     for none; graphmem.recall.models.Viewer), what that session may see and does not already show. The viewer's
//     user is the session's, else $viewer.user_id; `shared` is that user's consent flag, else the tenant's
//     (:Consent). An episode is VISIBLE when it is of the viewer's session, or of no session and of no user or the
//     viewer's user. Episodes: visible ones only, and none whose id is in $viewer.shown (the window's recent turns),
//     replies too. Facts: all, except that one of a consent class needs a provenance episode that is visible or,
//     with `shared`, of the viewer's user, and one of a sensitive class a visible one (never through consent).
//     When the session's user is not $viewer.user_id nothing is returned (`blind`).
// With $scoped, a fact's provenance lists only its episodes in scope (another user's are not shown); with a
// $viewer only those through which the fact may enter (as above; for any class of fact).
// `withheld_consent` / `withheld_sensitive`: how many facts the viewer filter took out that ranked within a
// retriever's top $k among the candidates before it (0 without a viewer).
// `starved`: the retrievers ('fulltext', 'vector', once per kind) that read $fetch candidates, so that more may
// match further down, and kept fewer than $limit after the filters: graphmem.recall.search reads again deeper.
// Retention of an episode is its own retain_until and its session's (a session idle past the tenant's session
// TTL: its Session.retain_until, found by the (tenant_id, id) constraint): wherever an episode's retain_until is
// checked, its session's is too.
// One row: entity_hits, fact_hits, episode_hits, each a list of {reasons [{retriever, rank, score}], id, text (what
// MMR compares: a fact's statement, an episode's speaker-prefixed content, an entity's name and aliases)}; an
// episode hit also has `reply` ({id, text} or null): when it asks something (its content has a '?'), the next
// episode of its session (NEXT) that is not a tool's or the system's (source 'system', which an episode takes from
// its role: graphmem.models.ROLE_SOURCES), past up to three that are, if it is another party's and passes the same
// filters. Another party: another speaker (case aside) when both name one, else another source by role (a user's
// turns are user_explicit whether their role says user or human, an assistant's inferred). Then facts, episodes and
// entities: the records read in full, in no particular order - facts as {fact (the `Fact` model's fields),
// provenance [{episode_id, occurred_at, session_id, user_id, role}] (its episodes recorded by $known_at as saying,
// confirming, retracting or correcting it, still inside retention at $now)},
// episodes and entities as their models' fields (not the job bookkeeping). Temporal values come back as ISO-8601
// strings (toString): the Python driver hydrates a DateTime in ~50-100 µs, pydantic parses the string in ~1 µs.
// Cost notes: one query and one row, not one query per kind and one Bolt record per hit (each query costs the
// Python driver and the server a round trip; each record ~30 µs in the driver). Times ($now, $as_of, $known_at,
// $opt.occurred_after, $opt.occurred_before) arrive as ISO-8601 strings (or null), parsed once into the map `t`: the
// driver packs a datetime parameter in ~40 µs.
// $opt holds every option a request may leave out, null when left out: lucene (null when the query has no
// searchable word), vector (null without an embedder), predicates, entity_kinds, session_id, user_id,
// occurred_after, occurred_before, episodes_until; they are copied into `t`. Neo4j plans once per parameter types and a null is a
// type of its own, while a map is a map whatever it holds: as separate parameters each new mix of filters was
// planned anew (1.5-1.7 s).
// The viewer is resolved here, in the same read: one round trip for a window's search.
WITH {now: datetime($now), as_of: datetime($as_of), known_at: datetime($known_at),
      occurred_after: datetime($opt.occurred_after), occurred_before: datetime($opt.occurred_before),
      episodes_until: datetime($opt.episodes_until),
      session_id: $opt.session_id, user_id: $opt.user_id, predicates: $opt.predicates,
      entity_kinds: $opt.entity_kinds, lucene: $opt.lucene, vector: $opt.vector,
      min_similarity: coalesce($opt.min_similarity, 0.0)} AS t
OPTIONAL CALL () {
  WITH $viewer AS v WHERE v IS NOT NULL
  OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: v.session_id})
  WITH v, s, coalesce(s.user_id, v.user_id) AS user_id
  OPTIONAL MATCH (c:Consent {tenant_id: $tenant_id})
  WHERE user_id IS NOT NULL AND c.subject IN ['*', 'user:' + user_id]
  WITH v, s, user_id, collect(c) AS consents
  RETURN {session_id: v.session_id, user_id: user_id,
          blind: s.user_id IS NOT NULL AND v.user_id IS NOT NULL AND s.user_id <> v.user_id,
          shared: user_id IS NOT NULL AND coalesce([c IN consents WHERE c.subject <> '*' | c.share_preferences][0],
                                                   [c IN consents WHERE c.subject = '*' | c.share_preferences][0], false),
          consent_classes: v.consent_classes, sensitive_classes: v.sensitive_classes,
          shown: coalesce(v.shown, [])} AS viewer
}
WITH t {.*, viewer: viewer} AS t
CALL (t) {
  WITH t WHERE 'entity' IN $targets
  CALL (t) {
    WITH t.lucene AS q WHERE q IS NOT NULL
    CALL db.index.fulltext.queryNodes('entity_text', q, {limit: $fetch}) YIELD node, score
    WITH collect({node: node, score: score}) AS found
    UNWIND found AS x
    RETURN 'fulltext' AS retriever, x.node AS n, x.score AS score, size(found) AS fetched
    UNION ALL
    WITH t.vector AS v, t.min_similarity AS min_sim WHERE v IS NOT NULL
    MATCH (node:Entity {tenant_id: $tenant_id}) WHERE node.embedding IS NOT NULL
    WITH node, vector.similarity.cosine(node.embedding, v) AS score WHERE score >= min_sim
    WITH node, score ORDER BY score DESC LIMIT $fetch
    WITH collect({node: node, score: score}) AS found
    UNWIND found AS x
    RETURN 'vector' AS retriever, x.node AS n, x.score AS score, size(found) AS fetched
    UNION ALL
    UNWIND $seed_ids AS seed_id
    MATCH (s:Entity {id: seed_id})<-[:SUBJECT|OBJECT]-(f:Fact)-[:SUBJECT|OBJECT]->(n:Entity)
    WHERE s.tenant_id = $tenant_id AND n <> s
      AND f.tenant_id = $tenant_id AND f.status <> 'candidate'
      AND f.recorded_at <= t.known_at AND (f.expired_at IS NULL OR f.expired_at > t.known_at)
      AND f.valid_from <= t.as_of AND (f.valid_to IS NULL OR f.valid_to > t.as_of OR f.closed_at > t.known_at
             OR (f.reclosed_at > t.known_at AND f.prior_valid_to > t.as_of))
      AND (f.retain_until IS NULL OR f.retain_until > t.now)
    RETURN 'graph' AS retriever, n, 1.0 AS score, 0 AS fetched
  }
  WITH t, retriever, n, sum(score) AS score, max(fetched) AS fetched
  WITH retriever, n, score, fetched,
       n.tenant_id = $tenant_id AND n.created_at <= t.known_at AND (t.entity_kinds IS NULL OR n.kind IN t.entity_kinds)
    AND (NOT $scoped OR EXISTS {
          MATCH (n)<-[m:MENTIONS]-(e:Episode)
          WHERE e.tenant_id = $tenant_id AND m.recorded_at <= t.known_at
            AND (e.retain_until IS NULL OR e.retain_until > t.now)
            AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= t.now }
            AND (t.session_id IS NULL OR e.session_id = t.session_id) AND (t.user_id IS NULL OR e.user_id = t.user_id)
            AND (t.occurred_after IS NULL OR e.occurred_at >= t.occurred_after)
            AND (t.occurred_before IS NULL OR e.occurred_at < t.occurred_before) }
        OR EXISTS {
          MATCH (n)<-[:SUBJECT|OBJECT]-(f:Fact)-[d:DERIVED_FROM]->(e:Episode)
          WHERE f.tenant_id = $tenant_id AND f.status <> 'candidate' AND f.recorded_at <= t.known_at
            AND (f.expired_at IS NULL OR f.expired_at > t.known_at) AND (f.retain_until IS NULL OR f.retain_until > t.now)
            AND e.tenant_id = $tenant_id AND d.recorded_at <= t.known_at AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation']
            AND (e.retain_until IS NULL OR e.retain_until > t.now)
            AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= t.now }
            AND (t.session_id IS NULL OR e.session_id = t.session_id) AND (t.user_id IS NULL OR e.user_id = t.user_id)
            AND (t.occurred_after IS NULL OR e.occurred_at >= t.occurred_after)
            AND (t.occurred_before IS NULL OR e.occurred_at < t.occurred_before) }) AS ok
  ORDER BY score DESC, n.updated_at DESC
  WITH retriever, max(fetched) AS fetched, [x IN collect({n: n, score: score, ok: ok}) WHERE x.ok][..$limit] AS top
  WITH collect(CASE WHEN fetched >= $fetch AND size(top) < $limit THEN retriever END) AS starved,
       collect({retriever: retriever, top: top}) AS lists
  CALL (lists) {
    UNWIND lists AS l
    UNWIND range(0, size(l.top) - 1) AS i
    WITH l.top[i].n AS n, collect({retriever: l.retriever, rank: i + 1, score: l.top[i].score}) AS reasons
    RETURN collect({reasons: reasons, id: n.id,
                    text: n.name + CASE WHEN size(coalesce(n.aliases, [])) = 0 THEN ''
                                        ELSE ' (' + reduce(a = '', x IN n.aliases | a + CASE WHEN a = '' THEN '' ELSE ', ' END + x)
                                             + ')' END}) AS entity_hits
  }
  RETURN entity_hits, starved AS entity_starved
}
CALL (t) {
  WITH t WHERE 'fact' IN $targets AND NOT coalesce(t.viewer.blind, false)
  CALL (t) {
    WITH t.lucene AS q WHERE q IS NOT NULL
    CALL db.index.fulltext.queryNodes('fact_text', q, {limit: $fetch}) YIELD node, score
    WITH collect({node: node, score: score}) AS found
    UNWIND found AS x
    RETURN 'fulltext' AS retriever, x.node AS f, x.score AS score, size(found) AS fetched
    UNION ALL
    WITH t.vector AS v, t.min_similarity AS min_sim WHERE v IS NOT NULL
    MATCH (node:Fact {tenant_id: $tenant_id}) WHERE node.embedding IS NOT NULL
    WITH node, vector.similarity.cosine(node.embedding, v) AS score WHERE score >= min_sim
    WITH node, score ORDER BY score DESC LIMIT $fetch
    WITH collect({node: node, score: score}) AS found
    UNWIND found AS x
    RETURN 'vector' AS retriever, x.node AS f, x.score AS score, size(found) AS fetched
    UNION ALL
    UNWIND $seed_ids AS seed_id
    MATCH (s:Entity {id: seed_id})<-[:SUBJECT|OBJECT]-(f:Fact)
    WHERE s.tenant_id = $tenant_id
    RETURN 'graph' AS retriever, f, 1.0 AS score, 0 AS fetched
    UNION ALL
    UNWIND $seed_ids AS seed_id
    MATCH (s:Entity {id: seed_id})<-[:SUBJECT|OBJECT]-(m:Fact)-[:SUBJECT|OBJECT]->(n:Entity)
    WHERE s.tenant_id = $tenant_id AND n <> s
      AND m.tenant_id = $tenant_id AND m.status <> 'candidate'
      AND m.recorded_at <= t.known_at AND (m.expired_at IS NULL OR m.expired_at > t.known_at)
      AND m.valid_from <= t.as_of AND (m.valid_to IS NULL OR m.valid_to > t.as_of OR m.closed_at > t.known_at
             OR (m.reclosed_at > t.known_at AND m.prior_valid_to > t.as_of))
      AND (m.retain_until IS NULL OR m.retain_until > t.now)
    // each entity one fact from the seeds is expanded once, with the seeds that reach it (100 seeds at one
    // organisation of 3,000 people expanded its 3,000 facts 100 times: 1.1 s; now once)
    WITH n, collect(DISTINCT seed_id) AS via
    MATCH (n)<-[:SUBJECT|OBJECT]-(f:Fact)
    WITH f, collect(via) AS vias                     // a fact touches one or two such entities
    WITH f, CASE size(vias) WHEN 1 THEN vias[0]      // once per seed, however many facts lead to it
            ELSE reduce(acc = [], x IN vias[0] + vias[1] | CASE WHEN x IN acc THEN acc ELSE acc + x END) END AS seeds
    // less the seeds the fact touches: those score it 1.0 above, not also 0.5
    WITH f, size(seeds) - size(reduce(acc = [], x IN [(f)-[:SUBJECT|OBJECT]->(e:Entity) WHERE e.id IN seeds | e.id] |
                                      CASE WHEN x IN acc THEN acc ELSE acc + x END)) AS reach
    WHERE reach > 0
    RETURN 'graph' AS retriever, f, 0.5 * reach AS score, 0 AS fetched
  }
  WITH t, retriever, f, sum(score) AS score, max(fetched) AS fetched
  WITH t, retriever, f, score, fetched,
    f.tenant_id = $tenant_id
    AND f.status <> 'candidate'
    AND (f.retain_until IS NULL OR f.retain_until > t.now)
    AND (t.predicates IS NULL OR f.predicate IN t.predicates)
    AND f.recorded_at <= t.known_at
    AND (f.expired_at IS NULL OR f.expired_at > t.known_at)
    AND ($include_superseded OR (f.valid_from <= t.as_of
         AND (f.valid_to IS NULL OR f.valid_to > t.as_of OR f.closed_at > t.known_at
             OR (f.reclosed_at > t.known_at AND f.prior_valid_to > t.as_of))))
    AND (t.entity_kinds IS NULL OR EXISTS { MATCH (f)-[:SUBJECT|OBJECT]->(x:Entity) WHERE x.kind IN t.entity_kinds })
    AND (NOT $scoped OR EXISTS {
          MATCH (f)-[d:DERIVED_FROM]->(e:Episode)
          WHERE e.tenant_id = $tenant_id AND d.recorded_at <= t.known_at
            AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation']
            AND (e.retain_until IS NULL OR e.retain_until > t.now)
            AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= t.now }
            AND (t.session_id IS NULL OR e.session_id = t.session_id) AND (t.user_id IS NULL OR e.user_id = t.user_id)
            AND (t.occurred_after IS NULL OR e.occurred_at >= t.occurred_after)
            AND (t.occurred_before IS NULL OR e.occurred_at < t.occurred_before) }) AS ok
  // the viewer filter (a CASE, so the provenance is read only for facts of a withheld class)
  WITH retriever, f, score, fetched, ok,
       CASE WHEN NOT ok THEN false
            WHEN t.viewer IS NULL OR NOT f.fact_class IN t.viewer.consent_classes + t.viewer.sensitive_classes
            THEN true
            ELSE EXISTS {
              MATCH (f)-[d:DERIVED_FROM]->(e:Episode)
              WHERE e.tenant_id = $tenant_id AND (e.retain_until IS NULL OR e.retain_until > t.now)
                AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= t.now }
                AND d.recorded_at <= t.known_at AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation']
                AND (e.session_id = t.viewer.session_id                                          // visible
                     OR (e.session_id IS NULL AND (e.user_id IS NULL OR e.user_id = t.viewer.user_id))
                     OR (f.fact_class IN t.viewer.consent_classes AND t.viewer.shared
                         AND e.user_id = t.viewer.user_id)) } END AS allowed
  ORDER BY score DESC, f.valid_from DESC
  WITH retriever, max(fetched) AS fetched, [x IN collect({f: f, score: score, ok: ok, allowed: allowed}) WHERE x.ok] AS ranked
  WITH retriever, fetched, ranked, [x IN ranked WHERE x.allowed][..$limit] AS top
  WITH collect(CASE WHEN fetched >= $fetch AND size(top) < $limit THEN retriever END) AS starved,
       collect({retriever: retriever, top: top, held: [x IN ranked[..$k] WHERE NOT x.allowed | x.f]}) AS lists
  CALL (lists) {
    UNWIND lists AS l
    UNWIND range(0, size(l.top) - 1) AS i
    WITH l.top[i].f AS f, collect({retriever: l.retriever, rank: i + 1, score: l.top[i].score}) AS reasons
    RETURN collect({reasons: reasons, id: f.id,
                    text: f.statement}) AS fact_hits
  }
  WITH fact_hits, starved, reduce(acc = [], l IN lists | acc + [h IN l.held WHERE NOT h IN acc]) AS held
  RETURN fact_hits, starved AS fact_starved,
         size([h IN held WHERE h.fact_class IN $viewer.consent_classes]) AS withheld_consent,
         size([h IN held WHERE h.fact_class IN $viewer.sensitive_classes]) AS withheld_sensitive
}
CALL (t) {
  WITH t WHERE 'episode' IN $targets AND NOT coalesce(t.viewer.blind, false)
  CALL (t) {
    WITH t.lucene AS q WHERE q IS NOT NULL
    CALL db.index.fulltext.queryNodes('episode_text', q, {limit: $fetch}) YIELD node, score
    WITH collect({node: node, score: score}) AS found
    UNWIND found AS x
    RETURN 'fulltext' AS retriever, x.node AS e, x.score AS score, size(found) AS fetched
    UNION ALL
    WITH t.vector AS v, t.min_similarity AS min_sim WHERE v IS NOT NULL
    MATCH (node:Episode {tenant_id: $tenant_id}) WHERE node.embedding IS NOT NULL AND node.searchable IS NULL
    WITH node, vector.similarity.cosine(node.embedding, v) AS score WHERE score >= min_sim
    WITH node, score ORDER BY score DESC LIMIT $fetch
    WITH collect({node: node, score: score}) AS found
    UNWIND found AS x
    RETURN 'vector' AS retriever, x.node AS e, x.score AS score, size(found) AS fetched
    UNION ALL
    UNWIND $seed_ids AS seed_id
    MATCH (s:Entity {id: seed_id})<-[m:MENTIONS]-(e:Episode)
    WHERE s.tenant_id = $tenant_id AND m.recorded_at <= t.known_at
    RETURN 'graph' AS retriever, e, 1.0 AS score, 0 AS fetched
    UNION ALL
    UNWIND $seed_ids AS seed_id
    MATCH (s:Entity {id: seed_id})<-[:SUBJECT|OBJECT]-(f:Fact)-[d:DERIVED_FROM]->(e:Episode)
    WHERE s.tenant_id = $tenant_id AND f.tenant_id = $tenant_id AND f.status <> 'candidate'
      AND d.recorded_at <= t.known_at AND (f.retain_until IS NULL OR f.retain_until > t.now)
      AND NOT EXISTS { MATCH (e)-[m:MENTIONS]->(s) WHERE m.recorded_at <= t.known_at }   // 1.0 above
    WITH DISTINCT seed_id, e
    RETURN 'graph' AS retriever, e, 0.5 AS score, 0 AS fetched
  }
  WITH t, retriever, e, sum(score) AS score, max(fetched) AS fetched
  WITH t, retriever, e, score, fetched,
    e.tenant_id = $tenant_id AND e.searchable IS NULL
    AND (e.retain_until IS NULL OR e.retain_until > t.now)
    AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= t.now }
    AND e.ingested_at <= t.known_at
    AND (t.episodes_until IS NULL OR e.occurred_at <= t.episodes_until)
    AND (t.session_id IS NULL OR e.session_id = t.session_id)
    AND (t.user_id IS NULL OR e.user_id = t.user_id)
    AND (t.occurred_after IS NULL OR e.occurred_at >= t.occurred_after)
    AND (t.occurred_before IS NULL OR e.occurred_at < t.occurred_before)
    AND (t.entity_kinds IS NULL OR EXISTS { MATCH (e)-[m:MENTIONS]->(x:Entity)
                                           WHERE x.kind IN t.entity_kinds AND m.recorded_at <= t.known_at })
    AND (t.viewer IS NULL OR ((e.session_id = t.viewer.session_id                                 // visible
         OR (e.session_id IS NULL AND (e.user_id IS NULL OR e.user_id = t.viewer.user_id)))
         AND NOT e.id IN t.viewer.shown)) AS ok                                  // not already in the window
  ORDER BY score DESC, e.occurred_at DESC
  WITH t, retriever, max(fetched) AS fetched, [x IN collect({e: e, score: score, ok: ok}) WHERE x.ok][..$limit] AS top
  WITH head(collect(t)) AS te, collect(CASE WHEN fetched >= $fetch AND size(top) < $limit THEN retriever END) AS starved,
       collect({retriever: retriever, top: top}) AS lists
  CALL (te, lists) {
    UNWIND lists AS l
    UNWIND range(0, size(l.top) - 1) AS i
    WITH te, l.top[i].e AS e, collect({retriever: l.retriever, rank: i + 1, score: l.top[i].score}) AS reasons
    WITH e, reasons, [p = (e)-[:NEXT*1..4]->(r:Episode)
                      WHERE e.content CONTAINS '?' AND coalesce(r.source, '') <> 'system'
                        AND all(x IN nodes(p)[1..-1] WHERE x.source = 'system')   // past tool and system turns
                        AND CASE WHEN e.speaker IS NOT NULL AND r.speaker IS NOT NULL
                                 THEN toLower(e.speaker) <> toLower(r.speaker)
                                 ELSE coalesce(e.source, '') <> coalesce(r.source, '') END   // another party
                        AND r.tenant_id = $tenant_id
                        AND (r.retain_until IS NULL OR r.retain_until > te.now)
                        AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: r.session_id})
                                         WHERE ss.retain_until <= te.now }
                        AND r.ingested_at <= te.known_at
                        AND (te.episodes_until IS NULL OR r.occurred_at <= te.episodes_until)
                        AND (te.session_id IS NULL OR r.session_id = te.session_id)
                        AND (te.user_id IS NULL OR r.user_id = te.user_id)
                        AND (te.occurred_after IS NULL OR r.occurred_at >= te.occurred_after)
                        AND (te.occurred_before IS NULL OR r.occurred_at < te.occurred_before)
                        AND (te.entity_kinds IS NULL
                             OR EXISTS { MATCH (r)-[m:MENTIONS]->(x:Entity)
                                         WHERE x.kind IN te.entity_kinds AND m.recorded_at <= te.known_at })
                        AND (te.viewer IS NULL OR ((r.session_id = te.viewer.session_id               // visible
                             OR (r.session_id IS NULL AND (r.user_id IS NULL OR r.user_id = te.viewer.user_id)))
                             AND NOT r.id IN te.viewer.shown))
                      | {id: r.id, text: CASE WHEN r.speaker IS NULL THEN r.content ELSE r.speaker + ': ' + r.content END}
                     ][0] AS reply
    RETURN collect({reasons: reasons, id: e.id, reply: reply,
                    text: CASE WHEN e.speaker IS NULL THEN e.content ELSE e.speaker + ': ' + e.content END}) AS episode_hits
  }
  RETURN episode_hits, starved AS episode_starved
}
// Prefetch: the $prefetch best candidates by a preliminary RRF over the same lists (graphmem.recall.fusion.rrf's
// formula: the sum over lists of $weights['<kind>/<retriever>'] (default 1.0) / ($rrf_k + rank); no reply bonus),
// the replies of prefetched episodes, and any ids in $fact_ids / $episode_ids / $entity_ids are read in full, so
// the winners of the exact fusion (in Python) are nearly always here and a search is one round trip. With $targets
// empty no retriever runs and the query only reads those ids (the rare second read for a winner not prefetched).
// The prefetched candidates are those at or above the score of the $prefetch-th best (percentileDisc over the
// scores; ties at that score in list order, up to $prefetch in all), not a sorted LIMIT: a sort's rows carry every
// variable of the row it runs in, here the retrievers' lists, which Neo4j counted once per kept row (a search from
// a hub seed, an organisation of 2,000 people, k = 100: 670 MB, over the transaction memory limit). Now ~13 MB;
// on 200 bench searches the same lists and as many records read (ties at the cut taken in another order in 51 of
// them; no second read either way), the same hits on 302 searches, Neo4j CPU per call 4.0 against 4.1 ms (medians
// of 12 interleaved rounds).
WITH t, entity_hits, fact_hits, episode_hits, withheld_consent, withheld_sensitive,
     entity_starved + fact_starved + episode_starved AS starved,
     [h IN entity_hits | {kind: 'entity', id: h.id, reply: null, score: reduce(s = 0.0, r IN h.reasons |
                           s + coalesce($weights['entity/' + r.retriever], 1.0) / ($rrf_k + r.rank))}] +
     [h IN fact_hits | {kind: 'fact', id: h.id, reply: null, score: reduce(s = 0.0, r IN h.reasons |
                           s + coalesce($weights['fact/' + r.retriever], 1.0) / ($rrf_k + r.rank))}] +
     [h IN episode_hits | {kind: 'episode', id: h.id, reply: h.reply.id, score: reduce(s = 0.0, r IN h.reasons |
                           s + coalesce($weights['episode/' + r.retriever], 1.0) / ($rrf_k + r.rank))}] AS scored
CALL (scored) {
  UNWIND scored AS c
  RETURN percentileDisc(c.score, CASE WHEN size(scored) <= $prefetch THEN 0.0
                                      ELSE 1.0 - toFloat($prefetch) / size(scored) END) AS cut
}
WITH t, entity_hits, fact_hits, episode_hits, withheld_consent, withheld_sensitive, starved,
     ([c IN scored WHERE c.score > cut] + [c IN scored WHERE c.score = cut])[..$prefetch] AS top
CALL (t, top) {
  UNWIND $fact_ids + [c IN top WHERE c.kind = 'fact' | c.id] AS fact_id
  WITH DISTINCT t, fact_id
  MATCH (f:Fact {id: fact_id})-[:SUBJECT]->(s:Entity)
  WHERE f.tenant_id = $tenant_id
  OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
  RETURN collect({
           fact: f {.id, .tenant_id, .predicate, .value, .object_key, .statement, .confidence, .source, .fact_class,
                    .status, subject_id: s.id, object_id: o.id,
                    valid_from: toString(f.valid_from), valid_to: toString(f.valid_to),
                    recorded_at: toString(f.recorded_at), closed_at: toString(f.closed_at),
                    prior_valid_to: toString(f.prior_valid_to), prior_status: f.prior_status,
                    reclosed_at: toString(f.reclosed_at),
                    expired_at: toString(f.expired_at), last_confirmed_at: toString(f.last_confirmed_at),
                    retain_until: toString(f.retain_until)},
           provenance: [(f)-[d:DERIVED_FROM]->(e:Episode)
                        WHERE e.tenant_id = $tenant_id AND (e.retain_until IS NULL OR e.retain_until > t.now)
                          AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= t.now }
                          AND d.recorded_at <= t.known_at
                          AND (NOT $scoped OR ((t.session_id IS NULL OR e.session_id = t.session_id)
                               AND (t.user_id IS NULL OR e.user_id = t.user_id)
                               AND (t.occurred_after IS NULL OR e.occurred_at >= t.occurred_after)
                               AND (t.occurred_before IS NULL OR e.occurred_at < t.occurred_before)))
                          AND (t.viewer IS NULL OR e.session_id = t.viewer.session_id                 // visible
                               OR (e.session_id IS NULL AND (e.user_id IS NULL OR e.user_id = t.viewer.user_id))
                               OR (f.fact_class IN t.viewer.consent_classes AND t.viewer.shared
                                   AND e.user_id = t.viewer.user_id)) |
                        {episode_id: e.id, occurred_at: toString(e.occurred_at), session_id: e.session_id,
                         user_id: e.user_id, role: coalesce(d.role, 'assertion')}]}) AS facts
}
CALL (top) {
  UNWIND $episode_ids + [c IN top WHERE c.kind = 'episode' | c.id] +
         [c IN top WHERE c.kind = 'episode' AND c.reply IS NOT NULL | c.reply] AS episode_id
  WITH DISTINCT episode_id
  MATCH (e:Episode {id: episode_id})
  WHERE e.tenant_id = $tenant_id
  RETURN collect(e {.id, .tenant_id, .kind, .content, .session_id, .user_id, .role, .speaker, .idempotency_key,
                    .source, .token_count, .extraction_status, .legal_hold, .agent_version, .prompt_version,
                    .tool_version, occurred_at: toString(e.occurred_at), ingested_at: toString(e.ingested_at),
                    retain_until: toString(e.retain_until)}) AS episodes
}
CALL (top) {
  UNWIND $entity_ids + [c IN top WHERE c.kind = 'entity' | c.id] AS entity_id
  WITH DISTINCT entity_id
  MATCH (n:Entity {id: entity_id})
  WHERE n.tenant_id = $tenant_id
  RETURN collect(n {.id, .tenant_id, .kind, .name, .name_key, .aliases, .email, .domain, .external_ids, .summary,
                    created_at: toString(n.created_at), updated_at: toString(n.updated_at)}) AS entities
}
RETURN entity_hits, fact_hits, episode_hits, facts, episodes, entities, withheld_consent, withheld_sensitive, starved
