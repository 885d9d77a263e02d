-- live_without_company(): the live enrollments whose lead has no company field (blank counts as
-- none): a do-not-contact company cannot match them (dnc_matching_leads reads the lead's company).
-- Leads from a search have none; said when a company entry is added, so that "0 stopped" is not
-- read as "nobody of that company is in a campaign".
SELECT count(*)
FROM enrollments e
JOIN leads l ON l.lead_id = e.lead_id
WHERE e.status IN ('ready', 'calling', 'waiting')
  AND COALESCE(btrim(l.fields->>'company'), '') = '';
