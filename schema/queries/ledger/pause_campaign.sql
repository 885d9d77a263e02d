-- pause_campaign($1 campaign, $2 reason): the budget refused a call or the API charged beyond it.
-- Only an active campaign is paused (an operator's pause or a cancel stays as it is); the reason
-- starts with "budget exhausted:" for people; its pause code 'budget' (migration 0018) is what
-- resume_campaign looks for.
UPDATE campaigns SET state = 'paused', pause_reason = $2, pause_code = 'budget', updated_at = now()
WHERE campaign_id = $1 AND state = 'active'
RETURNING campaign_id;
