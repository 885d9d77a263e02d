-- hold_until_start($1 campaign id, $2 start_at, $3 the entry step, $4 its delay in ms): a new
-- version moved start_at later. Live enrollments not leased by a worker that would run before it
-- wait for it. Those not yet worked (at the entry step, no call made) start then: their next run
-- is start_at and the entry step's delay (an opening delay). The others keep their own next run
-- (a wait's timeout, a delay's end) and are only due at start_at, so that an earlier start_at
-- can give them back their own time (campaigns/release_start). Parked rows keep due_at
-- 'infinity' (engine/unpark brings them back). A row due earlier anyway (a wake-up, a settled
-- call) is held by the claim (engine/claim_due) to the same start_at.
WITH held AS (
    SELECT e.enrollment_id, w.fresh,
           $2::timestamptz + CASE WHEN w.fresh THEN make_interval(secs => $4::bigint / 1000.0)
                                  ELSE interval '0' END AS until
    FROM enrollments e
    CROSS JOIN LATERAL (
        SELECT e.step = $3::text
               AND NOT EXISTS (SELECT 1 FROM step_attempts a WHERE a.enrollment_id = e.enrollment_id) AS fresh
    ) w
    WHERE e.campaign_id = $1 AND e.status IN ('ready', 'waiting') AND e.lease_owner IS NULL
)
UPDATE enrollments e
SET next_run_at = CASE WHEN h.fresh THEN GREATEST(e.next_run_at, h.until) ELSE e.next_run_at END,
    due_at = CASE WHEN e.due_at = 'infinity' THEN e.due_at ELSE GREATEST(e.due_at, h.until) END,
    updated_at = now()
FROM held h
WHERE e.enrollment_id = h.enrollment_id
  AND (e.due_at < h.until OR (h.fresh AND e.next_run_at < h.until));
