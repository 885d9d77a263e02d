// engine/planner: the cycle's decisions as pure functions (no database, no clock, no API); and
// the orders they run in: engine/cycle_plan (a cycle's plan over the gate and ledger ports) and
// engine/lane_cycle (a lane's transaction over the store port).
#include "campaigns/campaigns.hpp"
#include "engine/cycle_plan.hpp"
#include "engine/lane_cycle.hpp"
#include "engine/planner.hpp"
#include "tests/sim/sim.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

namespace {

namespace cs = orch::campaigns;
namespace planner = orch::engine::planner;
using orch::engine::attempt_outcome;
using orch::engine::call_outcome;
using orch::engine::event_kind;

const cs::time_point t0 = cs::time_point{} + std::chrono::seconds{1709546400};

// invite -> wait (3 d) -> intro -> ... (tests/sim's campaign)
const cs::campaign campaign = orch::sim::sim_campaign(1, 100);
const cs::lead_view lead{"1", {{"first_name", "Ada"}}};

planner::row fresh() { return {&campaign, &lead, cs::initial_state(campaign, t0), 0}; }

TEST(Planner, ProposesTheDueCallWithoutMovingTheState) {
    auto r = fresh();
    const auto before = r.state;
    auto d = planner::propose(r, {}, t0);
    ASSERT_TRUE(d);
    ASSERT_TRUE(d->call);
    EXPECT_EQ(d->call->kind, cs::call_kind::invite);
    EXPECT_EQ(r.state.st, before.st);  // moved only by take()
    EXPECT_EQ(r.state.step, "invite");
}

TEST(Planner, AppliesOnlyNewEventsAndTakesStepsWithoutACall) {
    auto r = fresh();
    auto d = planner::propose(r, {}, t0);
    r.state = d->next;  // invited: calling
    call_outcome ok;
    ok.event.call = cs::call_kind::invite;
    auto s = planner::settle(r, *d->call, ok, t0);
    EXPECT_EQ(s.next.step, "wait");
    EXPECT_EQ(s.next.st, cs::status::waiting);
    r.state = s.next;
    r.event_cursor = 5;
    // An event at or below the cursor was applied before (a duplicate delivery): skipped.
    const std::vector<planner::inbox_event> old{{5, event_kind::accepted_invitation}};
    EXPECT_FALSE(planner::propose(r, old, t0 + std::chrono::minutes(1)));
    EXPECT_EQ(r.state.step, "wait");
    const std::vector<planner::inbox_event> fresh_event{{6, event_kind::accepted_invitation}};
    auto next = planner::propose(r, fresh_event, t0 + std::chrono::minutes(1));
    EXPECT_EQ(r.event_cursor, 6);
    ASSERT_TRUE(next);  // the wait step passed on to intro, whose send is due now
    EXPECT_EQ(next->call->kind, cs::call_kind::send);
}

TEST(Planner, ARefusingVerdictParksTheLeadUntilItsTimeWithAttemptsUnchanged) {
    for (bool gate_refuses : {true, false}) {
        auto r = fresh();
        auto d = planner::propose(r, {}, t0);
        ASSERT_TRUE(d);
        planner::verdict gate, ledger;
        if (gate_refuses) {
            gate = {false, t0 + std::chrono::hours(2), "day quota", cs::wait_code::day_quota};
        } else {
            ledger = planner::ledger_refused(orch::engine::budget_refusal::day_budget, t0 + std::chrono::hours(14),
                                             "acc_1", t0);
        }
        auto call = planner::take(r, *d, gate, ledger, t0);
        EXPECT_FALSE(call);
        EXPECT_EQ(r.state.st, cs::status::ready);
        EXPECT_EQ(r.state.step, "invite");
        EXPECT_EQ(r.state.attempt, 0);
        EXPECT_EQ(r.state.next_run_at, t0 + std::chrono::hours(gate_refuses ? 2 : 14));
        EXPECT_EQ(r.state.wait, gate_refuses ? cs::wait_code::day_quota : cs::wait_code::day_budget);
    }
    auto r = fresh();
    auto d = planner::propose(r, {}, t0);
    auto call = planner::take(r, *d, {}, {}, t0);
    ASSERT_TRUE(call);
    EXPECT_EQ(r.state.st, cs::status::calling);
}

// A call found after a crash (calling, its outcome never written: reconcile not set) whose check
// the daily cap refuses waits for the cap as one to check: reconcile set, the cap's code and time.
// Before, it kept reconcile unset, read as a call in flight, and a removed cap did not wake it
// (a trial's three follow-ups stuck until midnight UTC).
TEST(Planner, ACrashFoundCallsRefusedCheckWaitsAsOneToCheck) {
    auto r = fresh();
    auto d = planner::propose(r, {}, t0);
    ASSERT_TRUE(planner::take(r, *d, {}, {}, t0));  // invited: calling, the worker then died
    ASSERT_EQ(r.state.st, cs::status::calling);
    ASSERT_FALSE(r.state.reconcile);
    const auto later = t0 + std::chrono::minutes(10);
    auto check = planner::propose(r, {}, later);
    ASSERT_TRUE(check && check->call);
    EXPECT_TRUE(check->call->reconcile);
    EXPECT_EQ(check->call->kind, cs::call_kind::check_invitation);
    auto ledger = planner::ledger_refused(orch::engine::budget_refusal::day_budget, t0 + std::chrono::hours(14),
                                          "acc_1", later);
    EXPECT_FALSE(planner::take(r, *check, {}, ledger, later));
    EXPECT_EQ(r.state.st, cs::status::calling);
    EXPECT_TRUE(r.state.reconcile);
    EXPECT_EQ(r.state.wait, cs::wait_code::day_budget);
    EXPECT_EQ(r.state.next_run_at, t0 + std::chrono::hours(14));
    // Due again (the cap removed): the check is proposed, as for any uncertain outcome.
    auto again = planner::propose(r, {}, later + std::chrono::minutes(1));
    ASSERT_TRUE(again && again->call);
    EXPECT_TRUE(again->call->reconcile);
}

// A read found after a crash (the wait's timeout check, its outcome never written) that the daily
// cap refuses: nothing is in flight, so the lead is ready at the wait step, waiting for the cap
// like any lead, and asks again once due. Before, it stayed calling with nothing to check, read as
// a call in flight, and no cap change woke it (a trial's ten check steps, stuck until midnight).
TEST(Planner, ACrashFoundReadRefusedByTheCapIsReadyAtItsStep) {
    auto r = fresh();
    auto d = planner::propose(r, {}, t0);
    ASSERT_TRUE(planner::take(r, *d, {}, {}, t0));
    call_outcome ok;
    ok.event.call = cs::call_kind::invite;
    r.state = planner::settle(r, *d->call, ok, t0).next;
    ASSERT_EQ(r.state.st, cs::status::waiting);
    const auto timeout = t0 + std::chrono::hours(24 * 3 + 1);
    auto check = planner::propose(r, {}, timeout);
    ASSERT_TRUE(check && check->call);
    ASSERT_FALSE(check->call->reconcile);
    ASSERT_TRUE(planner::take(r, *check, {}, {}, timeout));  // the timeout check: calling, the worker then died
    ASSERT_EQ(r.state.st, cs::status::calling);
    const auto later = timeout + std::chrono::minutes(10);
    auto again = planner::propose(r, {}, later);
    ASSERT_TRUE(again && again->call);
    EXPECT_EQ(again->call->kind, cs::call_kind::check_invitation);
    EXPECT_FALSE(again->call->reconcile);
    auto ledger = planner::ledger_refused(orch::engine::budget_refusal::day_budget, later + std::chrono::hours(5),
                                          "acc_1", later);
    EXPECT_FALSE(planner::take(r, *again, {}, ledger, later));
    EXPECT_EQ(r.state.st, cs::status::ready);
    EXPECT_FALSE(r.state.reconcile);
    EXPECT_EQ(r.state.step, "wait");
    EXPECT_EQ(r.state.wait, cs::wait_code::day_budget);
    EXPECT_EQ(r.state.next_run_at, later + std::chrono::hours(5));
    auto due = planner::propose(r, {}, later + std::chrono::hours(5));
    ASSERT_TRUE(due && due->call);
    EXPECT_EQ(due->call->kind, cs::call_kind::check_invitation);
}

TEST(Planner, TheLedgerPostsWhatMayHaveBeenChargedAndVoidsWhatCostNothing) {
    auto r = fresh();
    auto d = planner::propose(r, {}, t0);
    r.state = d->next;
    const auto bound = orch::engine::credits_upper_bound(*d->call);
    call_outcome o;
    o.event.call = cs::call_kind::invite;
    o.credits = 1;
    auto s = planner::settle(r, *d->call, o, t0);
    EXPECT_TRUE(s.ledger.post);
    EXPECT_EQ(s.ledger.credits, 1);

    call_outcome uncertain = o;
    uncertain.event.kind = cs::result_kind::uncertain;
    uncertain.attempt_outcome = attempt_outcome::uncertain;
    uncertain.credits = 0;
    s = planner::settle(r, *d->call, uncertain, t0);
    EXPECT_TRUE(s.ledger.post);
    EXPECT_EQ(s.ledger.credits, bound);

    call_outcome nothing = o;
    nothing.event.kind = cs::result_kind::transient;
    nothing.event.retry_at = t0 + std::chrono::seconds(5);
    nothing.attempt_outcome = attempt_outcome::transient;
    nothing.credits = 0;
    s = planner::settle(r, *d->call, nothing, t0);
    EXPECT_FALSE(s.ledger.post);
    EXPECT_EQ(s.next.attempt, 1);

    // A read whose answer was lost after it reached the API may have been billed.
    nothing.unknown_charge = true;
    s = planner::settle(r, *d->call, nothing, t0);
    EXPECT_TRUE(s.ledger.post);
    EXPECT_EQ(s.ledger.credits, bound);

    // When the outcome says which request was lost, the post is what the answered requests cost
    // and the most the lost one could have: the requests never sent after it cost nothing.
    uncertain.lost_credits = 1;
    s = planner::settle(r, *d->call, uncertain, t0);
    EXPECT_TRUE(s.ledger.post);
    EXPECT_EQ(s.ledger.credits, 1);
    EXPECT_LT(s.ledger.credits, bound);
    nothing.credits = 1;
    nothing.lost_credits = 1;
    s = planner::settle(r, *d->call, nothing, t0);
    EXPECT_TRUE(s.ledger.post);
    EXPECT_EQ(s.ledger.credits, 2);
}

TEST(Planner, AnOutcomeTheMachineRefusesFailsTheLeadWithTheReason) {
    auto r = fresh();
    auto d = planner::propose(r, {}, t0);
    r.state = d->next;
    call_outcome wrong;
    wrong.event.call = cs::call_kind::send;  // not the call the step made
    auto s = planner::settle(r, *d->call, wrong, t0);
    EXPECT_FALSE(s.refused.empty());
    EXPECT_EQ(s.next.st, cs::status::failed);
    EXPECT_NE(s.next.reason.find("internal: "), std::string::npos);
}

}  // namespace

namespace {

// plan_cycle over a gate that counts its takes and a ledger port that answers twice (allowed,
// then, after undoing, refused), as the worker's Postgres ledger does when its fast path gives way.
struct counting_gate final : orch::engine::call_gate {
    int taken = 0, given_back = 0;
    orch::engine::gate_decision before(const orch::engine::call_target&, const cs::campaign&, const cs::api_call&,
                                       cs::time_point) override {
        ++taken;
        return {};
    }
    std::optional<cs::time_point> after(const orch::engine::call_target&, const cs::campaign&, const cs::api_call&,
                                        const call_outcome&) override {
        return std::nullopt;
    }
    void released(const orch::engine::call_target&, const cs::campaign&, const cs::api_call&) override {
        ++given_back;
    }
};

struct twice_ledger final : orch::engine::ledger_port {
    void reserve(std::span<const orch::engine::ledger_ask> asks,
                 const std::function<void(std::span<const planner::verdict>)>& write) override {
        write(std::vector<planner::verdict>(asks.size()));  // the fast path's answer, then undone
        std::vector<planner::verdict> locked(asks.size());
        locked[0] = planner::ledger_refused(orch::engine::budget_refusal::campaign_budget, t0, "acc_1", t0);
        write(locked);
    }
};

// Two fresh leads whose invitations are due, and the ports over `gate` and `ledger` (attempt
// ids from 100 on).
std::vector<orch::engine::plan_item> two_items() {
    std::vector<orch::engine::plan_item> items(2);
    for (std::size_t i = 0; i < items.size(); ++i) {
        items[i].row = fresh();
        items[i].target.enrollment_id = static_cast<std::int64_t>(i + 1);
    }
    return items;
}
orch::engine::plan_ports ports_over(orch::engine::call_gate& gate, orch::engine::ledger_port& ledger) {
    orch::engine::plan_ports ports;
    ports.gate = &gate;
    ports.ledger = &ledger;
    ports.attempt_ids = [next = std::int64_t{100}](std::size_t n) mutable {
        std::vector<std::int64_t> ids;
        for (std::size_t i = 0; i < n; ++i) {
            ids.push_back(next++);
        }
        return ids;
    };
    return ports;
}

TEST(PlanCycle, ALedgerThatAnswersTwiceLeavesTheLastAnswerAndGivesBackOnce) {
    counting_gate gate;
    twice_ledger ledger;
    auto items = two_items();
    const auto ports = ports_over(gate, ledger);
    int writes = 0;
    orch::engine::plan_cycle(items, ports, t0, [&] { ++writes; });
    EXPECT_EQ(writes, 2);
    EXPECT_EQ(gate.taken, 2);
    EXPECT_EQ(gate.given_back, 1);  // the refused call's take, once
    EXPECT_FALSE(items[0].call);
    EXPECT_EQ(items[0].attempt_id, 0);
    EXPECT_EQ(items[0].row.state.st, cs::status::ready);
    EXPECT_EQ(items[0].row.state.wait, cs::wait_code::campaign_budget);
    ASSERT_TRUE(items[1].call);
    EXPECT_EQ(items[1].attempt_id, 101);
    EXPECT_EQ(items[1].row.state.st, cs::status::calling);
}

struct failing_ledger final : orch::engine::ledger_port {
    void reserve(std::span<const orch::engine::ledger_ask> asks,
                 const std::function<void(std::span<const planner::verdict>)>& write) override {
        write(std::vector<planner::verdict>(asks.size()));
        throw std::runtime_error("the transaction failed");
    }
};

TEST(PlanCycle, AFailedCycleGivesBackEveryTakeAndLeavesNoCall) {
    counting_gate gate;
    failing_ledger ledger;
    auto items = two_items();
    const auto ports = ports_over(gate, ledger);
    EXPECT_THROW(orch::engine::plan_cycle(items, ports, t0, [] {}), std::runtime_error);
    EXPECT_EQ(gate.taken, 2);
    EXPECT_EQ(gate.given_back, 2);
    EXPECT_FALSE(items[0].call);
    EXPECT_FALSE(items[1].call);
}

// A gate that allows the lead of enrollment 1 and holds the others back: enrollment 2 for the
// key's rate (a moment), 3 for the account's day quota (a day).
struct key_busy_gate final : orch::engine::call_gate {
    orch::engine::gate_decision before(const orch::engine::call_target& t, const cs::campaign&, const cs::api_call&,
                                       cs::time_point now) override {
        if (t.enrollment_id == 1) {
            return {};
        }
        if (t.enrollment_id == 2) {
            return {false, now + std::chrono::milliseconds(200), "waiting for the API key's request rate",
                    cs::wait_code::key_rate};
        }
        return {false, now + std::chrono::hours(10), "day quota", cs::wait_code::day_quota};
    }
    std::optional<cs::time_point> after(const orch::engine::call_target&, const cs::campaign&, const cs::api_call&,
                                        const call_outcome&) override {
        return std::nullopt;
    }
    void released(const orch::engine::call_target&, const cs::campaign&, const cs::api_call&) override {}
    void waits_elsewhere(const orch::engine::call_target& t, cs::time_point) override {
        elsewhere.push_back(t.enrollment_id);
    }
    std::vector<std::int64_t> elsewhere;  // the leads told to wait for something else after all
};

// Refuses every reservation for the day cap; standing_refusals refuses too when `standing`.
struct day_cap_ledger final : orch::engine::ledger_port {
    bool standing = false;
    int asked = 0;
    void reserve(std::span<const orch::engine::ledger_ask> asks,
                 const std::function<void(std::span<const planner::verdict>)>& write) override {
        write(std::vector<planner::verdict>(
            asks.size(), planner::ledger_refused(orch::engine::budget_refusal::day_budget, t0 + std::chrono::hours(14),
                                                 "acc_1", t0)));
    }
    std::vector<planner::verdict> standing_refusals(std::span<const orch::engine::ledger_ask> asks,
                                                    cs::time_point now) override {
        asked += static_cast<int>(asks.size());
        if (!standing) {
            return std::vector<planner::verdict>(asks.size());
        }
        return std::vector<planner::verdict>(
            asks.size(), planner::ledger_refused(orch::engine::budget_refusal::day_budget, t0 + std::chrono::hours(14),
                                                 "acc_1", now));
    }
};

std::vector<orch::engine::plan_item> items_of(std::initializer_list<std::int64_t> enrollments) {
    std::vector<orch::engine::plan_item> items;
    for (auto id : enrollments) {
        items.emplace_back();
        items.back().row = fresh();
        items.back().target.enrollment_id = id;
        items.back().target.campaign_id = 7;
    }
    return items;
}

// The ledger refused the allowed call for the day cap: the call of the same campaign that the
// key's rate held back waits for the cap with it, without asking the ledger again; the one the
// account's day quota holds keeps its own wait.
TEST(PlanCycle, ACallTheKeysRateHoldsWaitsForTheDayCapThatRefusedItsCampaignsCall) {
    key_busy_gate gate;
    day_cap_ledger ledger;
    auto items = items_of({1, 2, 3});
    orch::engine::plan_cycle(items, ports_over(gate, ledger), t0, [] {});
    EXPECT_EQ(ledger.asked, 0);   // a campaign with a call allowed is the reserve's to answer
    for (const auto& it : items) {
        EXPECT_FALSE(it.call);
    }
    EXPECT_EQ(items[0].row.state.wait, cs::wait_code::day_budget);
    EXPECT_EQ(items[1].row.state.wait, cs::wait_code::day_budget);
    EXPECT_EQ(items[1].row.state.next_run_at, t0 + std::chrono::hours(14));
    EXPECT_EQ(items[2].row.state.wait, cs::wait_code::day_quota);
    // The gate is told, so that the turn it gave lead 2 for the key's rate goes to another.
    EXPECT_EQ(gate.elsewhere, std::vector<std::int64_t>{2});

    // Of another campaign, it keeps the key's wait.
    auto other = items_of({1, 2});
    other[1].target.campaign_id = 8;
    orch::engine::plan_cycle(other, ports_over(gate, ledger), t0, [] {});
    EXPECT_EQ(other[1].row.state.wait, cs::wait_code::key_rate);
}

// A call allowed for one sender answers for its own cap and the campaign's day cap, not for
// another sender's: the held call of the campaign's other sender is asked about standing caps,
// and waits for its sender's used-up cap (before, it waited for the key's turn again and again).
TEST(PlanCycle, ACallHeldForAnotherSenderOfACampaignWithACallAllowedIsAskedAboutItsCap) {
    // Reserves every call; acc_1's cap on the campaign is used up.
    struct sender_cap_ledger final : orch::engine::ledger_port {
        std::vector<std::string> asked;
        void reserve(std::span<const orch::engine::ledger_ask> asks,
                     const std::function<void(std::span<const planner::verdict>)>& write) override {
            write(std::vector<planner::verdict>(asks.size()));
        }
        std::vector<planner::verdict> standing_refusals(std::span<const orch::engine::ledger_ask> asks,
                                                        cs::time_point now) override {
            std::vector<planner::verdict> out;
            for (const auto& a : asks) {
                asked.push_back(a.item->target.account_id);
                out.push_back(a.item->target.account_id != "acc_1"
                                  ? planner::verdict{}
                                  : planner::ledger_refused(orch::engine::budget_refusal::account_budget,
                                                            cs::time_point::max(), "acc_1", now));
            }
            return out;
        }
    };
    key_busy_gate gate;
    sender_cap_ledger ledger;
    auto items = items_of({1, 2});
    items[0].target.account_id = "acc_2";   // allowed
    items[1].target.account_id = "acc_1";   // held for the key's rate
    orch::engine::plan_cycle(items, ports_over(gate, ledger), t0, [] {});
    EXPECT_EQ(ledger.asked, std::vector<std::string>{"acc_1"});
    EXPECT_TRUE(items[0].call);
    EXPECT_EQ(items[1].row.state.wait, cs::wait_code::account_budget);
    EXPECT_FALSE(items[1].call);
    EXPECT_EQ(gate.elsewhere, std::vector<std::int64_t>{2});

    // A held call of the allowed call's own sender is the reserve's to answer.
    auto same = items_of({1, 2});
    same[0].target.account_id = "acc_1";
    same[1].target.account_id = "acc_1";
    ledger.asked.clear();
    orch::engine::plan_cycle(same, ports_over(gate, ledger), t0, [] {});
    EXPECT_TRUE(ledger.asked.empty());
    EXPECT_EQ(same[1].row.state.wait, cs::wait_code::key_rate);
}

// No call of the campaign got through the gate: the ledger is asked, without reserving, whether
// a cap refuses the held call for long; if so it waits for the cap, else for the key.
TEST(PlanCycle, ACallTheKeysRateHoldsAsksTheLedgerWhetherACapRefusesIt) {
    key_busy_gate gate;
    day_cap_ledger ledger;
    auto items = items_of({2, 3});
    orch::engine::plan_cycle(items, ports_over(gate, ledger), t0, [] {});
    EXPECT_EQ(ledger.asked, 1);   // the key's rate only: a day quota's wait is long already
    EXPECT_EQ(items[0].row.state.wait, cs::wait_code::key_rate);
    EXPECT_EQ(items[1].row.state.wait, cs::wait_code::day_quota);

    EXPECT_TRUE(gate.elsewhere.empty());

    ledger.standing = true;
    items = items_of({2, 3});
    orch::engine::plan_cycle(items, ports_over(gate, ledger), t0, [] {});
    EXPECT_EQ(gate.elsewhere, std::vector<std::int64_t>{2});
    EXPECT_EQ(items[0].row.state.wait, cs::wait_code::day_budget);
    EXPECT_EQ(items[0].row.state.next_run_at, t0 + std::chrono::hours(14));
    EXPECT_FALSE(items[0].call);
    EXPECT_EQ(items[1].row.state.wait, cs::wait_code::day_quota);
}

// The ledger's read for a held call fails: the cycle fails like any other, and the take the gate
// made for the call it allowed is given back.
TEST(PlanCycle, AFailedStandingRefusalReadGivesBackTheGatesTakes) {
    struct counting_busy_gate final : orch::engine::call_gate {
        int taken = 0, given_back = 0;
        orch::engine::gate_decision before(const orch::engine::call_target& t, const cs::campaign&, const cs::api_call&,
                                           cs::time_point now) override {
            if (t.enrollment_id == 1) {
                ++taken;
                return {};
            }
            return {false, now + std::chrono::milliseconds(200), "key rate", cs::wait_code::key_rate};
        }
        std::optional<cs::time_point> after(const orch::engine::call_target&, const cs::campaign&, const cs::api_call&,
                                            const call_outcome&) override {
            return std::nullopt;
        }
        void released(const orch::engine::call_target&, const cs::campaign&, const cs::api_call&) override {
            ++given_back;
        }
    };
    struct failing_read_ledger final : orch::engine::ledger_port {
        void reserve(std::span<const orch::engine::ledger_ask> asks,
                     const std::function<void(std::span<const planner::verdict>)>& write) override {
            write(std::vector<planner::verdict>(asks.size()));
        }
        std::vector<planner::verdict> standing_refusals(std::span<const orch::engine::ledger_ask>,
                                                        cs::time_point) override {
            throw std::runtime_error("the read failed");
        }
    };
    counting_busy_gate gate;
    failing_read_ledger ledger;
    auto items = items_of({1, 2});
    items[1].target.campaign_id = 8;   // no call of its campaign got through: the ledger is asked
    EXPECT_THROW(orch::engine::plan_cycle(items, ports_over(gate, ledger), t0, [] {}), std::runtime_error);
    EXPECT_EQ(gate.taken, 1);
    EXPECT_EQ(gate.given_back, 1);
    EXPECT_FALSE(items[0].call);
}

// ---- engine/lane_cycle over a store that records what it is asked ----

namespace eng = orch::engine;

struct allowing_ledger final : eng::ledger_port {
    void reserve(std::span<const eng::ledger_ask> asks,
                 const std::function<void(std::span<const planner::verdict>)>& write) override {
        write(std::vector<planner::verdict>(asks.size()));
    }
};

// Holds on to every row the cycle marks due_now (as engine/chain_hold does to those its lane
// still leases), claims from `due`, and fails its commits while `fail_commits`.
struct recording_store : eng::lane_store {
    std::vector<eng::lane_row> due;
    bool fail_commits = false;
    int settles = 0, settles_again = 0, writes = 0, commits = 0;
    std::vector<bool> due_now_seen;
    std::vector<std::int64_t> written;  // enrollment ids of the last write
    allowing_ledger ledger_;
    std::int64_t next_attempt = 100;

    void settle(eng::finished_calls& done, eng::settle_decisions& d, std::vector<eng::lane_row>* chain) override {
        ++settles;
        due_now_seen = d.due_now;
        if (chain == nullptr) {
            return;
        }
        done.again = std::make_unique<eng::settle_replay>();
        done.again->calls = done.calls.size();
        for (std::size_t i = 0; i < done.calls.size(); ++i) {
            if (!d.due_now[i]) {
                continue;
            }
            eng::lane_row next = std::move(done.batch[done.calls[i]]);
            next.state = d.nexts[i];
            next.call.reset();
            next.attempt_id = 0;
            next.settled = std::make_shared<const eng::settled_call>(d.outcomes[i]);
            chain->push_back(std::move(next));
        }
    }
    void settle_again(const eng::settle_replay&) override { ++settles_again; }
    void claim(std::size_t limit, std::vector<eng::lane_row>& batch) override {
        for (std::size_t i = 0; i < due.size() && i < limit; ++i) {
            batch.push_back(due[i]);
        }
        due.clear();
    }
    void pending_events(std::span<const eng::lane_row>, std::span<eng::plan_item>) override {}
    void close_lost(std::span<const eng::lane_row>) override {}
    eng::ledger_port& ledger() override { return ledger_; }
    std::vector<std::int64_t> attempt_ids(std::size_t n) override {
        std::vector<std::int64_t> ids;
        for (std::size_t i = 0; i < n; ++i) {
            ids.push_back(next_attempt++);
        }
        return ids;
    }
    void write(std::span<const eng::lane_row> batch) override {
        ++writes;
        written.clear();
        for (const auto& r : batch) {
            written.push_back(r.enrollment_id);
        }
    }
    cs::time_point leases_from() const override { return t0; }
    void commit() override {
        if (fail_commits) {
            throw std::runtime_error("the commit failed");
        }
        ++commits;
    }
};

std::shared_ptr<const cs::campaign> shared_campaign = std::make_shared<const cs::campaign>(campaign);

eng::lane_row due_row(std::int64_t id) {
    eng::lane_row r;
    r.enrollment_id = id;
    r.campaign_id = 1;
    r.account_id = "acc_1";
    r.campaign = shared_campaign;
    r.lead = lead;
    r.state = cs::initial_state(campaign, t0);
    return r;
}

// Calls that came back from rows whose invitations were sent; `transient` ones failed without
// effect and are due again at once (retry_at now), the others succeeded.
eng::finished_calls came_back(const std::vector<bool>& transient) {
    eng::finished_calls f;
    for (std::size_t i = 0; i < transient.size(); ++i) {
        auto r = due_row(static_cast<std::int64_t>(i + 1));
        planner::row pr{&campaign, &lead, r.state, 0};
        auto d = planner::propose(pr, {}, t0);
        r.call = planner::take(pr, *d, {}, {}, t0);
        r.state = pr.state;
        r.attempt_id = static_cast<std::int64_t>(50 + i);
        call_outcome o;
        o.event.call = cs::call_kind::invite;
        if (transient[i]) {
            o.event.kind = cs::result_kind::transient;
            o.event.retry_at = t0;
            o.attempt_outcome = attempt_outcome::transient;
        }
        f.calls.push_back(f.batch.size());
        f.batch.push_back(std::move(r));
        f.outcomes.push_back(o);
    }
    return f;
}

struct counting_after_gate final : eng::call_gate {
    int taken = 0, given_back = 0, told = 0;
    eng::gate_decision before(const eng::call_target&, const cs::campaign&, const cs::api_call&, cs::time_point) override {
        ++taken;
        return {};
    }
    std::optional<cs::time_point> after(const eng::call_target&, const cs::campaign&, const cs::api_call&,
                                        const call_outcome&) override {
        ++told;
        return std::nullopt;
    }
    void released(const eng::call_target&, const cs::campaign&, const cs::api_call&) override { ++given_back; }
};

struct fixed_clock final : eng::clock_port {
    cs::time_point now() const override { return t0; }
};
const fixed_clock at_t0;

eng::lane_context context_over(eng::call_gate& gate, bool& stopping) {
    eng::lane_context ctx;
    ctx.gate = &gate;
    ctx.clock = &at_t0;
    ctx.stopping = [&stopping] { return stopping; };
    return ctx;
}

TEST(LaneCycle, ARowDueAgainAtOnceGoesOnInTheCycleThatSettledIt) {
    counting_after_gate gate;
    bool stopping = false;
    const auto ctx = context_over(gate, stopping);
    recording_store store;
    store.due = {due_row(7)};
    std::optional<eng::finished_calls> pending = came_back({true, false});
    auto r = eng::lane_cycle(store, ctx, pending, 4);
    EXPECT_FALSE(pending);
    EXPECT_EQ(gate.told, 2);
    EXPECT_EQ(store.due_now_seen, (std::vector<bool>{true, false}));
    // The held row (1) first, then the claimed one (7): both invite now.
    EXPECT_EQ(store.written, (std::vector<std::int64_t>{1, 7}));
    ASSERT_EQ(r.calls.size(), 2u);
    EXPECT_EQ(r.calls[0]->enrollment_id, 1);
    EXPECT_EQ(r.calls[0]->attempt_id, 100);
    EXPECT_FALSE(r.calls[0]->settled);  // dropped once committed
    EXPECT_EQ(r.counts.calls, 2u);
    EXPECT_EQ(r.counts.chained, 1u);
    EXPECT_EQ(r.counts.transitions, 2u + 2u);  // two settles, two planned rows
    EXPECT_TRUE(r.drained);  // asked for 3, found 1
    EXPECT_EQ(store.commits, 1);
}

// A settle that stopped half-way (the gate failed on the second call) and is decided again
// tells the gate about each call once: the first call's 429 is not recorded twice.
TEST(LaneCycle, ASettleDecidedAgainTellsTheGateEachCallOnce) {
    struct failing_once_gate final : eng::call_gate {
        std::map<std::int64_t, int> told;
        bool failed = false;
        eng::gate_decision before(const eng::call_target&, const cs::campaign&, const cs::api_call&,
                                  cs::time_point) override {
            return {};
        }
        std::optional<cs::time_point> after(const eng::call_target& t, const cs::campaign&, const cs::api_call&,
                                            const call_outcome&) override {
            if (t.enrollment_id == 2 && !failed) {
                failed = true;
                throw std::runtime_error("the gate's store did not answer");
            }
            ++told[t.enrollment_id];
            return std::nullopt;
        }
        void released(const eng::call_target&, const cs::campaign&, const cs::api_call&) override {}
    } gate;
    bool stopping = false;
    const auto ctx = context_over(gate, stopping);
    auto pending = came_back({true, true, false});
    EXPECT_THROW(eng::decide_settle(pending, ctx), std::runtime_error);
    EXPECT_FALSE(pending.gated);
    const auto d = eng::decide_settle(pending, ctx);
    EXPECT_EQ(d.nexts.size(), 3u);
    EXPECT_TRUE(pending.gated);
    EXPECT_EQ(gate.told, (std::map<std::int64_t, int>{{1, 1}, {2, 1}, {3, 1}}));
}

// The plan reads the clock once the claim is in: a row the claim found due by then is due to it.
TEST(LaneCycle, ThePlanReadsTheClockAfterTheClaim) {
    struct stepping_clock final : eng::clock_port {
        cs::time_point t = t0;
        cs::time_point now() const override { return t; }
    } clock;
    struct claim_moves_the_clock final : recording_store {
        stepping_clock* clock = nullptr;
        void claim(std::size_t l, std::vector<eng::lane_row>& b) override {
            recording_store::claim(l, b);
            clock->t = t0 + std::chrono::seconds(5);  // the claim took its time
        }
    } store;
    store.clock = &clock;
    auto row = due_row(9);
    row.state.next_run_at = t0 + std::chrono::seconds(3);  // due by the claim's end, not at the cycle's start
    store.due = {row};
    counting_after_gate gate;
    bool stopping = false;
    auto ctx = context_over(gate, stopping);
    ctx.clock = &clock;
    std::optional<eng::finished_calls> none;
    auto r = eng::lane_cycle(store, ctx, none, 4);
    ASSERT_EQ(r.calls.size(), 1u);
    EXPECT_EQ(r.calls[0]->call->kind, cs::call_kind::invite);
}

// A call held at send time until a hold's end (an unavailable account, a cooldown) is looked at
// again when it is settled: a hold that ended since (the account logged in again) makes the lead
// due now, not at the old hold's end; one still running keeps its end.
TEST(LaneCycle, AHeldCallIsDueWhenItsHoldEndsNotWhenItWasToEnd) {
    struct holding_gate final : eng::call_gate {
        std::optional<cs::time_point> until;
        std::optional<cs::call_kind> only;  // holds only calls of this kind (a cooldown of its action)
        eng::gate_decision before(const eng::call_target&, const cs::campaign&, const cs::api_call&, cs::time_point) override {
            return {};
        }
        std::optional<cs::time_point> after(const eng::call_target&, const cs::campaign&, const cs::api_call&,
                                            const call_outcome&) override {
            return std::nullopt;
        }
        void released(const eng::call_target&, const cs::campaign&, const cs::api_call&) override {}
        std::optional<cs::time_point> hold(const eng::call_target&, const cs::api_call& call, cs::time_point) override {
            return only && call.kind != *only ? std::nullopt : until;
        }
    };
    // A call held at send time until `until`, settled with `gate`: whether its lead is due now.
    auto due_now_after_hold = [](holding_gate& gate, cs::time_point until, std::optional<cs::call_kind> by_request) {
        bool stopping = false;
        const auto ctx = context_over(gate, stopping);
        recording_store store;
        std::optional<eng::finished_calls> pending = came_back({true});
        auto& o = pending->outcomes[0];
        o.event.kind = cs::result_kind::throttled;
        o.event.retry_at = until;
        o.held = true;
        o.held_request = by_request;
        eng::lane_cycle(store, ctx, pending, 4);
        return store.due_now_seen == std::vector<bool>{true};
    };
    for (const bool ended : {true, false}) {
        holding_gate gate;
        if (!ended) {
            gate.until = t0 + std::chrono::minutes(1);
        }
        EXPECT_EQ(due_now_after_hold(gate, t0 + std::chrono::minutes(10), std::nullopt), ended);
    }
    // Held by one of its requests' scopes (a reply check's get_conversation cooldown), not the
    // call's: the settle asks about that scope, and the lead waits for it (it was claimed again
    // every cycle when the settle asked about the call's).
    holding_gate reads_cooling;
    reads_cooling.until = t0 + std::chrono::minutes(1);
    reads_cooling.only = cs::call_kind::get_conversation;
    EXPECT_FALSE(due_now_after_hold(reads_cooling, t0 + std::chrono::minutes(1), cs::call_kind::get_conversation));
    EXPECT_TRUE(due_now_after_hold(reads_cooling, t0 + std::chrono::minutes(1), std::nullopt));
}

// The calls of a cycle may leave until its leases' start plus the send window (the lease less
// the longest request): call_path holds them after that.
TEST(LaneCycle, ACyclesCallsCarryTheirSendWindow) {
    counting_after_gate gate;
    bool stopping = false;
    auto ctx = context_over(gate, stopping);
    recording_store store;
    store.due = {due_row(3)};
    std::optional<eng::finished_calls> none;
    auto r = eng::lane_cycle(store, ctx, none, 4);
    ASSERT_EQ(r.calls.size(), 1u);
    EXPECT_EQ(r.calls[0]->send_by, cs::time_point::max());  // no window: no limit
    store.due = {due_row(4)};
    ctx.send_window = std::chrono::milliseconds(29'000);
    r = eng::lane_cycle(store, ctx, none, 4);
    ASSERT_EQ(r.calls.size(), 1u);
    EXPECT_EQ(r.calls[0]->send_by, t0 + std::chrono::seconds(29));
}

TEST(LaneCycle, NothingGoesOnWhenACallFoundItsAccountUnavailableOrTheLaneIsStopping) {
    for (bool unavailable : {true, false}) {
        counting_after_gate gate;
        bool stopping = !unavailable;
        const auto ctx = context_over(gate, stopping);
        recording_store store;
        std::optional<eng::finished_calls> pending = came_back({true, false});
        if (unavailable) {
            pending->outcomes[1].consequence = eng::call_consequence::pause_account;
        }
        auto r = eng::lane_cycle(store, ctx, pending, 4);
        EXPECT_EQ(store.due_now_seen, (std::vector<bool>{false, false}));
        EXPECT_TRUE(r.calls.empty());
        EXPECT_EQ(r.counts.chained, 0u);
    }
}

TEST(LaneCycle, AFailedCycleGivesBackItsTakesAndItsSettleIsWrittenAgainAlone) {
    counting_after_gate gate;
    bool stopping = false;
    const auto ctx = context_over(gate, stopping);
    recording_store store;
    store.fail_commits = true;
    store.due = {due_row(7), due_row(8)};
    std::optional<eng::finished_calls> pending = came_back({true, false});
    EXPECT_THROW(eng::lane_cycle(store, ctx, pending, 4), std::runtime_error);
    EXPECT_EQ(gate.taken, 3);       // the held row and the two claimed ones
    EXPECT_EQ(gate.given_back, 3);  // once each: the commit failed after the plan
    ASSERT_TRUE(pending);
    ASSERT_TRUE(pending->again);    // the settle stands for the batch, let go
    EXPECT_TRUE(pending->batch.empty());
    store.fail_commits = false;
    const auto counts = eng::settle_alone(store, ctx, *pending);
    EXPECT_EQ(store.settles_again, 1);
    EXPECT_EQ(store.settles, 1);  // not decided again
    EXPECT_EQ(gate.told, 2);      // the gate was told each outcome once
    EXPECT_EQ(counts.calls, 2u);
    EXPECT_EQ(store.commits, 1);
    EXPECT_TRUE(store.written.empty());
}

TEST(LaneCycle, ASettleThatFailedBeforeItWasWrittenIsDecidedAgainWithoutTellingTheGateTwice) {
    counting_after_gate gate;
    bool stopping = false;
    const auto ctx = context_over(gate, stopping);
    struct failing_settle final : recording_store {
        bool fail = true;
        void settle(eng::finished_calls& done, eng::settle_decisions& d, std::vector<eng::lane_row>* chain) override {
            if (fail) {
                throw std::runtime_error("the settle statement failed");
            }
            recording_store::settle(done, d, chain);
        }
    } store;
    std::optional<eng::finished_calls> pending = came_back({true, false});
    EXPECT_THROW(eng::lane_cycle(store, ctx, pending, 4), std::runtime_error);
    ASSERT_TRUE(pending);
    EXPECT_FALSE(pending->again);
    EXPECT_EQ(pending->batch.size(), 2u);  // kept whole: nothing was written
    store.fail = false;
    const auto counts = eng::settle_alone(store, ctx, *pending);
    EXPECT_EQ(store.settles, 1);
    EXPECT_EQ(store.due_now_seen, (std::vector<bool>{false, false}));  // released, not held
    EXPECT_EQ(gate.told, 2);
    EXPECT_EQ(counts.calls, 2u);
    EXPECT_EQ(store.commits, 1);
}

}  // namespace
