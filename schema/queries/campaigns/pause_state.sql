-- pause_state($1 campaign id): whether the campaign is paused, and why ('' when it is not).
SELECT state = 'paused', COALESCE(pause_reason, '') FROM campaigns WHERE campaign_id = $1;
