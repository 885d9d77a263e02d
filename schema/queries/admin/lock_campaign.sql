-- lock_campaign($1 name): the campaign's id and state, its pause code and reason ('' for none),
-- its row locked until commit, so a state change checks and writes against the same state (no
-- lost update with a worker's budget pause).
SELECT campaign_id, state::text, COALESCE(pause_code, ''), COALESCE(pause_reason, '')
FROM campaigns WHERE name = $1 FOR UPDATE;
