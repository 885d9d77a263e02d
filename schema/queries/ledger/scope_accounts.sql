-- scope_accounts($1 JSON array of scope ids): funding and available balances of each scope (read
-- after lock_available, in a statement of its own, so the values are current).
SELECT scope_id,
       max(balance) FILTER (WHERE kind = 'funding') AS funding,
       max(balance) FILTER (WHERE kind = 'available') AS available
FROM ledger_accounts
WHERE scope_id IN (SELECT jsonb_array_elements_text($1::jsonb)::bigint)
GROUP BY scope_id
ORDER BY scope_id;
