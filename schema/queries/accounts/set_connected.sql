-- set_connected($1 id, $2 connected, $3 api status)
UPDATE accounts SET connected = $2, api_status = $3, updated_at = now() WHERE account_id = $1;
