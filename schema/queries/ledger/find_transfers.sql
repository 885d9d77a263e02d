-- find_transfers($1 JSON array of attempt ids): the transfers those attempts already have.
SELECT attempt_id, state::text, reserved, COALESCE(posted, 0)
FROM ledger_transfers
WHERE attempt_id IN (SELECT jsonb_array_elements_text($1::jsonb)::bigint);
