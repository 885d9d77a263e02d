// The seeded simulation of the whole engine (tests/sim/README.md): the real planner
// (engine/planner), lane cycle (engine/lane_cycle: settle, claim, plan, write), call path
// (engine/call_path: send-time checks, executor, the window of calls in flight) and state machine
// run over in-memory ports (store, gate, ledger), a simulated
// clock and a simulated Outreach API with latency, 429 bursts, lost responses, disconnections,
// credits running out, and early, duplicate, out-of-order and lost events; worker processes
// crash at every await point. The guarantees are checked at every step.
#pragma once

#include "campaigns/campaigns.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace orch::sim {

struct options {
    std::uint64_t seed = 1;
    int leads = 24;
    int accounts = 3;
    int processes = 2;
    std::size_t pool = 6;    // calls in flight per process (api_pool_size)
    std::size_t batch = 8;   // rows a process holds (batch_size)
    int lease_seconds = 60;
    // The API.
    double latency_median_ms = 300;
    double latency_sigma = 0.9;                 // log-normal; clamped to 10 s
    double account_burst_rate = 0.03;           // a request opens a 429 burst on its account
    double key_burst_rate = 0.005;              // ... on the whole key
    double burst_retry_after_share = 0.6;       // bursts whose 429s carry Retry-After
    double lost_before_effect = 0.02;           // the request times out before the API acted
    double lost_after_effect = 0.02;            // the API acted, the answer is lost
    double connect_failure = 0.01;              // nothing was sent
    double disconnect_rate = 0.002;             // a request finds its account logged out (for hours)
    std::int64_t key_credits = 0;               // 0: leads * 4 (runs out mid-run); topped up later
    double accept_share = 0.6;
    double early_accept_share = 0.1;            // acceptances within 3 s of the invitation
    double reply_share = 0.3;
    // The events.
    double event_lost = 0.05;
    double event_duplicated = 0.1;
    // The orchestrator.
    std::int64_t budget = 0;                    // 0: leads * 8
    int invite_day_quota = 4;
    double crash_rate = 0.01;                   // at each await point of a worker process
    // A deliberate defect: the call path's send-time check is skipped and answers are not
    // mirrored (the checks must then find requests inside cooldown windows).
    bool break_send_time_check = false;
    // Another: calls leave however close their leases are to their end (no send window), so a
    // call queued past its lease can leave while another process reconciles its row.
    bool break_send_window = false;
    std::chrono::hours horizon{24 * 40};
};

struct report {
    std::uint64_t seed = 0;
    std::vector<std::string> violations;  // empty: every guarantee held
    std::uint64_t digest = 0;             // of every request and final state: equal for a replay
    std::uint64_t requests = 0, invites = 0, messages = 0, rate_limited = 0, crashes = 0, events = 0,
                  cycles = 0, chained = 0, finished = 0;  // chained: settled rows that went on in the same cycle
    // Reservations refused to wait for the calls in flight (the ledger's in_flight refusal)
    // rather than pause the campaign.
    std::uint64_t budget_waits = 0;
    double sim_days = 0;
    std::string summary() const;
};

report run(const options& o);

// The simulation's campaign, loaded by the real loader (invite; wait 3 days for the acceptance,
// else withdraw; introduction; a day; follow-up; stop on reply) over accounts acc_1..acc_N.
// Throws std::runtime_error when it does not load.
campaigns::campaign sim_campaign(int accounts, std::int64_t budget);

}  // namespace orch::sim
