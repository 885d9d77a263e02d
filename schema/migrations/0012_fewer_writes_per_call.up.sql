-- Fewer writes per call on the worker's hot path. Measured with tests/bench/engine_bench.sh
-- (PG_STATEMENTS=1 prints the run's WAL records by kind and relation): each API call cost about 35
-- WAL records, 56 % of them index inserts and 17 % row locks; after this migration, about 27.
--
-- 1. step_attempts and ledger_transfers keep half of each new page free (was 30 %, migration
--    0010). Each row is updated once, soon after its insert (the call's outcome, the settlement):
--    with 30 % free only about half of those updates found room on the row's page; the others
--    moved the row to another page, which writes a lock record and a new entry in every index.
ALTER TABLE step_attempts SET (fillfactor = 50);
ALTER TABLE ledger_transfers SET (fillfactor = 50);

-- 2. enrollments keep 20 % free, so an enrollment's two writes per call (the claim, the settle)
--    usually keep the row on its page, without the lock record of a move.
ALTER TABLE enrollments SET (fillfactor = 80);

-- 3. ledger_entries (transfer_id) served no query: the entries are read whole by the ledger_check
--    view. Each entry (two or three per call) paid an index insert for it.
DROP INDEX IF EXISTS ledger_entries_transfer;

-- 4. ledger_transfers.attempt_id no longer references step_attempts. The deferred key check
--    locked every new intent row at commit (a lock record and a lookup per call). The ledger's
--    apply statement (queries/ledger/apply.sql) now writes a transfer only when its attempt exists
--    and the caller refuses the whole batch otherwise, and ledger_check lists any transfer whose
--    attempt is missing (rule 'attempt').
ALTER TABLE ledger_transfers DROP CONSTRAINT IF EXISTS ledger_transfers_attempt_id_fkey;

-- The invariants of migration 0002, and:
--   attempt:  every transfer made for a step attempt names one that exists
CREATE OR REPLACE VIEW ledger_check AS
WITH moves AS (
    SELECT scope_id, debit AS kind, amount AS delta FROM ledger_entries
    UNION ALL
    SELECT scope_id, credit, -amount FROM ledger_entries
), sums AS (
    SELECT scope_id, kind, sum(delta) AS total FROM moves GROUP BY scope_id, kind
), legs AS (
    SELECT l.scope_id, t.state, t.reserved, t.posted
    FROM ledger_transfers t CROSS JOIN unnest(t.scopes) AS l(scope_id)
)
SELECT 'entries' AS rule, a.scope_id, a.kind::text AS account, a.balance AS have, COALESCE(s.total, 0) AS want
FROM ledger_accounts a LEFT JOIN sums s ON s.scope_id = a.scope_id AND s.kind = a.kind
WHERE a.balance <> COALESCE(s.total, 0)
UNION ALL
SELECT 'scope', scope_id, 'all', sum(balance), 0 FROM ledger_accounts GROUP BY scope_id HAVING sum(balance) <> 0
UNION ALL
SELECT 'reserved', a.scope_id, 'reserved', a.balance,
       COALESCE((SELECT sum(l.reserved) FROM legs l WHERE l.scope_id = a.scope_id AND l.state = 'pending'), 0)
FROM ledger_accounts a
WHERE a.kind = 'reserved'
  AND a.balance <> COALESCE((SELECT sum(l.reserved) FROM legs l WHERE l.scope_id = a.scope_id AND l.state = 'pending'), 0)
UNION ALL
SELECT 'spent', s.scope_id, 'spent', a.balance,
       COALESCE((SELECT sum(t.posted) FROM ledger_transfers t WHERE t.campaign_id = s.campaign_id), 0)
FROM ledger_scopes s JOIN ledger_accounts a ON a.scope_id = s.scope_id AND a.kind = 'spent'
WHERE s.kind = 'campaign'
  AND a.balance <> COALESCE((SELECT sum(t.posted) FROM ledger_transfers t WHERE t.campaign_id = s.campaign_id), 0)
UNION ALL
SELECT 'attempt', t.scopes[1], 'transfers without their step attempt', count(*), 0
FROM ledger_transfers t
WHERE t.attempt_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM step_attempts a WHERE a.attempt_id = t.attempt_id)
GROUP BY t.scopes[1];
