// tenant-free: schema statement
CREATE INDEX episode_retain_until IF NOT EXISTS FOR (n:Episode) ON (n.retain_until)
