#include "engine/lane_cycle.hpp"

#include "engine/invariant.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace orch::engine {

namespace cs = campaigns;

call_target target_of(const lane_row& r) {
    return {r.account_id,     r.profile_url,       r.campaign_id,
            r.enrollment_id,  r.account_quotas,    r.account_login,
            r.gate_take,      r.account_time_zone, r.state.wait == campaigns::wait_code::key_rate};
}

void finished_calls::let_go() {
    std::vector<lane_row>().swap(batch);
    std::vector<std::size_t>().swap(calls);
    std::vector<call_outcome>().swap(outcomes);
}

settle_decisions decide_settle(finished_calls& done, const lane_context& ctx) {
    settle_decisions d;
    const cs::time_point now = ctx.clock->now();
    const std::size_t n = done.calls.size();
    d.nexts.reserve(n);
    d.outcomes.reserve(n);
    d.ledger.reserve(n);
    d.due_now.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const lane_row& c = done.batch[done.calls[i]];
        call_outcome& o = done.outcomes[i];
        // Once only: a settle decided again after a rolled-back transaction (or after this loop
        // stopped half-way) must not record a cooldown twice (the retry_at it set is kept in the
        // outcome).
        if (!done.gated && i >= done.told) {
            if (auto not_before = ctx.gate->after(target_of(c), *c.campaign, *c.call, o); not_before) {
                o.event.retry_at = std::max(o.event.retry_at, *not_before);
            }
            done.told = i + 1;  // told: a failure from here on does not tell it again
            if (o.held && o.event.retry_at > now) {
                // Held at send time until then: the hold may have ended since (the account logged
                // in again), and the lead would otherwise wait it out. Asked about the scope that
                // held it: the call's, or one of its requests' (a follow-up's reply check).
                cs::api_call scope = *c.call;
                if (o.held_request) {
                    scope.kind = *o.held_request;
                    scope.reconcile = false;
                }
                o.event.retry_at = std::min(o.event.retry_at, ctx.gate->hold(target_of(c), scope, now).value_or(now));
            }
        }
        const planner::row r{c.campaign.get(), &c.lead, c.state, c.event_cursor};
        planner::settled p = planner::settle(r, *c.call, o, now);
        if (!p.refused.empty() && ctx.outcome_refused) {
            ctx.outcome_refused(c.enrollment_id, p.refused);
        }
        d.due_now.push_back(p.due_now);
        d.nexts.push_back(std::move(p.next));
        d.ledger.push_back(p.ledger);
        d.outcomes.push_back({c.attempt_id, o.attempt_outcome, o.error, attempt_action(*c.campaign, c.state.step, *c.call),
                              o.credits});
        if (o.consequence == call_consequence::pause_account) {
            auto& u = d.unavailable[c.account_id];
            u.error = o.error;
            u.logins.insert(c.account_login);
        } else if (o.consequence == call_consequence::pause_budget) {
            d.out_of_credits = o.error;
        } else if (o.consequence == call_consequence::stop_everything && ctx.stop_everything) {
            ctx.stop_everything(o.error);
        }
    }
    done.gated = true;
    return d;
}

namespace {

bool stopping(const lane_context& ctx) { return ctx.stopping && ctx.stopping(); }

// Steps 3 and 4 over the cycle's batch (the settled rows that go on, then the claimed ones).
void plan(lane_store& store, const lane_context& ctx, std::vector<lane_row>& batch) {
    if (batch.empty()) {
        // The settle's posts and voids, and its rows' wakes.
        store.ledger().reserve({}, [&](std::span<const planner::verdict>) { store.write(batch); });
        return;
    }
    std::vector<plan_item> items(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
        lane_row& c = batch[i];
        items[i].row = {c.campaign.get(), &c.lead, std::move(c.state), c.event_cursor};
        items[i].target = target_of(c);
    }
    store.pending_events(batch, items);
    store.close_lost(batch);
    plan_ports ports;
    ports.gate = ctx.gate;
    ports.ledger = &store.ledger();
    ports.attempt_ids = [&store](std::size_t n) { return store.attempt_ids(n); };
    ports.refused = ctx.event_refused;
    // The variant each row had before the plan: a call the locked ledger refuses after the fast
    // path's write set its variant must not leave it behind.
    std::vector<std::string> variants;
    variants.reserve(batch.size());
    for (const auto& c : batch) {
        variants.push_back(c.variant);
    }
    try {
        plan_cycle(items, ports, ctx.clock->now(), [&] {
            for (std::size_t i = 0; i < batch.size(); ++i) {
                lane_row& c = batch[i];
                plan_item& it = items[i];
                c.state = it.row.state;
                c.event_cursor = it.row.event_cursor;
                c.call = it.call;
                c.attempt_id = it.attempt_id;
                c.gate_take = it.call ? it.target.gate_take : 0;
                const bool takes = c.call && !c.call->variant.empty() &&
                                   (c.call->variant_chosen || variants[i].empty());
                c.variant = takes ? c.call->variant : variants[i];
            }
            store.write(batch);
        });
    } catch (...) {
        // plan_cycle gave back the gate's takes: the caller must not give them back again.
        for (auto& c : batch) {
            c.call.reset();
        }
        throw;
    }
}

}  // namespace

lane_cycle_result lane_cycle(lane_store& store, const lane_context& ctx, std::optional<finished_calls>& pending,
                             std::size_t room) {
    std::vector<lane_row> batch;  // the settled rows that go on at once (lane_row::settled), then the claimed ones
    lane_cycle_result result;
    try {
        if (pending) {
            settle_decisions d = decide_settle(*pending, ctx);
            // No row goes on when a call found its account unavailable or the key out of credits
            // (the settle parks rows), nor once the worker is stopping.
            if (stopping(ctx) || !d.unavailable.empty() || !d.out_of_credits.empty()) {
                std::fill(d.due_now.begin(), d.due_now.end(), false);
            }
            store.settle(*pending, d, &batch);
            // The batch is let go below: the store's replay stands for it should this cycle fail.
            ORCH_INVARIANT(pending->again != nullptr, "the store's settle of {} calls left no replay",
                           pending->calls.size());
            result.counts.calls = d.nexts.size();
            result.counts.transitions = d.nexts.size();
            result.counts.chained = batch.size();
            pending->let_go();
        }
        if (!stopping(ctx) && room > batch.size()) {
            const std::size_t asked = room - batch.size();
            const std::size_t before = batch.size();
            store.claim(asked, batch);
            result.drained = batch.size() - before < asked;
        } else {
            result.drained = stopping(ctx);
        }
        plan(store, ctx, batch);
        result.counts.transitions += batch.size();
        store.commit();
        for (auto& c : batch) {
            c.settled.reset();
        }
    } catch (...) {
        // The plan rolled back: the gate's takes for its calls (the gate is not rolled back) are
        // given back.
        for (auto& c : batch) {
            if (c.call) {
                ctx.gate->released(target_of(c), *c.campaign, *c.call);
            }
        }
        throw;
    }
    pending.reset();
    const auto send_by = ctx.send_window ? store.leases_from() + std::chrono::duration_cast<cs::time_point::duration>(*ctx.send_window)
                                         : cs::time_point::max();
    for (auto& c : batch) {
        if (c.call) {
            c.send_by = send_by;
            result.calls.push_back(std::make_unique<lane_row>(std::move(c)));
        }
    }
    return result;
}

cycle_counts settle_alone(lane_store& store, const lane_context& ctx, finished_calls& pending) {
    cycle_counts counts;
    if (pending.again) {
        store.settle_again(*pending.again);
        counts.calls = pending.again->calls;
    } else {
        settle_decisions d = decide_settle(pending, ctx);
        std::fill(d.due_now.begin(), d.due_now.end(), false);
        store.settle(pending, d, nullptr);
        counts.calls = d.nexts.size();
    }
    counts.transitions = counts.calls;
    std::vector<lane_row> none;
    plan(store, ctx, none);
    store.commit();
    return counts;
}

}  // namespace orch::engine
