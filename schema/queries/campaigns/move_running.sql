-- move_running($1 campaign id, $2 the current version): `campaign apply --move-running`. The
-- campaign's live leads on an older version move to the current one when the step they are at
-- is in it with the same kind: their next steps, messages and waits are then the new version's.
-- Only leads between calls move (ready or waiting, no lease), and only those no worker holds
-- (SKIP LOCKED: a lane planning a row has it locked, and waiting for it could deadlock with the
-- locks this apply holds; campaigns/kept_running counts the rows skipped as busy). A lead keeps
-- the end of a wait its step set (an invitation's timeout, a delay); one waiting for the working
-- hours or the rate limits is due at once, so the claim decides again under the new version.
-- Returns the count moved.
WITH now_steps AS (
    SELECT s ->> 'id' AS id, s ->> 'kind' AS kind
    FROM campaign_versions v, jsonb_array_elements(v.definition -> 'steps') s
    WHERE v.campaign_id = $1 AND v.version = $2
), old_steps AS (
    SELECT v.version, s ->> 'id' AS id, s ->> 'kind' AS kind
    FROM campaign_versions v, jsonb_array_elements(v.definition -> 'steps') s
    WHERE v.campaign_id = $1 AND v.version <> $2
), movable AS (
    SELECT e.enrollment_id
    FROM enrollments e
    JOIN old_steps o ON o.version = e.version AND o.id = e.step
    JOIN now_steps n ON n.id = o.id AND n.kind = o.kind
    WHERE e.campaign_id = $1 AND e.version <> $2
      AND e.status IN ('ready', 'waiting') AND e.lease_owner IS NULL
    FOR UPDATE OF e SKIP LOCKED
), moved AS (
    UPDATE enrollments e
    SET version = $2, updated_at = now(),
        next_run_at = CASE WHEN e.wait_code IN ('schedule', 'key_rate', 'day_quota', 'week_quota', 'campaign_quota',
                                                'pacing')
                           THEN LEAST(e.next_run_at, now()) ELSE e.next_run_at END,
        due_at = CASE WHEN e.wait_code IN ('schedule', 'key_rate', 'day_quota', 'week_quota', 'campaign_quota',
                                           'pacing') AND e.due_at <> 'infinity'
                      THEN LEAST(e.due_at, now()) ELSE e.due_at END
    FROM movable m
    WHERE e.enrollment_id = m.enrollment_id
    RETURNING 1
)
SELECT count(*) FROM moved
