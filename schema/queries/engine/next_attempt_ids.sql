-- next_attempt_ids($1 count): ids for the intent rows about to be written. Taken first because
-- the credit reservation of each call is keyed by its attempt id (ledger idempotency) and is
-- made in the same transaction before the intent rows exist.
SELECT nextval(pg_get_serial_sequence('step_attempts', 'attempt_id')) FROM generate_series(1, $1);
