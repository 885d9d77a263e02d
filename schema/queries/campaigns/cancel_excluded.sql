-- cancel_excluded($1 campaign, $2 JSON array of canonical urls, $3 JSON array of lower-cased
-- companies): a new version of the campaign excludes these people (its file's `exclude:`): their
-- live enrollments in this campaign that are not in a call end as cancelled. A `calling` row is
-- left to its worker, whose copy of the campaigns' exclusions (dnc::mirror, reloaded on the
-- apply's NOTIFY) stops it before its next request and when its outcome is recorded; the apply
-- says how many. Answers (cancelled, in a call).
WITH hit AS (
    SELECT e.enrollment_id, e.status
    FROM enrollments e JOIN leads l ON l.lead_id = e.lead_id
    WHERE e.campaign_id = $1 AND e.status IN ('ready', 'waiting', 'calling')
      AND (l.canonical_url IN (SELECT jsonb_array_elements_text($2::jsonb))
           OR lower(btrim(l.fields->>'company')) IN (SELECT jsonb_array_elements_text($3::jsonb)))
),
cancelled AS (
    UPDATE enrollments e
    SET status = 'cancelled', reason = 'stopped: excluded by the campaign', wait_code = NULL, reconcile = false,
        lease_owner = NULL, lease_expires_at = NULL, finished_at = now(), updated_at = now()
    FROM hit
    WHERE e.enrollment_id = hit.enrollment_id AND hit.status <> 'calling'
    RETURNING 1
)
SELECT (SELECT count(*) FROM cancelled), (SELECT count(*) FROM hit WHERE status = 'calling');
