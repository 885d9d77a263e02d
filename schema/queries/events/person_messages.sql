-- person_messages($1 account, $2 person's canonical profile URL): that person's newest stored
-- messages on the account (up to 5, newest first: the payload as received and when it was stored,
-- in epoch milliseconds), as intake/lead_messages gives a lead's: the catch-up sweep's copy of a
-- message is compared with them under events/lock_person, just before it is inserted.
SELECT ev.payload::text, (extract(epoch FROM ev.received_at) * 1000)::bigint
FROM events ev
JOIN leads l ON l.lead_id = ev.lead_id
WHERE l.canonical_url = $2 AND ev.account_id = $1 AND ev.kind = 'message'
ORDER BY ev.event_id DESC
LIMIT 5;
