// The inbox's store of a message under the person's lock (store::insert_event with a check): a
// delivery and the catch-up sweep's copy of one message, stored at the same moment, are compared
// one after the other. The store's check waits for the other's transaction to end and sees its
// message, so the second copy is not inserted. Before, each looked for the other before its own
// transaction, and both could miss.
#include "campaigns/model.hpp"
#include "engine/store.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <chrono>
#include <future>
#include <thread>

namespace {

using orch::engine::event_kind;
using orch::test::orchestrator_env;

class EventsPg : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        env_ = std::make_unique<orchestrator_env>(1);
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec("INSERT INTO accounts (account_id) VALUES ('acc-1')");
        tx.exec_params("INSERT INTO leads (canonical_url, profile_url) VALUES ($1, $2)",
                       orch::campaigns::canonical_profile_url(url), url);
        tx.commit();
    }
    const std::string url = "https://network.example/in/ada";
    std::unique_ptr<orchestrator_env> env_;
};

TEST_F(EventsPg, AMessageStoredUnderThePersonsLockWaitsForAnotherStoreOfThePersonAndSeesIt) {
    const std::string canonical = orch::campaigns::canonical_profile_url(url);
    // The other store (a delivery of the message) holds the person's lock, its row not committed.
    pqxx::connection other(env_->database_url());
    pqxx::work held(other);
    held.exec_params("SELECT pg_advisory_xact_lock(727100039, hashtext($1 || '|' || $2))", "acc-1", canonical);
    held.exec_params("INSERT INTO events (source_id, account_id, kind, lead_id, payload) "
                     "SELECT 'delivery-1', 'acc-1', 'message', lead_id, '{}'::jsonb FROM leads WHERE canonical_url = $1",
                     canonical);

    orch::engine::store db(env_->database_url());
    std::atomic<long> seen{-1};
    auto check = [&](pqxx::work& tx) {
        seen = tx.exec_params1("SELECT count(*) FROM events e JOIN leads l USING (lead_id) "
                               "WHERE l.canonical_url = $1 AND e.kind = 'message'",
                               canonical)[0]
                   .as<long>();
        return seen > 0;
    };
    auto sweep = std::async(std::launch::async, [&] {
        return db.insert_event("sweep:message:acc-1:" + canonical + ":1", "acc-1", event_kind::message, url,
                               nlohmann::json::object(), "", check);
    });
    // It waits for the lock: its check has not run.
    EXPECT_EQ(sweep.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout);
    EXPECT_EQ(seen.load(), -1);
    held.commit();
    ASSERT_EQ(sweep.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    EXPECT_FALSE(sweep.get().has_value());
    EXPECT_EQ(seen.load(), 1);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM events"), "1");

    // With nothing stored of the person, the check lets it in.
    pqxx::connection c(env_->database_url());
    pqxx::work tx(c);
    tx.exec("DELETE FROM events");
    tx.commit();
    auto stored = db.insert_event("sweep:message:acc-1:" + canonical + ":2", "acc-1", event_kind::message, url,
                                  nlohmann::json::object(), "", check);
    EXPECT_TRUE(stored.has_value());
    EXPECT_EQ(seen.load(), 0);
}

}  // namespace
