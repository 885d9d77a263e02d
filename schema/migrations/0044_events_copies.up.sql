-- A message event that names only its conversation, stored with no lead because no campaign of
-- the account had credits for the read that finds its sender, and the catch-up sweep's copy of
-- the same message stored under its lead: the inbox showed both. Both keep the conversation the
-- API named (conversation_id), and the unread one points at the sweep's (copy_of): the inbox
-- lists the one that reached the lead.
ALTER TABLE events ADD COLUMN IF NOT EXISTS conversation_id text;
ALTER TABLE events ADD COLUMN IF NOT EXISTS copy_of bigint;
CREATE INDEX IF NOT EXISTS events_conversation ON events (account_id, conversation_id) WHERE conversation_id IS NOT NULL;
