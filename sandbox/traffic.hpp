// What the sandbox measures about its own traffic, for benchmarks and tests (control interface
// GET /control/stats): the latency it applied to each answered request, and the Retry-After
// windows it announced with its 429 answers, with every later request of the same scope that
// arrived before the window's end (a client that ignored the Retry-After it was given).
//
// Also the latency model: uniform between latency_ms_min and latency_ms_max, or log-normal
// given by its median and 99th percentile.
#pragma once

#include "sandbox/settings.hpp"
#include "sandbox/state.hpp"
#include "sandbox/util.hpp"

#include <array>
#include <deque>
#include <map>
#include <string>

namespace orch::sandbox {

// sigma of the log-normal whose median is `median_ms` and 99th percentile `p99_ms`:
// ln(p99 / median) / z(0.99), z(0.99) = 2.3263.
double lognormal_sigma(double median_ms, double p99_ms);

// One latency draw in milliseconds under the settings (0 when no latency is set). The uniform
// distribution draws from `rng` only when latency_ms_max > 0 (as it always did), so a run
// without latency keeps its sequence of draws.
std::int64_t draw_latency_ms(const settings& cfg, rng64& rng);

// The scope a 429 concerns: the whole API key (its request rate, a forced burst), or one action
// of one account (the injected RATE_LIMITED answers, the per-account caps).
enum class limit_scope { key, account_action };
inline constexpr std::size_t limit_scope_count = 2;
const char* to_string(limit_scope s);

class traffic_monitor {
public:
    // A Retry-After window: requests of its scope arriving in [start, end) are violations; those
    // arriving before enforced_end are also refused by the sandbox (only the windows of the
    // injected 429s are: a cap's 429 leaves the refusing to the cap, which may change meanwhile).
    struct window {
        time_point start{};
        time_point end{};
        time_point enforced_end{};
    };
    // A 429 with Retry-After answered at `start` for `scope_id` (the key; or "account\naction").
    // A window that overlaps a live one extends it.
    void opened(limit_scope scope, const std::string& scope_id, time_point start, time_point end, bool enforced);
    // The window of `scope_id` that `arrived` falls in, if any.
    const window* inside(limit_scope scope, const std::string& scope_id, time_point arrived) const;
    // Counts a request that arrived inside a window (the first few are kept as examples).
    void violation(limit_scope scope, json example);
    // Counts a request that arrived inside a window within the grace after its start.
    void in_flight(limit_scope scope) { ++in_flight_[static_cast<std::size_t>(scope)]; }
    // A request answered (any status) at `at` after `latency_ms` of applied latency.
    void answered(time_point at, std::int64_t latency_ms, std::size_t keep_max);
    // Every request that reached the pipeline (answered or dropped).
    void request() { ++requests_total_; }
    void injected_rate_limited() { ++injected_; }

    // The figures, over requests answered in [since_ms, until_ms) (unix ms; until_ms 0: no end)
    // for the latency part; the counters are since the start.
    json stats(std::int64_t since_ms, std::int64_t until_ms) const;

private:
    struct sample {
        std::int64_t at_ms;
        std::int64_t latency_ms;
    };
    std::deque<sample> samples_;
    std::uint64_t requests_total_ = 0;
    std::uint64_t answered_total_ = 0;
    std::uint64_t injected_ = 0;
    std::array<std::map<std::string, window>, limit_scope_count> windows_;
    std::array<std::uint64_t, limit_scope_count> windows_opened_{};
    std::array<std::uint64_t, limit_scope_count> violations_{};
    std::array<std::uint64_t, limit_scope_count> in_flight_{};
    std::array<std::vector<json>, limit_scope_count> examples_;
};

} // namespace orch::sandbox
