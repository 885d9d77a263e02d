-- cancel_enrollments($1 campaign): every live enrollment ends as cancelled. Rows leased by a
-- worker with a call in flight are cancelled too; that worker's settle then finds them no
-- longer `calling` and changes nothing (its attempt row still records the outcome).
UPDATE enrollments
SET status = 'cancelled', reason = 'campaign cancelled', wait_code = NULL, reconcile = false, lease_owner = NULL,
    lease_expires_at = NULL, finished_at = now(), updated_at = now()
WHERE campaign_id = $1 AND status IN ('ready', 'calling', 'waiting');
