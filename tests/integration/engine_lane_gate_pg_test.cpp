// The lane gate (migration 0021, engine/pg_lane_store.cpp): at most `lane_transaction_slots` lane
// transactions run at once in the database. Each lane transaction's first statement enters a gate:
// the one its claim slot prefers, else any free one, else it queues for its own, for a bound.
#include "engine/clock.hpp"
#include "engine/config.hpp"
#include "engine/pg_lane_store.hpp"
#include "engine/worker.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <chrono>
#include <csignal>
#include <future>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

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

// Whether a worker's log shows `text` within 10 s.
bool log_shows(orch::test::background_process& worker, const std::string& text) {
    for (int i = 0; i < 400; ++i) {
        if (worker.log().find(text) != std::string::npos) {
            return true;
        }
        std::this_thread::sleep_for(25ms);
    }
    return false;
}

// The gate a session holds, -1 for none: lane_gate_enter(gates, preferred, wait_ms).
int enter(pqxx::work& tx, int gates, int preferred, int wait_ms) {
    return tx.exec_params1("SELECT lane_gate_enter($1, $2, $3)", gates, preferred, wait_ms)[0].as<int>();
}

// Gates act as a semaphore: the preferred one, else any free one, without waiting.
// A lane wakes a capped campaign's held leads the first time, then at most every
// capped_wake_every, but at once when the cap has less left than at the last wake-up: a call
// refused with 1 credit left (an invite reserves 2) woke them while a check could still go out;
// the check that then used the cap up must wake them again, not 30 s later (a trial saw 20 s).
TEST(CappedWake, AgainAtOnceWhenTheCapHasLessLeftElseAfterTheInterval) {
    const auto t0 = std::chrono::system_clock::now();
    EXPECT_TRUE(orch::engine::capped_wake_due(nullptr, 1, t0));
    const orch::engine::claim_sweep::capped_wake last{t0, 1};
    EXPECT_FALSE(orch::engine::capped_wake_due(&last, 1, t0 + 1s));
    EXPECT_TRUE(orch::engine::capped_wake_due(&last, 0, t0 + 1s));
    EXPECT_TRUE(orch::engine::capped_wake_due(&last, 1, t0 + orch::engine::capped_wake_every));
    const orch::engine::claim_sweep::capped_wake used_up{t0, 0};
    EXPECT_FALSE(orch::engine::capped_wake_due(&used_up, 0, t0 + 4s));
    EXPECT_FALSE(orch::engine::capped_wake_due(&used_up, 3, t0 + 4s));   // a raised cap wakes its waits itself
}

// A lane that woke the held leads of a used-up cap wakes them once more capped_wake_again later:
// its first wake-up skipped the rows another lane held, and that lane, its look at the cap older
// than the cap's use, may have written them as waiting for the key's turn (a CI run of
// LeadsOfACampaignAtItsSendersCapsWaitForThemAtOnceBehindABusyKey found 13 of 40 leads left so,
// minutes from their turn). Here the second look is due: it wakes the cap's held leads (not a
// lead held for another cap, nor one already waiting for the cap), once.
TEST_F(LaneGate, ALaneWakesTheHeldLeadsOfACapOnceMoreAfterItsWakeUp) {
    auto c = connect();
    {
        pqxx::work tx(*c);
        tx.exec("INSERT INTO accounts (account_id) VALUES ('acc-1'), ('acc-2')");
        tx.exec("INSERT INTO campaigns (campaign_id, name) VALUES (1, 'capped'), (2, 'other')");
        tx.exec("INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) "
                "VALUES (1, 1, '{}', '', ''), (2, 1, '{}', '', '')");
        tx.exec("INSERT INTO leads (canonical_url, profile_url) SELECT 'x/' || g, 'https://x/' || g "
                "FROM generate_series(1, 4) g");
        // Lead 1: the cap's held lead; 2: the same campaign's other sender; 3: another campaign
        // of the same sender; 4: already waiting for the cap.
        tx.exec("INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step, status, wait_code, "
                "next_run_at, due_at) VALUES "
                "(1, 1, 1, 'acc-1', 'invite', 'ready', 'key_rate', now() + interval '1 hour', now() + interval '1 hour'), "
                "(1, 1, 2, 'acc-2', 'invite', 'ready', 'key_rate', now() + interval '1 hour', now() + interval '1 hour'), "
                "(2, 1, 3, 'acc-1', 'invite', 'ready', 'key_rate', now() + interval '1 hour', now() + interval '1 hour'), "
                "(1, 1, 4, 'acc-1', 'invite', 'ready', 'account_budget', now() + interval '1 hour', "
                "now() + interval '1 hour')");
        tx.commit();
    }
    const auto due_now = [&] {
        pqxx::nontransaction tx(*c);
        std::set<int> out;
        for (const auto& r : tx.exec("SELECT lead_id FROM enrollments WHERE due_at <= now()")) {
            out.insert(r[0].as<int>());
        }
        return out;
    };
    orch::engine::settings cfg;
    cfg.database_url = env_->database_url();
    orch::engine::campaign_cache cache;
    orch::engine::worker_stats stats;
    const std::string owner = "test/0";
    orch::engine::claim_sweep sweep{0, 7, std::minstd_rand(1)};
    auto lane = connect();
    orch::engine::prepare_hot_statements(*lane);
    const auto cycle = [&] {
        orch::engine::pg_lane_store store(*lane, {cfg, cache, stats, orch::engine::system_clock(), owner, sweep});
        store.ledger().reserve({}, [](std::span<const orch::engine::planner::verdict>) {});
        store.commit();
    };
    const auto now = orch::engine::system_clock().now();
    sweep.capped_again[{1, "acc-1"}] = now + 1h;   // not due yet
    cycle();
    EXPECT_EQ(due_now(), std::set<int>{});
    EXPECT_EQ(sweep.capped_again.size(), 1u);
    sweep.capped_again[{1, "acc-1"}] = now - 1s;
    cycle();
    EXPECT_EQ(due_now(), std::set<int>{1});
    EXPECT_TRUE(sweep.capped_again.empty());
    {
        pqxx::work tx(*c);
        tx.exec("UPDATE enrollments SET due_at = now() + interval '1 hour' WHERE lead_id = 1");
        tx.commit();
    }
    cycle();
    EXPECT_EQ(due_now(), std::set<int>{}) << "woken once more, not again and again";
}

TEST_F(LaneGate, ALaneTakesItsPreferredGateElseAnyFreeOne) {
    auto a = connect();
    auto b = connect();
    auto c = connect();
    auto watch = connect();
    pqxx::work first(*a), second(*b), third(*c);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(enter(first, 2, 1, 5000), 1);
    EXPECT_EQ(enter(second, 2, 1, 5000), 0);  // its preferred gate is taken: the other one
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1000ms);
    EXPECT_EQ(gates_held(*watch, watch->backendpid()), (std::set<int>{0, 1}));
    // Every gate taken: the third queues for its preferred gate, holding nothing, until that
    // gate's transaction ends.
    auto third_entered = std::async(std::launch::async, [&] {
        const auto start = std::chrono::steady_clock::now();
        const int g = enter(third, 2, 0, 5000);
        return std::make_pair(g, std::chrono::steady_clock::now() - start);
    });
    for (int i = 0; i < 100 && waiting_for_gates(*watch) == 0; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_EQ(waiting_for_gates(*watch), 1);
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(third_entered.wait_for(0s), std::future_status::timeout);
    first.commit();  // gate 1 frees: not the one the third queued for
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(third_entered.wait_for(0s), std::future_status::timeout);
    second.commit();  // gate 0: the gate goes with the transaction
    const auto [g, waited] = third_entered.get();
    EXPECT_EQ(g, 0);
    EXPECT_GE(waited, 300ms);
    EXPECT_LT(waited, 5000ms);
    third.commit();
}

TEST_F(LaneGate, AGateQueuedForPastTheWaitIsPassedByAndTheTransactionGoesOn) {
    auto a = connect();
    auto b = connect();
    pqxx::work stalled(*a);
    ASSERT_EQ(enter(stalled, 1, 0, 5000), 0);
    pqxx::work tx(*b);
    tx.exec("SET LOCAL lock_timeout = '7s'");
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(enter(tx, 1, 0, 100), -1);
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(waited, 100ms);
    EXPECT_LT(waited, 3000ms);
    // The transaction is still usable, and its own lock_timeout is back.
    EXPECT_EQ(tx.exec1("SELECT current_setting('lock_timeout')")[0].as<std::string>(), "7s");
    // And after a gate entered by queueing too.
    auto release = std::async(std::launch::async, [&] {
        std::this_thread::sleep_for(200ms);
        stalled.commit();
    });
    EXPECT_EQ(enter(tx, 1, 0, 5000), 0);
    release.get();
    EXPECT_EQ(tx.exec1("SELECT current_setting('lock_timeout')")[0].as<std::string>(), "7s");
    tx.commit();
}

TEST_F(LaneGate, NoGatesIsAnErrorNotADivisionByZero) {
    auto a = connect();
    pqxx::work tx(*a);
    try {
        enter(tx, 0, 0, 100);
        FAIL() << "lane_gate_enter(0, ...) answered";
    } catch (const pqxx::sql_error& e) {
        EXPECT_EQ(e.sqlstate(), "22023");
        EXPECT_NE(std::string(e.what()).find("gates must be at least 1"), std::string::npos) << e.what();
    }
}

// The worker's store enters a gate as its transaction's first statement, the one its lane's claim
// slot prefers when free, holds it to the commit, and counts the times it had to go on without.
TEST_F(LaneGate, ALaneStoreHoldsAGateUntilItCommits) {
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
    const int watch_pid = watch->backendpid();
    {
        orch::engine::pg_lane_store store(*lane, {cfg, cache, stats, orch::engine::system_clock(), owner, sweep});
        EXPECT_EQ(gates_held(*watch, watch_pid), std::set<int>{1});
        store.commit();
    }
    EXPECT_TRUE(gates_held(*watch, watch_pid).empty()) << "the gate outlived the commit";
    EXPECT_EQ(stats.gate_timeouts.load(), 0u);

    // Its gate taken: another one.
    {
        pqxx::work other(*watch);
        ASSERT_EQ(enter(other, 3, 1, 100), 1);
        orch::engine::pg_lane_store store(*lane, {cfg, cache, stats, orch::engine::system_clock(), owner, sweep});
        auto look = connect();
        EXPECT_EQ(gates_held(*look, look->backendpid()), (std::set<int>{1, 2}));
        store.commit();
        other.commit();
    }

    // No slot (all 64 were held): a gate all the same.
    sweep.slot = -1;
    {
        orch::engine::pg_lane_store store(*lane, {cfg, cache, stats, orch::engine::system_clock(), owner, sweep});
        EXPECT_EQ(gates_held(*watch, watch_pid).size(), 1u);
        store.commit();
    }
    sweep.slot = 7;

    // Every gate taken for longer than the lane queues: it goes on without one, and counts it.
    {
        std::vector<std::unique_ptr<pqxx::connection>> holders;
        std::vector<std::unique_ptr<pqxx::work>> held;
        for (int g = 0; g < 3; ++g) {
            holders.push_back(connect());
            held.push_back(std::make_unique<pqxx::work>(*holders.back()));
            ASSERT_EQ(enter(*held.back(), 3, g, 100), g);
        }
        const auto t0 = std::chrono::steady_clock::now();
        orch::engine::pg_lane_store store(*lane, {cfg, cache, stats, orch::engine::system_clock(), owner, sweep});
        EXPECT_GE(std::chrono::steady_clock::now() - t0, 2000ms);
        store.commit();
    }
    EXPECT_EQ(stats.gate_timeouts.load(), 1u);

    // No limit: no gate at all.
    cfg.lane_transaction_slots = 0;
    {
        orch::engine::pg_lane_store store(*lane, {cfg, cache, stats, orch::engine::system_clock(), owner, sweep});
        EXPECT_TRUE(gates_held(*watch, watch_pid).empty());
        store.commit();
    }
}

// A worker says its gates at start, warns as soon as lanes go on without a gate (not only in its
// last line: a worker runs for weeks), and counts them when it stops; with no limit it says
// nothing of gates (that its store then takes none is ALaneStoreHoldsAGateUntilItCommits's).
TEST_F(LaneGate, AWorkerWarnsWhenItsLanesGoOnWithoutAGate) {
    auto holder = connect();
    pqxx::work held(*holder);
    ASSERT_EQ(enter(held, 1, 0, 100), 0);  // the only gate, held past every lane's wait
    auto worker = env_->spawn({"worker", "--lane-transaction-slots", "1", "--worker-lanes", "2", "--idle-poll-ms", "50"});
    EXPECT_TRUE(log_shows(*worker, "went on without one")) << worker->log();
    held.commit();
    EXPECT_EQ(worker->stop(SIGTERM), 0) << worker->log();
    const std::string log = worker->log();
    EXPECT_NE(log.find("lane transaction slots 1,"), std::string::npos) << log;
    const auto counted = log.find("lane transactions went on without a database gate");
    ASSERT_NE(counted, std::string::npos) << log;
    // "...; N lane transactions went on...": at least one.
    const auto number_at = log.rfind("; ", counted) + 2;
    EXPECT_GE(std::stoi(log.substr(number_at, counted - number_at)), 1) << log;

    auto unlimited = env_->spawn({"worker", "--lane-transaction-slots", "0", "--worker-lanes", "2", "--idle-poll-ms", "50"});
    std::this_thread::sleep_for(500ms);
    EXPECT_EQ(unlimited->stop(SIGTERM), 0) << unlimited->log();
    EXPECT_NE(unlimited->log().find("lane transaction slots unlimited"), std::string::npos) << unlimited->log();
    EXPECT_EQ(unlimited->log().find("database gate"), std::string::npos) << unlimited->log();
}

// Every worker needs the same lane_transaction_slots: a worker started next to one with another
// value says so at its start. The lanes' sessions are named for pg_stat_activity.
TEST_F(LaneGate, AWorkerStartedWithOtherSlotsThanTheOthersSaysSo) {
    auto first = env_->spawn({"worker", "--lane-transaction-slots", "3", "--worker-lanes", "2", "--idle-poll-ms", "50"});
    auto watch = connect();
    auto named = [&](int lanes) {
        int n = 0;
        for (int i = 0; i < 200 && n < lanes; ++i) {
            std::this_thread::sleep_for(25ms);
            pqxx::nontransaction tx(*watch);
            n = tx.exec("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND application_name LIKE 'orch-worker slots=3 %/%'")[0][0]
                    .as<int>();
        }
        return n;
    };
    ASSERT_EQ(named(2), 2) << first->log();
    auto same = env_->spawn({"worker", "--lane-transaction-slots", "3", "--worker-lanes", "1", "--idle-poll-ms", "50"});
    ASSERT_EQ(named(3), 3) << same->log();
    auto other = env_->spawn({"worker", "--lane-transaction-slots", "5", "--worker-lanes", "1", "--idle-poll-ms", "50"});
    EXPECT_TRUE(log_shows(*other, "run with lane_transaction_slots 3 where this one has 5")) << other->log();
    // They share the buckets too: a worker with another quota (or ramp-up) is told as well.
    auto quotas = env_->spawn({"worker", "--lane-transaction-slots", "3", "--worker-lanes", "1", "--idle-poll-ms", "50",
                               "--invite-per-day", "7"});
    EXPECT_TRUE(log_shows(*quotas, "other worker or serve process(es) on this database run with other rate-limit "
                                   "settings than this process"))
        << quotas->log();
    EXPECT_EQ(quotas->stop(SIGTERM), 0);
    EXPECT_EQ(same->stop(SIGTERM), 0);
    EXPECT_EQ(other->stop(SIGTERM), 0);
    EXPECT_EQ(first->stop(SIGTERM), 0);
    // The workers with the same values said nothing of them (those with others started after them).
    for (const auto* w : {same.get(), first.get()}) {
        EXPECT_EQ(w->log().find("where this one has"), std::string::npos) << w->log();
        EXPECT_EQ(w->log().find("rate-limit settings"), std::string::npos) << w->log();
    }
    EXPECT_EQ(other->log().find("rate-limit settings"), std::string::npos) << other->log();
}

// A lane that got no claim slot (all 64 held: more lanes on the database than slots) says so, and
// takes one once a slot is free again (it asks every claim_slot_retry), not only at reconnecting.
TEST_F(LaneGate, ALaneWithoutAClaimSlotSaysSoAndTakesOneWhenItIsFree) {
    auto holder = connect();
    {
        pqxx::nontransaction tx(*holder);
        tx.exec("SELECT pg_advisory_lock(727100019, s) FROM generate_series(0, 63) AS s");  // engine/claim_slot
    }
    auto worker = env_->spawn({"worker", "--worker-lanes", "1", "--idle-poll-ms", "50"});
    EXPECT_TRUE(log_shows(*worker, "lane=0 got no claim slot")) << worker->log();
    {
        pqxx::nontransaction tx(*holder);
        tx.exec("SELECT pg_advisory_unlock(727100019, 17)");
    }
    bool took = false;
    for (int i = 0; i < 2 && !took; ++i) {  // log_shows waits 10 s; the lane asks every 5
        took = log_shows(*worker, "lane=0 got claim slot 17");
    }
    EXPECT_TRUE(took) << worker->log();
    EXPECT_EQ(worker->stop(SIGTERM), 0) << worker->log();
}

}  // namespace
