-- resume(): the key has credits again; campaigns paused because it had none resume. Their
-- parked enrollments are woken by engine/unpark (per campaign id returned).
UPDATE campaigns SET state = 'active', pause_reason = NULL, updated_at = now()
WHERE state = 'paused' AND pause_reason LIKE 'credits:%'
RETURNING campaign_id;
