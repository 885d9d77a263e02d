-- claim_pick($1 limit): the ids of up to $1 due enrollments that no other transaction holds, in
-- due order, over the whole table (the worker picks by slices, engine/claim_pick_slices, which
-- does the same per slice; the tests run this one). Run inside a savepoint that is rolled back at
-- once (engine/pg_lane_store.cpp, claim): its row
-- locks only split the due rows between concurrent claims; engine/claim_due then locks the picked
-- rows for the transaction, under a fresh snapshot.
-- Why two statements: in READ COMMITTED, FOR UPDATE on a row that another claim leased and
-- committed after this statement's snapshot locks the row's newest version before rechecking the
-- WHERE clause, and the lock stays until the transaction ends although the row is not returned.
-- The head of the due index is exactly where the other lanes just claimed, so each claim held
-- dozens of rows leased by others, and their settles queued behind its whole transaction (seen
-- with 4 worker processes: settles waiting on `transactionid` for 20 s in all in an 8 s run).
-- The savepoint's rollback releases those locks. The WHERE clause and the order are claim_due's.
SELECT e.enrollment_id
FROM enrollments e
WHERE e.status IN ('ready', 'calling', 'waiting')
  AND e.due_at <= now()
  AND (e.lease_expires_at IS NULL OR e.lease_expires_at < now())
ORDER BY e.due_at
LIMIT $1
FOR UPDATE OF e SKIP LOCKED;
