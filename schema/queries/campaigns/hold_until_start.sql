-- hold_until_start($1 campaign id, $2 start_at, $3 the entry step, $4 its delay in ms): live
-- enrollments not leased by a worker that would run before start_at wait for it (a start_at moved
-- later by a new version); those still at the entry step, an opening delay, wait for start_at and
-- the delay. Parked rows keep due_at 'infinity' (engine/unpark brings them back; the worker then
-- waits for next_run_at).
WITH held AS (
    SELECT e.enrollment_id,
           $2::timestamptz + CASE WHEN e.step = $3::text THEN make_interval(secs => $4::bigint / 1000.0)
                                  ELSE interval '0' END AS until
    FROM enrollments e
    WHERE e.campaign_id = $1 AND e.status IN ('ready', 'waiting') AND e.lease_owner IS NULL
)
UPDATE enrollments e
SET next_run_at = h.until,
    due_at = CASE WHEN e.due_at = 'infinity' THEN e.due_at ELSE h.until END,
    updated_at = now()
FROM held h
WHERE e.enrollment_id = h.enrollment_id AND e.next_run_at < h.until;
