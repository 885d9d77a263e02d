-- calls_counted: what the quotas of a Redis that lost the limits' state counted
-- (engine/limits_rebuild): the calls of the last nine days that took effect or may have
-- (attempt_may_have_taken_effect, migration 0018; the refunds of the limits gate give back the
-- others' places), by sender, call, campaign and quarter of an hour. A quarter of an hour lies
-- inside one local day of every time zone, so the caller can count each in its account's quota
-- day. Reconciliations are reads and count in no quota. Read once per loss: a scan of the
-- attempts is fine.
SELECT e.account_id,
       a.call,
       e.campaign_id,
       (floor(extract(epoch FROM a.started_at) / 900) * 900)::bigint AS at_s,
       count(*)::bigint AS calls
FROM step_attempts a
JOIN enrollments e ON e.enrollment_id = a.enrollment_id
WHERE a.started_at >= now() - interval '9 days'
  AND NOT a.reconcile
  AND a.call IN ('invite', 'withdraw', 'send', 'visit')
  AND attempt_may_have_taken_effect(a.outcome)
GROUP BY 1, 2, 3, 4
