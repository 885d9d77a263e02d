-- chain_hold($1 enrollment ids as a bigint array literal '{1,2}', $2 worker id): of the settled
-- calls whose next step is due at once, the rows this worker still holds (`calling` under its
-- lease: the settle's compare-and-set) and may work (campaign active, account connected, as
-- engine/claim_due checks), locked for the transaction. The cycle starts their next step at once
-- and engine/settle writes it with the outcome, instead of releasing the rows to be claimed again.
-- The others are settled and released as usual. Status as text and rows by primary key: see
-- engine/settle.
SELECT e.enrollment_id
FROM enrollments e
JOIN campaigns c ON c.campaign_id = e.campaign_id
JOIN accounts a ON a.account_id = e.account_id
WHERE e.enrollment_id = ANY($1::bigint[])
  AND e.status::text = 'calling' AND e.lease_owner = $2
  AND c.state = 'active' AND a.connected
ORDER BY e.enrollment_id
FOR UPDATE OF e;
