// orch::engine cycle plan: one cycle's decisions over ports, the same code in the worker and in
// the seeded simulation (tests/sim):
//   1. every row's inbox events and due step (planner::propose);
//   2. the gate's verdicts on the calls those steps would make, in one round trip (call_gate);
//   3. an attempt id for each call the gate allowed, and the ledger's verdicts (ledger_port);
//   4. the steps taken with both verdicts in (planner::take), and the rows written.
// Nothing decided is undone: the states move in step 4 only. What the gate took for a call the
// ledger then refused is given back to it (call_gate::released).
#pragma once

#include "engine/call_gate.hpp"
#include "engine/planner.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace orch::engine {

// One row of a cycle's plan.
struct plan_item {
    planner::row row;  // in: as claimed; out: as decided
    call_target target;
    std::vector<planner::inbox_event> events;  // in id order
    // Out: the call to make now, and its attempt id.
    std::optional<campaigns::api_call> call;
    std::int64_t attempt_id = 0;
    // The plan's own: the proposal, the row as proposed (planned again from it when the ledger
    // answers twice), the verdicts.
    std::optional<campaigns::decision> proposal;
    campaigns::enrollment_state proposed;
    planner::verdict gate;
    planner::verdict ledger;
};

// A call the ledger is asked to reserve for: its attempt id, its intent (the step's next state
// and call, as proposed) and the cost model's upper bound.
struct ledger_ask {
    const plan_item* item = nullptr;
    std::int64_t attempt_id = 0;
    std::string action;     // what the call is, for the ledger's reports ("invite", "send", ...)
    std::int64_t credits = 0;
};

// The ledger as a cycle's plan sees it: the Postgres one (engine/worker.cpp: intents, the fast
// path and its fall-back under locks) and the simulation's in-memory one.
class ledger_port {
public:
    virtual ~ledger_port() = default;
    // Answers one verdict per ask, in order, and calls `write` with them; `write` takes the
    // steps and writes the rows. An implementation may call `write` again with other verdicts
    // after undoing what the first call wrote (the Postgres one rolls back to a savepoint when
    // its fast path gives way): only the last call stands.
    virtual void reserve(std::span<const ledger_ask> asks,
                         const std::function<void(std::span<const planner::verdict>)>& write) = 0;
    // Which of these calls (each held back by the gate for a while) a budget cap would refuse
    // for long now: a used-up day cap, or the sender's cap in the campaign (engine/ledger.hpp's
    // standing_refusals). One verdict per ask, allowed for the others; reads only, reserves
    // nothing. The default refuses none (the caps are then met at reserve(), when the gate lets
    // the call through).
    virtual std::vector<planner::verdict> standing_refusals(std::span<const ledger_ask> asks, campaigns::time_point now) {
        (void)now;
        return std::vector<planner::verdict>(asks.size());
    }
};

struct plan_ports {
    call_gate* gate = nullptr;
    ledger_port* ledger = nullptr;
    std::function<std::vector<std::int64_t>(std::size_t)> attempt_ids;  // n fresh attempt ids
    // A due event the machine refused (logged by the caller): the item and why.
    std::function<void(const plan_item&, const std::string&)> refused;
};

// Steps 1-4 over `items`. `write` is called (from inside the ledger's reserve) once the states
// are decided, with each item's row, call and attempt id as that answer of the ledger decided
// them; it may run again after the ledger undid its writes (ledger_port), and the last run's
// values stand. When plan_cycle throws (the cycle fails and rolls back), it has given back
// every take of the gate it held and no item has a call: the caller gives back nothing of it.
void plan_cycle(std::span<plan_item> items, const plan_ports& ports, campaigns::time_point now,
                const std::function<void()>& write);

// The action a call's attempt row and ledger transfer are about: the side-effecting action being
// reconciled, or the call itself.
std::string attempt_action(const campaigns::campaign& c, const std::string& step_id, const campaigns::api_call& call);

}  // namespace orch::engine
