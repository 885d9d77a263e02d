// Saturation benchmark of the day quota and pacing (orch::limits::limiter::take; issue 6: "in a
// saturated run, at least 95% of the configured quota used with zero violations").
//
// CALLERS threads race for ACCOUNTS accounts (thread t works account t % ACCOUNTS), each take for
// the invite action with a day quota of QUOTA (no week quota, no ramp-up, no key rate bucket: the
// quota and pacing alone are measured). With pacing on, the check carries a working window of
// WINDOW_S seconds and, as the engine's gate passes it, what is left of it at each take: after
// each take the account waits min(window / QUOTA, left / (takes still allowed + 1)) * U(0.5, 1.5)
// (the engine's formula, buckets.lua) before the next; with pacing off, the whole quota may go at
// once. A denied
// caller sleeps until the verdict's retry_after (capped at the end of the run) and asks again,
// as the engine's scheduler does. The run lasts the window plus GRACE_S.
//
// Reported per account and in total: allowed takes, those sent inside the window vs QUOTA (%
// used: the engine makes no call after its working window ends), the time of the last one,
// denials by reason, and violations:
//   - over quota: more than QUOTA takes allowed for an account;
//   - pacing: two consecutive allowed takes of an account closer than the minimum gap the first
//     of them set, floor(min(window / QUOTA, left / (QUOTA - n + 1)) * 0.5) ms where it was the
//     n-th take and `left` the window left it carried. The take happens inside Redis between the
//     caller's send and receive, so a pair counts as a violation only when even the widest
//     reading (receive of the second minus send of the first) is below the minimum.
// Each run uses a fresh API key tag (its own Redis keys), so runs never share counters.
// Exit status: 0 when there is no violation (the % used is reported, not enforced).
#include "engine/limits/limits.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace orch::limits;
using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct options {
    std::string redis_url;
    int callers = 16;
    int accounts = 1;
    std::int64_t quota = 100;
    double window_s = 60;
    double grace_s = 5;
    bool pacing = true;
};

// The options, parsed by CLI11 (ranges checked there); exits with its message on bad ones.
options parse(int argc, char** argv) {
    options o;
    std::string pacing = "on";
    CLI::App app{"quota_saturation_bench: a saturated day quota raced by CALLERS threads"};
    app.add_option("--redis-url", o.redis_url, "redis://host:port[/db]")->required();
    app.add_option("--callers", o.callers)->check(CLI::Range(1, 256));
    app.add_option("--accounts", o.accounts)->check(CLI::Range(1, 256));
    app.add_option("--quota", o.quota)->check(CLI::Range(std::int64_t{1}, std::int64_t{100'000}));
    app.add_option("--window-s", o.window_s)->check(CLI::Range(1.0, 1e6));
    app.add_option("--grace-s", o.grace_s)->check(CLI::Range(0.0, 1e6));
    app.add_option("--pacing", pacing)->check(CLI::IsMember({"on", "off"}));
    try {
        app.parse(argc, argv);
        if (o.accounts > o.callers) {
            throw CLI::ValidationError("--accounts", "must not exceed --callers");
        }
    } catch (const CLI::ParseError& e) {
        std::exit(app.exit(e));
    }
    o.pacing = pacing == "on";
    return o;
}

// One allowed take as the caller saw it: sent and received, ms since the run started.
struct take_time {
    double sent_ms = 0;
    double received_ms = 0;
    double window_left_ms = 0;  // what the check carried (0: unknown)
};

struct account_log {
    std::mutex m;
    std::vector<take_time> allowed;
    std::map<std::string, std::int64_t> denied;   // reason -> count
};

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    spdlog::set_level(spdlog::level::warn);   // not a line per pooled connection loading the script
    settings s;
    s.redis_url = o.redis_url;
    // A key of this run's own: its buckets start empty.
    s.api_key = "quota-saturation-" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
    s.key_requests_per_s = 0;   // no key rate bucket: the quota and pacing alone
    s.pool_size = static_cast<std::size_t>(o.callers);
    auto& invite = s.actions[static_cast<std::size_t>(action::invite)];
    invite.ramp = {};
    invite.limit = quota{o.quota, -1};
    limiter lim(s);

    auto day = day_in_zone(std::chrono::system_clock::now(), "UTC");
    const auto window = milliseconds(static_cast<std::int64_t>(o.window_s * 1000));
    if (!day || day->left < window + milliseconds(static_cast<std::int64_t>(o.grace_s * 1000) + 1000)) {
        std::fprintf(stderr, "quota_saturation_bench: the UTC day ends within the run; run it again after midnight\n");
        return 2;
    }
    auto make_check = [&](int account) {
        check c;
        c.account_id = "sat_acc_" + std::to_string(account);
        c.what = action::invite;
        c.day = *day;
        c.first_day = day->day - 100;   // an old account: no ramp-up
        c.working_window = o.pacing ? window : milliseconds(0);
        return c;
    };

    std::vector<account_log> logs(static_cast<std::size_t>(o.accounts));
    std::atomic<bool> go{false};
    std::atomic<std::int64_t> unavailable{0};
    const auto run_length = std::chrono::duration<double>(o.window_s + o.grace_s);
    clock_type::time_point started{};
    std::vector<std::thread> threads;
    for (int t = 0; t < o.callers; ++t) {
        threads.emplace_back([&, t] {
            const int account = t % o.accounts;
            check c = make_check(account);
            auto& log = logs[static_cast<std::size_t>(account)];
            while (!go.load()) {
                std::this_thread::yield();
            }
            const auto end = started + std::chrono::duration_cast<clock_type::duration>(run_length);
            auto since = [&](clock_type::time_point p) {
                return std::chrono::duration<double, std::milli>(p - started).count();
            };
            for (;;) {
                auto sent = clock_type::now();
                if (sent >= end) {
                    break;
                }
                if (o.pacing) {  // what is left of the window, as the engine's gate computes it
                    const auto elapsed = std::chrono::duration_cast<milliseconds>(sent - started);
                    c.window_left = elapsed < window ? window - elapsed : milliseconds(0);
                }
                verdict v = lim.take(c);
                auto received = clock_type::now();
                {
                    std::lock_guard lock(log.m);
                    if (v.allowed) {
                        log.allowed.push_back({since(sent), since(received), static_cast<double>(c.window_left.count())});
                    } else {
                        ++log.denied[to_string(v.why)];
                    }
                }
                if (v.why == reason::unavailable || v.why == reason::bad_input) {
                    ++unavailable;
                }
                if (!v.allowed) {
                    auto wake = received + std::max(v.retry_after, milliseconds(1));
                    std::this_thread::sleep_until(std::min(wake, end));
                }
            }
        });
    }
    started = clock_type::now();
    go.store(true);
    for (auto& th : threads) {
        th.join();
    }

    // floor(window / quota * factor_min) ms: the smallest gap buckets.lua sets while the account
    // keeps pace (one that fell behind gets shorter ones, see the header).
    const double min_gap_ms =
        o.pacing ? std::floor(static_cast<double>(window.count()) / static_cast<double>(o.quota) * s.pacing_factor_min)
                 : 0;
    std::int64_t total_allowed = 0;
    std::int64_t over_quota = 0;
    std::int64_t pacing_violations = 0;
    std::int64_t in_window = 0;
    std::int64_t worst_in_window = 0;   // the account that used the least of its quota in the window
    std::map<std::string, std::int64_t> denied_total;
    double smallest_gap_ms = -1;
    std::printf("pacing=%s quota=%lld window_s=%.0f grace_s=%.0f callers=%d accounts=%d min_gap_ms=%.0f\n",
                o.pacing ? "on" : "off", static_cast<long long>(o.quota), o.window_s, o.grace_s, o.callers, o.accounts,
                min_gap_ms);
    for (int a = 0; a < o.accounts; ++a) {
        auto& log = logs[static_cast<std::size_t>(a)];
        std::sort(log.allowed.begin(), log.allowed.end(),
                  [](const take_time& x, const take_time& y) { return x.sent_ms < y.sent_ms; });
        const auto n = static_cast<std::int64_t>(log.allowed.size());
        total_allowed += n;
        over_quota += std::max<std::int64_t>(0, n - o.quota);
        double last_ms = n > 0 ? log.allowed.back().received_ms : 0;
        // Taken inside the working window (the engine makes no call after it): what counts as used.
        std::int64_t account_in_window = 0;
        for (const auto& tk : log.allowed) {
            account_in_window += tk.sent_ms <= static_cast<double>(window.count()) ? 1 : 0;
        }
        in_window += account_in_window;
        worst_in_window = a == 0 ? account_in_window : std::min(worst_in_window, account_in_window);
        double account_smallest = -1;
        for (std::size_t i = 1; i < log.allowed.size(); ++i) {
            // The widest reading of the gap between two takes (see the header).
            double widest = log.allowed[i].received_ms - log.allowed[i - 1].sent_ms;
            double nominal = log.allowed[i].sent_ms - log.allowed[i - 1].sent_ms;
            // The gap the earlier take set: it was take number i of the account.
            double base = static_cast<double>(window.count()) / static_cast<double>(o.quota);
            const double left = log.allowed[i - 1].window_left_ms;
            if (left > 0) {
                base = std::min(base, left / static_cast<double>(std::max<std::int64_t>(0, o.quota - static_cast<std::int64_t>(i)) + 1));
            }
            if (o.pacing && widest < std::floor(base * s.pacing_factor_min)) {
                ++pacing_violations;
            }
            account_smallest = account_smallest < 0 ? nominal : std::min(account_smallest, nominal);
        }
        if (account_smallest >= 0) {
            smallest_gap_ms = smallest_gap_ms < 0 ? account_smallest : std::min(smallest_gap_ms, account_smallest);
        }
        std::string denials;
        for (const auto& [why, count] : log.denied) {
            denials += (denials.empty() ? "" : ",") + why + ":" + std::to_string(count);
            denied_total[why] += count;
        }
        std::printf("account=%d allowed=%lld in_window=%lld used_in_window_pct=%.1f last_take_s=%.2f "
                    "smallest_gap_ms=%.1f denied={%s}\n",
                    a, static_cast<long long>(n), static_cast<long long>(account_in_window),
                    100.0 * static_cast<double>(account_in_window) / static_cast<double>(o.quota), last_ms / 1000,
                    account_smallest, denials.c_str());
    }
    std::string denials;
    std::int64_t denied = 0;
    for (const auto& [why, count] : denied_total) {
        denials += (denials.empty() ? "" : ",") + why + ":" + std::to_string(count);
        denied += count;
    }
    const double quota_total = static_cast<double>(o.quota) * o.accounts;
    std::printf("total allowed=%lld of %.0f in_window=%lld used_in_window_pct=%.1f worst_account_pct=%.1f "
                "denied=%lld {%s} smallest_gap_ms=%.1f violations_over_quota=%lld violations_pacing=%lld "
                "unavailable=%lld\n",
                static_cast<long long>(total_allowed), quota_total, static_cast<long long>(in_window),
                100.0 * static_cast<double>(in_window) / quota_total,
                100.0 * static_cast<double>(worst_in_window) / static_cast<double>(o.quota),
                static_cast<long long>(denied), denials.c_str(), smallest_gap_ms, static_cast<long long>(over_quota),
                static_cast<long long>(pacing_violations), static_cast<long long>(unavailable.load()));
    return over_quota == 0 && pacing_violations == 0 && unavailable.load() == 0 ? 0 : 1;
}
