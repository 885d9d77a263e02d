-- lock_quotas($1 id or label): the account's quota overrides (migration 0007; '' when none) and
-- quota day's time zone (migration 0032; '' when not chosen), its
-- row locked until the caller's commit, so two concurrent changes (CLI, admin endpoint) apply one
-- after the other instead of one overwriting the other. An exact id wins over another account's
-- label.
SELECT account_id, COALESCE(quotas::text, ''), COALESCE(time_zone, '')
FROM accounts
WHERE account_id = $1 OR label = $1
ORDER BY (account_id = $1) DESC
LIMIT 1
FOR UPDATE;
