-- upsert_leads($1 JSON array of {canonical_url, profile_url, fields}, $2 campaign id): leads are
-- shared across campaigns by canonical URL; a known lead keeps its row and gains the audience's
-- fields, unless another campaign enrolled it: a person belongs to the first campaign that enrolled
-- them (the apply skips them here), and that campaign's invitations and messages are written from
-- their fields, so an audience that skips them changes nothing of theirs (a file that skipped a
-- person renamed them in the other campaign's next message). Every lead's id is returned, updated
-- or not.
WITH x AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(canonical_url text, profile_url text, fields jsonb)
), written AS (
    INSERT INTO leads (canonical_url, profile_url, fields)
    SELECT x.canonical_url, x.profile_url, x.fields FROM x
    ON CONFLICT (canonical_url) DO UPDATE SET fields = leads.fields || EXCLUDED.fields
    WHERE NOT EXISTS (SELECT 1 FROM enrollments e WHERE e.lead_id = leads.lead_id AND e.campaign_id <> $2)
    RETURNING lead_id, canonical_url
)
SELECT lead_id, canonical_url FROM written
UNION ALL
SELECT l.lead_id, l.canonical_url
FROM leads l JOIN x ON x.canonical_url = l.canonical_url
WHERE NOT EXISTS (SELECT 1 FROM written w WHERE w.canonical_url = l.canonical_url);
