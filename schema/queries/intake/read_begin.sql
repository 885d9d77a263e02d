-- read_begin($1 campaign, $2 account, $3 action, $4 credits at most): a billed read of serve's is
-- about to leave (migration 0047); its id.
INSERT INTO reads_in_flight (campaign_id, account_id, action, credits) VALUES ($1, $2, $3, $4)
RETURNING read_id;
