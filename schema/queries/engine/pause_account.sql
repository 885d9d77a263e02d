-- pause_account($1 account id, $2 api status): the API said the account is inactive or
-- unknown; its enrollments wait (claim_due skips it) until a login marks it connected again.
UPDATE accounts SET connected = false, api_status = $2, updated_at = now() WHERE account_id = $1;
