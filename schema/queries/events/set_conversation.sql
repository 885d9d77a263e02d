-- set_conversation($1 source id, $2 conversation id): the conversation a stored message event
-- belongs to, for those compared with another copy of the same message (events/conversation_messages).
UPDATE events SET conversation_id = $2 WHERE source_id = $1 AND conversation_id IS NULL;
