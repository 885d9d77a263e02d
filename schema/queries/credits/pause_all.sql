-- pause_all($1 reason): the API answered INSUFFICIENT_CREDITS: the key itself is out of credits,
-- so every active campaign (they share the key) pauses with the reason (for people) and the pause
-- code 'credits' (migration 0018), so that credits/resume lifts exactly these pauses. Returns the
-- campaigns paused.
UPDATE campaigns SET state = 'paused', pause_reason = $1, pause_code = 'credits', updated_at = now()
WHERE state = 'active'
RETURNING campaign_id;
