-- A settled call whose next step is due at once starts that step in the same cycle (engine/worker.cpp,
-- settle): the settle statement then writes the row's new state with its lease (and the inbox
-- cursor its events were applied up to) together with the outcome, one row version instead of a
-- release followed by a claim. engine/settle reads the two new fields; NULL leaves the cursor as
-- it is, and a row not leased (`leased` false or NULL) is released as before.
DO $$ BEGIN
    ALTER TYPE worker_settle_row ADD ATTRIBUTE event_cursor bigint, ADD ATTRIBUTE leased boolean;
EXCEPTION WHEN duplicate_column THEN NULL; END $$;
