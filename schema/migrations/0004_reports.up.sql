-- Reporting views: what analysts query in psql and what `orchestrator report ...` prints.
-- Facts come from the intent log (step_attempts: what the API was asked and answered) and the
-- inbox (events: what the platform told us), never from what the state machine assumed.
-- Credits per campaign, action, account and day are the ledger's views (0002:
-- ledger_spend_by_campaign / _by_action / _by_account / _by_day, ledger_campaign_budgets).

-- One row per enrollment: when it was invited, accepted, messaged and answered.
CREATE OR REPLACE VIEW report_enrollment_facts AS
SELECT e.enrollment_id, e.campaign_id, c.name AS campaign, e.account_id, e.lead_id, e.variant,
       e.status::text AS status, e.step, e.reason,
       (SELECT min(a.finished_at) FROM step_attempts a
        WHERE a.enrollment_id = e.enrollment_id AND a.call = 'invite'
          AND a.outcome IN ('ok', 'reconciled_present')) AS invited_at,
       (SELECT min(ev.received_at) FROM events ev
        WHERE ev.lead_id = e.lead_id AND ev.account_id = e.account_id
          AND ev.kind = 'accepted_invitation') AS accepted_at,
       (SELECT min(a.finished_at) FROM step_attempts a
        WHERE a.enrollment_id = e.enrollment_id AND a.call = 'send'
          AND a.outcome IN ('ok', 'reconciled_present')) AS messaged_at,
       COALESCE((SELECT min(ev.received_at) FROM events ev
                 WHERE ev.lead_id = e.lead_id AND ev.account_id = e.account_id AND ev.kind = 'message'),
                CASE WHEN e.status = 'replied' THEN e.finished_at END) AS replied_at
FROM enrollments e JOIN campaigns c ON c.campaign_id = e.campaign_id;

-- Where the leads of each campaign are: per step and status.
CREATE OR REPLACE VIEW report_funnel_by_step AS
SELECT c.name AS campaign, e.step, e.status::text AS status, count(*) AS enrollments
FROM enrollments e JOIN campaigns c ON c.campaign_id = e.campaign_id
GROUP BY c.name, e.step, e.status;

-- Acceptance (accepted / invited) and reply (replied / messaged) rates, three ways.
CREATE OR REPLACE VIEW report_rates_by_campaign AS
SELECT campaign,
       count(*) AS enrollments,
       count(invited_at) AS invited, count(accepted_at) AS accepted,
       count(messaged_at) AS messaged, count(replied_at) AS replied,
       round(count(accepted_at)::numeric / NULLIF(count(invited_at), 0), 3) AS acceptance_rate,
       round(count(replied_at) FILTER (WHERE messaged_at IS NOT NULL)::numeric / NULLIF(count(messaged_at), 0), 3)
           AS reply_rate
FROM report_enrollment_facts GROUP BY campaign;

CREATE OR REPLACE VIEW report_rates_by_account AS
SELECT campaign, account_id,
       count(*) AS enrollments,
       count(invited_at) AS invited, count(accepted_at) AS accepted,
       count(messaged_at) AS messaged, count(replied_at) AS replied,
       round(count(accepted_at)::numeric / NULLIF(count(invited_at), 0), 3) AS acceptance_rate,
       round(count(replied_at) FILTER (WHERE messaged_at IS NOT NULL)::numeric / NULLIF(count(messaged_at), 0), 3)
           AS reply_rate
FROM report_enrollment_facts GROUP BY campaign, account_id;

CREATE OR REPLACE VIEW report_rates_by_variant AS
SELECT campaign, COALESCE(variant, '') AS variant,
       count(messaged_at) AS messaged, count(replied_at) FILTER (WHERE messaged_at IS NOT NULL) AS replied,
       round(count(replied_at) FILTER (WHERE messaged_at IS NOT NULL)::numeric / NULLIF(count(messaged_at), 0), 3)
           AS reply_rate
FROM report_enrollment_facts WHERE messaged_at IS NOT NULL GROUP BY campaign, COALESCE(variant, '');

-- Time from the invitation to its acceptance, per campaign: buckets and percentiles (seconds).
CREATE OR REPLACE VIEW report_time_to_accept AS
SELECT campaign,
       count(*) AS accepted,
       count(*) FILTER (WHERE d < interval '1 hour') AS under_1h,
       count(*) FILTER (WHERE d >= interval '1 hour' AND d < interval '1 day') AS under_1d,
       count(*) FILTER (WHERE d >= interval '1 day' AND d < interval '3 days') AS under_3d,
       count(*) FILTER (WHERE d >= interval '3 days' AND d < interval '7 days') AS under_7d,
       count(*) FILTER (WHERE d >= interval '7 days') AS over_7d,
       round(extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY d))::numeric, 1) AS p50_seconds,
       round(extract(epoch FROM percentile_cont(0.9) WITHIN GROUP (ORDER BY d))::numeric, 1) AS p90_seconds
FROM (SELECT campaign, greatest(accepted_at - invited_at, interval '0') AS d
      FROM report_enrollment_facts WHERE invited_at IS NOT NULL AND accepted_at IS NOT NULL) x
GROUP BY campaign;

-- RATE_LIMITED answers per sender account and UTC day (from the intent log).
CREATE OR REPLACE VIEW report_rate_limit_hits AS
SELECT c.name AS campaign, e.account_id, (a.started_at AT TIME ZONE 'UTC')::date AS day, count(*) AS hits
FROM step_attempts a
JOIN enrollments e ON e.enrollment_id = a.enrollment_id
JOIN campaigns c ON c.campaign_id = e.campaign_id
WHERE a.error LIKE '%RATE_LIMITED%'
GROUP BY c.name, e.account_id, (a.started_at AT TIME ZONE 'UTC')::date;

-- Activity per campaign and UTC day: the campaign's timeline.
CREATE OR REPLACE VIEW report_daily_activity AS
SELECT campaign, day,
       sum(invited) AS invited, sum(accepted) AS accepted, sum(messaged) AS messaged, sum(replied) AS replied
FROM (
    SELECT campaign, (invited_at AT TIME ZONE 'UTC')::date AS day, 1 AS invited, 0 AS accepted, 0 AS messaged, 0 AS replied
    FROM report_enrollment_facts WHERE invited_at IS NOT NULL
    UNION ALL
    SELECT campaign, (accepted_at AT TIME ZONE 'UTC')::date, 0, 1, 0, 0 FROM report_enrollment_facts WHERE accepted_at IS NOT NULL
    UNION ALL
    SELECT campaign, (messaged_at AT TIME ZONE 'UTC')::date, 0, 0, 1, 0 FROM report_enrollment_facts WHERE messaged_at IS NOT NULL
    UNION ALL
    SELECT campaign, (replied_at AT TIME ZONE 'UTC')::date, 0, 0, 0, 1 FROM report_enrollment_facts WHERE replied_at IS NOT NULL
) x
GROUP BY campaign, day;
