-- reassignable($1 account id): live enrollments of an unavailable account that may move to
-- another sender: their campaign version chose `on_account_unavailable: reassign`, they are
-- not in a call, and this account has not reached the person yet (no invitation or message
-- that went out, may have gone out, or is in flight). A lead this account already invited
-- keeps waiting for it: its acceptance can only arrive there. `candidates` are the version's
-- other senders (named by id or label) that are connected now.
SELECT e.enrollment_id,
       COALESCE((SELECT jsonb_agg(DISTINCT a.account_id)
                 FROM jsonb_array_elements_text(v.definition->'accounts') AS s(name)
                 JOIN accounts a ON a.account_id = s.name OR a.label = s.name
                 WHERE a.connected AND a.account_id <> $1), '[]'::jsonb)::text AS candidates
FROM enrollments e
JOIN campaign_versions v ON v.campaign_id = e.campaign_id AND v.version = e.version
WHERE e.account_id = $1
  AND e.status IN ('ready', 'waiting')
  AND v.definition->>'on_account_unavailable' = 'reassign'
  AND NOT EXISTS (SELECT 1 FROM step_attempts a
                  WHERE a.enrollment_id = e.enrollment_id AND a.call IN ('invite', 'send')
                    AND attempt_may_have_taken_effect(a.outcome))
ORDER BY e.enrollment_id
FOR UPDATE OF e SKIP LOCKED;  -- a row another worker holds is in its hands; it stays with this account
