-- park_campaign($1 campaign id): the campaign was paused. Its live enrollments leave the head of
-- the claim index (due_at 'infinity'), so workers never walk past them; next_run_at keeps the
-- machine's own time. engine/unpark brings them back on resume.
UPDATE enrollments SET due_at = 'infinity'
WHERE campaign_id = $1 AND status IN ('ready', 'calling', 'waiting') AND due_at <> 'infinity';
