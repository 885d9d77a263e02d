-- adopt_time_zone($1 the campaign's time zone, $2 its senders as a JSON array of ids): a sender
-- whose quota day has no time zone yet (migration 0032) takes the campaign's, in the apply's
-- transaction: the first campaign applied with an account chooses the day its quotas count in.
-- updated_at stays: it dates what the API said of the account (intake's quiet-events check reads it).
UPDATE accounts
SET time_zone = $1
WHERE account_id IN (SELECT jsonb_array_elements_text($2::jsonb)) AND time_zone IS NULL
