-- spend_by_action($1 campaign id): spend of one campaign per action (view ledger_spend_by_action).
SELECT action, calls, pending, posted_calls, voided, reserved_pending, reserved_posted, posted
FROM ledger_spend_by_action
WHERE campaign_id = $1
ORDER BY 1;
