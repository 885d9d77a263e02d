// The funnel counts of migration 0008 on a real Postgres: enrollments are inserted, updated
// (milestones, statuses, sender reassignments, credits) and deleted by concurrent writers the way
// the worker and the inbox write them, and funnel_counts must then equal the numbers recomputed
// from the enrollments themselves (funnel_recount), pair by pair; the CLI's funnel reads them.
#include "engine/store.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace {

using orch::test::orchestrator_env;

class FunnelCountsTest : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        env_ = std::make_unique<orchestrator_env>(1);  // no sandbox: only SQL here
        conn_ = std::make_unique<pqxx::connection>(env_->database_url());
    }

    // A campaign of `n` enrollments spread over accounts acc-1..acc-3, all ready.
    std::int64_t campaign(const std::string& name, int n) {
        pqxx::work tx(*conn_);
        tx.exec("INSERT INTO accounts (account_id) VALUES ('acc-1'), ('acc-2'), ('acc-3') ON CONFLICT DO NOTHING");
        auto id = tx.exec_params("INSERT INTO campaigns (name) VALUES ($1) RETURNING campaign_id", name)[0][0]
                      .as<std::int64_t>();
        tx.exec_params("INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) "
                       "VALUES ($1, 1, '{}', '', '')",
                       id);
        tx.exec_params("INSERT INTO leads (canonical_url, profile_url) "
                       "SELECT $1 || g, $1 || g FROM generate_series(1, $2) g ON CONFLICT DO NOTHING",
                       "example.com/in/" + name + "-", n);
        tx.exec_params("INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step) "
                       "SELECT $1, 1, l.lead_id, 'acc-' || (1 + l.lead_id % 3), 'check' FROM leads l "
                       "WHERE l.canonical_url LIKE $2",
                       id, "example.com/in/" + name + "-%");
        tx.commit();
        return id;
    }

    // Rows of funnel_counts (summed over shards) that differ from the recount; "" when none.
    std::string differences() {
        pqxx::nontransaction tx(*conn_);
        auto r = tx.exec(
            "WITH k AS (SELECT campaign_id, account_id, sum(enrolled) AS enrolled, sum(checked) AS checked, "
            "                  sum(invited) AS invited, sum(accepted) AS accepted, sum(messaged) AS messaged, "
            "                  sum(replied) AS replied, sum(failed) AS failed, sum(live) AS live, "
            "                  sum(credits) AS credits "
            "           FROM funnel_counts GROUP BY 1, 2 "
            "           HAVING (sum(enrolled), sum(checked), sum(invited), sum(accepted), sum(messaged), "
            "                   sum(replied), sum(failed), sum(live), sum(credits)) "
            "                  <> (0, 0, 0, 0, 0, 0, 0, 0, 0)) "
            "SELECT COALESCE(k.campaign_id, r.campaign_id)::text || '/' || COALESCE(k.account_id, r.account_id) "
            "       || ' kept ' || COALESCE(row(k.enrolled, k.checked, k.invited, k.accepted, k.messaged, "
            "          k.replied, k.failed, k.live, k.credits)::text, 'nothing') "
            "       || ' recount ' || COALESCE(row(r.enrolled, r.checked, r.invited, r.accepted, r.messaged, "
            "          r.replied, r.failed, r.live, r.credits)::text, 'nothing') "
            "FROM k FULL JOIN funnel_recount r ON r.campaign_id = k.campaign_id AND r.account_id = k.account_id "
            "WHERE row(k.enrolled, k.checked, k.invited, k.accepted, k.messaged, k.replied, k.failed, k.live, "
            "          k.credits) IS DISTINCT FROM row(r.enrolled, r.checked, r.invited, r.accepted, r.messaged, "
            "          r.replied, r.failed, r.live, r.credits)");
        std::string out;
        for (const auto& row : r) {
            out += row[0].as<std::string>() + "\n";
        }
        return out;
    }

    std::unique_ptr<orchestrator_env> env_;
    std::unique_ptr<pqxx::connection> conn_;
};

TEST_F(FunnelCountsTest, InsertsAreCountedAtOnce) {
    campaign("a", 300);
    EXPECT_EQ(differences(), "");
    EXPECT_EQ(env_->scalar("SELECT sum(enrolled) FROM funnel_counts"), "300");
    EXPECT_EQ(env_->scalar("SELECT sum(live) FROM funnel_counts"), "300");
    // A statement that changes no counted fact (a lease, as a claim writes) writes no count row.
    auto before = env_->scalar("SELECT count(*) FROM funnel_counts");
    {
        pqxx::work tx(*conn_);
        tx.exec("UPDATE enrollments SET lease_owner = 'w', lease_expires_at = now() + interval '1 minute'");
        tx.commit();
    }
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM funnel_counts"), before);
    EXPECT_EQ(differences(), "");
}

// The acceptance rate and the accepted counts take the accepted among the invited: a connection
// seen without an invitation of this campaign (a check that found ACCEPTED, an invite refused for
// a connection) sets the lead's acceptance but is no accepted invitation. 4 invited, 2 of them
// accepted, and 3 more leads connected already: 2 accepted and 0.5, where the counts read 5 and
// accepted / invited 1.25 (migrations 0036, 0037); the facts give all 5 as connected_at.
TEST_F(FunnelCountsTest, TheAcceptanceRateCountsTheAcceptedAmongTheInvited) {
    auto a = campaign("a", 10);
    {
        pqxx::work tx(*conn_);
        const auto id = std::to_string(a);
        tx.exec("UPDATE enrollments SET invited_at = now(), account_id = 'acc-1' WHERE campaign_id = " + id +
                " AND enrollment_id IN (SELECT enrollment_id FROM enrollments WHERE campaign_id = " + id +
                " ORDER BY enrollment_id LIMIT 4)");
        tx.exec("UPDATE enrollments SET accepted_at = now() WHERE campaign_id = " + id +
                " AND enrollment_id IN (SELECT enrollment_id FROM enrollments WHERE campaign_id = " + id +
                " ORDER BY enrollment_id LIMIT 2)");
        tx.exec("UPDATE enrollments SET accepted_at = now(), account_id = 'acc-1' WHERE campaign_id = " + id +
                " AND enrollment_id IN (SELECT enrollment_id FROM enrollments WHERE campaign_id = " + id +
                " ORDER BY enrollment_id OFFSET 4 LIMIT 3)");
        tx.commit();
    }
    EXPECT_EQ(env_->scalar("SELECT invited || ' ' || accepted || ' ' || acceptance_rate FROM report_rates_by_campaign "
                           "WHERE campaign = 'a'"),
              "4 2 0.500");
    EXPECT_EQ(env_->scalar("SELECT invited || ' ' || accepted || ' ' || acceptance_rate FROM report_rates_by_account "
                           "WHERE campaign = 'a' AND account_id = 'acc-1'"),
              "4 2 0.500");
    EXPECT_EQ(env_->scalar("SELECT count(accepted_at) || ' ' || count(connected_at) FROM report_enrollment_facts "
                           "WHERE campaign = 'a'"),
              "2 5");
    EXPECT_EQ(env_->scalar("SELECT sum(invited) || ' ' || sum(accepted) FROM funnel_counts WHERE campaign_id = " +
                           std::to_string(a)),
              "4 2");
    auto funnel = env_->run({"report", "funnel", "a", "--format", "json"});
    ASSERT_EQ(funnel.exit_code, 0) << funnel.output;
    auto f = nlohmann::json::parse(funnel.output, nullptr, false);
    EXPECT_EQ(f.value("accepted", -1), 2) << funnel.output;
    EXPECT_EQ(differences(), "");  // the kept counts and the recount agree on the new definition
}

// A send whose answer was lost and that the person then answered went out: the kept funnel counts
// it messaged, and the reports read from the facts now do too (`report funnel` said 22 messaged,
// `report accounts` 21, and a variant's replies 13 against its account's 14: a trial). One lost
// send answered, one not: messaged 1 and replied 1 in every report.
TEST_F(FunnelCountsTest, AnAnsweredSendWhoseAnswerWasLostIsMessagedInEveryReport) {
    auto a = campaign("u", 2);
    {
        pqxx::work tx(*conn_);
        const auto id = std::to_string(a);
        tx.exec("UPDATE enrollments SET account_id = 'acc-1', variant = 'A', send_uncertain_at = now() - interval "
                "'1 hour' WHERE campaign_id = " + id);
        tx.exec("UPDATE enrollments SET replied_at = now(), status = 'replied', finished_at = now() WHERE campaign_id = " +
                id + " AND enrollment_id = (SELECT min(enrollment_id) FROM enrollments WHERE campaign_id = " + id + ")");
        tx.commit();
    }
    EXPECT_EQ(env_->scalar("SELECT sum(messaged) || ' ' || sum(replied) FROM funnel_counts WHERE campaign_id = " +
                           std::to_string(a)),
              "1 1");
    EXPECT_EQ(env_->scalar("SELECT messaged || ' ' || replied FROM report_rates_by_account WHERE campaign = 'u' "
                           "AND account_id = 'acc-1'"),
              "1 1");
    EXPECT_EQ(env_->scalar("SELECT messaged || ' ' || replied FROM report_rates_by_variant WHERE campaign = 'u' "
                           "AND variant = 'A'"),
              "1 1");
    EXPECT_EQ(differences(), "");
}

// Nine transactions counting the same campaign and senders at once, all open together: each
// takes shard rows the others do not hold (migration 0011) instead of waiting for them to end.
// Before, a writer used row pg_backend_pid() % 8, so of nine at least two queued on one row.
TEST_F(FunnelCountsTest, WritersOfOnePairDoNotWaitForEachOther) {
    auto a = campaign("a", 90);
    const std::string url = env_->database_url();
    // Writer k's rows: its own three of the campaign's leads on acc-1, so all nine count one pair.
    auto rows = [a](int k) {
        return " WHERE enrollment_id IN (SELECT enrollment_id FROM enrollments WHERE campaign_id = " +
               std::to_string(a) + " AND account_id = 'acc-1' ORDER BY enrollment_id OFFSET " +
               std::to_string(3 * k) + " LIMIT 3)";
    };
    std::vector<std::unique_ptr<pqxx::connection>> conns;
    std::vector<std::unique_ptr<pqxx::work>> open;
    for (int k = 0; k < 9; ++k) {
        conns.push_back(std::make_unique<pqxx::connection>(url));
        open.push_back(std::make_unique<pqxx::work>(*conns.back()));
        open.back()->exec("SET LOCAL lock_timeout = '3s'");  // a wait for another's row fails the statement
        open.back()->exec("UPDATE enrollments SET checked_at = now(), credits = credits + 1" + rows(k));
    }
    for (auto& tx : open) {
        tx->commit();
    }
    EXPECT_EQ(differences(), "");
    EXPECT_EQ(env_->scalar("SELECT sum(checked) FROM funnel_counts WHERE campaign_id = " + std::to_string(a)), "27");
    EXPECT_EQ(env_->scalar("SELECT sum(credits) FROM funnel_counts WHERE campaign_id = " + std::to_string(a)), "27");
    // Once they committed their shard rows are free again: another writer reuses one instead of
    // adding more.
    const auto shard_rows = env_->scalar("SELECT count(*) FROM funnel_counts");
    {
        pqxx::work tx(*conns.front());
        tx.exec("UPDATE enrollments SET invited_at = now()" + rows(0));
        tx.commit();
    }
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM funnel_counts"), shard_rows);
    EXPECT_EQ(differences(), "");
}

// Four writers, each on its own connection, change the same campaigns' enrollments in random
// batches, as the worker's settle, the inbox and a reassignment do; some
// transactions roll back. The kept counts equal the recount, and the store's funnel reads them.
TEST_F(FunnelCountsTest, ConcurrentWritersKeepTheCountsExact) {
    auto a = campaign("a", 400);
    campaign("b", 200);
    const std::string url = env_->database_url();
    {
        // Some leads of `a` fail before the writers start, so the failed count is exercised
        // whatever the interleaving: failed and replied are final, as in the engine, so no
        // writer turns them back (the writers still move them between senders).
        pqxx::work tx(*conn_);
        tx.exec("UPDATE enrollments SET status = 'failed', finished_at = now(), reason = 'x' WHERE campaign_id = " +
                std::to_string(a) + " AND enrollment_id % 13 = 1");
        tx.commit();
    }
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
        writers.emplace_back([url, w, a] {
            pqxx::connection conn(url);
            std::mt19937_64 rng(static_cast<std::uint64_t>(w) * 7919 + 1);
            auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
            for (int i = 0; i < 60; ++i) {
              try {
                pqxx::work tx(conn);
                // A batch of rows chosen by a residue, so writers overlap and wait on each other.
                const std::string where = " WHERE enrollment_id % 7 = " + std::to_string(pick(7));
                switch (pick(7)) {
                case 0:
                    tx.exec("UPDATE enrollments SET checked_at = COALESCE(checked_at, now()), "
                            "credits = credits + 1, status = 'waiting'" +
                            where + " AND status NOT IN ('failed', 'replied')");
                    break;
                case 1:
                    tx.exec("UPDATE enrollments SET invited_at = now(), credits = credits + 1" + where +
                            " AND checked_at IS NOT NULL");
                    break;
                case 2:
                    tx.exec("UPDATE enrollments SET accepted_at = now()" + where + " AND invited_at IS NOT NULL");
                    break;
                case 3:
                    tx.exec("UPDATE enrollments SET send_uncertain_at = now() - interval '1 hour', "
                            "replied_at = CASE WHEN enrollment_id % 2 = 0 THEN now() END, status = 'replied', "
                            "finished_at = now()" + where + " AND status <> 'failed'");
                    break;
                case 4:
                    tx.exec("UPDATE enrollments SET status = 'failed', finished_at = now(), reason = 'x'" + where +
                            " AND status <> 'replied'");
                    break;
                case 5:  // a reassignment moves leads to another sender
                    tx.exec("UPDATE enrollments SET account_id = 'acc-' || (1 + (enrollment_id + " +
                            std::to_string(i) + ") % 3)" + where + " AND campaign_id = " + std::to_string(a));
                    break;
                default:
                    tx.exec("UPDATE enrollments SET messaged_at = now(), credits = credits + 2, status = 'done', "
                            "finished_at = now()" + where + " AND status IN ('ready', 'waiting')");
                    break;
                }
                if (pick(5) == 0) {
                    tx.abort();  // rolled back: its counts must vanish with it
                } else {
                    tx.commit();
                }
              } catch (const pqxx::deadlock_detected&) {
                // Two random batches locked rows in opposite orders: Postgres rolled one back,
                // which the counts must survive like any other rollback.
              }
            }
        });
    }
    for (auto& t : writers) {
        t.join();
    }
    {
        pqxx::work tx(*conn_);
        tx.exec("DELETE FROM enrollments WHERE enrollment_id % 11 = 0");
        tx.commit();
    }
    EXPECT_EQ(differences(), "");
    EXPECT_GT(std::stoll(env_->scalar("SELECT count(DISTINCT shard) FROM funnel_counts")), 1);

    orch::engine::store st(url);
    auto f = st.funnel("a");
    auto recount = [&](const std::string& col) {
        return std::stoll(env_->scalar("SELECT COALESCE(sum(" + col + "), 0) FROM funnel_recount WHERE campaign_id = " +
                                       std::to_string(a)));
    };
    EXPECT_EQ(f.found, recount("enrolled"));
    EXPECT_EQ(f.checked, recount("checked"));
    EXPECT_EQ(f.invited, recount("invited"));
    EXPECT_EQ(f.accepted, recount("accepted"));
    EXPECT_EQ(f.messaged, recount("messaged"));
    EXPECT_EQ(f.replied, recount("replied"));
    EXPECT_EQ(f.failed, recount("failed"));
    EXPECT_EQ(f.live, recount("live"));
    EXPECT_EQ(f.credits, recount("credits"));
    EXPECT_GT(f.messaged, 0);
    EXPECT_GT(f.failed, 0);
}

}  // namespace
