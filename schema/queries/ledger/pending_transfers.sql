-- pending_transfers($1 attempt ids as a bigint array literal '{1,2}'): the pending transfers of
-- those attempts with the scopes they reserved from (the campaign's first), locked FOR UPDATE in
-- transfer_id order, so that two settles of the same attempt cannot both move it: the second
-- waits, then finds it no longer pending and leaves it. Settles lock transfers first, then the
-- scopes' available accounts (lock_available), always in that order.
SELECT transfer_id, attempt_id, campaign_id, reserved, scopes::text
FROM ledger_transfers
WHERE attempt_id = ANY($1::bigint[]) AND state = 'pending'
ORDER BY transfer_id
FOR UPDATE;
