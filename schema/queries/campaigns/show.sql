-- show($1 name): the campaign, its dates and its current version's definition (campaign show,
-- GET /v1/campaigns/{name}).
SELECT c.campaign_id, c.state::text, COALESCE(c.pause_reason, ''), c.current_version,
       COALESCE(to_char(c.start_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ''),
       COALESCE(to_char(c.end_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ''),
       to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       v.definition::text
FROM campaigns c JOIN campaign_versions v ON v.campaign_id = c.campaign_id AND v.version = c.current_version
WHERE c.name = $1;
