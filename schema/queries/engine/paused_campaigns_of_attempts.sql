-- paused_campaigns_of_attempts($1 JSON array of attempt ids): the campaigns of those attempts
-- that are paused now (a charge above its reservation that the budget could not cover paused
-- the campaign in this transaction; the worker parks them).
SELECT DISTINCT e.campaign_id
FROM step_attempts a
JOIN enrollments e ON e.enrollment_id = a.enrollment_id
JOIN campaigns c ON c.campaign_id = e.campaign_id
WHERE a.attempt_id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb))
  AND c.state = 'paused'
ORDER BY 1;
