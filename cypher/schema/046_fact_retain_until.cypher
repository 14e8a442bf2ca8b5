// Expired facts selected by the sweeper.
// tenant-free: schema statement
CREATE INDEX fact_retain_until IF NOT EXISTS FOR (n:Fact) ON (n.retain_until)
