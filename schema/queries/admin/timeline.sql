-- timeline($1 enrollment id): the lead's API calls (the intent log), oldest first, at most 1000,
-- each with the text it sent (an invitation's note, a message; '' for none).
SELECT attempt_id, step, call, reconcile, attempt, COALESCE(variant, ''), outcome::text, error, credits,
       to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       COALESCE(to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), ''), body
FROM step_attempts WHERE enrollment_id = $1
ORDER BY attempt_id
LIMIT 1000;
