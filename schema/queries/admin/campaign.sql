-- campaign($1 name): one campaign with its enrollment counts (admin GET /v1/campaigns/{name}).
SELECT c.campaign_id, c.name, c.state::text, COALESCE(c.pause_reason, ''), c.current_version,
       to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       (SELECT count(*) FROM enrollments e WHERE e.campaign_id = c.campaign_id),
       (SELECT count(*) FROM enrollments e WHERE e.campaign_id = c.campaign_id
          AND e.status IN ('ready', 'calling', 'waiting'))
FROM campaigns c WHERE c.name = $1;
