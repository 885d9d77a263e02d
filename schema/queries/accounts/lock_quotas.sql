-- lock_quotas($1 id or label): the account's quota overrides (migration 0007; '' when none), its
-- row locked until the caller's commit, so two concurrent changes (CLI, admin endpoint) apply one
-- after the other instead of one overwriting the other. An exact id wins over another account's
-- label.
SELECT account_id, COALESCE(quotas::text, '')
FROM accounts
WHERE account_id = $1 OR label = $1
ORDER BY (account_id = $1) DESC
LIMIT 1
FOR UPDATE;
