-- sweep_done($1 account, $2 the gap's start as read before the sweep): the gap is covered,
-- unless a newer one began meanwhile.
UPDATE accounts SET intake_gap_at = NULL
WHERE account_id = $1 AND intake_gap_at IS NOT DISTINCT FROM $2::timestamptz;
