// What a process says about a dependency that stopped answering, for the threads that share it
// (the worker's lanes and its wake-up listener share one for PostgreSQL): the outage's start once,
// with the first error; while it lasts, a summary every `summary_every` rather than a line per
// failed attempt; its end once, when every thread that failed has succeeded again, with how long it
// lasted and how many attempts failed. Without it, a 20 s PostgreSQL restart gave a hundred warnings
// per worker and no line when it was over.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <string>

namespace orch::engine {

class outage_log {
public:
    using clock = std::chrono::steady_clock;

    // `who` names the process in every line ("worker"), `what` the dependency ("database").
    outage_log(std::string who, std::string what, std::chrono::seconds summary_every = std::chrono::seconds(30));

    // A caller (a lane's index, say) failed to reach the dependency. Starts the outage if none is
    // running (logged at once); else counts the attempt, and logs a summary when one is due.
    void failed(int caller, const std::string& error, clock::time_point now = clock::now());
    // The caller reached the dependency. Ends the outage (logged) once no caller is failing. Costs
    // one relaxed atomic load when nothing is failing: the lanes call it after every cycle.
    void succeeded(int caller, clock::time_point now = clock::now());

    bool down() const { return failing_any_.load(std::memory_order_relaxed); }
    // Outages that started and attempts that failed, since the process started.
    std::uint64_t outages() const { return outages_.load(std::memory_order_relaxed); }
    std::uint64_t failed_attempts() const { return attempts_total_.load(std::memory_order_relaxed); }

private:
    const std::string who_;
    const std::string what_;
    const std::chrono::seconds summary_every_;
    std::mutex m_;
    std::set<int> failing_;
    std::atomic<bool> failing_any_{false};
    clock::time_point since_{};
    clock::time_point last_told_{};
    std::uint64_t attempts_ = 0;          // in the current outage
    std::uint64_t attempts_told_ = 0;     // at the last line
    std::string last_error_;
    std::atomic<std::uint64_t> outages_{0};
    std::atomic<std::uint64_t> attempts_total_{0};
};

// The wait before a caller's next attempt to reach a dependency that failed `failures` times in a
// row: doubling from `base` up to `cap`, with full jitter over its upper half, so that the lanes of
// every worker do not reconnect in step (a restarted PostgreSQL meets them spread out), and a short
// blip costs a lane a quarter of a second, a long outage one attempt every few seconds.
class reconnect_backoff {
public:
    explicit reconnect_backoff(std::chrono::milliseconds base = std::chrono::milliseconds(250),
                               std::chrono::milliseconds cap = std::chrono::milliseconds(4000),
                               std::uint_fast32_t seed = std::random_device{}());
    // The wait after one more failure.
    std::chrono::milliseconds next();
    void reset() { failures_ = 0; }
    int failures() const { return failures_; }

private:
    std::chrono::milliseconds base_;
    std::chrono::milliseconds cap_;
    int failures_ = 0;
    std::minstd_rand rng_;
};

}  // namespace orch::engine
