// orch::engine call_gate: the one place where every API call of a step meets the limits, a port
// of the cycle's plan (engine/cycle_plan.hpp). plan_cycle asks before_many() once per cycle,
// after the planner proposed every due call and before the ledger and the states; a deferral
// parks the lead (ev_deferred) until the given time, attempts unchanged. At send time, hold()
// checks every request of a call against the cooldowns and unavailable accounts seen since
// (engine/call_path.hpp), and answered() hears each answer at once; after() is told every
// outcome at its settle (quota given back for a failure without effect, cooldowns recorded).
//
// engine/limits_gate (the Redis rate-limit buckets) is the worker's implementation; `open_gate`
// lets every call through (only the API's own RATE_LIMITED answers hold it, through the
// executor's backoff); tests/sim has an in-memory one.
#pragma once

#include "campaigns/campaigns.hpp"
#include "engine/executor.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace orch::engine {

struct gate_decision {
    bool allowed = true;
    campaigns::time_point until{};  // when !allowed: when to look again
    std::string reason;             // when !allowed: shown in the lead's timeline
    campaigns::wait_code code = campaigns::wait_code::none;  // when !allowed: what `reason` says
    // When allowed: the gate's name for what it took, handed back in call_target::gate_take to
    // after() and released(); 0 when the gate keeps nothing per call.
    std::uint64_t take = 0;
};

// One call of a batch to ask about (the pointers outlive the before_many call).
struct gate_request {
    call_target target;
    const campaigns::campaign* campaign = nullptr;
    const campaigns::api_call* call = nullptr;
};

class call_gate {
public:
    virtual ~call_gate() = default;
    // Called on a lane thread; implementations are thread-safe.
    virtual gate_decision before(const call_target& target, const campaigns::campaign& campaign,
                                 const campaigns::api_call& call, campaigns::time_point now) = 0;
    // before() for every call of a batch, in order (a call's decision sees the takes of the
    // calls before it); one decision per request. Implementations may answer the whole batch in
    // one round trip; this default asks before() for each.
    virtual std::vector<gate_decision> before_many(std::span<const gate_request> requests,
                                                   campaigns::time_point now) {
        std::vector<gate_decision> out;
        out.reserve(requests.size());
        for (const auto& r : requests) {
            out.push_back(before(r.target, *r.campaign, *r.call, now));
        }
        return out;
    }
    // The end of a call before() allowed (`target.gate_take` names its take): gives back the
    // take of a call that surely had no effect, once (a take given back or unknown is not given
    // back again). An uncertain write's take is kept until the lead's check (a reconcile call)
    // ends here too: found without effect, it is given back then. Returns the earliest time the lead may try again when the outcome put a scope
    // in a cooldown (RATE_LIMITED), else nullopt.
    virtual std::optional<campaigns::time_point> after(const call_target& target, const campaigns::campaign& campaign,
                                                      const campaigns::api_call& call,
                                                      const call_outcome& outcome) = 0;
    // A call before() allowed will not be made after all (the ledger refused it, or the cycle
    // failed): give back what before() took (`target.gate_take`), once.
    virtual void released(const call_target& target, const campaigns::campaign& campaign,
                          const campaigns::api_call& call) = 0;
    // At send time, just before a call leaves (before() ran when its batch was claimed): when a
    // cooldown or an unavailable account seen since then holds it, the time to look again, and
    // the call is not sent. Must not block on I/O in the common case. Default: never held.
    virtual std::optional<campaigns::time_point> hold(const call_target& /*target*/,
                                                      const campaigns::api_call& /*call*/,
                                                      campaigns::time_point /*now*/) {
        return std::nullopt;
    }
    // Why hold() holds the call now, for the lead's reason after "not sent: " ("held while
    // account X is unavailable", "held by the invite RATE_LIMITED cooldown of account X"); asked
    // only for a held call. Default: names no scope.
    virtual std::string hold_reason(const call_target& /*target*/, const campaigns::api_call& /*call*/,
                                    campaigns::time_point /*now*/) {
        return "held by a cooldown or an unavailable account";
    }
    // Right after a call's answer, before any further call leaves this process: a RATE_LIMITED
    // answer closes its scope (for this process at once, for the others through the shared
    // store), an unavailable account holds its queued calls. Default: nothing (after() will do).
    virtual void answered(const call_target& /*target*/, const campaigns::campaign& /*campaign*/,
                          const campaigns::api_call& /*call*/, const call_outcome& /*outcome*/) {}
    // A call before() held back waits for something else after all (the cycle's plan found its
    // campaign's cap used up): what before() set aside for its next try (a turn for the key's
    // rate) may go to another call. Default: nothing.
    virtual void waits_elsewhere(const call_target& /*target*/, campaigns::time_point /*now*/) {}
    // Another process (a worker's settle, `serve`, `accounts sync`) recorded that an account
    // became unavailable (`available` false: its queued calls are held from now on) or available
    // again (the hold ends) under the login `login` (call_target::account_login; 0 when unknown).
    // Default: nothing.
    virtual void account_changed(const std::string& /*account_id*/, bool /*available*/,
                                 campaigns::time_point /*now*/, std::int64_t /*login*/ = 0) {}
};

class open_gate final : public call_gate {
public:
    gate_decision before(const call_target&, const campaigns::campaign&, const campaigns::api_call&,
                         campaigns::time_point) override {
        return {};
    }
    std::optional<campaigns::time_point> after(const call_target&, const campaigns::campaign&,
                                               const campaigns::api_call&, const call_outcome&) override {
        return std::nullopt;
    }
    void released(const call_target&, const campaigns::campaign&, const campaigns::api_call&) override {}
};

}  // namespace orch::engine
