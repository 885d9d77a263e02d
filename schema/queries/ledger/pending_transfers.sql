-- pending_transfers($1 JSON array of attempt ids): the pending transfers of those attempts,
-- locked FOR UPDATE (in transfer_id order) so that two settles of the same attempt cannot both
-- move it: the second waits, then finds it no longer pending and leaves it. One row per scope the
-- transfer reserved from (its reserve entries). Settles lock transfers first, then the scopes'
-- available accounts (lock_available), always in that order.
WITH t AS MATERIALIZED (
    SELECT transfer_id, attempt_id, campaign_id, reserved
    FROM ledger_transfers
    WHERE attempt_id IN (SELECT jsonb_array_elements_text($1::jsonb)::bigint) AND state = 'pending'
    ORDER BY transfer_id
    FOR UPDATE
)
SELECT t.transfer_id, t.attempt_id, t.campaign_id, t.reserved, e.scope_id, s.kind::text
FROM t
JOIN ledger_entries e ON e.transfer_id = t.transfer_id AND e.kind = 'reserve'
JOIN ledger_scopes s ON s.scope_id = e.scope_id
ORDER BY t.transfer_id, e.scope_id;
