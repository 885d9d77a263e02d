-- resolve($1 id or label): the account a campaign file names, and whether it is connected.
SELECT account_id, connected FROM accounts WHERE account_id = $1 OR label = $1;
