-- When each account last became connected (a login, a re-login, `accounts sync` finding it
-- connected), so that a disconnection event older than that login is not applied: `serve`
-- delivers events late (a webhook retried, a hosted stream resumed, an event sent while it was
-- down), and an account that logged in again after the event would be marked disconnected again.
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS connected_at timestamptz;

CREATE OR REPLACE FUNCTION accounts_stamp_connected() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.connected AND (TG_OP = 'INSERT' OR NOT OLD.connected) THEN
        NEW.connected_at := now();
    END IF;
    RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS accounts_connected_stamp ON accounts;
CREATE TRIGGER accounts_connected_stamp BEFORE INSERT OR UPDATE OF connected ON accounts
    FOR EACH ROW EXECUTE FUNCTION accounts_stamp_connected();
