// The worker's hot statements reach their rows by primary key whatever the table statistics say.
//
// The tables are analyzed while empty (a campaign just applied: autovacuum has not caught up),
// then filled with thousands of live enrollments, intents in flight, pending transfers and inbox
// events. With
// such statistics the planner used to hash-join whole-table scans, or walk every live row of the
// partial enrollments_due index, for a batch of 100 rows (tests/bench/engine_bench.sh showed it
// as a quarter of Postgres's CPU); or started from a scan of the inbox (events), analyzed while
// empty too. Each statement is planned here both ways the worker runs it
// (custom plans for its first executions, then possibly the generic one) and its plan must not
// scan those tables.
#include "engine/batch_rows.hpp"
#include "engine/record_rows.hpp"
#include "schema/schema.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
using orch::test::orchestrator_env;

constexpr int rows = 5000;

class HotStatementPlans : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        env_ = std::make_unique<orchestrator_env>(1);  // no sandbox: only SQL here
        conn_ = std::make_unique<pqxx::connection>(env_->database_url());
        pqxx::work tx(*conn_);
        tx.exec("INSERT INTO accounts (account_id) VALUES ('acc-1')");
        tx.exec("INSERT INTO campaigns (campaign_id, name) VALUES (1, 'c')");
        tx.exec("INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) "
                "VALUES (1, 1, '{}', '', '')");
        tx.commit();
        pqxx::nontransaction(*conn_).exec("ANALYZE");  // statistics of empty tables
        pqxx::work fill(*conn_);
        fill.exec_params("INSERT INTO leads (canonical_url, profile_url) "
                         "SELECT 'x/' || g, 'https://x/' || g FROM generate_series(1, $1) g",
                         rows);
        fill.exec("INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step, status, lease_owner, "
                  "lease_expires_at) SELECT 1, 1, lead_id, 'acc-1', 'check', 'calling', 'w', now() + interval '1 hour' "
                  "FROM leads");
        fill.exec("INSERT INTO step_attempts (attempt_id, enrollment_id, step, call, attempt, worker) "
                  "SELECT enrollment_id, enrollment_id, 'check', 'check_invitation', 0, 'w' FROM enrollments");
        fill.exec("INSERT INTO ledger_transfers (transfer_id, attempt_id, campaign_id, action, day, reserved, scopes) "
                  "SELECT attempt_id, attempt_id, 1, 'check_invitation', current_date, 1, '{1}' FROM step_attempts");
        fill.exec("INSERT INTO events (source_id, account_id, kind, lead_id, payload) "
                  "SELECT 'e' || lead_id, 'acc-1', 'other', lead_id, '{}' FROM leads");
        fill.commit();
        for (int id = 1000; id < 1100; ++id) {
            batch_ids_.push_back(id);
        }
    }

    // Scans of the big tables in the plan of `sql` run with `args`, e.g. "Seq Scan on enrollments",
    // and batches rescanned per row; empty when it reaches the tables only through their primary
    // keys (or the other indexes a statement names on purpose) and reads each batch once.
    std::set<std::string> scans(const std::string& mode, const std::string& sql, const std::vector<std::string>& args) {
        pqxx::work tx(*conn_);
        tx.exec("SET LOCAL plan_cache_mode = " + mode);
        tx.exec("DEALLOCATE ALL");  // prepared statements outlive transactions
        tx.exec("PREPARE hot AS " + sql);
        std::string call = "EXPLAIN (FORMAT JSON) EXECUTE hot(";
        for (std::size_t i = 0; i < args.size(); ++i) {
            call += (i == 0 ? "" : ", ") + tx.quote(args[i]);
        }
        call += ")";
        const json plan = json::parse(tx.exec(call)[0][0].as<std::string>());
        std::set<std::string> out;
        std::function<void(const json&)> walk = [&](const json& node) {
            const std::string type = node.value("Node Type", "");
            const std::string rel = node.value("Relation Name", "");
            const std::string index = node.value("Index Name", "");
            static const std::set<std::string> big = {"enrollments", "step_attempts", "ledger_transfers", "events"};
            if (big.count(rel) && (type == "Seq Scan" || type == "Sample Scan")) {
                out.insert(type + " on " + rel);
            }
            if (index == "enrollments_due" || index == "enrollments_lead" ||
                index == "enrollments_campaign_id_lead_id_key") {
                out.insert(type + " using " + index);
            }
            // A batch read again for every row of the other side: a nested loop whose inner side
            // is the batch (the plan a 10-row estimate of the batch made, migration 0013).
            const auto children = node.value("Plans", json::array());
            if (type == "Nested Loop" && children.size() == 2) {
                const std::string inner = children[1].value("Node Type", "");
                if (inner == "CTE Scan" || inner == "Function Scan") {
                    out.insert("Nested Loop rescanning a " + inner);
                }
            }
            for (const auto& child : node.value("Plans", json::array())) {
                walk(child);
            }
        };
        walk(plan[0]["Plan"]);
        // CTEs and init plans hang under the top node's "Plans" too; nothing else to visit.
        tx.abort();
        return out;
    }

    std::string ids_json() const { return json(batch_ids_).dump(); }

    void expect_keyed(const std::string& name, const std::vector<std::string>& args) {
        const std::string sql(orch::schema::query(name));
        for (const char* mode : {"force_custom_plan", "force_generic_plan"}) {
            EXPECT_EQ(scans(mode, sql, args), std::set<std::string>{}) << name << " (" << mode << ")";
        }
    }

    std::unique_ptr<orchestrator_env> env_;
    std::unique_ptr<pqxx::connection> conn_;
    std::vector<std::int64_t> batch_ids_;
};

TEST_F(HotStatementPlans, SettleAndTransitionsUseThePrimaryKeys) {
    namespace rows = orch::engine::batch_rows;
    orch::engine::record_rows outcomes(rows::settle);
    orch::engine::record_rows transitions(rows::transition);
    for (auto id : batch_ids_) {
        outcomes.row()
            .add("enrollment_id", id)
            .add("step", "invite")
            .add("status", "ready")
            .add("next_run_at_ms", std::int64_t{1700000000000})
            .add("attempt", 0)
            .add("reconcile", false)
            .add("accepted_seen", false)
            .add("reason", "")
            .add("attempt_id", id)
            .add("outcome", "ok")
            .add("error", "")
            .add("credits", 1)
            .add("call", "check_invitation");
        transitions.row()
            .add("enrollment_id", id)
            .add("step", "invite")
            .add("status", "calling")
            .add("next_run_at_ms", std::int64_t{1700000000000})
            .add("attempt", 0)
            .add("reconcile", false)
            .add("accepted_seen", false)
            .add("reason", "")
            .add("event_cursor", 0)
            .add("leased", true);
    }
    expect_keyed("engine/settle", {outcomes.text(), "w", "60"});
    expect_keyed("engine/apply_transitions", {transitions.text(), "w", "60"});
}

// The intent log has no foreign key to enrollments (migration 0029): insert_intents looks each
// enrollment up by primary key, writes the intents of those that exist, and leaves out one that
// does not, which the worker counts and refuses (engine/pg_lane_store).
TEST_F(HotStatementPlans, IntentsAreWrittenOnlyForEnrollmentsThatExist) {
    orch::engine::record_rows intents(orch::engine::batch_rows::intent);
    auto add = [&](std::int64_t attempt_id, std::int64_t enrollment_id) {
        intents.row()
            .add("attempt_id", attempt_id)
            .add("enrollment_id", enrollment_id)
            .add("step", "invite")
            .add("call", "invite")
            .add("reconcile", false)
            .add("attempt", 0)
            .add_or_null("variant", std::string_view{})
            .add("body", "hi");
    };
    for (auto id : batch_ids_) {
        add(1'000'000 + id, id);
    }
    expect_keyed("engine/insert_intents", {intents.text(), "w"});
    add(2'000'000, 9'999'999);  // no such enrollment
    pqxx::work tx(*conn_);
    const auto written = tx.exec_params(std::string(orch::schema::query("engine/insert_intents")), intents.text(), "w")
                             .affected_rows();
    EXPECT_EQ(written, batch_ids_.size());
    EXPECT_EQ(tx.exec("SELECT count(*) FROM step_attempts WHERE attempt_id = 2000000")[0][0].as<int>(), 0);
    EXPECT_EQ(tx.exec("SELECT count(*) FROM step_attempts WHERE attempt_id > 1000000")[0][0].as<std::size_t>(),
              batch_ids_.size());
}

TEST_F(HotStatementPlans, LookupsByTheBatchIdsUseThePrimaryKey) {
    std::string picked = "{";
    for (auto id : batch_ids_) {
        picked += (picked.size() > 1 ? "," : "") + std::to_string(id);
    }
    expect_keyed("engine/claim_due", {picked + "}"});
    expect_keyed("engine/chain_hold", {picked + "}", "w"});
    expect_keyed("engine/pending_events", {ids_json()});
    expect_keyed("engine/wake_pending", {ids_json()});
    expect_keyed("engine/close_lost_attempts", {ids_json()});
}

TEST_F(HotStatementPlans, LedgerSettlementUsesTheTransfersKey) {
    orch::engine::record_rows settled(orch::engine::batch_rows::settled);
    for (auto id : batch_ids_) {
        settled.row().add("transfer_id", id).add("state", "posted").add("posted", 1).add("overrun", 0).add("shortfall", 0);
    }
    expect_keyed("ledger/apply", {"{}", settled.text(), "{}", "false"});
}

// The claim in two statements (schema/queries/engine/claim_pick.sql): the pick's locks end with
// its savepoint, and claim_due locks only the picked rows that are still due under its own
// snapshot, skipping those another transaction holds.
TEST_F(HotStatementPlans, AClaimLocksOnlyThePickedRowsStillDue) {
    {
        pqxx::work tx(*conn_);
        tx.exec("UPDATE enrollments SET status = 'ready', lease_owner = NULL, lease_expires_at = NULL, "
                "due_at = now() - interval '1 minute' * enrollment_id WHERE enrollment_id <= 10");
        tx.commit();
    }
    pqxx::connection other(env_->database_url());
    auto lockable = [&](std::int64_t id) {  // can another transaction lock the row right now?
        pqxx::work tx(other);
        try {
            tx.exec_params("SELECT 1 FROM enrollments WHERE enrollment_id = $1 FOR UPDATE NOWAIT", id);
            return true;
        } catch (const pqxx::sql_error& e) {
            EXPECT_EQ(e.sqlstate(), "55P03") << e.what();  // lock_not_available
            return false;
        }
    };

    pqxx::work claim(*conn_);
    claim.exec("SAVEPOINT claim_pick");
    std::vector<std::int64_t> picked;
    for (const auto& r : claim.exec_params(std::string(orch::schema::query("engine/claim_pick")), 5)) {
        picked.push_back(r[0].as<std::int64_t>());
    }
    // the five that have been due longest, oldest first
    EXPECT_EQ(picked, (std::vector<std::int64_t>{10, 9, 8, 7, 6}));
    EXPECT_FALSE(lockable(10));  // the pick holds its rows until the savepoint ends...
    claim.exec("ROLLBACK TO SAVEPOINT claim_pick");
    EXPECT_TRUE(lockable(10));   // ...and no longer after
    EXPECT_TRUE(lockable(1));    // a due row it did not pick was never held

    // Meanwhile another worker leases one picked row (committed) and holds another.
    {
        pqxx::work tx(other);
        tx.exec("UPDATE enrollments SET status = 'calling', lease_owner = 'other', "
                "lease_expires_at = now() + interval '1 hour' WHERE enrollment_id = 9");
        tx.commit();
    }
    pqxx::work holder(other);
    holder.exec("SELECT 1 FROM enrollments WHERE enrollment_id = 8 FOR UPDATE");

    std::set<std::int64_t> claimed;
    for (const auto& r : claim.exec_params(std::string(orch::schema::query("engine/claim_due")), "{10,9,8,7,6}")) {
        claimed.insert(r[0].as<std::int64_t>());
    }
    EXPECT_EQ(claimed, (std::set<std::int64_t>{10, 7, 6}));
    holder.abort();
    EXPECT_TRUE(lockable(9));    // leased by the other worker: neither returned nor locked
    EXPECT_FALSE(lockable(10));  // claimed: held until the claim's transaction ends
    claim.abort();
}

// The sweep over the due work's slices (migration 0019, engine/claim_pick_slices): a lane takes the
// oldest due rows of its slice through the slice index, moves to the next slice when its own has
// no more, skips rows another transaction holds, and only after `hops` slices takes the rest in due
// order over all slices. The per-slice statement (read from the function's source) reaches the
// rows through enrollments_due_slice in both plan modes, not through a walk of enrollments_due.
TEST_F(HotStatementPlans, ClaimsSweepTheirSlicesThroughTheSliceIndex) {
    {
        pqxx::work tx(*conn_);
        // slices 5 and 6 due (79 rows each of the 5,000), the rest leased
        tx.exec("UPDATE enrollments SET status = 'ready', lease_owner = NULL, lease_expires_at = NULL, "
                "due_at = now() - interval '1 second' * enrollment_id WHERE enrollment_id % 64 IN (5, 6)");
        tx.commit();
    }
    {
        pqxx::work tx(*conn_);
        std::string src = tx.exec("SELECT prosrc FROM pg_proc WHERE proname = 'claim_pick_slices'")[0][0].as<std::string>();
        const auto from = src.find("SELECT e.enrollment_id");
        const auto to = src.find("SKIP LOCKED", from);
        ASSERT_NE(from, std::string::npos);
        ASSERT_NE(to, std::string::npos);
        std::string per_slice = src.substr(from, to + 11 - from);
        for (auto [var, param] : {std::pair{std::string("% 64 = s"), std::string("% 64 = $1::integer")},
                                  std::pair{std::string("LIMIT room"), std::string("LIMIT $2::integer")}}) {
            const auto at = per_slice.find(var);
            ASSERT_NE(at, std::string::npos) << var << " in " << per_slice;
            per_slice.replace(at, var.size(), param);
        }
        tx.abort();
        for (const char* mode : {"force_custom_plan", "force_generic_plan"}) {
            EXPECT_EQ(scans(mode, per_slice, {"5", "100"}), std::set<std::string>{}) << per_slice << " (" << mode << ")";
        }
    }
    const std::string pick(orch::schema::query("engine/claim_pick_slices"));
    auto index_scans = [&]() {  // idx_scan of enrollments_due_slice and enrollments_due, flushed
        pqxx::nontransaction tx(*conn_);
        tx.exec("SELECT pg_stat_force_next_flush()");
        pqxx::connection reader(env_->database_url());
        pqxx::nontransaction r(reader);
        r.exec("SET stats_fetch_consistency = none");
        const auto row = r.exec("SELECT sum(idx_scan) FILTER (WHERE indexrelname = 'enrollments_due_slice'), "
                                "sum(idx_scan) FILTER (WHERE indexrelname = 'enrollments_due') "
                                "FROM pg_stat_user_indexes WHERE relname = 'enrollments'")[0];
        return std::pair{row[0].as<std::int64_t>(0), row[1].as<std::int64_t>(0)};
    };
    struct picked {
        std::vector<std::int64_t> ids;
        std::set<std::int64_t> slices;
        int next = -1;
    };
    auto run = [&](pqxx::work& tx, int lim, int start, int hops) {
        picked p;
        for (const auto& r : tx.exec_params(pick, lim, start, hops)) {
            p.ids.push_back(r[0].as<std::int64_t>());
            p.slices.insert(r[0].as<std::int64_t>() % 64);
            p.next = r[1].as<int>();
        }
        return p;
    };

    const auto before = index_scans();
    {
        pqxx::work tx(*conn_);
        const auto p = run(tx, 50, 5, 8);  // slice 5 fills the batch, oldest first
        EXPECT_EQ(p.ids.size(), 50u);
        EXPECT_EQ(p.slices, (std::set<std::int64_t>{5}));
        EXPECT_TRUE(std::is_sorted(p.ids.rbegin(), p.ids.rend()));  // due longest: the highest ids
        EXPECT_EQ(p.next, 5);  // slice 5 has more
        tx.commit();
    }
    const auto after = index_scans();
    EXPECT_GT(after.first, before.first);
    EXPECT_EQ(after.second, before.second);  // no walk of the due index over all slices

    pqxx::connection other(env_->database_url());
    pqxx::work holder(other);
    const auto held = run(holder, 100, 5, 8);  // all 79 of slice 5, then 21 of slice 6
    EXPECT_EQ(held.ids.size(), 100u);
    EXPECT_EQ(held.slices, (std::set<std::int64_t>{5, 6}));
    EXPECT_EQ(held.next, 6);
    {
        // Another lane starting at slice 4: slice 4 has nothing due, slice 5 is held, slice 6's 58
        // others are taken, and after 8 slices it falls back to due order over all slices, where
        // everything is held or leased.
        pqxx::work tx(*conn_);
        const auto p = run(tx, 100, 4, 8);
        EXPECT_EQ(p.ids.size(), 58u);
        EXPECT_EQ(p.slices, (std::set<std::int64_t>{6}));
        EXPECT_EQ(p.next, 12);
        std::set<std::int64_t> both(held.ids.begin(), held.ids.end());
        for (auto id : p.ids) {
            EXPECT_TRUE(both.insert(id).second) << id << " picked by both";
        }
        tx.abort();
    }
    holder.abort();
    {
        // Nothing due in the 2 slices visited: the batch comes from all slices in due order.
        pqxx::work tx(*conn_);
        const auto p = run(tx, 10, 20, 2);
        EXPECT_EQ(p.ids.size(), 10u);
        EXPECT_TRUE(std::is_sorted(p.ids.rbegin(), p.ids.rend()));
        EXPECT_EQ(p.next, 22);
        tx.abort();
    }
}

// A settled call's next step is decided in the same cycle only on a row the lane still holds
// (`calling` under its unexpired lease) of an active campaign and a connected account; such rows are locked
// for the cycle's transaction (schema/queries/engine/chain_hold.sql).
TEST_F(HotStatementPlans, ChainHoldTakesOnlyRowsThisWorkerHoldsAndMayWork) {
    {
        pqxx::work tx(*conn_);
        tx.exec("UPDATE enrollments SET lease_owner = 'other' WHERE enrollment_id = 2");
        tx.exec("UPDATE enrollments SET lease_expires_at = now() - interval '1 second' WHERE enrollment_id = 5");
        tx.exec("UPDATE enrollments SET status = 'ready', lease_owner = NULL, lease_expires_at = NULL "
                "WHERE enrollment_id = 3");
        tx.commit();
    }
    const std::string sql(orch::schema::query("engine/chain_hold"));
    auto held = [&](pqxx::work& tx) {
        std::set<std::int64_t> out;
        for (const auto& r : tx.exec_params(sql, "{1,2,3,4,5}", "w")) {
            out.insert(r[0].as<std::int64_t>());
        }
        return out;
    };
    pqxx::connection other(env_->database_url());
    {
        pqxx::work tx(*conn_);
        EXPECT_EQ(held(tx), (std::set<std::int64_t>{1, 4}));  // not 5: its lease expired, claims may take it
        pqxx::work probe(other);
        EXPECT_THROW(probe.exec("SELECT 1 FROM enrollments WHERE enrollment_id = 4 FOR UPDATE NOWAIT"),
                     pqxx::sql_error);  // held until the cycle's transaction ends
    }
    {
        pqxx::work tx(*conn_);
        tx.exec("UPDATE campaigns SET state = 'paused', pause_reason = 'test' WHERE campaign_id = 1");
        EXPECT_EQ(held(tx), std::set<std::int64_t>{});  // a paused campaign's leads are released
    }
    {
        pqxx::work tx(*conn_);
        tx.exec("UPDATE accounts SET connected = false WHERE account_id = 'acc-1'");
        EXPECT_EQ(held(tx), std::set<std::int64_t>{});  // so are an unavailable sender's
    }
}

}  // namespace
