// tenant-free: schema statement
CREATE INDEX episode_occurred_at IF NOT EXISTS FOR (n:Episode) ON (n.occurred_at)
