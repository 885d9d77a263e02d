// The pre-launch forecast: credits of the cheapest and costliest path per lead, the audience
// cost, the bottleneck quota and the calendar, on campaigns whose numbers are worked by hand.
#include "campaigns/campaigns.hpp"

#include <gtest/gtest.h>

#include <map>

#include <algorithm>
#include <chrono>

namespace {

using namespace orch::campaigns;

campaign load(const std::string& steps, const std::string& days = "[mon, tue, wed, thu, fri]") {
    std::string text = "name: forecast\naccounts: [a1]\naudience:\n  search: {title: Engineer}\n  total_results: 100\n"
                       "schedule: {time_zone: UTC, days: " + days + ", hours: \"09:00-17:00\"}\n"
                       "budget_credits: 1000\nsteps:\n" + steps;
    load_options o;
    auto r = load_campaign(text, o);
    if (!r.value) {
        ADD_FAILURE() << (r.errors.empty() ? "no campaign" : r.errors.front().to_string());
        return {};
    }
    return *r.value;
}

const std::string canonical =
    "  - {id: check, kind: check_invitation, on_accepted: hello, on_pending: wait, on_no_invitation: invite}\n"
    "  - {id: invite, kind: invite}\n"
    "  - {id: wait, kind: wait_accepted, timeout: 7d, next: hello, on_timeout: drop}\n"
    "  - {id: drop, kind: withdraw, next: end}\n"
    "  - {id: hello, kind: send, message_text: \"Hi {{first_name}}\"}\n";

estimate_input one_credit_each(std::int64_t leads) {
    estimate_input in;
    in.leads = leads;
    in.audience_credits = 10;
    for (auto k : {call_kind::check_invitation, call_kind::invite, call_kind::send, call_kind::withdraw,
                   call_kind::visit}) {
        in.credits[k] = 1;
    }
    return in;
}

TEST(CampaignEstimate, CheapestAndCostliestPathsTimesTheAudiencePlusTheSearch) {
    // Cheapest: check (accepted) -> hello = 2. Costliest: check -> invite -> wait (timeout: its
    // check) -> drop (check + withdraw) = 5.
    auto r = estimate(load(canonical), one_credit_each(100));
    EXPECT_EQ(r.per_lead_min, 2);
    EXPECT_EQ(r.per_lead_max, 5);
    EXPECT_EQ(r.credits_min, 10 + 200);
    EXPECT_EQ(r.credits_max, 10 + 500);
    EXPECT_EQ(r.budget, 1000);
    EXPECT_EQ(r.longest_wait, std::chrono::seconds(7 * 86'400));
}

TEST(CampaignEstimate, CallsPerActionAreTheWorstCaseOverTheAudience) {
    auto r = estimate(load(canonical), one_credit_each(100));
    std::map<std::string, std::int64_t> calls;
    for (const auto& a : r.actions) {
        calls[a.action] = a.calls_max;
    }
    EXPECT_EQ(calls["check_invitation"], 300);  // check, the wait's check, the withdraw's check
    EXPECT_EQ(calls["invite"], 100);
    EXPECT_EQ(calls["withdraw"], 100);
    EXPECT_EQ(calls["send"], 100);
}

TEST(CampaignEstimate, TheTightestQuotaIsTheBottleneckAndSetsTheCalendar) {
    auto in = one_credit_each(400);
    in.senders = 2;
    in.per_day["invite"] = 20;    // 40 a working day for both senders -> 10 working days
    in.per_week["invite"] = 200;  // 40 a working day spread over 5 days: not tighter
    in.per_day["send"] = 100;     // 200 a day -> 2 days
    auto r = estimate(load(canonical), in);
    EXPECT_EQ(r.bottleneck, "invite");
    EXPECT_DOUBLE_EQ(r.working_days, 10.0);
    // 10 working days of a 5-day week = 14 calendar days, plus the 7-day wait.
    EXPECT_DOUBLE_EQ(r.calendar_days, 14.0 + 7.0);
}

// Senders with their own quotas (`accounts limits`): the day numbers add up, and since the
// leads split evenly the slowest sender sets the working days.
TEST(CampaignEstimate, EachSendersOwnQuotaCountsAndTheSlowestSetsTheDays) {
    auto in = one_credit_each(400);
    in.senders = 2;
    in.per_day["invite"] = 20;  // the settings' number, replaced below
    estimate_input::sender_quotas fast;
    fast.per_day["invite"] = 40;
    estimate_input::sender_quotas slow;
    slow.per_day["invite"] = 10;
    slow.per_week["invite"] = 25;  // 5 a working day spread over 5 days: tighter than 10 on average
    in.per_sender = {fast, slow};
    auto r = estimate(load(canonical), in);
    const auto invite = std::find_if(r.actions.begin(), r.actions.end(), [](const auto& a) { return a.action == "invite"; });
    ASSERT_NE(invite, r.actions.end());
    EXPECT_EQ(invite->per_working_day, 45);  // 40 + 5
    // 200 invites each; the slow sender does 10, 10 and 5 a week (its rolling week then full
    // until the next Monday): 7 weeks and 3 days, 38 working days.
    EXPECT_DOUBLE_EQ(invite->working_days, 38.0);
    EXPECT_EQ(r.bottleneck, "invite");
    // The same numbers for both senders give what `senders` alone gives.
    in.per_sender = {fast, fast};
    auto same = estimate(load(canonical), in);
    in.per_sender.clear();
    in.per_day["invite"] = 40;
    auto plain = estimate(load(canonical), in);
    EXPECT_DOUBLE_EQ(same.working_days, plain.working_days);
    ASSERT_EQ(same.actions.size(), plain.actions.size());
    for (std::size_t i = 0; i < same.actions.size(); ++i) {
        EXPECT_EQ(same.actions[i].per_working_day, plain.actions[i].per_working_day) << same.actions[i].action;
        EXPECT_DOUBLE_EQ(same.actions[i].working_days_new_accounts, plain.actions[i].working_days_new_accounts)
            << same.actions[i].action;
    }
}

// A wait's timeout check can find the invitation accepted after all, and the lead goes on to
// `next` having paid for it: the costliest path through `next` counts the check, and its wait.
TEST(CampaignEstimate, AWaitsTimeoutCheckCanLeadOnToNext) {
    const std::string steps =
        "  - {id: invite, kind: invite}\n"
        "  - {id: wait, kind: wait_accepted, timeout: 2d, next: pause, on_timeout: end}\n"
        "  - {id: pause, kind: delay, duration: 1d, next: hello}\n"
        "  - {id: hello, kind: send, message_text: \"Hi\"}\n";
    auto r = estimate(load(steps), one_credit_each(10));
    EXPECT_EQ(r.per_lead_min, 2);  // accepted by event, then hello; or the timeout's check, then end
    EXPECT_EQ(r.per_lead_max, 3);  // invite, the timeout's check finding it accepted, hello
    EXPECT_EQ(r.longest_wait, std::chrono::seconds(3 * 86'400));
}

// A budget_per_account_credits cap below the costliest case is not "within budget".
TEST(CampaignEstimate, AnAccountCapBelowTheCostliestCaseIsNotWithinBudget) {
    auto c = load(canonical);
    c.budget_per_account_credits = 100;  // one sender (a1): 100 against 500 of step credits
    auto r = estimate(c, one_credit_each(100));
    EXPECT_TRUE(r.account_cap_short);
    EXPECT_FALSE(r.within_budget());
    // The busiest (here the only) sender's 500 step credits, and the audience search's 10, which
    // draws from the cap of the sender that runs it.
    c.budget_per_account_credits = 509;
    EXPECT_EQ(estimate(c, one_credit_each(100)).busiest_sender_credits, 510);
    EXPECT_FALSE(estimate(c, one_credit_each(100)).within_budget());
    c.budget_per_account_credits = 510;
    EXPECT_TRUE(estimate(c, one_credit_each(100)).within_budget());
    // Two senders split the leads; the last lead's invite reservation ends a path here.
    auto last = load("  - {id: check, kind: check_invitation, on_accepted: end, on_pending: end, "
                     "on_no_invitation: invite}\n  - {id: invite, kind: invite}\n");
    last.budget_per_account_credits = 100;
    auto two = one_credit_each(9);
    two.senders = 2;
    two.audience_credits = 0;
    two.reserved_beyond[call_kind::invite] = 1;
    EXPECT_EQ(estimate(last, two).busiest_sender_credits, 5 * 2 + 1);   // 5 leads of 2, and 1
}

// A follow-up message of a stop_on_reply campaign reads the conversation first: one more call,
// and its credits, on the path.
TEST(CampaignEstimate, AFollowUpCountsItsConversationRead) {
    const std::string steps =
        "  - {id: hello, kind: send, message_text: \"Hi\", next: pause}\n"
        "  - {id: pause, kind: delay, duration: 3d, next: again}\n"
        "  - {id: again, kind: send, message_text: \"Any news?\"}\n";
    auto in = one_credit_each(100);
    in.credits[call_kind::get_conversation] = 1;
    auto r = estimate(load(steps), in);
    EXPECT_EQ(r.per_lead_max, 3);  // send, then read and send
    std::map<std::string, std::int64_t> calls;
    for (const auto& a : r.actions) {
        calls[a.action] = a.calls_max;
    }
    EXPECT_EQ(calls["send"], 200);
    EXPECT_EQ(calls["get_conversation"], 100);
    // Without stop_on_reply nothing is read.
    auto plain = load(steps);
    plain.stop_on_reply = false;
    EXPECT_EQ(estimate(plain, in).per_lead_max, 2);
}

// An invite reserves the check it makes when refused. Where the invite is the path's last paid
// call, the budget needs that credit beyond the costliest case; where a call follows it, that
// call's credits cover it.
TEST(CampaignEstimate, TheBudgetCoversAnInvitesReservationAtTheEndOfAPath) {
    auto in = one_credit_each(1);
    in.reserved_beyond[call_kind::invite] = 1;
    auto last = load("  - {id: check, kind: check_invitation, on_accepted: end, on_pending: end, "
                     "on_no_invitation: invite}\n  - {id: invite, kind: invite}\n");
    last.budget_credits = 2;
    auto r = estimate(last, in);
    EXPECT_EQ(r.credits_max, 10 + 2);
    EXPECT_EQ(r.headroom, 1);
    last.budget_credits = 12;
    EXPECT_FALSE(estimate(last, in).within_budget());
    last.budget_credits = 13;
    EXPECT_TRUE(estimate(last, in).within_budget());
    // The canonical campaign's invite is followed by the wait's check on its costliest path.
    auto followed = estimate(load(canonical), in);
    EXPECT_EQ(followed.headroom, 0);
    // However many leads, only the last one's reservation needs the extra credit: the others
    // wait for the calls in flight rather than hold theirs at the same time.
    auto many = one_credit_each(100);
    many.reserved_beyond[call_kind::invite] = 1;
    EXPECT_EQ(estimate(last, many).headroom, 1);
    // A larger extra counts whole: the peak is the check, the invite and 3 more, 3 beyond the
    // path's 2.
    many.reserved_beyond[call_kind::invite] = 3;
    EXPECT_EQ(estimate(last, many).headroom, 3);
    // No leads, no reservation.
    many.leads = 0;
    EXPECT_EQ(estimate(last, many).headroom, 0);
}

// The finish date is a local date of the schedule's time zone, from the schedule's next working
// start: a day whose hours are over does not count, and a weekday is the zone's, not UTC's.
TEST(CampaignEstimate, TheFinishDateWalksTheSchedulesOwnDays) {
    using namespace std::chrono;
    schedule wednesdays;
    wednesdays.time_zone = "Pacific/Auckland";  // UTC+13 in November
    wednesdays.days = {false, false, true, false, false, false, false};
    wednesdays.start_minute = 9 * 60;
    wednesdays.end_minute = 17 * 60;
    const auto at = [](int day, int hour) {  // 2026-11-<day> <hour>:00 UTC
        return orch::campaigns::time_point(sys_days(year_month_day(year(2026), month(11), std::chrono::day(static_cast<unsigned>(day)))) +
                          hours(hour));
    };
    // Tuesday 2026-11-24 23:00 UTC is Wednesday noon in Auckland: that day works.
    EXPECT_EQ(finish_date(wednesdays, at(24, 23), 1.0, seconds(0)), "2026-11-25");
    // Wednesday 2026-11-25 06:00 UTC is 19:00 there: its hours are over, so the next Wednesday.
    EXPECT_EQ(finish_date(wednesdays, at(25, 6), 1.0, seconds(0)), "2026-12-02");
    // Two working days, then a 3-day wait, lands on a Saturday: on to the next Wednesday.
    EXPECT_EQ(finish_date(wednesdays, at(24, 23), 2.0, seconds(3 * 86'400)), "2026-12-09");
}

TEST(CampaignEstimate, NewSendersRampUpDayByDay) {
    auto in = one_credit_each(400);
    in.senders = 2;
    in.per_day["invite"] = 40;          // 80 a working day for both: 5 working days once ramped up
    in.ramp["invite"] = {40, 20, 10};   // a new account: 20, 30, 40, 40, ... invites a day
    in.per_day["send"] = 100;
    in.ramp["send"] = {100, 0, 0};      // no ramp-up: the same either way
    auto r = estimate(load(canonical), in);
    EXPECT_EQ(r.bottleneck, "invite");
    EXPECT_DOUBLE_EQ(r.working_days, 5.0);
    // Per sender 200 invites, Monday to Friday: the first week allows 20 + 30 + 40 + 40 + 40 = 170;
    // the second is ramped up (40 a day), the last 30 take 0.75 of a day.
    EXPECT_DOUBLE_EQ(r.working_days_new_accounts, 5.75);
    EXPECT_DOUBLE_EQ(r.calendar_days_new_accounts, 5.75 * 7.0 / 5.0 + 7.0);
    for (const auto& a : r.actions) {
        if (a.action == "send") {
            EXPECT_DOUBLE_EQ(a.working_days_new_accounts, a.working_days);
        }
    }
}

// The ramp-up slows some actions more: new senders' bottleneck may be another action than
// ramped-up ones' (a trial: "bottleneck send: ... as the sender is new" where invites were slower).
TEST(CampaignEstimate, NewSendersHaveTheirOwnBottleneck) {
    auto in = one_credit_each(400);
    in.senders = 2;
    in.per_day["invite"] = 40;          // 5 working days once ramped up
    in.ramp["invite"] = {40, 10, 5};    // a new account: 10, 15, 20, ... invites a day
    in.per_day["send"] = 30;            // slower once ramped up
    in.ramp["send"] = {30, 0, 0};       // no ramp-up
    auto r = estimate(load(canonical), in);
    EXPECT_EQ(r.bottleneck, "send");
    EXPECT_EQ(r.bottleneck_new_accounts, "invite");
    std::map<std::string, double> days_new;
    for (const auto& a : r.actions) {
        days_new[a.action] = a.working_days_new_accounts;
    }
    EXPECT_GT(days_new["invite"], days_new["send"]);
    const double invite_new = days_new["invite"];
    EXPECT_DOUBLE_EQ(r.working_days_new_accounts, invite_new);
}

TEST(CampaignEstimate, TheRollingWeekQuotaShapesEachDay) {
    // The defaults: 80 a day, 200 a rolling week, a new account 20 + 10 a day. An established
    // sender works 80, 80 and 40, then waits for its week to roll: 200 a week, in 3 days.
    // A new one's first week allows 20 + 30 + 40 + 50 + 60 = 200, the week quota, and the
    // rolling week then holds it to the same days ever after (Monday's 80 less the 180 of the
    // 6 days before: 20): 200 a week in 5 days.
    auto in = one_credit_each(1000);
    in.per_day["invite"] = 80;
    in.per_week["invite"] = 200;
    in.ramp["invite"] = {80, 20, 10};
    auto r = estimate(load(canonical), in);
    EXPECT_DOUBLE_EQ(r.working_days, 4 * 5 + 3.0);   // 1000 = 5 weeks of 200
    EXPECT_DOUBLE_EQ(r.working_days_new_accounts, 25.0);
    // Without a day quota of its own the account has nothing to ramp up.
    in.ramp["invite"] = {-1, 20, 10};
    EXPECT_DOUBLE_EQ(estimate(load(canonical), in).working_days_new_accounts, r.working_days);

    // 100 invites: the established sender's 80 and 20 take 1.25 days; a new one's 20, 30, 40
    // and 10 of Thursday's 50, 3.2 (a week spread evenly said 2.5 for both).
    auto few = one_credit_each(100);
    few.per_day = in.per_day;
    few.per_week = in.per_week;
    few.ramp["invite"] = {80, 20, 10};
    auto f = estimate(load(canonical), few);
    const auto invite = std::find_if(f.actions.begin(), f.actions.end(), [](const auto& a) { return a.action == "invite"; });
    ASSERT_NE(invite, f.actions.end());
    EXPECT_DOUBLE_EQ(invite->working_days, 1.25);
    EXPECT_DOUBLE_EQ(invite->working_days_new_accounts, 3.2);
    EXPECT_EQ(invite->per_working_day, 40);   // a steady week's average: 200 over 5 days
}

TEST(CampaignEstimate, TheRampCountsCalendarDaysAndHasNoIterationCap) {
    // Mondays only: the first Monday allows 20, the next (a week later: 90, capped) 40.
    auto mondays = one_credit_each(100);
    mondays.per_day["invite"] = 40;
    mondays.ramp["invite"] = {40, 20, 10};
    auto r = estimate(load(canonical, "[mon]"), mondays);
    EXPECT_DOUBLE_EQ(r.working_days, 2.5);
    EXPECT_DOUBLE_EQ(r.working_days_new_accounts, 1.0 + 80.0 / 40.0);
    // A quota that never finishes ramping (no increase) goes at its first-day pace to the end.
    auto slow = one_credit_each(1'000'000);
    slow.per_day["invite"] = 40;
    slow.ramp["invite"] = {40, 20, 0};
    EXPECT_DOUBLE_EQ(estimate(load(canonical), slow).working_days_new_accounts, 1'000'000.0 / 20.0);
}

TEST(CampaignEstimate, AWeekQuotaBelowTheDayQuotaIsTheTighterOne) {
    auto in = one_credit_each(100);
    in.per_day["invite"] = 80;
    in.per_week["invite"] = 50;  // 10 a working day over 5 days, on average
    auto r = estimate(load(canonical), in);
    EXPECT_EQ(r.bottleneck, "invite");
    // 50 on a Monday, nothing until the next Monday's 50: a week and a day.
    EXPECT_DOUBLE_EQ(r.working_days, 6.0);
    // A week quota that allows nothing never finishes.
    in.per_week["invite"] = 0;
    EXPECT_GE(estimate(load(canonical), in).working_days, 1e9);
}

// A day cap of 50 credits on 100 leads of the canonical campaign (several credits per lead on
// its costliest path) is slower than 2 senders' 160 invites a day: "credits (day cap)" becomes
// the bottleneck. A per-account cap of 200 with 2 senders bounds the spend at 400.
TEST(CampaignEstimate, ADayCapIsABottleneckAndAnAccountCapBoundsTheSpend) {
    campaign c = load(canonical);
    c.budget_per_day_credits = 50;
    c.budget_per_account_credits = 200;
    auto in = one_credit_each(100);
    in.per_day["invite"] = 80;
    in.senders = 2;
    auto r = estimate(c, in);
    ASSERT_FALSE(r.actions.empty());
    const auto& cap = r.actions.back();
    EXPECT_EQ(cap.action, "credits (day cap)");
    EXPECT_EQ(cap.calls_max, 100 * r.per_lead_max);   // the step credits, not the audience search
    EXPECT_EQ(cap.per_working_day, 50);
    EXPECT_DOUBLE_EQ(cap.working_days, 100.0 * static_cast<double>(r.per_lead_max) / 50.0);
    EXPECT_EQ(r.bottleneck, "credits (day cap)");      // invites: 100 / 160 a day is faster
    EXPECT_DOUBLE_EQ(r.working_days, cap.working_days);
    EXPECT_EQ(r.account_cap_credits, 400);

    campaign plain = load(canonical);
    auto p = estimate(plain, in);
    EXPECT_EQ(p.account_cap_credits, -1);
    EXPECT_NE(p.bottleneck, "credits (day cap)");
}

TEST(CampaignEstimate, NoQuotaMeansNoBottleneck) {
    auto r = estimate(load(canonical), one_credit_each(100));
    EXPECT_TRUE(r.bottleneck.empty());
    EXPECT_DOUBLE_EQ(r.working_days, 0.0);
    EXPECT_DOUBLE_EQ(r.calendar_days, 7.0);  // only the wait
}

TEST(CampaignEstimate, DelaysAddToTheLongestWaitAndFreeStepsCostNothing) {
    auto c = load("  - {id: look, kind: visit, next: pause}\n"
                  "  - {id: pause, kind: delay, duration: 2d, next: hello}\n"
                  "  - {id: hello, kind: send, message_text: \"Hi\"}\n",
                  "[mon, tue, wed, thu, fri, sat, sun]");
    auto in = one_credit_each(10);
    in.credits[call_kind::visit] = 0;
    auto r = estimate(c, in);
    EXPECT_EQ(r.per_lead_min, 1);
    EXPECT_EQ(r.per_lead_max, 1);
    EXPECT_EQ(r.longest_wait, std::chrono::seconds(2 * 86'400));
}

}  // namespace
