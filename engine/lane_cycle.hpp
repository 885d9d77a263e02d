// orch::engine lane cycle: one transaction of a worker lane over the store port, the same code in
// the worker (engine/worker.cpp over the Postgres store, engine/pg_lane_store.hpp) and in the
// seeded simulation (tests/sim, over its in-memory store). In order:
//   1. settle the calls that came back: each outcome's next state and the ledger's action
//      (planner::settle, after the gate was told the outcome once: call_gate::after), written by
//      the store, which may hold on to rows whose next step is due at once (they go on in this
//      cycle: one row version for the settle and the next step);
//   2. claim up to `room` due rows no live lease holds;
//   3. the claimed rows' inbox events, and the attempts of rows whose worker died closed;
//   4. plan_cycle (engine/cycle_plan.hpp) over the gate and the store's ledger, whose `write`
//      is the store's write of the plan;
//   5. commit. The rows whose plan made a call come back to the lane, to start once it commits.
// A cycle that throws has rolled back: what the gate took for its calls is given back, and the
// lane settles its calls on their own (settle_alone) so they do not wait for their leases.
#pragma once

#include "engine/call_gate.hpp"
#include "engine/clock.hpp"
#include "engine/cycle_plan.hpp"
#include "engine/executor.hpp"
#include "engine/planner.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace orch::engine {

// A settled call's outcome as its attempt row records it, kept with a row that goes on to its
// next step in the cycle that settled it (the store writes both in one row version).
struct settled_call {
    std::int64_t attempt_id = 0;
    attempt_outcome outcome = attempt_outcome::ok;
    std::string error;
    std::string call;  // attempt_action(): what the attempt was about
    std::int64_t credits = 0;
};

// A row a lane holds: claimed, or held on from its settle. `settled` is needed only in the cycle
// that sets it and is dropped at its end: a row's memory while its call runs is a worker's memory
// per in-flight lead.
struct lane_row {
    std::int64_t enrollment_id = 0;
    std::int64_t campaign_id = 0;
    std::string account_id;
    std::string account_quotas;  // accounts.quotas as text, "" for none (the limits gate reads it)
    std::string account_time_zone;  // accounts.time_zone, "" for none (the quota day; the gate reads it)
    std::int64_t account_login = 0;  // the account's login the claim read (call_target::account_login)
    std::string profile_url;
    std::string company;  // the lead's `company` field (do-not-contact by company)
    std::shared_ptr<const campaigns::campaign> campaign;
    campaigns::lead_view lead;
    campaigns::enrollment_state state;
    std::int64_t event_cursor = 0;
    bool was_calling = false;  // claimed in `calling`: its worker died during the call
    std::optional<campaigns::api_call> call;
    std::string variant;
    std::int64_t attempt_id = 0;
    std::uint64_t gate_take = 0;  // what the gate took for `call` (call_target::gate_take)
    std::shared_ptr<const settled_call> settled;  // set: not claimed but held on from this cycle's settle
    // The last moment its call's requests may leave (engine/call_path.hpp, call_job::send_by):
    // lane_cycle sets it from the store's leases_from() and lane_context::send_window.
    campaigns::time_point send_by = campaigns::time_point::max();
};

call_target target_of(const lane_row& r);

// What a store keeps of a settle it wrote, to write it again on its own when the cycle's
// transaction failed (lane_store::settle_again). Its own type per store.
struct settle_replay {
    virtual ~settle_replay() = default;
    std::size_t calls = 0;
};

// A lane's calls that have come back, settled by its next cycle.
struct finished_calls {
    std::vector<lane_row> batch;
    std::vector<std::size_t> calls;  // indexes into batch, in the order of outcomes
    std::vector<call_outcome> outcomes;
    bool gated = false;  // the gate has been told the outcomes (its state is not rolled back)
    std::size_t told = 0;  // how many of them, in order, when a settle stopped half-way
    // Set by the store's settle: once set, the batch and outcomes are let go before the cycle
    // claims (the rows that go on are moved into its batch), so a lane holds one batch of rows at
    // a time, not two.
    std::unique_ptr<settle_replay> again;
    void let_go();
};

// An account a call found unavailable (ACCOUNT_INACTIVE): the error that said so, and the logins
// its calls were claimed under (call_target::account_login). The store pauses the account only
// when one of them is still its login.
struct unavailable_account {
    std::string error;
    std::set<std::int64_t> logins;
};

// The settle's decisions, parallel to finished_calls::calls.
struct settle_decisions {
    std::vector<campaigns::enrollment_state> nexts;
    std::vector<settled_call> outcomes;
    std::vector<planner::ledger_action> ledger;
    std::vector<bool> due_now;  // the next step is due at once, and the row may be held on
    std::map<std::string, unavailable_account> unavailable;  // what the calls found, by account
    std::string out_of_credits;  // the error, "" when no call found the key out of credits
};

// The store as a lane's cycle sees it: one transaction of it, committed by commit(). The
// Postgres store (engine/pg_lane_store.hpp) keeps its optimisations inside: claim and settle in
// one transaction, the ledger's fast path and its locked fall-back.
class lane_store {
public:
    virtual ~lane_store() = default;
    // Writes the settle: each call's outcome and its row's next state with its lease released
    // (a row whose lease this lane lost is someone else's: not moved), the ledger's posts and
    // voids (applied by ledger()'s reserve), and what the calls found: accounts unavailable
    // (parked), the key out of credits (campaigns paused). With `chain` (a cycle's settle, not
    // settle_alone's): the rows marked `due_now` that this lane still leases may be held on
    // instead of released, each moved into `chain` with its next state and `settled` set; and
    // `done.again` is set.
    virtual void settle(finished_calls& done, settle_decisions& d, std::vector<lane_row>* chain) = 0;
    // Writes a settle again (every row released) after the cycle that first wrote it failed.
    virtual void settle_again(const settle_replay& r) = 0;
    // Appends up to `limit` due rows no live lease holds to `batch`.
    virtual void claim(std::size_t limit, std::vector<lane_row>& batch) = 0;
    // The inbox events after each row's cursor, in id order, into the row's item (parallel).
    virtual void pending_events(std::span<const lane_row> batch, std::span<plan_item> items) = 0;
    // The attempts of rows claimed in `calling` (their worker died) are closed; they may have
    // been charged, so their whole reservations are posted.
    virtual void close_lost(std::span<const lane_row> batch) = 0;
    virtual ledger_port& ledger() = 0;
    virtual std::vector<std::int64_t> attempt_ids(std::size_t n) = 0;
    // The plan's rows: their states and cursors; those with a call leased to this lane, the
    // others released, and every row released by this transaction made due when an inbox event
    // waits for it. Called by the ledger's reserve, possibly twice (plan_cycle).
    virtual void write(std::span<const lane_row> batch) = 0;
    virtual void commit() = 0;
    // No later than the moment the leases this transaction writes count from (the database's
    // clock at the transaction's start), read on the engine's clock before the transaction began.
    virtual campaigns::time_point leases_from() const = 0;
};

// What a lane's cycle decides with, besides the store.
struct lane_context {
    call_gate* gate = nullptr;
    // Read when the settle is decided, and again for the plan once the claim is in: a row the
    // claim found due (by the database's clock at the transaction's start) is due to the plan,
    // as long as the worker's clock is not behind the database's (a row found not yet due is
    // written back as it was, and claimed again later).
    const clock_port* clock = &system_clock();
    std::function<bool()> stopping;  // no claim, no row held on
    // An outcome the state machine refused (its row fails), a due inbox event it refused, and a
    // call that found the API refusing the key itself (the worker stops).
    std::function<void(std::int64_t enrollment_id, const std::string& why)> outcome_refused;
    std::function<void(const plan_item&, const std::string&)> event_refused;
    std::function<void(const std::string& error)> stop_everything;
    // How long after leases_from() a call of the cycle may still leave: the lease less the longest
    // a request may take, so that every request is over before its lease lets another worker
    // reconcile the row (which could not see a request still on its way). None: no limit.
    std::optional<std::chrono::milliseconds> send_window;
};

struct cycle_counts {
    std::uint64_t transitions = 0;  // each claimed row's step, each call's settle
    std::uint64_t calls = 0;
    std::uint64_t chained = 0;  // settled rows that went on to their next step in the same cycle
};

struct lane_cycle_result {
    std::vector<std::unique_ptr<lane_row>> calls;  // to start now
    bool drained = false;  // the claim found fewer due rows than it asked for
    cycle_counts counts;   // committed
};

// Step 1's decisions: the gate told each outcome (once: `done.gated`), then planner::settle.
settle_decisions decide_settle(finished_calls& done, const lane_context& ctx);

// Steps 1-5 in one transaction of `store`. `pending` is reset once committed. On a throw, the
// gate's takes for the plan's calls have been given back; `pending` is kept (with its replay) for
// settle_alone.
lane_cycle_result lane_cycle(lane_store& store, const lane_context& ctx, std::optional<finished_calls>& pending,
                             std::size_t room);

// The settle of `pending` on its own, in one transaction of `store` (after a failed cycle):
// written again from its replay when the failed cycle had written it, every row released.
cycle_counts settle_alone(lane_store& store, const lane_context& ctx, finished_calls& pending);

}  // namespace orch::engine
