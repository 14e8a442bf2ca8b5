// Entity lookup by full-text over names and aliases: $opt.lucene is the whole Lucene query over the tenant's prefixed
// terms (graphmem.store.fulltext.tenant_query), $opt.kind an optional kind. One row: `entities`, the $limit best
// after the first $offset of the $fetch best hits, by score, then name and id ({entity, score}; the tenant id
// checked again), and `deeper`: whether a read deeper than $fetch could change that page. It could when the read
// returned $fetch hits and the page holds a hit scoring as low as the lowest read (Lucene cut a group of equal
// scores that sorts by name: 1,200 people named "Pager Person N"), or fewer than $limit passed the filters (1,500
// organisations named alike came before the 40 people a kind filter asked for);
// graphmem.recall.service.RecallService.find_entities then reads again, deeper. Hits above the lowest score read
// are all read.
CALL db.index.fulltext.queryNodes('entity_text', $opt.lucene, {limit: $fetch}) YIELD node, score
WITH collect({n: node, score: score}) AS hits, min(score) AS floor
WITH size(hits) = $fetch AS full, floor, hits
UNWIND CASE WHEN hits = [] THEN [null] ELSE hits END AS h      // one row even when nothing matched
// the list is left behind here: a sort's rows carry every variable they hold, and 1,200 rows each holding the
// 1,200 hits ran out of transaction memory
WITH full, floor, h.n AS n, h.score AS score
WITH full, floor, n, score, n IS NOT NULL AND n.tenant_id = $tenant_id AND ($opt.kind IS NULL OR n.kind = $opt.kind) AS ok
ORDER BY score DESC, n.name, n.id
WITH full, floor, collect(CASE WHEN ok THEN {n: n, score: score} END) AS ranked
WITH full, floor, ranked[$offset..$offset + $limit] AS page
RETURN [p IN page | {score: p.score, entity: {id: p.n.id, tenant_id: p.n.tenant_id, kind: p.n.kind, name: p.n.name,
                                             name_key: p.n.name_key, aliases: coalesce(p.n.aliases, []), email: p.n.email,
                                             domain: p.n.domain, external_ids: coalesce(p.n.external_ids, []),
                                             summary: p.n.summary, created_at: p.n.created_at,
                                             updated_at: p.n.updated_at}}] AS entities,
       full AND (size(page) < $limit OR any(p IN page WHERE p.score = floor)) AS deeper
