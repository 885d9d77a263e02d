// orch::engine planner: what a worker cycle decides, as pure functions (no I/O, no clock, no
// randomness: `now` and every answer are arguments). The worker (engine/worker.cpp) and the
// seeded simulation (tests/sim) call the same functions, in the same order:
//   1. propose(): a claimed row's inbox events, then its due step. A step without a call is
//      taken at once; one with a call is returned, to be put to the gate and the ledger.
//   2. The gate (rate limits, quotas, pacing, cooldowns) and the ledger (the campaign's budget)
//      answer for every proposed call: verdicts, before any state moves.
//   3. take(): the call's step is taken when both allowed it; otherwise the lead waits until the
//      refusing verdict's time, attempts unchanged. Nothing decided is ever undone.
//   4. After the call, settle(): the outcome's next state, what the ledger posts or voids, and
//      what the shell does beyond this lead (pause the account, pause for credits, stop).
#pragma once

#include "campaigns/campaigns.hpp"
#include "engine/codes.hpp"
#include "engine/executor.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace orch::engine::planner {

namespace cs = campaigns;

// A claimed row as the planner reads and moves it.
struct row {
    const cs::campaign* campaign = nullptr;
    const cs::lead_view* lead = nullptr;
    cs::enrollment_state state;
    std::int64_t event_cursor = 0;  // the last inbox event applied
};

// An inbox event for the row: (event id, kind), in id order.
using inbox_event = std::pair<std::int64_t, event_kind>;

// Step 1. Applies `events` (those at or below the cursor were applied before; other kinds are
// skipped), then decides the due step: nullopt when nothing is to do now (terminal, not yet due,
// or the step refused the due event: `refused` then says why), or when the step made no call
// (taken: `r.state` moved). A `calling` row is due at once: its call's worker is gone and the
// machine reconciles.
std::optional<cs::decision> propose(row& r, std::span<const inbox_event> events, cs::time_point now,
                                    std::string* refused = nullptr);

// A gate's or the ledger's answer for one proposed call.
struct verdict {
    bool allowed = true;
    cs::time_point until{};  // refused: when to look again
    std::string reason;      // refused: shown in the lead's timeline
    cs::wait_code code = cs::wait_code::none;
};

// The ledger's refusal as a verdict (`retry_at`: the day cap's next UTC day, or when a call that
// waits for calls in flight tries again, from the ledger; `account`: the sender). campaign_budget waits with its campaign (`until` is now:
// a resumed campaign runs it at once).
verdict ledger_refused(budget_refusal why, cs::time_point retry_at, const std::string& account,
                       cs::time_point now);

// Step 3. Both allowed: the step is taken (r.state moves) and its call returned. Otherwise the
// lead is parked until the first refusal's time (ev_deferred), attempts unchanged, and nullopt.
std::optional<cs::api_call> take(row& r, cs::decision proposed, const verdict& gate, const verdict& ledger,
                                 cs::time_point now);

// What the ledger does with a finished call's reservation.
struct ledger_action {
    bool post = true;         // post `credits` (the rest of the reservation released); false: void it
    std::int64_t credits = 0;
};

struct settled {
    cs::enrollment_state next;
    ledger_action ledger;
    bool due_now = false;    // the next step is due at once (the worker may go on in this cycle)
    std::string refused;     // the machine refused the outcome (next is `failed`, internal): why
};

// Step 4: the outcome of `call`, made from the row in `r`.
settled settle(const row& r, const cs::api_call& call, const call_outcome& o, cs::time_point now);

}  // namespace orch::engine::planner
