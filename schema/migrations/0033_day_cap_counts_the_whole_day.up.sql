-- A campaign's day cap counts all of that UTC day's spend of the campaign, also what it spent
-- while it had no day cap (engine/ledger.cpp: a day scope is funded with the cap less the day's
-- spend outside it, ledger/ensure_scopes and ledger/budget_scopes). Reading a day's spend of one
-- campaign is by (campaign_id, day); the index on campaign_id alone is replaced, since the new one
-- serves every query that one did. day never changes after the insert, so a settle's UPDATE stays
-- HOT as before.
CREATE INDEX IF NOT EXISTS ledger_transfers_campaign_day ON ledger_transfers (campaign_id, day);
DROP INDEX IF EXISTS ledger_transfers_campaign;
