-- set_state($1 reply, $2 state, $3 reason, $4 not_before (seconds from now)): a reply leaves
-- flight (or waits): final states get their finish time, `sent` its send time.
UPDATE manual_replies
SET state = $2, reason = $3, not_before = now() + make_interval(secs => $4::double precision),
    lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
    sent_at = CASE WHEN $2 = 'sent' THEN now() ELSE sent_at END,
    finished_at = CASE WHEN $2 IN ('sent', 'failed', 'refused') THEN now() ELSE NULL END
WHERE reply_id = $1;
