-- set_state($1 name, $2 state, $3 pause reason or ''): pause, resume, cancel, complete. A pause
-- here is an operator's (pause code 'operator', migration 0018), which no automatic resume lifts.
UPDATE campaigns SET state = $2::campaign_state, pause_reason = NULLIF($3, ''),
    pause_code = CASE WHEN $2 = 'paused' THEN 'operator' END, updated_at = now()
WHERE name = $1
RETURNING campaign_id;
