-- mark($1 lead, $2 account, $3 kind): the event's milestone on every enrollment of the lead on
-- this account, finished or not (a reply after the last step still counts as a reply).
UPDATE enrollments
SET accepted_at = CASE WHEN $3 = 'accepted_invitation' THEN COALESCE(accepted_at, now()) ELSE accepted_at END,
    replied_at = CASE WHEN $3 = 'message' THEN COALESCE(replied_at, now()) ELSE replied_at END
WHERE lead_id = $1 AND account_id = $2 AND $3 IN ('accepted_invitation', 'message');
