-- chain_hold($1 enrollment ids as a bigint array literal '{1,2}', $2 lease owner (the lane's)): of
-- the settled calls whose next step is due at once, the rows this lane still holds (`calling`
-- under its lease, the settle's compare-and-set, and the lease not yet expired) and may work
-- (campaign active and started, account connected, as engine/claim_due checks), locked for the transaction.
-- The cycle decides their next step at once and engine/settle writes it with the outcome, instead
-- of releasing the rows to be claimed again; the others are settled and released as usual.
-- The lease test keeps a held row out of the same transaction's claim: now() is the
-- transaction's start time in both, and engine/claim_pick and claim_due take only leases that
-- expired before it. Status as text and rows by primary key: see engine/settle.
-- The rows are locked by primary key in a CTE of their own, and the campaign and account checks
-- come after: joined in one statement, the planner (statistics of a campaign just applied) walked
-- every enrollment of the campaign through the (campaign_id, lead_id) index instead (seen in
-- tests/bench/engine_bench.sh: 21,430 rows read for a batch of 479). Locking a settled row whose
-- campaign or account turns out not workable costs nothing: engine/settle writes it in the same
-- transaction.
WITH held AS MATERIALIZED (
    SELECT e.enrollment_id, e.campaign_id, e.account_id
    FROM enrollments e
    -- the ids through an init plan: a value the planner cannot see, so the plan is an index scan
    -- whatever the statistics say (a custom plan for 100 literal ids seq-scanned a table
    -- analyzed while small)
    WHERE e.enrollment_id = ANY(ARRAY(SELECT unnest($1::bigint[])))
      AND e.status::text = 'calling' AND e.lease_owner = $2 AND e.lease_expires_at > now()
    ORDER BY e.enrollment_id
    FOR UPDATE OF e
)
SELECT h.enrollment_id
FROM held h
JOIN campaigns c ON c.campaign_id = h.campaign_id
JOIN accounts a ON a.account_id = h.account_id
WHERE c.state = 'active' AND a.connected
  AND (c.start_at IS NULL OR c.start_at <= now())  -- not started: released, and claim_due holds it
ORDER BY h.enrollment_id;
