-- reply($1 reply id): one manual reply as the API shows it.
SELECT r.reply_id, r.idempotency_key, r.event_id, r.account_id, c.name, r.lead_id, l.profile_url, r.body, r.state,
       r.reason, r.tries, r.credits, r.requested_by, to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(r.sent_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(r.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(r.not_before AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), r.attempt_id
FROM manual_replies r
JOIN campaigns c USING (campaign_id)
JOIN leads l USING (lead_id)
WHERE r.reply_id = $1;
