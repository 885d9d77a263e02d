-- set_state($1 name, $2 state, $3 pause reason or ''): pause, resume, cancel, complete.
UPDATE campaigns SET state = $2::campaign_state, pause_reason = NULLIF($3, ''), updated_at = now()
WHERE name = $1
RETURNING campaign_id;
