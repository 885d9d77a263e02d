// How long a RATE_LIMITED cooldown written by one process takes to hold the calls of another
// (not a CTest test; run by cooldown_visibility_bench.sh against a real Redis).
//
// Two limits_gate instances on the same Redis and API key stand for two worker processes: each
// has its own mirror, refresher thread and Redis connections. Per trial, on a fresh account:
// B looks at the account (hold(): nothing held; B's refresher now follows the account), then A
// records a 429 for it (answered(): the cooldown is in A's mirror at once, then in Redis), and B
// polls hold() until it holds the call. The time from answered() being called to B's first hold
// is the cross-process visibility of the cooldown; the stated bound is
// limits_gate::mirror_refresh plus the refresher's one round trip (it reads the index of every
// scope cooling down, whatever the number of accounts B serves).
//
// Prints one line of key=value pairs per scope (account: the account's action cooldown, with
// --background-accounts more accounts followed by B; key: the key-wide cooldown, a fresh key per
// trial).
#include "engine/limits_gate.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <thread>
#include <vector>

namespace {

namespace cs = orch::campaigns;
namespace limits = orch::limits;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

orch::engine::call_outcome rate_limited(bool account_scope, const std::string& account) {
    orch::engine::call_outcome o;
    o.attempt_outcome = orch::engine::attempt_outcome::transient;
    o.error_code = "RATE_LIMITED";
    // The sandbox's answers: the gate reads an answer whose message names the request's account
    // as the (account, action) scope, any other as the key's.
    o.error_message = account_scope ? "too many 'send' requests for account " + account + "; retry later with backoff"
                                    : "too many requests for this API key; retry later with backoff";
    o.error = "api_error RATE_LIMITED (HTTP 429): " + o.error_message + " [back_off, retry after 30 s]";
    o.retry_after = 30s;  // longer than a trial: B must see it, not miss it expiring
    o.event.kind = cs::result_kind::throttled;
    return o;
}

struct figures {
    std::vector<double> ms;  // per trial: answered() called -> B holds
    double answered_ms_sum = 0;  // time inside A's answered() (its Redis write)
    int missed = 0;              // B never held within the deadline
};

double pct(std::vector<double> v, double p) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

// One trial: B follows `target`, A records the 429, B polls until held.
void trial(orch::engine::limits_gate& a, orch::engine::limits_gate& b, const cs::campaign& campaign,
           const cs::api_call& call, const orch::engine::call_target& target, bool account_scope, figures& f,
           std::mt19937_64& rng) {
    if (b.hold(target, call, std::chrono::system_clock::now())) {
        ++f.missed;  // held before the 429: a leftover; not a measurement
        return;
    }
    // A random phase against B's refresh period, as a real 429 would land.
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 100'000)(rng)));
    const auto start = steady::now();
    a.answered(target, campaign, call, rate_limited(account_scope, target.account_id));
    f.answered_ms_sum += std::chrono::duration<double, std::milli>(steady::now() - start).count();
    while (steady::now() - start < 3s) {
        if (b.hold(target, call, std::chrono::system_clock::now())) {
            f.ms.push_back(std::chrono::duration<double, std::milli>(steady::now() - start).count());
            return;
        }
        std::this_thread::sleep_for(200us);
    }
    ++f.missed;
}

void print(const char* scope, const figures& f, int trials, int followed, double rtt_ms) {
    std::printf("scope=%s trials=%d seen=%zu missed=%d followed_accounts=%d p50_ms=%.1f p99_ms=%.1f max_ms=%.1f "
                "mean_ms=%.1f answered_write_ms=%.2f index_rtt_ms=%.3f stated_bound_ms=%.1f\n",
                scope, trials, f.ms.size(), f.missed, followed, pct(f.ms, 0.50), pct(f.ms, 0.99),
                f.ms.empty() ? 0.0 : *std::max_element(f.ms.begin(), f.ms.end()),
                f.ms.empty() ? 0.0 : std::accumulate(f.ms.begin(), f.ms.end(), 0.0) / static_cast<double>(f.ms.size()),
                f.answered_ms_sum / std::max(1, trials), rtt_ms,
                static_cast<double>(orch::engine::limits_gate::mirror_refresh.count()) + rtt_ms);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"cross-process visibility of a RATE_LIMITED cooldown (two limits_gate instances)"};
    std::string redis_url;
    int trials = 300;
    int key_trials = 50;
    int background = 0;
    app.add_option("--redis-url", redis_url, "Redis URL")->required();
    app.add_option("--trials", trials, "account-scope trials");
    app.add_option("--key-trials", key_trials, "key-scope trials (a fresh key and pair of gates each)");
    app.add_option("--background-accounts", background, "more accounts B follows (its refresher reads each)");
    CLI11_PARSE(app, argc, argv);

    std::random_device rd;
    std::mt19937_64 rng(rd());
    const std::string run = std::to_string(rd());
    cs::campaign campaign;
    campaign.schedule.days = {true, true, true, true, true, true, true};
    campaign.schedule.start_minute = 0;
    campaign.schedule.end_minute = 24 * 60;
    cs::api_call call;
    call.kind = cs::call_kind::send;

    limits::settings s;
    s.redis_url = redis_url;
    s.key_requests_per_s = 0;

    double rtt_ms = 0;  // one read of the cooldown index (the refresher makes one per cycle)
    // Account scope: one pair of gates for every trial.
    {
        s.api_key = "vis-" + run;
        orch::engine::limits_gate a(s, false);
        orch::engine::limits_gate b(s, false);
        std::vector<orch::engine::call_target> others;
        for (int i = 0; i < background; ++i) {
            others.push_back({"vis-bg-" + run + "-" + std::to_string(i), "https://network.example/in/bg", 1, 1'000'000 + i, ""});
        }
        // The round trip of one read of the cooldown index, as B's refresher makes one per cycle
        // (after a warm-up: the first reads open connections and load the script).
        for (int i = 0; i < 50; ++i) {
            (void)b.limiter().cooldowns();
        }
        const auto r0 = steady::now();
        constexpr int rtt_reads = 500;
        for (int i = 0; i < rtt_reads; ++i) {
            (void)b.limiter().cooldowns();
        }
        rtt_ms = std::chrono::duration<double, std::milli>(steady::now() - r0).count() / rtt_reads;
        figures f;
        for (int i = 0; i < trials; ++i) {
            for (const auto& o : others) {
                (void)b.hold(o, call, std::chrono::system_clock::now());  // keep them followed
            }
            const orch::engine::call_target target{"vis-" + run + "-" + std::to_string(i), "https://network.example/in/v",
                                                   1, i + 1, ""};
            trial(a, b, campaign, call, target, true, f, rng);
        }
        const int followed = background + trials;
        print("account", f, trials, followed, rtt_ms);
    }
    // Key scope: the key-wide cooldown, through the same index.
    if (key_trials > 0) {
        figures f;
        for (int i = 0; i < key_trials; ++i) {
            s.api_key = "vis-key-" + run + "-" + std::to_string(i);
            orch::engine::limits_gate a(s, false);
            orch::engine::limits_gate b(s, false);
            const orch::engine::call_target target{"vis-k-" + run + "-" + std::to_string(i),
                                                   "https://network.example/in/k", 1, i + 1, ""};
            trial(a, b, campaign, call, target, false, f, rng);
        }
        print("key", f, key_trials, 1, rtt_ms);
    }
    return 0;
}
