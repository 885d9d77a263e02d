-- connected_after($1 account id, $2 epoch milliseconds): whether the account became connected
-- (a login, a re-login: accounts.connected_at, migration 0023) after that moment; no row for an
-- unknown account, NULL when it was never stamped. Locks the account's row for the caller's
-- change of it.
SELECT connected_at > to_timestamp($2::bigint / 1000.0) FROM accounts WHERE account_id = $1 FOR UPDATE;
