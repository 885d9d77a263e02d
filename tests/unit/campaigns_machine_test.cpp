// The step state machine (campaigns/machine.hpp): table-driven decide() tests state by state,
// every invalid event in every state (STYLE F1), initial_state and choose_variant.
#include "campaigns/campaigns.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <set>
#include <string>

namespace orch::campaigns {

bool operator==(const enrollment_state& a, const enrollment_state& b) {
    return a.step == b.step && a.st == b.st && a.next_run_at == b.next_run_at && a.attempt == b.attempt &&
           a.reconcile == b.reconcile && a.accepted_seen == b.accepted_seen && a.reason == b.reason && a.wait == b.wait;
}

void PrintTo(const enrollment_state& s, std::ostream* out) {
    *out << "{step=" << s.step << " status=" << to_string(s.st)
         << " next_run_at=" << s.next_run_at.time_since_epoch().count() << " attempt=" << s.attempt
         << " reconcile=" << s.reconcile << " accepted_seen=" << s.accepted_seen << " reason=" << s.reason
         << " wait=" << to_string(s.wait) << "}";
}

}  // namespace orch::campaigns

namespace {

using namespace orch::campaigns;
using std::chrono::hours;
using std::chrono::minutes;

// Monday 2024-03-04 10:00 UTC.
const time_point t0 = time_point{} + seconds{1709546400};
constexpr hours day{24};

step make_step(std::string id, step_kind kind, std::string next = "") {
    step s;
    s.id = std::move(id);
    s.kind = kind;
    s.next = std::move(next);
    return s;
}

// check -> (accepted) hello | (pending) wait | (none) invite -> wait -> (accepted) hello | (timeout) drop
// hello (A/B) -> pause (3d) -> look (visit) -> fin (end);  drop (withdraw) -> end
campaign make_campaign() {
    campaign c;
    c.name = "test";
    c.accounts = {"acc_1"};
    c.schedule.time_zone = "UTC";
    c.schedule.days.fill(true);
    c.schedule.start_minute = 0;
    c.schedule.end_minute = 24 * 60;
    c.budget_credits = 100;
    c.max_attempts = 3;
    step check = make_step("check", step_kind::check_invitation);
    check.on_accepted = "hello";
    check.on_pending = "wait";
    check.on_no_invitation = "invite";
    step invite = make_step("invite", step_kind::invite, "wait");
    invite.note = text_template{"Hi {{first_name}}"};
    step wait = make_step("wait", step_kind::wait_accepted, "hello");
    wait.timeout = day * 7;
    wait.on_timeout = "drop";
    step hello = make_step("hello", step_kind::send, "pause");
    hello.variants = {{"A", {"Hello {{first_name}}"}}, {"B", {"Hey {{company|there}}"}}};
    step pause = make_step("pause", step_kind::delay, "look");
    pause.duration = day * 3;
    c.steps = {check,
               invite,
               wait,
               hello,
               pause,
               make_step("look", step_kind::visit, "fin"),
               make_step("fin", step_kind::end),
               make_step("drop", step_kind::withdraw, "")};
    return c;
}

const campaign the_campaign = make_campaign();
const lead_view lead{"lead-1", {{"first_name", "Ada"}}};  // variant B at step hello

enrollment_state at(std::string step, status st, time_point next_run_at, int attempt = 0,
                    bool reconcile = false, bool accepted_seen = false, std::string reason = "") {
    enrollment_state s;
    s.step = std::move(step);
    s.st = st;
    s.next_run_at = next_run_at;
    s.attempt = attempt;
    s.reconcile = reconcile;
    s.accepted_seen = accepted_seen;
    s.reason = std::move(reason);
    return s;
}

// `s` with the wait code its reason carries.
enrollment_state waiting_for(enrollment_state s, wait_code w) {
    s.wait = w;
    return s;
}

ev_result result(call_kind call, result_kind kind, bool reconcile = false) {
    ev_result r;
    r.call = call;
    r.kind = kind;
    r.reconcile = reconcile;
    return r;
}

ev_result check_ok(invitation state, bool reconcile = false) {
    ev_result r = result(call_kind::check_invitation, result_kind::ok, reconcile);
    r.invitation_state = state;
    return r;
}

ev_result failed_with(call_kind call, result_kind kind, time_point retry_at, bool reconcile = false) {
    ev_result r = result(call, kind, reconcile);
    r.retry_at = retry_at;
    r.reason = "E";
    return r;
}

api_call make_call(call_kind kind, std::string text = "", std::string variant = "", bool reconcile = false,
                   std::optional<call_kind> reconciles = std::nullopt) {
    api_call c;
    c.kind = kind;
    c.text = std::move(text);
    c.variant = std::move(variant);
    c.reconcile = reconcile;
    c.reconciles = reconciles;
    return c;
}

// ---------------------------------------------------------------------------------------------
// Valid transitions, state by state

struct transition {
    const char* name;
    enrollment_state before;
    event e;
    time_point now;
    enrollment_state after;
    std::optional<api_call> call;
};

std::ostream& operator<<(std::ostream& out, const transition& t) {
    return out << t.name;
}

class transitions : public ::testing::TestWithParam<transition> {};

TEST_P(transitions, decide) {
    const transition& t = GetParam();
    decision d = decide(the_campaign, lead, t.before, t.e, t.now);
    EXPECT_TRUE(d.valid) << d.why;
    EXPECT_EQ(d.next, t.after);
    ASSERT_EQ(d.call.has_value(), t.call.has_value()) << d.why;
    if (t.call) {
        EXPECT_EQ(d.call->kind, t.call->kind);
        EXPECT_EQ(d.call->text, t.call->text);
        EXPECT_EQ(d.call->variant, t.call->variant);
        EXPECT_EQ(d.call->reconcile, t.call->reconcile);
        EXPECT_EQ(d.call->reconciles, t.call->reconciles);
    }
}

// Test names from the cases' own names.
template <class Case>
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    return info.param.name;
}

const time_point later = t0 + hours(5);
const time_point retry_at = t0 + minutes(10);

INSTANTIATE_TEST_SUITE_P(
    ready, transitions,
    ::testing::Values(
        transition{"due_check_invitation_calls", at("check", status::ready, t0), ev_due{}, t0,
                   at("check", status::calling, t0), make_call(call_kind::check_invitation)},
        transition{"due_late_calls_at_now", at("check", status::ready, t0), ev_due{}, later,
                   at("check", status::calling, later), make_call(call_kind::check_invitation)},
        transition{"due_invite_renders_the_note", at("invite", status::ready, t0), ev_due{}, t0,
                   at("invite", status::calling, t0), make_call(call_kind::invite, "Hi Ada")},
        transition{"due_send_chooses_variant_and_renders", at("hello", status::ready, t0), ev_due{}, t0,
                   at("hello", status::calling, t0), make_call(call_kind::send, "Hey there", "B")},
        transition{"due_visit_calls", at("look", status::ready, t0), ev_due{}, t0,
                   at("look", status::calling, t0), make_call(call_kind::visit)},
        transition{"due_withdraw_calls", at("drop", status::ready, t0, 1, false, false, "E"), ev_due{}, t0,
                   at("drop", status::calling, t0, 1, false, false, "E"), make_call(call_kind::withdraw)},
        transition{"due_delay_elapsed_moves_on", at("pause", status::ready, t0), ev_due{}, t0,
                   at("look", status::ready, t0), std::nullopt},
        transition{"due_wait_retry_checks_again", at("wait", status::ready, t0, 1), ev_due{}, t0,
                   at("wait", status::calling, t0, 1), make_call(call_kind::check_invitation)},
        transition{"due_wait_retry_accepted_seen_moves_on", at("wait", status::ready, t0, 1, false, true),
                   ev_due{}, t0, at("hello", status::ready, t0, 0, false, true), std::nullopt},
        transition{"deferred_stays_ready", at("invite", status::ready, t0, 2), ev_deferred{later, "bucket"},
                   t0, at("invite", status::ready, later, 2, false, false, "bucket"), std::nullopt},
        transition{"deferred_with_a_code_keeps_it", at("invite", status::ready, t0, 2),
                   ev_deferred{later, "waiting for the invite day quota of account a", wait_code::day_quota}, t0,
                   waiting_for(at("invite", status::ready, later, 2, false, false,
                                  "waiting for the invite day quota of account a"),
                               wait_code::day_quota),
                   std::nullopt},
        transition{"accepted_early_is_remembered", at("invite", status::ready, t0), ev_accepted{}, t0,
                   at("invite", status::ready, t0, 0, false, true), std::nullopt},
        transition{"accepted_at_wait_retry_moves_on", at("wait", status::ready, t0, 1), ev_accepted{}, later,
                   at("hello", status::ready, later, 0, false, true), std::nullopt},
        transition{"replied_stops", at("pause", status::ready, t0), ev_replied{}, t0,
                   at("pause", status::replied, t0, 0, false, false, "the lead replied"), std::nullopt},
        transition{"cancel", at("check", status::ready, t0), ev_cancel{"do-not-contact"}, t0,
                   at("check", status::cancelled, t0, 0, false, false, "do-not-contact"), std::nullopt}),
    case_name<transition>);

INSTANTIATE_TEST_SUITE_P(calling, transitions,
                         ::testing::Values(
                             // check_invitation branches
                             transition{"check_accepted", at("check", status::calling, t0),
                                        check_ok(invitation::accepted), later,
                                        at("hello", status::ready, later, 0, false, true), std::nullopt},
                             transition{"check_pending_enters_wait", at("check", status::calling, t0),
                                        check_ok(invitation::pending), later,
                                        at("wait", status::waiting, later + day * 7), std::nullopt},
                             transition{"check_none_invites", at("check", status::calling, t0),
                                        check_ok(invitation::none), later, at("invite", status::ready, later),
                                        std::nullopt},
                             transition{
                                 "check_transient_retries", at("check", status::calling, t0),
                                 failed_with(call_kind::check_invitation, result_kind::transient, retry_at),
                                 t0, at("check", status::ready, retry_at, 1, false, false, "E"),
                                 std::nullopt},
                             transition{
                                 "check_uncertain_is_asked_again", at("check", status::calling, t0),
                                 failed_with(call_kind::check_invitation, result_kind::uncertain, retry_at),
                                 t0, at("check", status::ready, retry_at, 1, false, false, "E"),
                                 std::nullopt},
                             transition{
                                 "throttled_retries_without_spending_an_attempt",
                                 at("invite", status::calling, t0, 2),
                                 failed_with(call_kind::invite, result_kind::throttled, retry_at), t0,
                                 waiting_for(at("invite", status::ready, retry_at, 2, false, false, "E"),
                                             wait_code::throttled),
                                 std::nullopt},
                             transition{
                                 "throttled_at_the_last_attempt_still_retries",
                                 at("check", status::calling, t0, 2),
                                 failed_with(call_kind::check_invitation, result_kind::throttled, retry_at),
                                 t0,
                                 waiting_for(at("check", status::ready, retry_at, 2, false, false, "E"),
                                             wait_code::throttled),
                                 std::nullopt},
                             transition{"reconcile_throttled_stays_calling_same_attempt",
                                        at("invite", status::calling, t0, 1, true),
                                        failed_with(call_kind::check_invitation, result_kind::throttled,
                                                    retry_at, true),
                                        t0,
                                        waiting_for(at("invite", status::calling, retry_at, 1, true, false, "E"),
                                                    wait_code::throttled),
                                        std::nullopt},
                             transition{
                                 "transient_exhausts_attempts", at("check", status::calling, t0, 2),
                                 failed_with(call_kind::check_invitation, result_kind::transient, retry_at),
                                 t0,
                                 at("check", status::failed, t0, 3, false, false,
                                    "attempts exhausted (3): E"),
                                 std::nullopt},
                             transition{"permanent_fails", at("invite", status::calling, t0),
                                        failed_with(call_kind::invite, result_kind::permanent, retry_at), t0,
                                        at("invite", status::failed, t0, 0, false, false, "E"), std::nullopt},
                             transition{"retry_at_in_the_past_is_now", at("check", status::calling, t0),
                                        failed_with(call_kind::check_invitation, result_kind::transient,
                                                    t0 - hours(1)),
                                        later, at("check", status::ready, later, 1, false, false, "E"),
                                        std::nullopt},
                             // side effects done
                             transition{"invite_ok_enters_wait", at("invite", status::calling, t0, 1),
                                        result(call_kind::invite, result_kind::ok), later,
                                        at("wait", status::waiting, later + day * 7), std::nullopt},
                             transition{"invite_ok_after_early_acceptance_skips_wait",
                                        at("invite", status::calling, t0, 0, false, true),
                                        result(call_kind::invite, result_kind::ok), later,
                                        at("hello", status::ready, later, 0, false, true), std::nullopt},
                             transition{"send_ok_enters_delay", at("hello", status::calling, t0),
                                        result(call_kind::send, result_kind::ok), t0,
                                        at("pause", status::ready, t0 + day * 3), std::nullopt},
                             transition{"visit_ok_reaches_end_step", at("look", status::calling, t0),
                                        result(call_kind::visit, result_kind::ok), t0,
                                        at("", status::done, t0), std::nullopt},
                             transition{"withdraw_ok_ends", at("drop", status::calling, t0),
                                        result(call_kind::withdraw, result_kind::ok), t0,
                                        at("", status::done, t0), std::nullopt},
                             // uncertain outcomes of side effects
                             transition{"invite_uncertain_reconciles", at("invite", status::calling, t0),
                                        failed_with(call_kind::invite, result_kind::uncertain, retry_at), t0,
                                        at("invite", status::calling, retry_at, 1, true, false, "E"),
                                        std::nullopt},
                             transition{"send_uncertain_reconciles_now_without_retry_at",
                                        at("hello", status::calling, t0),
                                        result(call_kind::send, result_kind::uncertain), later,
                                        at("hello", status::calling, later, 1, true), std::nullopt},
                             transition{"visit_uncertain_counts_as_done", at("look", status::calling, t0),
                                        result(call_kind::visit, result_kind::uncertain), t0,
                                        at("", status::done, t0), std::nullopt},
                             // reconciliation results
                             transition{"reconcile_invite_pending_took_effect",
                                        at("invite", status::calling, t0, 1, true),
                                        check_ok(invitation::pending, true), later,
                                        at("wait", status::waiting, later + day * 7), std::nullopt},
                             transition{"reconcile_invite_accepted_took_effect",
                                        at("invite", status::calling, t0, 1, true),
                                        check_ok(invitation::accepted, true), later,
                                        at("hello", status::ready, later, 0, false, true), std::nullopt},
                             transition{"reconcile_invite_none_resends_same_attempt",
                                        at("invite", status::calling, t0, 1, true, false, "E"),
                                        check_ok(invitation::none, true), later,
                                        at("invite", status::ready, later, 1, false, false, "E"),
                                        std::nullopt},
                             transition{"reconcile_absent_after_last_attempt_fails",
                                        at("invite", status::calling, t0, 3, true),
                                        check_ok(invitation::none, true), later,
                                        at("invite", status::failed, t0, 3, false,
                                           false, "attempts exhausted (3): the call did not take effect"),
                                        std::nullopt},
                             transition{"reconcile_send_found", at("hello", status::calling, t0, 1, true),
                                        [] {
                                            ev_result r =
                                                result(call_kind::get_conversation, result_kind::ok, true);
                                            r.message_found = true;
                                            return r;
                                        }(),
                                        t0, at("pause", status::ready, t0 + day * 3), std::nullopt},
                             transition{"reconcile_send_not_found_resends",
                                        at("hello", status::calling, t0, 1, true),
                                        result(call_kind::get_conversation, result_kind::ok, true), t0,
                                        at("hello", status::ready, t0, 1), std::nullopt},
                             transition{"reconcile_withdraw_gone", at("drop", status::calling, t0, 1, true),
                                        check_ok(invitation::none, true), t0, at("", status::done, t0),
                                        std::nullopt},
                             transition{"reconcile_withdraw_accepted_meanwhile",
                                        at("drop", status::calling, t0, 1, true),
                                        check_ok(invitation::accepted, true), t0,
                                        at("", status::done, t0, 0, false, true), std::nullopt},
                             transition{"reconcile_withdraw_still_pending_resends",
                                        at("drop", status::calling, t0, 1, true),
                                        check_ok(invitation::pending, true), t0,
                                        at("drop", status::ready, t0, 1), std::nullopt},
                             transition{"reconcile_transient_stays_calling",
                                        at("invite", status::calling, t0, 1, true),
                                        failed_with(call_kind::check_invitation, result_kind::transient,
                                                    retry_at, true),
                                        t0, at("invite", status::calling, retry_at, 2, true, false, "E"),
                                        std::nullopt},
                             transition{"reconcile_uncertain_stays_calling",
                                        at("hello", status::calling, t0, 0, true),
                                        failed_with(call_kind::get_conversation, result_kind::uncertain,
                                                    retry_at, true),
                                        t0, at("hello", status::calling, retry_at, 1, true, false, "E"),
                                        std::nullopt},
                             // max_attempts 3: the uncertain call spent the third, the check's
                             // failure a fourth; the reason says why the count passes the maximum.
                             transition{"reconcile_transient_past_the_last_attempt_says_why",
                                        at("invite", status::calling, t0, 3, true),
                                        failed_with(call_kind::check_invitation, result_kind::transient,
                                                    retry_at, true),
                                        t0,
                                        at("invite", status::failed, t0, 4, false, false,
                                           "attempts exhausted (4, with max_attempts 3: a check of whether an "
                                           "uncertain call took effect counts as an attempt): E"),
                                        std::nullopt},
                             transition{"reconcile_transient_exhausts",
                                        at("invite", status::calling, t0, 2, true),
                                        failed_with(call_kind::check_invitation, result_kind::transient,
                                                    retry_at, true),
                                        t0,
                                        at("invite", status::failed, t0, 3, false, false,
                                           "attempts exhausted (3): E"),
                                        std::nullopt},
                             transition{
                                 "reconcile_permanent_fails", at("invite", status::calling, t0, 1, true),
                                 failed_with(call_kind::check_invitation, result_kind::permanent, retry_at,
                                             true),
                                 t0, at("invite", status::failed, t0, 1, false, false, "E"), std::nullopt},
                             // found calling after a crash (or a reconciliation due)
                             transition{"due_after_crash_reconciles_invite",
                                        at("invite", status::calling, t0), ev_due{}, later,
                                        at("invite", status::calling, later, 0, true),
                                        make_call(call_kind::check_invitation, "", "", true, call_kind::invite)},
                             transition{"due_reconciles_send_with_its_text",
                                        at("hello", status::calling, t0, 1, true), ev_due{}, later,
                                        at("hello", status::calling, later, 1, true),
                                        make_call(call_kind::get_conversation, "Hey there", "B", true, call_kind::send)},
                             transition{"due_after_crash_reconciles_withdraw",
                                        at("drop", status::calling, t0), ev_due{}, later,
                                        at("drop", status::calling, later, 0, true),
                                        make_call(call_kind::check_invitation, "", "", true, call_kind::withdraw)},
                             transition{"due_after_crash_asks_check_again", at("check", status::calling, t0),
                                        ev_due{}, later, at("check", status::calling, later),
                                        make_call(call_kind::check_invitation)},
                             transition{"due_after_crash_visit_counts_as_done",
                                        at("look", status::calling, t0), ev_due{}, later,
                                        at("", status::done, later), std::nullopt},
                             // other events while calling
                             transition{"deferred_reconciliation", at("invite", status::calling, t0, 1, true),
                                        ev_deferred{later, "quota"}, t0,
                                        at("invite", status::calling, later, 1, true, false, "quota"),
                                        std::nullopt},
                             // a call found after a crash that may not go now: nothing is in flight
                             transition{"deferred_after_crash_invite_waits_to_check", at("invite", status::calling, t0),
                                        ev_deferred{later, "quota"}, t0,
                                        at("invite", status::calling, later, 0, true, false, "quota"),
                                        std::nullopt},
                             transition{"deferred_after_crash_send_waits_to_check", at("hello", status::calling, t0, 1),
                                        ev_deferred{later, "quota"}, t0,
                                        at("hello", status::calling, later, 1, true, false, "quota"),
                                        std::nullopt},
                             transition{"deferred_after_crash_check_is_ready_at_its_step",
                                        at("check", status::calling, t0), ev_deferred{later, "quota"}, t0,
                                        at("check", status::ready, later, 0, false, false, "quota"), std::nullopt},
                             transition{"deferred_timeout_check_is_ready_at_the_wait", at("wait", status::calling, t0),
                                        ev_deferred{later, "quota"}, t0,
                                        at("wait", status::ready, later, 0, false, false, "quota"), std::nullopt},
                             transition{"accepted_while_inviting", at("invite", status::calling, t0),
                                        ev_accepted{}, t0, at("invite", status::calling, t0, 0, false, true),
                                        std::nullopt},
                             transition{"accepted_during_timeout_check", at("wait", status::calling, t0),
                                        ev_accepted{}, later,
                                        at("hello", status::ready, later, 0, false, true), std::nullopt},
                             transition{"replied_while_sending", at("hello", status::calling, t0, 1, true),
                                        ev_replied{}, t0,
                                        at("hello", status::replied, t0, 1, false, false, "the lead replied"),
                                        std::nullopt},
                             transition{
                                 "cancel_while_calling", at("invite", status::calling, t0, 0, true),
                                 ev_cancel{"campaign cancelled"}, t0,
                                 at("invite", status::cancelled, t0, 0, false, false, "campaign cancelled"),
                                 std::nullopt}),
                         case_name<transition>);

const time_point deadline = t0 + day * 7;

INSTANTIATE_TEST_SUITE_P(
    waiting, transitions,
    ::testing::Values(
        transition{"accepted_moves_on_now", at("wait", status::waiting, deadline), ev_accepted{}, later,
                   at("hello", status::ready, later, 0, false, true), std::nullopt},
        transition{"due_at_deadline_checks_first", at("wait", status::waiting, deadline), ev_due{}, deadline,
                   at("wait", status::calling, deadline), make_call(call_kind::check_invitation)},
        transition{"due_after_deadline_checks_first", at("wait", status::waiting, deadline), ev_due{},
                   deadline + day, at("wait", status::calling, deadline + day),
                   make_call(call_kind::check_invitation)},
        transition{"timeout_check_finds_acceptance", at("wait", status::calling, deadline),
                   check_ok(invitation::accepted), deadline,
                   at("hello", status::ready, deadline, 0, false, true), std::nullopt},
        transition{"timeout_check_pending_times_out", at("wait", status::calling, deadline),
                   check_ok(invitation::pending), deadline, at("drop", status::ready, deadline),
                   std::nullopt},
        transition{"timeout_check_none_times_out", at("wait", status::calling, deadline),
                   check_ok(invitation::none), deadline, at("drop", status::ready, deadline), std::nullopt},
        transition{"timeout_check_pending_but_acceptance_seen",
                   at("wait", status::calling, deadline, 0, false, true), check_ok(invitation::pending),
                   deadline, at("hello", status::ready, deadline, 0, false, true), std::nullopt},
        transition{"timeout_check_transient_retries_as_ready", at("wait", status::calling, deadline),
                   failed_with(call_kind::check_invitation, result_kind::transient, deadline + hours(1)),
                   deadline, at("wait", status::ready, deadline + hours(1), 1, false, false, "E"),
                   std::nullopt},
        transition{"deferred_after_deadline", at("wait", status::waiting, deadline),
                   ev_deferred{deadline + day, "hours"}, deadline,
                   at("wait", status::waiting, deadline + day, 0, false, false, "hours"), std::nullopt},
        transition{"replied_while_waiting", at("wait", status::waiting, deadline), ev_replied{}, t0,
                   at("wait", status::replied, deadline, 0, false, false, "the lead replied"), std::nullopt},
        transition{"cancel_while_waiting", at("wait", status::waiting, deadline), ev_cancel{"x"}, t0,
                   at("wait", status::cancelled, deadline, 0, false, false, "x"), std::nullopt}),
    case_name<transition>);

// ---------------------------------------------------------------------------------------------
// Invalid events: in every state, every event that is not valid there leaves it unchanged.

struct refused {
    const char* name;
    enrollment_state state;
    event e;
    time_point now;
    const char* why_fragment;
};

std::ostream& operator<<(std::ostream& out, const refused& r) {
    return out << r.name;
}

class invalid_events : public ::testing::TestWithParam<refused> {};

TEST_P(invalid_events, leave_the_state_unchanged) {
    const refused& r = GetParam();
    decision d = decide(the_campaign, lead, r.state, r.e, r.now);
    EXPECT_FALSE(d.valid);
    EXPECT_EQ(d.next, r.state);
    EXPECT_FALSE(d.call.has_value());
    EXPECT_NE(d.why.find(r.why_fragment), std::string::npos) << d.why;
}

INSTANTIATE_TEST_SUITE_P(
    ready, invalid_events,
    ::testing::Values(
        refused{"due_before_time", at("check", status::ready, later), ev_due{}, t0, "not due before"},
        refused{"delay_due_early", at("pause", status::ready, t0 + day * 3), ev_due{}, t0 + day,
                "not due before"},
        refused{"deferred_before_due", at("check", status::ready, later), ev_deferred{later + day, "x"}, t0,
                "deferred before it was due"},
        refused{"result_ok", at("check", status::ready, t0), check_ok(invitation::none), t0,
                "no call in flight"},
        refused{"result_transient", at("invite", status::ready, t0),
                failed_with(call_kind::invite, result_kind::transient, later), t0, "no call in flight"},
        refused{"result_reconcile", at("invite", status::ready, t0), check_ok(invitation::none, true), t0,
                "no call in flight"}),
    case_name<refused>);

INSTANTIATE_TEST_SUITE_P(
    calling, invalid_events,
    ::testing::Values(
        refused{"result_of_another_call", at("invite", status::calling, t0),
                result(call_kind::send, result_kind::ok), t0, "waits for invite"},
        refused{"call_result_while_reconciling", at("invite", status::calling, t0, 1, true),
                result(call_kind::invite, result_kind::ok), t0, "waits for check_invitation (reconcile)"},
        refused{"reconcile_result_while_calling", at("invite", status::calling, t0),
                check_ok(invitation::pending, true), t0, "waits for invite"},
        refused{"check_ok_without_state", at("check", status::calling, t0),
                result(call_kind::check_invitation, result_kind::ok), t0, "without the invitation state"},
        refused{"timeout_check_without_state", at("wait", status::calling, deadline),
                result(call_kind::check_invitation, result_kind::ok), deadline,
                "without the invitation state"},
        refused{"reconcile_invite_without_state", at("invite", status::calling, t0, 1, true),
                result(call_kind::check_invitation, result_kind::ok, true), t0,
                "without the invitation state"},
        refused{"visit_has_no_reconciliation", at("look", status::calling, t0),
                result(call_kind::check_invitation, result_kind::ok, true), t0, "waits for visit"}),
    case_name<refused>);

INSTANTIATE_TEST_SUITE_P(
    waiting, invalid_events,
    ::testing::Values(refused{"due_before_deadline", at("wait", status::waiting, deadline), ev_due{},
                              deadline - seconds(1), "waiting for the acceptance until"},
                      refused{"deferred_before_deadline", at("wait", status::waiting, deadline),
                              ev_deferred{deadline + day, "x"}, t0, "deferred before it was due"},
                      refused{"result", at("wait", status::waiting, deadline), check_ok(invitation::accepted),
                              deadline, "no call in flight"}),
    case_name<refused>);

// Terminal states refuse every event.
std::vector<refused> terminal_cases() {
    static const std::vector<std::pair<const char*, event>> events = {
        {"due", ev_due{}},
        {"result", check_ok(invitation::accepted)},
        {"deferred", ev_deferred{later, "x"}},
        {"accepted", ev_accepted{}},
        {"replied", ev_replied{}},
        {"cancel", ev_cancel{"x"}},
    };
    static const std::vector<std::pair<const char*, enrollment_state>> states = {
        {"done", at("", status::done, t0)},
        {"replied", at("hello", status::replied, t0, 0, false, false, "the lead replied")},
        {"failed", at("invite", status::failed, t0, 3, false, false, "E")},
        {"cancelled", at("check", status::cancelled, t0, 0, false, false, "x")},
    };
    static std::vector<std::string> names;  // keeps the case names alive
    std::vector<refused> out;
    names.reserve(events.size() * states.size());
    for (const auto& [state_name, state] : states) {
        for (const auto& [event_name, e] : events) {
            names.push_back(std::string(state_name) + "_" + event_name);
            out.push_back({names.back().c_str(), state, e, later, "terminal status"});
        }
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(terminal, invalid_events, ::testing::ValuesIn(terminal_cases()), case_name<refused>);

// The table above is complete: for every status and every kind of event, decide() answers as
// the README's state table says (valid or not), with the events in their most ordinary form.
TEST(decide, validity_matrix) {
    struct row {
        enrollment_state state;
        std::array<bool, 6> valid;  // due, result, deferred, accepted, replied, cancel
    };
    std::vector<row> rows = {
        {at("invite", status::ready, t0), {true, false, true, true, true, true}},
        {at("invite", status::calling, t0), {true, true, true, true, true, true}},
        {at("wait", status::waiting, t0), {true, false, true, true, true, true}},
        {at("", status::done, t0), {false, false, false, false, false, false}},
        {at("hello", status::replied, t0), {false, false, false, false, false, false}},
        {at("invite", status::failed, t0), {false, false, false, false, false, false}},
        {at("invite", status::cancelled, t0), {false, false, false, false, false, false}},
    };
    for (const row& r : rows) {
        ev_result matching =
            result(r.state.step == "wait" ? call_kind::check_invitation : call_kind::invite, result_kind::ok);
        matching.invitation_state = invitation::pending;
        std::array<event, 6> events = {ev_due{},      matching,     ev_deferred{later, "x"},
                                       ev_accepted{}, ev_replied{}, ev_cancel{"x"}};
        for (std::size_t i = 0; i < events.size(); ++i) {
            decision d = decide(the_campaign, lead, r.state, events[i], t0);
            EXPECT_EQ(d.valid, r.valid[i]) << to_string(r.state.st) << " event #" << i << ": " << d.why;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rules that need their own campaign

TEST(decide, outside_working_hours_stays_ready_until_the_window) {
    campaign c = the_campaign;
    c.schedule.days = {true, true, true, true, true, false, false};
    c.schedule.start_minute = 9 * 60;
    c.schedule.end_minute = 17 * 60;
    time_point friday_evening = t0 + day * 4 + hours(8);  // Friday 18:00 UTC
    decision d = decide(c, lead, at("invite", status::ready, t0, 1), ev_due{}, friday_evening);
    EXPECT_TRUE(d.valid);
    EXPECT_FALSE(d.call);
    EXPECT_EQ(d.next, waiting_for(at("invite", status::ready, t0 + day * 7 - hours(1), 1, false, false,
                                     "outside working hours"),
                                  wait_code::schedule));
    // Monday 09:00 the call goes out.
    decision monday = decide(c, lead, d.next, ev_due{}, d.next.next_run_at);
    ASSERT_TRUE(monday.call);
    EXPECT_EQ(monday.call->kind, call_kind::invite);
    // Reconciliation and the timeout check are read-only and not held to working hours.
    EXPECT_TRUE(decide(c, lead, at("invite", status::calling, t0), ev_due{}, friday_evening).call);
    EXPECT_TRUE(decide(c, lead, at("wait", status::waiting, t0), ev_due{}, friday_evening).call);
    // A delay elapses whenever it elapses; the step after it waits for the window.
    EXPECT_EQ(decide(c, lead, at("pause", status::ready, t0), ev_due{}, friday_evening).next,
              at("look", status::ready, friday_evening));
}

TEST(decide, replies_are_ignored_without_stop_on_reply) {
    campaign c = the_campaign;
    c.stop_on_reply = false;
    enrollment_state s = at("pause", status::ready, t0 + day);
    decision d = decide(c, lead, s, ev_replied{}, t0);
    EXPECT_TRUE(d.valid);
    EXPECT_EQ(d.next, s);
    EXPECT_FALSE(d.call);
}

TEST(decide, acceptance_seen_early_skips_the_wait_when_it_comes) {
    // check -> none -> invite (accepted arrives while the invite call is out) -> wait is skipped.
    enrollment_state s = initial_state(the_campaign, t0);
    s = decide(the_campaign, lead, s, ev_due{}, t0).next;
    s = decide(the_campaign, lead, s, check_ok(invitation::none), t0).next;
    s = decide(the_campaign, lead, s, ev_due{}, t0).next;
    ASSERT_EQ(s.st, status::calling);
    s = decide(the_campaign, lead, s, ev_accepted{}, t0).next;
    s = decide(the_campaign, lead, s, result(call_kind::invite, result_kind::ok), t0 + minutes(1)).next;
    EXPECT_EQ(s, at("hello", status::ready, t0 + minutes(1), 0, false, true));
}

TEST(decide, an_invite_refused_as_connected_already_skips_the_wait) {
    // check -> none -> invite, refused: the executor's check finds the connection (ACCEPTED). No
    // acceptance event will come: the lead goes past the wait at once, acceptance seen (it waited
    // out the whole wait step).
    enrollment_state s = initial_state(the_campaign, t0);
    s = decide(the_campaign, lead, s, ev_due{}, t0).next;
    s = decide(the_campaign, lead, s, check_ok(invitation::none), t0).next;
    s = decide(the_campaign, lead, s, ev_due{}, t0).next;
    ASSERT_EQ(s.st, status::calling);
    ev_result connected = result(call_kind::invite, result_kind::ok);
    connected.invitation_state = invitation::accepted;
    decision d = decide(the_campaign, lead, s, connected, t0 + minutes(1));
    EXPECT_TRUE(d.valid) << d.why;
    EXPECT_EQ(d.next, at("hello", status::ready, t0 + minutes(1), 0, false, true));
    // A pending one (invited already) still waits.
    ev_result pending = result(call_kind::invite, result_kind::ok);
    EXPECT_EQ(decide(the_campaign, lead, s, pending, t0).next, at("wait", status::waiting, t0 + day * 7));
}

TEST(decide, a_person_who_invited_the_account_fails_the_lead_at_once) {
    // PENDING of type RECEIVED: the person invited the account. No acceptance of ours can come, so
    // the lead fails with what to do, from the check step, from a refused invite (the executor's
    // check after the refusal) and from an invite's reconciliation, where it waited out its wait.
    const std::string what = "the person has invited this account (an invitation PENDING, of type RECEIVED): a "
                             "campaign does not accept invitations; accept it on the platform, then retry the lead";
    decision checked = decide(the_campaign, lead, at("check", status::calling, t0), check_ok(invitation::received), later);
    EXPECT_TRUE(checked.valid) << checked.why;
    EXPECT_EQ(checked.next, at("check", status::failed, t0, 0, false, false, what));

    ev_result refused = result(call_kind::invite, result_kind::ok);
    refused.invitation_state = invitation::received;
    refused.reason = "CHANNEL_ERROR: already invited";
    decision invited = decide(the_campaign, lead, at("invite", status::calling, t0, 1), refused, later);
    EXPECT_TRUE(invited.valid) << invited.why;
    EXPECT_EQ(invited.next, at("invite", status::failed, t0, 1, false, false,
                               what + " (the invite's refusal: CHANNEL_ERROR: already invited)"));

    decision reconciled = decide(the_campaign, lead, at("invite", status::calling, t0, 1, true),
                                 check_ok(invitation::received, true), later);
    EXPECT_TRUE(reconciled.valid) << reconciled.why;
    EXPECT_EQ(reconciled.next, at("invite", status::failed, t0, 1, false, false, what));

    // A withdraw finds nothing of ours, and a wait's timeout check no acceptance.
    EXPECT_EQ(decide(the_campaign, lead, at("drop", status::calling, t0, 1, true), check_ok(invitation::received, true), t0)
                  .next,
              at("", status::done, t0));
    EXPECT_EQ(decide(the_campaign, lead, at("wait", status::calling, deadline), check_ok(invitation::received), deadline)
                  .next.step,
              "drop");
}

TEST(decide, a_whole_sequence) {
    enrollment_state s = initial_state(the_campaign, t0);
    EXPECT_EQ(s, at("check", status::ready, t0));
    auto step = [&](const event& e, time_point now) {
        decision d = decide(the_campaign, lead, s, e, now);
        EXPECT_TRUE(d.valid) << d.why;
        s = d.next;
        return d.call;
    };
    EXPECT_EQ(step(ev_due{}, t0)->kind, call_kind::check_invitation);
    step(check_ok(invitation::none), t0);
    EXPECT_EQ(step(ev_due{}, t0)->text, "Hi Ada");
    step(result(call_kind::invite, result_kind::ok), t0);
    EXPECT_EQ(s, at("wait", status::waiting, t0 + day * 7));
    step(ev_accepted{}, t0 + day * 2);
    EXPECT_EQ(step(ev_due{}, t0 + day * 2)->variant, "B");
    step(result(call_kind::send, result_kind::ok), t0 + day * 2);
    EXPECT_EQ(s, at("pause", status::ready, t0 + day * 5, 0, false, true));
    EXPECT_FALSE(step(ev_due{}, t0 + day * 5));
    EXPECT_EQ(step(ev_due{}, t0 + day * 5)->kind, call_kind::visit);
    step(result(call_kind::visit, result_kind::ok), t0 + day * 5);
    EXPECT_EQ(s, at("", status::done, t0 + day * 5, 0, false, true));
}

TEST(initial_state, enters_the_first_step) {
    campaign c = the_campaign;
    EXPECT_EQ(initial_state(c, t0), at("check", status::ready, t0));
    c.steps.insert(c.steps.begin(), make_step("first_pause", step_kind::delay, "check"));
    c.steps.front().duration = hours(2);
    EXPECT_EQ(initial_state(c, t0), at("first_pause", status::ready, t0 + hours(2)));
    c.steps.front() = make_step("w", step_kind::wait_accepted, "check");
    c.steps.front().timeout = hours(3);
    EXPECT_EQ(initial_state(c, t0), at("w", status::waiting, t0 + hours(3)));
    c.steps.front() = make_step("stop", step_kind::end);
    EXPECT_EQ(initial_state(c, t0), at("", status::done, t0));
}

TEST(choose_variant, is_a_stable_fnv1a_hash_of_lead_and_step) {
    const step& hello = *find_step(the_campaign, "hello");
    // fmix64(fnv1a64(key + '\0' + "hello")) % 2, computed independently: 1, 1, 0, 1, 1.
    const char* expected[] = {"B", "B", "A", "B", "B"};
    for (int i = 1; i <= 5; ++i) {
        lead_view l{"lead-" + std::to_string(i), {}};
        EXPECT_EQ(choose_variant(hello, l).name, expected[i - 1]) << l.key;
    }
    step three = hello;
    three.variants.push_back({"C", {"x"}});
    EXPECT_EQ(choose_variant(three, lead_view{"https://www.network.example/in/ada-lovelace", {}}).name, "B");
    EXPECT_EQ(choose_variant(three, lead_view{"lead-1", {}}).name, "A");  // % 3 == 0
    // The step id takes part, and two steps' choices are independent (about half agree).
    int same = 0;
    step renamed = hello;
    renamed.id = "hello_again";
    for (int i = 0; i < 200; ++i) {
        lead_view l{"k" + std::to_string(i), {}};
        same += choose_variant(hello, l).name == choose_variant(renamed, l).name ? 1 : 0;
    }
    EXPECT_GT(same, 60);
    EXPECT_LT(same, 140);
}

TEST(choose_variant, splits_leads_evenly) {
    const step& hello = *find_step(the_campaign, "hello");
    int a = 0;
    for (int i = 0; i < 10000; ++i) {
        a += choose_variant(hello, lead_view{"lead-" + std::to_string(i), {}}).name == "A" ? 1 : 0;
    }
    EXPECT_GT(a, 4700);
    EXPECT_LT(a, 5300);
}

// The wait code travels with the reason: kept while the reason is kept, replaced with it.
TEST(decide, a_wait_code_travels_with_its_reason) {
    enrollment_state s = waiting_for(at("invite", status::ready, t0, 1, false, false, "waiting for the key"),
                                     wait_code::key_rate);
    // An event that keeps the reason keeps the code.
    EXPECT_EQ(decide(the_campaign, lead, s, ev_accepted{}, t0).next.wait, wait_code::key_rate);
    // Deferred again for another cause: the new code.
    decision again = decide(the_campaign, lead, s, ev_deferred{t0 + day, "budget", wait_code::day_budget}, t0);
    ASSERT_TRUE(again.valid);
    EXPECT_EQ(again.next.wait, wait_code::day_budget);
    EXPECT_EQ(again.next.reason, "budget");
    // The call goes out, succeeds: the next step waits for nothing.
    decision call = decide(the_campaign, lead, s, ev_due{}, t0);
    ASSERT_TRUE(call.call);
    decision ok = decide(the_campaign, lead, call.next, result(call_kind::invite, result_kind::ok), t0);
    ASSERT_TRUE(ok.valid);
    EXPECT_EQ(ok.next.wait, wait_code::none);
    EXPECT_EQ(ok.next.reason, "");
    // A transient failure's reason is the error, no wait; a permanent one fails the lead.
    ev_result transient = result(call_kind::invite, result_kind::transient);
    transient.reason = "HTTP 503";
    transient.retry_at = t0 + minutes(5);
    EXPECT_EQ(decide(the_campaign, lead, call.next, transient, t0).next.wait, wait_code::none);
    ev_result permanent = result(call_kind::invite, result_kind::permanent);
    permanent.reason = "FORBIDDEN";
    decision failed = decide(the_campaign, lead, call.next, permanent, t0);
    EXPECT_EQ(failed.next.st, status::failed);
    EXPECT_EQ(failed.next.wait, wait_code::none);
    // Cancelled or replied: no wait.
    EXPECT_EQ(decide(the_campaign, lead, s, ev_cancel{"dnc"}, t0).next.wait, wait_code::none);
    EXPECT_EQ(decide(the_campaign, lead, s, ev_replied{}, t0).next.wait, wait_code::none);
}

TEST(machine_names, wait_codes_round_trip) {
    std::set<std::string> seen;
    for (wait_code w : all_wait_codes) {
        const std::string name = to_string(w);
        EXPECT_TRUE(seen.insert(name).second) << name << " is not unique";
        auto back = wait_code_from_string(name);
        ASSERT_TRUE(back.has_value()) << name;
        EXPECT_EQ(*back, w) << name;
    }
    EXPECT_EQ(seen.size(), all_wait_codes.size());
    EXPECT_STREQ(to_string(wait_code::day_quota), "day_quota");
    EXPECT_STREQ(to_string(wait_code::account_budget), "account_budget");
    EXPECT_FALSE(wait_code_from_string("").has_value());
    EXPECT_FALSE(wait_code_from_string("Day_quota").has_value());
    EXPECT_FALSE(wait_code_from_string("waiting for the invite day quota of account a").has_value());
}

TEST(machine_names, statuses_and_calls) {
    EXPECT_STREQ(to_string(status::waiting), "waiting");
    EXPECT_STREQ(to_string(call_kind::get_conversation), "get_conversation");
    EXPECT_TRUE(is_terminal(status::replied));
    EXPECT_FALSE(is_terminal(status::calling));
    EXPECT_TRUE(is_side_effecting(call_kind::visit));
    EXPECT_FALSE(is_side_effecting(call_kind::get_conversation));
    EXPECT_FALSE(is_side_effecting(call_kind::check_invitation));
}

}  // namespace

namespace {

// hello (send) -> pause (delay) -> again (send): `again` is a follow-up.
campaign follow_up_campaign(bool stop_on_reply) {
    campaign c = the_campaign;
    c.stop_on_reply = stop_on_reply;
    step pause = make_step("pause", step_kind::delay, "again");
    pause.duration = day;
    step again = make_step("again", step_kind::send, "fin");
    again.variants = {{"A", {"Following up, {{first_name}}"}}};
    for (auto& s : c.steps) {
        if (s.id == "pause") {
            s = pause;
        }
    }
    c.steps.push_back(again);
    return c;
}

}  // namespace

TEST(decide, a_follow_up_of_a_stop_on_reply_campaign_confirms_no_reply_first) {
    const campaign c = follow_up_campaign(true);
    // The first message is no follow-up: nothing was sent before it.
    auto first = decide(c, lead, at("hello", status::ready, t0), ev_due{}, t0);
    ASSERT_TRUE(first.call);
    EXPECT_FALSE(first.call->confirm_no_reply);
    auto again = decide(c, lead, at("again", status::ready, t0), ev_due{}, t0);
    ASSERT_TRUE(again.call);
    EXPECT_EQ(again.call->kind, call_kind::send);
    EXPECT_TRUE(again.call->confirm_no_reply);
    // Without stop_on_reply a follow-up is sent as it is; a reconciliation never reads twice.
    EXPECT_FALSE(decide(follow_up_campaign(false), lead, at("again", status::ready, t0), ev_due{}, t0)
                     .call->confirm_no_reply);
    enrollment_state calling = again.next;
    calling.reconcile = true;
    auto reconcile = decide(c, lead, calling, ev_due{}, t0);
    ASSERT_TRUE(reconcile.call);
    EXPECT_FALSE(reconcile.call->confirm_no_reply);
}

TEST(decide, a_reply_found_before_the_follow_up_ends_the_lead_as_replied) {
    const campaign c = follow_up_campaign(true);
    auto d = decide(c, lead, at("again", status::ready, t0), ev_due{}, t0);
    ev_result found = result(call_kind::send, result_kind::ok);
    found.reply_found = true;
    auto after = decide(c, lead, d.next, found, t0 + minutes(1));
    ASSERT_TRUE(after.valid) << after.why;
    EXPECT_EQ(after.next.st, status::replied);
    EXPECT_FALSE(after.call);
    // A send that went out moves on as before.
    auto sent = decide(c, lead, d.next, result(call_kind::send, result_kind::ok), t0 + minutes(1));
    EXPECT_EQ(sent.next.st, status::done);
}
