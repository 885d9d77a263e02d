-- An ACCOUNT_INACTIVE answer to a request the account's re-login overtook does not pause the
-- account again.
--
-- A request that left while the account was inactive may be answered ACCOUNT_INACTIVE after the
-- user logged in again (and `serve` or `accounts sync` marked it connected). The worker's settle
-- then marked it unavailable anew and parked its leads until the next re-login or sync, and the
-- worker's send-time mirror held its calls for 10 minutes.
--
-- Each login is named by its time, accounts.connected_at (migration 0023), as microseconds since
-- the epoch (0 when unknown): the claim reads it with each row (engine/claim_due), the account
-- notifications carry it (payload {"account_id", "connected", "since"}), and a worker pauses the
-- account only when it is still the login its call was claimed under
-- (accounts/set_unavailable_if_login). A call claimed under an earlier login that is answered
-- ACCOUNT_INACTIVE is settled as the answer says, but the account stays connected: the next call
-- finds out whether it really is inactive, and pauses it then.
CREATE OR REPLACE FUNCTION account_login_us(connected_at timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT COALESCE((extract(epoch FROM connected_at) * 1000000)::bigint, 0)
$$;

CREATE OR REPLACE FUNCTION accounts_notify_connected() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('orch_account', json_build_object('account_id', NEW.account_id,
                                                        'connected', NEW.connected,
                                                        'since', account_login_us(NEW.connected_at))::text);
    RETURN NULL;
END $$;
