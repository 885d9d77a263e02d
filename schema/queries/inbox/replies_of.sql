-- replies_of($1 event id): the manual replies to one reply, oldest first.
SELECT reply_id FROM manual_replies WHERE event_id = $1 ORDER BY reply_id;
