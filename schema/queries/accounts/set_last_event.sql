-- set_last_event($1 account, $2 event id): hosted mode resumes the stream/poll after it.
UPDATE accounts SET last_event = $2 WHERE account_id = $1;
