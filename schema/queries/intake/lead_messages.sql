-- lead_messages($1 account, $2 lead): the lead's newest stored messages on the account (up to 5,
-- newest first: the payload as received and when it was stored, in epoch milliseconds), as
-- sweep_replied gives them for every replied lead; read again just before the sweep stores a
-- later message, which the webhook or the stream may have stored meanwhile.
SELECT ev.payload::text, (extract(epoch FROM ev.received_at) * 1000)::bigint
FROM events ev
WHERE ev.lead_id = $2 AND ev.account_id = $1 AND ev.kind = 'message'
ORDER BY ev.event_id DESC
LIMIT 5;
