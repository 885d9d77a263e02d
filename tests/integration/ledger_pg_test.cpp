// The credit ledger (engine/ledger.hpp) on a real Postgres: a fresh database per test, migrated by
// the real `orchestrator migrate`, rows written through the ledger's API, numbers read back from
// the account rows, the transfers and the reporting views, and `orchestrator budget show`.
#include "engine/campaign_apply.hpp"
#include "engine/lead_ops.hpp"
#include "engine/ledger.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <functional>
#include <future>
#include <random>
#include <thread>

namespace {

namespace ledger = orch::engine::ledger;
using json = nlohmann::json;
using orch::test::orchestrator_env;
using std::chrono::hours;

// 2026-03-10 12:00:00 UTC, a fixed clock for day budgets.
const ledger::time_point t0 = ledger::time_point(std::chrono::seconds(1773144000));

class LedgerTest : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        env_ = std::make_unique<orchestrator_env>(1);   // no sandbox: the ledger makes no API call
        conn_ = std::make_unique<pqxx::connection>(env_->database_url());
    }

    // A campaign with one lead and one enrollment, on which the attempts are made.
    std::int64_t campaign(const std::string& name) {
        pqxx::work tx(*conn_);
        tx.exec("INSERT INTO accounts (account_id) VALUES ('acc-1') ON CONFLICT DO NOTHING");
        auto id = tx.exec_params("INSERT INTO campaigns (name) VALUES ($1) RETURNING campaign_id", name)[0][0]
                      .as<std::int64_t>();
        tx.exec_params("INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) "
                       "VALUES ($1, 1, '{}', '', '')",
                       id);
        auto lead = tx.exec_params("INSERT INTO leads (canonical_url, profile_url) VALUES ($1, $1) RETURNING lead_id",
                                   "example.com/in/" + name)[0][0]
                        .as<std::int64_t>();
        enrollment_[id] = tx.exec_params("INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step) "
                                         "VALUES ($1, 1, $2, 'acc-1', 'check') RETURNING enrollment_id",
                                         id, lead)[0][0]
                              .as<std::int64_t>();
        tx.commit();
        return id;
    }

    // `n` intent rows (step_attempts) of the campaign's enrollment.
    std::vector<std::int64_t> attempts(std::int64_t campaign_id, int n) {
        pqxx::work tx(*conn_);
        std::vector<std::int64_t> ids;
        for (const auto& r : tx.exec_params("INSERT INTO step_attempts (enrollment_id, step, call, attempt, worker) "
                                            "SELECT $1, 'check', 'invite', g, 'test' FROM generate_series(1, $2) g "
                                            "RETURNING attempt_id",
                                            enrollment_.at(campaign_id), n)) {
            ids.push_back(r[0].as<std::int64_t>());
        }
        tx.commit();
        return ids;
    }

    std::int64_t scalar(const std::string& sql) {
        pqxx::nontransaction tx(*conn_);
        auto r = tx.exec(sql);
        return r.empty() || r[0][0].is_null() ? 0 : r[0][0].as<std::int64_t>();
    }

    ledger::campaign_budget_row row(const std::string& name) {
        pqxx::nontransaction tx(*conn_);
        auto rows = ledger::campaign_budgets(tx, name);
        EXPECT_EQ(rows.size(), 1u);
        return rows.empty() ? ledger::campaign_budget_row{} : rows[0];
    }

    std::vector<std::string> problems() {
        pqxx::nontransaction tx(*conn_);
        return ledger::check(tx);
    }

    // Plays a worker's lane against `store_call`, an operator's command on campaign `id`: the
    // lane's transaction runs `hold` (locking rows the command needs), the command begins and waits
    // for them, then the lane updates the campaign's row, which the command holds: a deadlock.
    // The test's database has the command's sessions look for it after 3 s (ALTER DATABASE ...
    // deadlock_timeout, before the store connects) and the lane's after 60 s, so Postgres always
    // aborts the command, which must run again once the lane has committed. Whatever goes wrong,
    // the command is let go (the lane's transaction ends) and joined before the test fails.
    void race_with_a_lane(std::int64_t id, const std::vector<std::string>& hold, const std::function<void()>& store_call) {
        pqxx::connection lane(env_->database_url());
        pqxx::nontransaction(lane).exec("SET deadlock_timeout = '60s'");
        pqxx::connection probe(env_->database_url());
        // Postgres's count of deadlocks broken in this database (its statistics reach other
        // backends within a second or so).
        auto deadlocks = [&] {
            return scalar("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()");
        };
        const auto before = deadlocks();
        pqxx::work w(lane);
        for (const auto& sql : hold) {
            w.exec_params(sql, id);
        }
        std::exception_ptr failed;
        std::thread call([&] {
            try {
                store_call();
            } catch (...) {
                failed = std::current_exception();
            }
        });
        // The command is waiting for the held rows once a backend other than the lane's shows a
        // lock wait.
        bool saw_wait = false;
        try {
            for (int i = 0; i < 1500 && !saw_wait; ++i) {
                pqxx::nontransaction p(probe);
                saw_wait = !p.exec_params("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                          "AND datname = current_database() AND pid <> $1",
                                          lane.backendpid())
                                .empty();
                if (!saw_wait) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                }
            }
            w.exec_params("UPDATE campaigns SET pause_reason = pause_reason WHERE campaign_id = $1", id);
            w.commit();
        } catch (const std::exception& e) {
            try {
                w.abort();
            } catch (...) {
            }
            call.join();
            FAIL() << "the race did not go as planned (was the lane's side the one aborted?): " << e.what();
        }
        call.join();
        EXPECT_TRUE(saw_wait) << "the command never waited for the held rows";
        if (failed) {
            std::rethrow_exception(failed);
        }
        // The race really ended in a deadlock (and not, say, in the command not waiting at all).
        for (int i = 0; i < 100 && deadlocks() == before; ++i) {
            pqxx::nontransaction(*conn_).exec("SELECT pg_stat_clear_snapshot()");
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        EXPECT_EQ(deadlocks(), before + 1);
    }

    std::string state(std::int64_t campaign_id) {
        pqxx::nontransaction tx(*conn_);
        return tx.exec_params("SELECT state::text || ' ' || COALESCE(pause_reason, '') FROM campaigns "
                              "WHERE campaign_id = $1",
                              campaign_id)[0][0]
            .as<std::string>();
    }

    // The campaign's lead in a call, its lease live until `until` from now (negative: ended):
    // the ledger counts its pending reservations as in flight while the lease lasts.
    void in_a_call(std::int64_t campaign_id, int until_seconds = 3600) {
        pqxx::work tx(*conn_);
        tx.exec_params("UPDATE enrollments SET status = 'calling', lease_owner = 'test', "
                       "lease_expires_at = now() + make_interval(secs => $2) WHERE campaign_id = $1",
                       campaign_id, until_seconds);
        tx.commit();
    }

    ledger::reservation reserve_one(std::int64_t campaign_id, std::int64_t attempt, std::int64_t credits,
                                    const std::string& sender = "acc-1", ledger::time_point now = t0) {
        auto r = ledger::reserve(*conn_, {{attempt, campaign_id, sender, "invite", credits}}, now);
        return r.at(0);
    }

    std::unique_ptr<orchestrator_env> env_;
    std::unique_ptr<pqxx::connection> conn_;
    std::map<std::int64_t, std::int64_t> enrollment_;
};

TEST_F(LedgerTest, ReservePostReleasesTheRest) {
    auto c = campaign("c1");
    auto a = attempts(c, 1);
    EXPECT_EQ(ledger::set_budget(*conn_, c, {100, {}, {}}, t0).available, 100);

    auto r = reserve_one(c, a[0], 10);
    EXPECT_TRUE(r.reserved);
    EXPECT_FALSE(r.duplicate);
    EXPECT_EQ(r.credits, 10);
    EXPECT_EQ(r.available, 90);
    auto b = row("c1");
    EXPECT_EQ(b.available, 90);
    EXPECT_EQ(b.reserved, 10);
    EXPECT_EQ(b.spent, 0);

    auto p = ledger::post(*conn_, {{a[0], 7}}, t0).at(0);
    EXPECT_EQ(p.status, ledger::settle_status::posted);
    EXPECT_EQ(p.reserved, 10);
    EXPECT_EQ(p.posted, 7);
    EXPECT_EQ(p.overrun, 0);
    b = row("c1");
    EXPECT_EQ(b.available, 93);
    EXPECT_EQ(b.reserved, 0);
    EXPECT_EQ(b.spent, 7);
    EXPECT_EQ(scalar("SELECT posted FROM ledger_transfers WHERE attempt_id = " + std::to_string(a[0])), 7);
    // Double entry: every entry moves one amount from one account to another, and the balances
    // are the sums of the entries.
    EXPECT_EQ(scalar("SELECT sum(balance) FROM ledger_accounts"), 0);
    EXPECT_TRUE(problems().empty()) << problems()[0];
}

// A balance read taken while a call is in flight may see the API's charge before the ledger
// posts it (+N), and the next read the post without a charge (-N): drift, but explained by the
// call in flight (migration 0028), so serve does not warn. A balance that falls with nothing in
// flight to explain it is drift beyond the calls in flight.
TEST_F(LedgerTest, ACreditReadExplainsTheDriftOfCallsInFlight) {
    orch::engine::store db(env_->database_url());
    auto c = campaign("drifting");
    auto a = attempts(c, 1);
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    ASSERT_TRUE(reserve_one(c, a[0], 10).reserved);
    auto first = db.record_credit_read(1'000);
    EXPECT_EQ(first.drift, 0);  // the first read: nothing to compare
    // The API charged the call (3 credits); the ledger has not posted it yet.
    auto charged = db.record_credit_read(997);
    EXPECT_EQ(charged.drift, 3);
    EXPECT_EQ(charged.unexplained, 0) << "the call in flight may have cost up to its 10 reserved";
    // The ledger posts it; the balance has not moved since.
    ledger::post(*conn_, {{a[0], 3}}, t0);
    auto posted = db.record_credit_read(997);
    EXPECT_EQ(posted.drift, -3);
    EXPECT_EQ(posted.unexplained, 0) << "the last read's call in flight, posted since";
    // Nothing in flight, and the balance falls by 5: drift no call explains.
    auto lost = db.record_credit_read(992);
    EXPECT_EQ(lost.drift, 5);
    EXPECT_EQ(lost.unexplained, 5);
    // Beyond the reservation: a call reserved at 2 and a fall of 6 leave 4 unexplained.
    auto b = attempts(c, 1);
    ASSERT_TRUE(reserve_one(c, b[0], 2).reserved);
    auto over = db.record_credit_read(986);
    EXPECT_EQ(over.drift, 6);
    EXPECT_EQ(over.unexplained, 4);
}

// An apply's audience search is billed page by page before the apply books it: a read between
// the two sees the charge with nothing posted. The search's row (migration 0042) explains it as
// the workers' calls in flight are, and the read after the booking too. A row of an apply that
// died mid-search stops counting after an hour, or once its session has ended (0043): its pages
// are a drift the reads must report.
TEST_F(LedgerTest, ACreditReadExplainsTheDriftOfAnApplysSearchInFlight) {
    orch::engine::store db(env_->database_url());
    auto c = campaign("searching");
    auto a = attempts(c, 1);
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    EXPECT_EQ(db.record_credit_read(1'000).drift, 0);
    const auto search = db.begin_search_in_flight();
    db.hold_search_in_flight(search, 4);  // a page about to be sent, at its most
    db.hold_search_in_flight(search, 3);  // what it cost: the row keeps the most it was told
    auto billed = db.record_credit_read(997);
    EXPECT_EQ(billed.drift, 3);
    EXPECT_EQ(billed.unexplained, 0) << "the search in flight may have been billed up to 4";
    // The apply books the charge and ends the row.
    ASSERT_TRUE(reserve_one(c, a[0], 3).reserved);
    ledger::post(*conn_, {{a[0], 3}}, t0);
    db.end_search_in_flight(search);
    EXPECT_EQ(scalar("SELECT count(*) FROM searches_in_flight"), 0);
    auto booked = db.record_credit_read(997);
    EXPECT_EQ(booked.drift, -3);
    EXPECT_EQ(booked.unexplained, 0) << "the last read's search, booked since";

    // An apply that died mid-search an hour ago: its row no longer explains anything.
    const auto dead = db.begin_search_in_flight();
    db.hold_search_in_flight(dead, 5);
    EXPECT_EQ(scalar("UPDATE searches_in_flight SET started_at = now() - interval '61 minutes' WHERE search_id = " +
                     std::to_string(dead) + " RETURNING search_id"),
              dead);
    auto lost = db.record_credit_read(992);
    EXPECT_EQ(lost.drift, 5);
    EXPECT_EQ(lost.unexplained, 5);
    db.end_search_in_flight(dead);

    // An apply killed outright mid-search (migration 0043): while its session lives, its row
    // explains the pages billed; once the session has ended with it, within the hour too, the
    // row explains nothing, and its page billed since is the drift it is.
    {
        orch::engine::store apply(env_->database_url());
        const auto killed = apply.begin_search_in_flight();
        apply.hold_search_in_flight(killed, 2);
        auto live = db.record_credit_read(990);
        EXPECT_EQ(live.drift, 2);
        EXPECT_EQ(live.unexplained, 0) << "the apply's session lives: its search may have been billed";
        apply.hold_search_in_flight(killed, 4);  // its second page, billed as the apply dies
    }  // the apply's connection closes without removing its row
    EXPECT_EQ(scalar("SELECT count(*) FROM searches_in_flight"), 1);
    bool gone = false;  // the session's end reaches pg_stat_activity a moment after the close
    for (int i = 0; i < 100 && !gone; ++i) {
        gone = scalar("SELECT count(*) FROM searches_in_flight f JOIN pg_stat_activity p ON p.pid = f.backend_pid") == 0;
        if (!gone) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    ASSERT_TRUE(gone);
    auto after = db.record_credit_read(988);
    EXPECT_EQ(after.drift, 2);
    EXPECT_EQ(after.unexplained, 2) << "the killed apply's page was billed and never booked";
}

// A balance that rose was given credits (calls only take): a top-up is no drift. The read says
// how much came in, the rise plus what the ledger posted meanwhile; the reads after it compare
// with the new balance.
TEST_F(LedgerTest, ACreditTopUpIsNotDrift) {
    orch::engine::store db(env_->database_url());
    auto c = campaign("topped");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    EXPECT_EQ(db.record_credit_read(5).drift, 0);
    // 2 credits charged and posted, and 1,000 bought: 5 - 2 + 1,000.
    ASSERT_TRUE(reserve_one(c, a[0], 2).reserved);
    ledger::post(*conn_, {{a[0], 2}}, t0);
    auto topped = db.record_credit_read(1'003);
    EXPECT_EQ(topped.drift, 0);
    EXPECT_EQ(topped.unexplained, 0);
    EXPECT_EQ(topped.added, 1'000);
    // Then a charge posted and matched: no drift, nothing added.
    ASSERT_TRUE(reserve_one(c, a[1], 3).reserved);
    ledger::post(*conn_, {{a[1], 3}}, t0);
    auto after = db.record_credit_read(1'000);
    EXPECT_EQ(after.drift, 0);
    EXPECT_EQ(after.added, 0);
    EXPECT_EQ(scalar("SELECT sum(drift) FROM api_credit_reads"), 0);
    // A fall no post explains is still drift.
    EXPECT_EQ(db.record_credit_read(990).drift, 10);
}

TEST_F(LedgerTest, VoidReleasesEverything) {
    auto c = campaign("c1");
    auto a = attempts(c, 1);
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    reserve_one(c, a[0], 5);
    auto v = ledger::void_reservations(*conn_, {a[0]}, t0).at(0);
    EXPECT_EQ(v.status, ledger::settle_status::voided);
    EXPECT_EQ(v.reserved, 5);
    EXPECT_EQ(v.posted, 0);
    auto b = row("c1");
    EXPECT_EQ(b.available, 100);
    EXPECT_EQ(b.reserved, 0);
    EXPECT_EQ(b.spent, 0);
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_transfers WHERE state = 'voided' AND posted IS NULL"), 1);
    EXPECT_TRUE(problems().empty());
}

TEST_F(LedgerTest, OneSettlePostsSomeAndVoidsOthers) {
    auto c = campaign("c1");
    auto a = attempts(c, 3);
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    ledger::reserve(*conn_, {{a[0], c, "acc-1", "invite", 3}, {a[1], c, "acc-1", "invite", 3},
                             {a[2], c, "acc-1", "invite", 3}}, t0);
    pqxx::work tx(*conn_);
    auto s = ledger::settle(tx, {{a[0], 1}, {a[2], 3}}, {a[1]}, t0);
    tx.commit();
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].status, ledger::settle_status::posted);
    EXPECT_EQ(s[1].status, ledger::settle_status::posted);
    EXPECT_EQ(s[2].status, ledger::settle_status::voided);
    EXPECT_EQ(s[2].attempt_id, a[1]);
    auto b = row("c1");
    EXPECT_EQ(b.spent, 4);
    EXPECT_EQ(b.available, 96);
    EXPECT_EQ(b.reserved, 0);
    EXPECT_TRUE(problems().empty());
}

TEST_F(LedgerTest, SettlingTwiceChangesNothing) {
    auto c = campaign("c1");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    reserve_one(c, a[0], 4);
    reserve_one(c, a[1], 4);
    ASSERT_EQ(ledger::post(*conn_, {{a[0], 3}}, t0).at(0).status, ledger::settle_status::posted);
    ASSERT_EQ(ledger::void_reservations(*conn_, {a[1]}, t0).at(0).status, ledger::settle_status::voided);
    auto entries = scalar("SELECT count(*) FROM ledger_entries");

    // A retried settle: post again (even with another amount), void a posted one, post a voided one.
    auto again = ledger::post(*conn_, {{a[0], 4}, {a[1], 2}}, t0);
    EXPECT_EQ(again[0].status, ledger::settle_status::already_settled);
    EXPECT_EQ(again[0].posted, 3);
    EXPECT_EQ(again[1].status, ledger::settle_status::already_settled);
    EXPECT_EQ(ledger::void_reservations(*conn_, {a[0]}, t0).at(0).status, ledger::settle_status::already_settled);
    // A retried reserve of the same attempt reserves nothing more.
    auto dup = reserve_one(c, a[0], 50);
    EXPECT_TRUE(dup.duplicate);
    EXPECT_FALSE(dup.reserved);
    EXPECT_EQ(dup.credits, 4);

    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_entries"), entries);
    auto b = row("c1");
    EXPECT_EQ(b.spent, 3);
    EXPECT_EQ(b.available, 97);
    EXPECT_EQ(b.reserved, 0);
    EXPECT_TRUE(problems().empty());
}

TEST_F(LedgerTest, TwoConcurrentSettlesOfOneAttemptCountOnce) {
    auto c = campaign("c1");
    auto a = attempts(c, 1);
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    reserve_one(c, a[0], 5);
    // Both transactions see the transfer pending; the second waits on its row lock, then finds it
    // posted and leaves it.
    pqxx::connection other(env_->database_url());
    pqxx::work first(*conn_);
    EXPECT_EQ(ledger::post(first, {{a[0], 5}}, t0).at(0).status, ledger::settle_status::posted);
    std::atomic<int> second_status{-1};
    std::thread t([&] {
        auto s = ledger::post(other, {{a[0], 5}}, t0).at(0);
        second_status = static_cast<int>(s.status);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    first.commit();
    t.join();
    EXPECT_EQ(second_status, static_cast<int>(ledger::settle_status::already_settled));
    EXPECT_EQ(row("c1").spent, 5);
    EXPECT_TRUE(problems().empty());
}

// A refusal while the campaign's calls in flight hold reservations that could cover it waits for
// them (in_flight: tried again 3-8 s later, the campaign runs on); once they have settled, a
// refusal pauses the campaign.
TEST_F(LedgerTest, RefusesAtZeroAndPausesTheCampaignOnceNothingIsInFlight) {
    auto c = campaign("c1");
    auto a = attempts(c, 5);
    ledger::set_budget(*conn_, c, {10, {}, {}}, t0);
    in_a_call(c);
    // In order: 6 fits, the next 6 does not (4 left, but the first holds 6), 4 still does, then
    // nothing is left.
    auto r = ledger::reserve(*conn_,
                             {{a[0], c, "acc-1", "search_people", 6},
                              {a[1], c, "acc-1", "search_people", 6},
                              {a[2], c, "acc-1", "invite", 4},
                              {a[3], c, "acc-1", "invite", 0}},
                             t0);
    EXPECT_TRUE(r[0].reserved);
    EXPECT_FALSE(r[1].reserved);
    EXPECT_EQ(r[1].why, ledger::refusal::in_flight);
    EXPECT_GE(r[1].retry_at, t0 + std::chrono::seconds(3));
    EXPECT_LE(r[1].retry_at, t0 + std::chrono::seconds(8));
    EXPECT_EQ(r[1].available, 0);   // what is left after the batch
    EXPECT_TRUE(r[2].reserved);
    EXPECT_TRUE(r[3].reserved);     // a free call fits an empty budget
    EXPECT_EQ(r[2].available, 0);
    auto waits = reserve_one(c, a[4], 1);
    EXPECT_FALSE(waits.reserved);
    EXPECT_EQ(waits.why, ledger::refusal::in_flight);   // 10 held in flight
    EXPECT_EQ(row("c1").state, "active");

    // The calls in flight are charged all they held: nothing comes back, and the next refusal
    // pauses the campaign.
    ledger::post(*conn_, {{a[0], 6}, {a[2], 4}, {a[3], 0}}, t0);
    auto one_more = reserve_one(c, a[1], 6);
    EXPECT_FALSE(one_more.reserved);
    EXPECT_EQ(one_more.why, ledger::refusal::campaign_budget);

    auto b = row("c1");
    EXPECT_EQ(b.available, 0);
    EXPECT_EQ(b.reserved, 0);
    EXPECT_EQ(b.spent, 10);
    EXPECT_EQ(b.state, "paused");
    EXPECT_EQ(b.pause_reason.rfind("budget exhausted:", 0), 0u) << b.pause_reason;
    EXPECT_NE(b.pause_reason.find("0 credits left, a call (invite) needs up to 6"), std::string::npos)
        << b.pause_reason;
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_transfers"), 3);
    EXPECT_TRUE(problems().empty());
    // Resumed without a raise, it would pause again at once: the resume says so.
    auto resumed = env_->run({"campaign", "resume", "c1"});
    EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
    EXPECT_NE(resumed.output.find("note: it was paused for its budget (budget exhausted: 0 credits left"),
              std::string::npos)
        << resumed.output;
    EXPECT_NE(resumed.output.find("0 credits are available"), std::string::npos) << resumed.output;
}

// A call that needs more than the budget left and everything in flight together pauses the
// campaign at once: waiting could not help.
TEST_F(LedgerTest, ARefusalBeyondWhatIsInFlightPausesAtOnce) {
    auto c = campaign("c1");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {10, {}, {}}, t0);
    in_a_call(c);
    EXPECT_TRUE(reserve_one(c, a[0], 6).reserved);
    EXPECT_EQ(reserve_one(c, a[1], 10).why, ledger::refusal::in_flight);   // 4 left + 6 held = 10
    auto r = reserve_one(c, a[1], 11);   // 4 left + 6 held < 11
    EXPECT_FALSE(r.reserved);
    EXPECT_EQ(r.why, ledger::refusal::campaign_budget);
    EXPECT_EQ(row("c1").state, "paused");
}

// A reservation whose call's lease has ended (its worker gone, or its row parked behind an
// unavailable account) settles only when a claim reconciles the row, maybe days later: a refusal
// does not wait for it, and pauses the campaign.
TEST_F(LedgerTest, ACallWhoseLeaseEndedIsNotWaitedFor) {
    auto c = campaign("c1");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {3, {}, {}}, t0);
    EXPECT_TRUE(reserve_one(c, a[0], 2).reserved);
    in_a_call(c, -60);   // ended by the database's clock, which judges leases (as the claim does)
    auto r = reserve_one(c, a[1], 2);
    EXPECT_EQ(r.why, ledger::refusal::campaign_budget);
    EXPECT_EQ(row("c1").state, "paused");
}

// Near the end of a budget, an invite's reservation (its refusal check included) finds too little
// while another invite holds 2 that it will mostly give back: it waits, and once the other is
// charged its 1 credit, it reserves.
TEST_F(LedgerTest, ACallWaitsForTheCreditsACallInFlightGivesBack) {
    auto c = campaign("c1");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {3, {}, {}}, t0);
    in_a_call(c);
    EXPECT_TRUE(reserve_one(c, a[0], 2).reserved);
    auto waits = reserve_one(c, a[1], 2);
    EXPECT_FALSE(waits.reserved);
    EXPECT_EQ(waits.why, ledger::refusal::in_flight);
    EXPECT_EQ(waits.available, 1);
    EXPECT_EQ(row("c1").state, "active");
    ledger::post(*conn_, {{a[0], 1}}, t0);
    auto then = reserve_one(c, a[1], 2);
    EXPECT_TRUE(then.reserved);
    EXPECT_EQ(then.available, 0);
    EXPECT_EQ(row("c1").state, "active");
    EXPECT_TRUE(problems().empty());
}

TEST_F(LedgerTest, RaisingTheBudgetResumesLoweringNeverGoesNegative) {
    auto c = campaign("c1");
    auto a = attempts(c, 3);
    ledger::set_budget(*conn_, c, {10, {}, {}}, t0);
    reserve_one(c, a[0], 8);
    ledger::post(*conn_, {{a[0], 8}}, t0);
    EXPECT_FALSE(reserve_one(c, a[1], 5).reserved);
    EXPECT_EQ(row("c1").state, "paused");

    auto raised = ledger::set_budget(*conn_, c, {20, {}, {}}, t0);
    EXPECT_EQ(raised.available, 12);
    EXPECT_TRUE(raised.resumed);
    EXPECT_EQ(state(c), "active ");
    EXPECT_TRUE(reserve_one(c, a[1], 5).reserved);   // a fresh attempt id is not needed: a[1] had no transfer

    // Lowered below what is spent and reserved (8 + 5): available stops at 0.
    auto lowered = ledger::set_budget(*conn_, c, {9, {}, {}}, t0);
    EXPECT_EQ(lowered.available, 0);
    EXPECT_FALSE(lowered.resumed);
    auto b = row("c1");
    EXPECT_EQ(b.available, 0);
    EXPECT_EQ(b.reserved, 5);
    EXPECT_EQ(b.spent, 8);
    EXPECT_EQ(b.limits->total, 9);
    // Raised again: available = budget - reserved - spent.
    EXPECT_EQ(ledger::set_budget(*conn_, c, {15, {}, {}}, t0).available, 2);
    // An operator's pause is not lifted by a budget change.
    {
        pqxx::work tx(*conn_);
        tx.exec_params("UPDATE campaigns SET state = 'paused', pause_reason = 'paused by an operator' "
                       "WHERE campaign_id = $1",
                       c);
        tx.commit();
    }
    EXPECT_FALSE(ledger::set_budget(*conn_, c, {30, {}, {}}, t0).resumed);
    EXPECT_EQ(state(c), "paused paused by an operator");
    EXPECT_TRUE(problems().empty());
}

TEST_F(LedgerTest, ChargesAboveTheReservationAreRecordedHonestly) {
    auto c = campaign("c1");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {10, {}, {}}, t0);
    // Charged 5 for 2 reserved: the budget absorbs the 3.
    reserve_one(c, a[0], 2);
    auto p = ledger::post(*conn_, {{a[0], 5}}, t0).at(0);
    EXPECT_EQ(p.overrun, 3);
    EXPECT_EQ(p.shortfall, 0);
    auto b = row("c1");
    EXPECT_EQ(b.available, 5);
    EXPECT_EQ(b.spent, 5);
    EXPECT_EQ(b.state, "active");

    // Charged 8 for 4 reserved with 1 left: 1 absorbed, 3 beyond the budget; available stays at 0,
    // spent is the truth, and the campaign is paused.
    reserve_one(c, a[1], 4);
    p = ledger::post(*conn_, {{a[1], 8}}, t0).at(0);
    EXPECT_EQ(p.posted, 8);
    EXPECT_EQ(p.overrun, 4);
    EXPECT_EQ(p.shortfall, 3);
    b = row("c1");
    EXPECT_EQ(b.available, 0);
    EXPECT_EQ(b.spent, 13);
    EXPECT_EQ(b.shortfall, 3);
    EXPECT_EQ(b.overrun, 7);
    EXPECT_EQ(b.state, "paused");
    EXPECT_NE(b.pause_reason.find("3 credits beyond the budget"), std::string::npos) << b.pause_reason;
    EXPECT_TRUE(problems().empty());
    // The shortfall counts as spent when the budget is raised.
    auto raised = ledger::set_budget(*conn_, c, {20, {}, {}}, t0);
    EXPECT_EQ(raised.available, 7);
    EXPECT_TRUE(raised.resumed);
}

TEST_F(LedgerTest, AChargeThatWasNeverReservedIsStillRecorded) {
    auto c = campaign("c1");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {10, {}, {}}, t0);
    auto s = ledger::post(*conn_, {{a[0], 2, c, "acc-1", "check_invitation"}, {a[1], 2}}, t0);
    EXPECT_EQ(s[0].status, ledger::settle_status::posted);
    EXPECT_EQ(s[0].reserved, 0);
    EXPECT_EQ(s[0].overrun, 2);
    EXPECT_EQ(s[1].status, ledger::settle_status::unknown);   // no campaign to record it under
    auto b = row("c1");
    EXPECT_EQ(b.spent, 2);
    EXPECT_EQ(b.available, 8);
    EXPECT_TRUE(problems().empty());
}

// A charge with no step attempt (the audience search of `campaign apply`): one transfer posted
// at once (attempt_id NULL, nothing reserved, action and sender and day as given), absorbed from
// the available balance; the spend views count it under its action; the books close.
TEST_F(LedgerTest, AChargeWithNoAttemptIsPostedAtOnce) {
    auto c = campaign("c1");
    ledger::set_budget(*conn_, c, {10, {}, {}}, t0);
    pqxx::work tx(*conn_);
    auto s = ledger::charge(tx, {c, "acc-1", "search_people", 3}, t0);
    tx.commit();
    EXPECT_EQ(s.status, ledger::settle_status::posted);
    EXPECT_EQ(s.attempt_id, 0);
    EXPECT_EQ(s.reserved, 0);
    EXPECT_EQ(s.posted, 3);
    EXPECT_EQ(s.overrun, 3);
    EXPECT_EQ(s.shortfall, 0);
    pqxx::result t;
    std::vector<ledger::spend_row> by_action;
    {
        pqxx::nontransaction read(*conn_);
        t = read.exec("SELECT attempt_id IS NULL, state::text, reserved, posted, overrun, shortfall, action, sender, "
                      "day::text, settled_at IS NOT NULL, cardinality(scopes) FROM ledger_transfers");
        by_action = ledger::spend(read, c, ledger::dimension::action);
    }
    ASSERT_EQ(t.size(), 1u);
    EXPECT_TRUE(t[0][0].as<bool>());
    EXPECT_EQ(t[0][1].as<std::string>(), "posted");
    EXPECT_EQ(t[0][2].as<std::int64_t>(), 0);
    EXPECT_EQ(t[0][3].as<std::int64_t>(), 3);
    EXPECT_EQ(t[0][4].as<std::int64_t>(), 3);
    EXPECT_EQ(t[0][5].as<std::int64_t>(), 0);
    EXPECT_EQ(t[0][6].as<std::string>(), "search_people");
    EXPECT_EQ(t[0][7].as<std::string>(), "acc-1");
    EXPECT_EQ(t[0][8].as<std::string>(), "2026-03-10");
    EXPECT_TRUE(t[0][9].as<bool>());
    EXPECT_EQ(t[0][10].as<int>(), 1);   // the campaign's scope only: no caps
    // Its entries: the whole charge absorbed from `available` into `spent`.
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_entries WHERE kind = 'absorb' AND amount = 3"), 1);
    auto b = row("c1");
    EXPECT_EQ(b.available, 7);
    EXPECT_EQ(b.spent, 3);
    EXPECT_EQ(b.reserved, 0);
    EXPECT_EQ(b.state, "active");
    ASSERT_EQ(by_action.size(), 1u);
    EXPECT_EQ(by_action[0].key, "search_people");
    EXPECT_EQ(by_action[0].calls, 1);
    EXPECT_EQ(by_action[0].posted_calls, 1);
    EXPECT_EQ(by_action[0].reserved_posted, 0);
    EXPECT_EQ(by_action[0].posted, 3);
    EXPECT_TRUE(problems().empty());

    // Each call is a charge of its own (no idempotency key): a second search is a second transfer,
    // and a search the budget cannot cover is recorded whole: 7 absorbed, 2 a shortfall, paused.
    pqxx::work again(*conn_);
    EXPECT_EQ(ledger::charge(again, {c, "acc-1", "search_people", 0}, t0).posted, 0);
    auto over = ledger::charge(again, {c, "acc-1", "search_people", 9}, t0);
    again.commit();
    EXPECT_EQ(over.posted, 9);
    EXPECT_EQ(over.shortfall, 2);
    b = row("c1");
    EXPECT_EQ(b.available, 0);
    EXPECT_EQ(b.spent, 12);
    EXPECT_EQ(b.shortfall, 2);
    EXPECT_EQ(b.state, "paused");
    EXPECT_EQ(b.pause_reason,
              "budget exhausted: the API charged 2 credits beyond the budget (search_people: 9 credits)");
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_transfers WHERE attempt_id IS NULL AND state = 'posted'"), 3);
    EXPECT_TRUE(problems().empty());
    // The shortfall counts as spent when the budget is raised, as for any charge beyond it.
    auto raised = ledger::set_budget(*conn_, c, {20, {}, {}}, t0);
    EXPECT_EQ(raised.available, 8);
    EXPECT_TRUE(raised.resumed);
    EXPECT_TRUE(problems().empty());
}

// The charge draws from the caps a reservation of it would (the sender's, the day's), absorbed as
// far as each goes; beyond a cap is not a shortfall of the campaign (caps never pause it). Bad
// input is refused and changes nothing.
TEST_F(LedgerTest, AChargeDrawsFromTheCapsAndRefusesBadInput) {
    auto c = campaign("c1");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {100, 4, 5}, t0);
    {
        pqxx::work tx(*conn_);
        EXPECT_THROW(ledger::charge(tx, {0, "acc-A", "search_people", 1}, t0), std::invalid_argument);
        EXPECT_THROW(ledger::charge(tx, {c, "acc-A", "search_people", -1}, t0), std::invalid_argument);
        EXPECT_THROW(ledger::charge(tx, {c, "acc-A", "", 1}, t0), std::invalid_argument);
    }
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_transfers"), 0);
    pqxx::work tx(*conn_);
    auto s = ledger::charge(tx, {c, "acc-A", "search_people", 6}, t0);
    tx.commit();
    EXPECT_EQ(s.shortfall, 0);
    EXPECT_EQ(scalar("SELECT cardinality(scopes) FROM ledger_transfers"), 3);
    EXPECT_EQ(scalar("SELECT available FROM ledger_scope_balances WHERE scope = 'account' AND sender = 'acc-A'"), 0);
    EXPECT_EQ(scalar("SELECT spent FROM ledger_scope_balances WHERE scope = 'account' AND sender = 'acc-A'"), 6);
    EXPECT_EQ(scalar("SELECT available FROM ledger_scope_balances WHERE scope = 'day'"), 0);
    EXPECT_EQ(scalar("SELECT spent FROM ledger_scope_balances WHERE scope = 'day'"), 6);
    auto b = row("c1");
    EXPECT_EQ(b.available, 94);
    EXPECT_EQ(b.state, "active");
    // The sender's cap and today's are used up: its next call waits, another sender's too (day).
    EXPECT_EQ(reserve_one(c, a[0], 1, "acc-A").why, ledger::refusal::day_budget);
    EXPECT_TRUE(reserve_one(c, a[1], 1, "acc-B", t0 + hours(13)).reserved);
    EXPECT_TRUE(problems().empty());
}

// A search's pages may list one person twice, however spelled: one lead, and the apply's count
// of leads says so.
TEST_F(LedgerTest, CampaignApplyCountsARepeatedPersonOnce) {
    orch::engine::store db(env_->database_url());
    {
        pqxx::work tx(*conn_);
        tx.exec("INSERT INTO accounts (account_id) VALUES ('acc-1') ON CONFLICT DO NOTHING");
        tx.commit();
    }
    std::vector<orch::engine::lead_input> leads = {{"https://example.com/in/p1", json::object()},
                                                   {"https://www.example.com/in/%70%31/", json::object()},
                                                   {"https://example.com/in/p2", json::object()}};
    auto r = db.apply_campaign("repeats", json{{"budget_credits", 10}}, "v1", "check", leads, {"acc-1"}, t0);
    EXPECT_EQ(r.leads, 2);
    EXPECT_EQ(r.enrolled, 2);
    EXPECT_EQ(scalar("SELECT count(*) FROM enrollments e JOIN campaigns c USING (campaign_id) WHERE c.name = 'repeats'"),
              2);
}

// store::apply_campaign with the audience search's charge: booked in the apply's transaction
// against the budget the apply set, again on an unchanged re-apply (each search sent costs);
// a charge the budget cannot cover pauses the campaign and parks its leads; an apply that is
// refused records nothing. The funnel counts no step for it.
TEST_F(LedgerTest, CampaignApplyBooksTheAudienceSearch) {
    orch::engine::store db(env_->database_url());
    {
        pqxx::work tx(*conn_);
        tx.exec("INSERT INTO accounts (account_id) VALUES ('acc-1') ON CONFLICT DO NOTHING");
        tx.commit();
    }
    json def = {{"budget_credits", 10}};
    std::vector<orch::engine::lead_input> leads = {{"https://example.com/in/p1", json::object()},
                                                   {"https://example.com/in/p2", json::object()}};
    const orch::engine::apply_charge search{"acc-1", "search_people", 3};
    auto first = db.apply_campaign("searched", def, "v1", "check", leads, {"acc-1"}, t0, {}, search);
    EXPECT_TRUE(first.created);
    EXPECT_EQ(first.enrolled, 2);
    EXPECT_EQ(first.charged, 3);
    EXPECT_EQ(first.shortfall, 0);
    EXPECT_TRUE(first.paused.empty());
    EXPECT_EQ(row("searched").available, 7);
    EXPECT_EQ(row("searched").spent, 3);
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_transfers WHERE attempt_id IS NULL AND action = 'search_people' "
                     "AND sender = 'acc-1' AND posted = 3"),
              1);

    auto same = db.apply_campaign("searched", def, "v1", "check", leads, {"acc-1"}, t0, {}, search);
    EXPECT_FALSE(same.changed);
    EXPECT_EQ(same.charged, 3);
    EXPECT_EQ(row("searched").available, 4);
    EXPECT_EQ(row("searched").spent, 6);

    // A file audience (no charge) books nothing.
    EXPECT_EQ(db.apply_campaign("searched", def, "v1", "check", leads, {"acc-1"}, t0).charged, 0);
    EXPECT_EQ(row("searched").spent, 6);

    // 6 credits on 4 available: 2 beyond the budget; paused, and its leads leave the claim index.
    auto over = db.apply_campaign("searched", def, "v1", "check", leads, {"acc-1"}, t0, {},
                                  orch::engine::apply_charge{"acc-1", "search_people", 6});
    EXPECT_EQ(over.charged, 6);
    EXPECT_EQ(over.shortfall, 2);
    EXPECT_EQ(over.paused.rfind("budget exhausted:", 0), 0u) << over.paused;
    auto b = row("searched");
    EXPECT_EQ(b.state, "paused");
    EXPECT_EQ(b.spent, 12);
    EXPECT_EQ(b.available, 0);
    EXPECT_EQ(b.shortfall, 2);
    EXPECT_EQ(scalar("SELECT count(*) FROM enrollments e JOIN campaigns c USING (campaign_id) "
                     "WHERE c.name = 'searched' AND e.due_at <> 'infinity'"),
              0);
    // No step was made: the funnel counts the leads found and no call, no credit.
    auto f = db.funnel("searched");
    EXPECT_EQ(f.found, 2);
    EXPECT_EQ(f.checked, 0);
    EXPECT_EQ(f.credits, 0);
    EXPECT_EQ(scalar("SELECT count(*) FROM step_attempts"), 0);

    // Refused (a cancelled campaign: a conflict, not a database failure): nothing stored, the
    // search's charge included. (The CLI and the admin API refuse it before any search is sent.)
    EXPECT_TRUE(db.set_campaign_state("searched", "cancelled", ""));
    EXPECT_THROW(db.apply_campaign("searched", def, "v1", "check", leads, {"acc-1"}, t0, {}, search),
                 orch::engine::campaign_conflict);
    EXPECT_EQ(row("searched").spent, 12);
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_transfers"), 3);
    EXPECT_TRUE(problems().empty());
}

TEST_F(LedgerTest, BadInputIsRefusedAndChangesNothing) {
    auto c = campaign("c1");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {10, {}, {}}, t0);
    EXPECT_THROW(reserve_one(c, a[0], -1), std::invalid_argument);
    EXPECT_THROW(ledger::reserve(*conn_, {{a[0], c, "", "x", 1}, {a[0], c, "", "x", 1}}, t0), std::invalid_argument);
    EXPECT_THROW(ledger::post(*conn_, {{a[0], -3}}, t0), std::invalid_argument);
    EXPECT_THROW(ledger::void_reservations(*conn_, {0}, t0), std::invalid_argument);
    EXPECT_THROW(ledger::set_budget(*conn_, c, {-5, {}, {}}, t0), std::invalid_argument);
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_transfers"), 0);
    // No budget in the ledger: refused, not an error.
    auto other = campaign("c2");
    auto b = attempts(other, 1);
    EXPECT_EQ(reserve_one(other, b[0], 1).why, ledger::refusal::no_budget);
    // An attempt id with no intent row: the ledger writes no transfer for it and refuses the
    // batch, with the valid reservation next to it.
    EXPECT_THROW(reserve_one(c, 999999, 1), orch::engine::store_error);
    EXPECT_THROW(ledger::reserve(*conn_, {{a[1], c, "acc-1", "invite", 1}, {999999, c, "acc-1", "invite", 1}}, t0),
                 orch::engine::store_error);
    EXPECT_EQ(row("c1").available, 10);
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_transfers"), 0);
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_entries WHERE transfer_id IS NOT NULL"), 0);
    // The database itself refuses an overdraft, whatever the C++ computes.
    pqxx::work tx(*conn_);
    EXPECT_THROW(tx.exec("UPDATE ledger_accounts SET balance = balance - 11 WHERE kind = 'available'"),
                 pqxx::check_violation);
}

TEST_F(LedgerTest, PerAccountCaps) {
    auto c = campaign("c1");
    auto a = attempts(c, 4);
    ledger::set_budget(*conn_, c, {100, 5, {}}, t0);
    EXPECT_TRUE(reserve_one(c, a[0], 3, "acc-A").reserved);
    auto r = reserve_one(c, a[1], 3, "acc-A");
    EXPECT_FALSE(r.reserved);
    EXPECT_EQ(r.why, ledger::refusal::account_budget);
    EXPECT_EQ(r.available, 2);
    EXPECT_TRUE(reserve_one(c, a[2], 3, "acc-B").reserved);
    EXPECT_EQ(state(c), "active ");   // one sender's cap does not pause the campaign
    // Released credits go back to the sender's cap too.
    ledger::void_reservations(*conn_, {a[0]}, t0);
    EXPECT_TRUE(reserve_one(c, a[3], 5, "acc-A").reserved);
    // Raising the cap raises every sender's.
    ledger::set_budget(*conn_, c, {100, 8, {}}, t0);
    EXPECT_EQ(scalar("SELECT available FROM ledger_scope_balances WHERE scope = 'account' AND sender = 'acc-A'"), 3);
    EXPECT_EQ(scalar("SELECT available FROM ledger_scope_balances WHERE scope = 'account' AND sender = 'acc-B'"), 5);
    EXPECT_EQ(row("c1").available, 92);
    EXPECT_TRUE(problems().empty());
}

// A cap with room once the calls in flight settle waits for them rather than a day: a sender's
// cap counts that sender's calls, today's cap all of them.
TEST_F(LedgerTest, ACapWaitsForTheCallsInFlightBeforeADay) {
    auto c = campaign("c1");   // its lead's sender is acc-1
    auto a = attempts(c, 4);
    ledger::set_budget(*conn_, c, {100, 5, {}}, t0);
    in_a_call(c);
    EXPECT_TRUE(reserve_one(c, a[0], 3).reserved);
    auto waits = reserve_one(c, a[1], 3);
    EXPECT_EQ(waits.why, ledger::refusal::in_flight);   // 2 left + 3 held by acc-1's call
    EXPECT_EQ(waits.available, 2);
    // Another sender's calls are not that sender's: acc-B's cap refuses for the day.
    EXPECT_TRUE(reserve_one(c, a[2], 5, "acc-B").reserved);
    EXPECT_EQ(reserve_one(c, a[3], 1, "acc-B").why, ledger::refusal::account_budget);

    auto d = campaign("c2");
    auto b = attempts(d, 2);
    ledger::set_budget(*conn_, d, {100, {}, 5}, t0);
    in_a_call(d);
    EXPECT_TRUE(reserve_one(d, b[0], 4).reserved);
    auto today = reserve_one(d, b[1], 2);
    EXPECT_EQ(today.why, ledger::refusal::in_flight);   // 1 left today + 4 held
    ledger::post(*conn_, {{b[0], 4}}, t0);
    EXPECT_EQ(reserve_one(d, b[1], 2).why, ledger::refusal::day_budget);
    EXPECT_EQ(state(d), "active ");
}

TEST_F(LedgerTest, PerDayCaps) {
    auto c = campaign("c1");
    auto a = attempts(c, 4);
    ledger::set_budget(*conn_, c, {100, {}, 5}, t0);
    EXPECT_TRUE(reserve_one(c, a[0], 4).reserved);
    auto r = reserve_one(c, a[1], 2);
    EXPECT_FALSE(r.reserved);
    EXPECT_EQ(r.why, ledger::refusal::day_budget);
    EXPECT_EQ(r.retry_at, t0 + hours(12));   // the next UTC midnight
    EXPECT_EQ(state(c), "active ");
    // The reservation counts on its day even when posted the next day.
    ledger::post(*conn_, {{a[0], 4}}, t0 + hours(13));
    EXPECT_TRUE(reserve_one(c, a[1], 2, "acc-1", t0 + hours(13)).reserved);
    EXPECT_TRUE(reserve_one(c, a[2], 3, "acc-1", t0 + hours(13)).reserved);
    EXPECT_FALSE(reserve_one(c, a[3], 1, "acc-1", t0 + hours(13)).reserved);
    ledger::post(*conn_, {{a[1], 1}, {a[2], 3}}, t0 + hours(14));

    pqxx::nontransaction tx(*conn_);
    auto days = ledger::spend(tx, c, ledger::dimension::day);
    ASSERT_EQ(days.size(), 2u);
    EXPECT_EQ(days[0].key, "2026-03-10");
    EXPECT_EQ(days[0].posted, 4);
    EXPECT_EQ(days[1].key, "2026-03-11");
    EXPECT_EQ(days[1].posted, 4);
    EXPECT_EQ(days[1].reserved_posted, 5);
    EXPECT_EQ(tx.exec("SELECT available FROM ledger_scope_balances WHERE scope = 'day' AND day = '2026-03-11'")[0][0]
                  .as<std::int64_t>(),
              1);
    EXPECT_TRUE(ledger::check(tx).empty());
}

// A day cap counts the whole UTC day's spend of the campaign, also what it spent (or holds) while
// it had no day cap: a cap set during the day, or removed and set again, never lets the day spend
// more than it. Before, a day scope was funded with the whole cap when it was created.
TEST_F(LedgerTest, ADayCapCountsTheDaysSpendMadeWithoutACap) {
    auto c = campaign("c1");
    auto a = attempts(c, 7);
    const auto today_use = [&] {
        pqxx::nontransaction tx(*conn_);
        for (const auto& u : ledger::cap_use(tx, c, t0)) {
            if (u.scope == "day") {
                return std::tuple{u.reserved, u.spent, u.available};
            }
        }
        return std::tuple<std::int64_t, std::int64_t, std::int64_t>{-1, -1, -1};
    };
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    ASSERT_TRUE(reserve_one(c, a[0], 3).reserved);
    ASSERT_TRUE(reserve_one(c, a[1], 2).reserved);
    ledger::post(*conn_, {{a[0], 3}}, t0);
    // a[1] holds 2, a[0] cost 3: a day cap of 6 has 1 left, before any reservation under it.
    ledger::set_budget(*conn_, c, {100, {}, 6}, t0);
    EXPECT_EQ(today_use(), std::tuple(std::int64_t{2}, std::int64_t{3}, std::int64_t{1}));
    ledger::post(*conn_, {{a[1], 2}}, t0);
    EXPECT_EQ(reserve_one(c, a[2], 2).why, ledger::refusal::day_budget);
    ASSERT_TRUE(reserve_one(c, a[3], 1).reserved);
    EXPECT_EQ(today_use(), std::tuple(std::int64_t{1}, std::int64_t{5}, std::int64_t{0}));
    // Removed, 3 more spent without it, then set again to 12: 12 - 5 - 1 - 3 = 3 left.
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    ASSERT_TRUE(reserve_one(c, a[4], 3).reserved);
    ledger::post(*conn_, {{a[4], 3}}, t0);
    ledger::set_budget(*conn_, c, {100, {}, 12}, t0);
    EXPECT_EQ(today_use(), std::tuple(std::int64_t{1}, std::int64_t{8}, std::int64_t{3}));
    EXPECT_EQ(reserve_one(c, a[5], 4).why, ledger::refusal::day_budget);
    ASSERT_TRUE(reserve_one(c, a[5], 3).reserved);
    EXPECT_EQ(reserve_one(c, a[6], 1).why, ledger::refusal::day_budget);
    // The next day counts afresh.
    EXPECT_TRUE(reserve_one(c, a[6], 6, "acc-1", t0 + hours(13)).reserved);
    pqxx::nontransaction tx(*conn_);
    EXPECT_TRUE(ledger::check(tx).empty());
}

// A per-account cap counts all the campaign spent through the sender, also while it had no
// per-account cap, as a day cap counts the whole day: the sender's scope is funded with the cap
// less that spend when it is created, and when the cap is set again.
TEST_F(LedgerTest, APerAccountCapCountsWhatTheSenderSpentWithoutACap) {
    auto c = campaign("c1");
    auto a = attempts(c, 7);
    const auto sender_use = [&](const std::string& sender) {
        pqxx::nontransaction tx(*conn_);
        for (const auto& u : ledger::cap_use(tx, c, t0)) {
            if (u.scope == "account" && u.key == sender) {
                return std::tuple{u.reserved, u.spent, u.available};
            }
        }
        return std::tuple<std::int64_t, std::int64_t, std::int64_t>{-1, -1, -1};
    };
    using use = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    ASSERT_TRUE(reserve_one(c, a[0], 3, "acc-A").reserved);
    ASSERT_TRUE(reserve_one(c, a[1], 2, "acc-A").reserved);
    ASSERT_TRUE(reserve_one(c, a[2], 4, "acc-B").reserved);
    ledger::post(*conn_, {{a[0], 3}}, t0);
    // Through acc-A, a[1] holds 2 and a[0] cost 3: a cap of 6 has 1 left there, before any
    // reservation under it; through acc-B, 4 held, 2 left.
    ledger::set_budget(*conn_, c, {100, 6, {}}, t0);
    EXPECT_EQ(sender_use("acc-A"), use(2, 3, 1));
    EXPECT_EQ(sender_use("acc-B"), use(4, 0, 2));
    EXPECT_EQ(reserve_one(c, a[3], 2, "acc-A").why, ledger::refusal::account_budget);
    ASSERT_TRUE(reserve_one(c, a[3], 1, "acc-A").reserved);
    EXPECT_EQ(sender_use("acc-A"), use(3, 3, 0));
    EXPECT_EQ(reserve_one(c, a[4], 3, "acc-B").why, ledger::refusal::account_budget);
    ASSERT_TRUE(reserve_one(c, a[4], 2, "acc-B").reserved);
    // Removed, 3 more spent through acc-A without it, then set again to 10: 10 - 3 - 3 - 3 = 1 left.
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    ASSERT_TRUE(reserve_one(c, a[5], 3, "acc-A").reserved);
    ledger::post(*conn_, {{a[5], 3}}, t0);
    ledger::set_budget(*conn_, c, {100, 10, {}}, t0);
    EXPECT_EQ(sender_use("acc-A"), use(3, 6, 1));
    EXPECT_EQ(reserve_one(c, a[6], 2, "acc-A").why, ledger::refusal::account_budget);
    ASSERT_TRUE(reserve_one(c, a[6], 1, "acc-A").reserved);
    pqxx::nontransaction tx(*conn_);
    EXPECT_TRUE(ledger::check(tx).empty());
}

// No foreign key ties a transfer to its step attempt (the apply statement checks it instead, at
// a lower cost per call): ledger_check lists a transfer whose attempt row has gone.
TEST_F(LedgerTest, CheckListsATransferWhoseAttemptIsGone) {
    auto c = campaign("c1");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {10, {}, {}}, t0);
    ASSERT_TRUE(reserve_one(c, a[0], 1).reserved);
    ASSERT_TRUE(reserve_one(c, a[1], 1).reserved);
    EXPECT_TRUE(problems().empty());
    scalar("DELETE FROM step_attempts WHERE attempt_id = " + std::to_string(a[1]));
    auto found = problems();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].rfind("attempt: scope ", 0), 0u) << found[0];
    EXPECT_NE(found[0].find("transfers without their step attempt is 1, should be 0"), std::string::npos) << found[0];
}

TEST_F(LedgerTest, ViewsAndBudgetShow) {
    auto c = campaign("shown");
    auto a = attempts(c, 5);
    ledger::set_budget(*conn_, c, {50, {}, {}}, t0);
    ledger::reserve(*conn_,
                    {{a[0], c, "acc-A", "invite", 1},
                     {a[1], c, "acc-A", "invite", 1},
                     {a[2], c, "acc-B", "search_people", 3},
                     {a[3], c, "acc-B", "send", 1},
                     {a[4], c, "acc-B", "invite", 1}},
                    t0);
    ledger::post(*conn_, {{a[0], 1}, {a[2], 2}}, t0);
    ledger::void_reservations(*conn_, {a[1]}, t0);
    // Pending: a[3] (1) and a[4] (1).

    auto r = env_->run({"budget", "show", "shown", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    EXPECT_EQ(j["budget"], 50);
    EXPECT_EQ(j["spent"], 3);
    EXPECT_EQ(j["reserved"], 2);
    EXPECT_EQ(j["available"], 45);
    EXPECT_EQ(j["state"], "active");
    std::map<std::string, json> by_action;
    for (const auto& x : j["spend"]["by_action"]) {
        by_action[x["action"]] = x;
    }
    EXPECT_EQ(by_action["invite"]["calls"], 3);
    EXPECT_EQ(by_action["invite"]["posted"], 1);
    EXPECT_EQ(by_action["invite"]["voided"], 1);
    EXPECT_EQ(by_action["invite"]["reserved_pending"], 1);
    EXPECT_EQ(by_action["search_people"]["reserved_posted"], 3);
    EXPECT_EQ(by_action["search_people"]["posted"], 2);
    EXPECT_EQ(by_action["send"]["pending"], 1);
    std::map<std::string, json> by_account;
    for (const auto& x : j["spend"]["by_account"]) {
        by_account[x["account"]] = x;
    }
    EXPECT_EQ(by_account["acc-A"]["posted"], 1);
    EXPECT_EQ(by_account["acc-B"]["posted"], 2);
    EXPECT_EQ(by_account["acc-B"]["reserved_pending"], 2);
    ASSERT_EQ(j["spend"]["by_day"].size(), 1u);
    EXPECT_EQ(j["spend"]["by_day"][0]["day"], "2026-03-10");
    EXPECT_EQ(j["spend"]["by_day"][0]["posted"], 3);

    auto all = env_->run({"budget", "show", "--format", "json"});
    ASSERT_EQ(all.exit_code, 0) << all.output;
    EXPECT_EQ(json::parse(all.output)["campaigns"].size(), 1u);
    auto table = env_->run({"budget", "show", "shown"});
    ASSERT_EQ(table.exit_code, 0) << table.output;
    EXPECT_NE(table.output.find("search_people"), std::string::npos) << table.output;
    // CSV is one table per run (RFC 4180, CRLF): the budgets, or the --section asked for.
    auto csv = env_->run({"budget", "show", "shown", "--format", "csv"});
    ASSERT_EQ(csv.exit_code, 0) << csv.output;
    EXPECT_EQ(csv.output,
              "campaign,state,budget,per_account,per_day,available,reserved,spent,overrun,shortfall,pause_reason\r\n"
              "shown,active,50,,,45,2,3,0,0,\r\n");
    auto csv_by_account = env_->run({"budget", "show", "shown", "--format", "csv", "--section", "by_account"});
    ASSERT_EQ(csv_by_account.exit_code, 0) << csv_by_account.output;
    EXPECT_EQ(csv_by_account.output.rfind("account,calls,pending,posted_calls,voided,reserved_pending,reserved_posted,posted\r\n", 0),
              0u)
        << csv_by_account.output;
    EXPECT_NE(csv_by_account.output.find("\r\nacc-B,3,2,1,0,2,3,2\r\n"), std::string::npos) << csv_by_account.output;
    auto bad_section = env_->run({"budget", "show", "shown", "--format", "csv", "--section", "nope"});
    EXPECT_EQ(bad_section.exit_code, 2);
    EXPECT_NE(bad_section.output.find("--section: unknown section 'nope'; one of budgets, accounts, by_action"),
              std::string::npos)
        << bad_section.output;
    // --section in table and json too: one table, and an unknown name refused.
    auto by_day = env_->run({"budget", "show", "shown", "--section", "by_day"});
    ASSERT_EQ(by_day.exit_code, 0) << by_day.output;
    EXPECT_NE(by_day.output.find("spend by day"), std::string::npos) << by_day.output;
    // Its columns are JSON's and CSV's ("posted" counted calls in the table, credits in JSON).
    EXPECT_NE(by_day.output.find("calls  pending  posted_calls  voided  reserved_pending  reserved_posted  posted"),
              std::string::npos)
        << by_day.output;
    EXPECT_EQ(by_day.output.find("spend by action"), std::string::npos) << by_day.output;
    EXPECT_EQ(by_day.output.find("caps / paused because"), std::string::npos) << by_day.output;
    auto by_action_json = env_->run({"budget", "show", "shown", "--format", "json", "--section", "by_action"});
    ASSERT_EQ(by_action_json.exit_code, 0) << by_action_json.output;
    auto ja = json::parse(by_action_json.output.substr(by_action_json.output.find('{')), nullptr, false);
    ASSERT_TRUE(ja.is_object()) << by_action_json.output;
    EXPECT_TRUE(ja.contains("by_action")) << by_action_json.output;
    EXPECT_EQ(ja.size(), 1u) << by_action_json.output;
    EXPECT_EQ(env_->run({"budget", "show", "shown", "--section", "nope"}).exit_code, 2);
    auto unknown = env_->run({"budget", "show", "nope"});
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.output.find("no campaign named 'nope'"), std::string::npos) << unknown.output;
}

TEST_F(LedgerTest, CampaignApplySetsAndRaisesTheBudget) {
    orch::engine::store db(env_->database_url());
    json def = {{"budget_credits", 10}};
    auto applied = db.apply_campaign("applied", def, "v1", "check", {}, {}, t0);
    EXPECT_EQ(row("applied").available, 10);
    EXPECT_TRUE(applied.created);
    def["budget_credits"] = 25;
    def["changed"] = true;
    EXPECT_TRUE(db.apply_campaign("applied", def, "v2", "check", {}, {}, t0).changed);
    EXPECT_EQ(row("applied").available, 25);
    EXPECT_EQ(row("applied").limits->total, 25);
}

// A worker that pauses a campaign holds its ledger rows and then updates its row; campaign apply
// and `budget set` hold the campaign's row and then lock its ledger rows. Here another connection
// plays the worker: it holds the ledger rows, the store call waits for them, then the connection
// updates the campaign's row. Postgres aborts the store's transaction (it waited first, so its
// deadlock check runs first), and the store runs it again once the "worker" has committed.
TEST_F(LedgerTest, ApplyAndBudgetSetRunAgainWhenPostgresBreaksADeadlock) {
    // Postgres looks for a deadlock once, deadlock_timeout after a backend began to wait, and
    // aborts the backend that finds it. The store's sessions look after 3 s (its call begins to
    // wait first; the "worker" below has 3 s to close the cycle, plenty on a loaded machine),
    // the worker's after 60 s: the store's call is always the one aborted.
    pqxx::nontransaction(*conn_).exec(std::string("ALTER DATABASE ") + conn_->dbname() +
                                      " SET deadlock_timeout = '3s'");
    orch::engine::store db(env_->database_url());
    json def = {{"budget_credits", 10}};
    auto id = db.apply_campaign("racing", def, "v1", "check", {}, {}, t0).campaign_id;
    const std::vector<std::string> ledger_rows = {
        "SELECT 1 FROM ledger_budgets WHERE campaign_id = $1 FOR UPDATE",
        "SELECT 1 FROM ledger_accounts a JOIN ledger_scopes s ON s.scope_id = a.scope_id "
        "WHERE s.campaign_id = $1 FOR UPDATE OF a"};
    auto race = [&](const std::function<void()>& store_call) { race_with_a_lane(id, ledger_rows, store_call); };
    def["budget_credits"] = 20;
    orch::engine::apply_outcome applied;
    ASSERT_NO_THROW(race([&] { applied = db.apply_campaign("racing", def, "v2", "check", {}, {}, t0); }));
    EXPECT_TRUE(applied.changed);
    EXPECT_EQ(applied.version, 2);
    EXPECT_EQ(row("racing").available, 20);

    std::optional<orch::engine::budget_set_outcome> set;
    ASSERT_NO_THROW(race([&] {
        set = db.update_campaign_budget("racing", {std::optional<std::int64_t>(30), std::nullopt, std::nullopt}, t0);
    }));
    ASSERT_TRUE(set);
    EXPECT_EQ(row("racing").available, 30);
    EXPECT_TRUE(problems().empty());
}

// A resume locks the campaign's row and then unparks its leads; a lane transaction settling a
// lead of the campaign holds its row and may then touch the campaign's row. Postgres aborts the
// resume (its deadlock check runs first, as above), and the resume runs again once the "lane"
// has committed: the operator's click or command succeeds. Before, the dashboard's resume failed
// with a 503 (seen in its browser test).
TEST_F(LedgerTest, AResumeRunsAgainWhenPostgresBreaksADeadlockWithALane) {
    pqxx::nontransaction(*conn_).exec(std::string("ALTER DATABASE ") + conn_->dbname() +
                                      " SET deadlock_timeout = '3s'");
    orch::engine::store db(env_->database_url());
    const auto id = db.apply_campaign("resumed", json{{"budget_credits", 10}}, "v1", "check", {}, {}, t0).campaign_id;
    {
        pqxx::work tx(*conn_);
        tx.exec("INSERT INTO accounts (account_id) VALUES ('acc-r') ON CONFLICT DO NOTHING");
        tx.exec("INSERT INTO leads (canonical_url, profile_url) VALUES ('r/1', 'https://r/1')");
        tx.exec_params("INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step, status, next_run_at, "
                       "due_at) SELECT $1, 1, lead_id, 'acc-r', 'check', 'ready', now(), 'infinity' FROM leads "
                       "WHERE canonical_url = 'r/1'",
                       id);
        tx.exec_params("UPDATE campaigns SET state = 'paused', pause_reason = 'paused by an operator', pause_code = 'operator' "
                       "WHERE campaign_id = $1", id);
        tx.commit();
    }
    orch::engine::state_change resumed;
    ASSERT_NO_THROW(race_with_a_lane(id, {"SELECT 1 FROM enrollments WHERE campaign_id = $1 FOR UPDATE"}, [&] {
        resumed = orch::engine::change_campaign_state(db, "resumed", "resume");
    }));
    EXPECT_TRUE(resumed.changed);
    EXPECT_EQ(scalar("SELECT count(*) FROM campaigns WHERE name = 'resumed' AND state = 'active'"), 1);
    EXPECT_EQ(scalar("SELECT count(*) FROM enrollments WHERE due_at <= now()"), 1);   // unparked
}

// The file is the source of truth at apply: its caps are set, a cap the new version drops is
// removed, and a cap changed by `budget set` since is set back to the file's value.
TEST_F(LedgerTest, CampaignApplySetsAndClearsTheCaps) {
    orch::engine::store db(env_->database_url());
    json def = {{"budget_credits", 100}, {"budget_per_day_credits", 10}, {"budget_per_account_credits", 40}};
    db.apply_campaign("capped", def, "v1", "check", {}, {}, t0);
    auto b = row("capped").limits;
    ASSERT_TRUE(b);
    EXPECT_EQ(b->total, 100);
    EXPECT_EQ(b->per_day, 10);
    EXPECT_EQ(b->per_account, 40);

    auto changed = db.update_campaign_budget("capped", {std::nullopt, std::optional<std::int64_t>(20), std::nullopt}, t0);
    ASSERT_TRUE(changed);
    EXPECT_EQ(row("capped").limits->per_day, 20);
    EXPECT_EQ(row("capped").limits->per_account, 40);   // not given: unchanged

    def.erase("budget_per_account_credits");
    EXPECT_TRUE(db.apply_campaign("capped", def, "v2", "check", {}, {}, t0).changed);
    b = row("capped").limits;
    EXPECT_EQ(b->per_day, 10);                  // the file's value again
    EXPECT_FALSE(b->per_account);               // dropped from the file: no cap
    EXPECT_TRUE(problems().empty());
}

// store::update_campaign_budget (what `budget set` and PUT /v1/campaigns/{name}/budget run): a
// raise resumes a campaign the ledger paused and wakes its parked lead; a raised day cap makes a
// lead that waits for it due now; refused changes change nothing.
TEST_F(LedgerTest, UpdateCampaignBudgetResumesAndWakes) {
    orch::engine::store db(env_->database_url());
    auto c = campaign("live");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {1, {}, {}}, t0);
    EXPECT_TRUE(reserve_one(c, a[0], 1).reserved);
    // No call of the campaign is in flight (its lead is not in a call): the refusal pauses it.
    EXPECT_EQ(reserve_one(c, a[1], 1).why, ledger::refusal::campaign_budget);
    EXPECT_EQ(state(c).rfind("paused budget exhausted:", 0), 0u) << state(c);
    scalar("UPDATE enrollments SET due_at = 'infinity' WHERE campaign_id = " + std::to_string(c));

    using orch::engine::budget_update;
    using orch::engine::budget_update_error;
    EXPECT_THROW(db.update_campaign_budget("live", {std::int64_t{-1}, std::nullopt, std::nullopt}, t0), budget_update_error);
    EXPECT_THROW(db.update_campaign_budget("live", {std::nullopt, std::optional<std::int64_t>(5), std::nullopt}, t0),
                 budget_update_error);   // a day cap above the budget (1)
    EXPECT_FALSE(db.update_campaign_budget("nope", {std::int64_t{5}, std::nullopt, std::nullopt}, t0));
    EXPECT_EQ(row("live").limits->total, 1);
    EXPECT_FALSE(row("live").limits->per_day);
    EXPECT_EQ(state(c).substr(0, 6), "paused");

    auto r = db.update_campaign_budget("live", {std::int64_t{10}, std::nullopt, std::nullopt}, t0);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->resumed);
    EXPECT_EQ(r->total, 10);
    EXPECT_EQ(r->available, 9);   // 1 still reserved
    EXPECT_EQ(state(c), "active ");
    EXPECT_EQ(scalar("SELECT count(*) FROM enrollments WHERE due_at = 'infinity' AND campaign_id = " + std::to_string(c)), 0);

    // A lead waiting for the day cap (the worker's code, migration 0018) is due again when the cap
    // changes; the sentence is for people only: a lead with the same sentence but no code (as a
    // reworded one would be) is not matched by it.
    scalar("UPDATE enrollments SET due_at = now() + interval '5 hours', next_run_at = now() + interval '5 hours', "
           "reason = 'waiting for the campaign''s daily budget (tomorrow, UTC)', wait_code = NULL "
           "WHERE campaign_id = " + std::to_string(c));
    r = db.update_campaign_budget("live", {std::nullopt, std::optional<std::int64_t>(4), std::nullopt}, t0);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->woken, 0);
    EXPECT_EQ(scalar("SELECT count(*) FROM enrollments WHERE due_at <= now() AND campaign_id = " + std::to_string(c)), 0);
    scalar("UPDATE enrollments SET wait_code = 'day_budget' WHERE campaign_id = " + std::to_string(c));
    r = db.update_campaign_budget("live", {std::nullopt, std::optional<std::int64_t>(5), std::nullopt}, t0);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->resumed);
    EXPECT_EQ(r->per_day, 5);
    EXPECT_EQ(r->woken, 1);
    EXPECT_EQ(scalar("SELECT count(*) FROM enrollments WHERE due_at <= now() AND campaign_id = " + std::to_string(c)), 1);
    EXPECT_TRUE(problems().empty());
}

// The race a clean-clone run once hit: a lane transaction read the day cap before `budget set`
// removed it, and wrote the lead's wait for the next day after the change's own wake-up had looked
// (it saw the lead's row still due). A budget change now waits, once committed, for the lane
// transactions that began before it (each holds engine/lane_enter's shared lock) and wakes the
// waits they wrote. The "lane" here is that transaction: its first statement is the worker's, and
// it writes the wait a refusal by the old cap writes.
TEST_F(LedgerTest, ABudgetChangeWakesAWaitALaneWroteFromTheOldCap) {
    orch::engine::store db(env_->database_url());
    auto c = campaign("racing-lane");
    ledger::set_budget(*conn_, c, {10, {}, 1}, t0);
    const std::string of_c = " WHERE campaign_id = " + std::to_string(c);
    ASSERT_EQ(scalar("SELECT count(*) FROM enrollments" + of_c + " AND next_run_at <= now() AND wait_code IS NULL"), 1);

    pqxx::connection lane_conn(env_->database_url());
    pqxx::work lane(lane_conn);
    lane.exec_params(std::string(orch::schema::query("engine/lane_enter")), 0, 0, 2500);
    lane.exec("UPDATE enrollments SET status = 'waiting', due_at = now() + interval '1 day', "
              "next_run_at = now() + interval '1 day', wait_code = 'day_budget', "
              "reason = 'waiting for the campaign''s daily budget'" + of_c);

    auto change = std::async(std::launch::async, [&] {
        return db.update_campaign_budget("racing-lane",
                                         {std::nullopt, std::make_optional(std::optional<std::int64_t>()), std::nullopt},
                                         t0);
    });
    // The change has committed (the cap is gone) and waits for the lane's transaction to end.
    EXPECT_EQ(change.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout);
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_budgets WHERE per_day IS NULL AND campaign_id = " +
                     std::to_string(c)),
              1);
    lane.commit();
    ASSERT_EQ(change.wait_for(std::chrono::seconds(15)), std::future_status::ready);
    auto r = change.get();
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->per_day);
    EXPECT_EQ(r->woken, 1);
    EXPECT_EQ(scalar("SELECT count(*) FROM enrollments" + of_c + " AND next_run_at <= now() AND due_at <= now()"), 1);
    EXPECT_TRUE(problems().empty());
}

// A lead operation races a worker's claim (the dashboard's test hit it): the lead read as ready
// became `calling` before the operation's lock got it. The refusal says what it is now ("calling
// the API"), not "it changed while this ran (ready)". The claim is a transaction that makes the
// row `calling` and commits while the stop waits for its lock. (This file's fixture has the rows.)
using LeadOpsPg = LedgerTest;
TEST_F(LeadOpsPg, AStopThatLosesToAClaimSaysTheLeadIsCalling) {
    auto c = campaign("claimed-meanwhile");
    const auto lead = scalar("SELECT lead_id FROM enrollments WHERE campaign_id = " + std::to_string(c));
    pqxx::connection worker(env_->database_url());
    pqxx::work claim(worker);
    claim.exec("UPDATE enrollments SET status = 'calling', lease_owner = 'w/0', "
               "lease_expires_at = now() + interval '1 minute' WHERE campaign_id = " + std::to_string(c));
    auto stop = std::async(std::launch::async, [&] {
        pqxx::connection conn(env_->database_url());
        orch::engine::lead_ops::request r;
        r.what = orch::engine::lead_ops::verb::stop;
        r.campaign = "claimed-meanwhile";
        r.lead_ids = {lead};
        return orch::engine::lead_ops::run(conn, r);
    });
    EXPECT_EQ(stop.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout) << "it waits for the claim";
    claim.commit();
    ASSERT_EQ(stop.wait_for(std::chrono::seconds(15)), std::future_status::ready);
    const auto out = stop.get();
    ASSERT_EQ(out.refused.size(), 1u);
    EXPECT_EQ(out.refused[0].state, "calling");
    EXPECT_NE(out.refused[0].why.find("calling the API"), std::string::npos) << out.refused[0].why;
    EXPECT_EQ(scalar("SELECT count(*) FROM enrollments WHERE status = 'calling' AND campaign_id = " + std::to_string(c)),
              1);
}

// `orchestrator budget set`: prints the budget as set, refuses bad input with exit 2 and changes
// nothing then; `budget show` lists the caps with today's use.
TEST_F(LedgerTest, BudgetSetCommand) {
    auto c = campaign("cli");
    ledger::set_budget(*conn_, c, {50, {}, {}}, t0);
    auto ok = env_->run({"budget", "set", "cli", "--credits", "80", "--per-day", "20", "--per-account", "30"});
    ASSERT_EQ(ok.exit_code, 0) << ok.output;
    EXPECT_NE(ok.output.find("budget 80 credits, per day 20, per account 30; 80 available"), std::string::npos)
        << ok.output;
    EXPECT_NE(ok.output.find("campaign apply"), std::string::npos) << ok.output;  // says the file wins at apply
    auto shown = env_->run({"budget", "show", "cli", "--format", "json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.output;
    auto j = json::parse(shown.output);
    EXPECT_EQ(j["per_day"], 20);
    EXPECT_EQ(j["today"]["per_day"], 20);
    EXPECT_EQ(j["today"]["spent"], 0);
    EXPECT_EQ(j["today"]["available"], 20);
    EXPECT_TRUE(j["accounts"].empty());
    auto table = env_->run({"budget", "show", "cli"});
    EXPECT_NE(table.output.find("per day 20 (today 0 used, 20 left)"), std::string::npos) << table.output;

    for (const std::vector<std::string>& bad :
         {std::vector<std::string>{"budget", "set", "nope", "--credits", "5"},
          {"budget", "set", "cli", "--credits", "-5"},
          {"budget", "set", "cli", "--credits", "none"},
          {"budget", "set", "cli", "--per-day", "x"},
          {"budget", "set", "cli", "--per-day", "0"},
          {"budget", "set", "cli", "--per-day", "81"},
          {"budget", "set", "cli"}}) {
        auto r = env_->run(bad);
        EXPECT_EQ(r.exit_code, 2) << bad[3] << ": " << r.output;
    }
    EXPECT_NE(env_->run({"budget", "set", "nope", "--credits", "5"}).output.find("no campaign named 'nope'"),
              std::string::npos);
    auto b = row("cli").limits;
    EXPECT_EQ(b->total, 80);
    EXPECT_EQ(b->per_day, 20);
    EXPECT_EQ(b->per_account, 30);

    auto none = env_->run({"budget", "set", "cli", "--per-day", "none"});
    ASSERT_EQ(none.exit_code, 0) << none.output;
    EXPECT_NE(none.output.find("per day none, per account 30"), std::string::npos) << none.output;
    EXPECT_FALSE(row("cli").limits->per_day);
}

// A per-account cap set at or below what a sender has used already leaves that sender nothing for
// the campaign, for good (the cap never resets): `budget set` names such senders, as its day-cap
// line says a day cap's use. Before, it said nothing of them.
TEST_F(LedgerTest, BudgetSetNamesTheSendersAPerAccountCapLeavesNothing) {
    auto c = campaign("peracc");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    ASSERT_TRUE(reserve_one(c, a[0], 12, "acc-1").reserved);
    ASSERT_TRUE(reserve_one(c, a[1], 3, "acc-2").reserved);

    auto lowered = env_->run({"budget", "set", "peracc", "--per-account", "10"});
    ASSERT_EQ(lowered.exit_code, 0) << lowered.output;
    EXPECT_NE(lowered.output.find("per-account cap: 1 sender has used it up, so nothing more goes out through it for "
                                  "this campaign until the cap is raised: acc-1 (12 used)"),
              std::string::npos)
        << lowered.output;
    EXPECT_EQ(lowered.output.find("acc-2"), std::string::npos) << lowered.output;

    auto both = env_->run({"budget", "set", "peracc", "--per-account", "3"});
    ASSERT_EQ(both.exit_code, 0) << both.output;
    EXPECT_NE(both.output.find("per-account cap: 2 senders have used it up, so nothing more goes out through them "
                               "for this campaign until the cap is raised: acc-1 (12 used), acc-2 (3 used)"),
              std::string::npos)
        << both.output;

    auto raised = env_->run({"budget", "set", "peracc", "--per-account", "20"});
    ASSERT_EQ(raised.exit_code, 0) << raised.output;
    EXPECT_EQ(raised.output.find("per-account cap:"), std::string::npos) << raised.output;
}

// ---- the worker's fast path (ledger.hpp, held_balances) ----

// What a worker cycle does: a savepoint, the fast path, and on a `contended` answer a rollback to
// the savepoint and the locked functions. Returns whether the fast path held.
bool fast_or_locked(pqxx::work& tx, const std::vector<ledger::post_request>& posts,
                    const std::vector<std::int64_t>& voids, const std::vector<ledger::reserve_request>& reserves,
                    std::vector<ledger::reservation>* reserved = nullptr) {
    tx.exec("SAVEPOINT fast");
    {
        ledger::held_balances held;
        orch::engine::result<void> fast;
        std::vector<ledger::reservation> got;
        if (auto settled = ledger::settle(tx, posts, voids, t0, held); !settled) {
            fast = settled.error();
        } else if (auto r = ledger::reserve(tx, reserves, t0, held); !r) {
            fast = r.error();
        } else {
            got = *r;
            fast = ledger::apply_balances(tx, held);
        }
        if (fast) {
            tx.exec("RELEASE SAVEPOINT fast");
            if (reserved != nullptr) {
                *reserved = got;
            }
            return true;
        }
        // Not an exception: the fast path answers `contended`, and the caller takes the locked one.
        EXPECT_EQ(fast.error().category, orch::engine::error_category::contended) << fast.error().message;
        tx.exec("ROLLBACK TO SAVEPOINT fast");
    }
    ledger::settle(tx, posts, voids, t0);
    auto r = ledger::reserve(tx, reserves, t0);
    if (reserved != nullptr) {
        *reserved = r;
    }
    return false;
}

TEST_F(LedgerTest, TheFastPathWritesWhatTheLockedPathWrites) {
    auto c = campaign("fast");
    auto a = attempts(c, 3);
    ledger::set_budget(*conn_, c, {100, {}, {}}, t0);
    {
        pqxx::work tx(*conn_);
        std::vector<ledger::reservation> got;
        EXPECT_TRUE(fast_or_locked(tx, {}, {}, {{a[0], c, "acc-1", "invite", 10}, {a[1], c, "acc-1", "invite", 20}},
                                   &got));
        ASSERT_EQ(got.size(), 2u);
        EXPECT_TRUE(got[0].reserved && got[1].reserved);
        tx.commit();
    }
    auto b = row("fast");
    EXPECT_EQ(b.available, 70);
    EXPECT_EQ(b.reserved, 30);
    {
        // a0 charged 4 of its 10, a1 voided, a2 reserved: in one cycle
        pqxx::work tx(*conn_);
        EXPECT_TRUE(fast_or_locked(tx, {{a[0], 4}}, {a[1]}, {{a[2], c, "acc-1", "invite", 5}}));
        tx.commit();
    }
    b = row("fast");
    EXPECT_EQ(b.available, 100 - 4 - 5);
    EXPECT_EQ(b.reserved, 5);
    EXPECT_EQ(b.spent, 4);
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_transfers WHERE state = 'posted'"), 1);
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_transfers WHERE state = 'voided'"), 1);
    EXPECT_EQ(problems(), std::vector<std::string>{});   // every balance is the sum of its entries
}

// A refusal, a charge above its reservation and an attempt settled before are decided under
// locks: the fast path gives way, its writes are rolled back with the savepoint, and the
// transaction goes on.
TEST_F(LedgerTest, TheFastPathLeavesDecisionsToTheLockedPath) {
    auto c = campaign("decide");
    auto a = attempts(c, 4);
    ledger::set_budget(*conn_, c, {30, {}, {}}, t0);
    {
        pqxx::work tx(*conn_);
        EXPECT_TRUE(fast_or_locked(tx, {}, {}, {{a[0], c, "acc-1", "invite", 10}, {a[1], c, "acc-1", "invite", 10}}));
        tx.commit();
    }
    {
        // a0 charged 15 of its 10: an overrun, absorbed from what is available
        pqxx::work tx(*conn_);
        EXPECT_FALSE(fast_or_locked(tx, {{a[0], 15}}, {}, {}));
        tx.commit();
    }
    auto b = row("decide");
    EXPECT_EQ(b.spent, 15);
    EXPECT_EQ(b.available, 30 - 15 - 10);
    {
        // a0 again: settled before
        pqxx::work tx(*conn_);
        EXPECT_FALSE(fast_or_locked(tx, {{a[0], 15}}, {}, {}));
        tx.commit();
    }
    {
        // a2 asking for more than is left, with a1's settle in the same cycle
        pqxx::work tx(*conn_);
        std::vector<ledger::reservation> got;
        EXPECT_FALSE(fast_or_locked(tx, {{a[1], 10}}, {}, {{a[2], c, "acc-1", "invite", 6}}, &got));
        ASSERT_EQ(got.size(), 1u);
        EXPECT_FALSE(got[0].reserved);
        EXPECT_EQ(got[0].why, ledger::refusal::campaign_budget);
        tx.commit();
    }
    b = row("decide");
    EXPECT_EQ(b.spent, 15 + 10);   // a0 not twice; a1 posted by the locked path
    EXPECT_EQ(b.reserved, 0);
    EXPECT_EQ(b.available, 5);
    EXPECT_EQ(state(c).rfind("paused budget exhausted:", 0), 0u) << state(c);
    EXPECT_EQ(problems(), std::vector<std::string>{});
}

// Two cycles read the same balance without locks and each reserves most of it: the second's
// apply_balances waits for the first to commit, is refused by the CHECK constraints, and the
// locked path then refuses its reservation. Nothing is overspent.
TEST_F(LedgerTest, AnOverdraftFoundAtTheEndIsDecidedAgainUnderLocks) {
    auto c = campaign("late");
    auto a = attempts(c, 2);
    ledger::set_budget(*conn_, c, {10, {}, {}}, t0);
    pqxx::work first(*conn_);
    first.exec("SAVEPOINT fast");
    ledger::held_balances held;
    ASSERT_TRUE(ledger::reserve(first, {{a[0], c, "acc-1", "invite", 8}}, t0, held)->at(0).reserved);
    ASSERT_TRUE(ledger::apply_balances(first, held));   // holds the campaign's rows until `first` ends

    std::atomic<bool> done{false};
    bool second_fast = true;
    std::vector<ledger::reservation> got;
    std::thread second([&] {
        pqxx::connection conn(env_->database_url());
        pqxx::work tx(conn);
        second_fast = fast_or_locked(tx, {}, {}, {{a[1], c, "acc-1", "invite", 8}}, &got);
        tx.commit();
        done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(done.load());   // waiting for the rows `first` holds
    first.commit();
    second.join();
    EXPECT_FALSE(second_fast);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_FALSE(got[0].reserved);
    auto b = row("late");
    EXPECT_EQ(b.reserved, 8);
    EXPECT_EQ(b.available, 2);
    EXPECT_EQ(problems(), std::vector<std::string>{});
}

// Two cycles settle the same call on the fast path, which reads the transfer without a lock: the
// second's write waits for the first to commit, then finds the transfer no longer pending and gives
// way; the locked path then sees it settled. The charge is spent once.
TEST_F(LedgerTest, ATransferSettledSinceItWasReadIsDecidedAgainUnderLocks) {
    auto c = campaign("twice");
    auto a = attempts(c, 1);
    ledger::set_budget(*conn_, c, {10, {}, {}}, t0);
    {
        pqxx::work tx(*conn_);
        EXPECT_TRUE(fast_or_locked(tx, {}, {}, {{a[0], c, "acc-1", "invite", 6}}));
        tx.commit();
    }
    pqxx::work first(*conn_);
    first.exec("SAVEPOINT fast");
    ledger::held_balances held;
    ASSERT_EQ(ledger::settle(first, {{a[0], 4}}, {}, t0, held)->at(0).status, ledger::settle_status::posted);
    ASSERT_TRUE(ledger::apply_balances(first, held));   // holds the transfer and the campaign's rows until `first` ends

    std::atomic<bool> done{false};
    bool second_fast = true;
    std::thread second([&] {
        pqxx::connection conn(env_->database_url());
        pqxx::work tx(conn);
        second_fast = fast_or_locked(tx, {{a[0], 4}}, {}, {});
        tx.commit();
        done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(done.load());   // its read saw the transfer pending; its write waits for `first`
    first.commit();
    second.join();
    EXPECT_FALSE(second_fast);
    auto b = row("twice");
    EXPECT_EQ(b.spent, 4);
    EXPECT_EQ(b.reserved, 0);
    EXPECT_EQ(b.available, 6);
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_entries WHERE kind = 'post'"), 1);
    EXPECT_EQ(problems(), std::vector<std::string>{});
}

// Four workers, each on its own connection, race to reserve and settle on one budget: the spend
// never exceeds the budget, nothing is counted twice, and the books close.
TEST_F(LedgerTest, FourWorkersNeverOverspend) {
    auto c = campaign("race");
    const std::int64_t budget = 1000;
    ledger::set_budget(*conn_, c, {budget, {}, {}}, t0);
    const int per_worker = 400;
    std::vector<std::vector<std::int64_t>> ids;
    for (int w = 0; w < 4; ++w) {
        ids.push_back(attempts(c, per_worker));
    }
    std::atomic<std::int64_t> posted{0}, refused{0};
    std::atomic<bool> failed{false};
    std::vector<std::thread> workers;
    for (int w = 0; w < 4; ++w) {
        workers.emplace_back([&, w] {
            try {
                pqxx::connection conn(env_->database_url());
                std::mt19937_64 rng(static_cast<std::uint64_t>(w) * 7919);
                for (int i = 0; i < per_worker; i += 5) {
                    std::vector<ledger::reserve_request> batch;
                    for (int k = i; k < i + 5; ++k) {
                        batch.push_back({ids[w][k], c, "acc-1", "invite", static_cast<std::int64_t>(1 + rng() % 5)});
                    }
                    auto got = ledger::reserve(conn, batch, t0);
                    std::vector<ledger::post_request> posts;
                    std::vector<std::int64_t> voids;
                    for (std::size_t k = 0; k < got.size(); ++k) {
                        if (!got[k].reserved) {
                            ++refused;
                        } else if (rng() % 4 == 0) {
                            voids.push_back(got[k].attempt_id);
                        } else {
                            posts.push_back({got[k].attempt_id, static_cast<std::int64_t>(rng() % (got[k].credits + 1))});
                        }
                    }
                    for (const auto& s : ledger::post(conn, posts, t0)) {
                        posted += s.posted;
                    }
                    ledger::void_reservations(conn, voids, t0);
                }
            } catch (const std::exception& e) {
                ADD_FAILURE() << "worker " << w << ": " << e.what();
                failed = true;
            }
        });
    }
    for (auto& t : workers) {
        t.join();
    }
    ASSERT_FALSE(failed);
    auto b = row("race");
    EXPECT_GT(refused.load(), 0);   // the budget did run out
    EXPECT_LE(b.spent + b.reserved, budget);
    EXPECT_EQ(b.reserved, 0);
    EXPECT_EQ(b.spent, posted.load());
    EXPECT_EQ(b.available + b.spent, budget);
    EXPECT_EQ(scalar("SELECT sum(posted) FROM ledger_transfers WHERE campaign_id = " + std::to_string(c)), posted.load());
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_transfers WHERE state = 'pending'"), 0);
    EXPECT_EQ(scalar("SELECT min(balance) FROM ledger_accounts WHERE kind <> 'funding'"), 0);
    EXPECT_TRUE(problems().empty()) << problems()[0];
}

}  // namespace
