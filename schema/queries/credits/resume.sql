-- resume(): the key has credits again; campaigns paused because it had none resume. Their
-- parked enrollments are woken by engine/unpark (per campaign id returned). One past its end_at
-- stays: campaigns/pause_ended makes it ended.
UPDATE campaigns SET state = 'active', pause_reason = NULL, pause_code = NULL, updated_at = now()
WHERE state = 'paused' AND pause_code = 'credits' AND (end_at IS NULL OR end_at > now())
RETURNING campaign_id;
