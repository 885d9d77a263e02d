-- resume_campaign($1 campaign): a budget was raised; a campaign the ledger paused resumes. Pauses
-- for other reasons (an operator, the API's own credits) are left alone, and so is one past its
-- end_at (campaigns/pause_ended makes it ended).
UPDATE campaigns SET state = 'active', pause_reason = NULL, pause_code = NULL, updated_at = now()
WHERE campaign_id = $1 AND state = 'paused' AND pause_code = 'budget' AND (end_at IS NULL OR end_at > now())
RETURNING campaign_id;
