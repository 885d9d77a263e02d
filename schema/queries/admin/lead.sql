-- lead($1 campaign id, $2 lead id): the lead's enrollment in the campaign, with the state the
-- worker last wrote (reason = why it waits), and whether its campaign and account let it run.
-- Its columns are admin/leads' (engine/lead_ops lead_item reads either), then the attempt.
SELECT e.enrollment_id, l.lead_id, l.profile_url, l.fields::text, e.account_id, e.step, e.status::text,
       CASE WHEN h.held THEN 'waiting for the campaign to start (start_at)' ELSE e.reason END,
       e.version, COALESCE(e.variant, ''),
       to_char(h.next_run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       to_char(e.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       COALESCE(to_char(e.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ''),
       e.due_at = 'infinity' AS parked, CASE WHEN h.held THEN NULL ELSE e.wait_code END,
       h.next_run_at > now() AS later, c.state::text, COALESCE(c.pause_reason, ''), a.connected, e.attempt,
       -- a call's lease and reconciliation, for a calling lead's sentence
       e.reconcile, COALESCE(e.lease_owner, '') AS lease_owner,
       COALESCE(to_char(e.lease_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), '') AS lease_until,
       COALESCE(e.lease_expires_at > now(), false) AS leased
FROM enrollments e
JOIN leads l USING (lead_id)
JOIN campaigns c USING (campaign_id)
-- A lead held for its campaign's start_at (migration 0038) is shown waiting for it, whatever its
-- last wait was (the claim holds it till then, engine/claim_due).
CROSS JOIN LATERAL (SELECT held_for_start(e, c.start_at) AS held) s
CROSS JOIN LATERAL (SELECT s.held, CASE WHEN s.held THEN c.start_at ELSE e.next_run_at END AS next_run_at) h
JOIN accounts a ON a.account_id = e.account_id
WHERE e.campaign_id = $1 AND e.lead_id = $2;
