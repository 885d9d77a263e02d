-- settle($1 outcomes, worker_settle_row_v3[]; $2 lease owner (the lane's); $3 lease seconds):
-- records each call's outcome and the state decide() chose after it. Compare-and-set: only rows
-- still `calling` under this lane's lease move, so a late completion after the lease expired (and
-- another worker reconciled) is dropped; RETURNING says which rows moved.
-- A row whose next step the cycle decided at once (engine/chain_hold locked it first) arrives with
-- that step's state, `leased` and its event cursor: outcome and next call in one row version.
WITH x AS MATERIALIZED (
    SELECT * FROM rows_of($1::worker_settle_row_v3[])
), moved AS (
    UPDATE enrollments e
    SET step = x.step,
        status = x.status::enrollment_status,
        next_run_at = to_timestamp(x.next_run_at_ms / 1000.0),
        -- A row that goes on to its next call keeps its due_at: a calling row's is already past (its
        -- call's start; claims take it only once its lease expired), and an update that changes no
        -- indexed column can be a heap-only (HOT) one, writing none of the table's four indexes.
        due_at = CASE WHEN x.leased THEN e.due_at ELSE to_timestamp(x.next_run_at_ms / 1000.0) END,
        attempt = x.attempt,
        reconcile = x.reconcile,
        accepted_seen = x.accepted_seen,
        reason = x.reason,
        wait_code = x.wait_code,
        variant = COALESCE(x.variant, e.variant),
        event_cursor = COALESCE(x.event_cursor, e.event_cursor),
        lease_owner = CASE WHEN x.leased THEN $2 END,
        lease_expires_at = CASE WHEN x.leased THEN now() + make_interval(secs => $3) END,
        finished_at = CASE WHEN x.status IN ('done', 'replied', 'failed', 'cancelled') THEN now() END,
        updated_at = now(),
        -- milestones (migration 0005); `call` is the action the attempt was about
        -- an acceptance counts in the funnel however it was learned: a check that found it
        -- ACCEPTED sets accepted_seen as an event does (events/mark sets it for events)
        accepted_at = CASE WHEN x.accepted_seen THEN COALESCE(e.accepted_at, now()) ELSE e.accepted_at END,
        checked_at = CASE WHEN x.call = 'check_invitation' AND attempt_took_effect(x.outcome::attempt_outcome)
                          THEN COALESCE(e.checked_at, now()) ELSE e.checked_at END,
        invited_at = CASE WHEN x.call = 'invite' AND attempt_took_effect(x.outcome::attempt_outcome)
                          THEN COALESCE(e.invited_at, now()) ELSE e.invited_at END,
        messaged_at = CASE WHEN x.call = 'send' AND attempt_took_effect(x.outcome::attempt_outcome)
                           THEN COALESCE(e.messaged_at, now()) ELSE e.messaged_at END,
        send_uncertain_at = CASE WHEN x.call = 'send' AND x.outcome = 'uncertain' AND e.send_uncertain_at IS NULL
                                 THEN (SELECT started_at FROM step_attempts WHERE attempt_id = x.attempt_id)
                                 ELSE e.send_uncertain_at END,
        credits = e.credits + x.credits
    FROM x
    -- The rows by primary key (an index scan whatever the statistics say), then matched to x.
    -- The status is compared as text so that no other index can serve the statement: on a table
    -- whose statistics lag (a campaign just applied), `status = 'calling'` made the planner AND
    -- bitmaps of the partial enrollments_due index and of the (campaign_id, status) index (since
    -- dropped, migration 0010), walking every live row.
    WHERE e.enrollment_id = ANY(ARRAY(SELECT enrollment_id FROM x)) AND e.enrollment_id = x.enrollment_id
      AND e.status::text = 'calling' AND e.lease_owner = $2
    RETURNING e.enrollment_id
)
UPDATE step_attempts a
SET outcome = x.outcome::attempt_outcome, error = x.error, credits = x.credits, finished_at = now()
FROM x
WHERE a.attempt_id = ANY(ARRAY(SELECT attempt_id FROM x)) AND a.attempt_id = x.attempt_id AND a.outcome = 'in_flight'
RETURNING a.enrollment_id, a.enrollment_id IN (SELECT enrollment_id FROM moved) AS moved;
