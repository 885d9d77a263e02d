-- park_account($1 account id): the account is disconnected or inactive; its live enrollments
-- leave the head of the claim index until engine/unpark (reconnect). Rare: no index on
-- account_id alone (it would cost every hot-path update), so this scans.
-- Rows locked by another worker's transaction are skipped (no lock wait inside a worker's
-- cycle): that worker rewrites them, and the claim never picks a disconnected account's rows.
UPDATE enrollments SET due_at = 'infinity'
WHERE enrollment_id IN (SELECT enrollment_id FROM enrollments
                        WHERE account_id = $1 AND status IN ('ready', 'calling', 'waiting')
                          AND due_at <> 'infinity'
                        FOR UPDATE SKIP LOCKED);
