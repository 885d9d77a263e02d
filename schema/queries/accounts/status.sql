-- status($1 id): connected flag of one account (no row: unknown).
SELECT connected FROM accounts WHERE account_id = $1;
