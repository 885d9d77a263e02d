-- quarantine($1 source id, $2 account, $3 channel, $4 reason, $5 raw body): keeps an event that
-- passed verification but could not be read, once per source id. Returns its id when new.
INSERT INTO events_quarantine (source_id, account_id, channel, reason, body)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (source_id) DO NOTHING
RETURNING quarantine_id;
