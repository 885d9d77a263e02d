-- lock_campaign($1 name): the campaign's id and state, its row locked until commit, so a state
-- change checks and writes against the same state (no lost update with a worker's budget pause).
SELECT campaign_id, state::text FROM campaigns WHERE name = $1 FOR UPDATE;
