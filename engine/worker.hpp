// orch::engine worker: the long-running loop that moves enrollments through their steps.
//
// Threads: `worker_lanes` lanes, each a loop on its own Postgres connection (libpqxx blocks, hot
// statements prepared once), one network thread running the Outreach client's io_context (all
// API calls of all lanes are coroutines there; no thread per request), and one listener on
// LISTEN orch_wake that wakes lanes at once when an event, an apply, a resume or a reconnect made
// work due. The call path streams:
//   - a lane holds at most batch_size leased rows whose calls are queued or running, and runs at
//     most its share of api_pool_size calls at once; a queued call starts the moment a running
//     one returns, and checks the gate's send-time mirror as it leaves (a cooldown or an
//     unavailable account another call just reported holds it);
//   - finished calls go back to the lane, which settles them in small batches: when
//     settle_delay_ms has passed since the first came back (and twice the lane's last cycle
//     since that cycle ended, so that slow commits make for fewer, larger batches), when
//     batch_size are back, or when nothing is left running. No call waits for a batch's slowest
//     one.
// A lane's cycle is one transaction, engine/lane_cycle.hpp over the store port, here the
// Postgres store (engine/pg_lane_store.hpp); the seeded simulation (tests/sim) runs the same cycle
// over its in-memory store:
//   1. settle the calls that came back: each outcome and the state decide() chose after it, as
//      a compare-and-set on (calling, lease owner: the lane's, "<worker_id>/<lane>"); a row whose
//      next step is due at once stays with the lane (engine/chain_hold) and goes on in step 2;
//   2. claim due enrollments (FOR UPDATE SKIP LOCKED) into the lane's free room, apply their
//      inbox events and the due step (engine/cycle_plan.hpp: the gate and the ledger answer
//      before any state moves), write every new state and, for each API call, the intent row
//      with a lease on the enrollment -> commit;
//   then queue the new calls. A claim rides along with every settle; on its own it waits until
//   half the lane's room is free, so a lane does not commit once per call. (If the transaction
//   fails, the settle is retried alone so finished calls do not wait for their lease.)
// A worker killed anywhere leaves enrollments either untouched, or `calling` with an intent and a
// lease that expires; whoever claims them next reconciles before resending.
//
// Stop: request_stop() (SIGTERM/SIGINT) stops claiming; lanes finish the calls in flight and
// settle them, bounded by stop_timeout_ms; what is left is released by lease expiry.
#pragma once

#include "engine/config.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

namespace orch::engine {

struct worker_stats {
    std::atomic<std::uint64_t> transitions{0};   // committed: each claimed row's step, each call's settle
    std::atomic<std::uint64_t> calls{0};         // API calls completed
    std::atomic<std::uint64_t> chained{0};       // settled calls whose next step was decided in the same cycle
    std::atomic<std::uint64_t> cycles{0};
    std::atomic<std::uint64_t> ledger_fast{0};     // cycles whose ledger writes took the fast path
    std::atomic<std::uint64_t> ledger_locked{0};   // ... that fell back to the locked path
    std::atomic<std::uint64_t> gate_timeouts{0};   // lane transactions that went on without their gate
    std::atomic<std::uint64_t> unreached{0};       // calls the API gave no answer to (connect, timeout, lost)
    std::atomic<std::uint64_t> answered{0};        // calls the API answered (whatever it said)
    std::atomic<std::uint64_t> unreadable{0};      // calls whose answer the client could not read
};

class worker {
public:
    explicit worker(settings s);
    ~worker();
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;

    // Runs until request_stop(); returns 0 on a clean stop, non-zero when it had to stop on an
    // error (logged). `exit_when_idle`: return once nothing is live in any active campaign
    // (demo and tests).
    int run(bool exit_when_idle = false);
    void request_stop();
    const worker_stats& stats() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace orch::engine
