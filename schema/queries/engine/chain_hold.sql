-- chain_hold($1 enrollment ids as a bigint array literal '{1,2}', $2 lease owner (the lane's)): of
-- the settled calls whose next step is due at once, the rows this lane still holds (`calling`
-- under its lease, the settle's compare-and-set, and the lease not yet expired) and may work
-- (campaign active, account connected, as engine/claim_due checks), locked for the transaction.
-- The cycle decides their next step at once and engine/settle writes it with the outcome, instead
-- of releasing the rows to be claimed again; the others are settled and released as usual.
-- The lease test keeps a held row out of the same transaction's claim: now() is the
-- transaction's start time in both, and engine/claim_pick and claim_due take only leases that
-- expired before it. Status as text and rows by primary key: see engine/settle.
SELECT e.enrollment_id
FROM enrollments e
JOIN campaigns c ON c.campaign_id = e.campaign_id
JOIN accounts a ON a.account_id = e.account_id
WHERE e.enrollment_id = ANY($1::bigint[])
  AND e.status::text = 'calling' AND e.lease_owner = $2 AND e.lease_expires_at > now()
  AND c.state = 'active' AND a.connected
ORDER BY e.enrollment_id
FOR UPDATE OF e;
