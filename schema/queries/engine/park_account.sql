-- park_account($1 account id): the account is disconnected or inactive; its live enrollments
-- leave the head of the claim index until engine/unpark (reconnect). Rare: no index on
-- account_id alone (it would cost every hot-path update), so this scans.
UPDATE enrollments SET due_at = 'infinity'
WHERE account_id = $1 AND status IN ('ready', 'calling', 'waiting') AND due_at <> 'infinity';
