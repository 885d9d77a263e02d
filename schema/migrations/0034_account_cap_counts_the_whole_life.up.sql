-- A campaign's per-account cap counts all the campaign spent through the sender, also what it
-- spent or holds from while it had no per-account cap (engine/ledger.cpp: an account scope is
-- funded with the cap less the sender's spend outside it, ledger/ensure_scopes and set_budget), as
-- a day cap counts the whole day (migration 0033). The sender's transfers are read through the
-- (campaign_id, day) index's campaign prefix: a per-account cap is created or set far less often
-- than a transfer is written, so no index is added to the transfers for it.

-- What a campaign's transfers through one sender hold (pending: reserved) and cost (posted)
-- outside one of its scopes (0: outside any): the spend a per-account cap counts that its scope
-- did not draw. Read by ledger/ensure_scopes (a new account scope's funding) and
-- ledger/sender_spend_outside (set_budget); ledger/cap_use (budget show) counts the same for every
-- sender in one pass.
CREATE OR REPLACE FUNCTION ledger_sender_spend_outside(p_campaign bigint, p_sender text, p_scope bigint,
                                                       OUT held bigint, OUT spent bigint)
LANGUAGE sql STABLE AS $$
    SELECT COALESCE(sum(reserved) FILTER (WHERE state = 'pending'), 0)::bigint,
           COALESCE(sum(posted) FILTER (WHERE state = 'posted'), 0)::bigint
    FROM ledger_transfers
    WHERE campaign_id = p_campaign AND sender = p_sender AND NOT (p_scope = ANY(scopes))
$$;
