-- enroll($1 campaign, $2 version, $3 JSON array of {lead_id, account_id, step, status,
-- next_run_at_ms, excluded}): one enrollment per (campaign, lead). A lead already enrolled by ANY campaign, on the
-- do-not-contact list (by its canonical profile URL, or by its `company` field, ignoring case and
-- surrounding blanks), or excluded by the campaign file's `exclude:` section (excluded = true), is
-- not enrolled: a person is contacted once, and never when they asked not to be.
WITH x AS (
    SELECT * FROM jsonb_to_recordset($3::jsonb)
        AS x(lead_id bigint, account_id text, step text, status enrollment_status, next_run_at_ms bigint,
             excluded boolean)
), blocked AS (
    SELECT x.lead_id,
           -- enrolled here already (the file applied again): nothing to do, nothing to record
           CASE WHEN EXISTS (SELECT 1 FROM enrollments e WHERE e.lead_id = x.lead_id AND e.campaign_id = $1) THEN NULL
                WHEN COALESCE(x.excluded, false) THEN 'excluded by the campaign'
                WHEN EXISTS (SELECT 1 FROM do_not_contact d WHERE d.canonical_url = l.canonical_url)
                  OR EXISTS (SELECT 1 FROM do_not_contact d
                             WHERE d.company IS NOT NULL AND lower(d.company) = lower(btrim(l.fields->>'company')))
                THEN 'do not contact'
                WHEN EXISTS (SELECT 1 FROM enrollments e WHERE e.lead_id = x.lead_id AND e.campaign_id <> $1)
                THEN 'already enrolled in another campaign' END AS reason
    FROM x JOIN leads l ON l.lead_id = x.lead_id
), skipped AS (
    INSERT INTO skipped_leads (campaign_id, lead_id, reason)
    SELECT $1, b.lead_id, b.reason FROM blocked b WHERE b.reason IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING lead_id
)
INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step, status, next_run_at, due_at)
SELECT $1, $2, x.lead_id, x.account_id, x.step, COALESCE(x.status, 'ready'), to_timestamp(x.next_run_at_ms / 1000.0),
       to_timestamp(x.next_run_at_ms / 1000.0)
FROM x JOIN blocked b ON b.lead_id = x.lead_id
WHERE b.reason IS NULL
ON CONFLICT (campaign_id, lead_id) DO NOTHING
RETURNING lead_id;
