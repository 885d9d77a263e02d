-- set_unavailable_if_login($1 id, $2 api status, $3 the logins the calls were claimed under, a
-- bigint array literal of account_login_us values, migration 0025): accounts/set_connected's
-- disconnection, unless the account logged in again since those claims. Returns the row when it
-- was marked unavailable (or already was).
UPDATE accounts SET connected = false, api_status = $2, updated_at = now()
WHERE account_id = $1 AND (NOT connected OR account_login_us(connected_at) = ANY($3::bigint[]))
RETURNING account_id;
