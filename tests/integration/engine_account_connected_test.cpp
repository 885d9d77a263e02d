// An account's connection as the store records it (migrations 0022 and 0023): a disconnection
// event older than the account's last login is not applied (serve delivers events late: a retried
// webhook, a resumed stream, an event sent while it was down), and every change of `connected`
// is announced on orch_account for the workers' send-time mirrors.
#include "engine/store.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <chrono>
#include <memory>
#include <string>
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
    EXPECT_EQ(heard[0], (nlohmann::json{{"account_id", "acc-c"}, {"connected", false}}));
    EXPECT_EQ(heard[1], (nlohmann::json{{"account_id", "acc-c"}, {"connected", true}}));
    listener.await_notification(0, 200'000);
    EXPECT_EQ(heard.size(), 2u);
}

}  // namespace
