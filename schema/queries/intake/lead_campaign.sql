-- lead_campaign($1 profile canonical URL, $2 account): the campaign that serve's read about that
-- person through that account is charged to: the person's live enrollment on the account, else
-- their latest one there. Nothing when the person is no lead of the account.
SELECT e.campaign_id
FROM enrollments e JOIN leads l USING (lead_id)
WHERE l.canonical_url = $1 AND e.account_id = $2
ORDER BY (e.status IN ('ready', 'calling', 'waiting')) DESC, e.enrollment_id DESC
LIMIT 1;
