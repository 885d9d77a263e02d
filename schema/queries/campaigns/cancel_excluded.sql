-- cancel_excluded($1 campaign, $2 JSON array of canonical urls, $3 JSON array of lower-cased
-- companies): a new version of the campaign excludes these people (its file's `exclude:`): their
-- live enrollments in this campaign that are not in a call end as cancelled. A `calling` row is
-- left to its worker.
UPDATE enrollments e
SET status = 'cancelled', reason = 'stopped: excluded by the campaign', wait_code = NULL, reconcile = false, lease_owner = NULL,
    lease_expires_at = NULL, finished_at = now(), updated_at = now()
FROM leads l
WHERE e.campaign_id = $1 AND l.lead_id = e.lead_id AND e.status IN ('ready', 'waiting')
  AND (l.canonical_url IN (SELECT jsonb_array_elements_text($2::jsonb))
       OR lower(btrim(l.fields->>'company')) IN (SELECT jsonb_array_elements_text($3::jsonb)));
