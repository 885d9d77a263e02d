-- limits_session_others($1 this process's limits fingerprint): how many other worker and `serve`
-- processes on this database (a worker's lanes are one: "<worker_id>/<lane>") run with other
-- rate-limit settings, read from their session
-- names (engine/name_lane_session, engine/name_serve_session: "... limits=<8 hex digits> ...",
-- engine/limits_fingerprint). They share the API key's and the accounts' buckets, so every process
-- needs the same values. A session named without a fingerprint is not counted.
SELECT count(DISTINCT regexp_replace(a.application_name, '/[0-9]+$', ''))
FROM pg_stat_activity a
WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
  AND a.application_name ~ '^orch-(worker|serve) '
  AND substring(a.application_name FROM ' limits=([0-9a-f]{8})') <> $1;
