SELECT c.name, c.state::text, COALESCE(c.pause_reason, ''), c.current_version,
       count(e.enrollment_id) AS enrollments,
       count(e.enrollment_id) FILTER (WHERE e.status IN ('ready', 'calling', 'waiting')) AS live
FROM campaigns c LEFT JOIN enrollments e ON e.campaign_id = c.campaign_id
GROUP BY c.campaign_id ORDER BY c.name;
