-- use_before_search($1 campaign, $2 UTC day 'YYYY-MM-DD'): what an apply reads before it sends an
-- audience search (engine/campaign_apply: search_refusal): what the campaign's budget holds for
-- calls in flight and has spent, and what the day's transfers hold and cost (all of them, as its
-- day cap counts them, also those made while it had no cap).
SELECT COALESCE((SELECT reserved + spent FROM ledger_campaign_budgets WHERE campaign_id = $1), 0)::bigint,
       (SELECT held + spent FROM ledger_day_spend_outside($1, $2::date, 0))::bigint
