-- spend_by_day($1 campaign id): spend of one campaign per day (view ledger_spend_by_day).
SELECT day::text, calls, pending, posted_calls, voided, reserved_pending, reserved_posted, posted
FROM ledger_spend_by_day
WHERE campaign_id = $1
ORDER BY 1;
