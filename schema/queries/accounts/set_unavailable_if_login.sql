-- set_unavailable_if_login($1 id, $2 api status, $3 the logins the calls were claimed under, a
-- bigint array literal of account_login_us values, migration 0025): accounts/set_connected's
-- disconnection, unless the account logged in again since those claims. Returns the row when it
-- was marked unavailable (or already was), with whether it was connected until this statement:
-- the row is locked first, so of the lanes that settle such answers at once, one finds it
-- connected (and says the account paused) and the others find it paused.
WITH old AS (
    SELECT account_id, connected, account_login_us(connected_at) AS login
    FROM accounts WHERE account_id = $1 FOR UPDATE
)
UPDATE accounts a SET connected = false, api_status = $2, updated_at = now()
FROM old
WHERE a.account_id = old.account_id AND (NOT old.connected OR old.login = ANY($3::bigint[]))
RETURNING old.connected;
