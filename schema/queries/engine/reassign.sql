-- reassign($1 JSON array of {enrollment_id, account_id}): moves each enrollment to its new
-- sender, due now (its events cursor stays: only events after it, on the new account, apply).
UPDATE enrollments e
SET account_id = x.account_id, due_at = now(), updated_at = now()
FROM jsonb_to_recordset($1::jsonb) AS x(enrollment_id bigint, account_id text)
WHERE e.enrollment_id = x.enrollment_id AND e.status IN ('ready', 'waiting');
