-- pending_events($1 enrollment ids as a JSON array): inbox events not yet applied to each of
-- the claimed enrollments (same lead, same sender account, after the enrollment's cursor).
-- The ids' JSON array becomes a bigint[] literal ('[1,2]' -> '{1,2}'): `= ANY(array)` on the
-- primary key is an index scan whatever the table's statistics say; a join with a set-returning
-- function (estimated at 100 rows) made the planner scan the whole table when it was small or
-- its statistics stale (3 ms of a 4 ms statement in tests/bench/engine_bench.sh). Every hot
-- statement of the worker reaches its rows the same way (tests/integration/engine_plans_pg_test).
-- The events are looked up per enrollment (events_lead), never the other way round: OFFSET 0
-- keeps the planner from turning the lateral subquery into a join it could start from a scan of
-- the inbox.
SELECT e.enrollment_id, ev.event_id, ev.kind
FROM enrollments e
CROSS JOIN LATERAL (
    SELECT i.event_id, i.kind FROM events i
    WHERE i.lead_id = e.lead_id AND i.account_id = e.account_id AND i.event_id > e.event_cursor
    OFFSET 0
) ev
WHERE e.enrollment_id = ANY(translate($1, '[]', '{}')::bigint[])
ORDER BY e.enrollment_id, ev.event_id;
