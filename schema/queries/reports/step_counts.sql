-- step_counts($1 campaign name): the campaign's enrollments per step and status (campaign show).
SELECT e.step, e.status::text, count(*)
FROM enrollments e JOIN campaigns c ON c.campaign_id = e.campaign_id
WHERE c.name = $1
GROUP BY e.step, e.status
ORDER BY e.step, e.status;
