-- wake_held_of_capped($1 campaign ids, a JSON array): those campaigns' day caps were found used
-- up in this lane transaction. Their leads that the limits gate holds back for a moment (the
-- key's rate or cooldown, an account's pacing or cooldown) become due now: their next cycle
-- finds the cap used up and has them wait for it (engine/cycle_plan.cpp: wait_for_standing_caps),
-- instead of each coming back on its own turn of the key's rate (one lead an interval behind a
-- busy key). A lead whose call costs nothing is gated again as before. The campaign's live rows
-- by their own index; rows another lane holds are skipped (it rewrites them).
WITH woken AS (
    UPDATE enrollments
    SET next_run_at = now(), due_at = now(), updated_at = now()
    WHERE enrollment_id IN (
        SELECT enrollment_id FROM enrollments
        WHERE campaign_id = ANY(ARRAY(SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb)))
          AND status IN ('ready', 'calling', 'waiting') AND status = 'ready'
          AND due_at > now() AND due_at <> 'infinity'
          AND wait_code IN ('key_rate', 'key_cooldown', 'account_cooldown', 'pacing', 'throttled')
        FOR UPDATE SKIP LOCKED)
    RETURNING 1
)
SELECT count(*) FROM woken
