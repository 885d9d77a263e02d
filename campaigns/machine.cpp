// The step state machine of one enrollment (machine.hpp). decide() dispatches on the event; each
// handler checks that the event is valid in the state, then computes the next state. Moving into
// a step goes through enter(), the one place that knows how each kind of step starts.
#include "campaigns/detail/assert.hpp"
#include "campaigns/detail/time_rules.hpp"
#include "campaigns/loader.hpp"
#include "campaigns/machine.hpp"

#include <date/date.h>

#include <set>

namespace orch::campaigns {

namespace {

decision invalid(const enrollment_state& s, std::string why) {
    return decision{s, std::nullopt, false, std::move(why)};
}

decision moved(enrollment_state next, std::string why = "", std::optional<api_call> call = std::nullopt) {
    return decision{std::move(next), std::move(call), true, std::move(why)};
}

std::string format_time(time_point t) {
    return date::format("%FT%TZ", date::floor<seconds>(t));
}

const step& current_step(const campaign& c, const enrollment_state& s) {
    const step* current = find_step(c, s.step);
    ORCH_CAMPAIGNS_ASSERT(current != nullptr, "the enrollment's step is not a step of its campaign");
    return *current;
}

// The state of a lead that moves into step `id` ("" = the end) at `now`. A delay parks the lead
// ready at now + duration (its due means "elapsed"); a wait parks it waiting until the timeout, or
// passes straight on when the acceptance was already seen; an end step finishes it.
enrollment_state enter(const campaign& c, std::string id, time_point now, bool accepted_seen) {
    enrollment_state s;
    s.accepted_seen = accepted_seen;
    s.next_run_at = now;
    // Bounded: the loader refuses loops, so a chain of satisfied waits visits each step once.
    for (std::size_t hops = 0; hops <= c.steps.size(); ++hops) {
        const step* target = id.empty() ? nullptr : find_step(c, id);
        ORCH_CAMPAIGNS_ASSERT(id.empty() || target != nullptr, "a step target names no step");
        if (target == nullptr || target->kind == step_kind::end) {
            s.st = status::done;
            s.step.clear();
            return s;
        }
        s.step = target->id;
        switch (target->kind) {
        case step_kind::delay:
            s.st = status::ready;
            s.next_run_at = now + target->duration;
            return s;
        case step_kind::wait_accepted:
            if (accepted_seen) {
                id = target->next;
                continue;
            }
            s.st = status::waiting;
            s.next_run_at = now + target->timeout;
            return s;
        default:
            s.st = status::ready;
            return s;
        }
    }
    ORCH_CAMPAIGNS_ASSERT(false, "a loop of wait steps (the loader refuses loops)");
    return s;
}

// The call a step makes (a wait's call is the read-only check before it times out).
std::optional<call_kind> step_call(step_kind k) {
    switch (k) {
    case step_kind::check_invitation:
    case step_kind::wait_accepted:
        return call_kind::check_invitation;
    case step_kind::invite:
        return call_kind::invite;
    case step_kind::send:
        return call_kind::send;
    case step_kind::visit:
        return call_kind::visit;
    case step_kind::withdraw:
        return call_kind::withdraw;
    default:
        return std::nullopt;
    }
}

// The read-only call that tells whether an interrupted side effect happened.
std::optional<call_kind> reconcile_call(step_kind k) {
    switch (k) {
    case step_kind::invite:
    case step_kind::withdraw:
        return call_kind::check_invitation;
    case step_kind::send:
        return call_kind::get_conversation;
    default:
        return std::nullopt;
    }
}

}  // namespace

std::optional<bool> effect_found(call_kind of, const ev_result& r) {
    if (of == call_kind::send) {
        return r.message_found;
    }
    if (!r.invitation_state) {
        return std::nullopt;
    }
    if (of == call_kind::invite) {
        return *r.invitation_state == invitation::pending || *r.invitation_state == invitation::accepted;
    }
    if (of == call_kind::withdraw) {
        // Gone means withdrawn; accepted meanwhile leaves nothing to withdraw either.
        return *r.invitation_state != invitation::pending;
    }
    return std::nullopt;
}

bool follows_send(const campaign& c, const std::string& id) {
    std::vector<const std::string*> frontier;
    std::set<std::string> seen;
    for (const auto& st : c.steps) {
        if (st.kind == step_kind::send) {
            frontier.push_back(&st.id);
        }
    }
    while (!frontier.empty()) {
        const std::string& from = *frontier.back();
        frontier.pop_back();
        const step* st = find_step(c, from);
        if (st == nullptr) {
            continue;
        }
        for (const std::string* to : {&st->next, &st->on_accepted, &st->on_pending, &st->on_no_invitation,
                                      &st->on_timeout}) {
            if (to->empty()) {
                continue;
            }
            if (*to == id) {
                return true;
            }
            if (seen.insert(*to).second) {
                frontier.push_back(to);
            }
        }
    }
    return false;
}

namespace {

api_call make_call(const campaign& c, const step& s, const lead_view& lead, bool reconcile) {
    api_call call;
    call.reconcile = reconcile;
    call.kind = *(reconcile ? reconcile_call(s.kind) : step_call(s.kind));
    if (reconcile) {
        call.reconciles = step_call(s.kind);
    }
    if (s.kind == step_kind::invite && s.note && !reconcile) {
        call.text = render(*s.note, lead.fields);
    }
    if (s.kind == step_kind::send) {
        // Also for get_conversation: the engine looks for this text in the conversation.
        const message_variant& v = choose_variant(s, lead);
        call.text = render(v.text, lead.fields);
        call.variant = v.name;
        call.variant_chosen = s.variants.size() > 1;
        call.confirm_no_reply = !reconcile && c.stop_on_reply && follows_send(c, s.id);
    }
    return call;
}

decision start_call(const campaign& c, const step& s, const lead_view& lead, enrollment_state next,
                    bool reconcile, time_point now) {
    next.st = status::calling;
    next.reconcile = reconcile;
    next.next_run_at = now;
    api_call call = make_call(c, s, lead, reconcile);
    std::string why = std::string(reconcile ? "reconcile with " : "call ") + to_string(call.kind);
    return moved(std::move(next), std::move(why), std::move(call));
}

time_point not_before(time_point t, time_point now) {
    return t < now ? now : t;
}

// ---- ev_due ----

decision due_ready(const campaign& c, const lead_view& lead, const enrollment_state& s, time_point now) {
    const step& current = current_step(c, s);
    switch (current.kind) {
    case step_kind::delay:
        return moved(enter(c, current.next, now, s.accepted_seen), "delay elapsed");
    case step_kind::end:
        return moved(enter(c, "", now, s.accepted_seen), "end");
    case step_kind::wait_accepted:
        // Ready at a wait: its timeout check failed transiently and is retried now.
        if (s.accepted_seen) {
            return moved(enter(c, current.next, now, true), "accepted");
        }
        return start_call(c, current, lead, s, false, now);
    default:
        break;
    }
    if (!in_working_hours(c.schedule, now)) {
        enrollment_state next = s;
        next.next_run_at = next_working_start(c.schedule, now);
        next.reason = "outside working hours";
        next.wait = wait_code::schedule;
        std::string why = "outside working hours until " + format_time(next.next_run_at);
        return moved(std::move(next), std::move(why));
    }
    return start_call(c, current, lead, s, false, now);
}

// Due while calling: the outcome of the call was never recorded (a crash), or a reconciliation
// is due after an uncertain outcome.
decision due_calling(const campaign& c, const lead_view& lead, const enrollment_state& s, time_point now) {
    const step& current = current_step(c, s);
    if (reconcile_call(current.kind)) {
        return start_call(c, current, lead, s, true, now);
    }
    if (current.kind == step_kind::visit) {
        return moved(enter(c, current.next, now, s.accepted_seen), "visit not reconciled: counted as done");
    }
    return start_call(c, current, lead, s, false, now);  // read-only: simply ask again
}

decision on_due(const campaign& c, const lead_view& lead, const enrollment_state& s, time_point now) {
    switch (s.st) {
    case status::ready:
        if (now < s.next_run_at) {
            return invalid(s, "not due before " + format_time(s.next_run_at));
        }
        return due_ready(c, lead, s, now);
    case status::calling:
        return due_calling(c, lead, s, now);
    case status::waiting: {
        if (now < s.next_run_at) {
            return invalid(s, "waiting for the acceptance until " + format_time(s.next_run_at));
        }
        const step& current = current_step(c, s);
        if (s.accepted_seen) {
            return moved(enter(c, current.next, now, true), "accepted");
        }
        return start_call(c, current, lead, s, false, now);  // confirm before timing out
    }
    default:
        return invalid(s, std::string("due in terminal status ") + to_string(s.st));
    }
}

// ---- ev_result ----

decision failed(enrollment_state s, std::string reason) {
    s.st = status::failed;
    s.reconcile = false;
    s.reason = std::move(reason);
    s.wait = wait_code::none;
    std::string why = "failed: " + s.reason;
    return moved(std::move(s), std::move(why));
}

// A failed attempt: retry at retry_at (ready for a call, calling for a reconciliation), or fail
// once max_attempts attempts have failed.
// "attempts exhausted (N)": a step's failed attempts reached max_attempts. An uncertain call
// spends one and its reconciliation may spend more (it is bounded too), so N can pass
// max_attempts: the reason then says why.
std::string attempts_exhausted(const campaign& c, const enrollment_state& s) {
    std::string n = std::to_string(s.attempt);
    if (s.attempt > c.max_attempts) {
        n += ", with max_attempts " + std::to_string(c.max_attempts) +
             ": a check of whether an uncertain call took effect counts as an attempt";
    }
    return "attempts exhausted (" + n + ")";
}

decision retry(const campaign& c, enrollment_state s, const ev_result& r, time_point now) {
    // A throttled call was refused by the platform's limits before it did anything: the lead
    // is not at fault, so it does not spend an attempt.
    if (r.kind != result_kind::throttled) {
        s.attempt += 1;
    }
    if (s.attempt >= c.max_attempts) {
        std::string reason = attempts_exhausted(c, s) + ": " + r.reason;
        return failed(std::move(s), std::move(reason));
    }
    s.st = s.reconcile ? status::calling : status::ready;
    s.next_run_at = not_before(r.retry_at, now);
    s.reason = r.reason;
    s.wait = r.kind == result_kind::throttled ? wait_code::throttled : wait_code::none;
    std::string why = "retry at " + format_time(s.next_run_at);
    return moved(std::move(s), std::move(why));
}

decision ok_result(const campaign& c, const step& current, const enrollment_state& s, const ev_result& r,
                   time_point now) {
    bool read_only = current.kind == step_kind::check_invitation || current.kind == step_kind::wait_accepted;
    if (read_only && !r.invitation_state) {
        return invalid(s, "a check_invitation result without the invitation state");
    }
    if (current.kind == step_kind::check_invitation) {
        switch (*r.invitation_state) {
        case invitation::accepted:
            return moved(enter(c, current.on_accepted, now, true), "ACCEPTED");
        case invitation::pending:
            return moved(enter(c, current.on_pending, now, s.accepted_seen), "PENDING");
        case invitation::received:
            return failed(s, invited_by_the_person(r.reason));
        case invitation::none:
            return moved(enter(c, current.on_no_invitation, now, s.accepted_seen), "NO_INVITATION");
        }
    }
    if (current.kind == step_kind::wait_accepted) {
        if (*r.invitation_state == invitation::accepted || s.accepted_seen) {
            return moved(enter(c, current.next, now, true), "accepted (found by the timeout check)");
        }
        return moved(enter(c, current.on_timeout, now, false), "timed out");
    }
    if (current.kind == step_kind::send && r.reply_found) {
        // The follow-up was not sent: the read before it found the lead's reply.
        if (!c.stop_on_reply) {
            return invalid(s, "a reply found before a send of a campaign without stop_on_reply");
        }
        enrollment_state next = s;
        next.st = status::replied;
        next.reconcile = false;
        next.reason = "the lead replied: found before the follow-up, which was not sent";
        next.wait = wait_code::none;
        return moved(std::move(next), "replied before the follow-up");
    }
    // An invite's ok result that says the person invited the account first (RECEIVED) fails the
    // lead: no acceptance of ours can come. The engine's executor reports that refusal as a
    // permanent outcome with this reason already; this keeps the machine's answer the same for any
    // caller that passes the state instead.
    if (current.kind == step_kind::invite && r.invitation_state && *r.invitation_state == invitation::received) {
        return failed(s, invited_by_the_person(r.reason));
    }
    // An invite refused because the person is connected already comes back ACCEPTED (the
    // executor's check after the refusal): the acceptance is seen, and a wait for it is skipped.
    if (current.kind == step_kind::invite && r.invitation_state && *r.invitation_state == invitation::accepted) {
        return moved(enter(c, current.next, now, true), "connected already");
    }
    return moved(enter(c, current.next, now, s.accepted_seen), "done");
}

std::optional<bool> effect_present(const step& current, const ev_result& r) {
    const auto call = step_call(current.kind);
    return call ? effect_found(*call, r) : std::nullopt;
}

decision reconcile_result(const campaign& c, const step& current, const enrollment_state& s,
                          const ev_result& r, time_point now) {
    if (r.kind == result_kind::transient || r.kind == result_kind::uncertain || r.kind == result_kind::throttled) {
        return retry(c, s, r, now);  // reconciliation is read-only: ask again later
    }
    if (r.kind == result_kind::permanent) {
        return failed(s, r.reason);
    }
    if (current.kind == step_kind::invite && r.invitation_state && *r.invitation_state == invitation::received) {
        return failed(s, invited_by_the_person(r.reason));
    }
    std::optional<bool> present = effect_present(current, r);
    if (!present) {
        return invalid(s, "a check_invitation result without the invitation state");
    }
    bool accepted = s.accepted_seen || (r.invitation_state && *r.invitation_state == invitation::accepted);
    if (*present) {
        return moved(enter(c, current.next, now, accepted), "reconciled: the call took effect");
    }
    if (s.attempt >= c.max_attempts) {
        return failed(s, attempts_exhausted(c, s) + ": the call did not take effect");
    }
    enrollment_state next = s;
    next.st = status::ready;
    next.reconcile = false;
    next.next_run_at = now;
    return moved(std::move(next), "reconciled: the call did not take effect, resend");
}

decision call_result(const campaign& c, const step& current, const enrollment_state& s, const ev_result& r,
                     time_point now) {
    switch (r.kind) {
    case result_kind::ok:
        return ok_result(c, current, s, r, now);
    case result_kind::transient:
    case result_kind::throttled:
        return retry(c, s, r, now);
    case result_kind::permanent:
        return failed(s, r.reason);
    case result_kind::uncertain:
        break;
    }
    if (current.kind == step_kind::visit) {
        return moved(enter(c, current.next, now, s.accepted_seen), "visit not reconciled: counted as done");
    }
    if (!reconcile_call(current.kind)) {
        return retry(c, s, r, now);  // read-only: a lost outcome is simply asked again
    }
    // The call may have taken effect: count the attempt (so a call that always ends uncertain is
    // bounded) and reconcile before anything is resent.
    enrollment_state next = s;
    next.attempt += 1;
    next.reconcile = true;
    next.next_run_at = not_before(r.retry_at, now);
    next.reason = r.reason;
    next.wait = wait_code::none;
    return moved(std::move(next), "uncertain: reconcile");
}

decision on_result(const campaign& c, const enrollment_state& s, const ev_result& r, time_point now) {
    if (is_terminal(s.st)) {
        return invalid(s, std::string("a result in terminal status ") + to_string(s.st));
    }
    if (s.st != status::calling) {
        return invalid(s, std::string("a result in status ") + to_string(s.st) + " (no call in flight)");
    }
    const step& current = current_step(c, s);
    std::optional<call_kind> expected = s.reconcile ? reconcile_call(current.kind) : step_call(current.kind);
    if (!expected || *expected != r.call || r.reconcile != s.reconcile) {
        return invalid(s, std::string("a result of ") + to_string(r.call) +
                              (r.reconcile ? " (reconcile)" : "") + ", but step '" + s.step + "' waits for " +
                              (expected ? to_string(*expected) : "no call") +
                              (s.reconcile ? " (reconcile)" : ""));
    }
    return s.reconcile ? reconcile_result(c, current, s, r, now) : call_result(c, current, s, r, now);
}

// ---- the other events ----

decision on_deferred(const campaign& c, const enrollment_state& s, const ev_deferred& e, time_point now) {
    if (is_terminal(s.st)) {
        return invalid(s, std::string("deferred in terminal status ") + to_string(s.st));
    }
    if (s.st != status::calling && now < s.next_run_at) {
        return invalid(s, "deferred before it was due (" + format_time(s.next_run_at) + ")");
    }
    enrollment_state next = s;
    next.next_run_at = e.until;
    next.reason = e.reason;
    next.wait = e.code;
    if (s.st == status::calling) {
        // The call found after a crash (its outcome never written), or the check of an uncertain
        // one, may not go now: nothing is in flight. The check of a write waits as one to check
        // (`reconcile`), so that it reads as one, not as a call in flight, and a raised cap or
        // quota wakes it like any lead waiting for one; a read asked again (a check step, a wait's
        // timeout check) waits ready at its step, as after a read's transient failure.
        const step& current = current_step(c, s);
        if (reconcile_call(current.kind)) {
            next.reconcile = true;
        } else if (current.kind != step_kind::visit) {  // a visit is never asked again (due_calling)
            next.st = status::ready;
        }
    }
    return moved(std::move(next), "deferred until " + format_time(e.until) + ": " + e.reason);
}

decision on_accepted(const campaign& c, const enrollment_state& s, time_point now) {
    if (is_terminal(s.st)) {
        return invalid(s, std::string("accepted in terminal status ") + to_string(s.st));
    }
    const step& current = current_step(c, s);
    if (current.kind == step_kind::wait_accepted) {
        // Waiting, or between a timeout check and its retry: the acceptance ends the wait.
        return moved(enter(c, current.next, now, true), "accepted");
    }
    enrollment_state next = s;
    next.accepted_seen = true;  // for a wait step still ahead
    return moved(std::move(next), "accepted before its wait step");
}

decision on_replied(const campaign& c, const enrollment_state& s) {
    if (is_terminal(s.st)) {
        return invalid(s, std::string("replied in terminal status ") + to_string(s.st));
    }
    if (!c.stop_on_reply) {
        return moved(s, "reply ignored (stop_on_reply is off)");
    }
    enrollment_state next = s;
    next.st = status::replied;
    next.reconcile = false;
    next.reason = "the lead replied";
    next.wait = wait_code::none;
    return moved(std::move(next), "replied");
}

decision on_cancel(const enrollment_state& s, const ev_cancel& e) {
    if (is_terminal(s.st)) {
        return invalid(s, std::string("cancel in terminal status ") + to_string(s.st));
    }
    enrollment_state next = s;
    next.st = status::cancelled;
    next.reconcile = false;
    next.reason = e.reason;
    next.wait = wait_code::none;
    return moved(std::move(next), "cancelled: " + e.reason);
}

std::uint64_t fnv1a_64(std::string_view a, std::string_view b) {
    std::uint64_t h = 14695981039346656037ULL;
    auto mix = [&h](std::string_view part) {
        for (unsigned char ch : part) {
            h ^= ch;
            h *= 1099511628211ULL;
        }
    };
    mix(a);
    mix(std::string_view("\0", 1));  // so that ("ab", "c") and ("a", "bc") differ
    mix(b);
    return h;
}

// FNV-1a's low bits mix poorly (bit 0 is the parity of the input bytes), and the choice takes the
// hash modulo the variant count: MurmurHash3's fmix64 finalizer spreads every input bit first.
std::uint64_t fmix64(std::uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

}  // namespace

bool is_terminal(status s) {
    return s == status::done || s == status::replied || s == status::failed || s == status::cancelled;
}

const char* to_string(status s) {
    switch (s) {
    case status::ready:
        return "ready";
    case status::calling:
        return "calling";
    case status::waiting:
        return "waiting";
    case status::done:
        return "done";
    case status::replied:
        return "replied";
    case status::failed:
        return "failed";
    case status::cancelled:
        return "cancelled";
    }
    return "?";
}

const char* to_string(call_kind k) {
    switch (k) {
    case call_kind::check_invitation:
        return "check_invitation";
    case call_kind::invite:
        return "invite";
    case call_kind::withdraw:
        return "withdraw";
    case call_kind::send:
        return "send";
    case call_kind::visit:
        return "visit";
    case call_kind::get_conversation:
        return "get_conversation";
    }
    return "?";
}

std::optional<call_kind> call_kind_from_string(std::string_view name) {
    for (call_kind k : {call_kind::check_invitation, call_kind::invite, call_kind::withdraw, call_kind::send,
                        call_kind::visit, call_kind::get_conversation}) {
        if (name == to_string(k)) {
            return k;
        }
    }
    return std::nullopt;
}

const char* to_string(wait_code w) {
    switch (w) {
    case wait_code::none:
        return "none";
    case wait_code::schedule:
        return "schedule";
    case wait_code::key_rate:
        return "key_rate";
    case wait_code::key_cooldown:
        return "key_cooldown";
    case wait_code::account_cooldown:
        return "account_cooldown";
    case wait_code::day_quota:
        return "day_quota";
    case wait_code::week_quota:
        return "week_quota";
    case wait_code::campaign_quota:
        return "campaign_quota";
    case wait_code::pacing:
        return "pacing";
    case wait_code::limits_unavailable:
        return "limits_unavailable";
    case wait_code::limits_error:
        return "limits_error";
    case wait_code::throttled:
        return "throttled";
    case wait_code::campaign_budget:
        return "campaign_budget";
    case wait_code::day_budget:
        return "day_budget";
    case wait_code::account_budget:
        return "account_budget";
    case wait_code::no_budget:
        return "no_budget";
    case wait_code::budget_in_flight:
        return "budget_in_flight";
    }
    return "none";
}

static_assert(all_wait_codes.size() == static_cast<std::size_t>(wait_code::budget_in_flight) + 1,
              "all_wait_codes lists every wait code");

std::optional<wait_code> wait_code_from_string(std::string_view name) {
    for (wait_code w : all_wait_codes) {
        if (name == to_string(w)) {
            return w;
        }
    }
    return std::nullopt;
}

bool is_side_effecting(call_kind k) {
    return k == call_kind::invite || k == call_kind::withdraw || k == call_kind::send ||
           k == call_kind::visit;
}

decision decide(const campaign& c, const lead_view& lead, const enrollment_state& state, const event& e,
                time_point now) {
    ORCH_CAMPAIGNS_ASSERT(is_terminal(state.st) || find_step(c, state.step) != nullptr,
                          "decide: a live enrollment must name a step of its campaign");
    if (const auto* r = std::get_if<ev_result>(&e)) {
        return on_result(c, state, *r, now);
    }
    if (const auto* d = std::get_if<ev_deferred>(&e)) {
        return on_deferred(c, state, *d, now);
    }
    if (const auto* x = std::get_if<ev_cancel>(&e)) {
        return on_cancel(state, *x);
    }
    if (std::holds_alternative<ev_accepted>(e)) {
        return on_accepted(c, state, now);
    }
    if (std::holds_alternative<ev_replied>(e)) {
        return on_replied(c, state);
    }
    return on_due(c, lead, state, now);
}

std::string invited_by_the_person(const std::string& detail) {
    std::string why = "the person has invited this account (an invitation PENDING, of type RECEIVED): a "
                      "campaign does not accept invitations; accept it on the platform, then retry the lead";
    if (!detail.empty()) {
        why += " (the invite's refusal: " + detail + ")";
    }
    return why;
}

enrollment_state initial_state(const campaign& c, time_point now) {
    ORCH_CAMPAIGNS_ASSERT(!c.steps.empty(), "a campaign has at least one step");
    return enter(c, c.steps.front().id, now, false);
}

enrollment_state enter_step(const campaign& c, const std::string& id, time_point now, bool accepted_seen) {
    ORCH_CAMPAIGNS_ASSERT(find_step(c, id) != nullptr, "enter_step: the id names no step of the campaign");
    return enter(c, id, now, accepted_seen);
}

const message_variant& choose_variant(const step& s, const lead_view& lead) {
    ORCH_CAMPAIGNS_ASSERT(!s.variants.empty(), "choose_variant: a send step has at least one variant");
    std::uint64_t h = fmix64(fnv1a_64(lead.key, s.id));
    return s.variants[static_cast<std::size_t>(h % s.variants.size())];
}

}  // namespace orch::campaigns
