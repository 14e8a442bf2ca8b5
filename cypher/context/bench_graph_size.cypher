// Benchmark only (bench/context.py): the size of the whole graph the assembly benchmark ran against, every tenant.
// tenant-free: counts nodes across all tenants (from the count store) to record the graph size in the results
CALL () { MATCH (f:Fact) RETURN count(f) AS facts }
CALL () { MATCH (e:Episode) RETURN count(e) AS episodes }
CALL () { MATCH (n:Entity) RETURN count(n) AS entities }
CALL () { MATCH (s:Session) RETURN count(s) AS sessions }
RETURN facts, episodes, entities, sessions
