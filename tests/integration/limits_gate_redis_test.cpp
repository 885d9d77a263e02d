// The limits gate (engine/limits_gate) on a real Redis: what it takes before a call and gives
// back after it, on the day the take counted in.
#include "engine/campaign_apply.hpp"
#include "engine/limits_gate.hpp"
#include "engine/random.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <sstream>
#include <optional>
#include <set>
#include <string>
#include <thread>

namespace {

namespace cs = orch::campaigns;
namespace limits = orch::limits;
using namespace std::chrono_literals;

// The outcome of a call that found its account inactive.
orch::engine::call_outcome account_inactive() {
    orch::engine::call_outcome o;
    o.attempt_outcome = orch::engine::attempt_outcome::transient;
    o.error_code = "ACCOUNT_INACTIVE";
    o.consequence = orch::engine::call_consequence::pause_account;
    return o;
}

double ms(std::chrono::system_clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
}

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

    // One call of `lead` (an account and a person of its own, named after `name`) through `gate`,
    // now. `slack` keeps the longest such call's time plus 1 ms: each call places its turns from
    // its own `now`, so turns of two calls differ by up to that (see
    // LeadsTheKeysRateDeniesQueueForItsPlacesOneIntervalApart).
    orch::engine::gate_decision ask_now(orch::engine::limits_gate& gate, const std::string& name, std::int64_t lead,
                                        const cs::api_call& call, double& slack) {
        const orch::engine::call_target target{"acc-gate-" + name + "-" + std::to_string(lead),
                                               "https://network.example/in/" + name + std::to_string(lead), 7, lead, ""};
        const orch::engine::gate_request request{target, &campaign_, &call};
        const auto at = std::chrono::system_clock::now();
        auto d = gate.before_many(std::span(&request, 1), at).front();
        slack = std::max(slack, ms(std::chrono::system_clock::now() - at) + 1.0);
        return d;
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
    orch::engine::call_target target{"acc-gate-midnight", "https://network.example/in/x", 7, 42, ""};
    // Two days ago, 23:59:30 UTC.
    const auto today = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
    const auto taken_at = today - std::chrono::days(2) + 23h + 59min + 30s;
    const auto decision = gate.before(target, campaign_, invite, taken_at);
    ASSERT_TRUE(decision.allowed) << decision.reason;
    target.gate_take = decision.take;

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
    failed.attempt_outcome = orch::engine::attempt_outcome::transient;
    failed.error_code = "CHANNEL_ERROR";
    gate.after(target, campaign_, invite, failed);
    EXPECT_EQ(used(*then), 0) << "the refund went to another day";
    EXPECT_EQ(used(*now), 0);
}

// A follow-up whose read before it found the lead's reply sends nothing (not_sent): its place in
// the account's send quota is given back, as a failed call's is. It was recorded ok, and kept it.
TEST_F(LimitsGateRedis, AFollowUpNotSentGivesBackItsQuotaPlace) {
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call send;
    send.kind = cs::call_kind::send;
    send.confirm_no_reply = true;
    orch::engine::call_target target{"acc-gate-not-sent", "https://network.example/in/y", 7, 43, ""};
    const auto at = std::chrono::system_clock::now();
    const auto decision = gate.before(target, campaign_, send, at);
    ASSERT_TRUE(decision.allowed) << decision.reason;
    target.gate_take = decision.take;
    auto day = limits::day_in_zone(at, "UTC");
    ASSERT_TRUE(day);
    auto used = [&] {
        auto st = gate.limiter().status(target.account_id, *day);
        EXPECT_TRUE(st.has_value());
        return st ? st->actions[static_cast<std::size_t>(limits::action::send)].used_today : -1;
    };
    ASSERT_EQ(used(), 1);
    orch::engine::call_outcome not_sent;
    not_sent.attempt_outcome = orch::engine::attempt_outcome::not_sent;
    not_sent.event.reply_found = true;
    not_sent.credits = 1;
    gate.after(target, campaign_, send, not_sent);
    EXPECT_EQ(used(), 0);
}

// An uncertain invite (its answer lost) keeps its place, as the platform may have counted it; the
// check that finds it without effect gives the place back, on the day of the take, even when that
// check runs in another process (another gate) on a later day; found done, the place stays spent.
// Before, the place stayed spent either way: under 5 % lost answers a trial's sender read
// `invite 20/20` while the sandbox held 18 invitations, and 12 leads waited for the next day.
TEST_F(LimitsGateRedis, AnUncertainCallFoundWithoutEffectGivesBackItsPlace) {
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    cs::api_call check = invite;
    check.kind = cs::call_kind::check_invitation;
    check.reconcile = true;
    check.reconciles = cs::call_kind::invite;
    orch::engine::call_outcome uncertain;
    uncertain.attempt_outcome = orch::engine::attempt_outcome::uncertain;
    orch::engine::call_outcome absent;
    absent.attempt_outcome = orch::engine::attempt_outcome::reconciled_absent;
    orch::engine::call_outcome present;
    present.attempt_outcome = orch::engine::attempt_outcome::reconciled_present;

    const auto today = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
    const auto taken_at = today - std::chrono::days(1) + 12h;  // yesterday: the check runs today
    auto then = limits::day_in_zone(taken_at, "UTC");
    ASSERT_TRUE(then);
    orch::engine::limits_gate first(settings_, false);
    orch::engine::limits_gate second(settings_, false);  // another worker, sharing Redis
    auto used = [&](const std::string& account) {
        auto st = first.limiter().status(account, *then);
        EXPECT_TRUE(st.has_value());
        return st ? st->actions[static_cast<std::size_t>(limits::action::invite)].used_today : -1;
    };
    // Lead 51: found without effect. Lead 52: found done.
    for (const std::int64_t lead : {51, 52}) {
        orch::engine::call_target target{"acc-gate-uncertain", "https://network.example/in/u" + std::to_string(lead),
                                         7, lead, ""};
        const auto decision = first.before(target, campaign_, invite, taken_at);
        ASSERT_TRUE(decision.allowed) << decision.reason;
        target.gate_take = decision.take;
        first.after(target, campaign_, invite, uncertain);
    }
    ASSERT_EQ(used("acc-gate-uncertain"), 2) << "an uncertain call keeps its place until it is checked";
    orch::engine::call_target checked{"acc-gate-uncertain", "https://network.example/in/u51", 7, 51, ""};
    second.after(checked, campaign_, check, absent);
    EXPECT_EQ(used("acc-gate-uncertain"), 1) << "the place found without effect is given back on its day";
    // Once: a second check's answer (a settle decided again) gives nothing more.
    second.after(checked, campaign_, check, absent);
    EXPECT_EQ(used("acc-gate-uncertain"), 1);
    checked.enrollment_id = 52;
    checked.profile_url = "https://network.example/in/u52";
    second.after(checked, campaign_, check, present);
    EXPECT_EQ(used("acc-gate-uncertain"), 1) << "a call found done keeps its place";
    // Each record is gone once its check answered.
    EXPECT_FALSE(first.limiter().forget_uncertain(51, limits::action::invite));
    EXPECT_FALSE(first.limiter().forget_uncertain(52, limits::action::invite));
    // A check whose call was never remembered (its worker died with it) gives nothing back.
    checked.enrollment_id = 53;
    second.after(checked, campaign_, check, absent);
    EXPECT_EQ(used("acc-gate-uncertain"), 1);
    // A read's lost answer is asked again, never checked: nothing is remembered for it.
    orch::engine::call_target reader{"acc-gate-uncertain", "https://network.example/in/u54", 7, 54, ""};
    cs::api_call read = invite;
    read.kind = cs::call_kind::check_invitation;
    const auto read_take = first.before(reader, campaign_, read, taken_at);
    ASSERT_TRUE(read_take.allowed) << read_take.reason;
    reader.gate_take = read_take.take;
    first.after(reader, campaign_, read, uncertain);
    EXPECT_FALSE(first.limiter().forget_uncertain(54, limits::action::check_invitation));
}

// A row claimed again while its first call still waited (its lease ended) has two takes. Each
// call's end gives back its own, on its own day, once: the first call's end leaves the second
// claim's take alone, and a second end of one call gives nothing back twice.
TEST_F(LimitsGateRedis, TwoClaimsOfOneRowGiveBackEachTheirOwnTakeOnce) {
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    const orch::engine::call_target row{"acc-gate-two-claims", "https://network.example/in/t", 7, 77, ""};
    const auto today = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
    const auto first_at = today - std::chrono::days(3) + 23h + 59min + 50s;  // a day of its own
    const auto second_at = std::chrono::system_clock::now();
    const auto d1 = gate.before(row, campaign_, invite, first_at);
    const auto d2 = gate.before(row, campaign_, invite, second_at);
    ASSERT_TRUE(d1.allowed && d2.allowed);
    ASSERT_NE(d1.take, d2.take) << "two takes of one row need two names";
    auto first = row, second = row;
    first.gate_take = d1.take;
    second.gate_take = d2.take;
    auto day1 = limits::day_in_zone(first_at, "UTC");
    auto day2 = limits::day_in_zone(second_at, "UTC");
    ASSERT_TRUE(day1 && day2);
    auto used = [&](const limits::local_day& d) {
        auto st = gate.limiter().status(row.account_id, d);
        EXPECT_TRUE(st.has_value());
        return st ? st->actions[static_cast<std::size_t>(limits::action::invite)].used_today : -1;
    };
    ASSERT_EQ(used(*day1), 1);
    ASSERT_EQ(used(*day2), 1);

    // The first call was not sent (its lease ended): its own take comes back, on its day.
    orch::engine::call_outcome not_sent;
    not_sent.attempt_outcome = orch::engine::attempt_outcome::transient;
    gate.after(first, campaign_, invite, not_sent);
    EXPECT_EQ(used(*day1), 0);
    EXPECT_EQ(used(*day2), 1) << "the first call's end gave back the second claim's take";
    // Told again (or released), it gives nothing back a second time.
    gate.after(first, campaign_, invite, not_sent);
    gate.released(first, campaign_, invite);
    EXPECT_EQ(used(*day1), 0);
    EXPECT_EQ(used(*day2), 1);

    // The second call failed without effect: its take comes back, on its day, once.
    gate.after(second, campaign_, invite, not_sent);
    EXPECT_EQ(used(*day2), 0);
    gate.released(second, campaign_, invite);
    EXPECT_EQ(used(*day2), 0);
}

// A call the ledger refuses after the gate allowed it is never sent: released() gives back its
// place in the key's request rate and the pacing gap it set, not only its counters, so a campaign
// out of budget does not slow the key and its accounts for every other campaign.
TEST_F(LimitsGateRedis, ACallTheLedgerRefusesGivesBackItsRatePlaceAndPacingGap) {
    settings_.key_requests_per_s = 1;
    settings_.key_burst = 1;
    settings_.pacing_factor_min = settings_.pacing_factor_max = 1.0;
    orch::engine::limits_gate gate(settings_, true);  // pacing on
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    const orch::engine::call_target row{"acc-gate-refused", "https://network.example/in/r", 7, 91, ""};
    const auto now = std::chrono::system_clock::now();
    const auto first = gate.before(row, campaign_, invite, now);
    ASSERT_TRUE(first.allowed) << first.reason;
    const auto denied = gate.before(row, campaign_, invite, now);
    ASSERT_FALSE(denied.allowed);
    auto taken = row;
    taken.gate_take = first.take;
    gate.released(taken, campaign_, invite);
    const auto again = gate.before(row, campaign_, invite, now);
    EXPECT_TRUE(again.allowed) << again.reason;
    auto st = gate.limiter().status(row.account_id, *limits::day_in_zone(now, "UTC"));
    ASSERT_TRUE(st);
    EXPECT_EQ(st->actions[static_cast<std::size_t>(limits::action::invite)].used_today, 1);
}

// A call held at send time before its first request (a cooldown seen since its claim) gives its
// place in the key's rate back with its counters; a call that failed without effect after a
// request left keeps the rate place (the request was made).
TEST_F(LimitsGateRedis, ACallHeldBeforeItsFirstRequestGivesBackItsRatePlace) {
    settings_.key_requests_per_s = 0.1;   // a place every 10 s: none frees during the test
    settings_.key_burst = 2;
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    const orch::engine::call_target row{"acc-gate-held", "https://network.example/in/h", 7, 92, ""};
    const auto now = std::chrono::system_clock::now();
    const auto sent = gate.before(row, campaign_, invite, now);
    const auto held = gate.before(row, campaign_, invite, now);
    ASSERT_TRUE(sent.allowed) << sent.reason;
    ASSERT_TRUE(held.allowed) << held.reason;
    ASSERT_FALSE(gate.before(row, campaign_, invite, now).allowed);
    orch::engine::call_outcome failed;
    failed.attempt_outcome = orch::engine::attempt_outcome::transient;
    failed.event.kind = cs::result_kind::transient;
    auto taken = row;
    taken.gate_take = sent.take;
    gate.after(taken, campaign_, invite, failed);
    const auto after_failed = gate.before(row, campaign_, invite, now);
    EXPECT_FALSE(after_failed.allowed);
    EXPECT_EQ(after_failed.code, cs::wait_code::key_rate);
    orch::engine::call_outcome not_sent = failed;
    not_sent.event.kind = cs::result_kind::throttled;
    not_sent.held = true;
    not_sent.nothing_sent = true;
    taken.gate_take = held.take;
    gate.after(taken, campaign_, invite, not_sent);
    const auto after_held = gate.before(row, campaign_, invite, now);
    EXPECT_TRUE(after_held.allowed) << after_held.reason;
    auto st = gate.limiter().status(row.account_id, *limits::day_in_zone(now, "UTC"));
    ASSERT_TRUE(st);
    EXPECT_EQ(st->actions[static_cast<std::size_t>(limits::action::invite)].used_today, 1);   // after_held's
}

// Leads the key's rate denies come back one emission interval apart, in one queue across
// batches, not all at the instant the next place frees (where all but one would be denied again).
// A lead back before its turn keeps it; one denied at or after its turn (it missed its place by
// its cycle's time) takes a turn ahead of the queue, not one at its end; a turn given up goes to
// the next lead denied.
TEST_F(LimitsGateRedis, LeadsTheKeysRateDeniesQueueForItsPlacesOneIntervalApart) {
    settings_.key_requests_per_s = 10;  // 100 ms apart
    settings_.key_burst = 1;
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    std::vector<orch::engine::call_target> targets;
    for (int i = 0; i < 9; ++i) {
        targets.push_back({"acc-gate-rate-" + std::to_string(i), "https://network.example/in/k" + std::to_string(i), 7,
                           200 + i, ""});
    }
    auto ask = [&](std::size_t from, std::size_t to, cs::time_point at) {
        std::vector<orch::engine::gate_request> requests;
        for (std::size_t i = from; i < to; ++i) {
            requests.push_back({targets[i], &campaign_, &invite});
        }
        return gate.before_many(requests, at);
    };
    const auto now = std::chrono::system_clock::now();
    const auto d = ask(0, 5, now);
    const auto d_slack = std::chrono::system_clock::now() - now;
    ASSERT_EQ(d.size(), 5u);
    ASSERT_TRUE(d[0].allowed) << d[0].reason;
    for (std::size_t i = 1; i < d.size(); ++i) {
        ASSERT_FALSE(d[i].allowed);
        EXPECT_EQ(d[i].code, cs::wait_code::key_rate);
        if (i > 1) {
            EXPECT_EQ(d[i].until - d[i - 1].until, std::chrono::milliseconds(100)) << i;
        }
    }
    EXPECT_LE(d[1].until - now, std::chrono::milliseconds(101));

    // The next batch's denials queue behind this one's, not at the same turns. (Redis's clock counts
    // the turns, this process places them from the `now` it was handed: a turn lands early by up to
    // the time from that `now` to the reply, so turns of two calls differ by up to the longer call.)
    const auto d2_at = std::chrono::system_clock::now();
    const auto d2 = ask(5, 8, d2_at);
    const double slack = ms(std::max(d_slack, std::chrono::system_clock::now() - d2_at)) + 1.0;
    for (std::size_t i = 0; i < d2.size(); ++i) {
        ASSERT_FALSE(d2[i].allowed) << i;
        EXPECT_NEAR(ms(d2[i].until - d[4].until), 100.0 * static_cast<double>(i + 1), slack) << i;
        if (i > 0) {
            EXPECT_EQ(d2[i].until - d2[i - 1].until, std::chrono::milliseconds(100)) << i;
        }
    }
    // Leads 2 and 3 back early (woken by something else) keep their turns.
    const auto early = ask(2, 4, now + std::chrono::milliseconds(20));
    EXPECT_EQ(early[0].until, d[2].until);
    EXPECT_EQ(early[1].until, d[3].until);
    // Leads 1 and 2 back at or after their turns but denied (their places went to other calls):
    // turns ahead of the queue, the next place that frees and the one after, not the queue's end
    // 700 ms ahead, nor both the same place.
    const auto late = ask(1, 3, d[2].until);
    ASSERT_FALSE(late[0].allowed);
    ASSERT_FALSE(late[1].allowed);
    EXPECT_LT(late[0].until - d[2].until, std::chrono::milliseconds(150));
    EXPECT_EQ(late[1].until - late[0].until, std::chrono::milliseconds(100));
    // Lead 3 waits for something else after all (its campaign's cap): its turn goes to the next
    // lead denied, not a turn at the queue's end.
    gate.waits_elsewhere(targets[3], now + std::chrono::milliseconds(30));
    const auto next = ask(8, 9, now + std::chrono::milliseconds(30));
    ASSERT_FALSE(next[0].allowed);
    EXPECT_EQ(next[0].until, d[3].until);
}

// While a queued lead's turn has come and the lead is not back yet (a lane picks it up to an idle
// poll late), its place is kept for it: a lead due for the first time is denied without asking
// Redis and queues at the end. Once most turns pass without their leads (a paused campaign's),
// first arrivals ask Redis again.
TEST_F(LimitsGateRedis, AQueuedLeadsPlaceIsKeptFromLeadsDueForTheFirstTime) {
    settings_.key_requests_per_s = 5;  // 200 ms apart
    settings_.key_burst = 1;
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    double slack = 1.0;
    auto ask = [&](std::int64_t lead) { return ask_now(gate, "kept", lead, invite, slack); };
    ASSERT_TRUE(ask(400).allowed);
    const auto first = ask(401), second = ask(402);
    ASSERT_FALSE(first.allowed);
    ASSERT_FALSE(second.allowed);
    ASSERT_NEAR(ms(second.until - first.until), 200.0, slack);

    // Lead 401's turn has come, the lead is not back yet: lead 403, due for the first time, waits
    // behind the queue (after 402), and 401 then gets its place. (With a burst of 1, a place
    // taken late moves the next one as late: each lead comes back a little later than the last.)
    std::this_thread::sleep_until(first.until + std::chrono::milliseconds(20));
    const auto arrival = ask(403);
    ASSERT_FALSE(arrival.allowed);
    EXPECT_EQ(arrival.code, cs::wait_code::key_rate);
    EXPECT_NEAR(ms(arrival.until - second.until), 200.0, slack);
    EXPECT_TRUE(ask(401).allowed);
    std::this_thread::sleep_until(second.until + std::chrono::milliseconds(60));
    EXPECT_TRUE(ask(402).allowed);
    std::this_thread::sleep_until(arrival.until + std::chrono::milliseconds(100));
    EXPECT_TRUE(ask(403).allowed);
    EXPECT_EQ(gate.key_queue().places_kept, 1u);
    EXPECT_EQ(gate.key_queue().turns_missed, 0u);

    // Three leads queue and never come back, then a fourth: once the three turns have passed
    // unused (a second after each), a lead due for the first time asks Redis while the fourth's
    // turn has come, and gets the place; the fourth, back, is denied and queues again.
    std::vector<cs::time_point> turns;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_TRUE(ask(410).allowed);
    for (std::int64_t lead = 411; lead <= 414; ++lead) {
        const auto d = ask(lead);
        ASSERT_FALSE(d.allowed) << lead;
        turns.push_back(d.until);
    }
    std::this_thread::sleep_until(turns[2] + orch::engine::limits_gate::key_owed_grace + std::chrono::milliseconds(100));
    ASSERT_LT(std::chrono::system_clock::now(), turns[3] + orch::engine::limits_gate::key_owed_grace)
        << "the machine was too slow for this test's timing";
    EXPECT_TRUE(ask(415).allowed);
    EXPECT_EQ(gate.key_queue().turns_missed, 3u);
    EXPECT_EQ(gate.key_queue().places_kept, 1u);
    EXPECT_FALSE(ask(414).allowed);

    // A lead whose row waited for the key's rate (queued by another process, or by this one before
    // a restart) is not taken for a first arrival: it asks Redis, and gets the place.
    orch::engine::limits_gate fresh(settings_, false);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto ask_fresh = [&](std::int64_t lead, bool queued) {
        orch::engine::call_target target{"acc-gate-kept-" + std::to_string(lead),
                                         "https://network.example/in/kept" + std::to_string(lead), 7, lead, ""};
        target.key_queued = queued;
        const orch::engine::gate_request request{target, &campaign_, &invite};
        return fresh.before_many(std::span(&request, 1), std::chrono::system_clock::now()).front();
    };
    ASSERT_TRUE(ask_fresh(430, false).allowed);
    const auto queued = ask_fresh(431, false);
    ASSERT_FALSE(queued.allowed);
    std::this_thread::sleep_until(queued.until + std::chrono::milliseconds(20));
    EXPECT_TRUE(ask_fresh(432, true).allowed);
    EXPECT_EQ(fresh.key_queue().places_kept, 0u);
}

// Every worker of an API key takes its turns from one queue (in Redis): the leads a second
// process denies queue behind the first's, not at the same turns.
TEST_F(LimitsGateRedis, TheKeysQueueIsSharedByEveryWorkerOfTheKey) {
    settings_.key_requests_per_s = 10;  // 100 ms apart
    settings_.key_burst = 1;
    orch::engine::limits_gate first(settings_, false), second(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    double slack = 1.0;
    auto ask = [&](orch::engine::limits_gate& gate, std::int64_t lead) {
        return ask_now(gate, "shared", lead, invite, slack);
    };
    ASSERT_TRUE(ask(first, 500).allowed);
    std::vector<cs::time_point> turns;
    for (std::int64_t lead = 501; lead <= 504; ++lead) {
        const auto d = ask(lead % 2 == 0 ? second : first, lead);
        ASSERT_FALSE(d.allowed) << lead;
        ASSERT_EQ(d.code, cs::wait_code::key_rate) << lead;
        turns.push_back(d.until);
    }
    for (std::size_t i = 1; i < turns.size(); ++i) {
        EXPECT_NEAR(ms(turns[i] - turns[i - 1]), 100.0, slack) << i;
    }
}

// The place of a queued lead's turn is kept for it from the first arrivals of every worker of the
// key, not only of the one that gave the turn: Redis knows the turns given and not yet taken. Once
// more than key_owed_misses of the last 8 turns that passed went without their leads, first
// arrivals take the places again.
TEST_F(LimitsGateRedis, AQueuedLeadsPlaceIsKeptFromFirstArrivalsOfEveryWorker) {
    settings_.key_requests_per_s = 5;  // 200 ms apart
    settings_.key_burst = 1;
    orch::engine::limits_gate first(settings_, false), second(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    double slack = 1.0;  // not compared here
    auto ask = [&](orch::engine::limits_gate& gate, std::int64_t lead) {
        return ask_now(gate, "every", lead, invite, slack);
    };
    ASSERT_TRUE(ask(first, 600).allowed);
    const auto queued = ask(first, 601);
    ASSERT_FALSE(queued.allowed);
    // The second process has seen the key busy too (its own lead queued, behind 601).
    const auto behind = ask(second, 602);
    ASSERT_FALSE(behind.allowed);
    ASSERT_GT(behind.until, queued.until);

    // 601's turn has come and it is not back yet: a lead due for the first time in the second
    // process, which never gave that turn, waits behind the queue, and 601 gets its place.
    std::this_thread::sleep_until(queued.until + 20ms);
    const auto arrival = ask(second, 603);
    ASSERT_FALSE(arrival.allowed) << "the second process's first arrival took the place of the first's queued lead";
    EXPECT_EQ(arrival.code, cs::wait_code::key_rate);
    EXPECT_GT(arrival.until, behind.until);
    EXPECT_EQ(second.key_queue().places_kept, 1u);
    EXPECT_TRUE(ask(first, 601).allowed);

    // Turns whose leads never come (their campaign paused, say): once more than 2 of the last 8
    // passed beyond the grace, a first arrival takes a free place even while another queued lead's
    // turn is due. (Each of 610..617 is denied, at first for 602's place, then for the rate.)
    std::this_thread::sleep_until(arrival.until + 300ms);  // 602 and 603 are back no more
    std::vector<orch::engine::gate_decision> turns;
    for (std::int64_t lead = 610; lead < 618; ++lead) {
        turns.push_back(ask(first, lead));
        ASSERT_FALSE(turns.back().allowed) << lead;
    }
    // At 617's turn: 602, 603, 610, 611 and 612's turns are more than the grace behind, 613..617's
    // within it.
    std::this_thread::sleep_until(turns.back().until + 20ms);
    ASSERT_LT(turns[2].until + orch::engine::limits_gate::key_owed_grace, std::chrono::system_clock::now());
    ASSERT_GT(turns[3].until + orch::engine::limits_gate::key_owed_grace, std::chrono::system_clock::now());
    EXPECT_TRUE(ask(second, 620).allowed) << "first arrivals kept waiting for turns whose leads do not come";
}

// A queue of the key's turns reaches at most key_queue_horizon ahead: the leads beyond it wait
// at its end, so turns whose leads never came back delay the later ones only that long.
TEST_F(LimitsGateRedis, TheKeysQueueOfTurnsReachesTenMinutesAhead) {
    settings_.key_requests_per_s = 0.01;  // 100 s apart: the 6th denial's turn is past the horizon
    settings_.key_burst = 1;
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call check;
    check.kind = cs::call_kind::check_invitation;
    const auto now = std::chrono::system_clock::now();
    std::vector<cs::time_point> turns;
    for (int i = 0; i < 10; ++i) {
        const orch::engine::call_target target{"acc-gate-horizon", "https://network.example/in/h", 7, 300 + i, ""};
        const orch::engine::gate_request request{target, &campaign_, &check};
        const auto d = gate.before_many(std::span(&request, 1), now);
        if (i == 0) {
            ASSERT_TRUE(d.front().allowed);
            continue;
        }
        ASSERT_FALSE(d.front().allowed);
        ASSERT_EQ(d.front().code, cs::wait_code::key_rate);
        turns.push_back(d.front().until);
    }
    // Each call places its turn from the same `now`, so a turn lands early by the time from it to
    // that call's reply: up to the loop's time.
    const double slack = ms(std::chrono::system_clock::now() - now) + 2.0;
    EXPECT_LE(turns[0] - now, std::chrono::milliseconds(100'002));
    EXPECT_NEAR(ms(turns[4] - turns[0]), 400'000.0, slack);
    // The 6th turn, at the reach's end, is given or not as Redis's clock has moved on a
    // millisecond; the later ones are past it.
    for (std::size_t i = 5; i < turns.size(); ++i) {
        EXPECT_NEAR(ms(turns[i] - now), 600'000.0, slack) << i;
    }
    // A lead past the reach has no turn: back early, it looks again at the reach's end from then.
    const orch::engine::call_target beyond{"acc-gate-horizon", "https://network.example/in/h", 7, 309, ""};
    const orch::engine::gate_request again{beyond, &campaign_, &check};
    const auto later = now + std::chrono::seconds(1);
    EXPECT_NEAR(ms(gate.before_many(std::span(&again, 1), later).front().until - later), 600'000.0, 5.0);
    // A lead with a turn back early keeps it.
    const orch::engine::call_target queued{"acc-gate-horizon", "https://network.example/in/h", 7, 302, ""};
    const orch::engine::gate_request back{queued, &campaign_, &check};
    EXPECT_EQ(gate.before_many(std::span(&back, 1), later).front().until, turns[1]);
}

// The audience search of an apply (engine/campaign_apply: search_gate) takes a page at a time
// from the sender's search bucket under the account's own quota, and stops at the campaign's
// `limits.search` cap; neither passes soon (the search does not wait for them), so the refused
// page leaves the operators' line at once: the second search is not held behind the first.
TEST_F(LimitsGateRedis, AnAudienceSearchKeepsTheAccountsQuotaAndTheCampaignsCap) {
    limits::limiter limiter(settings_);
    cs::campaign c = campaign_;
    c.schedule.time_zone = "UTC";
    auto by_account = orch::engine::search_gate(limiter, "acc-search-own", c, {limits::quota{2, -1}, ""});
    EXPECT_FALSE(by_account());
    EXPECT_FALSE(by_account());
    auto refused = by_account();
    ASSERT_TRUE(refused);
    EXPECT_FALSE(refused->passing);
    EXPECT_NE(refused->why.find("the search day quota of account acc-search-own (its override: 2)"), std::string::npos)
        << refused->why;

    c.limits["search"] = cs::action_limit{5, 3};  // the smaller number holds
    auto by_campaign = orch::engine::search_gate(limiter, "acc-search-capped", c);
    for (int i = 0; i < 3; ++i) {
        EXPECT_FALSE(by_campaign()) << "page " << i + 1;
    }
    refused = by_campaign();
    ASSERT_TRUE(refused);
    EXPECT_FALSE(refused->passing);
    EXPECT_NE(refused->why.find("the campaign's search cap"), std::string::npos) << refused->why;
}

// A page the API answered 429 did nothing: the gate that heard it gives the page's place back
// (the account's quota and the campaign's cap) and cools the answer's scope for every process,
// here the account's searches (the answer names the account), so the next page waits for it.
// A page answered after that ends the streak; an answer with no page taken is not the gate's.
TEST_F(LimitsGateRedis, AnAudienceSearchsRateLimitedPageGivesItsPlaceBackAndCoolsItsScope) {
    limits::limiter limiter(settings_);
    cs::campaign c = campaign_;
    c.schedule.time_zone = "UTC";
    c.limits["search"] = cs::action_limit{1, std::nullopt};
    const std::string acc = "acc-search-429";
    auto gate = orch::engine::search_gate(limiter, acc, c, {limits::quota{1, -1}, ""});
    ASSERT_FALSE(gate());
    orch::outreach::error limited;
    limited.code = "RATE_LIMITED";
    limited.what_to_do = orch::outreach::disposition::back_off;
    limited.retry_after_s = 1;
    limited.message = "too many 'search_people' requests for account " + acc;
    EXPECT_TRUE(gate.answered(&limited));
    EXPECT_FALSE(gate.answered(&limited)) << "a second answer to the same page";

    auto held = gate();
    ASSERT_TRUE(held);
    EXPECT_TRUE(held->passing);
    EXPECT_EQ(held->why, "account " + acc + "'s search cooldown after a RATE_LIMITED answer");
    EXPECT_GT(held->retry_after, std::chrono::milliseconds(500));
    const auto active = limiter.cooldowns();
    ASSERT_TRUE(active);
    EXPECT_TRUE(std::any_of(active->begin(), active->end(), [&](const auto& a) {
        return !a.key_scope && a.account_id == acc && a.what == limits::action::search;
    }));

    // Once it has passed, the page takes the place the 429 gave back: the quota of 1 and the
    // campaign's cap of 1 are both still free.
    std::this_thread::sleep_for(held->retry_after + std::chrono::milliseconds(50));
    EXPECT_FALSE(gate());
    EXPECT_TRUE(gate.answered(nullptr));
    held = gate();
    ASSERT_TRUE(held);
    EXPECT_FALSE(held->passing) << held->why;
}

// The check of a call whose outcome was lost (an invite's, with check_invitation) is no step of
// the campaign's: the campaign's own cap on check_invitation counts it but does not hold it, so a
// cap the steps' checks used up cannot keep the lead until the cap's day ends. Before, it waited
// as to_check (campaign_quota) until midnight, and `apply --move-running` could not move it.
TEST_F(LimitsGateRedis, ALostCallsCheckIsCountedByTheCampaignsCapOnTheActionButNotHeldByIt) {
    orch::engine::limits_gate gate(settings_, false);
    cs::campaign c = campaign_;
    c.schedule.time_zone = "UTC";
    c.limits["check_invitation"] = cs::action_limit{1, std::nullopt};
    cs::api_call step_check;
    step_check.kind = cs::call_kind::check_invitation;
    cs::api_call lost_invite_check;
    lost_invite_check.kind = cs::call_kind::check_invitation;
    lost_invite_check.reconcile = true;
    lost_invite_check.reconciles = cs::call_kind::invite;
    const auto now = std::chrono::system_clock::now();
    auto ask = [&](const cs::campaign& campaign, const cs::api_call& call, std::int64_t lead) {
        const orch::engine::call_target target{"acc-gate-lost-check", "https://network.example/in/l" + std::to_string(lead),
                                               7, lead, ""};
        return gate.before(target, campaign, call, now);
    };

    ASSERT_TRUE(ask(c, step_check, 1).allowed);
    auto held = ask(c, step_check, 2);
    ASSERT_FALSE(held.allowed);
    EXPECT_EQ(held.code, cs::wait_code::campaign_quota) << held.reason;
    const auto lost = ask(c, lost_invite_check, 3);
    EXPECT_TRUE(lost.allowed) << lost.reason;
    EXPECT_FALSE(ask(c, step_check, 4).allowed) << "the check of the lost call freed a step's place";

    // It was counted: with the cap raised to 2, the step's check and the lost call's hold both places.
    c.limits["check_invitation"] = cs::action_limit{2, std::nullopt};
    held = ask(c, step_check, 5);
    EXPECT_FALSE(held.allowed) << "the check of the lost call was not counted under the campaign's cap";
    EXPECT_EQ(held.code, cs::wait_code::campaign_quota) << held.reason;
    c.limits["check_invitation"] = cs::action_limit{3, std::nullopt};
    EXPECT_TRUE(ask(c, step_check, 6).allowed);
}

// Each page of an audience search stands in the operators' line as a CLI command's call does: a
// command that asked first goes first, the page takes once it has gone, and a page that took
// leaves the line (the next page joins at its end). A page held by the key's rate keeps its place
// in the line while it waits, and the search's end leaves it. Before, the search took at once and
// pushed every waiting command back a place.
TEST_F(LimitsGateRedis, AnAudienceSearchTakesItsPagesInTheOperatorsLine) {
    settings_.key_requests_per_s = 10.0 / 60.0;  // 10 a minute (6 s apart), a burst of 2
    settings_.key_burst = 2;
    limits::limiter limiter(settings_);
    cs::campaign c = campaign_;
    c.schedule.time_zone = "UTC";
    const auto alive = limits::limiter::line_alive;

    auto earlier = limiter.line(0, alive);  // a sync that asked before the apply
    ASSERT_TRUE(earlier);
    auto search = orch::engine::search_gate(limiter, "acc-search-line", c);
    auto held = search();
    ASSERT_TRUE(held);
    EXPECT_TRUE(held->passing);
    EXPECT_TRUE(held->queued);
    EXPECT_EQ(held->retry_after, limits::limiter::line_look_again);
    EXPECT_EQ(held->why, "1 operator command(s) that asked for the API key's places before it") << held->why;
    auto later = limiter.line(0, alive);  // a command that asks after the search's page
    ASSERT_TRUE(later);
    EXPECT_EQ(later->ahead, 2);

    // The sync takes its place and leaves: the page is first and takes, and leaves the line.
    ASSERT_TRUE(limiter.line(earlier->ticket, alive, true));
    EXPECT_FALSE(search());
    EXPECT_EQ(limiter.line(later->ticket, alive)->ahead, 0);
    // The next page asks after `later`, so it waits for it.
    held = search();
    ASSERT_TRUE(held);
    EXPECT_TRUE(held->queued) << held->why;
    ASSERT_TRUE(limiter.line(later->ticket, alive, true));
    // First in line again, the page takes the burst's second place; the third page finds the rate
    // empty: held by the rate (not the line), it keeps its place, so a command asking now is behind it.
    EXPECT_FALSE(search());
    held = search();
    ASSERT_TRUE(held);
    EXPECT_FALSE(held->queued);
    EXPECT_TRUE(held->passing);
    EXPECT_NE(held->why.find("the API key's request rate"), std::string::npos) << held->why;
    auto behind = limiter.line(0, alive);
    ASSERT_TRUE(behind);
    EXPECT_EQ(behind->ahead, 1);
    // The search ends (its gate goes) while it waits: it leaves the line.
    search = {};
    EXPECT_EQ(limiter.line(behind->ticket, alive)->ahead, 0);
    ASSERT_TRUE(limiter.line(behind->ticket, alive, true));
}

// A day quota full while this process's calls still hold some of its places: the denied lead
// looks again in seconds, since a call that fails without effect, or that the ledger refuses in
// the same cycle, gives its place back. Once nothing is held, the denial waits for the next day.
TEST_F(LimitsGateRedis, AQuotaFullOfCallsInFlightIsASecondsWaitNotADays) {
    auto& invite_limits = settings_.actions[static_cast<std::size_t>(limits::action::invite)];
    invite_limits.limit = {1, -1};
    invite_limits.ramp = {};
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    campaign_.schedule.time_zone = "UTC";
    const orch::engine::call_target a{"acc-gate-held", "https://network.example/in/a", 7, 1, ""};
    const orch::engine::call_target b{"acc-gate-held", "https://network.example/in/b", 7, 2, ""};
    const orch::engine::call_target b2{"acc-gate-held", "https://network.example/in/b2", 7, 4, ""};
    // Yesterday at noon UTC: far from either midnight, whatever the time of the run.
    const auto now = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now()) - 12h;
    const std::vector<orch::engine::gate_request> batch{
        {a, &campaign_, &invite}, {b, &campaign_, &invite}, {b2, &campaign_, &invite}};
    auto d = gate.before_many(batch, now);
    ASSERT_EQ(d.size(), 3U);
    ASSERT_TRUE(d[0].allowed) << d[0].reason;
    ASSERT_FALSE(d[1].allowed);
    EXPECT_EQ(d[1].code, cs::wait_code::day_quota);
    EXPECT_GE(d[1].until, now + 3s);
    EXPECT_LE(d[1].until, now + 8s) << "the quota's only place is held by a call that has not ended";
    EXPECT_NE(d[1].reason.find("calls in flight hold its last places"), std::string::npos) << d[1].reason;
    // One place held: one lead looks again soon, the next waits for the next day.
    ASSERT_FALSE(d[2].allowed);
    EXPECT_GT(d[2].until, now + 1h) << d[2].reason;

    // The account's quota day moved to a time zone already in the next day (accounts limits
    // --time-zone): that day has its own quota, and a denial there counts the places held in that
    // day only. Its own first call's is; the call of the UTC day still in flight is not: of two
    // leads denied together, one looks again soon and the other waits for the next day.
    auto east_of = [](orch::engine::call_target t) {
        t.account_time_zone = "Pacific/Kiritimati";  // UTC+14: yesterday noon UTC is its next day's 02:00
        return t;
    };
    const auto e = east_of({"acc-gate-held", "https://network.example/in/e", 8, 5, ""});
    const auto far = gate.before(e, campaign_, invite, now);
    ASSERT_TRUE(far.allowed) << "a new day in its zone has its own quota: " << far.reason;
    const auto e2 = east_of({"acc-gate-held", "https://network.example/in/e2", 8, 6, ""});
    const auto e3 = east_of({"acc-gate-held", "https://network.example/in/e3", 8, 9, ""});
    const auto far_denied =
        gate.before_many(std::vector<orch::engine::gate_request>{{e2, &campaign_, &invite}, {e3, &campaign_, &invite}}, now);
    ASSERT_FALSE(far_denied[0].allowed);
    EXPECT_GE(far_denied[0].until, now + 3s) << "its own day's place is held by its own call";
    EXPECT_LE(far_denied[0].until, now + 8s) << far_denied[0].reason;
    ASSERT_FALSE(far_denied[1].allowed);
    EXPECT_GT(far_denied[1].until, now + 1h) << "the UTC day's call in flight holds no place of this day: "
                                             << far_denied[1].reason;
    auto east_take = e;
    east_take.gate_take = far.take;
    gate.released(east_take, campaign_, invite);

    // The ledger refused the first call: its place comes back, and the second lead, looking
    // again, gets it.
    auto first = a;
    first.gate_take = d[0].take;
    gate.released(first, campaign_, invite);
    const auto again = gate.before(b, campaign_, invite, now + 5s);
    ASSERT_TRUE(again.allowed) << again.reason;

    // That call succeeds: nothing of the quota is held any more, and a third lead waits for the
    // next day.
    auto second = b;
    second.gate_take = again.take;
    orch::engine::call_outcome sent;
    sent.attempt_outcome = orch::engine::attempt_outcome::ok;
    gate.after(second, campaign_, invite, sent);
    const orch::engine::call_target c{"acc-gate-held", "https://network.example/in/c", 7, 3, ""};
    const auto later = gate.before(c, campaign_, invite, now + 6s);
    ASSERT_FALSE(later.allowed);
    EXPECT_EQ(later.code, cs::wait_code::day_quota);
    EXPECT_GT(later.until, now + 1min) << later.reason;
    EXPECT_EQ(later.reason.find("in flight"), std::string::npos) << later.reason;
}

// One account, one quota day: campaigns in time zones a calendar day apart (UTC-11 and UTC+14)
// share the account's day quota, counted in the account's time zone, and a lead denied by it
// waits for that zone's midnight. An account without a time zone counts in UTC. (Counted by each
// campaign's own day, the account sent a day quota in each zone.)
TEST_F(LimitsGateRedis, CampaignsInTwoTimeZonesShareTheAccountsOneQuotaDay) {
    auto& invite_limits = settings_.actions[static_cast<std::size_t>(limits::action::invite)];
    invite_limits.limit = {3, -1};
    invite_limits.ramp = {};
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    cs::campaign west = campaign_;
    west.schedule.time_zone = "Pacific/Pago_Pago";  // yesterday noon UTC: 01:00 of yesterday there
    cs::campaign east = campaign_;
    east.schedule.time_zone = "Pacific/Kiritimati";  // 02:00 of today there
    // Yesterday at noon UTC: far from the midnights of UTC and Paris, whatever the time of the run.
    const auto now = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now()) - 12h;
    for (const std::string zone : {"Europe/Paris", ""}) {
        const std::string account = "acc-gate-zones-" + (zone.empty() ? std::string("utc") : std::string("paris"));
        const auto day = limits::day_in_zone(now, zone.empty() ? "UTC" : zone);
        ASSERT_TRUE(day);
        std::int64_t id = 0;
        auto call = [&](const cs::campaign& c) {
            orch::engine::call_target t{account, "https://network.example/in/z" + std::to_string(++id), 7, id, ""};
            t.account_time_zone = zone;
            auto d = gate.before(t, c, invite, now);
            if (d.allowed) {  // the call went out and succeeded: nothing stays held
                t.gate_take = d.take;
                orch::engine::call_outcome sent;
                sent.attempt_outcome = orch::engine::attempt_outcome::ok;
                gate.after(t, c, invite, sent);
            }
            return d;
        };
        for (const auto* c : {&west, &east, &west}) {
            const auto d = call(*c);
            ASSERT_TRUE(d.allowed) << account << " via " << c->schedule.time_zone << ": " << d.reason;
        }
        for (const auto* c : {&east, &west}) {
            const auto d = call(*c);
            ASSERT_FALSE(d.allowed) << account << " via " << c->schedule.time_zone
                                    << ": a second day quota in another zone";
            EXPECT_EQ(d.code, cs::wait_code::day_quota) << d.reason;
            EXPECT_LE(std::chrono::abs(d.until - (now + day->left)), 2s)
                << account << ": the account's midnight, not the campaign's: " << d.reason;
        }
        auto st = gate.limiter().status(account, *day);
        ASSERT_TRUE(st);
        EXPECT_EQ(st->actions[static_cast<std::size_t>(limits::action::invite)].used_today, 3) << account;
    }
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

namespace {

orch::engine::call_outcome rate_limited(std::chrono::milliseconds retry_after) {
    orch::engine::call_outcome o;
    o.attempt_outcome = orch::engine::attempt_outcome::transient;
    o.error_code = "RATE_LIMITED";
    o.error = "api_error RATE_LIMITED (HTTP 429): too many requests";
    o.retry_after = retry_after;
    o.event.kind = cs::result_kind::throttled;
    return o;
}

}  // namespace

// A 429 closes the key's scope in this process the moment answered() sees it, before any
// further call is sent; another process (a second gate on the same Redis) holds its calls once
// its mirror refreshes, within limits_gate::mirror_refresh of the write. Held calls wake spread
// over the jitter window, not all at the cooldown's end.
TEST_F(LimitsGateRedis, A429HoldsTheScopeHereAtOnceAndElsewhereWithinTheMirrorRefresh) {
    settings_.key_requests_per_s = 100;
    settings_.key_burst = 100;  // a 1-second jitter window
    orch::engine::limits_gate here(settings_, false);
    orch::engine::limits_gate elsewhere(settings_, false);
    cs::api_call send;
    send.kind = cs::call_kind::send;
    orch::engine::call_target target{"acc-gate-429", "https://network.example/in/y", 7, 43, ""};
    const orch::engine::call_target other{"acc-gate-429-b", "https://network.example/in/z", 7, 44, ""};
    auto now = std::chrono::system_clock::now();
    ASSERT_FALSE(here.hold(target, send, now));
    ASSERT_FALSE(elsewhere.hold(other, send, now));  // its mirror is fresh: the next look is in 100 ms

    const auto taken = here.before(target, campaign_, send, now);
    ASSERT_TRUE(taken.allowed);
    target.gate_take = taken.take;
    here.answered(target, campaign_, send, rate_limited(3s));
    // Here: at once, for every account (the key's scope), without a round trip.
    auto held = here.hold(other, send, std::chrono::system_clock::now());
    ASSERT_TRUE(held);
    EXPECT_GE(*held, now + 3s - 50ms);
    EXPECT_LE(*held, now + 3s + 1s + 200ms) << "the cooldown plus at most the jitter window";
    // Elsewhere: once its mirror refreshes from Redis.
    const auto written = std::chrono::steady_clock::now();
    std::optional<cs::time_point> seen;
    while (!seen && std::chrono::steady_clock::now() - written < 2s) {
        seen = elsewhere.hold(other, send, std::chrono::system_clock::now());
        if (!seen) {
            std::this_thread::sleep_for(5ms);
        }
    }
    ASSERT_TRUE(seen) << "another process never saw the cooldown";
    const auto bound = std::chrono::steady_clock::now() - written;
    EXPECT_LE(bound, orch::engine::limits_gate::mirror_refresh + 100ms) << "seen after "
        << std::chrono::duration_cast<std::chrono::milliseconds>(bound).count() << " ms";
    // after() at the settle does not count the same 429 twice in the backoff streak.
    auto until = here.after(target, campaign_, send, rate_limited(3s));
    ASSERT_TRUE(until);
    EXPECT_LE(*until, now + 3s + 200ms);
    // Wake-ups of held calls spread over the window rather than landing at one instant.
    std::set<std::int64_t> wakes;
    for (int i = 0; i < 20; ++i) {
        wakes.insert(std::chrono::duration_cast<std::chrono::milliseconds>(
                         here.hold(other, send, std::chrono::system_clock::now())->time_since_epoch())
                         .count());
    }
    EXPECT_GT(wakes.size(), 10u);
}

// How many times `what` is in the captured log.
std::size_t times_in(const std::ostringstream& log, const std::string& what) {
    const std::string text = log.str();
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++n;
    }
    return n;
}

// A key cooldown another process recorded is said in its log once when it starts: not again
// while a second 429 extends it, and again for the next one after it ended. The process that
// got the 429 says it once per 429, as the limiter writes it, and not a second time.
TEST_F(LimitsGateRedis, AKeyCooldownFromElsewhereIsSaidOnceWhenItStarts) {
    std::ostringstream log;
    const auto before = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "gate-log-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
    settings_.key_requests_per_s = 100;
    settings_.key_burst = 10;  // a jitter window of 100 ms
    {
        orch::engine::limits_gate here(settings_, false);
        orch::engine::limits_gate elsewhere(settings_, false);
        cs::api_call send;
        send.kind = cs::call_kind::send;
        const orch::engine::call_target target{"acc-gate-told", "https://network.example/in/t", 7, 45, ""};
        const auto said = [&](const std::string& what) { return times_in(log, what); };
        const std::string from_elsewhere = "that another process recorded holds every call";
        const std::string written = "RATE_LIMITED: API key cooldown";
        // Both mirrors refresh from now on.
        ASSERT_FALSE(here.hold(target, send, std::chrono::system_clock::now()));
        ASSERT_FALSE(elsewhere.hold(target, send, std::chrono::system_clock::now()));
        // The mirror refreshes every 100 ms; a loaded machine may take longer.
        const auto seen_within = [&](std::size_t n, std::chrono::milliseconds limit) {
            const auto start = std::chrono::steady_clock::now();
            while (said(from_elsewhere) < n && std::chrono::steady_clock::now() - start < limit) {
                std::this_thread::sleep_for(10ms);
            }
            return said(from_elsewhere) >= n;
        };
        here.answered(target, campaign_, send, rate_limited(1500ms));
        ASSERT_TRUE(seen_within(1, 1s)) << log.str();
        here.answered(target, campaign_, send, rate_limited(1500ms));  // extends it
        std::this_thread::sleep_for(300ms);
        EXPECT_EQ(said(from_elsewhere), 1u) << "said again while it went on\n" << log.str();
        // The second write's line is the first's, within a second: counted, not logged again.
        EXPECT_EQ(said(written), 1u) << log.str();
        while (elsewhere.hold(target, send, std::chrono::system_clock::now())) {  // until it ended
            std::this_thread::sleep_for(50ms);
        }
        std::this_thread::sleep_for(200ms);
        here.answered(target, campaign_, send, rate_limited(1000ms));
        EXPECT_TRUE(seen_within(2, 1s)) << log.str();
        EXPECT_EQ(said(written), 2u) << log.str();
        EXPECT_EQ(said("the RATE_LIMITED line before came 1 more time within a second"), 1u) << log.str();
    }
    spdlog::set_default_logger(before);
}

// Repeats of a RATE_LIMITED line that no later line follows (a burst before a quiet spell) are
// still counted in the log: by the first take once their second is over, or when the limiter
// goes. Before, they were said only with the next line, so the last burst's count was lost.
TEST_F(LimitsGateRedis, RepeatedCooldownLinesBeforeAQuietSpellAreCounted) {
    std::ostringstream log;
    const auto before = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "quiet-log-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
    const std::string counted = "the RATE_LIMITED line before came 2 more times within a second";
    const auto said = [&](const std::string& what) { return times_in(log, what); };
    limits::check c;
    c.account_id = "acc-quiet";
    c.what = limits::action::check_invitation;
    c.day = *limits::day_in_zone(std::chrono::system_clock::now(), "UTC");
    {
        limits::limiter limiter(settings_);
        for (int i = 0; i < 3; ++i) {
            ASSERT_TRUE(limiter.rate_limited(c, limits::scope::key, 1500ms));
        }
        (void)limiter.take(c);  // within the second: not yet
        EXPECT_EQ(said(counted), 0u) << log.str();
        std::this_thread::sleep_for(1100ms);
        (void)limiter.take(c);
        EXPECT_EQ(said(counted), 1u) << log.str();
    }
    EXPECT_EQ(said(counted), 1u) << "said again when the limiter went\n" << log.str();
    {
        limits::limiter limiter(settings_);
        for (int i = 0; i < 3; ++i) {
            ASSERT_TRUE(limiter.rate_limited(c, limits::scope::key, 1500ms));
        }
    }
    EXPECT_EQ(said(counted), 2u) << "not said when the limiter went\n" << log.str();
    spdlog::set_default_logger(before);
}

// The wake-ups' jitter draws from the randomness port handed in (engine/random.hpp): two gates
// with sources of one seed, at one (fixed) time, spread their held calls' wake-ups alike.
TEST_F(LimitsGateRedis, WakeUpJitterDrawsFromTheRandomSourceHandedIn) {
    struct fixed_clock final : orch::engine::clock_port {
        cs::time_point at = std::chrono::time_point_cast<cs::time_point::duration>(std::chrono::system_clock::now());
        cs::time_point now() const override { return at; }
    } clock;
    settings_.key_requests_per_s = 100;
    settings_.key_burst = 100;  // a 1-second jitter window
    auto wakes_of = [&](std::uint64_t seed, const std::string& account) {
        auto s = settings_;
        s.api_key += "-" + account;  // a key of its own: no gate sees another's cooldown in Redis
        orch::engine::limits_gate gate(s, false, clock, std::make_unique<orch::engine::seeded_random>(seed));
        cs::api_call send;
        send.kind = cs::call_kind::send;
        const orch::engine::call_target target{account, "https://network.example/in/j", 7, 45, ""};
        // The 429 alone; the wakes are drawn at once, well within the mirror's first refresh
        // (which would fold in the cooldown as Redis has it, on the wall clock).
        gate.answered(target, campaign_, send, rate_limited(3s));
        std::vector<cs::time_point> wakes;
        for (int i = 0; i < 8; ++i) {
            wakes.push_back(*gate.hold(target, send, clock.now()));
        }
        return wakes;
    };
    const auto a = wakes_of(11, "acc-jitter-a");
    const auto b = wakes_of(11, "acc-jitter-b");
    const auto c = wakes_of(12, "acc-jitter-c");
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}

// An account-scoped 429 reaches another process within the mirror refresh however many accounts
// that process serves, including an account it has never sent for: its mirror reads the index of
// every scope cooling down in one round trip, not a status per account.
TEST_F(LimitsGateRedis, AnAccountCooldownReachesOtherProcessesWithinTheRefreshAtAnyScale) {
    orch::engine::limits_gate here(settings_, false);
    orch::engine::limits_gate elsewhere(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    auto now = std::chrono::system_clock::now();
    for (int i = 0; i < 2'000; ++i) {
        const orch::engine::call_target t{"acc-scale-" + std::to_string(i), "https://network.example/in/s", 7, 100 + i, ""};
        ASSERT_FALSE(elsewhere.hold(t, invite, now));
    }
    const orch::engine::call_target target{"acc-never-seen-there", "https://network.example/in/n", 7, 5'000, ""};
    const orch::engine::call_target neighbour{"acc-scale-1", "https://network.example/in/s", 7, 101, ""};
    ASSERT_TRUE(here.before(target, campaign_, invite, now).allowed);
    auto limited = rate_limited(2s);
    limited.error_message = "too many invitations for account acc-never-seen-there";
    limited.error = "api_error RATE_LIMITED (HTTP 429): " + limited.error_message;
    here.answered(target, campaign_, invite, limited);
    const auto written = std::chrono::steady_clock::now();
    std::optional<cs::time_point> seen;
    while (!seen && std::chrono::steady_clock::now() - written < 2s) {
        seen = elsewhere.hold(target, invite, std::chrono::system_clock::now());
        if (!seen) {
            std::this_thread::sleep_for(2ms);
        }
    }
    ASSERT_TRUE(seen) << "another process never saw the account's cooldown";
    const auto bound = std::chrono::steady_clock::now() - written;
    EXPECT_LE(bound, orch::engine::limits_gate::mirror_refresh + 100ms)
        << "seen after " << std::chrono::duration_cast<std::chrono::milliseconds>(bound).count() << " ms";
    EXPECT_GE(*seen, now + 2s - 100ms);
    // The account's scope only: its other actions and the other accounts go on.
    EXPECT_FALSE(elsewhere.hold(neighbour, invite, std::chrono::system_clock::now()));
    cs::api_call send;
    send.kind = cs::call_kind::send;
    EXPECT_FALSE(elsewhere.hold(target, send, std::chrono::system_clock::now()));
}

// An account the API reported unavailable holds every queued call of that account at once.
TEST_F(LimitsGateRedis, AnUnavailableAccountHoldsItsQueuedCallsAtOnce) {
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    const orch::engine::call_target target{"acc-gate-inactive", "https://network.example/in/w", 7, 45, ""};
    const orch::engine::call_target other_account{"acc-gate-active", "https://network.example/in/v", 7, 46, ""};
    gate.answered(target, campaign_, invite, account_inactive());
    EXPECT_TRUE(gate.hold(target, invite, std::chrono::system_clock::now()));
    EXPECT_FALSE(gate.hold(other_account, invite, std::chrono::system_clock::now()));
}

// What other processes recorded (migration 0022's notifications, handed in by the worker's
// listener): an account reported unavailable holds its calls here too, for at most
// unavailable_hold; reported available again, its calls go out at once, also when this process's
// own ACCOUNT_INACTIVE answer held it.
TEST_F(LimitsGateRedis, AnAccountReportedUnavailableElsewhereIsHeldUntilItIsReportedAvailable) {
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    const orch::engine::call_target target{"acc-gate-elsewhere", "https://network.example/in/u", 7, 47, ""};
    const auto now = std::chrono::system_clock::now();
    EXPECT_FALSE(gate.hold(target, invite, now));
    gate.account_changed(target.account_id, false, now);
    const auto held = gate.hold(target, invite, now);
    ASSERT_TRUE(held);
    EXPECT_GE(*held, now + orch::engine::limits_gate::unavailable_hold);
    EXPECT_EQ(gate.hold_reason(target, invite, now), "held while account acc-gate-elsewhere is unavailable");
    EXPECT_FALSE(gate.hold(target, invite, now + orch::engine::limits_gate::unavailable_hold + 1ms));
    gate.account_changed(target.account_id, true, now);
    EXPECT_FALSE(gate.hold(target, invite, now));

    gate.answered(target, campaign_, invite, account_inactive());
    EXPECT_TRUE(gate.hold(target, invite, std::chrono::system_clock::now()));
    gate.account_changed(target.account_id, true, std::chrono::system_clock::now());
    EXPECT_FALSE(gate.hold(target, invite, std::chrono::system_clock::now()));
}

// An ACCOUNT_INACTIVE answer to a call claimed under an earlier login than the one the account
// was last reported available under (a re-login overtook the request, migration 0025) holds
// nothing; one to a call claimed under that login, or a later one, holds the account.
TEST_F(LimitsGateRedis, AnInactiveAnswerOvertakenByAReLoginHoldsNothing) {
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    orch::engine::call_target before{"acc-gate-relogin", "https://network.example/in/s", 7, 49, "", 1'000};
    orch::engine::call_target after = before;
    after.enrollment_id = 50;
    after.account_login = 2'000;
    const auto now = std::chrono::system_clock::now();
    gate.account_changed(before.account_id, false, now);
    gate.account_changed(before.account_id, true, now, 2'000);
    gate.answered(before, campaign_, invite, account_inactive());
    EXPECT_FALSE(gate.hold(before, invite, std::chrono::system_clock::now()));
    EXPECT_FALSE(gate.hold(after, invite, std::chrono::system_clock::now()));
    gate.answered(after, campaign_, invite, account_inactive());
    EXPECT_TRUE(gate.hold(before, invite, std::chrono::system_clock::now()));
    // A login reported earlier than the call's (its notification came late): the answer holds.
    orch::engine::limits_gate other(settings_, false);
    other.account_changed(before.account_id, true, now, 500);
    other.answered(before, campaign_, invite, account_inactive());
    EXPECT_TRUE(other.hold(before, invite, std::chrono::system_clock::now()));
}

// A 429 on a request of another action than its call's (a follow-up's reply check) cools that
// request's action down: the reconciliations that read conversations are held, the sends and
// invitations are not; the quota given back is the call's.
TEST_F(LimitsGateRedis, A429CoolsTheActionOfTheRequestItAnswered) {
    orch::engine::limits_gate gate(settings_, false);
    const orch::engine::call_target target{"acc-gate-request", "https://network.example/in/t", 7, 48, ""};
    cs::api_call follow_up;
    follow_up.kind = cs::call_kind::send;
    follow_up.confirm_no_reply = true;
    orch::engine::call_outcome limited;
    limited.attempt_outcome = orch::engine::attempt_outcome::transient;
    limited.error_code = "RATE_LIMITED";
    limited.error_message = "too many requests for account acc-gate-request";
    limited.error = "RATE_LIMITED: " + limited.error_message;
    limited.retry_after = 30'000ms;
    limited.limited_request = cs::call_kind::get_conversation;
    EXPECT_EQ(orch::engine::cooldown_action(follow_up, limited), limits::action::get_conversation);
    gate.answered(target, campaign_, follow_up, limited);
    const auto now = std::chrono::system_clock::now();
    cs::api_call find_sent;
    find_sent.kind = cs::call_kind::send;
    find_sent.reconcile = true;  // reads the conversation
    cs::api_call send;
    send.kind = cs::call_kind::send;
    cs::api_call invite;
    invite.kind = cs::call_kind::invite;
    EXPECT_TRUE(gate.hold(target, find_sent, now));
    EXPECT_EQ(gate.hold_reason(target, find_sent, now),
              "held by the get_conversation RATE_LIMITED cooldown of account acc-gate-request");
    EXPECT_FALSE(gate.hold(target, send, now));
    EXPECT_FALSE(gate.hold(target, invite, now));
    limited.limited_request.reset();
    EXPECT_EQ(orch::engine::cooldown_action(follow_up, limited), limits::action::send);
}

// Leads the gate parks on a cooldown wake spread over the jitter window after its end, not at
// one instant.
TEST_F(LimitsGateRedis, LeadsParkedOnACooldownWakeSpreadOverTheJitterWindow) {
    settings_.key_requests_per_s = 100;
    settings_.key_burst = 200;  // a 2-second window
    orch::engine::limits_gate gate(settings_, false);
    cs::api_call check;
    check.kind = cs::call_kind::check_invitation;
    const orch::engine::call_target first{"acc-gate-herd", "https://network.example/in/h", 7, 50, ""};
    auto now = std::chrono::system_clock::now();
    ASSERT_TRUE(gate.before(first, campaign_, check, now).allowed);
    gate.answered(first, campaign_, check, rate_limited(2s));
    std::set<std::int64_t> wakes;
    cs::time_point earliest = cs::time_point::max(), latest{};
    for (int i = 0; i < 30; ++i) {
        const orch::engine::call_target t{"acc-gate-herd-" + std::to_string(i), "https://network.example/in/h", 7,
                                          100 + i, ""};
        auto d = gate.before(t, campaign_, check, std::chrono::system_clock::now());
        ASSERT_FALSE(d.allowed);
        wakes.insert(std::chrono::duration_cast<std::chrono::milliseconds>(d.until.time_since_epoch()).count());
        earliest = std::min(earliest, d.until);
        latest = std::max(latest, d.until);
    }
    EXPECT_GT(wakes.size(), 20u) << "wake-ups at distinct instants";
    EXPECT_GE(earliest, now + 2s - 100ms) << "none before the cooldown ends";
    EXPECT_GT(latest - earliest, 500ms) << "spread over the window";
    EXPECT_LE(latest, now + 2s + 2s + 500ms);
}
