// tenant-free: schema statement
CREATE INDEX fact_valid_to IF NOT EXISTS FOR (n:Fact) ON (n.valid_to)
