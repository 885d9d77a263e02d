-- poll_position($1 account, $2 last event id, $3 cursor, $4 since): hosted polling's resume point.
UPDATE accounts SET last_event = $2, poll_cursor = $3, poll_since = $4 WHERE account_id = $1;
