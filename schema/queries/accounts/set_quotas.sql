-- set_quotas($1 account id, $2 overrides as JSON text, '' for none (stored as NULL)): validated by the
-- caller (engine/account_quotas) and again by the CHECK of migration 0007. Workers read the new
-- value at their next claim (engine/claim_due).
UPDATE accounts SET quotas = NULLIF($2, '')::jsonb, updated_at = now() WHERE account_id = $1;
