-- lead_count($1 name): the campaign's leads, finished or not (campaign estimate: those its search
-- may find again, which an apply does not enroll twice).
SELECT count(*) FROM enrollments e JOIN campaigns c ON c.campaign_id = e.campaign_id WHERE c.name = $1;
