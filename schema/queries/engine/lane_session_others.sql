-- lane_session_others($1 this lane's lane_transaction_slots as text): the lane_transaction_slots of
-- the other workers' lanes on this database that differ from this lane's, read from their session
-- names (engine/name_lane_session: "orch-worker slots=<N> <worker_id>/<lane>"). Every worker needs the
-- same value (migration 0021); a worker started with another one is told at its start.
SELECT DISTINCT substring(a.application_name FROM '^orch-worker slots=([0-9]+) ')::integer
FROM pg_stat_activity a
WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
  AND a.application_name LIKE 'orch-worker slots=%'
  AND substring(a.application_name FROM '^orch-worker slots=([0-9]+) ') <> $1
ORDER BY 1;
