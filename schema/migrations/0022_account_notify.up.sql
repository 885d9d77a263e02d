-- Every worker hears at once when an account becomes unavailable or available again, whoever
-- learned it: a worker's settle (ACCOUNT_INACTIVE), `serve` (a disconnection or reconnection
-- event), `accounts sync`. Each worker's wake-up listener (engine/worker.cpp) hands it to its
-- limits gate's send-time mirror, which holds that account's queued calls in every process, not
-- only in the one that got the answer. The payload is {"account_id": ..., "connected": bool};
-- NOTIFY is delivered at commit, once per distinct payload per transaction.
CREATE OR REPLACE FUNCTION accounts_notify_connected() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('orch_account', json_build_object('account_id', NEW.account_id,
                                                        'connected', NEW.connected)::text);
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS accounts_connected_changed ON accounts;
CREATE TRIGGER accounts_connected_changed AFTER UPDATE OF connected ON accounts
    FOR EACH ROW WHEN (OLD.connected IS DISTINCT FROM NEW.connected)
    EXECUTE FUNCTION accounts_notify_connected();
DROP TRIGGER IF EXISTS accounts_inserted_disconnected ON accounts;
CREATE TRIGGER accounts_inserted_disconnected AFTER INSERT ON accounts
    FOR EACH ROW WHEN (NOT NEW.connected)
    EXECUTE FUNCTION accounts_notify_connected();
