-- reassignable($1 account id): live enrollments of an unavailable account that may move to
-- another sender: their campaign version chose `on_account_unavailable: reassign`, they are
-- not in a call, and this account has not reached the person yet (no invitation or message
-- that went out, may have gone out, or is in flight). A lead this account already invited
-- keeps waiting for it: its acceptance can only arrive there. `candidates` are the version's
-- other senders (named by id or label) that are connected now.
-- Each version's choice and candidates once (a materialised CTE over the versions of the
-- account's live rows), not per row: a definition holds its audience's leads, and reading it
-- per row cost a de-TOAST of the whole definition each (6 s for 5,000 rows of a 50,000-lead
-- campaign, inside a worker's lane transaction).
WITH mine AS MATERIALIZED (
    SELECT e.enrollment_id, e.campaign_id, e.version
    FROM enrollments e
    WHERE e.account_id = $1
      AND e.status IN ('ready', 'waiting')
      AND NOT EXISTS (SELECT 1 FROM step_attempts a
                      WHERE a.enrollment_id = e.enrollment_id AND a.call IN ('invite', 'send')
                        AND attempt_may_have_taken_effect(a.outcome))
), versions AS MATERIALIZED (
    SELECT v.campaign_id, v.version,
           COALESCE((SELECT jsonb_agg(DISTINCT a.account_id)
                     FROM jsonb_array_elements_text(v.definition->'accounts') AS s(name)
                     JOIN accounts a ON a.account_id = s.name OR a.label = s.name
                     WHERE a.connected AND a.account_id <> $1), '[]'::jsonb)::text AS candidates
    FROM campaign_versions v
    WHERE (v.campaign_id, v.version) IN (SELECT DISTINCT campaign_id, version FROM mine)
      AND v.definition->>'on_account_unavailable' = 'reassign'
)
-- The rows by primary key, locked; their account and status checked again on the locked version.
SELECT e.enrollment_id, v.candidates
FROM mine m
JOIN versions v ON v.campaign_id = m.campaign_id AND v.version = m.version
JOIN enrollments e ON e.enrollment_id = m.enrollment_id
WHERE e.account_id = $1 AND e.status IN ('ready', 'waiting')
ORDER BY e.enrollment_id
FOR UPDATE OF e SKIP LOCKED;  -- a row another worker holds is in its hands; it stays with this account
