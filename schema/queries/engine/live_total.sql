-- live_total: enrollments not finished in campaigns that are running (the demo's "all done").
SELECT count(*) FROM enrollments e JOIN campaigns c ON c.campaign_id = e.campaign_id AND c.state = 'active'
WHERE e.status IN ('ready', 'calling', 'waiting');
