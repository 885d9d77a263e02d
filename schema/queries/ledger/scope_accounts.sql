-- scope_accounts($1 scope ids as a bigint array literal '{1,2}'): funding and available balances
-- of each scope (read after lock_available, in a statement of its own, so the values are current).
SELECT scope_id,
       max(balance) FILTER (WHERE kind = 'funding') AS funding,
       max(balance) FILTER (WHERE kind = 'available') AS available
FROM ledger_accounts
WHERE scope_id = ANY($1::bigint[])
GROUP BY scope_id
ORDER BY scope_id;
