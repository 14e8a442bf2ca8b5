// Wait (up to $timeout_s seconds) until every index is online, so that the first searches after start-up see
// complete indexes.
// tenant-free: schema statement
CALL db.awaitIndexes($timeout_s)
