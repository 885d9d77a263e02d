-- sender_spend_outside($1 campaign, $2 sender account id, $3 account scope id, 0 for none yet):
-- what the campaign's transfers through that sender hold (pending) and cost (posted) outside that
-- scope (made while the campaign had no per-account cap). The cap counts them (migration 0034).
SELECT held, spent FROM ledger_sender_spend_outside($1, $2, $3);
