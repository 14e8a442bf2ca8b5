// tenant-free: schema statement
CREATE INDEX fact_valid_from IF NOT EXISTS FOR (n:Fact) ON (n.valid_from)
