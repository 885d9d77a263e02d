-- campaign($1 name): id, state and current version of a campaign. Not locked: a worker that pauses the campaign
-- holds enrollment rows and then takes the campaign's row; locking it here first would deadlock.
SELECT campaign_id, state::text, current_version FROM campaigns WHERE name = $1;
