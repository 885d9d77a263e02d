-- events_health($1 quiet seconds): accounts with a webhook and pending invitations that have had
-- no event for longer than the quiet time (since their last event, or since their webhook was set
-- up when none came yet): their acceptances may not be reaching the inbox.
-- The quiet accounts first, then one pass over the live rows for all of them (a live row is one
-- not finished: the status as the partial indexes name it), not two scans of the table per
-- account (350 ms every 30 s on serve's database thread at 300,000 enrollments and 20 accounts).
WITH quiet AS MATERIALIZED (
    SELECT a.account_id, a.last_event_at
    FROM accounts a
    WHERE a.webhook_id IS NOT NULL AND a.platform = 'network'
      AND COALESCE(a.last_event_at, a.updated_at) < now() - make_interval(secs => $1)
), pending AS (
    SELECT e.account_id, count(*) AS invitations
    FROM enrollments e
    WHERE e.status IN ('ready', 'calling', 'waiting') AND e.invited_at IS NOT NULL AND e.accepted_at IS NULL
      AND e.account_id = ANY(ARRAY(SELECT account_id FROM quiet))
      AND EXISTS (SELECT 1 FROM quiet)  -- a one-time filter: no pass at all when none is quiet
    GROUP BY e.account_id
)
SELECT q.account_id,
       COALESCE(to_char(q.last_event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ''),
       p.invitations
FROM quiet q JOIN pending p ON p.account_id = q.account_id
ORDER BY q.account_id;
