-- wake_account($1 account id): after the account's quota overrides or its quota day's time zone
-- changed, its queued manual replies held until a later time (a quota, the gate's answer) are due
-- now, as its leads are (accounts/wake_quota_waiters): serve's sender asks the gate again with the
-- new numbers, and one still denied is held again. Returns the replies woken.
UPDATE manual_replies SET not_before = now(), updated_at = now()
WHERE account_id = $1 AND state = 'queued' AND not_before > now()
RETURNING reply_id;
