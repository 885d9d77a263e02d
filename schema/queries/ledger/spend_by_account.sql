-- spend_by_account($1 campaign id): spend of one campaign per account (view ledger_spend_by_account).
SELECT sender, calls, pending, posted_calls, voided, reserved_pending, reserved_posted, posted
FROM ledger_spend_by_account
WHERE campaign_id = $1
ORDER BY 1;
