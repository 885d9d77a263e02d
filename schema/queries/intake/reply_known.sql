-- reply_known($1 account, $2 lead): whether a message from the lead on the account is stored
-- already: the webhook or the stream stored its reply while the sweep read the inbox (the list of
-- leads to look for was read at the sweep's start), and the sweep does not store its own copy
-- under another id (the inbox showed the reply twice). As accepted_known; the index of events
-- (lead, account).
SELECT EXISTS (SELECT 1 FROM events
               WHERE lead_id = $2 AND account_id = $1 AND kind = 'message');
