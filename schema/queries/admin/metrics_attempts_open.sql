-- metrics_attempts_open($1 attempt ids): step attempts a scrape saw in flight, as metrics_attempts
-- gives them: each is counted once it has finished (a later attempt finished meanwhile was
-- counted at once: one call in flight no longer holds back the counts of every later one).
SELECT attempt_id, call, outcome::text, credits,
       COALESCE(EXTRACT(EPOCH FROM finished_at - started_at), 0)::float8,
       finished_at IS NULL,
       error LIKE '%(HTTP 429)%',
       -- an answer the client could not read (outreach::describe's kind): a body not of the
       -- documented shape, or an HTTP status without an API error body
       CASE WHEN error LIKE 'malformed\_response %' THEN 'malformed_response'
            WHEN error LIKE 'http\_status %' THEN 'http_status' ELSE '' END
FROM step_attempts
WHERE attempt_id = ANY($1::bigint[]);
