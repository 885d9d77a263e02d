-- pause_all($1 reason): the API answered INSUFFICIENT_CREDITS: the key itself is out of credits,
-- so every active campaign (they share the key) pauses with the reason, which starts with
-- "credits:" so that credits/resume lifts exactly these pauses. Returns the campaigns paused.
UPDATE campaigns SET state = 'paused', pause_reason = $1, updated_at = now()
WHERE state = 'active'
RETURNING campaign_id;
