// The limits gate (engine/limits_gate) on a real Redis: what it takes before a call and gives
// back after it, on the day the take counted in.
#include "engine/limits_gate.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>

namespace {

namespace cs = orch::campaigns;
namespace limits = orch::limits;
using namespace std::chrono_literals;

class LimitsGateRedis : public ::testing::Test {
protected:
    void SetUp() override {
        const char* url = std::getenv("REDIS_URL");
        ORCH_REQUIRE_SERVICE("REDIS_URL");
        settings_.redis_url = url;
        std::random_device rd;
        settings_.api_key = "gate-test-" + std::to_string(rd()) + "-" + std::to_string(rd());
        settings_.key_requests_per_s = 0;  // no key rate: this test is about the account's day
        campaign_.schedule.days = {true, true, true, true, true, true, true};
        campaign_.schedule.start_minute = 0;
        campaign_.schedule.end_minute = 24 * 60;
    }

    limits::settings settings_;
    cs::campaign campaign_;
};

// A call taken before midnight that fails after it gives back its place in the day it was
// counted in (the day of the take), not in the new day.
TEST_F(LimitsGateRedis, AFailedCallGivesBackThePlaceOfTheDayItWasTakenIn) {
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    const orch::engine::call_target target{"acc-gate-midnight", "https://network.example/in/x", 7, 42, ""};
    // Two days ago, 23:59:30 UTC.
    const auto today = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
    const auto taken_at = today - std::chrono::days(2) + 23h + 59min + 30s;
    const auto decision = gate.before(target, campaign_, invite, taken_at);
    ASSERT_TRUE(decision.allowed) << decision.reason;

    auto then = limits::day_in_zone(taken_at, "UTC");
    auto now = limits::day_in_zone(std::chrono::system_clock::now(), "UTC");
    ASSERT_TRUE(then && now);
    auto used = [&](const limits::local_day& d) {
        auto st = gate.limiter().status(target.account_id, d);
        EXPECT_TRUE(st.has_value());
        return st ? st->actions[static_cast<std::size_t>(limits::action::invite)].used_today : -1;
    };
    ASSERT_EQ(used(*then), 1);
    ASSERT_EQ(used(*now), 0);

    orch::engine::call_outcome failed;
    failed.attempt_outcome = "transient";
    failed.error_code = "CHANNEL_ERROR";
    gate.after(target, campaign_, invite, failed);
    EXPECT_EQ(used(*then), 0) << "the refund went to another day";
    EXPECT_EQ(used(*now), 0);
}

// The time left in a campaign's working window (09:00-18:00 here) at a local time of day.
TEST(LimitsGateWindow, WindowLeftIsTheRestOfTodaysWorkingWindow) {
    cs::schedule s;
    s.start_minute = 9 * 60;
    s.end_minute = 18 * 60;
    using std::chrono::milliseconds;
    using orch::engine::window_left;
    EXPECT_EQ(window_left(s, milliseconds(std::chrono::hours(7))), std::chrono::hours(9));  // before: all of it
    EXPECT_EQ(window_left(s, milliseconds(std::chrono::hours(9))), std::chrono::hours(9));
    EXPECT_EQ(window_left(s, milliseconds(std::chrono::hours(17) + std::chrono::minutes(30))), std::chrono::minutes(30));
    EXPECT_EQ(window_left(s, milliseconds(std::chrono::hours(18))), milliseconds(0));  // over: unknown
    EXPECT_EQ(window_left(s, milliseconds(std::chrono::hours(23))), milliseconds(0));
}

}  // namespace
