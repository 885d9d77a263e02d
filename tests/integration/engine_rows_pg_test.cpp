// The batch row types of migration 0013 against their writers: engine/batch_rows.hpp lists each
// type's fields in the type's order, and what record_rows writes reads back, through Postgres's
// own array and row input, as exactly the values written (text that needs escaping, NULL next
// to empty text, extreme integers, arrays, invalid UTF-8 and NUL bytes replaced).
#include "campaigns/machine.hpp"
#include "engine/batch_rows.hpp"
#include "engine/codes.hpp"
#include "engine/record_rows.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

using orch::engine::record_rows;
namespace batch_rows = orch::engine::batch_rows;
using orch::test::orchestrator_env;

class BatchRows : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        env_ = std::make_unique<orchestrator_env>(1);
        conn_ = std::make_unique<pqxx::connection>(env_->database_url());
    }

    std::vector<std::string> type_fields(const std::string& type) {
        pqxx::nontransaction tx(*conn_);
        std::vector<std::string> out;
        const char* sql =
            "SELECT a.attname FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid "
            "WHERE t.typname = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum";
        for (const auto& r : tx.exec_params(sql, type)) {
            out.push_back(r[0].as<std::string>());
        }
        return out;
    }

    static std::vector<std::string> names(std::span<const std::string_view> fields) {
        return {fields.begin(), fields.end()};
    }

    std::unique_ptr<orchestrator_env> env_;
    std::unique_ptr<pqxx::connection> conn_;
};

TEST_F(BatchRows, EachWriterListsItsTypesFieldsInOrder) {
    EXPECT_EQ(type_fields("worker_transition_row_v2"), names(batch_rows::transition));
    EXPECT_EQ(type_fields("worker_settle_row_v3"), names(batch_rows::settle));
    EXPECT_EQ(type_fields("worker_intent_row"), names(batch_rows::intent));
    EXPECT_EQ(type_fields("ledger_transfer_row"), names(batch_rows::transfer));
    EXPECT_EQ(type_fields("ledger_settled_row"), names(batch_rows::settled));
    EXPECT_EQ(type_fields("ledger_entry_row"), names(batch_rows::entry));
    EXPECT_EQ(type_fields("ledger_pair_row"), names(batch_rows::pair));
}

TEST_F(BatchRows, WhatIsWrittenReadsBackAsWritten) {
    const std::vector<std::string> texts = {
        "plain",
        "",
        "NULL",
        R"(quote " and backslash \ and \" both)",
        "commas, (parens) {braces} [brackets]",
        "  leading and trailing spaces  ",
        "tab\tnewline\nreturn\r",
        "accents: é ü 日本語 😀",
        "\\\\\\\"\"\"",
    };
    record_rows rows(batch_rows::settle);
    for (std::size_t i = 0; i < texts.size(); ++i) {
        rows.row()
            .add("enrollment_id", static_cast<std::int64_t>(i))
            .add("step", texts[i])
            .add("next_run_at_ms", i % 2 == 0 ? std::numeric_limits<std::int64_t>::max()
                                               : std::numeric_limits<std::int64_t>::min())
            .add("reconcile", i % 2 == 0)
            .add_or_null("variant", texts[i])   // "" is written as NULL
            .add("error", texts[i]);
    }
    pqxx::nontransaction tx(*conn_);
    auto r = tx.exec_params("SELECT enrollment_id, step, status IS NULL, next_run_at_ms, reconcile, variant IS NULL, "
                            "COALESCE(variant, ''), error, call IS NULL FROM unnest($1::worker_settle_row_v3[]) "
                            "WITH ORDINALITY AS x ORDER BY ordinality",
                            rows.text());
    ASSERT_EQ(r.size(), texts.size());
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const auto row = r[static_cast<pqxx::result::size_type>(i)];
        EXPECT_EQ(row[0].as<std::int64_t>(), static_cast<std::int64_t>(i));
        EXPECT_EQ(row[1].as<std::string>(), texts[i]) << i;
        EXPECT_TRUE(row[2].as<bool>()) << i;   // not added: NULL
        EXPECT_EQ(row[3].as<std::int64_t>(), i % 2 == 0 ? std::numeric_limits<std::int64_t>::max()
                                                        : std::numeric_limits<std::int64_t>::min());
        EXPECT_EQ(row[4].as<bool>(), i % 2 == 0);
        EXPECT_EQ(row[5].as<bool>(), texts[i].empty()) << i;
        EXPECT_EQ(row[6].as<std::string>(), texts[i]) << i;
        EXPECT_EQ(row[7].as<std::string>(), texts[i]) << i;   // "" stays "", not NULL
        EXPECT_TRUE(row[8].as<bool>()) << i;
    }
}

TEST_F(BatchRows, ArraysEnumsAndSkippedLeadingFieldsReadBack) {
    record_rows transfers(batch_rows::transfer);
    transfers.row().add("attempt_id", 7).add("day", "2026-03-10").add("scopes", std::vector<std::int64_t>{3, 1, 2});
    transfers.row().add("transfer_id", 9).add("scopes", std::vector<std::int64_t>{}).add("shortfall", -4);
    record_rows entries(batch_rows::entry);
    entries.row().add("scope_id", 1).add("kind", "reserve").add("debit", "reserved").add("credit", "available");
    pqxx::nontransaction tx(*conn_);
    auto r = tx.exec_params("SELECT transfer_id IS NULL, attempt_id, day::text, scopes::text, shortfall "
                            "FROM unnest($1::ledger_transfer_row[]) WITH ORDINALITY AS x ORDER BY ordinality",
                            transfers.text());
    ASSERT_EQ(r.size(), 2u);
    EXPECT_TRUE(r[0][0].as<bool>());
    EXPECT_EQ(r[0][1].as<std::int64_t>(), 7);
    EXPECT_EQ(r[0][2].as<std::string>(), "2026-03-10");
    EXPECT_EQ(r[0][3].as<std::string>(), "{3,1,2}");
    EXPECT_TRUE(r[0][4].is_null());
    EXPECT_FALSE(r[1][0].as<bool>());
    EXPECT_EQ(r[1][3].as<std::string>(), "{}");
    EXPECT_EQ(r[1][4].as<std::int64_t>(), -4);
    auto e = tx.exec_params("SELECT kind::text, debit::text, credit::text FROM unnest($1::ledger_entry_row[])",
                            entries.text());
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0][0].as<std::string>(), "reserve");
    EXPECT_EQ(e[0][1].as<std::string>(), "reserved");
    EXPECT_EQ(e[0][2].as<std::string>(), "available");
}

TEST_F(BatchRows, InvalidUtf8AndNulBytesAreReplacedNotRefused) {
    record_rows rows(batch_rows::settle);
    rows.row().add("error", std::string("bad \xff byte and a \0 nul", 22));
    pqxx::nontransaction tx(*conn_);
    auto r = tx.exec_params("SELECT error FROM unnest($1::worker_settle_row_v3[])", rows.text());
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0][0].as<std::string>(), "bad \xEF\xBF\xBD byte and a \xEF\xBF\xBD nul");
}

// The closed sets of names the engine keeps as enums (engine/codes.hpp, campaigns::wait_code)
// are the database's sets, both ways: each C++ name is accepted where it is stored, and nothing
// else is.
TEST_F(BatchRows, TheEnumsNamesAreTheDatabasesNames) {
    pqxx::nontransaction tx(*conn_);
    std::vector<std::string> labels;
    for (const auto& r : tx.exec("SELECT enumlabel FROM pg_enum WHERE enumtypid = 'attempt_outcome'::regtype "
                                 "ORDER BY enumsortorder")) {
        labels.push_back(r[0].as<std::string>());
    }
    std::vector<std::string> outcomes;
    for (auto o : orch::engine::all_attempt_outcomes) {
        outcomes.emplace_back(orch::engine::to_string(o));
    }
    EXPECT_EQ(labels, outcomes);
    // The outcome classes: the SQL functions of migration 0018 agree with engine/codes.hpp.
    for (auto o : orch::engine::all_attempt_outcomes) {
        const std::string name(orch::engine::to_string(o));
        auto r = tx.exec_params1("SELECT attempt_took_effect($1::attempt_outcome), "
                                 "attempt_may_have_taken_effect($1::attempt_outcome)",
                                 name);
        EXPECT_EQ(r[0].as<bool>(), orch::engine::took_effect(o)) << name;
        EXPECT_EQ(r[1].as<bool>(), orch::engine::may_have_taken_effect(o)) << name;
    }

    // A CHECK tested through a row value: the constraint's expression is evaluated on a one-row
    // table of the same shape, so no enrollment or event needs writing.
    auto accepted = [&](const std::string& table, const std::string& column, const std::string& value) {
        auto def = tx.exec_params1(
            "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c "
            "WHERE c.conrelid = $1::regclass AND c.contype = 'c' AND pg_get_constraintdef(c.oid) LIKE '%' || $2 || '%'",
            table, column)[0].as<std::string>();
        // CHECK (expr) -> SELECT expr FROM (SELECT value AS column) t
        auto expr = def.substr(def.find('(') + 1);
        expr = expr.substr(0, expr.rfind(')'));
        return tx.exec_params1("SELECT " + expr + " FROM (SELECT $1::text AS " + column + ") t", value)[0].as<bool>();
    };
    // ... and the other way: every name a CHECK lists is a C++ name.
    auto listed = [&](const std::string& table, const std::string& column) {
        std::set<std::string> out;
        for (const auto& r : tx.exec_params(
                 "SELECT m[1] FROM pg_constraint c, regexp_matches(pg_get_constraintdef(c.oid), '''([a-z_]+)''', 'g') m "
                 "WHERE c.conrelid = $1::regclass AND c.contype = 'c' AND pg_get_constraintdef(c.oid) LIKE '%' || $2 || '%'",
                 table, column)) {
            out.insert(r[0].as<std::string>());
        }
        return out;
    };
    std::set<std::string> codes;
    for (auto w : orch::campaigns::all_wait_codes) {
        if (w != orch::campaigns::wait_code::none) {
            codes.insert(orch::campaigns::to_string(w));
        }
    }
    EXPECT_EQ(listed("enrollments", "wait_code"), codes);
    std::set<std::string> kinds;
    for (auto k : orch::engine::all_event_kinds) {
        kinds.emplace(orch::engine::to_string(k));
    }
    EXPECT_EQ(listed("events", "kind"), kinds);
    for (auto w : orch::campaigns::all_wait_codes) {
        if (w == orch::campaigns::wait_code::none) {
            continue;  // stored as NULL
        }
        EXPECT_TRUE(accepted("enrollments", "wait_code", orch::campaigns::to_string(w))) << orch::campaigns::to_string(w);
    }
    EXPECT_FALSE(accepted("enrollments", "wait_code", "none"));
    EXPECT_FALSE(accepted("enrollments", "wait_code", "waiting for the invite day quota of account a"));
    EXPECT_EQ(tx.exec1("SELECT count(*) FROM pg_constraint WHERE conname = 'enrollments_wait_code_known'")[0].as<int>(), 1);
    for (auto k : orch::engine::all_event_kinds) {
        EXPECT_TRUE(accepted("events", "kind", std::string(orch::engine::to_string(k)))) << orch::engine::to_string(k);
    }
    EXPECT_FALSE(accepted("events", "kind", "message_received"));
}

}  // namespace
