-- day_spend_outside($1 campaign, $2 UTC day 'YYYY-MM-DD', $3 day scope id, 0 for none yet): what
-- the campaign's transfers of that day hold (pending) and cost (posted) outside that day scope
-- (made while the campaign had no day cap). A day cap counts them (migration 0033).
SELECT held, spent FROM ledger_day_spend_outside($1, $2::date, $3);
