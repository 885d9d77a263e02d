// The call path (engine/call_path.hpp) and the executor's outcome mapping (engine/executor.cpp)
// over a scripted API port: the send window that keeps a request from leaving when its lease
// would end before an answer, and a refused invitation whose check could not say.
#include "engine/call_path.hpp"
#include "engine/random.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace cs = orch::campaigns;
namespace eng = orch::engine;
namespace outreach = orch::outreach;
using namespace std::chrono_literals;

class manual_clock final : public eng::clock_port {
public:
    cs::time_point now() const override { return t; }
    cs::time_point t = cs::time_point(std::chrono::hours(24 * 365 * 56));
};

// Answers each request with the next scripted answer for its kind, and moves the clock on by
// `latency` per request. Records the requests in order.
class scripted_api final : public eng::api_port {
public:
    explicit scripted_api(manual_clock& clock) : clock_(clock) {}
    std::vector<std::string> requests;
    std::chrono::milliseconds latency = 100ms;
    std::deque<outreach::result<outreach::invitation_status>> checks;
    std::deque<outreach::result<outreach::invite_result>> invites;
    std::deque<outreach::result<outreach::conversation_page>> conversations;
    std::deque<outreach::result<outreach::send_message_result>> sends;

    answer<outreach::invitation_status> check_invitation(std::string_view, const outreach::profile_url_params&) override {
        co_return next("check_invitation", checks);
    }
    answer<outreach::invite_result> invite(std::string_view, const outreach::invite_params&) override {
        co_return next("invite", invites);
    }
    answer<outreach::withdraw_result> withdraw(std::string_view, const outreach::withdraw_params&) override {
        requests.emplace_back("withdraw");
        co_return outreach::result<outreach::withdraw_result>(outreach::withdraw_result{});
    }
    answer<outreach::send_message_result> send_message(std::string_view, const outreach::send_message_params&) override {
        co_return next("send_message", sends);
    }
    answer<outreach::conversation_page> get_conversation(std::string_view,
                                                         const outreach::get_conversation_params&) override {
        co_return next("get_conversation", conversations);
    }
    answer<outreach::visit_result> visit(std::string_view, const outreach::profile_url_params&) override {
        requests.emplace_back("visit");
        co_return outreach::result<outreach::visit_result>(outreach::visit_result{});
    }

private:
    template <typename T>
    outreach::result<T> next(const char* what, std::deque<outreach::result<T>>& script) {
        requests.emplace_back(what);
        clock_.t += latency;
        if (script.empty()) {
            ADD_FAILURE() << "no scripted answer for " << what;
            return outreach::result<T>(outreach::make_api_error(outreach::error_kind::api_error, 500, "INTERNAL_ERROR",
                                                                "unscripted", std::nullopt, false));
        }
        auto r = std::move(script.front());
        script.pop_front();
        return r;
    }
    manual_clock& clock_;
};

// Lets everything through and records what it hears at once.
class listening_gate final : public eng::call_gate {
public:
    std::vector<std::string> heard;  // the error codes of the answers (answered())
    std::optional<cs::call_kind> cooling;  // hold() holds calls of this kind (as a cooldown of its action)
    std::optional<cs::time_point> hold(const eng::call_target&, const cs::api_call& call, cs::time_point now) override {
        if (cooling && call.kind == *cooling) {
            return now + 5s;
        }
        return std::nullopt;
    }
    eng::gate_decision before(const eng::call_target&, const cs::campaign&, const cs::api_call&, cs::time_point) override {
        return {};
    }
    std::optional<cs::time_point> after(const eng::call_target&, const cs::campaign&, const cs::api_call&,
                                        const eng::call_outcome&) override {
        return std::nullopt;
    }
    void released(const eng::call_target&, const cs::campaign&, const cs::api_call&) override {}
    void answered(const eng::call_target&, const cs::campaign&, const cs::api_call&,
                  const eng::call_outcome& o) override {
        heard.push_back(o.error_code);
    }
};

outreach::error api_error(int status, const std::string& code, const std::string& message,
                          std::optional<std::int64_t> retry_after = std::nullopt) {
    return outreach::make_api_error(outreach::error_kind::api_error, status, code, message, retry_after, false);
}

class CallPath : public ::testing::Test {
protected:
    CallPath() {
        ports_.api = &api_;
        ports_.gate = &gate_;
        ports_.clock = &clock_;
        job_.target = {"acc_1", "https://www.linkedin.com/in/someone", 1, 7, ""};
        job_.campaign = &campaign_;
    }
    eng::call_outcome run(const cs::api_call& call) {
        job_.call = &call;
        eng::call_outcome out;
        asio::io_context io;
        asio::co_spawn(io, eng::send_checked(ports_, job_, rng_, out), asio::detached);
        io.run();
        return out;
    }
    manual_clock clock_;
    scripted_api api_{clock_};
    listening_gate gate_;
    eng::call_path_ports ports_;
    eng::seeded_random rng_{7};
    cs::campaign campaign_;
    eng::call_job job_;
};

cs::api_call invite_call() {
    cs::api_call c;
    c.kind = cs::call_kind::invite;
    c.text = "Hello";
    return c;
}

TEST_F(CallPath, ACallPastItsSendWindowIsNotSent) {
    job_.send_by = clock_.t;  // the lease would end before an answer
    const auto call = invite_call();
    const auto out = run(call);
    EXPECT_TRUE(api_.requests.empty());
    EXPECT_EQ(out.event.kind, cs::result_kind::throttled);  // no attempt spent
    EXPECT_EQ(out.event.reason, eng::lease_too_short_reason);
    EXPECT_EQ(out.event.retry_at, clock_.t);  // due again at once
    EXPECT_EQ(out.credits, 0);
    EXPECT_TRUE(out.nothing_sent);  // the gate gives its rate place back
}

// A follow-up reads the conversation, then sends: a send that would leave after the window is
// not sent, whatever the read found; the read's credits stay charged, and the call is a failed
// attempt with a backoff (due again at once, the read was sent again, billed, at every claim:
// a lease too short for the API's latency read forever).
TEST_F(CallPath, ALaterRequestOfACallPastTheWindowIsNotSent) {
    cs::api_call call;
    call.kind = cs::call_kind::send;
    call.text = "Following up";
    call.confirm_no_reply = true;
    outreach::conversation_page page;
    page.meta.credits_consumed = 1;
    api_.conversations.emplace_back(page);
    api_.sends.emplace_back(outreach::send_message_result{});
    api_.latency = 2s;
    job_.send_by = clock_.t + 1s;  // the read leaves in time and comes back after it
    const auto out = run(call);
    EXPECT_EQ(api_.requests, (std::vector<std::string>{"get_conversation"}));
    EXPECT_EQ(out.event.kind, cs::result_kind::transient);  // an attempt spent
    EXPECT_EQ(out.event.reason, eng::answered_too_late_reason);
    EXPECT_GE(out.event.retry_at, clock_.t + 1s);  // a backoff, not due again at once
    EXPECT_FALSE(out.held);
    EXPECT_EQ(out.credits, 1);
    EXPECT_FALSE(out.nothing_sent);  // the read used its rate place

    api_.requests.clear();
    api_.conversations.emplace_back(page);
    job_.send_by = clock_.t + 3s;  // both leave in time
    const auto sent = run(call);
    EXPECT_EQ(api_.requests, (std::vector<std::string>{"get_conversation", "send_message"}));
    EXPECT_EQ(sent.event.kind, cs::result_kind::ok);
}

// A follow-up's send is checked again as it leaves, as the read before it was: a person put on
// the do-not-contact list (or excluded by the campaign) while the read was out is not written to,
// and the lead stops; a campaign an operator paused meanwhile sends nothing more, and the lead
// waits for the resume. The read stays charged in both.
TEST_F(CallPath, ALaterRequestMeetsTheListAndTheOperatorsCommandsThatCameMeanwhile) {
    cs::api_call call;
    call.kind = cs::call_kind::send;
    call.text = "Following up";
    call.confirm_no_reply = true;
    outreach::conversation_page page;
    page.meta.credits_consumed = 1;
    job_.send_by = clock_.t + 1h;
    int looks = 0;
    ports_.do_not_contact = [&](const std::string&, const std::string&, std::int64_t) -> const char* {
        return ++looks >= 2 ? "stopped: do-not-contact" : nullptr;  // listed after the first look
    };
    api_.conversations.emplace_back(page);
    const auto stopped = run(call);
    EXPECT_EQ(api_.requests, (std::vector<std::string>{"get_conversation"}));
    EXPECT_EQ(stopped.stop_reason, "stopped: do-not-contact");
    EXPECT_EQ(stopped.event.reason, "not sent: do-not-contact");
    EXPECT_EQ(stopped.attempt_outcome, eng::attempt_outcome::permanent);
    EXPECT_EQ(stopped.credits, 1);
    EXPECT_FALSE(stopped.nothing_sent);

    api_.requests.clear();
    ports_.do_not_contact = nullptr;
    int asked = 0;
    ports_.campaign_halted = [&](std::int64_t) { return ++asked >= 2; };  // paused after the first look
    api_.conversations.emplace_back(page);
    const auto held = run(call);
    EXPECT_EQ(api_.requests, (std::vector<std::string>{"get_conversation"}));
    EXPECT_EQ(held.event.reason, eng::campaign_halted_reason);
    EXPECT_EQ(held.event.kind, cs::result_kind::throttled);  // no attempt spent
    EXPECT_TRUE(held.held);
    EXPECT_EQ(held.credits, 1);
    EXPECT_FALSE(held.nothing_sent);

    // Neither came: both requests go.
    api_.requests.clear();
    ports_.campaign_halted = [](std::int64_t) { return false; };
    api_.conversations.emplace_back(page);
    api_.sends.emplace_back(outreach::send_message_result{});
    const auto sent = run(call);
    EXPECT_EQ(api_.requests, (std::vector<std::string>{"get_conversation", "send_message"}));
    EXPECT_EQ(sent.event.kind, cs::result_kind::ok);
}

// An invitation refused with CHANNEL_ERROR is checked: "already invited" counts as done, "none"
// leaves the refusal standing; a check that could not say makes the call's outcome its own, so
// the gate hears the 429 or the inactive account and the lead does not fail for a refusal that
// may have meant "already invited".
TEST_F(CallPath, ARefusedInvitationWhoseCheckCouldNotSayIsNotAFailure) {
    const auto call = invite_call();
    const auto refused = api_error(422, "CHANNEL_ERROR", "cannot invite");

    api_.invites.emplace_back(refused);
    api_.checks.emplace_back(api_error(429, "RATE_LIMITED", "too many requests for account acc_1", 30));
    auto out = run(call);
    EXPECT_EQ(api_.requests, (std::vector<std::string>{"invite", "check_invitation"}));
    EXPECT_EQ(out.event.kind, cs::result_kind::throttled);
    EXPECT_EQ(out.error_code, "RATE_LIMITED");
    EXPECT_EQ(out.retry_after, std::chrono::milliseconds(30'000));
    EXPECT_EQ(gate_.heard, (std::vector<std::string>{"RATE_LIMITED"}));

    api_.invites.emplace_back(refused);
    api_.checks.emplace_back(api_error(403, "ACCOUNT_INACTIVE", "account inactive"));
    out = run(call);
    EXPECT_EQ(out.error_code, "ACCOUNT_INACTIVE");
    EXPECT_EQ(out.consequence, eng::call_consequence::pause_account);
    EXPECT_NE(out.event.kind, cs::result_kind::permanent);

    auto refused_then_checked = [&](outreach::invitation_state found) {
        api_.invites.emplace_back(refused);
        outreach::invitation_status status;
        status.state = found;
        api_.checks.emplace_back(status);
        return run(call);
    };
    out = refused_then_checked(outreach::invitation_state::no_invitation);
    EXPECT_EQ(out.event.kind, cs::result_kind::permanent);
    EXPECT_EQ(out.error_code, "CHANNEL_ERROR");
    out = refused_then_checked(outreach::invitation_state::pending);  // already invited: done
    EXPECT_EQ(out.event.kind, cs::result_kind::ok);
    EXPECT_EQ(out.attempt_outcome, eng::attempt_outcome::ok);
    // A connection already: the lead goes on as accepted, and the invite took no effect (it is
    // not counted as an invitation, and its quota place is given back).
    out = refused_then_checked(outreach::invitation_state::accepted);
    EXPECT_EQ(out.event.kind, cs::result_kind::ok);
    ASSERT_TRUE(out.event.invitation_state.has_value());
    EXPECT_EQ(*out.event.invitation_state, cs::invitation::accepted);
    EXPECT_EQ(out.attempt_outcome, eng::attempt_outcome::permanent);
    EXPECT_EQ(out.error_code, "CHANNEL_ERROR");
    EXPECT_NE(out.error.find("a connection already"), std::string::npos) << out.error;
}

// A reconciliation's label says whether the looked-for call's effect is there, as the state
// machine decides: an invite's is an invitation pending or accepted (not the person's own), a
// withdraw's is the invitation gone.
TEST_F(CallPath, AReconciliationIsLabelledByTheEffectOfTheCallItLooksFor) {
    auto reconcile = [&](cs::call_kind of, outreach::invitation_state found, outreach::invitation_type type) {
        cs::api_call call;
        call.kind = cs::call_kind::check_invitation;
        call.reconcile = true;
        call.reconciles = of;
        outreach::invitation_status status;
        status.state = found;
        status.type = type;
        api_.checks.emplace_back(status);
        return run(call).attempt_outcome;
    };
    using st = outreach::invitation_state;
    using ty = outreach::invitation_type;
    EXPECT_EQ(reconcile(cs::call_kind::invite, st::pending, ty::sent), eng::attempt_outcome::reconciled_present);
    EXPECT_EQ(reconcile(cs::call_kind::invite, st::accepted, ty::connected), eng::attempt_outcome::reconciled_present);
    EXPECT_EQ(reconcile(cs::call_kind::invite, st::no_invitation, ty::none), eng::attempt_outcome::reconciled_absent);
    EXPECT_EQ(reconcile(cs::call_kind::invite, st::pending, ty::received), eng::attempt_outcome::reconciled_absent);
    EXPECT_EQ(reconcile(cs::call_kind::withdraw, st::pending, ty::sent), eng::attempt_outcome::reconciled_absent);
    EXPECT_EQ(reconcile(cs::call_kind::withdraw, st::no_invitation, ty::none), eng::attempt_outcome::reconciled_present);
    EXPECT_EQ(reconcile(cs::call_kind::withdraw, st::accepted, ty::connected), eng::attempt_outcome::reconciled_present);
}

// The reconciliation of a send whose answer was lost reads the conversation: "no conversation"
// (404, or INVALID_PARAMS naming the profile, as this project's sandbox answers) means nothing was
// sent; any other refusal says nothing of what was sent and must never read as "not sent" (the
// message would go out twice).
TEST_F(CallPath, AConversationReadThatCannotSayIsNeverNotSent) {
    cs::api_call call;
    call.kind = cs::call_kind::get_conversation;  // the reconciliation of a send
    call.text = "Hello";
    call.reconcile = true;

    api_.conversations.emplace_back(api_error(404, "NOT_FOUND", "no conversation"));
    auto out = run(call);
    EXPECT_EQ(out.event.kind, cs::result_kind::ok);
    EXPECT_FALSE(out.event.message_found);

    api_.conversations.emplace_back(api_error(400, "INVALID_PARAMS", "params.profile_url: there is no conversation"));
    out = run(call);
    EXPECT_EQ(out.event.kind, cs::result_kind::ok);
    EXPECT_FALSE(out.event.message_found);

    for (const auto& [status, code] : std::vector<std::pair<int, std::string>>{
             {422, "CHANNEL_ERROR"}, {403, "FORBIDDEN"}, {409, "SOMETHING_NEW"}}) {
        api_.conversations.emplace_back(api_error(status, code, "upstream failure"));
        out = run(call);
        EXPECT_NE(out.event.kind, cs::result_kind::ok) << code;
        EXPECT_EQ(out.error_code, code);
    }
    EXPECT_EQ(api_.requests.size(), 5u);  // reads only: a reconciliation never sends
}

// A call's requests are held by the cooldowns of their own actions too, not only of the call's:
// a withdraw's look-up (check_invitation) while check_invitation cools down is not sent; and a
// 429 on a request names that request, so that the gate cools its action down.
TEST_F(CallPath, EachRequestMeetsTheCooldownOfItsOwnAction) {
    cs::api_call withdraw;
    withdraw.kind = cs::call_kind::withdraw;
    gate_.cooling = cs::call_kind::check_invitation;
    auto out = run(withdraw);
    EXPECT_TRUE(api_.requests.empty());
    EXPECT_TRUE(out.nothing_sent);
    EXPECT_EQ(out.event.kind, cs::result_kind::throttled);
    ASSERT_TRUE(out.held_request);  // the settle asks the gate about that scope again
    EXPECT_EQ(*out.held_request, cs::call_kind::check_invitation);
    gate_.cooling.reset();

    cs::api_call follow_up;
    follow_up.kind = cs::call_kind::send;
    follow_up.text = "Following up";
    follow_up.confirm_no_reply = true;
    api_.conversations.emplace_back(api_error(429, "RATE_LIMITED", "too many requests for account acc_1", 2));
    out = run(follow_up);
    EXPECT_EQ(api_.requests, (std::vector<std::string>{"get_conversation"}));
    EXPECT_EQ(out.error_code, "RATE_LIMITED");
    ASSERT_TRUE(out.limited_request);
    EXPECT_EQ(*out.limited_request, cs::call_kind::get_conversation);
}

// An invitation refused with CHANNEL_ERROR whose check a cooldown holds: the invite reached the API,
// so the call's reason says its first request went out and names the request held (it read "not
// sent: held by ...", as if the invite had not left).
TEST_F(CallPath, ARequestHeldAfterAnotherWentOutSaysTheFirstWentOut) {
    gate_.cooling = cs::call_kind::check_invitation;
    api_.invites.emplace_back(api_error(422, "CHANNEL_ERROR", "cannot invite"));
    const auto call = invite_call();
    const auto out = run(call);
    EXPECT_EQ(api_.requests, (std::vector<std::string>{"invite"}));
    EXPECT_EQ(out.event.kind, cs::result_kind::throttled);
    EXPECT_TRUE(out.held);
    EXPECT_FALSE(out.nothing_sent);
    EXPECT_EQ(out.event.reason.rfind("its first request went out; the next (check_invitation) was not sent: ", 0), 0u)
        << out.event.reason;
    EXPECT_EQ(out.error, out.event.reason);
}

// A call whose answer was lost is charged what its answered requests cost and the most the lost
// request could have cost, not its whole reservation: an invite whose answer was lost never made
// the check a refusal makes (the ledger posted 3 where the API charged 2 with its reconciliation).
TEST_F(CallPath, ALostAnswerCountsTheMostOfTheLostRequestOnly) {
    auto lost = [](bool side_effect) {
        return outreach::make_transport_error(outreach::error_kind::timeout, outreach::failure_step::read,
                                              "timed out", true, side_effect);
    };
    const auto invite = invite_call();
    api_.invites.emplace_back(lost(true));
    auto out = run(invite);
    EXPECT_EQ(api_.requests, (std::vector<std::string>{"invite"}));
    EXPECT_EQ(out.attempt_outcome, eng::attempt_outcome::uncertain);
    EXPECT_EQ(out.credits, 0);
    ASSERT_TRUE(out.lost_credits);
    EXPECT_EQ(*out.lost_credits, 1);
    EXPECT_EQ(eng::credits_upper_bound(invite), 2);  // what it posted before: the check too

    // A refusal whose check's answer was lost: the check is the lost request.
    api_.requests.clear();
    api_.invites.emplace_back(api_error(422, "CHANNEL_ERROR", "cannot invite"));
    api_.checks.emplace_back(lost(false));
    out = run(invite);
    EXPECT_EQ(api_.requests, (std::vector<std::string>{"invite", "check_invitation"}));
    EXPECT_TRUE(out.unknown_charge);
    ASSERT_TRUE(out.lost_credits);
    EXPECT_EQ(*out.lost_credits, 1);

    // A follow-up whose reply check was answered (1 credit) and whose send was lost.
    cs::api_call follow_up;
    follow_up.kind = cs::call_kind::send;
    follow_up.text = "Following up";
    follow_up.confirm_no_reply = true;
    outreach::conversation_page page;
    page.meta.credits_consumed = 1;
    api_.conversations.emplace_back(page);
    api_.sends.emplace_back(lost(true));
    out = run(follow_up);
    EXPECT_EQ(out.attempt_outcome, eng::attempt_outcome::uncertain);
    EXPECT_EQ(out.credits, 1);
    ASSERT_TRUE(out.lost_credits);
    EXPECT_EQ(*out.lost_credits, 1);

    // A follow-up whose reply check was lost: the send never left.
    api_.requests.clear();
    api_.conversations.emplace_back(lost(false));
    out = run(follow_up);
    EXPECT_EQ(api_.requests, (std::vector<std::string>{"get_conversation"}));
    EXPECT_TRUE(out.unknown_charge);
    EXPECT_EQ(out.credits, 0);
    ASSERT_TRUE(out.lost_credits);
    EXPECT_EQ(*out.lost_credits, 1);  // a read of 10 messages

    // A request that never left (the connection failed first) cost nothing.
    api_.invites.emplace_back(outreach::make_transport_error(outreach::error_kind::transport_connect,
                                                             outreach::failure_step::connect, "refused", false, true));
    out = run(invite);
    EXPECT_FALSE(out.lost_credits);
    EXPECT_FALSE(out.unknown_charge);
    EXPECT_NE(out.attempt_outcome, eng::attempt_outcome::uncertain);
    // Nor did it say anything of the lead: none of its attempts is spent (a worker with a wrong
    // api_url failed the leads for good), and it waits at least unreached_wait.
    EXPECT_EQ(out.event.kind, cs::result_kind::throttled);
    EXPECT_GE(out.event.retry_at - clock_.now(), eng::unreached_wait);
}

}  // namespace

namespace {

// The lanes' windows share the process's connections (call_slots): two windows of 1 call each
// over 1 connection run one call at a time, so the second call's checks run only once the first
// is back, just before its request leaves (with a window each, it passed its checks and then
// waited for the connection in the client, unchecked: an exclusion that came meanwhile did not
// stop it). A freed slot goes to the other window's waiting call.
TEST(CallWindow, WindowsShareTheProcesssConnections) {
    asio::io_context io;
    auto slots = std::make_shared<eng::call_slots>(1);
    eng::call_window a(io.get_executor(), 1, slots);
    eng::call_window b(io.get_executor(), 1, slots);
    int running = 0, most = 0;
    std::vector<std::string> order;
    auto job = [&](std::string name) {
        return [&, name]() -> asio::awaitable<void> {
            ++running;
            most = std::max(most, running);
            order.push_back(name + " starts");
            asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(5));
            co_await t.async_wait(asio::use_awaitable);
            order.push_back(name + " ends");
            --running;
        };
    };
    a.add(job("a1"));
    b.add(job("b1"));
    a.add(job("a2"));
    io.run();
    EXPECT_EQ(most, 1);
    EXPECT_EQ(order, (std::vector<std::string>{"a1 starts", "a1 ends", "b1 starts", "b1 ends", "a2 starts", "a2 ends"}));
    // Without shared slots each window runs its own call at once.
    asio::io_context io2;
    eng::call_window c(io2.get_executor(), 1), d(io2.get_executor(), 1);
    running = most = 0;
    order.clear();
    c.add(job("c1"));
    d.add(job("d1"));
    io2.run();
    EXPECT_EQ(most, 2);
}

}  // namespace
