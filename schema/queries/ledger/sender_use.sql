-- sender_use($1 campaign, $2 sender account id): what the campaign's transfers through that sender
-- hold for calls in flight and have cost, over the campaign's life: what its per-account cap
-- counts (migration 0034). An apply refuses to send its audience search through a sender with
-- nothing left of it (engine/campaign_apply: search_refusal).
SELECT (COALESCE(sum(reserved) FILTER (WHERE state = 'pending'), 0) +
        COALESCE(sum(posted) FILTER (WHERE state = 'posted'), 0))::bigint
FROM ledger_transfers
WHERE campaign_id = $1 AND sender = $2
