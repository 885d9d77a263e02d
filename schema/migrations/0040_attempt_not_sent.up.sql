-- 0040 attempt outcome not_sent: a follow-up of a stop_on_reply campaign whose read before it
-- found the lead's reply sends nothing. Its attempt was recorded `ok`, which the conversation,
-- the milestones (messaged_at) and `leads show` read as a message that went out. not_sent took
-- no effect (attempt_took_effect and attempt_may_have_taken_effect, migration 0018, leave it out
-- by naming the others).
ALTER TYPE attempt_outcome ADD VALUE IF NOT EXISTS 'not_sent';
