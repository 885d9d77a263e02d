-- resume_ended($1 campaign id): a campaign the claim paused at its end_at (pause code 'ended')
-- runs again when the version just applied ends later, or not at all. Returns it when it did.
UPDATE campaigns SET state = 'active', pause_reason = NULL, pause_code = NULL, updated_at = now()
WHERE campaign_id = $1 AND state = 'paused' AND pause_code = 'ended'
  AND (end_at IS NULL OR end_at > now())
RETURNING campaign_id;
