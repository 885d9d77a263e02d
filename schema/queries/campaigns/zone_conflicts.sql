-- zone_conflicts($1 campaign id, $2 its time zone, $3 its senders as a JSON array of ids): the
-- other live campaigns (active or paused) with leads on one of these senders whose schedule is in
-- another time zone, with the sender: each campaign counts an account's day quotas by its own
-- local day, so on one calendar day such an account may spend a day quota in each zone.
SELECT DISTINCT e.account_id, c.name, v.definition -> 'schedule' ->> 'time_zone'
FROM campaigns c
JOIN campaign_versions v ON v.campaign_id = c.campaign_id AND v.version = c.current_version
JOIN LATERAL (
    SELECT DISTINCT en.account_id
    FROM enrollments en
    WHERE en.campaign_id = c.campaign_id AND en.account_id IN (SELECT jsonb_array_elements_text($3::jsonb))
      AND en.status IN ('ready', 'calling', 'waiting')
) e ON true
WHERE c.campaign_id <> $1 AND c.state IN ('active', 'paused')
  AND v.definition -> 'schedule' ->> 'time_zone' IS DISTINCT FROM $2
ORDER BY 1, 2
