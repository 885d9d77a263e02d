// engine/sweep_schedule: a quiet account's full sweep backs off from sweep_seconds to the
// ceiling; a sweep that finds a missed event brings it back; a failed one changes nothing.
#include "engine/sweep_schedule.hpp"

#include <gtest/gtest.h>

namespace {

using orch::engine::sweep_schedule;
using namespace std::chrono_literals;

TEST(SweepSchedule, AnAccountNeverSweptIsDue) {
    sweep_schedule s(900s, 3600s);
    EXPECT_TRUE(s.due("a", sweep_schedule::clock::now()));
    EXPECT_EQ(s.interval("a"), 900s);
}

TEST(SweepSchedule, QuietSweepsDoubleTheIntervalUpToTheCeiling) {
    sweep_schedule s(900s, 3600s);
    const auto t0 = sweep_schedule::clock::time_point{} + 1000h;
    EXPECT_EQ(s.done("a", t0, true, 0), 1800s);
    // The next tick (sweep_seconds later, a little late) skips it; the one after takes it.
    EXPECT_FALSE(s.due("a", t0 + 905s));
    EXPECT_TRUE(s.due("a", t0 + 1800s));
    EXPECT_TRUE(s.due("a", t0 + 1795s)) << "a tick a few seconds early takes a sweep due at it";
    EXPECT_EQ(s.done("a", t0 + 1800s, true, 0), 3600s);
    EXPECT_EQ(s.done("a", t0 + 5400s, true, 0), std::nullopt) << "at the ceiling already";
    EXPECT_EQ(s.interval("a"), 3600s);
    EXPECT_FALSE(s.due("a", t0 + 5400s + 2700s));
    EXPECT_TRUE(s.due("a", t0 + 5400s + 3600s));
    // Another account keeps its own interval.
    EXPECT_TRUE(s.due("b", t0 + 5400s));
    EXPECT_EQ(s.interval("b"), 900s);
}

TEST(SweepSchedule, ASweepThatFindsAMissedEventBringsTheIntervalBack) {
    sweep_schedule s(900s, 3600s);
    const auto t0 = sweep_schedule::clock::time_point{} + 1000h;
    s.done("a", t0, true, 0);
    s.done("a", t0 + 1800s, true, 0);
    ASSERT_EQ(s.interval("a"), 3600s);
    EXPECT_EQ(s.done("a", t0 + 5400s, true, 1), 900s);
    EXPECT_TRUE(s.due("a", t0 + 6300s));
    // Found something, though a later read failed: still back to sweep_seconds.
    s.done("a", t0 + 6300s, true, 0);
    EXPECT_EQ(s.done("a", t0 + 8100s, false, 2), 900s);
}

TEST(SweepSchedule, AFailedSweepLeavesTheInterval) {
    sweep_schedule s(900s, 3600s);
    const auto t0 = sweep_schedule::clock::time_point{} + 1000h;
    s.done("a", t0, true, 0);
    EXPECT_EQ(s.done("a", t0 + 1800s, false, 0), std::nullopt);
    EXPECT_EQ(s.interval("a"), 1800s);
    EXPECT_FALSE(s.due("a", t0 + 1800s + 900s));
}

TEST(SweepSchedule, ACeilingBelowTheIntervalTurnsTheBackOffOff) {
    sweep_schedule s(900s, 600s);
    EXPECT_EQ(s.ceiling(), 900s);
    const auto t0 = sweep_schedule::clock::time_point{} + 1000h;
    EXPECT_EQ(s.done("a", t0, true, 0), std::nullopt);
    EXPECT_TRUE(s.due("a", t0 + 900s));
}

}  // namespace
