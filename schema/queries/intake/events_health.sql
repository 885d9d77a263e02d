-- events_health($1 quiet seconds): accounts with a webhook and pending invitations that have had
-- no event for longer than the quiet time (since their last event, or since their webhook was set
-- up when none came yet): their acceptances may not be reaching the inbox.
SELECT a.account_id,
       COALESCE(to_char(a.last_event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ''),
       (SELECT count(*) FROM enrollments e
        WHERE e.account_id = a.account_id AND e.invited_at IS NOT NULL AND e.accepted_at IS NULL
          AND e.status::text NOT IN ('done', 'replied', 'failed', 'cancelled'))
FROM accounts a
WHERE a.webhook_id IS NOT NULL AND a.platform = 'network'
  AND COALESCE(a.last_event_at, a.updated_at) < now() - make_interval(secs => $1)
  AND EXISTS (SELECT 1 FROM enrollments e
              WHERE e.account_id = a.account_id AND e.invited_at IS NOT NULL AND e.accepted_at IS NULL
                AND e.status::text NOT IN ('done', 'replied', 'failed', 'cancelled'))
ORDER BY a.account_id;
