-- estimate_skips($1 campaign name, $2 JSON array of {url (canonical), company (lower-cased,
-- trimmed; '' for none)}): of a file audience's people, how many an apply would skip as
-- campaigns/enroll does: on the do-not-contact list (by URL or company), or enrolled by another
-- campaign (a person is contacted once); and how many are this campaign's leads already (an
-- apply of a version enrolls them no more). Answers (do-not-contact, another campaign's, this
-- campaign's).
WITH x AS (
    SELECT * FROM jsonb_to_recordset($2::jsonb) AS x(url text, company text)
), d AS (
    SELECT x.url,
           EXISTS (SELECT 1 FROM do_not_contact n WHERE n.canonical_url = x.url)
           OR (x.company <> '' AND EXISTS (SELECT 1 FROM do_not_contact n
                                           WHERE n.company IS NOT NULL AND lower(n.company) = x.company)) AS dnc
    FROM x
)
SELECT count(*) FILTER (WHERE d.dnc),
       count(*) FILTER (WHERE NOT d.dnc AND EXISTS (
           SELECT 1 FROM leads l JOIN enrollments e ON e.lead_id = l.lead_id
           JOIN campaigns c ON c.campaign_id = e.campaign_id
           WHERE l.canonical_url = d.url AND c.name <> $1)),
       count(*) FILTER (WHERE NOT d.dnc AND EXISTS (
           SELECT 1 FROM leads l JOIN enrollments e ON e.lead_id = l.lead_id
           JOIN campaigns c ON c.campaign_id = e.campaign_id
           WHERE l.canonical_url = d.url AND c.name = $1))
FROM d;
