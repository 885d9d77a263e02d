-- move_running($1 campaign id, $2 the current version): `campaign apply --move-running`. The
-- campaign's live leads on an older version move to the current one when the step they are at
-- is in it with the same kind: their next steps, messages and waits are then the new version's.
-- Only leads between calls move (ready or waiting, no lease): a lead in a call settles under the
-- version its call was planned with, and a lane planning a row holds its lock, so this statement
-- waits for it and then sees the row as `calling` and leaves it. A lead keeps its due time: a
-- wait it is in ends when it was to end. Returns the count moved.
WITH now_steps AS (
    SELECT s ->> 'id' AS id, s ->> 'kind' AS kind
    FROM campaign_versions v, jsonb_array_elements(v.definition -> 'steps') s
    WHERE v.campaign_id = $1 AND v.version = $2
), old_steps AS (
    SELECT v.version, s ->> 'id' AS id, s ->> 'kind' AS kind
    FROM campaign_versions v, jsonb_array_elements(v.definition -> 'steps') s
    WHERE v.campaign_id = $1 AND v.version <> $2
), moved AS (
    UPDATE enrollments e SET version = $2, updated_at = now()
    FROM old_steps o JOIN now_steps n ON n.id = o.id AND n.kind = o.kind
    WHERE e.campaign_id = $1 AND e.version = o.version AND e.step = o.id
      AND e.status IN ('ready', 'waiting') AND e.lease_owner IS NULL
    RETURNING 1
)
SELECT count(*) FROM moved
