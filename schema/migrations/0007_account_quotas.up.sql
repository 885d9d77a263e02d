-- 0007 account quotas (issue 6): per-account overrides of the settings' quotas per action.
-- accounts.quotas holds {action: {per_day, per_week}}, e.g. {"invite": {"per_day": 40}}; an
-- action or a field that is absent uses the default of the settings (invite_per_day, ...). NULL
-- (the common case) means no override at all, so the worker's claim, which reads this column for
-- every claimed enrollment (schema/queries/engine/claim_due.sql), carries nothing for most
-- accounts. One column on the row the claim already checks, not a table: the claim reads it with a
-- primary-key join instead of aggregating rows per enrollment.
--
-- The CHECK enforces the shape the engine reads (engine/account_quotas.hpp), so a hand-written
-- UPDATE cannot store what the worker would have to ignore: an object whose keys are the five
-- actions that have quotas, each an object of per_day / per_week, each an integer from 0 to
-- 1,000,000 (the same bounds as the CLI and the admin endpoint) or null (the default).

CREATE OR REPLACE FUNCTION account_quotas_valid(q jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_typeof(q) = 'object'
       AND NOT EXISTS (
           SELECT 1
           FROM jsonb_each(q) AS a(action, o)
           WHERE a.action NOT IN ('invite', 'send', 'visit', 'withdraw', 'search')
              OR jsonb_typeof(a.o) <> 'object'
              OR EXISTS (
                  SELECT 1
                  FROM jsonb_each(a.o) AS f(field, v)
                  WHERE f.field NOT IN ('per_day', 'per_week')
                     -- null: the default, as if absent
                     OR NOT (jsonb_typeof(f.v) = 'null'
                             OR (jsonb_typeof(f.v) = 'number'
                                 -- a CASE, not AND: the cast must not run on 1.5
                                 AND CASE WHEN f.v::text ~ '^[0-9]{1,7}$' THEN f.v::text::integer <= 1000000
                                          ELSE false END))))
$$;

ALTER TABLE accounts ADD COLUMN IF NOT EXISTS quotas jsonb;

DO $$ BEGIN
    ALTER TABLE accounts ADD CONSTRAINT accounts_quotas_valid
        CHECK (quotas IS NULL OR account_quotas_valid(quotas));
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
