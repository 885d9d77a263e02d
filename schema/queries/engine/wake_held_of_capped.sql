-- wake_held_of_capped($1 a JSON array of [campaign id, sender account id or ""]): those caps were
-- found used up in this lane transaction, or by this lane's wake-up a moment ago (its second look,
-- engine/pg_lane_store.hpp: capped_wake_again): a campaign's day cap (""), or its cap on one sender.
-- Their leads that the limits gate holds back for a moment (the key's rate or cooldown, an
-- account's pacing or cooldown) become due now: their next cycle finds the cap used up and has
-- them wait for it (engine/cycle_plan.cpp: wait_for_standing_caps), instead of each coming back
-- on its own turn of the key's rate (one lead an interval behind a busy key). A lead whose call
-- costs nothing is gated again as before. The campaigns' live rows by their own index; rows
-- another lane holds are skipped (it rewrites them).
WITH capped AS (
    SELECT (value->>0)::bigint AS campaign_id, value->>1 AS account_id FROM jsonb_array_elements($1::jsonb)
), woken AS (
    UPDATE enrollments
    SET next_run_at = now(), due_at = now(), updated_at = now()
    WHERE enrollment_id IN (
        SELECT e.enrollment_id FROM enrollments e
        WHERE e.campaign_id = ANY(ARRAY(SELECT campaign_id FROM capped))
          AND e.status IN ('ready', 'calling', 'waiting') AND e.status = 'ready'
          AND e.due_at > now() AND e.due_at <> 'infinity'
          AND e.wait_code IN ('key_rate', 'key_cooldown', 'account_cooldown', 'pacing', 'throttled')
          AND EXISTS (SELECT 1 FROM capped c
                      WHERE c.campaign_id = e.campaign_id AND (c.account_id = '' OR c.account_id = e.account_id))
        FOR UPDATE OF e SKIP LOCKED)
    RETURNING 1
)
SELECT count(*) FROM woken
