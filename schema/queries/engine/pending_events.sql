-- pending_events($1 enrollment ids as a JSON array): inbox events not yet applied to each of
-- the claimed enrollments (same lead, same sender account, after the enrollment's cursor).
-- The ids' JSON array becomes a bigint[] literal ('[1,2]' -> '{1,2}'): `= ANY(array)` on the
-- primary key is an index scan whatever the table's statistics say; a join with a set-returning
-- function (estimated at 100 rows) made the planner scan the whole table when it was small or
-- its statistics stale (3 ms of a 4 ms statement in tests/bench/engine_bench.sh). Every hot
-- statement below reaches its rows the same way.
SELECT e.enrollment_id, ev.event_id, ev.kind
FROM enrollments e
JOIN events ev ON ev.lead_id = e.lead_id AND ev.account_id = e.account_id AND ev.event_id > e.event_cursor
WHERE e.enrollment_id = ANY(translate($1, '[]', '{}')::bigint[])
ORDER BY e.enrollment_id, ev.event_id;
