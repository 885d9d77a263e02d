-- lock_available($1 JSON array of scope ids): the available balances of those scopes, locked
-- FOR UPDATE in scope_id order (the order every ledger writer uses). A separate statement from
-- the write that follows, so that the write's snapshot sees every change committed before the
-- lock was granted.
SELECT scope_id, balance
FROM ledger_accounts
WHERE kind = 'available' AND scope_id IN (SELECT jsonb_array_elements_text($1::jsonb)::bigint)
ORDER BY scope_id
FOR UPDATE;
