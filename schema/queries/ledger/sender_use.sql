-- sender_use($1 campaign, $2 sender account id): what the campaign's transfers through that sender
-- hold for calls in flight and have cost, over the campaign's life (outside scope 0: all of
-- them): what its per-account cap counts (migration 0034). An apply refuses to send its audience
-- search through a sender with nothing left of it (engine/campaign_apply: search_refusal).
SELECT held + spent FROM ledger_sender_spend_outside($1, $2, 0)
