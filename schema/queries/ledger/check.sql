-- check: the rows of ledger_check (invariants broken); empty when the ledger is sound.
SELECT rule, scope_id, account, have, want FROM ledger_check ORDER BY rule, scope_id, account;
