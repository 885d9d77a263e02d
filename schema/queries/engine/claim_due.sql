-- claim_due($1 enrollment ids from engine/claim_pick, a bigint array literal '{1,2}'): locks
-- those of them still due for this transaction and returns those that may run now.
-- FOR UPDATE SKIP LOCKED in a materialised CTE: concurrent workers take disjoint sets without
-- waiting on each other, and the set is evaluated once. The WHERE clause is claim_pick's, checked
-- again under this statement's snapshot: a row another worker claimed and committed before it is
-- left alone. (One committed while this statement runs is not returned but stays locked to the
-- end of the transaction, as with any FOR UPDATE in READ COMMITTED; the window is this short
-- statement over the picked ids, not a walk of the due index.)
-- A row whose lease has not expired is being called by a live worker and is left alone; an
-- expired lease means that worker died, and the row (status calling) is reconciled by whoever
-- claims it next.
-- The rows by primary key: any per-row check of another table in the due-order walk (the
-- campaign's state, the account's connection) made the planner scan and sort every due row
-- instead (measured: 12-15 ms for a batch of 100 out of 2,667 due, against 0.7 ms for the index
-- walk), so those checks come after the lock, on the picked rows only.
-- Paused, cancelled and completed campaigns, campaigns past their end_at and disconnected
-- accounts are not worked: their live rows are parked (due_at 'infinity') when that happens, so
-- they are rarely claimed at all; a row that still is (it was locked by another worker when its
-- campaign was parked) is parked here instead of being returned, and engine/unpark wakes it on
-- resume or reconnect.
-- The claimed rows' accounts are joined by primary key for the account's quota overrides
-- (migration 0007; '' when none) and its quota day's time zone (migration 0032; '' when none), so
-- an override changed with `accounts limits` or PUT /v1/accounts/{id}/limits holds from the next
-- claim on, in every worker; and its login
-- (migration 0025), so that an ACCOUNT_INACTIVE answer overtaken by a re-login pauses nothing.
-- The lead's message variant ('' for none): a send of one variant keeps an A/B-tested one
-- (campaigns/machine.hpp api_call::variant_chosen).
WITH due AS MATERIALIZED (
    SELECT e.enrollment_id, e.campaign_id, e.version, e.lead_id, e.account_id, e.step, e.status,
           e.next_run_at, e.attempt, e.reconcile, e.accepted_seen, e.reason, e.event_cursor, e.due_at,
           e.wait_code, e.variant
    FROM enrollments e
    -- status as text: the partial enrollments_due index must not serve this statement (see
    -- engine/settle); the rows come by primary key. The ids as an init plan's array, whose length
    -- the planner does not know: with the literal array of a custom plan it weighed a batch of
    -- 100 against the table's size guessed from its width when the statistics said empty, and a
    -- column more (migration 0018) tipped that to a scan of the whole table.
    WHERE e.enrollment_id = ANY(ARRAY(SELECT unnest($1::bigint[])))
      AND e.status::text IN ('ready', 'calling', 'waiting')
      AND e.due_at <= now()
      AND (e.lease_expires_at IS NULL OR e.lease_expires_at < now())
    ORDER BY e.due_at
    FOR UPDATE OF e SKIP LOCKED
),
claimed AS MATERIALIZED (
    SELECT due.*, l.profile_url, l.fields, a.quotas, account_login_us(a.connected_at) AS login,
           COALESCE(a.time_zone, '') AS account_zone,
           c.state = 'active' AND a.connected AND (c.end_at IS NULL OR c.end_at > now()) AS workable,
           c.state = 'active' AND c.end_at <= now() AS ended,
           CASE WHEN c.start_at > now() THEN c.start_at END AS starts_at
    FROM due
    JOIN leads l ON l.lead_id = due.lead_id
    JOIN accounts a ON a.account_id = due.account_id
    JOIN campaigns c ON c.campaign_id = due.campaign_id
),
-- A campaign whose start_at has not come yet runs nothing: its rows wait for it. The writes that
-- hold a lead (enrollment, a new version's later start_at, a lead operation) make it due no
-- earlier than start_at, but a wake-up (an inbox event, a raised quota or budget, a restart's
-- gate wake-up, a reconnection) makes a row due now, and an in-flight call's settle writes its
-- next step's time; this is the one place every path passes. The row's own next_run_at is kept
-- (a wait's timeout, a delay's end), and its events stay unapplied until then; engine/lead_ops
-- and inbox/waiting_reasons say it waits for start_at.
parked AS (
    UPDATE enrollments e
    SET due_at = CASE WHEN claimed.workable THEN claimed.starts_at ELSE 'infinity' END
    FROM claimed
    WHERE e.enrollment_id = claimed.enrollment_id AND (NOT claimed.workable OR claimed.starts_at IS NOT NULL)
),
-- A campaign past its end_at (migration 0017) stops here: paused with reason 'ended: ...' (pause
-- code 'ended', migration 0018), once;
-- its rows are parked as they are picked (above), and re-applying it with a later end_at resumes it.
ended AS (
    UPDATE campaigns c
    SET state = 'paused', pause_code = 'ended', updated_at = now(),
        pause_reason = 'ended: end_at ' || to_char(c.end_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ' passed'
    -- by primary key from an array (an init plan), not a join that rescans the batch per campaign
    WHERE c.campaign_id = ANY(ARRAY(SELECT campaign_id FROM claimed WHERE ended)) AND c.state = 'active'
)
SELECT enrollment_id, campaign_id, version, lead_id, account_id, step, status::text,
       (extract(epoch FROM next_run_at) * 1000)::bigint AS next_run_at_ms,
       attempt, reconcile, accepted_seen, reason, event_cursor,
       profile_url, fields::text, COALESCE(quotas::text, ''), wait_code, login, account_zone,
       COALESCE(variant, '')
FROM claimed
WHERE workable AND starts_at IS NULL
ORDER BY due_at;
