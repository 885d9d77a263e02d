-- resume_campaign($1 campaign): a budget was raised; a campaign the ledger paused resumes. Pauses
-- for other reasons (an operator, the API's own credits) are left alone.
UPDATE campaigns SET state = 'active', pause_reason = NULL, pause_code = NULL, updated_at = now()
WHERE campaign_id = $1 AND state = 'paused' AND pause_code = 'budget'
RETURNING campaign_id;
