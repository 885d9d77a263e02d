-- webhook_get($1 account): what serve stored of the account's webhook.
SELECT COALESCE(webhook_id, ''), COALESCE(webhook_mode, ''), COALESCE(webhook_url, ''), webhook_secret,
       last_event, poll_cursor, poll_since
FROM accounts WHERE account_id = $1;
