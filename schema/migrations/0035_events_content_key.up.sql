-- An event's content key (engine/intake.cpp content_key: its account, type, people, text,
-- conversation, reason and time), stored beside its source id and unique as well: the same event
-- seen on an event stream without ids (keyed by its content) and then by polling (keyed by the
-- poll's id), or under two ids by any two channels, is stored once. Only an event that carries
-- its time has one: two events without a time and with the same content may be two events (a
-- second disconnection for the same reason). Rows stored before have none.
ALTER TABLE events ADD COLUMN content_key text;
CREATE UNIQUE INDEX events_content_key ON events (content_key) WHERE content_key IS NOT NULL;
