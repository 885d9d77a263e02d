-- live_count($1 name): enrollments of the campaign not finished yet.
SELECT count(*) FROM enrollments e JOIN campaigns c ON c.campaign_id = e.campaign_id
WHERE c.name = $1 AND e.status IN ('ready', 'calling', 'waiting');
