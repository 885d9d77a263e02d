-- wake_campaign($1 campaign id): after the campaign's budget or caps changed, its queued manual
-- replies held until a later time (the day cap's next UTC day, a cap on the account) are due now,
-- as its leads are (engine/wake_budget_waits): serve's sender asks again, and one still denied is
-- held again. Returns the replies woken.
UPDATE manual_replies SET not_before = now(), updated_at = now()
WHERE campaign_id = $1 AND state = 'queued' AND not_before > now()
RETURNING reply_id;
