-- 0002 ledger: campaign credit budgets as a double-entry ledger with two-phase transfers.
--
-- Why double entry: every credit the API charges must be explainable from the database alone
-- (which call, which campaign, reserved how much, charged how much), and the sums must close.
-- Why balances on account rows with CHECK (balance >= 0): an overdraft must be impossible in
-- the database itself, whatever a worker computes. Every writer first locks the `available`
-- account of each scope it touches (SELECT ... FOR UPDATE in scope_id order, see
-- queries/ledger/lock_available.sql), so concurrent workers serialise per budget, never
-- deadlock on each other, and a bug that would overdraw aborts its transaction instead.
--
-- Scopes. A budget applies to a scope: the campaign (always), optionally each (campaign, sender
-- account) and each (campaign, UTC day). A reservation draws from every scope that applies.
-- Each scope has four accounts:
--   funding   where grants come from (balance <= 0: minus what the scope was ever given)
--   available what may still be reserved                  (>= 0)
--   reserved  held for calls in flight (pending transfers) (>= 0)
--   spent     posted: what the API charged                 (>= 0)
-- so that, per scope, funding + available + reserved + spent = 0 at all times.
--
-- Entries. One row moves `amount` from its `credit` account to its `debit` account in the same
-- scope: the debit account's balance goes up, the credit account's goes down by the same
-- amount, so debits equal credits by construction. A balance is always the sum of its entries
-- (the view ledger_check lists any account where it is not; it must be empty).
--
-- Transfers (two-phase, one per step attempt, TigerBeetle style):
--   reserve: available -> reserved, the cost model's upper bound          (state pending)
--   post:    reserved -> spent the actual charge, reserved -> available the rest (state posted)
--   void:    reserved -> available, all of it (errors cost 0)             (state voided)
-- A transfer is unique per attempt: a second reserve of the same attempt reserves nothing, a
-- second post or void of a settled transfer changes nothing.
--
-- Charged more than reserved (the API billed above the cost model's upper bound): the charge is
-- recorded as it is. The excess (`overrun`) is absorbed from the scope's available balance as far
-- as it goes (`absorb` entries); what the budget cannot cover (`shortfall`) is posted from the
-- funding account (`overrun` entries), so `spent` is the true spend while `available` never goes
-- below zero, and the campaign is paused with the reason stored (see engine/ledger.cpp). Raising
-- the budget later counts the shortfall as spent: available = budget - reserved - spent.

DO $$ BEGIN
    CREATE TYPE ledger_scope_kind AS ENUM ('campaign', 'account', 'day');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
    CREATE TYPE ledger_account_kind AS ENUM ('funding', 'available', 'reserved', 'spent');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
    CREATE TYPE ledger_transfer_state AS ENUM ('pending', 'posted', 'voided');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DO $$ BEGIN
    -- grant/ungrant: budget changes; reserve/post/release: the two phases; absorb/overrun: a
    -- charge above the reservation, from the available balance / beyond the budget.
    CREATE TYPE ledger_entry_kind AS ENUM ('grant', 'ungrant', 'reserve', 'post', 'release', 'absorb', 'overrun');
EXCEPTION WHEN duplicate_object THEN NULL; END $$;

-- The budgets as configured (campaign apply sets `total` from the file's budget_credits). The
-- optional caps apply to every sender account of the campaign and to every UTC day.
CREATE TABLE IF NOT EXISTS ledger_budgets (
    campaign_id bigint PRIMARY KEY REFERENCES campaigns,
    total       bigint NOT NULL CHECK (total >= 0),
    per_account bigint CHECK (per_account >= 0),
    per_day     bigint CHECK (per_day >= 0),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS ledger_scopes (
    scope_id    bigserial PRIMARY KEY,
    campaign_id bigint NOT NULL REFERENCES campaigns,
    kind        ledger_scope_kind NOT NULL,
    sender      text,                  -- kind 'account': the sender account id
    day         date,                  -- kind 'day': the UTC day
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'account') = (sender IS NOT NULL)),
    CHECK ((kind = 'day') = (day IS NOT NULL))
);
CREATE UNIQUE INDEX IF NOT EXISTS ledger_scopes_campaign ON ledger_scopes (campaign_id) WHERE kind = 'campaign';
CREATE UNIQUE INDEX IF NOT EXISTS ledger_scopes_account ON ledger_scopes (campaign_id, sender) WHERE kind = 'account';
CREATE UNIQUE INDEX IF NOT EXISTS ledger_scopes_day ON ledger_scopes (campaign_id, day) WHERE kind = 'day';

CREATE TABLE IF NOT EXISTS ledger_accounts (
    scope_id bigint NOT NULL REFERENCES ledger_scopes,
    kind     ledger_account_kind NOT NULL,
    balance  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (scope_id, kind),
    -- the point of the ledger: nothing but the funding side can go below zero
    CHECK (kind = 'funding' OR balance >= 0),
    CHECK (kind <> 'funding' OR balance <= 0)
);

CREATE TABLE IF NOT EXISTS ledger_transfers (
    transfer_id bigserial PRIMARY KEY,
    -- Idempotency key. Deferred: the claim transaction may reserve with an attempt id taken from
    -- step_attempts_attempt_id_seq before it inserts the intent row, as long as it does by commit.
    attempt_id  bigint UNIQUE REFERENCES step_attempts DEFERRABLE INITIALLY DEFERRED,
    -- not a foreign key: a transfer is only made on a campaign's scope (ledger_scopes references
    -- campaigns), and the key check would lock the campaign row once per reservation
    campaign_id bigint NOT NULL,
    sender      text NOT NULL DEFAULT '',
    action      text NOT NULL,
    day         date NOT NULL,          -- UTC day of the reservation; the charge counts on that day
    state       ledger_transfer_state NOT NULL DEFAULT 'pending',
    reserved    bigint NOT NULL CHECK (reserved >= 0),
    -- the scopes it reserved from, the campaign's first: a settle moves the same amounts in each
    scopes      bigint[] NOT NULL CHECK (cardinality(scopes) >= 1),
    posted      bigint CHECK (posted >= 0),
    overrun     bigint NOT NULL DEFAULT 0,   -- posted above reserved
    shortfall   bigint NOT NULL DEFAULT 0,   -- the part of the overrun the campaign budget could not cover
    created_at  timestamptz NOT NULL DEFAULT now(),
    settled_at  timestamptz,
    CHECK ((state = 'posted') = (posted IS NOT NULL)),
    CHECK ((state = 'pending') = (settled_at IS NULL)),
    CHECK (overrun = GREATEST(COALESCE(posted, 0) - reserved, 0)),
    CHECK (shortfall >= 0 AND shortfall <= overrun)
);
-- campaign only, not state: a settle then changes no indexed column, so its UPDATE is HOT (no new
-- index entries, and no dead ones for the next settle to wade through).
CREATE INDEX IF NOT EXISTS ledger_transfers_campaign ON ledger_transfers (campaign_id);

-- Append-only. No foreign keys: entries are written by one statement (queries/ledger/apply.sql)
-- from transfers and scopes it has just inserted or holds locked, and the per-row key checks cost
-- more than the rest of the write (ledger_check verifies the entries against the accounts and
-- transfers instead).
CREATE TABLE IF NOT EXISTS ledger_entries (
    entry_id    bigserial PRIMARY KEY,
    transfer_id bigint,                                  -- ledger_transfers; NULL: a budget change
    scope_id    bigint NOT NULL,                         -- ledger_scopes
    kind        ledger_entry_kind NOT NULL,
    debit       ledger_account_kind NOT NULL,            -- balance goes up by amount
    credit      ledger_account_kind NOT NULL,            -- balance goes down by amount
    amount      bigint NOT NULL CHECK (amount > 0),
    at          timestamptz NOT NULL DEFAULT now(),
    CHECK (debit <> credit),
    CHECK ((transfer_id IS NULL) = (kind IN ('grant', 'ungrant')))
);
CREATE INDEX IF NOT EXISTS ledger_entries_transfer ON ledger_entries (transfer_id) WHERE transfer_id IS NOT NULL;

-- Campaigns created before the ledger existed get their budget from their current version.
-- Their earlier spend (step_attempts.credits) is not in the ledger: the whole budget is granted.
INSERT INTO ledger_budgets (campaign_id, total)
SELECT c.campaign_id, GREATEST((v.definition ->> 'budget_credits')::bigint, 0)
FROM campaigns c
JOIN campaign_versions v ON v.campaign_id = c.campaign_id AND v.version = c.current_version
WHERE v.definition ? 'budget_credits'
ON CONFLICT DO NOTHING;
WITH s AS (
    INSERT INTO ledger_scopes (campaign_id, kind)
    SELECT b.campaign_id, 'campaign' FROM ledger_budgets b
    WHERE NOT EXISTS (SELECT 1 FROM ledger_scopes s WHERE s.campaign_id = b.campaign_id AND s.kind = 'campaign')
    RETURNING scope_id, campaign_id
), a AS (
    INSERT INTO ledger_accounts (scope_id, kind, balance)
    SELECT s.scope_id, k.kind, CASE k.kind WHEN 'available' THEN b.total WHEN 'funding' THEN -b.total ELSE 0 END
    FROM s JOIN ledger_budgets b USING (campaign_id)
    CROSS JOIN unnest(enum_range(NULL::ledger_account_kind)) AS k(kind)
)
INSERT INTO ledger_entries (scope_id, kind, debit, credit, amount)
SELECT s.scope_id, 'grant', 'available', 'funding', b.total
FROM s JOIN ledger_budgets b USING (campaign_id)
WHERE b.total > 0;

-- ---- reporting views ----

-- Per scope: the budget and where it stands. `budget` is what the configuration asks for,
-- `funded` what the scope was given (they differ when a budget was lowered below what was
-- already reserved or spent, or when the API charged beyond it).
CREATE OR REPLACE VIEW ledger_scope_balances AS
SELECT s.scope_id, s.campaign_id, c.name AS campaign, s.kind AS scope, s.sender, s.day,
       CASE s.kind WHEN 'campaign' THEN b.total WHEN 'account' THEN b.per_account ELSE b.per_day END AS budget,
       -max(a.balance) FILTER (WHERE a.kind = 'funding') AS funded,
       max(a.balance) FILTER (WHERE a.kind = 'available') AS available,
       max(a.balance) FILTER (WHERE a.kind = 'reserved') AS reserved,
       max(a.balance) FILTER (WHERE a.kind = 'spent') AS spent
FROM ledger_scopes s
JOIN campaigns c ON c.campaign_id = s.campaign_id
LEFT JOIN ledger_budgets b ON b.campaign_id = s.campaign_id
JOIN ledger_accounts a ON a.scope_id = s.scope_id
GROUP BY s.scope_id, c.name, b.total, b.per_account, b.per_day;

-- Per campaign: budget, state (and why paused), available, reserved vs posted.
CREATE OR REPLACE VIEW ledger_campaign_budgets AS
SELECT c.campaign_id, c.name AS campaign, c.state::text AS state, COALESCE(c.pause_reason, '') AS pause_reason,
       b.total AS budget, b.per_account, b.per_day,
       COALESCE(sb.available, 0) AS available, COALESCE(sb.reserved, 0) AS reserved, COALESCE(sb.spent, 0) AS spent,
       COALESCE(t.overrun, 0) AS overrun, COALESCE(t.shortfall, 0) AS shortfall
FROM campaigns c
LEFT JOIN ledger_budgets b ON b.campaign_id = c.campaign_id
LEFT JOIN ledger_scope_balances sb ON sb.campaign_id = c.campaign_id AND sb.scope = 'campaign'
LEFT JOIN (SELECT campaign_id, sum(overrun) AS overrun, sum(shortfall) AS shortfall
           FROM ledger_transfers GROUP BY campaign_id) t ON t.campaign_id = c.campaign_id;

-- Spend from the transfers, grouped four ways. Columns of each: calls (transfers), pending (in
-- flight), posted and voided counts; reserved_pending (held now), reserved_posted (what was
-- reserved for the calls since posted) vs posted (what they cost): the cost model's margin.
CREATE OR REPLACE VIEW ledger_spend_by_campaign AS
SELECT t.campaign_id, c.name AS campaign,
       count(*) AS calls,
       count(*) FILTER (WHERE t.state = 'pending') AS pending,
       count(*) FILTER (WHERE t.state = 'posted') AS posted_calls,
       count(*) FILTER (WHERE t.state = 'voided') AS voided,
       COALESCE(sum(t.reserved) FILTER (WHERE t.state = 'pending'), 0) AS reserved_pending,
       COALESCE(sum(t.reserved) FILTER (WHERE t.state = 'posted'), 0) AS reserved_posted,
       COALESCE(sum(t.posted), 0) AS posted
FROM ledger_transfers t JOIN campaigns c ON c.campaign_id = t.campaign_id
GROUP BY t.campaign_id, c.name;

CREATE OR REPLACE VIEW ledger_spend_by_action AS
SELECT t.campaign_id, c.name AS campaign, t.action,
       count(*) AS calls,
       count(*) FILTER (WHERE t.state = 'pending') AS pending,
       count(*) FILTER (WHERE t.state = 'posted') AS posted_calls,
       count(*) FILTER (WHERE t.state = 'voided') AS voided,
       COALESCE(sum(t.reserved) FILTER (WHERE t.state = 'pending'), 0) AS reserved_pending,
       COALESCE(sum(t.reserved) FILTER (WHERE t.state = 'posted'), 0) AS reserved_posted,
       COALESCE(sum(t.posted), 0) AS posted
FROM ledger_transfers t JOIN campaigns c ON c.campaign_id = t.campaign_id
GROUP BY t.campaign_id, c.name, t.action;

CREATE OR REPLACE VIEW ledger_spend_by_account AS
SELECT t.campaign_id, c.name AS campaign, t.sender,
       count(*) AS calls,
       count(*) FILTER (WHERE t.state = 'pending') AS pending,
       count(*) FILTER (WHERE t.state = 'posted') AS posted_calls,
       count(*) FILTER (WHERE t.state = 'voided') AS voided,
       COALESCE(sum(t.reserved) FILTER (WHERE t.state = 'pending'), 0) AS reserved_pending,
       COALESCE(sum(t.reserved) FILTER (WHERE t.state = 'posted'), 0) AS reserved_posted,
       COALESCE(sum(t.posted), 0) AS posted
FROM ledger_transfers t JOIN campaigns c ON c.campaign_id = t.campaign_id
GROUP BY t.campaign_id, c.name, t.sender;

CREATE OR REPLACE VIEW ledger_spend_by_day AS
SELECT t.campaign_id, c.name AS campaign, t.day,
       count(*) AS calls,
       count(*) FILTER (WHERE t.state = 'pending') AS pending,
       count(*) FILTER (WHERE t.state = 'posted') AS posted_calls,
       count(*) FILTER (WHERE t.state = 'voided') AS voided,
       COALESCE(sum(t.reserved) FILTER (WHERE t.state = 'pending'), 0) AS reserved_pending,
       COALESCE(sum(t.reserved) FILTER (WHERE t.state = 'posted'), 0) AS reserved_posted,
       COALESCE(sum(t.posted), 0) AS posted
FROM ledger_transfers t JOIN campaigns c ON c.campaign_id = t.campaign_id
GROUP BY t.campaign_id, c.name, t.day;

-- The ledger's invariants, as rows that break them (empty when the ledger is sound; tests and
-- `budget show` check it — a pair assertion over what the writers already enforce):
--   entries:  an account's balance is the sum of its entries
--   scope:    a scope's four balances sum to zero
--   reserved: a scope's reserved balance is what its pending transfers reserved
--   spent:    a campaign's spent balance is what its transfers posted
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
  AND a.balance <> COALESCE((SELECT sum(t.posted) FROM ledger_transfers t WHERE t.campaign_id = s.campaign_id), 0);
