// Sessions $session_ids forget the dismissed pin values $values ("<value_type>:<value>" strings, cypher
// pins/delete): the words of the text an erasure deletes. The other dismissals stay; a session left with none has
// no `dismissed_pins`.
MATCH (s:Session)
WHERE s.id IN $session_ids AND s.tenant_id = $tenant_id AND s.dismissed_pins IS NOT NULL
WITH s, [d IN s.dismissed_pins WHERE NOT d IN $values] AS kept
SET s.dismissed_pins = CASE WHEN size(kept) = 0 THEN null ELSE kept END
RETURN count(s) AS sessions
