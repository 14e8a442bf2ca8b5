// tenant-free: schema statement
CREATE INDEX fact_recorded_at IF NOT EXISTS FOR (n:Fact) ON (n.recorded_at)
