-- Profile URLs get one spelling per character in their canonical form (campaigns/model.hpp,
-- canonical_profile_url): a %XX of an unreserved character (letter, digit, - . _ ~) decoded, any
-- other %XX and every byte beyond ASCII written %xx, all in lower case. Before, ".../in/josé" and
-- ".../in/jos%C3%A9" (or ".../in/%63hloe" and ".../in/chloe") were two canonical URLs, so the same
-- person could be two leads (invited twice from one audience file) and a do-not-contact entry in
-- one spelling missed the other.
--
-- The stored keys, leads.canonical_url and do_not_contact.canonical_url, move to the new
-- spelling. The old key was already without scheme, "www.", query, fragment and trailing slash,
-- and in lower case; the new one is the old one respelled, which canonical_url_spelling does.
-- Where two stored keys become one (the same person stored twice before), nothing is merged or
-- deleted: a row whose new key another row holds already keeps its old key, and of several rows
-- that would take one new key the smallest id does. The person stays as many rows as before, one
-- of them now found by every spelling.
CREATE OR REPLACE FUNCTION canonical_url_spelling(t text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    out text := '';
    i integer := 1;
    n integer := length(t);
    ch text;
    code integer;
BEGIN
    WHILE i <= n LOOP
        ch := substr(t, i, 1);
        IF ch = '%' AND substr(t, i + 1, 2) ~ '^[0-9A-Fa-f]{2}$' THEN
            code := ('x' || lpad(substr(t, i + 1, 2), 8, '0'))::bit(32)::integer;
            IF (code BETWEEN 48 AND 57) OR (code BETWEEN 65 AND 90) OR (code BETWEEN 97 AND 122)
               OR code IN (45, 46, 95, 126) THEN
                out := out || lower(chr(code));
            ELSE
                out := out || '%' || lower(substr(t, i + 1, 2));
            END IF;
            i := i + 3;
        ELSIF ascii(ch) > 127 THEN
            out := out || regexp_replace(encode(convert_to(ch, 'UTF8'), 'hex'), '(..)', '%\1', 'g');
            i := i + 1;
        ELSE
            out := out || lower(ch);
            i := i + 1;
        END IF;
    END LOOP;
    RETURN rtrim(out, '/');
END $$;

WITH respelled AS (
    SELECT lead_id, canonical_url_spelling(canonical_url) AS url
    FROM leads
    WHERE position('%' IN canonical_url) > 0 OR octet_length(canonical_url) <> char_length(canonical_url)
),
moved AS (
    SELECT DISTINCT ON (r.url) r.lead_id, r.url
    FROM respelled r
    WHERE NOT EXISTS (SELECT 1 FROM leads o WHERE o.canonical_url = r.url)
    ORDER BY r.url, r.lead_id
)
UPDATE leads l SET canonical_url = moved.url FROM moved WHERE l.lead_id = moved.lead_id;

WITH respelled AS (
    SELECT entry_id, canonical_url_spelling(canonical_url) AS url
    FROM do_not_contact
    WHERE canonical_url IS NOT NULL
      AND (position('%' IN canonical_url) > 0 OR octet_length(canonical_url) <> char_length(canonical_url))
),
moved AS (
    SELECT DISTINCT ON (r.url) r.entry_id, r.url
    FROM respelled r
    WHERE NOT EXISTS (SELECT 1 FROM do_not_contact o WHERE o.canonical_url = r.url)
    ORDER BY r.url, r.entry_id
)
UPDATE do_not_contact d SET canonical_url = moved.url FROM moved WHERE d.entry_id = moved.entry_id;
