-- resume(): the key has credits again; campaigns paused because it had none resume. Their
-- parked enrollments are woken by engine/unpark (per campaign id returned).
UPDATE campaigns SET state = 'active', pause_reason = NULL, pause_code = NULL, updated_at = now()
WHERE state = 'paused' AND pause_code = 'credits'
RETURNING campaign_id;
