-- hold_until_start($1 campaign id, $2 start_at): live enrollments not leased by a worker that
-- would run before start_at wait for it (a start_at moved later by a new version). Parked rows
-- keep due_at 'infinity' (engine/unpark brings them back; the worker then waits for next_run_at).
UPDATE enrollments e
SET next_run_at = $2::timestamptz,
    due_at = CASE WHEN e.due_at = 'infinity' THEN e.due_at ELSE $2::timestamptz END,
    updated_at = now()
WHERE e.campaign_id = $1 AND e.status IN ('ready', 'waiting') AND e.lease_owner IS NULL
  AND e.next_run_at < $2::timestamptz;
