-- find_transfers($1 attempt ids as a bigint array literal '{1,2}'): the transfers those attempts
-- already have. = ANY(array): one probe of the unique attempt_id index per id.
SELECT attempt_id, state::text, reserved, COALESCE(posted, 0)
FROM ledger_transfers
WHERE attempt_id = ANY($1::bigint[]);
