-- read_pending($1 attempt ids as a bigint array literal '{1,2}'): ledger/pending_transfers without
-- the lock, for the worker's fast path (engine/ledger.hpp, held_balances). What a settle reads here
-- (reserved, scopes) never changes once written; the state it depends on is checked again by
-- ledger/apply's UPDATE (`state = 'pending'`, under the row's lock), and a transfer settled in
-- between makes the fast path give way to the locked one.
SELECT transfer_id, attempt_id, campaign_id, reserved, scopes::text
FROM ledger_transfers
WHERE attempt_id = ANY($1::bigint[]) AND state = 'pending';
