-- step_counts($1 campaign name): the campaign's enrollments per step, the step's kind in the
-- lead's own version ('' for none: a finished lead's step is '') and status (campaign show), and
-- how many of them replied after their sequence ended (status done, a reply recorded: the funnel
-- counts those as replied, the status stays done). Leads kept on an older version whose step
-- has another kind there are counted apart from the current version's step of that id.
WITH c AS (SELECT campaign_id FROM campaigns WHERE name = $1),
g AS (
    SELECT e.step, e.version, e.status::text AS status, count(*) AS n,
           count(*) FILTER (WHERE e.status = 'done' AND e.replied_at IS NOT NULL) AS replied_after
    FROM enrollments e JOIN c ON c.campaign_id = e.campaign_id
    GROUP BY e.step, e.version, e.status
)
SELECT g.step, COALESCE(k.kind, ''), g.status, sum(g.n)::bigint, sum(g.replied_after)::bigint
FROM g CROSS JOIN c
LEFT JOIN LATERAL (
    SELECT s->>'kind' AS kind
    FROM campaign_versions v, jsonb_array_elements(v.definition->'steps') s
    WHERE v.campaign_id = c.campaign_id AND v.version = g.version AND s->>'id' = g.step
    LIMIT 1
) k ON true
GROUP BY g.step, COALESCE(k.kind, ''), g.status
ORDER BY 1, 2, 3;
