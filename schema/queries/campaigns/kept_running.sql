-- kept_running($1 campaign id, $2 the current version): the campaign's live leads still on an
-- older version (after campaigns/move_running), by step and why: 'in a call', 'not in the
-- version', or 'a <kind> step in the version' (its kind changed). The most first.
WITH now_steps AS (
    SELECT s ->> 'id' AS id, s ->> 'kind' AS kind
    FROM campaign_versions v, jsonb_array_elements(v.definition -> 'steps') s
    WHERE v.campaign_id = $1 AND v.version = $2
)
SELECT e.step,
       CASE WHEN e.status = 'calling' OR e.lease_owner IS NOT NULL THEN 'in a call'
            WHEN n.id IS NULL THEN 'not in the version'
            ELSE 'a ' || n.kind || ' step in the version' END AS why,
       count(*)
FROM enrollments e LEFT JOIN now_steps n ON n.id = e.step
WHERE e.campaign_id = $1 AND e.version <> $2 AND e.status IN ('ready', 'calling', 'waiting')
GROUP BY 1, 2
ORDER BY 3 DESC, 1, 2
