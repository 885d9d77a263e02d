-- mark($1 lead, $2 account, $3 accepted: an accepted_invitation event, $4 replied: a message
-- event): the event's milestone on every enrollment of the lead on this account, finished or not
-- (a reply after the last step still counts as a reply). Which event kind sets which milestone is
-- decided in C++ (engine/store.cpp, engine::event_kind), not by matching kind names here.
UPDATE enrollments
SET accepted_at = CASE WHEN $3 THEN COALESCE(accepted_at, now()) ELSE accepted_at END,
    replied_at = CASE WHEN $4 THEN COALESCE(replied_at, now()) ELSE replied_at END
WHERE lead_id = $1 AND account_id = $2;
