#include "engine/cycle_plan.hpp"

#include "engine/invariant.hpp"

#include <map>
#include <set>
#include <string_view>
#include <utility>

namespace orch::engine {

namespace cs = campaigns;

std::string attempt_action(const cs::campaign& c, const std::string& step_id, const cs::api_call& call) {
    if (!call.reconcile) {
        return cs::to_string(call.kind);
    }
    if (const cs::step* s = cs::find_step(c, step_id); s != nullptr) {
        switch (s->kind) {
        case cs::step_kind::invite:
            return "invite";
        case cs::step_kind::withdraw:
            return "withdraw";
        case cs::step_kind::send:
            return "send";
        case cs::step_kind::visit:
            return "visit";
        default:
            break;
        }
    }
    return cs::to_string(call.kind);
}

namespace {

// A wait of the gate that ends soon, after which the call is asked again.
bool short_gate_wait(cs::wait_code code) {
    switch (code) {
    case cs::wait_code::key_rate:
    case cs::wait_code::key_cooldown:
    case cs::wait_code::account_cooldown:
    case cs::wait_code::pacing:
    case cs::wait_code::throttled:
        return true;
    default:
        return false;
    }
}

// A call the gate holds back for a short while, whose campaign's day cap (or the sender's cap)
// is used up, waits for the cap instead: otherwise it would come back for the gate, only to be
// refused by the ledger once it won a place (behind a busy API key, one lead a rate interval),
// and say "waiting for the API key's request rate" meanwhile. The ledger is asked here only for
// the calls of a campaign and sender with no call allowed in this plan: the others are answered by
// the ledger's reserve, which counts those calls' reservations (wait_with_refused_calls). By sender,
// not by campaign: a call allowed for one sender answers that sender's cap and the campaign's day
// cap, not another sender's cap, whose held calls would otherwise wait for the key's turn again
// and again while their cap is used up.
void wait_for_standing_caps(const std::vector<plan_item*>& asking, const plan_ports& ports, cs::time_point now) {
    std::vector<plan_item*> held;
    for (plan_item* it : asking) {
        if (!it->gate.allowed && short_gate_wait(it->gate.code)) {
            held.push_back(it);
        }
    }
    if (held.empty()) {
        return;   // the common case: the gate held nothing back for a moment
    }
    std::set<std::pair<std::int64_t, std::string_view>> reserving;   // campaign and sender
    for (const plan_item* it : asking) {
        if (it->gate.allowed) {
            reserving.emplace(it->target.campaign_id, it->target.account_id);
        }
    }
    std::erase_if(held, [&](const plan_item* it) {
        return reserving.contains({it->target.campaign_id, it->target.account_id}) ||
               credits_upper_bound(*it->proposal->call) <= 0;
    });
    std::vector<ledger_ask> asks;
    for (plan_item* it : held) {
        const cs::api_call& call = *it->proposal->call;
        asks.push_back({it, 0, attempt_action(*it->row.campaign, it->proposal->next.step, call),
                        credits_upper_bound(call)});
    }
    if (asks.empty()) {
        return;
    }
    auto verdicts = ports.ledger->standing_refusals(asks, now);
    ORCH_INVARIANT(verdicts.size() == asks.size(), "the ledger answered {} standing refusals for {} calls",
                   verdicts.size(), asks.size());
    for (std::size_t i = 0; i < held.size(); ++i) {
        if (!verdicts[i].allowed) {
            held[i]->gate = std::move(verdicts[i]);
            ports.gate->waits_elsewhere(held[i]->target, now);
        }
    }
}

// The ledger's reserve refused an allowed call of a campaign for its day cap (or its sender's
// cap): the same campaign's calls (of that sender) that the gate holds back for a short while,
// and that need at least as many credits, would be refused too; they wait for the cap with it.
void wait_with_refused_calls(const std::vector<plan_item*>& asking, std::span<plan_item* const> allowed,
                             std::span<const ledger_ask> asks, call_gate& gate, cs::time_point now) {
    std::map<std::int64_t, std::pair<std::int64_t, const planner::verdict*>> day;               // campaign ->
    std::map<std::pair<std::int64_t, std::string>, std::pair<std::int64_t, const planner::verdict*>> sender;
    const auto note = [](auto& refused, const auto& key, std::int64_t credits, const planner::verdict& v) {
        auto [it, fresh] = refused.try_emplace(key, credits, &v);
        if (!fresh && credits < it->second.first) {
            it->second = {credits, &v};   // the smallest refused call: any call needing more is refused too
        }
    };
    for (std::size_t i = 0; i < allowed.size(); ++i) {
        const plan_item& it = *allowed[i];
        if (it.ledger.code == cs::wait_code::day_budget) {
            note(day, it.target.campaign_id, asks[i].credits, it.ledger);
        } else if (it.ledger.code == cs::wait_code::account_budget) {
            note(sender, std::pair{it.target.campaign_id, it.target.account_id}, asks[i].credits, it.ledger);
        }
    }
    if (day.empty() && sender.empty()) {
        return;
    }
    for (plan_item* it : asking) {
        if (it->gate.allowed || !short_gate_wait(it->gate.code)) {
            continue;
        }
        const std::int64_t credits = credits_upper_bound(*it->proposal->call);
        if (auto d = day.find(it->target.campaign_id); d != day.end() && credits >= d->second.first) {
            it->gate = *d->second.second;
            gate.waits_elsewhere(it->target, now);
        } else if (auto a = sender.find({it->target.campaign_id, it->target.account_id});
                   a != sender.end() && credits >= a->second.first) {
            it->gate = *a->second.second;
            gate.waits_elsewhere(it->target, now);
        }
    }
}

}  // namespace

void plan_cycle(std::span<plan_item> items, const plan_ports& ports, cs::time_point now,
                const std::function<void()>& write) {
    std::vector<plan_item*> asking;
    for (auto& it : items) {
        std::string refused;
        it.proposal = planner::propose(it.row, it.events, now, &refused);
        if (!refused.empty() && ports.refused) {
            ports.refused(it, refused);
        }
        it.call.reset();
        it.attempt_id = 0;
        it.target.gate_take = 0;
        if (it.proposal) {
            it.proposed = it.row.state;
            asking.push_back(&it);
        }
    }
    if (!asking.empty()) {
        std::vector<gate_request> requests;
        requests.reserve(asking.size());
        for (const plan_item* it : asking) {
            requests.push_back({it->target, it->row.campaign, &*it->proposal->call});
        }
        std::vector<gate_decision> decisions = ports.gate->before_many(requests, now);
        ORCH_INVARIANT(decisions.size() == asking.size(), "the gate answered {} decisions for {} calls",
                       decisions.size(), asking.size());
        for (std::size_t i = 0; i < asking.size(); ++i) {
            auto& g = decisions[i];
            asking[i]->gate = {g.allowed, g.until, std::move(g.reason), g.code};
            asking[i]->target.gate_take = g.allowed ? g.take : 0;
        }
    }
    std::vector<plan_item*> allowed;
    for (plan_item* it : asking) {
        if (it->gate.allowed) {
            allowed.push_back(it);
        }
    }
    std::vector<bool> given_back(allowed.size(), false);
    try {
        // Inside the try: a failed read of the ledger gives back the gate's takes like any failure.
        wait_for_standing_caps(asking, ports, now);
        std::vector<ledger_ask> asks;
        if (!allowed.empty()) {
            const auto ids = ports.attempt_ids(allowed.size());
            ORCH_INVARIANT(ids.size() == allowed.size(), "{} attempt ids for {} calls", ids.size(), allowed.size());
            asks.reserve(allowed.size());
            for (std::size_t i = 0; i < allowed.size(); ++i) {
                plan_item& it = *allowed[i];
                const cs::api_call& call = *it.proposal->call;
                it.attempt_id = ids[i];
                asks.push_back({&it, ids[i], attempt_action(*it.row.campaign, it.proposal->next.step, call),
                                credits_upper_bound(call)});
            }
        }
        ports.ledger->reserve(asks, [&](std::span<const planner::verdict> verdicts) {
            ORCH_INVARIANT(verdicts.size() == allowed.size(), "the ledger answered {} verdicts for {} calls",
                           verdicts.size(), allowed.size());
            for (std::size_t i = 0; i < allowed.size(); ++i) {
                plan_item& it = *allowed[i];
                it.ledger = verdicts[i];
                it.attempt_id = verdicts[i].allowed ? asks[i].attempt_id : 0;
                // A port answers a call allowed, then (after undoing its writes) refused, never the
                // other way round: a take given back stays given back.
                ORCH_INVARIANT(!verdicts[i].allowed || !given_back[i],
                               "the ledger allowed attempt {} after refusing it", asks[i].attempt_id);
                if (!verdicts[i].allowed && !given_back[i]) {
                    // The ledger refused what the gate allowed: the gate's take is given back, once.
                    ports.gate->released(it.target, *it.row.campaign, *it.proposal->call);
                    given_back[i] = true;
                }
            }
            // Once refused, a call stays refused (above): a later answer of the ledger never takes
            // back what this made wait.
            wait_with_refused_calls(asking, allowed, asks, *ports.gate, now);
            for (plan_item* it : asking) {
                it->row.state = it->proposed;
                it->call = planner::take(it->row, *it->proposal, it->gate, it->ledger, now);
            }
            write();
        });
    } catch (...) {
        // The cycle failed (it rolls back): what the gate took for this plan's calls is given
        // back, and no item keeps a call.
        for (std::size_t i = 0; i < allowed.size(); ++i) {
            if (!given_back[i]) {
                ports.gate->released(allowed[i]->target, *allowed[i]->row.campaign, *allowed[i]->proposal->call);
            }
        }
        for (auto& it : items) {
            it.call.reset();
            it.attempt_id = 0;
        }
        throw;
    }
}

}  // namespace orch::engine
