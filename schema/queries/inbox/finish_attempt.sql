-- finish_attempt($1 attempt, $2 outcome, $3 error, $4 credits): a manual reply's call recorded.
-- Only while still in flight: a call already closed (as lost) keeps what was written then.
UPDATE step_attempts SET outcome = $2::attempt_outcome, error = $3, credits = $4, finished_at = now()
WHERE attempt_id = $1 AND outcome = 'in_flight';
