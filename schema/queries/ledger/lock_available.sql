-- lock_available($1 scope ids as a bigint array literal '{1,2}'): the available balances of those
-- scopes, locked FOR UPDATE in scope_id order (the order every ledger writer uses). A separate
-- statement from the write that follows, so that the write's snapshot sees every change
-- committed before the lock was granted.
SELECT scope_id, balance
FROM ledger_accounts
WHERE kind = 'available' AND scope_id = ANY($1::bigint[])
ORDER BY scope_id
FOR UPDATE;
