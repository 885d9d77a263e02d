-- live_without_company($1 campaign): the campaign's live enrollments whose lead has no company
-- field (blank counts as none): the file's `exclude: companies:` cannot match them, as a
-- do-not-contact company cannot (dnc/live_without_company). Leads from a search have none.
SELECT count(*)
FROM enrollments e
JOIN leads l ON l.lead_id = e.lead_id
WHERE e.campaign_id = $1 AND e.status IN ('ready', 'calling', 'waiting')
  AND COALESCE(btrim(l.fields->>'company'), '') = '';
