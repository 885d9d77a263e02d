-- campaign_budgets($1 campaign name, or '' for all): budget, state and balances per campaign.
SELECT campaign_id, campaign, state, pause_reason, COALESCE(budget, -1), COALESCE(per_account, -1),
       COALESCE(per_day, -1), available, reserved, spent, overrun, shortfall
FROM ledger_campaign_budgets
WHERE $1 = '' OR campaign = $1
ORDER BY campaign;
