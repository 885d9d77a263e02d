-- metrics_intake($1 quiet seconds): quarantined events, stored events of a type the engine does
-- not use, and accounts whose events health is degraded (as intake/events_health counts them).
SELECT (SELECT count(*) FROM events_quarantine),
       (SELECT count(*) FROM events WHERE kind = 'other'),
       (SELECT count(*) FROM accounts a
        WHERE a.webhook_id IS NOT NULL AND a.platform = 'network'
          AND COALESCE(a.last_event_at, a.updated_at) < now() - make_interval(secs => $1)
          AND EXISTS (SELECT 1 FROM enrollments e
                      WHERE e.account_id = a.account_id AND e.invited_at IS NOT NULL AND e.accepted_at IS NULL
                        AND e.status::text NOT IN ('done', 'replied', 'failed', 'cancelled')));
