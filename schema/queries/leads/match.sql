-- match($1 campaign id, $2 JSON array of lead ids ('[]': any), $3 state filter: '' any, 'live'
-- ready/calling/waiting, or one status): the campaign's enrollments a lead operation names, in
-- enrollment order, without locking them (leads/lock locks those it may change).
SELECT e.enrollment_id, e.lead_id, e.status::text
FROM enrollments e
WHERE e.campaign_id = $1
  AND ($2::jsonb = '[]'::jsonb OR e.lead_id IN (SELECT (jsonb_array_elements_text($2::jsonb))::bigint))
  AND ($3 = '' OR ($3 = 'live' AND e.status IN ('ready', 'calling', 'waiting')) OR e.status::text = $3)
ORDER BY e.enrollment_id;
