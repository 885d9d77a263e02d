-- status_counts($1 campaign id): its enrollments per status (the enrollments_campaign_status index).
SELECT status::text, count(*) FROM enrollments WHERE campaign_id = $1 GROUP BY status ORDER BY status;
