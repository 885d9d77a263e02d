-- metrics_intake($1 quiet seconds): quarantined events, stored events of a type the engine does
-- not use (the partial index of migration 0027), and accounts whose events health is degraded
-- (as intake/events_health finds them: quiet accounts, then one pass over the live rows, none
-- when no account is quiet).
WITH quiet AS MATERIALIZED (
    SELECT a.account_id
    FROM accounts a
    WHERE a.webhook_id IS NOT NULL AND a.platform = 'network'
      AND COALESCE(a.last_event_at, a.updated_at) < now() - make_interval(secs => $1)
)
SELECT (SELECT count(*) FROM events_quarantine),
       (SELECT count(*) FROM events WHERE kind = 'other'),
       (SELECT count(DISTINCT e.account_id)
        FROM enrollments e
        WHERE e.status IN ('ready', 'calling', 'waiting') AND e.invited_at IS NOT NULL AND e.accepted_at IS NULL
          AND e.account_id = ANY(ARRAY(SELECT account_id FROM quiet))
          AND EXISTS (SELECT 1 FROM quiet));
