-- apply_transitions($1 transitions, worker_transition_row_v2[]; $2 lease owner (the lane's); $3 lease
-- seconds): writes the state decide() chose for each enrollment claimed in this transaction (rows
-- locked by claim_due), and the corrections of refused reservations (rows locked by claim_due or
-- engine/chain_hold). Rows that start a call keep a lease so no other worker touches them while the
-- call is in flight; the rest are released. due_at is the machine's next_run_at; the
-- engine/wake_pending statement that follows makes rows with unapplied inbox events due now.
-- The batch arrives as an array of rows (migration 0013, engine/record_rows.hpp), read field by
-- field with each type's input function, through rows_of (unnest with a batch-sized estimate);
-- the other hot statements read their batches the same way.
WITH x AS MATERIALIZED (
    SELECT * FROM rows_of($1::worker_transition_row_v2[])
)
UPDATE enrollments e
SET step = x.step,
    status = x.status::enrollment_status,
    next_run_at = to_timestamp(x.next_run_at_ms / 1000.0),
    due_at = to_timestamp(x.next_run_at_ms / 1000.0),
    attempt = x.attempt,
    reconcile = x.reconcile,
    accepted_seen = x.accepted_seen,
    reason = x.reason,
    wait_code = x.wait_code,
    variant = COALESCE(x.variant, e.variant),
    event_cursor = x.event_cursor,
    lease_owner = CASE WHEN x.leased THEN $2 END,
    lease_expires_at = CASE WHEN x.leased THEN now() + make_interval(secs => $3) END,
    finished_at = CASE WHEN x.status IN ('done', 'replied', 'failed', 'cancelled') THEN now() END,
    updated_at = now()
FROM x
-- The rows by primary key (an index scan whatever the statistics say), then matched to x.
WHERE e.enrollment_id = ANY(ARRAY(SELECT enrollment_id FROM x)) AND e.enrollment_id = x.enrollment_id;
