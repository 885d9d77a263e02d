#include "engine/planner.hpp"

#include <algorithm>

namespace orch::engine::planner {

std::optional<cs::decision> propose(row& r, std::span<const inbox_event> events, cs::time_point now,
                                    std::string* refused) {
    for (const auto& [event_id, kind] : events) {
        if (event_id <= r.event_cursor) {
            continue;  // applied by an earlier cycle (a duplicate delivery)
        }
        r.event_cursor = event_id;
        std::optional<cs::event> e;
        if (kind == event_kind::accepted_invitation) {
            e = cs::ev_accepted{};
        } else if (kind == event_kind::message) {
            e = cs::ev_replied{};
        }
        if (!e) {
            continue;
        }
        auto d = cs::decide(*r.campaign, *r.lead, r.state, *e, now);
        if (d.valid) {
            r.state = std::move(d.next);
        }
    }
    if (cs::is_terminal(r.state.st)) {
        return std::nullopt;
    }
    if (r.state.st != cs::status::calling && r.state.next_run_at > now) {
        return std::nullopt;
    }
    auto d = cs::decide(*r.campaign, *r.lead, r.state, cs::ev_due{}, now);
    if (!d.valid) {
        if (refused != nullptr) {
            *refused = d.why;
        }
        return std::nullopt;
    }
    if (d.call) {
        return d;
    }
    r.state = std::move(d.next);
    return std::nullopt;
}

verdict ledger_refused(budget_refusal why, cs::time_point retry_at, const std::string& account,
                       cs::time_point now) {
    verdict v;
    v.allowed = false;
    switch (why) {
    case budget_refusal::campaign_budget:
        v.until = now;  // parked with its campaign; runs as soon as a raised budget resumes it
        v.reason = "paused: budget exhausted";
        v.code = cs::wait_code::campaign_budget;
        break;
    // These two codes are matched by schema/queries/engine/wake_budget_waits.sql (a raised cap
    // wakes the leads waiting for it).
    case budget_refusal::day_budget:
        v.until = retry_at;
        v.reason = "waiting for the campaign's daily budget (tomorrow, UTC)";
        v.code = cs::wait_code::day_budget;
        break;
    case budget_refusal::account_budget:
        v.until = now + std::chrono::hours(24);
        v.reason = "the campaign's budget for account " + account + " is spent";
        v.code = cs::wait_code::account_budget;
        break;
    case budget_refusal::in_flight:
        v.until = retry_at;
        v.reason = "waiting for the campaign's calls in flight to settle: the budget left covers this call "
                   "only if they give credits back";
        v.code = cs::wait_code::budget_in_flight;
        break;
    case budget_refusal::no_budget:
    case budget_refusal::none:
        v.until = now + std::chrono::minutes(5);
        v.reason = "the campaign has no budget in the ledger (apply it again)";
        v.code = cs::wait_code::no_budget;
        break;
    }
    return v;
}

std::optional<cs::api_call> take(row& r, cs::decision proposed, const verdict& gate, const verdict& ledger,
                                 cs::time_point now) {
    if (gate.allowed && ledger.allowed) {
        r.state = std::move(proposed.next);
        return std::move(proposed.call);
    }
    const verdict& no = gate.allowed ? ledger : gate;
    auto d = cs::decide(*r.campaign, *r.lead, r.state, cs::ev_deferred{no.until, no.reason, no.code}, now);
    if (d.valid) {
        // A call found after a crash that may not go now: the machine says how it waits (its
        // on_deferred, campaigns/README.md).
        r.state = std::move(d.next);
    } else {
        // e.g. a reconciliation found after a crash: keep it, and look again then
        r.state.next_run_at = no.until;
    }
    return std::nullopt;
}

settled settle(const row& r, const cs::api_call& call, const call_outcome& o, cs::time_point now) {
    settled s;
    auto d = o.stop_reason.empty() ? cs::decide(*r.campaign, *r.lead, r.state, o.event, now)
                                   : cs::decide(*r.campaign, *r.lead, r.state, cs::ev_cancel{o.stop_reason}, now);
    if (d.valid) {
        s.next = std::move(d.next);
        if (!o.stop_after_reason.empty() && !cs::is_terminal(s.next.st) && s.next.st != cs::status::calling) {
            // The person went on the do-not-contact list while the call was out: what it did is
            // recorded above, and the lead stops here.
            if (auto stop = cs::decide(*r.campaign, *r.lead, s.next, cs::ev_cancel{o.stop_after_reason}, now);
                stop.valid) {
                s.next = std::move(stop.next);
            }
        }
        s.due_now = !cs::is_terminal(s.next.st) && s.next.st != cs::status::calling && s.next.next_run_at <= now;
    } else {
        s.refused = d.why;
        s.next = r.state;
        s.next.st = cs::status::failed;
        s.next.step.clear();
        s.next.reconcile = false;
        s.next.reason = "internal: " + d.why;
        s.next.wait = cs::wait_code::none;
    }
    // What the API charged is posted (the rest of the reservation released); a call that may
    // have been charged without our knowing (an uncertain outcome, or a read whose answer was
    // lost after it reached the API) posts what its answered requests cost and the most the lost
    // one could have, or its whole reservation when the outcome does not say which was lost; a
    // failure that cost nothing voids it.
    if (o.attempt_outcome == attempt_outcome::uncertain || o.unknown_charge) {
        s.ledger = {true, o.lost_credits ? o.credits + *o.lost_credits : std::max(o.credits, credits_upper_bound(call))};
    } else if (failed_without_effect(o.attempt_outcome) && o.credits <= 0) {
        s.ledger = {false, 0};
    } else {
        s.ledger = {true, o.credits};
    }
    return s;
}

}  // namespace orch::engine::planner
