-- metrics_gauges(): the scrape-time gauges, each bounded.
--   due backlog: live enrollments due now and not parked (partial index enrollments_due; counted
--                up to 100000);
--   event lag:   age in seconds of the oldest of the last 10000 inbox events that a live,
--                unparked enrollment has not applied yet (0 when none);
--   ledger:      credits available, reserved and spent over every campaign (one row each).
SELECT
    (SELECT count(*) FROM (SELECT 1 FROM enrollments
                           WHERE status IN ('ready', 'calling', 'waiting') AND due_at <= now()
                           LIMIT 100000) d),
    (WITH recent AS (SELECT event_id, lead_id, account_id, received_at FROM events
                     ORDER BY event_id DESC LIMIT 10000)
     SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(r.received_at)), 0)::float8
     FROM recent r
     WHERE EXISTS (SELECT 1 FROM enrollments e
                   WHERE e.lead_id = r.lead_id AND e.account_id = r.account_id AND e.event_cursor < r.event_id
                     AND e.status IN ('ready', 'calling', 'waiting') AND e.due_at <> 'infinity')),
    (SELECT COALESCE(sum(available), 0) FROM ledger_campaign_budgets),
    (SELECT COALESCE(sum(reserved), 0) FROM ledger_campaign_budgets),
    (SELECT COALESCE(sum(spent), 0) FROM ledger_campaign_budgets);
