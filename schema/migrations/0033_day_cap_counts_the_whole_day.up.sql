-- A campaign's day cap counts all of that UTC day's spend of the campaign, also what it spent
-- while it had no day cap (engine/ledger.cpp: a day scope is funded with the cap less the day's
-- spend outside it, ledger/ensure_scopes and ledger/budget_scopes). Reading a day's spend of one
-- campaign is by (campaign_id, day); the index on campaign_id alone is replaced, since the new one
-- serves every query that one did. day never changes after the insert, so a settle's UPDATE stays
-- HOT as before.
CREATE INDEX IF NOT EXISTS ledger_transfers_campaign_day ON ledger_transfers (campaign_id, day);
DROP INDEX IF EXISTS ledger_transfers_campaign;

-- What a campaign's transfers of one UTC day hold (pending: reserved) and cost (posted) outside
-- one of its scopes (0: outside any): the spend a day cap counts that its day scope did not draw.
-- Read by ledger/ensure_scopes (a new day scope's funding), ledger/day_spend_outside (set_budget)
-- and ledger/cap_use (budget show).
CREATE OR REPLACE FUNCTION ledger_day_spend_outside(p_campaign bigint, p_day date, p_scope bigint,
                                                    OUT held bigint, OUT spent bigint)
LANGUAGE sql STABLE AS $$
    SELECT COALESCE(sum(reserved) FILTER (WHERE state = 'pending'), 0)::bigint,
           COALESCE(sum(posted) FILTER (WHERE state = 'posted'), 0)::bigint
    FROM ledger_transfers
    WHERE campaign_id = p_campaign AND day = p_day AND NOT (p_scope = ANY(scopes))
$$;
