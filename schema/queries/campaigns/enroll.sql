-- enroll($1 campaign, $2 version, $3 JSON array of {lead_id, account_id, step, next_run_at_ms}):
-- one enrollment per (campaign, lead). A lead already enrolled by ANY campaign, or on the
-- do-not-contact list, is not enrolled again: a person is contacted once.
WITH x AS (
    SELECT * FROM jsonb_to_recordset($3::jsonb) AS x(lead_id bigint, account_id text, step text, next_run_at_ms bigint)
), skipped AS (
    INSERT INTO skipped_leads (campaign_id, lead_id, reason)
    SELECT $1, x.lead_id,
           CASE WHEN EXISTS (SELECT 1 FROM do_not_contact d JOIN leads l ON l.canonical_url = d.canonical_url
                             WHERE l.lead_id = x.lead_id) THEN 'do not contact'
                ELSE 'already enrolled in another campaign' END
    FROM x
    WHERE EXISTS (SELECT 1 FROM enrollments e WHERE e.lead_id = x.lead_id AND e.campaign_id <> $1)
       OR EXISTS (SELECT 1 FROM do_not_contact d JOIN leads l ON l.canonical_url = d.canonical_url
                  WHERE l.lead_id = x.lead_id)
    ON CONFLICT DO NOTHING
    RETURNING lead_id
)
INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step, next_run_at, due_at)
SELECT $1, $2, x.lead_id, x.account_id, x.step, to_timestamp(x.next_run_at_ms / 1000.0),
       to_timestamp(x.next_run_at_ms / 1000.0)
FROM x
WHERE NOT EXISTS (SELECT 1 FROM enrollments e WHERE e.lead_id = x.lead_id AND e.campaign_id <> $1)
  AND NOT EXISTS (SELECT 1 FROM do_not_contact d JOIN leads l ON l.canonical_url = d.canonical_url
                  WHERE l.lead_id = x.lead_id)
ON CONFLICT (campaign_id, lead_id) DO NOTHING
RETURNING lead_id;
