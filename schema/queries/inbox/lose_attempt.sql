-- lose_attempt($1 attempt): the sender that made this call stopped before recording its outcome.
UPDATE step_attempts
SET outcome = 'uncertain', error = 'outcome lost: the sender stopped before recording it', finished_at = now()
WHERE attempt_id = $1 AND outcome = 'in_flight';
