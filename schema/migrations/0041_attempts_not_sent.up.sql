-- 0041 the follow-ups recorded as sent before 0040 although nothing was sent: the read before the
-- follow-up found the lead's reply, the lead ended replied with the machine's reason for it, and
-- that call's attempt (the lead's last) was stored `ok`. (The reason is the one written before
-- 0040; the machine's words for it have changed since.) It becomes not_sent, so that the
-- conversation and `leads show` stop listing a message that never went out. (A migration of its
-- own: a value added to an enum is usable only once its transaction has committed.)
UPDATE step_attempts a SET outcome = 'not_sent'
FROM enrollments e
WHERE a.enrollment_id = e.enrollment_id
  AND e.status = 'replied'
  AND e.reason = 'the lead replied (found before the follow-up, which was not sent)'
  AND a.call = 'send' AND a.outcome = 'ok' AND NOT a.reconcile
  AND a.attempt_id = (SELECT max(b.attempt_id) FROM step_attempts b WHERE b.enrollment_id = e.enrollment_id);
