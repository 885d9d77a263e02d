-- drop_intents($1 JSON array of attempt ids): intent rows written earlier in this transaction
-- for calls whose credit reservation was refused: the calls are not made, so no trace is kept.
DELETE FROM step_attempts
WHERE attempt_id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb))
  AND outcome = 'in_flight';
