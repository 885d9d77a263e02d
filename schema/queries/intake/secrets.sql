-- secrets(): every custom-mode webhook's account and encrypted secret (receivers verify with them).
SELECT account_id, webhook_secret FROM accounts
WHERE webhook_mode = 'custom' AND webhook_secret IS NOT NULL;
