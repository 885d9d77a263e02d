// The sandbox's real-latency and rate-limit features: the log-normal latency model, injected
// 429 RATE_LIMITED answers (rate_limited_rate), the Retry-After window tracker and the figures of
// GET /control/stats. The distribution is checked on the draw function itself (many draws, no
// HTTP); the rest against the real binary over HTTP.
#include "sandbox/settings.hpp"
#include "sandbox/traffic.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

using namespace orch::test;
namespace sb = orch::sandbox;

namespace {

constexpr const char* key = "test-key";

std::int64_t nearest_rank(const std::vector<std::int64_t>& sorted, double p) {
    auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

TEST(SandboxTraffic, LognormalDrawsHaveTheAskedMedianAndP99) {
    sb::settings cfg;
    cfg.latency_distribution = "lognormal";
    cfg.latency_median_ms = 300;
    cfg.latency_p99_ms = 3000;
    sb::rng64 rng(7);
    std::vector<std::int64_t> draws;
    constexpr int n = 200'000;
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        draws.push_back(sb::draw_latency_ms(cfg, rng));
        sum += static_cast<double>(draws.back());
    }
    std::sort(draws.begin(), draws.end());
    // With 200,000 draws the sample median is within about 0.5 % of the true one (one standard
    // error) and the sample p99 within about 2 %: the bounds below are several standard errors.
    EXPECT_NEAR(nearest_rank(draws, 0.50), 300, 9);
    EXPECT_NEAR(nearest_rank(draws, 0.99), 3000, 180);
    // The mean of a log-normal is median * exp(sigma^2 / 2): about 490 ms here.
    double sigma = sb::lognormal_sigma(300, 3000);
    EXPECT_NEAR(sigma, std::log(10.0) / 2.3263, 1e-3);
    EXPECT_NEAR(sum / n, 300 * std::exp(sigma * sigma / 2), 15);
    EXPECT_GE(draws.front(), 0);
}

TEST(SandboxTraffic, UniformDrawsStayWithinTheirBoundsAndNoneWithoutLatency) {
    sb::settings cfg;
    sb::rng64 rng(3);
    EXPECT_EQ(sb::draw_latency_ms(cfg, rng), 0);
    cfg.latency_ms_min = 10;
    cfg.latency_ms_max = 20;
    std::int64_t lo = 1'000, hi = 0;
    for (int i = 0; i < 10'000; ++i) {
        auto v = sb::draw_latency_ms(cfg, rng);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    EXPECT_EQ(lo, 10);
    EXPECT_EQ(hi, 20);
}

TEST(SandboxTraffic, BadLatencyAndRateLimitSettingsAreRejectedWithTheirNames) {
    sb::settings cfg;
    cfg.api_keys.push_back({"k", 1});
    cfg.latency_distribution = "normal";
    cfg.rate_limited_rate = 1.5;
    cfg.rate_limited_retry_after_s = 0;
    std::vector<std::string> errors;
    sb::validate(cfg, errors);
    auto mentions = [&](const std::string& word) {
        return std::any_of(errors.begin(), errors.end(),
                           [&](const std::string& e) { return e.find(word) != std::string::npos; });
    };
    EXPECT_TRUE(mentions("latency_distribution"));
    EXPECT_TRUE(mentions("rate_limited_rate"));
    EXPECT_TRUE(mentions("rate_limited_retry_after_s"));
    errors.clear();
    cfg = {};
    cfg.api_keys.push_back({"k", 1});
    cfg.latency_distribution = "lognormal";
    cfg.latency_median_ms = 500;
    cfg.latency_p99_ms = 100;
    sb::validate(cfg, errors);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].find("latency_p99_ms"), std::string::npos);
    // The binary refuses to start with them, naming each.
    try {
        sandbox_process p({"--latency-distribution", "lognormal", "--latency-median-ms", "0"});
        ADD_FAILURE() << "the sandbox started with latency_median_ms 0";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("latency_median_ms"), std::string::npos) << e.what();
    }
}

// Without Retry-After no window is announced, so every request is drawn: the share of 429s is
// rate_limited_rate. Each 429 names the account, costs nothing and has no Retry-After.
TEST(SandboxTraffic, InjectedRateLimitedAnswersComeAtTheirRateAndCostNothing) {
    sandbox_process p({"--rate-limited-rate", "0.1", "--retry-after", "false"});
    http_client c("127.0.0.1", p.port());
    http_client ctl("127.0.0.1", p.control_port());
    std::string account = login_account(c, key, "tok");
    constexpr int n = 3'000;
    int limited = 0;
    int ok = 0;
    for (int i = 0; i < n; ++i) {
        auto r = c.v2(key, "profiles", account, "get_me");
        if (r.status == 429) {
            ++limited;
            auto j = r.body_json();
            EXPECT_EQ(j["error"]["code"], "RATE_LIMITED");
            EXPECT_EQ(j["metadata"]["credits_consumed"], 0);
            EXPECT_NE(j["error"]["message"].get<std::string>().find(account), std::string::npos);
            EXPECT_EQ(r.header("retry-after"), "");
        } else {
            EXPECT_EQ(r.status, 200);
            ++ok;
        }
    }
    // Binomial(3000, 0.1): mean 300, standard deviation 16.4; the bounds are 3 of them.
    EXPECT_GE(limited, 250);
    EXPECT_LE(limited, 350);
    auto credits = ctl.get("/control/credits").body_json()["keys"][0];
    EXPECT_EQ(credits["charged_total"], ok); // get_me costs 1; the 429s nothing
    auto stats = ctl.get("/control/stats").body_json();
    EXPECT_EQ(stats["rate_limited_injected"], limited);
    EXPECT_EQ(stats["retry_after_windows"]["account_action"], 0);
    EXPECT_EQ(stats["retry_after_violations"]["total"], 0);
}

TEST(SandboxTraffic, InjectedRateLimitedCarriesItsRetryAfter) {
    sandbox_process p({"--rate-limited-rate", "1", "--rate-limited-retry-after-s", "4"});
    http_client c("127.0.0.1", p.port());
    std::string account = login_account(c, key, "tok");
    auto r = c.v2(key, "profiles", account, "get_me");
    EXPECT_EQ(r.status, 429);
    EXPECT_EQ(r.header("retry-after"), "4");
    EXPECT_FALSE(r.body_json()["error"].contains("enforced_window")) << "an internal marker leaked";
}

// A request of the same account and action inside the announced window is counted (and still
// limited); another action of the account, and the same one after the window, are not.
TEST(SandboxTraffic, RequestsInsideAnAccountWindowAreCountedAndOnesAfterItAreNot) {
    sandbox_process p({"--rate-limited-rate", "1", "--rate-limited-retry-after-s", "1", "--retry-after-grace-ms", "0"});
    http_client c("127.0.0.1", p.port());
    http_client ctl("127.0.0.1", p.control_port());
    std::string account = login_account(c, key, "tok");
    auto first = c.v2(key, "profiles", account, "get_me");
    ASSERT_EQ(first.status, 429);
    ASSERT_EQ(ctl.post("/control/settings", json{{"rate_limited_rate", 0}}).status, 200);
    auto inside = c.v2(key, "profiles", account, "get_me");
    EXPECT_EQ(inside.status, 429);
    EXPECT_EQ(inside.header("retry-after"), "1");
    auto other_action = c.v2(key, "network", account, "list_sent");
    EXPECT_EQ(other_action.status, 200);
    auto stats = ctl.get("/control/stats").body_json();
    EXPECT_EQ(stats["retry_after_violations"]["account_action"], 1);
    EXPECT_EQ(stats["retry_after_violations"]["key"], 0);
    ASSERT_EQ(stats["retry_after_violations"]["examples"].size(), 1u);
    const auto& ex = stats["retry_after_violations"]["examples"][0];
    EXPECT_EQ(ex["account_id"], account);
    EXPECT_EQ(ex["action"], "get_me");
    EXPECT_GE(ex["arrived_ms"].get<std::int64_t>(), ex["window_start_ms"].get<std::int64_t>());
    EXPECT_LT(ex["arrived_ms"].get<std::int64_t>(), ex["window_end_ms"].get<std::int64_t>());
    // The second 429 announced a window of its own (1 s from its answer): wait past it.
    std::this_thread::sleep_for(std::chrono::milliseconds(1'200));
    auto after = c.v2(key, "profiles", account, "get_me");
    EXPECT_EQ(after.status, 200);
    stats = ctl.get("/control/stats").body_json();
    EXPECT_EQ(stats["retry_after_violations"]["account_action"], 1);
    EXPECT_EQ(stats["retry_after_windows"]["account_action"], 2);
    EXPECT_EQ(stats["rate_limited_injected"], 1);
}

// A daily cap's 429 announces a window too: a request inside it is counted, and the cap (not the
// window) answers it.
TEST(SandboxTraffic, ACapWindowIsCountedButLeftToTheCapToRefuse) {
    sandbox_process p({"--account-daily-cap", "get_me=1", "--retry-after-grace-ms", "0"});
    http_client c("127.0.0.1", p.port());
    http_client ctl("127.0.0.1", p.control_port());
    std::string account = login_account(c, key, "tok");
    EXPECT_EQ(c.v2(key, "profiles", account, "get_me").status, 200);
    auto capped = c.v2(key, "profiles", account, "get_me");
    ASSERT_EQ(capped.status, 429);
    ASSERT_NE(capped.header("retry-after"), "");
    auto again = c.v2(key, "profiles", account, "get_me");
    EXPECT_EQ(again.status, 429);
    EXPECT_NE(again.body_json()["error"]["message"].get<std::string>().find("daily limit"), std::string::npos)
        << again.body;
    EXPECT_FALSE(again.body_json()["error"].contains("enforced_window")) << "an internal marker leaked";
    auto stats = ctl.get("/control/stats").body_json();
    EXPECT_EQ(stats["retry_after_violations"]["account_action"], 1);
    EXPECT_EQ(stats["rate_limited_injected"], 0);
}

// The key's request-rate 429s announce a key-wide window: any request of the key inside it counts.
TEST(SandboxTraffic, RequestsInsideAKeyWindowAreCountedAndOnesAfterItAreNot) {
    sandbox_process p({"--key-rate-per-s", "1", "--key-burst", "1", "--retry-after-s", "1", "--retry-after-grace-ms", "0"});
    http_client c("127.0.0.1", p.port());
    http_client ctl("127.0.0.1", p.control_port());
    EXPECT_EQ(c.get("/v2/credits", key).status, 200);
    auto limited = c.get("/v2/credits", key);
    ASSERT_EQ(limited.status, 429);
    ASSERT_EQ(limited.header("retry-after"), "1");
    c.get("/v2/accounts", key); // inside the window: a violation, whatever its answer
    auto stats = ctl.get("/control/stats").body_json();
    EXPECT_EQ(stats["retry_after_violations"]["key"], 1);
    EXPECT_EQ(stats["retry_after_violations"]["examples"][0]["scope"], "key");
    std::this_thread::sleep_for(std::chrono::milliseconds(2'200));
    EXPECT_EQ(c.get("/v2/credits", key).status, 200);
    stats = ctl.get("/control/stats").body_json();
    EXPECT_EQ(stats["retry_after_violations"]["key"], 1);
    EXPECT_EQ(stats["retry_after_violations"]["total"], 1);
}

// A request arriving within the grace after its scope's 429 may have left the client before the
// answer reached it: counted as in flight, not as a violation (and still refused).
TEST(SandboxTraffic, RequestsWithinTheGraceCountAsInFlight) {
    sandbox_process p({"--rate-limited-rate", "1", "--retry-after-grace-ms", "60000"});
    http_client c("127.0.0.1", p.port());
    http_client ctl("127.0.0.1", p.control_port());
    std::string account = login_account(c, key, "tok");
    ASSERT_EQ(c.v2(key, "profiles", account, "get_me").status, 429);
    ASSERT_EQ(ctl.post("/control/settings", json{{"rate_limited_rate", 0}}).status, 200);
    EXPECT_EQ(c.v2(key, "profiles", account, "get_me").status, 429);
    auto stats = ctl.get("/control/stats").body_json();
    EXPECT_EQ(stats["retry_after_in_flight"]["account_action"], 1);
    EXPECT_EQ(stats["retry_after_violations"]["total"], 0);
}

TEST(SandboxTraffic, StatsGiveTheAppliedLatencyOfAnsweredRequests) {
    sandbox_process p({"--latency-ms-min", "20", "--latency-ms-max", "20"});
    http_client c("127.0.0.1", p.port());
    http_client ctl("127.0.0.1", p.control_port());
    auto t0 = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(c.get("/v2/credits", key).status, 200);
    }
    auto s = ctl.get("/control/stats?since_ms=" + std::to_string(t0)).body_json();
    EXPECT_EQ(s["requests_total"], 10);
    EXPECT_EQ(s["latency"]["answered"], 10);
    EXPECT_DOUBLE_EQ(s["latency"]["mean_ms"].get<double>(), 20.0);
    EXPECT_EQ(s["latency"]["p50_ms"], 20);
    EXPECT_EQ(s["latency"]["p99_ms"], 20);
    auto later = ctl.get("/control/stats?since_ms=" + std::to_string(t0 + 3'600'000)).body_json();
    EXPECT_EQ(later["latency"]["answered"], 0);
    EXPECT_TRUE(later["latency"]["mean_ms"].is_null());
    EXPECT_EQ(ctl.get("/control/stats?since_ms=5&until_ms=4").status, 400);
    EXPECT_EQ(ctl.get("/control/stats?since_ms=x").status, 400);
}

} // namespace
