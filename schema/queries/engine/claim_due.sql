-- claim_due($1 limit): locks up to $1 due enrollments for this transaction.
-- FOR UPDATE SKIP LOCKED in a materialised CTE: concurrent workers take disjoint sets without
-- waiting on each other, and the set is evaluated once. A row whose lease has not expired is
-- being called by a live worker and is left alone; an expired lease means that worker died, and
-- the row (status calling) is reconciled by whoever claims it next. Paused, cancelled and
-- completed campaigns and disconnected accounts are not worked. The campaign and account
-- conditions are EXISTS filters, not joins, so the plan walks the partial index enrollments_due
-- in due order and stops after $1 rows (a join made the planner sort every live row).
-- The outer select joins the claimed rows' accounts by primary key for the account's quota
-- overrides (migration 0007; '' when none), so an override changed with `accounts limits` or
-- PUT /v1/accounts/{id}/limits holds from the next claim on, in every worker.
WITH due AS MATERIALIZED (
    SELECT e.enrollment_id
    FROM enrollments e
    WHERE e.status IN ('ready', 'calling', 'waiting')
      AND e.due_at <= now()
      AND (e.lease_expires_at IS NULL OR e.lease_expires_at < now())
      AND EXISTS (SELECT 1 FROM campaigns c WHERE c.campaign_id = e.campaign_id AND c.state = 'active')
      AND EXISTS (SELECT 1 FROM accounts a WHERE a.account_id = e.account_id AND a.connected)
    ORDER BY e.due_at
    LIMIT $1
    FOR UPDATE OF e SKIP LOCKED
)
SELECT e.enrollment_id, e.campaign_id, e.version, e.lead_id, e.account_id, e.step, e.status::text,
       (extract(epoch FROM e.next_run_at) * 1000)::bigint AS next_run_at_ms,
       e.attempt, e.reconcile, e.accepted_seen, e.reason, e.event_cursor,
       l.profile_url, l.fields::text, COALESCE(a.quotas::text, '')
FROM due
JOIN enrollments e ON e.enrollment_id = due.enrollment_id
JOIN leads l ON l.lead_id = e.lead_id
JOIN accounts a ON a.account_id = e.account_id
ORDER BY e.due_at;
