-- metrics_attempts_open($1 attempt ids): step attempts a scrape saw in flight, as metrics_attempts
-- gives them: each is counted once it has finished (a later attempt finished meanwhile was
-- counted at once: one call in flight no longer holds back the counts of every later one).
SELECT attempt_id, call, outcome::text, credits,
       COALESCE(EXTRACT(EPOCH FROM finished_at - started_at), 0)::float8,
       finished_at IS NULL,
       error LIKE '%(HTTP 429)%'
FROM step_attempts
WHERE attempt_id = ANY($1::bigint[]);
