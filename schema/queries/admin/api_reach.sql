-- api_reach(): the workers' view of the API, for /readyz when its own probe is skipped (the key's
-- request rate is spent): of the last 200 step calls, those finished in the last 60 s, how many
-- of them got no answer from the API (a connect failure, a timeout, a lost connection), and the
-- last such error. Primary key order, at most 200 rows.
WITH recent AS (
    SELECT attempt_id, error, finished_at FROM step_attempts ORDER BY attempt_id DESC LIMIT 200
), last_minute AS (
    SELECT attempt_id, error,
           COALESCE(error ~ '\m(CONNECT_FAILED|TIMEOUT|CONNECTION_LOST)\M', false) AS unreached
    FROM recent
    WHERE finished_at > now() - interval '60 seconds'
)
SELECT count(*), count(*) FILTER (WHERE unreached),
       COALESCE((array_agg(error ORDER BY attempt_id DESC) FILTER (WHERE unreached))[1], '')
FROM last_minute;
