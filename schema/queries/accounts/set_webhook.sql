UPDATE accounts SET webhook_id = NULLIF($2, ''), updated_at = now() WHERE account_id = $1;
