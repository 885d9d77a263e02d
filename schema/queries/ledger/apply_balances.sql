-- apply_balances($1 scope ids, $2 account kinds, $3 changes; parallel arrays, one element per
-- account, e.g. '{7,7}', '{available,reserved}', '{-5,5}'): the worker's fast path moves the balances
-- of a cycle's entries here, as its transaction's last statement, after lock_available has locked
-- the rows (engine/ledger.hpp, held_balances). A change that takes a balance below zero is refused
-- by the CHECK constraints; the caller then rolls back to its savepoint and takes the locked path.
-- The rows by primary key from the scope array, not a hash join over the whole table (unnest's
-- estimate is 100 rows).
UPDATE ledger_accounts a
SET balance = a.balance + x.delta
FROM unnest($1::bigint[], $2::ledger_account_kind[], $3::bigint[]) AS x(scope_id, kind, delta)
WHERE a.scope_id = ANY($1::bigint[]) AND a.scope_id = x.scope_id AND a.kind = x.kind;
