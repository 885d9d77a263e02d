// engine/planner: the cycle's decisions as pure functions (no database, no clock, no API).
#include "campaigns/campaigns.hpp"
#include "engine/cycle_plan.hpp"
#include "engine/planner.hpp"
#include "tests/sim/sim.hpp"

#include <gtest/gtest.h>

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

}  // namespace
