// Throughput of the outreach client: `in_flight` coroutines on ONE io_context thread call
// check_invitation back to back over at most `connections` keep-alive connections, for a fixed
// duration after a short warm-up. Prints requests/s and the client's CPU time per request
// (getrusage, user + system, over the measured window). Run by tests/bench/client_bench.sh.
#include "engine/outreach/client.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using namespace orch::outreach;
using steady = std::chrono::steady_clock;

struct options {
    std::string base_url;
    std::string api_key;
    std::string account;
    std::string profile;
    std::size_t connections = 64;
    int in_flight = 64;
    double duration_s = 10;
    double warmup_s = 1;
};

struct counters {
    std::uint64_t ok = 0;
    std::uint64_t failed = 0;
    bool measuring = false;
    std::string first_error;
};

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto tv = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return tv(u.ru_utime) + tv(u.ru_stime);
}

boost::asio::awaitable<void> worker(client& c, const options& o, counters& n, steady::time_point end) {
    profile_url_params target{o.profile};
    while (steady::now() < end) {
        auto r = co_await c.check_invitation(o.account, target);
        if (!n.measuring) {
            continue;
        }
        if (r) {
            ++n.ok;
        } else {
            ++n.failed;
            if (n.first_error.empty()) {
                n.first_error = describe(r.error());
            }
        }
    }
}

bool parse(int argc, char** argv, options& o) {
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        std::string v = argv[i + 1];
        if (k == "--base-url") o.base_url = v;
        else if (k == "--api-key") o.api_key = v;
        else if (k == "--account") o.account = v;
        else if (k == "--profile") o.profile = v;
        else if (k == "--connections") o.connections = std::stoul(v);
        else if (k == "--in-flight") o.in_flight = std::stoi(v);
        else if (k == "--duration-s") o.duration_s = std::stod(v);
        else if (k == "--warmup-s") o.warmup_s = std::stod(v);
        else return false;
    }
    return !o.base_url.empty() && !o.api_key.empty() && !o.account.empty() && !o.profile.empty();
}

} // namespace

int main(int argc, char** argv) {
    options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr,
                     "usage: outreach_client_bench --base-url URL --api-key KEY --account ID --profile URL "
                     "[--connections 64] [--in-flight 64] [--duration-s 10] [--warmup-s 1]\n");
        return 2;
    }
    boost::asio::io_context io{1};
    client_settings s;
    s.base_url = o.base_url;
    s.api_key = o.api_key;
    s.pool_size = o.connections;
    auto made = client::make(io.get_executor(), s);
    if (!made) {
        std::fprintf(stderr, "client_bench: %s\n", describe(made.error()).c_str());
        return 2;
    }
    client c = std::move(made).value();
    counters n;
    auto start = steady::now();
    auto measure_from = start + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(o.warmup_s));
    auto end = measure_from + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(o.duration_s));
    for (int i = 0; i < o.in_flight; ++i) {
        boost::asio::co_spawn(io, worker(c, o, n, end), boost::asio::detached);
    }
    io.run_until(measure_from);
    n.measuring = true;
    double cpu_start = cpu_seconds();
    auto wall_start = steady::now();
    io.run_until(end);
    double wall = std::chrono::duration<double>(steady::now() - wall_start).count();
    double cpu = cpu_seconds() - cpu_start;
    n.measuring = false;
    io.restart();
    io.run(); // let the calls in flight finish
    std::uint64_t total = n.ok + n.failed;
    double rate = static_cast<double>(n.ok) / wall;
    double cpu_us = total == 0 ? 0.0 : cpu * 1e6 / static_cast<double>(total);
    std::printf("requests_ok=%llu errors=%llu seconds=%.2f requests_per_s=%.0f cpu_us_per_request=%.1f "
                "connections_opened=%llu\n",
                static_cast<unsigned long long>(n.ok), static_cast<unsigned long long>(n.failed), wall, rate, cpu_us,
                static_cast<unsigned long long>(c.stats().connects));
    if (!n.first_error.empty()) {
        std::printf("first error: %s\n", n.first_error.c_str());
    }
    return n.failed == 0 && n.ok > 0 ? 0 : 1;
}
