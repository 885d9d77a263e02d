-- metrics_attempts($1 after attempt id, $2 limit): step attempts past the metrics watermark, in
-- id order (primary key range scan, at most $2 rows per scrape). The caller counts each finished
-- one exactly once per serve process, and keeps those still in flight to read again
-- (metrics_attempts_open).
SELECT attempt_id, call, outcome::text, credits,
       COALESCE(EXTRACT(EPOCH FROM finished_at - started_at), 0)::float8,
       finished_at IS NULL,
       error LIKE '%(HTTP 429)%',
       -- an answer the client could not read (outreach::describe's kind): a body not of the
       -- documented shape, or an HTTP status without an API error body
       CASE WHEN error LIKE 'malformed\_response %' THEN 'malformed_response'
            WHEN error LIKE 'http\_status %' THEN 'http_status' ELSE '' END
FROM step_attempts
WHERE attempt_id > $1
ORDER BY attempt_id
LIMIT $2;
