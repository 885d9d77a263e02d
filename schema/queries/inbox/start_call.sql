-- start_call($1 reply, $2 attempt id, $3 owner, $4 lease seconds, $5 enrollment, $6 reconcile,
-- $7 text): the intent of the call (a step_attempts row, committed before the call leaves) and
-- the reply's lease. The intent names the reply's own enrollment (which manual_replies' foreign
-- key keeps existing; step_attempts has no key of its own since migration 0029). When $5 is not
-- it, no intent is written and the statement fails on the reply's attempt_id, whose foreign key
-- finds no intent: the transaction rolls back and nothing is sent.
WITH intent AS (
    INSERT INTO step_attempts (attempt_id, enrollment_id, step, call, reconcile, attempt, body, worker)
    SELECT $2, r.enrollment_id, 'manual_reply', 'send', $6, r.tries, $7, $3
    FROM manual_replies r WHERE r.reply_id = $1 AND r.enrollment_id = $5
)
UPDATE manual_replies
SET state = 'in_flight', attempt_id = $2, tries = tries + 1, lease_owner = $3,
    lease_expires_at = now() + make_interval(secs => $4::double precision), updated_at = now()
WHERE reply_id = $1;
