-- mirror_halted: the campaigns whose queued calls a worker does not send (dnc::mirror::halted):
-- cancelled, or paused by an operator (which only `campaign resume` lifts, notifying the workers).
-- An engine's pause (credits, budget, end_at) is not here: its resume notifies nobody, and the
-- ledger and the claim hold those calls already.
SELECT campaign_id FROM campaigns
WHERE state = 'cancelled' OR (state = 'paused' AND pause_code = 'operator')
