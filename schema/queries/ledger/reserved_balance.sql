-- reserved_balance($1 campaign id): what the campaign's calls in flight hold, per sender account,
-- those whose lease is still live by the database's clock (as the claim judges leases): they settle within it, and
-- may give credits back (a reservation is the cost model's upper bound). A reservation of a call
-- whose lease has ended (its worker gone, its row parked behind an unavailable account) is left
-- out: it settles only when a claim reconciles the row, which may be days away. So is a manual
-- reply's (its lease is on manual_replies). Run only when one of the campaign's reservations is
-- refused, once per batch, under the campaign's balance lock: the campaign's live rows by their
-- own index (enrollments_live_campaign), each call's intent and transfer by key. That walks every
-- live row of the campaign, but only near the end of its budget, until the calls in flight have
-- settled and the campaign pauses.
SELECT e.account_id, sum(t.reserved)
FROM enrollments e
JOIN step_attempts a ON a.enrollment_id = e.enrollment_id AND a.outcome = 'in_flight'
JOIN ledger_transfers t ON t.attempt_id = a.attempt_id AND t.state = 'pending'
WHERE e.campaign_id = $1
  AND e.status IN ('ready', 'calling', 'waiting')
  AND e.status = 'calling'
  AND e.lease_expires_at > now()
GROUP BY e.account_id;
