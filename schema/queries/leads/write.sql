-- write($1 JSON array of {enrollment_id, expected, step, status, next_run_at_ms (null: unchanged),
-- run_now (next_run_at = now), due ('next': at next_run_at, 'now', 'park': out of the claim index
-- until its campaign resumes or its sender connects), attempt, reason, account_id, reconcile (a
-- failed lead retried at a step that contacts: the call's effect is checked first)}): a lead
-- operation's changes, compare-and-set on the status leads/lock read (rows locked by it). A
-- finished row gets its finish time and loses any lease. Nothing is made due before the
-- campaign's start_at.
WITH x AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb)
        AS x(enrollment_id bigint, expected text, step text, status text, next_run_at_ms bigint, run_now boolean,
             due text, attempt integer, reason text, account_id text, reconcile boolean)
), y AS (
    -- No lead runs before its campaign's start_at: a retry (due now) or a skip (due when its new
    -- step says) is due at start_at when that is later.
    SELECT x.*, GREATEST(CASE WHEN x.run_now THEN now()
                              WHEN x.next_run_at_ms IS NOT NULL THEN to_timestamp(x.next_run_at_ms / 1000.0) END,
                         CASE WHEN x.run_now OR x.next_run_at_ms IS NOT NULL THEN c.start_at END) AS run_at,
           GREATEST(now(), c.start_at) AS now_or_start
    FROM x JOIN enrollments e0 ON e0.enrollment_id = x.enrollment_id JOIN campaigns c ON c.campaign_id = e0.campaign_id
)
UPDATE enrollments e
SET step = y.step,
    status = y.status::enrollment_status,
    next_run_at = COALESCE(y.run_at, e.next_run_at),
    due_at = CASE WHEN y.status IN ('done', 'replied', 'failed', 'cancelled') THEN e.due_at
                  WHEN y.due = 'park' THEN 'infinity'
                  WHEN y.due = 'now' THEN y.now_or_start
                  ELSE COALESCE(y.run_at, e.next_run_at) END,
    attempt = y.attempt,
    reason = y.reason,
    -- the wait code travels with the reason (migration 0018); a new sender waits for none of its own
    wait_code = CASE WHEN y.reason = e.reason AND y.account_id = e.account_id THEN e.wait_code END,
    account_id = y.account_id,
    reconcile = COALESCE(y.reconcile, false),
    lease_owner = NULL,
    lease_expires_at = NULL,
    finished_at = CASE WHEN y.status IN ('done', 'replied', 'failed', 'cancelled') THEN now() END,
    updated_at = now()
FROM y
WHERE e.enrollment_id = y.enrollment_id AND e.status::text = y.expected
RETURNING e.enrollment_id, e.status::text, e.step, e.account_id,
          to_char(e.next_run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
