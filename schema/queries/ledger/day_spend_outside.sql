-- day_spend_outside($1 campaign, $2 UTC day 'YYYY-MM-DD', $3 day scope id, 0 for none yet): what
-- the campaign's transfers of that day hold or cost outside that day scope (made while the
-- campaign had no day cap): held (pending: reserved) and spent (posted). A day cap counts them.
SELECT COALESCE(sum(reserved) FILTER (WHERE state = 'pending'), 0) AS held,
       COALESCE(sum(posted) FILTER (WHERE state = 'posted'), 0) AS spent
FROM ledger_transfers
WHERE campaign_id = $1 AND day = $2::date AND NOT ($3::bigint = ANY(scopes));
