-- secrets_lost(): custom-mode webhooks whose secret a receiver marked lost (secret_lost).
SELECT account_id FROM accounts WHERE webhook_mode = 'custom' AND webhook_secret = ''::bytea;
