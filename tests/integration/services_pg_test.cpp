// The PostgreSQL started by deploy/dev-services.sh answers through libpqxx, in a schema of the
// test's own (dropped at the end), with transactions, constraints and SKIP LOCKED claiming.
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <cstdlib>
#include <string>

namespace {

std::string database_url() {
    const char* url = std::getenv("DATABASE_URL");
    return url ? url : "";
}

class PgTest : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        conn_ = std::make_unique<pqxx::connection>(database_url());
        schema_ = "t_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                  std::to_string(reinterpret_cast<std::uintptr_t>(this) % 100000);
        pqxx::work w(*conn_);
        w.exec0("create schema " + schema_);
        w.exec0("set local search_path to " + schema_);
        w.commit();
    }
    void TearDown() override {
        if (conn_) {
            pqxx::work w(*conn_);
            w.exec0("drop schema if exists " + schema_ + " cascade");
            w.commit();
        }
    }
    std::unique_ptr<pqxx::connection> conn_;
    std::string schema_;
};

TEST_F(PgTest, TransactionsCommitAndRollBack) {
    {
        pqxx::work w(*conn_);
        w.exec0("create table " + schema_ + ".items (id bigint primary key, n int not null check (n >= 0))");
        w.exec0("insert into " + schema_ + ".items values (1, 5)");
        w.commit();
    }
    {
        pqxx::work w(*conn_);
        w.exec0("update " + schema_ + ".items set n = n - 5 where id = 1");
        // Rolled back: not committed.
    }
    pqxx::work r(*conn_);
    EXPECT_EQ(r.exec1("select n from " + schema_ + ".items where id = 1")[0].as<int>(), 5);
    // The CHECK constraint refuses a negative balance in the database itself.
    EXPECT_THROW(r.exec0("update " + schema_ + ".items set n = n - 6 where id = 1"), pqxx::check_violation);
}

TEST_F(PgTest, SkipLockedLetsTwoSessionsClaimDisjointRows) {
    {
        pqxx::work w(*conn_);
        w.exec0("create table " + schema_ + ".jobs (id int primary key)");
        w.exec0("insert into " + schema_ + ".jobs select generate_series(1, 10)");
        w.commit();
    }
    pqxx::connection other(database_url());
    pqxx::work a(*conn_);
    pqxx::work b(other);
    auto claim = "select id from " + schema_ + ".jobs order by id limit 4 for update skip locked";
    auto ra = a.exec(claim);
    auto rb = b.exec(claim);
    ASSERT_EQ(ra.size(), 4u);
    ASSERT_EQ(rb.size(), 4u);
    EXPECT_EQ(ra[0][0].as<int>(), 1);
    EXPECT_EQ(rb[0][0].as<int>(), 5);
}

} // namespace
