-- metrics_attempts($1 after attempt id, $2 limit): step attempts past the metrics watermark, in
-- id order (primary key range scan, at most $2 rows per scrape). The caller counts each finished
-- one exactly once per serve process, and keeps those still in flight to read again
-- (metrics_attempts_open).
SELECT attempt_id, call, outcome::text, credits,
       COALESCE(EXTRACT(EPOCH FROM finished_at - started_at), 0)::float8,
       finished_at IS NULL,
       error LIKE '%(HTTP 429)%'
FROM step_attempts
WHERE attempt_id > $1
ORDER BY attempt_id
LIMIT $2;
