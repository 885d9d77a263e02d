#include "engine/cycle_plan.hpp"

#include "engine/invariant.hpp"

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
