// The lane gate (migration 0021, engine/pg_lane_store.cpp): at most `lane_transaction_slots` lane
// transactions run at once in the database. Each lane transaction's first statement enters the
// gate its claim slot maps to; a gate held by a stalled transaction is passed by after a bound.
#include "engine/clock.hpp"
#include "engine/config.hpp"
#include "engine/pg_lane_store.hpp"
#include "engine/worker.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <thread>

namespace {

using orch::test::orchestrator_env;
using namespace std::chrono_literals;

constexpr int gate_key = 727100021;  // migration 0021

class LaneGate : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        env_ = std::make_unique<orchestrator_env>(1);  // no sandbox: only SQL here
    }
    std::unique_ptr<pqxx::connection> connect() const {
        return std::make_unique<pqxx::connection>(env_->database_url());
    }
    // Lane gates of this test's database (advisory locks are per database; other tests run
    // workers on the same server) held by other sessions than `except_pid`: the gates' numbers.
    std::set<int> gates_held(pqxx::connection& c, int except_pid) const {
        pqxx::nontransaction tx(c);
        std::set<int> out;
        for (const auto& r : tx.exec_params("SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 "
                                            "AND objsubid = 2 AND granted AND pid <> $2 AND database = "
                                            "(SELECT oid FROM pg_database WHERE datname = current_database())",
                                            gate_key, except_pid)) {
            out.insert(r[0].as<int>());
        }
        return out;
    }
    int waiting_for_gates(pqxx::connection& c) const {
        pqxx::nontransaction tx(c);
        return tx.exec_params1("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 "
                               "AND NOT granted AND database = "
                               "(SELECT oid FROM pg_database WHERE datname = current_database())",
                               gate_key)[0]
            .as<int>();
    }
    std::unique_ptr<orchestrator_env> env_;
};

TEST_F(LaneGate, ASecondTransactionWaitsForTheGateUntilTheFirstEnds) {
    auto a = connect();
    auto b = connect();
    auto watch = connect();
    pqxx::work first(*a);
    ASSERT_TRUE(first.exec1("SELECT lane_gate_enter(3, 5000)")[0].as<bool>());
    auto second = std::async(std::launch::async, [&] {
        pqxx::work tx(*b);
        const auto t0 = std::chrono::steady_clock::now();
        const bool entered = tx.exec1("SELECT lane_gate_enter(3, 5000)")[0].as<bool>();
        const auto waited = std::chrono::steady_clock::now() - t0;
        tx.commit();
        return std::make_pair(entered, waited);
    });
    // The second waits in the lock queue for as long as the first transaction runs.
    for (int i = 0; i < 100 && waiting_for_gates(*watch) == 0; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_EQ(waiting_for_gates(*watch), 1);
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(second.wait_for(0s), std::future_status::timeout);
    first.commit();  // the gate goes with the transaction
    const auto [entered, waited] = second.get();
    EXPECT_TRUE(entered);
    EXPECT_GE(waited, 200ms);
    EXPECT_LT(waited, 5000ms);
}

TEST_F(LaneGate, OtherGatesDoNotWait) {
    auto a = connect();
    auto b = connect();
    pqxx::work first(*a);
    ASSERT_TRUE(first.exec1("SELECT lane_gate_enter(0, 5000)")[0].as<bool>());
    pqxx::work second(*b);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(second.exec1("SELECT lane_gate_enter(1, 5000)")[0].as<bool>());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1000ms);
}

TEST_F(LaneGate, AGateHeldPastTheWaitIsPassedByAndTheTransactionGoesOn) {
    auto a = connect();
    auto b = connect();
    pqxx::work stalled(*a);
    ASSERT_TRUE(stalled.exec1("SELECT lane_gate_enter(2, 5000)")[0].as<bool>());
    pqxx::work tx(*b);
    tx.exec("SET LOCAL lock_timeout = '7s'");
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(tx.exec1("SELECT lane_gate_enter(2, 100)")[0].as<bool>());
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, 100ms);
    EXPECT_LT(waited, 3000ms);
    // The transaction is still usable, and its own lock_timeout is back.
    EXPECT_EQ(tx.exec1("SELECT current_setting('lock_timeout')")[0].as<std::string>(), "7s");
    // And after a gate entered in time too.
    stalled.commit();
    EXPECT_TRUE(tx.exec1("SELECT lane_gate_enter(2, 100)")[0].as<bool>());
    EXPECT_EQ(tx.exec1("SELECT current_setting('lock_timeout')")[0].as<std::string>(), "7s");
    tx.commit();
}

// The worker's store enters the gate its lane's claim slot maps to, as its transaction's first
// statement, holds it to the commit, and counts a gate it had to pass by.
TEST_F(LaneGate, ALaneStoreHoldsTheGateOfItsClaimSlotUntilItCommits) {
    orch::engine::settings cfg;
    cfg.database_url = env_->database_url();
    cfg.lane_transaction_slots = 3;
    orch::engine::campaign_cache cache;
    orch::engine::worker_stats stats;
    const std::string owner = "test/0";
    orch::engine::claim_sweep sweep{0, 7, std::minstd_rand(1)};  // slot 7: gate 7 % 3 = 1
    auto lane = connect();
    orch::engine::prepare_hot_statements(*lane);
    auto watch = connect();
    const int lane_pid = lane->backendpid();
    {
        orch::engine::pg_lane_store store(*lane, {cfg, cache, stats, orch::engine::system_clock(), owner, sweep});
        EXPECT_EQ(gates_held(*watch, watch->backendpid()), std::set<int>{1});
        store.commit();
    }
    EXPECT_TRUE(gates_held(*watch, lane_pid).empty());
    EXPECT_EQ(stats.gate_timeouts.load(), 0u);

    // Gate 1 held elsewhere past the lane's wait: the lane goes on without it, and counts it.
    pqxx::work stalled(*watch);
    ASSERT_TRUE(stalled.exec1("SELECT lane_gate_enter(1, 100)")[0].as<bool>());
    {
        orch::engine::pg_lane_store store(*lane, {cfg, cache, stats, orch::engine::system_clock(), owner, sweep});
        store.commit();
    }
    EXPECT_EQ(stats.gate_timeouts.load(), 1u);
    stalled.commit();

    // No limit: no gate at all.
    cfg.lane_transaction_slots = 0;
    {
        orch::engine::pg_lane_store store(*lane, {cfg, cache, stats, orch::engine::system_clock(), owner, sweep});
        auto other = connect();
        EXPECT_TRUE(gates_held(*other, other->backendpid()).empty());
        store.commit();
    }
}

}  // namespace
