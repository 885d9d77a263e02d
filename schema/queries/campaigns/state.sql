-- state($1 campaign id): the campaign's state and pause reason ('' when none).
SELECT state::text, COALESCE(pause_reason, '') FROM campaigns WHERE campaign_id = $1;
