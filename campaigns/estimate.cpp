#include "campaigns/estimate.hpp"

#include "campaigns/detail/assert.hpp"

#include <algorithm>
#include <functional>

namespace orch::campaigns {

namespace {

// The calls one step makes on a given branch, as (quota action name, call kind) pairs.
std::vector<call_kind> calls_of(const step& s, bool timeout_branch) {
    switch (s.kind) {
    case step_kind::check_invitation:
        return {call_kind::check_invitation};
    case step_kind::invite:
        return {call_kind::invite};
    case step_kind::send:
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
        return {{s.next, false}, {s.on_timeout, true}};
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
};

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
            for (call_kind k : calls_of(*s, timeout_branch)) {
                here += cost(k);
                ++calls[k];
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
                first = false;
                continue;
            }
            out.min_credits = std::min(out.min_credits, here + rest.min_credits);
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

    int working_days_per_week = static_cast<int>(std::count(c.schedule.days.begin(), c.schedule.days.end(), true));
    if (working_days_per_week == 0) {
        working_days_per_week = 7;  // the loader refuses a schedule without days; stay defined
    }
    const std::int64_t senders = std::max<std::int64_t>(1, in.senders);
    for (const auto& [kind, per_lead] : p.max_calls) {
        action_forecast f;
        f.action = to_string(kind);
        f.calls_max = per_lead * in.leads;
        // What all senders may do per working day: the day quota, and the week quota spread over
        // the working days, whichever is smaller.
        double per_day = -1;
        if (auto d = in.per_day.find(f.action); d != in.per_day.end() && d->second >= 0) {
            per_day = static_cast<double>(d->second);
        }
        if (auto w = in.per_week.find(f.action); w != in.per_week.end() && w->second >= 0) {
            double spread = static_cast<double>(w->second) / working_days_per_week;
            per_day = per_day < 0 ? spread : std::min(per_day, spread);
        }
        if (per_day >= 0) {
            f.per_working_day = static_cast<std::int64_t>(per_day * static_cast<double>(senders));
            f.working_days = per_day == 0 ? 1e9 : static_cast<double>(f.calls_max) / (per_day * static_cast<double>(senders));
        }
        f.working_days_new_accounts = f.working_days;
        if (auto rp = in.ramp.find(f.action); per_day > 0 && rp != in.ramp.end() && rp->second.first > 0) {
            // Day by day: working day i allows min(first + increase x i, the quota above).
            const double need = static_cast<double>(f.calls_max) / static_cast<double>(senders);
            double done = 0;
            double days = 0;
            for (std::int64_t i = 0; done < need && i < 100'000; ++i) {
                const double today = std::min(per_day, static_cast<double>(rp->second.first + rp->second.second * i));
                if (done + today >= need) {
                    days += (need - done) / today;
                    done = need;
                } else {
                    done += today;
                    days += 1;
                }
            }
            f.working_days_new_accounts = days;
        }
        if (f.working_days > r.working_days) {
            r.working_days = f.working_days;
            r.bottleneck = f.action;
        }
        r.working_days_new_accounts = std::max(r.working_days_new_accounts, f.working_days_new_accounts);
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
        r.working_days_new_accounts = std::max(r.working_days_new_accounts, f.working_days_new_accounts);
        r.actions.push_back(std::move(f));
    }
    if (c.budget_per_account_credits) {
        r.account_cap_credits = *c.budget_per_account_credits * senders;
    }
    r.calendar_days = r.working_days * 7.0 / working_days_per_week +
                      static_cast<double>(r.longest_wait.count()) / 86'400.0;
    r.calendar_days_new_accounts = r.working_days_new_accounts * 7.0 / working_days_per_week +
                                   static_cast<double>(r.longest_wait.count()) / 86'400.0;
    return r;
}

}  // namespace orch::campaigns
