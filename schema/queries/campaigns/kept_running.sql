-- kept_running($1 campaign id, $2 the current version): the campaign's live leads still on an
-- older version (after campaigns/move_running, whose writes this statement sees), by step and
-- why: 'in a call' (or waiting to reconcile one), 'not in the version', 'now of kind <kind>'
-- (its kind changed), or 'busy: a worker held it' (skipped while a lane held its row: apply
-- again). The most first.
WITH now_steps AS (
    SELECT s ->> 'id' AS id, s ->> 'kind' AS kind
    FROM campaign_versions v, jsonb_array_elements(v.definition -> 'steps') s
    WHERE v.campaign_id = $1 AND v.version = $2
), old_steps AS (
    SELECT v.version, s ->> 'id' AS id, s ->> 'kind' AS kind
    FROM campaign_versions v, jsonb_array_elements(v.definition -> 'steps') s
    WHERE v.campaign_id = $1 AND v.version <> $2
)
SELECT e.step,
       CASE WHEN e.status = 'calling' OR e.lease_owner IS NOT NULL THEN 'in a call'
            WHEN n.id IS NULL THEN 'not in the version'
            WHEN o.kind IS DISTINCT FROM n.kind THEN 'now of kind ' || n.kind
            ELSE 'busy: a worker held it' END AS why,
       count(*)
FROM enrollments e
LEFT JOIN old_steps o ON o.version = e.version AND o.id = e.step
LEFT JOIN now_steps n ON n.id = e.step
WHERE e.campaign_id = $1 AND e.version <> $2 AND e.status IN ('ready', 'calling', 'waiting')
GROUP BY 1, 2
ORDER BY 3 DESC, 1, 2
