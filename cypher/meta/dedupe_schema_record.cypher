// Keep one schema record: a database where two processes started at once, before the uniqueness constraint of
// schema/009 existed, may hold two. The one of the highest version stays. Returns how many were deleted.
// tenant-free: database-wide metadata, holds no tenant data
MATCH (m:GraphmemSchema {id: 'graphmem'})
WITH m ORDER BY coalesce(m.version, 0) DESC
WITH collect(m) AS records
FOREACH (m IN records[1..] | DELETE m)
RETURN size(records) - 1 AS deleted
