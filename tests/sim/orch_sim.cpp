// orch-sim: runs the seeded simulation of the engine (tests/sim/sim.hpp) for one seed (replay),
// a range of seeds, or as a soak for a number of seconds. Exit status 1 when any seed broke a
// guarantee; each such seed is printed with its violations. Exit status 2 for a bad option.
#include "tests/sim/sim.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
    CLI::App app{"orch-sim: the seeded simulation of the engine"};
    std::uint64_t seed = 1;
    std::uint64_t seeds = 1;
    double soak_seconds = 0;
    orch::sim::options base;
    bool verbose = false;
    const auto share = CLI::Range(0.0, 1.0);
    // Bounded so that seed + seeds cannot wrap around (a negative --seed would read as 2^64 - 1).
    constexpr std::uint64_t max_seed = std::uint64_t{1} << 62;
    app.add_option("--seed", seed, "the first seed (a failing seed replays exactly)")
        ->capture_default_str()
        ->check(CLI::Range(std::uint64_t{0}, max_seed));
    app.add_option("--seeds", seeds, "how many seeds from --seed")
        ->capture_default_str()
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000}));
    app.add_option("--soak-seconds", soak_seconds, "run seeds from --seed until this many seconds passed")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--leads", base.leads, "leads per seed")->capture_default_str()->check(CLI::Range(1, 100'000));
    base.processes = 0;
    app.add_option("--processes", base.processes, "worker processes (0: 1 to 3 by seed)")
        ->capture_default_str()
        ->check(CLI::Range(0, 16));
    app.add_option("--crash-rate", base.crash_rate, "chance of a crash at each await point")
        ->capture_default_str()
        ->check(share);
    app.add_option("--burst-rate", base.account_burst_rate, "chance that a request opens a 429 burst on its account")
        ->capture_default_str()
        ->check(share);
    app.add_option("--lost-rate", base.lost_after_effect,
                   "chance that a request takes effect and its answer is lost (as many are lost before)")
        ->capture_default_str()
        ->check(share);
    app.add_option("--disconnect-rate", base.disconnect_rate, "chance that a request finds its account logged out")
        ->capture_default_str()
        ->check(share);
    app.add_option("--event-loss", base.event_lost, "chance that an event is never delivered")
        ->capture_default_str()
        ->check(share);
    app.add_option("--latency-median-ms", base.latency_median_ms, "the API's median round trip (log-normal, at most 10 s)")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 10'000.0));
    app.add_option("--lease-seconds", base.lease_seconds, "a claimed call's lease (at least 12: a request takes 10 s at most)")
        ->capture_default_str()
        ->check(CLI::Range(12, 3600));
    app.add_option("--pool", base.pool, "calls in flight per process (api_pool_size)")
        ->capture_default_str()
        ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
    app.add_option("--batch", base.batch, "rows a process holds (batch_size)")
        ->capture_default_str()
        ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
    app.add_flag("--verbose", verbose, "print every seed's summary");
    app.add_flag("--break-send-time-check", base.break_send_time_check,
                 "skip the send-time check, to see the guarantees' checks catch a broken engine");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;  // help: 0; a bad option: 2, as the orchestrator's CLI
    }
    spdlog::set_level(spdlog::level::off);
    // The options a failing seed ran with, for its replay line: everything given but the choice
    // of seeds and the output.
    std::string given;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto name = a.substr(0, a.find('='));
        if (name == "--seed" || name == "--seeds" || name == "--soak-seconds" || name == "--verbose") {
            if (a.find('=') == std::string::npos && name != "--verbose" && i + 1 < argc) {
                ++i;  // its value
            }
            continue;
        }
        given += " " + a;
    }
    const bool by_seed = base.processes == 0;
    base.lost_before_effect = base.lost_after_effect;
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t ran = 0, failed = 0, requests = 0;
    for (std::uint64_t s = seed;; ++s) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (soak_seconds > 0 ? elapsed >= soak_seconds : s >= seed + seeds) {
            break;
        }
        auto o = base;
        o.seed = s;
        if (by_seed) {
            o.processes = 1 + static_cast<int>(s % 3);
        }
        orch::sim::report r;
        try {
            r = orch::sim::run(o);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "orch-sim: seed %llu: %s\n", static_cast<unsigned long long>(s), e.what());
            return 2;
        }
        ++ran;
        requests += r.requests;
        if (!r.violations.empty()) {
            ++failed;
        }
        if (verbose || !r.violations.empty()) {
            std::printf("%s\n", r.summary().c_str());
        }
        if (!r.violations.empty()) {
            std::printf("replay: orch-sim --seed %llu%s\n", static_cast<unsigned long long>(s), given.c_str());
        }
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%llu seeds from %llu in %.1f s (%.0f simulated requests/s): %llu failed\n",
                static_cast<unsigned long long>(ran), static_cast<unsigned long long>(seed), elapsed,
                static_cast<double>(requests) / elapsed, static_cast<unsigned long long>(failed));
    return failed == 0 ? 0 : 1;
}
