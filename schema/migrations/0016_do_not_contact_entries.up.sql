-- 0016 do-not-contact entries: by canonical profile URL or by company name (matched
-- case-insensitively against a lead's `company` field), each with an id, who added it and why.
-- The table of 0001 keeps its name and its canonical_url column, so a check joining leads on
-- canonical_url still works; a company entry has no URL and a URL entry no company.
ALTER TABLE do_not_contact DROP CONSTRAINT IF EXISTS do_not_contact_pkey;
ALTER TABLE do_not_contact ADD COLUMN IF NOT EXISTS entry_id bigserial;
ALTER TABLE do_not_contact ADD PRIMARY KEY (entry_id);
ALTER TABLE do_not_contact ALTER COLUMN canonical_url DROP NOT NULL;
ALTER TABLE do_not_contact ADD COLUMN IF NOT EXISTS profile_url text;   -- as the operator gave it
ALTER TABLE do_not_contact ADD COLUMN IF NOT EXISTS company text;       -- trimmed, as given
ALTER TABLE do_not_contact ADD COLUMN IF NOT EXISTS added_by text NOT NULL DEFAULT '';
UPDATE do_not_contact SET profile_url = canonical_url WHERE profile_url IS NULL AND canonical_url IS NOT NULL;
ALTER TABLE do_not_contact ADD CONSTRAINT do_not_contact_one_key
    CHECK ((canonical_url IS NULL) <> (company IS NULL));
CREATE UNIQUE INDEX IF NOT EXISTS do_not_contact_url ON do_not_contact (canonical_url) WHERE canonical_url IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS do_not_contact_company ON do_not_contact (lower(company)) WHERE company IS NOT NULL;
