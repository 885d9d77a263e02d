// Benchmark of one rate-limit check (orch::limits::limiter::take): CALLERS threads, each taking
// for its own account through one shared limiter for DURATION seconds, every check on the full
// path (key GCRA bucket, both cooldowns, day and week counters, campaign cap, pacing write).
// Prints the latency per check (p50, p99, max), checks/s, and the Redis CPU spent per check
// (INFO cpu delta over the checks, and the scripts' own time from INFO commandstats).
// With --batch N (N > 1) each caller calls limiter::take_many with N checks (one pipelined round
// trip per batch, as the worker does per claimed batch): p50/p99/max are then the latency of one
// batch, and per_check_us = p50 / N.
// With --print-command FILE it prints the EVALSHA command of caller 0 for redis-benchmark to
// replay: every argument but the last one per line on stdout, the last (the packed numbers of
// the take) into FILE, for redis-benchmark's -x. redis-benchmark cuts an argument at its first
// zero byte, so the bench's numbers are chosen to pack without one (see bench_check).
#include "engine/limits/limits.hpp"

#include <CLI/CLI.hpp>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace orch::limits;
using clock_type = std::chrono::steady_clock;

struct options {
    std::string redis_url;
    int callers = 1;
    int batch = 1;
    double duration_s = 5;
    std::string print_command;  // FILE of the packed argument; empty: run the bench
    bool campaign_cap = true;   // --no-campaign-cap: the check carries no campaign cap
};

// The options, parsed by CLI11 (ranges checked there); exits with its message on bad ones.
options parse(int argc, char** argv) {
    options o;
    CLI::App app{"limits_bench: the cost of a rate-limit check"};
    app.add_option("--redis-url", o.redis_url, "redis://host:port[/db]")->required();
    app.add_option("--callers", o.callers)->check(CLI::Range(1, 256));
    app.add_option("--batch", o.batch, "checks per take_many (1: single take)")->check(CLI::Range(1, 10'000));
    app.add_option("--duration-s", o.duration_s)->check(CLI::PositiveNumber);
    app.add_option("--print-command", o.print_command, "print the take's EVALSHA; the packed argument into FILE");
    bool no_campaign_cap = false;
    app.add_flag("--no-campaign-cap", no_campaign_cap, "the check carries no campaign cap");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        std::exit(app.exit(e));
    }
    o.campaign_cap = !no_campaign_cap;
    return o;
}

// Nothing ever denies: every check walks and writes the whole script (ramp-up included). Every
// number is chosen so that its packed bytes hold no zero (see --print-command): "unlimited"
// quotas are 0x7F7F7F7F (2.1 billion a day: the pacing gap rounds to 0 ms), the day is 0x014FBE,
// the key's emission interval 0x01010101 us with a burst of as many, so the GCRA state is read
// and written and never denies within 16 million checks.
constexpr std::int64_t no_zero_byte = 0x01010101;
constexpr std::int64_t unlimited = 0x7F7F7F7F;

bool with_campaign_cap = true;  // the options' campaign_cap (set once in main)

check bench_check(int caller) {
    check c;
    c.account_id = "bench_acc_" + std::to_string(caller);
    c.what = action::invite;
    c.campaign_id = 0x010101010101;
    c.account_quota = quota{unlimited, unlimited};
    // Without a cap (-1 fields, 0xFFFFFFFF: no zero byte either) the script skips the campaign's
    // counters, as for every campaign that sets no per-account limits.
    c.campaign_cap = with_campaign_cap ? quota{unlimited, unlimited} : quota{-1, -1};
    c.day = {0x014FBE, std::chrono::milliseconds{0x0112A880}};  // 5 h left
    c.working_window = std::chrono::milliseconds{0x01EE6280};   // 9 h
    c.window_left = std::chrono::milliseconds{no_zero_byte};
    c.first_day = 0x014A3B;
    return c;
}

settings bench_settings(const std::string& url) {
    settings s;
    s.redis_url = url;
    s.api_key = "bench-api-key";
    s.key_requests_per_s = 1e6 / static_cast<double>(no_zero_byte);
    s.key_burst = no_zero_byte;
    s.pool_size = 256;
    s.actions[static_cast<std::size_t>(action::invite)].ramp = {no_zero_byte, no_zero_byte};
    s.pacing_factor_min = s.pacing_factor_max = 1.388557;  // 0x152F0D millionths
    s.idle_ttl_ms = no_zero_byte;                          // 4.7 h
    s.counters_ttl_ms = 0x29330101;                        // 8 days and 8 s
    return s;
}

struct redis_cpu {
    double cpu_s = 0;            // used_cpu_sys + used_cpu_user
    long long script_calls = 0;  // cmdstat_evalsha calls
    long long script_usec = 0;   // cmdstat_evalsha usec
};

redis_cpu read_cpu(redisContext* c) {
    redis_cpu out;
    auto* r = static_cast<redisReply*>(redisCommand(c, "INFO all"));
    if (r == nullptr || r->type != REDIS_REPLY_STRING) {
        std::fprintf(stderr, "limits_bench: INFO failed\n");
        std::exit(1);
    }
    std::string info(r->str, r->len);
    freeReplyObject(r);
    auto number = [&](const std::string& key) {
        auto at = info.find("\n" + key + ":");
        return at == std::string::npos ? 0.0 : std::atof(info.c_str() + at + key.size() + 2);
    };
    out.cpu_s = number("used_cpu_sys") + number("used_cpu_user");
    auto at = info.find("cmdstat_evalsha:calls=");
    if (at != std::string::npos) {
        std::sscanf(info.c_str() + at, "cmdstat_evalsha:calls=%lld,usec=%lld", &out.script_calls, &out.script_usec);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    options o = parse(argc, argv);
    with_campaign_cap = o.campaign_cap;
    settings s = bench_settings(o.redis_url);
    limiter lim(s);
    if (!o.print_command.empty()) {
        auto cmd = lim.take_command(bench_check(0));
        if (cmd.back().find('\0') != std::string::npos) {
            std::fprintf(stderr, "limits_bench: the packed argument holds a zero byte: redis-benchmark would cut it\n");
            return 1;
        }
        FILE* f = std::fopen(o.print_command.c_str(), "wb");
        if (f == nullptr || std::fwrite(cmd.back().data(), 1, cmd.back().size(), f) != cmd.back().size() ||
            std::fclose(f) != 0) {
            std::fprintf(stderr, "limits_bench: cannot write %s\n", o.print_command.c_str());
            return 1;
        }
        for (std::size_t i = 0; i + 1 < cmd.size(); ++i) {
            std::printf("%s\n", cmd[i].c_str());
        }
        return lim.take(bench_check(0)).allowed ? 0 : 1;  // also loads the script
    }
    std::string error;
    auto ep = parse_redis_url(o.redis_url, error);
    redisContext* info = redisConnect(ep->host.c_str(), ep->port);
    if (info == nullptr || info->err != 0) {
        std::fprintf(stderr, "limits_bench: cannot connect to %s\n", o.redis_url.c_str());
        return 1;
    }
    // Warm-up: connections in the pool, script loaded.
    for (int i = 0; i < o.callers; ++i) {
        if (!lim.take(bench_check(i)).allowed) {
            std::fprintf(stderr, "limits_bench: warm-up check denied\n");
            return 1;
        }
    }
    std::vector<std::vector<float>> samples(static_cast<std::size_t>(o.callers));
    std::atomic<int> failures{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    const auto duration = std::chrono::duration<double>(o.duration_s);
    for (int t = 0; t < o.callers; ++t) {
        threads.emplace_back([&, t] {
            const std::vector<check> batch(static_cast<std::size_t>(o.batch), bench_check(t));
            auto& mine = samples[static_cast<std::size_t>(t)];
            mine.reserve(1 << 20);
            while (!go.load()) {
                std::this_thread::yield();
            }
            auto end = clock_type::now() + duration;
            for (;;) {
                auto start = clock_type::now();
                if (start >= end) {
                    break;
                }
                if (o.batch == 1) {
                    if (!lim.take(batch.front()).allowed) {
                        ++failures;
                    }
                } else {
                    for (const verdict& v : lim.take_many(batch)) {
                        if (!v.allowed) {
                            ++failures;
                        }
                    }
                }
                auto us = std::chrono::duration<float, std::micro>(clock_type::now() - start).count();
                mine.push_back(us);
            }
        });
    }
    redis_cpu before = read_cpu(info);
    auto started = clock_type::now();
    go.store(true);
    for (auto& th : threads) {
        th.join();
    }
    double elapsed = std::chrono::duration<double>(clock_type::now() - started).count();
    redis_cpu after = read_cpu(info);
    redisFree(info);

    std::vector<float> all;
    for (auto& v : samples) {
        all.insert(all.end(), v.begin(), v.end());
    }
    std::sort(all.begin(), all.end());
    auto pct = [&](double p) { return all[std::min(all.size() - 1, static_cast<std::size_t>(p * all.size()))]; };
    const double checks = static_cast<double>(all.size()) * o.batch;
    // The INFO calls themselves are in the delta; a few microseconds over the whole run.
    const double cpu_us = (after.cpu_s - before.cpu_s) * 1e6 / checks;
    const long long calls = after.script_calls - before.script_calls;
    const double script_us = calls > 0 ? static_cast<double>(after.script_usec - before.script_usec) / calls : 0;
    std::printf("callers=%d batch=%d checks=%.0f checks_per_s=%.0f p50_us=%.1f p99_us=%.1f max_us=%.1f "
                "per_check_us=%.2f redis_cpu_us_per_check=%.2f script_us_per_check=%.2f denied=%d\n",
                o.callers, o.batch, checks, checks / elapsed, pct(0.50), pct(0.99), all.back(),
                pct(0.50) / o.batch, cpu_us, script_us, failures.load());
    return failures.load() == 0 ? 0 : 1;
}
