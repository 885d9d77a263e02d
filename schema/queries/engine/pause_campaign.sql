-- pause_campaign($1 campaign id, $2 reason): budget or credits ran out; resumed by an operator.
UPDATE campaigns SET state = 'paused', pause_reason = $2, updated_at = now()
WHERE campaign_id = $1 AND state = 'active';
