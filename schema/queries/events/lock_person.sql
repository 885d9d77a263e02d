-- lock_person($1 account, $2 person's canonical profile URL): held until the transaction ends, by
-- every store of a message of that person on the account, which then looks for the message among
-- those stored before it inserts: a delivery and the catch-up sweep's copy of one message, stored
-- at the same moment, cannot both miss the other (a read before the lock could).
SELECT pg_advisory_xact_lock(727100039, hashtext($1 || '|' || $2));
