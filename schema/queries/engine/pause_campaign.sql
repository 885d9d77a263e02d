-- pause_campaign($1 campaign id, $2 reason): budget or credits ran out; resumed by an operator,
-- so its pause code is an operator's (migration 0018): no automatic resume lifts it.
UPDATE campaigns SET state = 'paused', pause_reason = $2, pause_code = 'operator', updated_at = now()
WHERE campaign_id = $1 AND state = 'active';
