-- versions($1 campaign id): every stored version of a campaign, oldest first (bounded by the
-- number of applies that changed the definition).
SELECT v.version, v.digest, to_char(v.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       v.version = c.current_version,
       (SELECT count(*) FROM enrollments e WHERE e.campaign_id = v.campaign_id AND e.version = v.version)
FROM campaign_versions v JOIN campaigns c USING (campaign_id)
WHERE v.campaign_id = $1
ORDER BY v.version;
