// engine/outage_log: a dependency's outage is told once at its start, summarised while it lasts,
// and told once at its end; the reconnection backoff doubles with full jitter up to its cap.
#include "engine/outage_log.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using orch::engine::outage_log;
using orch::engine::reconnect_backoff;
using namespace std::chrono_literals;

// The default logger's lines while it lives, one string each.
class captured_log {
public:
    captured_log() : previous_(spdlog::default_logger()) {
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
        sink->set_pattern("%l %v");
        spdlog::set_default_logger(std::make_shared<spdlog::logger>("outage-test", sink));
    }
    ~captured_log() { spdlog::set_default_logger(previous_); }
    captured_log(const captured_log&) = delete;
    captured_log& operator=(const captured_log&) = delete;

    std::vector<std::string> lines() {
        spdlog::default_logger()->flush();
        std::vector<std::string> result;
        std::istringstream in(out_.str());
        for (std::string line; std::getline(in, line);) {
            result.push_back(line);
        }
        return result;
    }

private:
    std::ostringstream out_;
    std::shared_ptr<spdlog::logger> previous_;
};

TEST(outage_log, an_outage_of_many_failing_callers_is_told_at_its_start_summarised_and_told_at_its_end) {
    captured_log log;
    outage_log outage("worker", "database", 30s);
    const auto t0 = outage_log::clock::time_point{} + 1000s;
    // Three lanes and the listener fail every half second for 70 s: 560 attempts.
    int attempts = 0;
    for (auto t = t0; t < t0 + 70s; t += 500ms) {
        for (int caller : {-1, 0, 1, 2}) {
            outage.failed(caller, "lane: connection to server at \"127.0.0.1\", port 5432 failed: Connection refused\n", t);
            ++attempts;
        }
    }
    EXPECT_TRUE(outage.down());
    // Two of the four reach it again: the outage goes on.
    outage.succeeded(0, t0 + 71s);
    outage.succeeded(-1, t0 + 71s);
    EXPECT_TRUE(outage.down());
    // A caller that never failed ends nothing either.
    outage.succeeded(7, t0 + 71s);
    EXPECT_TRUE(outage.down());
    outage.succeeded(1, t0 + 72s);
    outage.succeeded(2, t0 + 72s + 500ms);
    EXPECT_FALSE(outage.down());
    // Once over, success is silent.
    outage.succeeded(2, t0 + 73s);

    const auto lines = log.lines();
    ASSERT_EQ(lines.size(), 4u) << ::testing::PrintToString(lines);
    EXPECT_EQ(lines[0],
              "warning worker: database unavailable (lane: connection to server at \"127.0.0.1\", port 5432 failed: "
              "Connection refused); reconnecting with backoff, a summary every 30 s until it answers");
    EXPECT_EQ(lines[1].rfind("warning worker: database still unavailable after 30 s (241 failed attempts, 240 since "
                             "the last line; last error: ",
                             0),
              0u)
        << lines[1];
    EXPECT_EQ(lines[2].rfind("warning worker: database still unavailable after 60 s (481 failed attempts, 240 since", 0),
              0u)
        << lines[2];
    EXPECT_EQ(lines[3], "info worker: database available again after 72.5 s (" + std::to_string(attempts) +
                            " failed attempts)");
    EXPECT_EQ(outage.outages(), 1u);
    EXPECT_EQ(outage.failed_attempts(), static_cast<std::uint64_t>(attempts));
}

TEST(outage_log, a_second_outage_is_told_again) {
    captured_log log;
    outage_log outage("worker", "database", 30s);
    const auto t0 = outage_log::clock::time_point{} + 1000s;
    outage.failed(3, "gone", t0);
    outage.succeeded(3, t0 + 1s);
    outage.failed(3, "gone again", t0 + 2s);
    outage.failed(3, "gone again", t0 + 3s);
    outage.succeeded(3, t0 + 4s);
    const auto lines = log.lines();
    ASSERT_EQ(lines.size(), 4u) << ::testing::PrintToString(lines);
    EXPECT_NE(lines[0].find("database unavailable (gone)"), std::string::npos);
    EXPECT_EQ(lines[1], "info worker: database available again after 1.0 s (1 failed attempts)");
    EXPECT_NE(lines[2].find("database unavailable (gone again)"), std::string::npos);
    EXPECT_EQ(lines[3], "info worker: database available again after 2.0 s (2 failed attempts)");
    EXPECT_EQ(outage.outages(), 2u);
}

TEST(reconnect_backoff, doubles_from_its_base_to_its_cap_with_jitter_over_the_upper_half) {
    reconnect_backoff retry(250ms, 4000ms, 42);
    const std::vector<long> ceilings{250, 500, 1000, 2000, 4000, 4000, 4000};
    for (const long ceiling : ceilings) {
        const auto wait = retry.next().count();
        EXPECT_GE(wait, ceiling / 2);
        EXPECT_LE(wait, ceiling);
    }
    EXPECT_EQ(retry.failures(), static_cast<int>(ceilings.size()));
    retry.reset();
    EXPECT_LE(retry.next().count(), 250);
    // The jitter spreads callers: 200 callers' fifth waits are not all alike.
    std::vector<long> fifth;
    for (unsigned seed = 0; seed < 200; ++seed) {
        reconnect_backoff r(250ms, 4000ms, seed);
        for (int i = 0; i < 4; ++i) {
            r.next();
        }
        fifth.push_back(r.next().count());
    }
    std::sort(fifth.begin(), fifth.end());
    EXPECT_GE(fifth.front(), 2000);
    EXPECT_LE(fifth.back(), 4000);
    EXPECT_GE(fifth.back() - fifth.front(), 1000) << "no spread";
}

}  // namespace
