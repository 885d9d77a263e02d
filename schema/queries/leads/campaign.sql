-- campaign($1 name): id and state of a campaign. Not locked: a worker that pauses the campaign
-- holds enrollment rows and then takes the campaign's row; locking it here first would deadlock.
SELECT campaign_id, state::text FROM campaigns WHERE name = $1;
