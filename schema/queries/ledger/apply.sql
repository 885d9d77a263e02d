-- apply($1 new transfers, $2 settled transfers, $3 entries; arrays of the row types of migration
-- 0013): writes what engine/ledger.cpp decided under the locks it holds (pending_transfers and
-- lock_available), or on the worker's fast path from balances read without locks ($4), in one
-- statement:
--   $1 ledger_transfer_row: {attempt_id, campaign_id, sender, action, day, reserved, scopes} new
--      pending transfers; with {transfer_id (from next_transfer_id), state, posted, overrun,
--      shortfall} a transfer written settled at once (a charge with no step attempt: attempt_id
--      null)
--   $2 ledger_settled_row: {transfer_id, state, posted, overrun, shortfall}  pending -> posted | voided
--   $3 ledger_entry_row: {transfer_id | attempt_id, scope_id, kind, debit, credit, amount} entries
--      (attempt_id names a transfer of $1; neither: a budget change)
--   $4 boolean: true on the worker's fast path (engine/ledger.hpp, held_balances), where the caller
--      moves the balances later in the transaction with apply_balances, from the same entries
-- Account balances move by the net of the entries written, from the same rows, so a balance is
-- always the sum of its entries; the CHECK constraints refuse any overdraft and abort the
-- transaction. Returns the counts the caller asserts: transfers inserted, transfers settled,
-- accounts updated, accounts that had to be updated (0 and 0 with $4).
WITH nt AS (
    INSERT INTO ledger_transfers (transfer_id, attempt_id, campaign_id, sender, action, day, state, reserved, scopes,
                                  posted, overrun, shortfall, settled_at)
    SELECT COALESCE(x.transfer_id, nextval('ledger_transfers_transfer_id_seq'::regclass)),
           x.attempt_id, x.campaign_id, x.sender, x.action, x.day,
           COALESCE(x.state, 'pending')::ledger_transfer_state, x.reserved, x.scopes,
           x.posted, COALESCE(x.overrun, 0), COALESCE(x.shortfall, 0),
           CASE WHEN COALESCE(x.state, 'pending') <> 'pending' THEN now() END
    FROM rows_of($1::ledger_transfer_row[]) AS x
    -- A transfer for a step attempt is written only when that attempt's intent row exists (looked
    -- up by primary key, row by row); the caller then finds fewer transfers written than it asked
    -- for and refuses the batch. This replaced a foreign key (migration 0012).
    LEFT JOIN LATERAL (SELECT true AS found FROM step_attempts a WHERE a.attempt_id = x.attempt_id OFFSET 0) k ON true
    WHERE x.attempt_id IS NULL OR k.found
    RETURNING transfer_id, attempt_id
), sx AS MATERIALIZED (
    SELECT * FROM rows_of($2::ledger_settled_row[])
), st AS (
    UPDATE ledger_transfers t
    SET state = x.state::ledger_transfer_state, posted = x.posted, overrun = x.overrun, shortfall = x.shortfall,
        settled_at = now()
    FROM sx x
    -- by primary key (an index scan whatever the statistics say), then matched to x
    WHERE t.transfer_id = ANY(ARRAY(SELECT transfer_id FROM sx)) AND t.transfer_id = x.transfer_id
      AND t.state = 'pending'
    RETURNING t.transfer_id
), e AS (
    SELECT COALESCE(x.transfer_id, nt.transfer_id) AS transfer_id, x.scope_id, x.kind, x.debit, x.credit, x.amount
    FROM rows_of($3::ledger_entry_row[]) AS x
    LEFT JOIN nt ON x.transfer_id IS NULL AND nt.attempt_id = x.attempt_id
    -- the entries of a transfer that was not written are not written either
    WHERE x.transfer_id IS NOT NULL OR x.attempt_id IS NULL OR nt.transfer_id IS NOT NULL
), ent AS (
    INSERT INTO ledger_entries (transfer_id, scope_id, kind, debit, credit, amount)
    SELECT transfer_id, scope_id, kind, debit, credit, amount FROM e
), d AS (
    SELECT scope_id, kind, sum(delta) AS delta
    FROM (SELECT scope_id, debit AS kind, amount AS delta FROM e
          UNION ALL
          SELECT scope_id, credit, -amount FROM e) m
    GROUP BY scope_id, kind
    HAVING sum(delta) <> 0 AND NOT $4::boolean
), bal AS (
    UPDATE ledger_accounts a SET balance = a.balance + d.delta
    -- by primary key (as the transfers above), not a hash of the whole table
    FROM d WHERE a.scope_id = ANY(ARRAY(SELECT scope_id FROM d)) AND a.scope_id = d.scope_id AND a.kind = d.kind
    RETURNING a.scope_id
)
SELECT (SELECT count(*) FROM nt), (SELECT count(*) FROM st), (SELECT count(*) FROM bal), (SELECT count(*) FROM d);
