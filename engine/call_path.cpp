#include "engine/call_path.hpp"

#include "api/text.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>

namespace orch::engine {

namespace asio = boost::asio;
namespace cs = campaigns;

namespace {

// The port as one call sees it: every request of the call, not only its first, is checked
// against the gate's send-time mirror as it leaves. A call may make several requests (the reply
// check before a follow-up, withdraw's look-up of the invitation, the check after an invitation's
// refusal); a cooldown or an unavailable account reported by another call while the first was on
// the wire holds the next one: it is not sent, and `held` says until when. A later request is
// also checked, as the first was before it, against the do-not-contact list and the campaign's
// exclusions (`stopped`) and an operator's cancel or pause (`halted`), which may have come while
// the one before it was out.
class gated_api final : public api_port {
public:
    gated_api(api_port& inner, const call_path_ports& ports, const call_job& job)
        : inner_(inner), ports_(ports), job_(job), gate_(*ports.gate), target_(job.target), call_(*job.call),
          send_by_(job.send_by), clock_(*ports.clock) {}
    std::optional<cs::time_point> held;
    const char* stopped = nullptr;  // a later request not sent: the lead stops for this reason
    bool halted = false;            // a later request not sent: its campaign was cancelled or paused
    bool late = false;  // held because the lease would end before an answer
    std::string why;    // else why the gate held it (call_gate::hold_reason)
    std::optional<cs::call_kind> held_request;  // held by this request's scope, not the call's
    bool sent_any = false;                      // a request of the call went to the API

    answer<outreach::invitation_status> check_invitation(std::string_view a, const outreach::profile_url_params& p) override {
        return pass(&api_port::check_invitation, cs::call_kind::check_invitation, a, p);
    }
    answer<outreach::invite_result> invite(std::string_view a, const outreach::invite_params& p) override {
        return pass(&api_port::invite, cs::call_kind::invite, a, p);
    }
    answer<outreach::withdraw_result> withdraw(std::string_view a, const outreach::withdraw_params& p) override {
        return pass(&api_port::withdraw, cs::call_kind::withdraw, a, p);
    }
    answer<outreach::send_message_result> send_message(std::string_view a,
                                                       const outreach::send_message_params& p) override {
        return pass(&api_port::send_message, cs::call_kind::send, a, p);
    }
    answer<outreach::conversation_page> get_conversation(std::string_view a,
                                                         const outreach::get_conversation_params& p) override {
        return pass(&api_port::get_conversation, cs::call_kind::get_conversation, a, p);
    }
    answer<outreach::visit_result> visit(std::string_view a, const outreach::profile_url_params& p) override {
        return pass(&api_port::visit, cs::call_kind::visit, a, p);
    }

private:
    // The request goes to the inner port unless the gate holds the call now.
    template <typename T, typename P>
    answer<T> pass(answer<T> (api_port::*request)(std::string_view, const P&), cs::call_kind kind, std::string_view a,
                   const P& p) {
        if (stop(kind)) {
            return refused<T>();
        }
        sent_any = true;
        return (inner_.*request)(a, p);
    }
    // Held by the call's own scope (a follow-up is not read while its sends cool down) or by the
    // request's (a withdraw's look-up while check_invitation cools down).
    bool stop(cs::call_kind request) {
        if (stopped != nullptr) {
            return true;
        }
        if (!held && sent_any) {
            if (!call_.reconcile && ports_.do_not_contact) {
                stopped = ports_.do_not_contact(target_.profile_url, job_.company, job_.campaign_id);
                if (stopped != nullptr) {
                    return true;
                }
            }
            if (ports_.campaign_halted && ports_.campaign_halted(job_.campaign_id)) {
                held = clock_.now();
                halted = true;
            }
        }
        if (!held) {
            const auto now = clock_.now();
            if (now >= send_by_) {
                held = now;
                late = true;
            } else {
                held = gate_.hold(target_, call_, now);
                if (held) {
                    why = gate_.hold_reason(target_, call_, now);
                } else if (request != call_.kind || call_.reconcile) {
                    cs::api_call r;
                    r.kind = request;
                    held = gate_.hold(target_, r, now);
                    if (held) {
                        why = gate_.hold_reason(target_, r, now);
                        held_request = request;
                    }
                }
            }
        }
        return held.has_value();
    }
    // Not sent: an error without effect; send_checked replaces the call's outcome with the hold.
    template <typename T>
    static answer<T> refused() {
        co_return outreach::result<T>(outreach::make_transport_error(
            outreach::error_kind::cancelled, outreach::failure_step::pool_wait, "held at send time", false, false));
    }
    api_port& inner_;
    const call_path_ports& ports_;
    const call_job& job_;
    call_gate& gate_;
    const call_target& target_;
    const cs::api_call& call_;
    const cs::time_point send_by_;
    const clock_port& clock_;
};

// The outcome of a call that was not sent: no attempt spent, nothing charged.
call_outcome unsent(const cs::api_call& call, cs::result_kind kind, cs::time_point retry_at, std::string reason) {
    call_outcome o;
    o.event.call = call.kind;
    o.event.reconcile = call.reconcile;
    o.event.kind = kind;
    o.event.retry_at = retry_at;
    o.event.reason = std::move(reason);
    o.attempt_outcome = attempt_outcome::transient;
    o.error = o.event.reason;
    o.nothing_sent = true;
    return o;
}

call_outcome held_outcome(const cs::api_call& call, cs::time_point until, const std::string& why) {
    auto o = unsent(call, cs::result_kind::throttled, until, "not sent: " + why);
    o.held = true;
    return o;
}

// Not sent because its lease would end before an answer: the lead is due again at once (its
// claim, by this worker or another, goes on from what the calls before it found).
call_outcome late_outcome(const cs::api_call& call, cs::time_point now) {
    auto o = unsent(call, cs::result_kind::throttled, now, std::string(lease_too_short_reason));
    o.held = true;
    return o;
}

// The checks before the first request: true, with `out` set, when the call is not sent.
bool not_sent(const call_path_ports& ports, const call_job& job, call_outcome& out) {
    const cs::api_call& call = *job.call;
    const auto now = ports.clock->now();
    // Any call but the check of an uncertain one (which says whether the person was reached): a
    // read of a person who may not be contacted is billed for nothing.
    if (const char* stop = !call.reconcile && ports.do_not_contact
                               ? ports.do_not_contact(job.target.profile_url, job.company, job.campaign_id)
                               : nullptr) {
        // "not sent: do-not-contact", "not sent: excluded by the campaign"
        std::string_view why = stop;
        if (constexpr std::string_view prefix = "stopped: "; why.starts_with(prefix)) {
            why.remove_prefix(prefix.size());
        }
        out = unsent(call, cs::result_kind::transient, now, "not sent: " + std::string(why));
        out.attempt_outcome = attempt_outcome::permanent;  // for good: the lead stops here
        out.stop_reason = stop;
        return true;
    }
    if (ports.campaign_halted && ports.campaign_halted(job.campaign_id)) {
        // Cancelled or paused by an operator after the claim: nothing is sent; a paused lead is
        // due again at once, and the claim leaves it until the resume.
        out = unsent(call, cs::result_kind::throttled, now, std::string(campaign_halted_reason));
        out.held = true;
        return true;
    }
    if (now >= job.send_by) {
        out = late_outcome(call, now);
        return true;
    }
    if (auto until = ports.gate->hold(job.target, call, now)) {
        out = held_outcome(call, *until, ports.gate->hold_reason(job.target, call, now));
        return true;
    }
    return false;
}

// After the call: a later request of it that was held makes the whole call held (what the
// earlier ones read is charged, nothing took effect, and the lead waits for the hold like any
// held call); then the gate hears the answer.
void after_call(const call_path_ports& ports, const call_job& job, const std::optional<cs::time_point>& held,
                bool late, const std::string& why, std::optional<cs::call_kind> held_request, bool sent_any,
                const char* stopped, bool halted, random_port& rng, call_outcome& out) {
    if (stopped != nullptr) {
        // A later request stopped as not_sent() stops a first one; what the earlier requests
        // read is charged.
        const std::int64_t credits = out.credits;
        std::string_view reason = stopped;
        if (constexpr std::string_view prefix = "stopped: "; reason.starts_with(prefix)) {
            reason.remove_prefix(prefix.size());
        }
        out = unsent(*job.call, cs::result_kind::transient, ports.clock->now(), "not sent: " + std::string(reason));
        out.attempt_outcome = attempt_outcome::permanent;
        out.stop_reason = stopped;
        out.credits = credits;
        out.nothing_sent = false;
    } else if (held && halted) {
        const std::int64_t credits = out.credits;
        out = unsent(*job.call, cs::result_kind::throttled, *held, std::string(campaign_halted_reason));
        out.held = true;
        out.credits = credits;
        out.nothing_sent = false;
    } else if (held && late && sent_any) {
        // A request of the call went (and was billed), and its next would leave too late for the
        // lease: a transient failure, which spends an attempt and waits a backoff, so that a
        // lease too short for the API's latency fails the lead after max_attempts instead of
        // reading again, billed, at every claim.
        const std::int64_t credits = out.credits;
        out = unsent(*job.call, cs::result_kind::transient, *held + backoff_delay(ports.backoff, job.attempt, rng),
                     std::string(answered_too_late_reason));
        out.credits = credits;
        out.nothing_sent = false;
        // Said at most once a minute per process, with how many calls it happened to since.
        static std::atomic<std::int64_t> last_said{0};
        static std::atomic<std::int64_t> unsaid{0};
        unsaid.fetch_add(1);
        const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
        auto said = last_said.load();
        if (now_s - said >= 60 && last_said.compare_exchange_strong(said, now_s)) {
            const std::int64_t calls = std::max<std::int64_t>(unsaid.exchange(0), 1);
            spdlog::warn("worker: campaign '{}' enrollment={} {}: the call's first request was answered too late for "
                         "its next to go within the lease; counted as a failed attempt ({} such call{} in this "
                         "process since its last such warning, or its start): raise lease_seconds to twice "
                         "api_timeout_ms plus 2 s or more",
                         text::escaped_clipped(job.campaign->name, 200), job.target.enrollment_id,
                         cs::to_string(job.call->kind), calls, calls > 1 ? "s" : "");
        }
    } else if (held) {
        const std::int64_t credits = out.credits;
        out = late ? late_outcome(*job.call, *held) : held_outcome(*job.call, *held, why);
        if (sent_any && !late) {
            // A request of the call went out (and was answered): only the one after it was held.
            // "not sent" alone read as if nothing had reached the API (a refused invite whose
            // check a cooldown held).
            out.event.reason = "its first request went out; the next" +
                               (held_request ? " (" + std::string(cs::to_string(*held_request)) + ")" : std::string()) +
                               " was not sent: " + why;
            out.error = out.event.reason;
        }
        out.credits = credits;
        out.held_request = held_request;
        out.nothing_sent = !sent_any;
    }
    ports.gate->answered(job.target, *job.campaign, *job.call, out);
}

}  // namespace

// The coroutine keeps only what lives across its one suspension (the checked port):
// the outcomes are built by the plain functions above into the caller's `out`, so a call in
// flight holds no copies of them.
asio::awaitable<void> send_checked(const call_path_ports& ports, const call_job& job, random_port& rng,
                                   call_outcome& out) {
    if (not_sent(ports, job, out)) {
        co_return;
    }
    gated_api api(*ports.api, ports, job);
    out = co_await execute(api, job.target, *job.call, ports.backoff, job.attempt, *ports.clock, rng);
    after_call(ports, job, api.held, api.late, api.why, api.held_request, api.sent_any, api.stopped, api.halted, rng,
               out);
    // Put on the do-not-contact list, or excluded by a new version of its campaign, while the
    // call was out (the list's add and the apply leave a lead in a call to its worker): the lead
    // stops once the outcome is recorded, before any other call.
    if (const char* stop = ports.do_not_contact && out.stop_reason.empty()
                               ? ports.do_not_contact(job.target.profile_url, job.company, job.campaign_id)
                               : nullptr) {
        out.stop_after_reason = stop;
    }
}

call_window::call_window(asio::any_io_executor ex, std::size_t limit, std::shared_ptr<call_slots> slots)
    : ex_(std::move(ex)), limit_(limit), slots_(std::move(slots)) {
    if (slots_) {
        slots_->windows.push_back(this);
    }
}

void call_window::add(start_fn job) {
    waiting_.push_back(std::move(job));
    pump();
}

void call_window::pump() {
    while (running_ < limit_ && !waiting_.empty() && (!slots_ || slots_->running < slots_->limit)) {
        start_fn job = std::move(waiting_.front());
        waiting_.pop_front();
        ++running_;
        if (slots_) {
            ++slots_->running;
        }
        asio::co_spawn(ex_, run(this, std::move(job)), asio::detached);
    }
}

asio::awaitable<void> call_window::run(call_window* self, start_fn job) {
    try {
        co_await job();
    } catch (...) {
        // A job reports its own failures; the window only frees the slot.
    }
    --self->running_;
    if (const auto& slots = self->slots_) {
        --slots->running;
        // The freed connection goes to the windows in turn, this one last: no lane's queue
        // starves behind another's.
        const auto& w = slots->windows;
        const std::size_t n = w.size();
        const std::size_t at = static_cast<std::size_t>(std::find(w.begin(), w.end(), self) - w.begin());
        for (std::size_t i = 1; i <= n && slots->running < slots->limit; ++i) {
            w[(at + i) % n]->pump();
        }
    } else {
        self->pump();
    }
}

}  // namespace orch::engine
