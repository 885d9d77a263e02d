-- set_time_zone($1 account id, $2 IANA time zone, checked by the caller): the calendar day the
-- account's day quotas count in (migration 0032). Workers read it at their next claim. updated_at
-- stays: it dates what the API said of the account (intake's quiet-events check reads it).
UPDATE accounts SET time_zone = $2 WHERE account_id = $1;
