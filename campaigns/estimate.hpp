// orch::campaigns estimate: a forecast of what a campaign will cost and roughly how long it will
// take, before it is launched (`orchestrator campaign estimate FILE`). Pure: the caller supplies
// the audience size, the credit cost of each call (the client's cost model, an upper bound) and
// the per-account daily and weekly quotas in force.
//
// Credits: every lead walks one path through the step graph (acyclic, checked by the loader);
// the forecast gives the cheapest and the costliest path per lead and multiplies by the
// audience, plus the audience search itself. Calls per step: check_invitation 1, invite 1,
// send 1, visit 1, withdraw 2 (the check that finds the invitation, then the withdrawal),
// wait_accepted 0 or 1 (the check made when the timeout passes, which goes on to `next` when it
// finds the invitation accepted after all, else to `on_timeout`; none when the acceptance arrives),
// delay and end 0; a follow-up send of a stop_on_reply campaign (one that can come after another
// send) reads the conversation first, one get_conversation call more.
//
// Headroom: a call reserves its upper bound before it is made, and an invite's includes the
// check it makes when the invite is refused (estimate_input::reserved_beyond). A lead's path
// needs, at its peak, what it spent before such a call plus the call's whole reservation, which
// for an invite that ends a path is one credit beyond the path's cost. Near the end of a budget,
// a call the budget left cannot cover waits while other calls in flight may give credits back
// (the ledger's in_flight refusal), so the leads reserve one after another as credits come back;
// the last one still needs its whole reservation, and with nothing left in flight the ledger
// pauses the campaign. So the budget must cover the costliest case plus one lead's peak beyond
// the costliest path (estimate_result::headroom). Not counted: a call whose worker died holds
// its reservation until a claim reconciles it, which can still stop a budget sized exactly.
//
// Duration: for each quota-limited action, the worst-case number of calls over the audience,
// split evenly over the senders; each share goes day by day as the limits gate lets it through,
// each working day up to the day quota and to what the rolling week quota leaves (each sender's
// own quotas when given), from the schedule's first working day of a week with the sender's week
// empty: 80 a day and 200 a week work 80, 80 and 40, then wait for the week to roll. The slowest
// sender sets the action's working days, and the slowest action is the bottleneck. The working
// days include those a full week quota leaves idle. Working days become calendar days through the
// schedule's days per week, and the longest chain of waits and delays on any path is added once
// (the last leads still wait after their last call). Rough by nature: acceptance and reply rates
// are unknown before launch, so the figures are bounds. action_forecast::per_working_day is a
// steady week's average: the smaller of the day quota and the week quota spread over the working
// days, summed over the senders.
//
// Ramp-up: an account new to the orchestrator starts an action's day quota lower and raises it
// every calendar day until the quota (estimate_input::ramp, as the limits gate does); the week
// quota still holds. The forecast for such senders (action_forecast::working_days_new_accounts)
// goes day by day the same way, each day's quota the ramped one.
//
// Budget caps: a `budget_per_day_credits` cap is one more bottleneck row, "credits (day cap)":
// the costliest path's step credits over the audience, at most the cap per day (the audience
// search is not drawn from it). A `budget_per_account_credits` cap bounds what each sender may
// spend: `account_cap_short` when it is below what the busiest sender may need (its even share of
// the leads on the costliest path, its last lead's reservation beyond that, and the audience
// search, which draws from its runner's cap): the leads beyond it would wait.
#pragma once

#include "campaigns/machine.hpp"
#include "campaigns/model.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace orch::campaigns {

struct estimate_input {
    std::int64_t leads = 0;             // audience size (a search's total_results, a file's rows)
    std::int64_t audience_credits = 0;  // what finding the audience costs (0 for a file)
    std::map<call_kind, std::int64_t> credits;  // per call; absent = 0
    // Per account and action name ("invite", "send", "visit", "withdraw", "check_invitation"):
    // the quota in force; absent or negative = unlimited.
    std::map<std::string, std::int64_t> per_day;
    std::map<std::string, std::int64_t> per_week;
    // Per action, what ramps up (limits::ramp_up): the account's own day quota (-1: none, then
    // nothing ramps), a new account's first-day quota (0: no ramp-up) and its daily increase.
    // per_day above may be tighter (a campaign's limit): it holds as it is.
    struct ramp_input {
        std::int64_t account_per_day = -1;
        std::int64_t first_day = 0;
        std::int64_t increase = 0;
    };
    std::map<std::string, ramp_input> ramp;
    std::int64_t senders = 1;
    // When known, each sender's own quotas (its `accounts limits` overrides, tightened by the
    // campaign's limits), one entry per sender in place of per_day / per_week above; the leads
    // split evenly over the senders, so the slowest sender of an action sets its working days.
    // account_per_day: the sender's own day quota its ramp-up climbs to (absent: ramp's).
    struct sender_quotas {
        std::map<std::string, std::int64_t> per_day;
        std::map<std::string, std::int64_t> per_week;
        std::map<std::string, std::int64_t> account_per_day;
    };
    std::vector<sender_quotas> per_sender;
    // Per call kind, what its reservation holds beyond the call's own credits above (an invite's
    // refusal check); absent = 0.
    std::map<call_kind, std::int64_t> reserved_beyond;
};

struct action_forecast {
    std::string action;              // "invite", ...
    std::int64_t calls_max = 0;      // over the whole audience, worst case
    std::int64_t per_working_day = -1;  // a steady week's average, the senders with a quota together; -1 = none has one
    std::int64_t unlimited_senders = 0; // senders without a quota for the action (when others have one)
    double working_days = 0;         // the slowest limited sender's share, day by day (0 when unlimited)
    double working_days_new_accounts = 0;  // the same for senders starting their ramp-up
};

struct estimate_result {
    std::int64_t per_lead_min = 0;   // credits of the cheapest path
    std::int64_t per_lead_max = 0;   // credits of the costliest path
    std::int64_t credits_min = 0;    // audience + leads * per_lead_min
    std::int64_t credits_max = 0;    // audience + leads * per_lead_max
    std::int64_t budget = 0;         // the campaign's budget_credits
    std::int64_t headroom = 0;       // what the last lead's reservation needs beyond credits_max
    // The account cap (budget_per_account_credits x senders) below the costliest case's step
    // credits and headroom: some leads would wait for good.
    bool account_cap_short = false;
    bool within_budget() const { return credits_max + headroom <= budget && !account_cap_short; }
    std::int64_t account_cap_credits = -1;  // senders x budget_per_account_credits; -1: no such cap
    std::int64_t busiest_sender_credits = 0;  // what the busiest sender may need (with such a cap)
    std::vector<action_forecast> actions;
    std::string bottleneck;          // the slowest action ("" when nothing is limited)
    double working_days = 0;         // the bottleneck's working days
    double working_days_new_accounts = 0;  // the slowest action's for senders starting their ramp-up
    std::string bottleneck_new_accounts;   // that action (the ramp-up slows some actions more)
    double calendar_days_new_accounts = 0;
    std::chrono::seconds longest_wait{0};  // waits and delays on the longest path
    double calendar_days = 0;        // working days over the schedule's week, plus the waits
};

estimate_result estimate(const campaign& c, const estimate_input& in);

// The local date (YYYY-MM-DD, in the schedule's time zone) around which a campaign started at
// `from` ends: its first working day is the one of the schedule's next working start from `from`
// (so a day whose hours are over does not count); `working_days` working days, each counted
// whole; then the waits, in whole days to the nearest, and on to the next working day, so the
// date is always one the schedule works.
// `days_from`, when given, is set to the calendar days from the local date of `from` to it.
std::string finish_date(const schedule& s, time_point from, double working_days, std::chrono::seconds waits,
                        int* days_from = nullptr);

}  // namespace orch::campaigns
