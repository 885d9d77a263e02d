-- secret_lost($1 account_id, $2 the sealed secret the receiver holds): marks the account's webhook
-- secret lost (an empty value: secrets() skips it, secrets_lost() lists it, and ensure_one rotates
-- it, as a secret it cannot open), unless another has been stored since.
UPDATE accounts SET webhook_secret = ''::bytea
WHERE account_id = $1 AND webhook_mode = 'custom' AND webhook_secret = $2;
