-- accepted_known($1 account, $2 lead): whether an acceptance of the lead on the account is stored
-- already (by the webhook or stream while the sweep ran: the sweep neither pays for its check nor
-- stores its own copy of it). The index of events (lead, account).
SELECT EXISTS (SELECT 1 FROM events
               WHERE lead_id = $2 AND account_id = $1 AND kind = 'accepted_invitation');
