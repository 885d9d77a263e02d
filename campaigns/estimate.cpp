#include "campaigns/estimate.hpp"

#include "campaigns/detail/assert.hpp"

#include <algorithm>
#include <array>
#include <functional>

namespace orch::campaigns {

namespace {

// The calls one step makes on a given branch, as (quota action name, call kind) pairs.
std::vector<call_kind> calls_of(const campaign& c, const step& s, bool timeout_branch) {
    switch (s.kind) {
    case step_kind::check_invitation:
        return {call_kind::check_invitation};
    case step_kind::invite:
        return {call_kind::invite};
    case step_kind::send:
        // A follow-up reads the conversation first (machine's confirm_no_reply).
        if (c.stop_on_reply && follows_send(c, s.id)) {
            return {call_kind::get_conversation, call_kind::send};
        }
        return {call_kind::send};
    case step_kind::visit:
        return {call_kind::visit};
    case step_kind::withdraw:
        return {call_kind::check_invitation, call_kind::withdraw};
    case step_kind::wait_accepted:
        return timeout_branch ? std::vector<call_kind>{call_kind::check_invitation} : std::vector<call_kind>{};
    case step_kind::delay:
    case step_kind::end:
        break;
    }
    return {};
}

// The successors of a step, each with whether it is a wait's timeout branch. "" = end.
std::vector<std::pair<std::string, bool>> successors(const step& s) {
    switch (s.kind) {
    case step_kind::check_invitation:
        return {{s.on_accepted, false}, {s.on_pending, false}, {s.on_no_invitation, false}};
    case step_kind::wait_accepted:
        // On to `next` by the acceptance event, or by the check made when the timeout passes
        // finding the invitation accepted after all; `on_timeout` when it does not.
        return {{s.next, false}, {s.next, true}, {s.on_timeout, true}};
    case step_kind::end:
        return {};
    default:
        return {{s.next, false}};
    }
}

struct path_summary {
    std::int64_t min_credits = 0;
    std::int64_t max_credits = 0;
    std::map<call_kind, std::int64_t> max_calls;  // per kind, the most on any path from here
    std::chrono::seconds max_wait{0};
    // Over the paths from here, the most budget one lead's path needs at its peak: what it spent
    // before a call, plus that call's reservation (its credits and its reserved_beyond); at least
    // max_credits.
    std::int64_t max_need = 0;
};

// Working days for `need` calls of one sender, day by day from the schedule's first working day
// of a week, as the limits gate lets them through: each working day up to its day quota
// (`per_day`, -1 for none; for a sender starting its ramp-up, `ramp` too: on calendar day c,
// min(the account's quota, first + increase x c)) and to what the rolling week quota leaves
// (`per_week` less the 6 days before), the sender's week starting empty; the last day counts the
// part it needs. An established sender with 80 a day and 200 a week works 80, 80, 40 and then
// waits for the week to roll. Once a week repeats the one before (the ramp-up done), whole weeks
// are counted at once. 1e9 when the days stop allowing any call.
double working_days_for(double need, std::int64_t per_day, std::int64_t per_week,
                        const estimate_input::ramp_input* ramp, const std::array<bool, 7>& days) {
    if (need <= 0) {
        return 0;
    }
    int first = 0;
    while (first < 7 && !days[static_cast<std::size_t>(first)]) {
        ++first;
    }
    const double working_per_week = static_cast<double>(std::count(days.begin(), days.end(), true));
    if (working_per_week == 0) {
        return 1e9;
    }
    const bool ramps = ramp != nullptr && ramp->account_per_day >= 0 && ramp->first_day > 0;
    constexpr double none = 1e18;   // no quota
    std::array<double, 7> used{};   // per calendar day of the rolling week, by day number mod 7
    std::array<double, 7> week_before{};
    double done = 0;
    double working = 0;
    // Bounded: a week repeats the one before soon after the ramp-up; the bound only keeps a
    // pathological case from running long (about 27,000 years).
    constexpr std::int64_t max_days = 10'000'000;
    for (std::int64_t c = 0; c < max_days; ++c) {
        const auto slot = static_cast<std::size_t>(c % 7);
        used[slot] = 0;   // the day a week ago leaves the window
        const double climbed = ramps ? static_cast<double>(ramp->first_day) +
                                           static_cast<double>(ramp->increase) * static_cast<double>(c)
                                     : none;
        const bool ramped_up = !ramps || ramp->increase <= 0 || climbed >= static_cast<double>(ramp->account_per_day);
        if (days[static_cast<std::size_t>((first + c) % 7)]) {
            double today = per_day >= 0 ? static_cast<double>(per_day) : none;
            if (ramps) {
                today = std::min(today, std::min(static_cast<double>(ramp->account_per_day), climbed));
            }
            if (per_week >= 0) {
                double window = 0;
                for (double u : used) {
                    window += u;
                }
                today = std::min(today, std::max(0.0, static_cast<double>(per_week) - window));
            }
            if (done + today >= need) {
                return working + (need - done) / today;
            }
            done += today;
            used[slot] = today;
            working += 1;
        }
        if (!ramped_up || slot != 6) {
            if (!ramped_up) {
                week_before.fill(-1);   // no week repeats while the quota still climbs
            }
            continue;
        }
        // The end of a week: once it repeats the one before, every week after does too.
        double week_total = 0;
        for (double u : used) {
            week_total += u;
        }
        if (used == week_before) {
            if (week_total <= 0) {
                return 1e9;
            }
            const auto weeks = static_cast<std::int64_t>((need - done) / week_total) - 1;
            if (weeks > 0) {
                done += static_cast<double>(weeks) * week_total;
                working += static_cast<double>(weeks) * working_per_week;
                c += 7 * weeks;
            }
        }
        week_before = used;
    }
    return 1e9;
}

}  // namespace

estimate_result estimate(const campaign& c, const estimate_input& in) {
    auto cost = [&](call_kind k) {
        auto it = in.credits.find(k);
        return it == in.credits.end() ? std::int64_t{0} : it->second;
    };
    std::map<std::string, path_summary> memo;
    // Depth-first over the acyclic step graph (the loader refuses cycles), memoised per step.
    std::function<path_summary(const std::string&)> walk = [&](const std::string& id) -> path_summary {
        if (id.empty()) {
            return {};
        }
        if (auto it = memo.find(id); it != memo.end()) {
            return it->second;
        }
        const step* s = find_step(c, id);
        ORCH_CAMPAIGNS_ASSERT(s != nullptr, "estimate: a branch to a missing step (the loader checks this)");
        path_summary out;
        bool first = true;
        auto succ = successors(*s);
        if (succ.empty()) {
            succ.emplace_back("", false);
        }
        for (const auto& [next, timeout_branch] : succ) {
            path_summary rest = walk(next);
            std::int64_t here = 0;
            std::map<call_kind, std::int64_t> calls = rest.max_calls;
            const auto step_calls = calls_of(c, *s, timeout_branch);
            for (call_kind k : step_calls) {
                here += cost(k);
                ++calls[k];
            }
            // The peak of this branch: a call of this step reserving (what the step spent before
            // it, its own credits, its extra), or the rest's peak after the step's credits.
            std::int64_t need = here + rest.max_need;
            std::int64_t before = 0;
            for (call_kind k : step_calls) {
                before += cost(k);
                if (auto extra = in.reserved_beyond.find(k); extra != in.reserved_beyond.end()) {
                    need = std::max(need, before + extra->second);
                }
            }
            auto wait = rest.max_wait;
            if (s->kind == step_kind::wait_accepted && timeout_branch) {
                wait += s->timeout;
            } else if (s->kind == step_kind::delay) {
                wait += s->duration;
            }
            if (first) {
                out.min_credits = here + rest.min_credits;
                out.max_credits = here + rest.max_credits;
                out.max_calls = calls;
                out.max_wait = wait;
                out.max_need = need;
                first = false;
                continue;
            }
            out.min_credits = std::min(out.min_credits, here + rest.min_credits);
            out.max_need = std::max(out.max_need, need);
            out.max_credits = std::max(out.max_credits, here + rest.max_credits);
            for (const auto& [k, n] : calls) {
                out.max_calls[k] = std::max(out.max_calls[k], n);
            }
            out.max_wait = std::max(out.max_wait, wait);
        }
        memo[id] = out;
        return out;
    };

    estimate_result r;
    r.budget = c.budget_credits;
    if (c.steps.empty()) {
        r.credits_min = r.credits_max = in.audience_credits;
        return r;
    }
    path_summary p = walk(c.steps.front().id);
    r.per_lead_min = p.min_credits;
    r.per_lead_max = p.max_credits;
    r.credits_min = in.audience_credits + in.leads * p.min_credits;
    r.credits_max = in.audience_credits + in.leads * p.max_credits;
    r.longest_wait = p.max_wait;
    // Every lead's path spends at most max_credits; the last lead to reserve, with the others'
    // calls settled, needs its peak beyond it (a call waits while calls in flight may give
    // credits back, so the leads before it do not hold theirs at the same time).
    r.headroom = in.leads > 0 ? std::max<std::int64_t>(0, p.max_need - p.max_credits) : 0;

    int working_days_per_week = static_cast<int>(std::count(c.schedule.days.begin(), c.schedule.days.end(), true));
    if (working_days_per_week == 0) {
        working_days_per_week = 7;  // the loader refuses a schedule without days; stay defined
    }
    const std::int64_t senders = std::max<std::int64_t>(1, in.senders);
    // Each sender's quotas: its own when given, else the same for all.
    const std::size_t quota_sets = in.per_sender.empty() ? static_cast<std::size_t>(senders) : in.per_sender.size();
    auto number = [](const std::map<std::string, std::int64_t>& m, const std::string& action) -> std::int64_t {
        auto it = m.find(action);
        return it == m.end() ? -1 : it->second;
    };
    for (const auto& [kind, per_lead] : p.max_calls) {
        action_forecast f;
        f.action = to_string(kind);
        f.calls_max = per_lead * in.leads;
        const double calls_each = static_cast<double>(f.calls_max) / static_cast<double>(quota_sets);
        // What each sender may do per working day in a steady week: the day quota, and the week
        // quota spread over the working days, whichever is smaller, all senders together; and
        // the slowest sender's working days for its share of the calls, day by day.
        double together = 0;
        bool limited = false;
        std::int64_t unlimited = 0;  // senders without a quota for the action
        double slowest = 0;
        double slowest_new = 0;
        for (std::size_t i = 0; i < quota_sets; ++i) {
            const std::int64_t day = number(in.per_sender.empty() ? in.per_day : in.per_sender[i].per_day, f.action);
            const std::int64_t week = number(in.per_sender.empty() ? in.per_week : in.per_sender[i].per_week, f.action);
            double per_day = day >= 0 ? static_cast<double>(day) : -1;
            if (week >= 0) {
                double spread = static_cast<double>(week) / working_days_per_week;
                per_day = per_day < 0 ? spread : std::min(per_day, spread);
            }
            if (per_day < 0) {
                ++unlimited;
                continue;  // its share takes no days
            }
            limited = true;
            together += per_day;
            const double days = working_days_for(calls_each, day, week, nullptr, c.schedule.days);
            slowest = std::max(slowest, days);
            double days_new = days;
            if (auto rp = in.ramp.find(f.action); per_day > 0 && rp != in.ramp.end()) {
                estimate_input::ramp_input own = rp->second;
                if (!in.per_sender.empty()) {
                    if (auto a = number(in.per_sender[i].account_per_day, f.action); a >= 0) {
                        own.account_per_day = a;
                    }
                }
                days_new = working_days_for(calls_each, day, week, &own, c.schedule.days);
            }
            slowest_new = std::max(slowest_new, days_new);
        }
        if (limited) {
            f.per_working_day = static_cast<std::int64_t>(together);
            f.working_days = slowest;
        }
        f.working_days_new_accounts = limited ? slowest_new : f.working_days;
        f.unlimited_senders = limited ? unlimited : 0;
        if (f.working_days > r.working_days) {
            r.working_days = f.working_days;
            r.bottleneck = f.action;
        }
        if (f.working_days_new_accounts > r.working_days_new_accounts) {
            r.working_days_new_accounts = f.working_days_new_accounts;
            r.bottleneck_new_accounts = f.action;
        }
        r.actions.push_back(std::move(f));
    }
    if (c.budget_per_day_credits) {
        action_forecast f;
        f.action = "credits (day cap)";
        f.calls_max = in.leads * p.max_credits;
        f.per_working_day = *c.budget_per_day_credits;
        f.working_days = static_cast<double>(f.calls_max) / static_cast<double>(*c.budget_per_day_credits);
        f.working_days_new_accounts = f.working_days;
        if (f.working_days > r.working_days) {
            r.working_days = f.working_days;
            r.bottleneck = f.action;
        }
        if (f.working_days_new_accounts > r.working_days_new_accounts) {
            r.working_days_new_accounts = f.working_days_new_accounts;
            r.bottleneck_new_accounts = f.action;
        }
        r.actions.push_back(std::move(f));
    }
    if (c.budget_per_account_credits) {
        r.account_cap_credits = *c.budget_per_account_credits * senders;
        // The busiest sender: its even share of the leads on the costliest path, its last lead's
        // peak beyond that, and the audience search, which draws from the cap of the sender that
        // runs it.
        r.busiest_sender_credits = (in.leads + senders - 1) / senders * p.max_credits + r.headroom + in.audience_credits;
        r.account_cap_short = *c.budget_per_account_credits < r.busiest_sender_credits;
    }
    r.calendar_days = r.working_days * 7.0 / working_days_per_week +
                      static_cast<double>(r.longest_wait.count()) / 86'400.0;
    r.calendar_days_new_accounts = r.working_days_new_accounts * 7.0 / working_days_per_week +
                                   static_cast<double>(r.longest_wait.count()) / 86'400.0;
    return r;
}

}  // namespace orch::campaigns
