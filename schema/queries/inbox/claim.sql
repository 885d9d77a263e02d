-- claim(): the next manual reply serve's sender should look at, locked (other replicas skip it):
-- queued or to reconcile and due, or in flight under an expired lease (its sender stopped during
-- the call). With what the call needs: the lead's profile, the campaign (its version's
-- definition is read apart), the account's availability, quotas and quota day, and whether the person or
-- their company is on the do-not-contact list now.
SELECT r.reply_id, r.state, COALESCE(r.attempt_id, 0), r.tries, r.body, r.created_at,
       r.account_id, r.campaign_id, r.enrollment_id, l.profile_url, en.version,
       c.state::text, a.connected, COALESCE(a.quotas::text, ''),
       EXISTS (SELECT 1 FROM do_not_contact d
               WHERE d.canonical_url = l.canonical_url
                  OR (d.company IS NOT NULL AND lower(d.company) = lower(btrim(COALESCE(l.fields->>'company', ''))))),
       a.api_status, COALESCE(a.time_zone, '')
FROM manual_replies r
JOIN leads l ON l.lead_id = r.lead_id
JOIN enrollments en ON en.enrollment_id = r.enrollment_id
JOIN campaigns c ON c.campaign_id = r.campaign_id
JOIN accounts a ON a.account_id = r.account_id
WHERE (r.state IN ('queued', 'reconcile') AND r.not_before <= now())
   OR (r.state = 'in_flight' AND r.lease_expires_at < now())
ORDER BY r.not_before, r.reply_id
LIMIT 1
FOR UPDATE OF r SKIP LOCKED;
