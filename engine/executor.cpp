#include "engine/executor.hpp"

#include <algorithm>

namespace orch::engine {

namespace asio = boost::asio;
using campaigns::call_kind;
using campaigns::result_kind;

std::chrono::milliseconds backoff_delay(const backoff_settings& b, int attempt, random_port& rng) {
    std::int64_t ceiling = b.base_ms;
    for (int i = 0; i < attempt && ceiling < b.cap_ms; ++i) {
        ceiling *= 2;
    }
    ceiling = std::min(ceiling, b.cap_ms);
    std::uniform_int_distribution<std::int64_t> pick(0, ceiling);
    return std::chrono::milliseconds(std::max<std::int64_t>(1'000, pick(rng)));
}

namespace {

struct context {
    const backoff_settings& backoff;
    int attempt;
    const clock_port& clock;
    random_port& rng;
};

std::int64_t credits_of(const outreach::reply_base& r) { return r.meta.credits_consumed.value_or(0); }

// The most one request of `request`'s action can cost, from the client's cost model; a
// conversation read's cost grows with the messages it asks for.
std::int64_t most_for_request(call_kind request, std::int64_t conversation_count = 100) {
    const outreach::json none = outreach::json::object();
    auto one = [&](std::string_view category, std::string_view action) {
        return outreach::estimate_v2(category, action, none).credits;
    };
    switch (request) {
    case call_kind::check_invitation:
        return one("network", "check_invitation");
    case call_kind::invite:
        return one("network", "invite");
    case call_kind::withdraw:
        return one("network", "withdraw");
    case call_kind::send:
        return one("messages", "send");
    case call_kind::visit:
        return one("profiles", "visit");
    case call_kind::get_conversation:
        return outreach::estimate_v2("messages", "get_conversation", outreach::json{{"count", conversation_count}})
            .credits;
    }
    return 1;
}

// A PENDING invitation the person sent (RECEIVED) is told apart from ours: the lead cannot wait
// for it. A PENDING one of no type, or of CONNECTED (a reading the parser lets through only for
// ACCEPTED), is taken as ours.
campaigns::invitation to_invitation(const outreach::invitation_status& st) {
    switch (st.state) {
    case outreach::invitation_state::accepted:
        return campaigns::invitation::accepted;
    case outreach::invitation_state::pending:
        return st.type == outreach::invitation_type::received ? campaigns::invitation::received
                                                             : campaigns::invitation::pending;
    case outreach::invitation_state::no_invitation:
        break;
    }
    return campaigns::invitation::none;
}

// The outcome for a failed request of a call (`request`: which one; `most`: the most it can cost),
// from the client's taxonomy (errors.hpp).
call_outcome from_error(const outreach::error& e, call_outcome out, const context& ctx, call_kind request,
                        std::int64_t most) {
    out.error = outreach::describe(e);
    if (e.may_have_been_charged || e.may_have_taken_effect) {
        out.lost_credits = out.lost_credits.value_or(0) + most;
    }
    if (e.code == "RATE_LIMITED") {
        out.limited_request = request;
    }
    out.error_code = e.code;
    out.error_message = e.message;
    out.unknown_charge = out.unknown_charge || e.may_have_been_charged;
    if (e.retry_after_s) {
        out.retry_after = std::chrono::seconds(*e.retry_after_s);
    }
    out.event.reason = out.error;
    if (e.may_have_taken_effect) {
        // Checked later, not at once: the request may still be on its way to taking effect.
        out.event.kind = result_kind::uncertain;
        out.attempt_outcome = attempt_outcome::uncertain;
        if (ctx.backoff.reconcile_delay_ms > 0) {
            out.event.retry_at = ctx.clock.now() + std::chrono::duration_cast<campaigns::time_point::duration>(
                                                        std::chrono::milliseconds(ctx.backoff.reconcile_delay_ms));
        }
        return out;
    }
    using outreach::disposition;
    switch (e.what_to_do) {
    case disposition::give_up:
        out.event.kind = result_kind::permanent;
        out.attempt_outcome = attempt_outcome::permanent;
        return out;
    case disposition::pause_account:
        out.consequence = call_consequence::pause_account;
        break;
    case disposition::pause_budget:
        out.consequence = call_consequence::pause_budget;
        break;
    case disposition::stop_everything:
        out.consequence = call_consequence::stop_everything;
        break;
    case disposition::retry_later:
    case disposition::back_off:
        break;
    }
    // RATE_LIMITED is the platform's limit, not the lead's fault: no attempt is spent (the
    // call gate also puts the whole scope in a cooldown).
    // The same for a paused account or an exhausted key: the lead waits for the pause to lift.
    // So is a request that reached no API (nothing was sent: a wrong api_url, a network or API
    // outage): it says nothing of the lead, whose attempts it spent until it failed for good, a
    // worker started with a wrong api_url failing the leads a healthy one would have sent. The
    // lead waits at least `unreached_wait` instead, so an API that stays unreachable is not
    // asked about every lead every few seconds.
    const bool unreached = e.kind == outreach::error_kind::transport_connect;
    const bool not_the_leads_fault = e.code == "RATE_LIMITED" || e.what_to_do == disposition::pause_account ||
                                     e.what_to_do == disposition::pause_budget || unreached;
    out.event.kind = not_the_leads_fault ? result_kind::throttled : result_kind::transient;
    out.attempt_outcome = attempt_outcome::transient;
    auto delay = e.retry_after_s ? std::chrono::milliseconds(*e.retry_after_s * 1000 + 50)
                                 : backoff_delay(ctx.backoff, ctx.attempt, ctx.rng);
    if (unreached) {
        delay = std::max<std::chrono::milliseconds>(delay, unreached_wait);
    }
    out.event.retry_at = ctx.clock.now() + std::chrono::duration_cast<campaigns::time_point::duration>(delay);
    return out;
}

// Folds a call's answer into `out`: its credits on success, the failure's outcome otherwise.
// Returns whether the call succeeded.
template <typename T>
bool absorb(const outreach::result<T>& r, call_outcome& out, const context& ctx, call_kind request) {
    if (!r) {
        out = from_error(r.error(), std::move(out), ctx, request, most_for_request(request));
        return false;
    }
    out.credits += credits_of(*r);
    return true;
}

// Every argument of a co_await'ed call is a named local: GCC 12 destroys some temporaries of a
// co_await full-expression twice.
asio::awaitable<void> check(api_port& api, const call_target& t, call_outcome& out, const context& ctx) {
    const outreach::profile_url_params params{t.profile_url};
    auto r = co_await api.check_invitation(t.account_id, params);
    if (!absorb(r, out, ctx, call_kind::check_invitation)) {
        co_return;
    }
    out.event.invitation_state = to_invitation(*r);
    co_return;
}

asio::awaitable<void> invite(api_port& api, const call_target& t, const campaigns::api_call& call,
                             call_outcome& out, const context& ctx) {
    outreach::invite_params p;
    p.profile_url = t.profile_url;
    p.message = call.text;
    auto r = co_await api.invite(t.account_id, p);
    if (r) {
        out.credits += credits_of(*r);
        co_return;
    }
    if (r.error().code != "CHANNEL_ERROR") {
        out = from_error(r.error(), std::move(out), ctx, call_kind::invite, most_for_request(call_kind::invite));
        co_return;
    }
    // Refused: already invited or connected counts as done; anything else is a refusal. Connected
    // already is said to the machine (the invite's result carries ACCEPTED): the lead's wait for
    // an acceptance is then skipped, as no acceptance event will come for a connection that
    // exists (the lead waited out its whole wait step, 10 minutes in a test, days in a campaign).
    // An invitation the person sent (RECEIVED) makes the refusal the outcome, a permanent one whose
    // reason says what happened: the lead fails at once, where it waited out its wait for an
    // acceptance that could not come, and the invite is recorded as refused, not as sent.
    const outreach::error refusal = r.error();
    call_outcome seen = out;
    co_await check(api, t, seen, ctx);
    if (seen.event.kind == result_kind::ok && seen.event.invitation_state &&
        *seen.event.invitation_state == campaigns::invitation::received) {
        out.credits = seen.credits;
        out.unknown_charge = seen.unknown_charge;
        out.lost_credits = seen.lost_credits;
        out = from_error(refusal, std::move(out), ctx, call_kind::invite, 0);
        out.event.kind = result_kind::permanent;
        out.attempt_outcome = attempt_outcome::permanent;
        out.event.reason = campaigns::invited_by_the_person(out.error);
        co_return;
    }
    if (seen.event.kind == result_kind::ok && seen.event.invitation_state &&
        *seen.event.invitation_state == campaigns::invitation::accepted) {
        // A connection already: the lead goes on as accepted, but this invite took no effect (a
        // fresh invite follows attempts without one; an uncertain one is reconciled instead), so
        // the attempt keeps its refusal and the lead is not counted invited. The connection
        // predates it: the person accepted an invitation of another campaign, or of the
        // operator, or invited the account and the operator accepted.
        out = std::move(seen);
        out.attempt_outcome = attempt_outcome::permanent;
        out.error = outreach::describe(refusal) + " (the person is a connection already)";
        out.error_code = refusal.code;
        co_return;
    }
    if (seen.event.kind == result_kind::ok && seen.event.invitation_state &&
        *seen.event.invitation_state != campaigns::invitation::none) {
        seen.event.invitation_state.reset();
        out = std::move(seen);
        co_return;
    }
    if (seen.event.kind != result_kind::ok && seen.event.kind != result_kind::permanent) {
        // The check could not say (a 429, the account gone inactive, a timeout): its outcome is
        // the call's, so that the gate hears the cooldown or the unavailable account and the
        // lead tries again later, instead of failing for a refusal that may mean "already invited".
        seen.event.invitation_state.reset();
        out = std::move(seen);
        co_return;
    }
    out.credits = seen.credits;
    out.unknown_charge = seen.unknown_charge;
    out.lost_credits = seen.lost_credits;
    out = from_error(refusal, std::move(out), ctx, call_kind::invite, 0);
}

asio::awaitable<void> withdraw(api_port& api, const call_target& t, call_outcome& out, const context& ctx) {
    const outreach::profile_url_params params{t.profile_url};
    auto st = co_await api.check_invitation(t.account_id, params);
    if (!absorb(st, out, ctx, call_kind::check_invitation)) {
        co_return;
    }
    if (st->state != outreach::invitation_state::pending || !st->invitation_id ||
        st->type != outreach::invitation_type::sent) {
        co_return;  // nothing of ours to withdraw
    }
    const outreach::withdraw_params wp{*st->invitation_id};
    auto r = co_await api.withdraw(t.account_id, wp);
    (void)absorb(r, out, ctx, call_kind::withdraw);
}

// Whether a failed conversation read means there is no conversation with the person: the spec
// does not show that answer. Readings seen: 404 NOT_FOUND (and a bare 404), INVALID_PARAMS naming
// the profile (this project's sandbox), or 200 with no messages (not an error). Any other refusal
// (CHANNEL_ERROR's upstream failure, FORBIDDEN, an unknown code) says nothing of what was sent:
// the outcome is the error's, and a reconciliation never concludes "not sent" from it.
bool no_conversation(const outreach::error& e) {
    return e.code == "NOT_FOUND" || e.code == "INVALID_PARAMS" || e.http_status == 404;
}

// The read before a follow-up of a stop_on_reply campaign: the last 10 messages of the
// conversation (get_conversation, 1 credit per 10 results: 1 credit a follow-up) show whether
// the lead wrote after our last message. True when the send may go out.
constexpr std::int64_t reply_check_count = 10;

asio::awaitable<bool> no_reply_since_ours(api_port& api, const call_target& t, call_outcome& out,
                                          const context& ctx) {
    outreach::get_conversation_params p;
    p.profile_url = t.profile_url;
    p.count = reply_check_count;
    auto r = co_await api.get_conversation(t.account_id, p);
    if (!r) {
        if (no_conversation(r.error())) {
            co_return true;  // no conversation: nobody replied
        }
        out = from_error(r.error(), std::move(out), ctx, call_kind::get_conversation,
                         most_for_request(call_kind::get_conversation, reply_check_count));
        co_return false;
    }
    out.credits += credits_of(*r);
    std::optional<campaigns::time_point> ours, theirs;
    for (const auto& m : r->messages) {
        auto& latest = m.from_me.value_or(false) ? ours : theirs;
        if (m.at && (!latest || *m.at > *latest)) {
            latest = m.at;
        }
    }
    if (theirs && (!ours || *theirs > *ours)) {
        // Recorded as not sent: the follow-up's text is in its attempt row, and an outcome of ok
        // would read as a message that went out (the conversation, the milestones, the quota).
        out.event.reply_found = true;
        out.attempt_outcome = engine::attempt_outcome::not_sent;
        co_return false;
    }
    co_return true;
}

asio::awaitable<void> send(api_port& api, const call_target& t, const campaigns::api_call& call,
                           call_outcome& out, const context& ctx) {
    if (call.confirm_no_reply && !co_await no_reply_since_ours(api, t, out, ctx)) {
        co_return;  // a reply (the event says so) or a failed read (the outcome says so)
    }
    outreach::send_message_params p;
    p.profile_url = t.profile_url;
    p.message_text = call.text;
    auto r = co_await api.send_message(t.account_id, p);
    (void)absorb(r, out, ctx, call_kind::send);
}

asio::awaitable<void> find_sent(api_port& api, const call_target& t, const campaigns::api_call& call,
                                call_outcome& out, const context& ctx) {
    outreach::get_conversation_params p;
    p.profile_url = t.profile_url;
    p.count = 100;
    auto r = co_await api.get_conversation(t.account_id, p);
    if (!r) {
        // No conversation at all means nothing was sent.
        if (no_conversation(r.error())) {
            out.event.message_found = false;
            co_return;
        }
        out = from_error(r.error(), std::move(out), ctx, call_kind::get_conversation,
                         most_for_request(call_kind::get_conversation, p.count.value_or(100)));
        co_return;
    }
    out.credits += credits_of(*r);
    out.event.message_found = std::any_of(r->messages.begin(), r->messages.end(), [&](const auto& m) {
        return m.text == call.text && m.from_me.value_or(true);
    });
    co_return;
}

asio::awaitable<void> visit(api_port& api, const call_target& t, call_outcome& out, const context& ctx) {
    const outreach::profile_url_params params{t.profile_url};
    auto r = co_await api.visit(t.account_id, params);
    (void)absorb(r, out, ctx, call_kind::visit);
}

}  // namespace

outreach::client_settings api_client_settings(const settings& s, std::size_t pool_size) {
    outreach::client_settings c;
    c.base_url = s.api_url;
    c.api_key = s.api_key;
    c.pool_size = pool_size;
    c.total_timeout_ms = s.api_timeout_ms;
    c.read_timeout_ms = s.api_timeout_ms;
    return c;
}

std::int64_t credits_upper_bound(const campaigns::api_call& call) {
    switch (call.kind) {
    case call_kind::invite:  // a refusal is checked
        return most_for_request(call_kind::invite) + most_for_request(call_kind::check_invitation);
    case call_kind::withdraw:  // the id first
        return most_for_request(call_kind::check_invitation) + most_for_request(call_kind::withdraw);
    case call_kind::send:
        return most_for_request(call_kind::send) +
               (call.confirm_no_reply ? most_for_request(call_kind::get_conversation, reply_check_count) : 0);
    case call_kind::get_conversation:
        return most_for_request(call_kind::get_conversation, 100);  // as find_sent asks
    case call_kind::check_invitation:
    case call_kind::visit:
        break;
    }
    return most_for_request(call.kind);
}

int api_requests(const campaigns::api_call& call) {
    if (call.reconcile) {
        return 1;  // one look-up: check_invitation or get_conversation
    }
    return (call.kind == call_kind::send && call.confirm_no_reply) || call.kind == call_kind::withdraw ? 2 : 1;
}

asio::awaitable<call_outcome> execute(api_port& api, call_target target,
                                      const campaigns::api_call& call, const backoff_settings& backoff, int attempt,
                                      const clock_port& clock, random_port& rng) {
    context ctx{backoff, attempt, clock, rng};
    call_outcome out;
    out.event.call = call.kind;
    out.event.reconcile = call.reconcile;
    out.event.kind = result_kind::ok;
    switch (call.kind) {
    case call_kind::check_invitation:
        co_await check(api, target, out, ctx);
        break;
    case call_kind::invite:
        co_await invite(api, target, call, out, ctx);
        break;
    case call_kind::withdraw:
        co_await withdraw(api, target, out, ctx);
        break;
    case call_kind::send:
        co_await send(api, target, call, out, ctx);
        break;
    case call_kind::visit:
        co_await visit(api, target, out, ctx);
        break;
    case call_kind::get_conversation:
        co_await find_sent(api, target, call, out, ctx);
        break;
    }
    if (call.reconcile && out.event.kind == result_kind::ok) {
        // The label says what the state machine decides: whether the looked-for call's effect is
        // there (a withdraw's is the invitation gone), not whether an invitation is. A person's
        // own invitation (RECEIVED) is no invite's effect.
        const auto of = call.reconciles.value_or(call.kind == call_kind::get_conversation ? call_kind::send
                                                                                          : call_kind::invite);
        const bool present = campaigns::effect_found(of, out.event).value_or(false);
        out.attempt_outcome = present ? attempt_outcome::reconciled_present : attempt_outcome::reconciled_absent;
    }
    co_return out;
}

}  // namespace orch::engine
