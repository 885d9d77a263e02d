-- paused_count(): campaigns paused because the key had no credits (pause code 'credits'): while
-- there are any, serve reads the balance every few seconds rather than every credits_poll_seconds,
-- so that a top-up resumes them within seconds.
SELECT count(*) FROM campaigns WHERE state = 'paused' AND pause_code = 'credits';
