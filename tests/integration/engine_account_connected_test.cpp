// An account's connection as the store records it (migrations 0022 and 0023): a disconnection
// event older than the account's last login is not applied (serve delivers events late: a retried
// webhook, a resumed stream, an event sent while it was down), and every change of `connected`
// is announced on orch_account for the workers' send-time mirrors.
#include "engine/store.hpp"
#include "schema/schema.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using orch::test::orchestrator_env;
using namespace std::chrono_literals;

class AccountConnected : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        env_ = std::make_unique<orchestrator_env>(1);  // no sandbox: only SQL here
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec("INSERT INTO accounts (account_id, label) VALUES ('acc-c', 'sender-c')");
        tx.commit();
    }
    std::string connected() const { return env_->scalar("SELECT connected FROM accounts WHERE account_id = 'acc-c'"); }
    // The account's login as the claim reads it (migration 0025).
    std::string login_now() const {
        return env_->scalar("SELECT account_login_us(connected_at) FROM accounts WHERE account_id = 'acc-c'");
    }
    std::unique_ptr<orchestrator_env> env_;
};

TEST_F(AccountConnected, ADisconnectionOlderThanTheLastLoginIsNotApplied) {
    orch::engine::store db(env_->database_url());
    const auto login = std::chrono::system_clock::now();
    db.set_account_connected("acc-c", false, "DISCONNECTED");
    db.set_account_connected("acc-c", true, "OK");  // a re-login: connected_at is now
    EXPECT_FALSE(db.account_disconnected("acc-c", "DISCONNECTED", login - 30s));
    EXPECT_EQ(connected(), "t");
    EXPECT_TRUE(db.account_disconnected("acc-c", "DISCONNECTED", std::chrono::system_clock::now() + 1s));
    EXPECT_EQ(connected(), "f");
    db.set_account_connected("acc-c", true, "OK");
    EXPECT_TRUE(db.account_disconnected("acc-c", "DISCONNECTED", std::nullopt));  // no time said: applied
    EXPECT_EQ(connected(), "f");
}

// A worker's settle of an ACCOUNT_INACTIVE answer (engine/pg_lane_store.cpp, write_settle): the
// account is paused, and its live leads parked, only while its login is one the answered calls
// were claimed under; after a re-login that overtook the requests it stays connected and its
// leads stay due.
TEST_F(AccountConnected, AnInactiveAnswerPausesTheAccountOnlyUnderTheLoginItsCallWasClaimedUnder) {
    orch::engine::store db(env_->database_url());
    db.set_account_connected("acc-c", true, "OK");
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec("INSERT INTO campaigns (name, state) VALUES ('c', 'active')");
        tx.exec("INSERT INTO leads (canonical_url, profile_url) VALUES ('network.example/in/a', "
                "'https://network.example/in/a')");
        tx.exec("INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) "
                "SELECT campaign_id, 1, '{}', '', 'd' FROM campaigns");
        tx.exec("INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step, status, next_run_at, due_at) "
                "SELECT c.campaign_id, 1, l.lead_id, 'acc-c', 'invite', 'ready', now(), now() FROM campaigns c, leads l");
        tx.commit();
    }
    const auto claimed_under = std::stoll(login_now());
    // The claim reads the same value with each row.
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        const auto ids = "{" + env_->scalar("SELECT enrollment_id FROM enrollments") + "}";
        auto rows = tx.exec_params(std::string(orch::schema::query("engine/claim_due")), ids);
        ASSERT_EQ(rows.size(), 1u);
        EXPECT_EQ(rows[0][17].as<std::int64_t>(), claimed_under);
    }
    std::this_thread::sleep_for(2ms);  // a login later by the clock's microseconds at least
    db.set_account_connected("acc-c", false, "DISCONNECTED");
    db.set_account_connected("acc-c", true, "OK");  // the re-login
    const auto parked = [&] { return env_->scalar("SELECT due_at = 'infinity' FROM enrollments"); };
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        EXPECT_FALSE(orch::engine::account_unavailable_if_login(tx, "acc-c", "INACTIVE", {claimed_under}));
        tx.commit();
    }
    EXPECT_EQ(connected(), "t");
    EXPECT_EQ(parked(), "f");
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        const auto moved = orch::engine::account_unavailable_if_login(tx, "acc-c", "INACTIVE",
                                                                      {claimed_under, std::stoll(login_now())});
        ASSERT_TRUE(moved);
        EXPECT_TRUE(moved->was_connected) << "this call paused it: its settle says so";
        EXPECT_EQ(moved->moved, 0);  // no other sender to move it to
        tx.commit();
    }
    EXPECT_EQ(connected(), "f");
    EXPECT_EQ(parked(), "t");
    // Already unavailable: marked again whatever the logins (serve, a sync or another lane got
    // there first), and the settle knows it did not pause it (it does not say so again).
    pqxx::connection c(env_->database_url());
    pqxx::work tx(c);
    const auto again = orch::engine::account_unavailable_if_login(tx, "acc-c", "INACTIVE", {1});
    ASSERT_TRUE(again);
    EXPECT_FALSE(again->was_connected);
}

// A lead whose call was held at send time while its account was unavailable (wait code
// `throttled`, due at the hold's end, some 10 minutes on), then parked by the account's pause, is
// due at once when the account logs in again; a lead parked while it waited for its own time (a
// delay) keeps that time.
TEST_F(AccountConnected, AHeldLeadParkedByThePauseIsDueAtOnceAfterTheReLogin) {
    orch::engine::store db(env_->database_url());
    db.set_account_connected("acc-c", true, "OK");
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec("INSERT INTO campaigns (name, state) VALUES ('c', 'active')");
        tx.exec("INSERT INTO leads (canonical_url, profile_url) VALUES ('network.example/in/held', "
                "'https://network.example/in/held'), ('network.example/in/later', 'https://network.example/in/later')");
        tx.exec("INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) "
                "SELECT campaign_id, 1, '{}', '', 'd' FROM campaigns");
        tx.exec("INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step, status, next_run_at, due_at, "
                "wait_code) "
                "SELECT c.campaign_id, 1, l.lead_id, 'acc-c', 'invite', 'ready', now() + interval '10 minutes', "
                "now() + interval '10 minutes', CASE WHEN l.canonical_url LIKE '%held' THEN 'throttled' "
                "END FROM campaigns c, leads l");
        tx.commit();
    }
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        orch::engine::account_unavailable(tx, "acc-c", "DISCONNECTED");
        tx.commit();
    }
    const auto due = [&](const std::string& who) -> std::string {
        return env_->scalar("SELECT e.due_at = 'infinity' OR e.next_run_at > now() + interval '1 minute' "
                            "FROM enrollments e JOIN leads l USING (lead_id) WHERE l.canonical_url LIKE '%" + who + "'") ==
                       "f"
                   ? "due"
                   : "waiting";
    };
    ASSERT_EQ(due("held"), "waiting");
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        orch::engine::account_available(tx, "acc-c", "OK");
        tx.commit();
    }
    EXPECT_EQ(due("held"), "due") << "the hold was the account's: it is back";
    EXPECT_EQ(due("later"), "waiting") << "its own time stays";
}

TEST_F(AccountConnected, EveryChangeOfConnectedIsAnnouncedToTheWorkers) {
    pqxx::connection listener(env_->database_url());
    std::vector<nlohmann::json> heard;
    struct receiver final : pqxx::notification_receiver {
        std::vector<nlohmann::json>& out;
        receiver(pqxx::connection& c, std::vector<nlohmann::json>& o) : pqxx::notification_receiver(c, "orch_account"), out(o) {}
        void operator()(const std::string& payload, int) override { out.push_back(nlohmann::json::parse(payload)); }
    } r(listener, heard);
    orch::engine::store db(env_->database_url());
    db.set_account_connected("acc-c", false, "DISCONNECTED");
    db.set_account_connected("acc-c", false, "DISCONNECTED");  // no change: no notification
    db.set_account_connected("acc-c", true, "OK");
    for (int i = 0; i < 50 && heard.size() < 2; ++i) {
        listener.await_notification(0, 100'000);
    }
    ASSERT_EQ(heard.size(), 2u);
    const auto login = std::stoll(login_now());
    EXPECT_GT(login, 0);
    EXPECT_EQ(heard[0]["account_id"], "acc-c");
    EXPECT_EQ(heard[0]["connected"], false);
    EXPECT_EQ(heard[1], (nlohmann::json{{"account_id", "acc-c"}, {"connected", true}, {"since", login}}));
    listener.await_notification(0, 200'000);
    EXPECT_EQ(heard.size(), 2u);
}

}  // namespace
