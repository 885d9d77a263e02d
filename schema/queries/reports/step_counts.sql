-- step_counts($1 campaign name): the campaign's enrollments per step and status (campaign show),
-- and how many of them replied after their sequence ended (status done, a reply recorded: the
-- funnel counts those as replied, the status stays done).
SELECT e.step, e.status::text, count(*),
       count(*) FILTER (WHERE e.status = 'done' AND e.replied_at IS NOT NULL)
FROM enrollments e JOIN campaigns c ON c.campaign_id = e.campaign_id
WHERE c.name = $1
GROUP BY e.step, e.status
ORDER BY e.step, e.status;
