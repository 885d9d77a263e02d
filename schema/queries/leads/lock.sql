-- lock($1 enrollment ids, a bigint array literal): those of them that a lead operation may change
-- (ready or waiting: not in a call, not finished; or failed, which retry and skip take up again),
-- locked in id order. A row a worker's claim
-- holds is waited for and re-checked: one that became `calling` is not returned. `contacted`: its
-- sender has sent it an invitation or a message (or may have: in flight, uncertain), as
-- engine/reassignable counts it. `listed`: the person is on the do-not-contact list (by profile or
-- company, as inbox/dnc_of matches), which keeps a failed lead failed. `effect_unknown`: the last
-- attempt at the lead's step that says anything of its effect (a fresh request, or a reconciliation
-- that concluded) may have taken effect: a retried contact checks it first, where one whose
-- request was refused, or found absent, is sent afresh. `wait_code`: what the lead waits for ('' none).
SELECT e.enrollment_id, e.lead_id, e.status::text, e.step, e.version, e.account_id, e.accepted_seen,
       e.due_at = 'infinity' AS parked,
       EXISTS (SELECT 1 FROM step_attempts a
               WHERE a.enrollment_id = e.enrollment_id AND a.call IN ('invite', 'send')
                 AND attempt_may_have_taken_effect(a.outcome)) AS contacted,
       e.attempt, e.reason,
       e.status = 'failed' AND EXISTS (
           SELECT 1 FROM leads l JOIN do_not_contact d ON d.canonical_url = l.canonical_url
               OR (d.company IS NOT NULL AND lower(d.company) = lower(btrim(COALESCE(l.fields->>'company', ''))))
           WHERE l.lead_id = e.lead_id) AS listed,
       COALESCE((SELECT attempt_may_have_taken_effect(a.outcome) FROM step_attempts a
                 WHERE a.enrollment_id = e.enrollment_id AND a.step = e.step
                   AND (NOT a.reconcile OR a.outcome IN ('reconciled_present', 'reconciled_absent'))
                 ORDER BY a.attempt_id DESC LIMIT 1), false) AS effect_unknown,
       COALESCE(e.wait_code, '') AS wait_code
FROM enrollments e
WHERE e.enrollment_id = ANY($1::bigint[]) AND e.status IN ('ready', 'waiting', 'failed')
ORDER BY e.enrollment_id
FOR UPDATE OF e;
