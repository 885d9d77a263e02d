-- first_calls: when each sender made its first call of each action that a quota counts (the
-- start of its ramp-up, engine/limits_rebuild), as the limits gate records it in Redis.
SELECT e.account_id,
       a.call,
       floor(extract(epoch FROM min(a.started_at)))::bigint AS at_s
FROM step_attempts a
JOIN enrollments e ON e.enrollment_id = a.enrollment_id
WHERE NOT a.reconcile
  AND a.call IN ('invite', 'withdraw', 'send', 'visit')
  AND attempt_may_have_taken_effect(a.outcome)
GROUP BY 1, 2
