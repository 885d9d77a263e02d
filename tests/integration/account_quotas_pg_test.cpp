// Per-account quota overrides (engine/account_quotas.hpp, issue 6): the pure parsing and patch
// rules (no database), then the stored form on a real Postgres (a fresh database per test,
// migrated by the real `orchestrator migrate`): the store's locked read-change-write, the CHECK
// of migration 0007 against hand-written rows, and `orchestrator accounts limits` with its errors,
// each checked to change nothing.
#include "engine/account_quotas.hpp"
#include "engine/limits/limits.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <chrono>
#include <cstdlib>
#include <future>
#include <unistd.h>

namespace {

using json = nlohmann::json;
using orch::engine::quota_overrides;
using orch::limits::action;
using orch::test::orchestrator_env;

std::size_t idx(action a) { return static_cast<std::size_t>(a); }

// ---- pure rules ----

TEST(AccountQuotas, StoredFormRoundTrips) {
    std::string error;
    auto q = orch::engine::parse_overrides(R"({"invite": {"per_day": 40, "per_week": 150}, "send": {"per_day": 0}})",
                                           error);
    ASSERT_TRUE(q) << error;
    EXPECT_EQ((*q)[idx(action::invite)].per_day, 40);
    EXPECT_EQ((*q)[idx(action::invite)].per_week, 150);
    EXPECT_EQ((*q)[idx(action::send)].per_day, 0);
    EXPECT_FALSE((*q)[idx(action::send)].per_week);
    EXPECT_TRUE((*q)[idx(action::visit)].empty());
    EXPECT_EQ(orch::engine::to_json(*q), json::parse(R"({"invite": {"per_day": 40, "per_week": 150},
                                                           "send": {"per_day": 0}})"));
    auto none = orch::engine::parse_overrides("", error);
    ASSERT_TRUE(none);
    EXPECT_TRUE(orch::engine::no_overrides(*none));
    EXPECT_EQ(orch::engine::to_json(*none), json::object());
}

TEST(AccountQuotas, APatchReplacesNamedActionsClearsNullsAndKeepsTheRest) {
    std::string error;
    quota_overrides current{};
    current[idx(action::invite)] = {40, 150};
    current[idx(action::send)] = {90, std::nullopt};
    current[idx(action::visit)] = {10, 20};
    auto next = orch::engine::apply_patch(current, json::parse(R"({"invite": {"per_week": 100}, "send": null,
                                                                  "search": {"per_day": 5, "per_week": null}})"),
                                          error);
    ASSERT_TRUE(next) << error;
    EXPECT_EQ((*next)[idx(action::invite)], (orch::engine::quota_override{std::nullopt, 100}));  // replaced
    EXPECT_TRUE((*next)[idx(action::send)].empty());                                            // cleared
    EXPECT_EQ((*next)[idx(action::visit)], (orch::engine::quota_override{10, 20}));              // kept
    EXPECT_EQ((*next)[idx(action::search)], (orch::engine::quota_override{5, std::nullopt}));
    auto same = orch::engine::apply_patch(current, json::object(), error);
    ASSERT_TRUE(same);
    EXPECT_EQ(*same, current);
}

TEST(AccountQuotas, BadPatchesAreRefusedWithTheFieldNamed) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"({"bogus": {"per_day": 1}})", "bogus: unknown action"},
        {R"({"check_invitation": {"per_day": 1}})", "check_invitation: unknown action"},
        {R"({"invite": {"per_day": -1}})", "invite.per_day: must be an integer from 0 to 1000000"},
        {R"({"invite": {"per_day": 1.5}})", "invite.per_day: must be an integer"},
        {R"({"invite": {"per_week": "40"}})", "invite.per_week: must be an integer"},
        {R"({"send": {"per_day": 1000001}})", "send.per_day: must be an integer from 0 to 1000000"},
        {R"({"send": {"per_day": 18446744073709551615}})", "send.per_day: must be an integer"},
        {R"({"visit": {"per_month": 3}})", "visit.per_month: unknown field"},
        {R"({"withdraw": 5})", "withdraw: must be an object"},
        {R"([1, 2])", "the body must be a JSON object"},
        {R"("invite")", "the body must be a JSON object"},
    };
    quota_overrides current{};
    current[idx(action::invite)] = {40, 150};
    for (const auto& [body, want] : cases) {
        std::string error;
        auto r = orch::engine::apply_patch(current, json::parse(body), error);
        EXPECT_FALSE(r) << body;
        EXPECT_NE(error.find(want), std::string::npos) << body << " -> " << error;
    }
}

// Moving an account's quota day: at 16:00 UTC Kiritimati (UTC+14) is already on the next date.
// A move there starts a new day's quotas (said); a move back counts that date's calls as today's;
// a move within the same date says nothing.
TEST(AccountQuotas, AZoneMoveSaysWhatItDoesToTodaysQuotas) {
    using namespace std::chrono;
    const auto at = sys_days{year{2026} / 11 / 27} + hours{16};
    const auto east = orch::engine::quota_day_move_note("", "Pacific/Kiritimati", at);
    EXPECT_EQ(east, "its quota day is now 2026-11-28 (it was 2026-11-27): a new day's quotas start now, so up to a "
                    "day quota more may go out today (the rolling week quota still holds)");
    const auto west = orch::engine::quota_day_move_note("Pacific/Kiritimati", "UTC", at);
    EXPECT_EQ(west, "its quota day is now 2026-11-27 (it was 2026-11-28): the calls counted on 2026-11-28 count as "
                    "today's too");
    EXPECT_EQ(orch::engine::quota_day_move_note("UTC", "Europe/Paris", at), "");
    EXPECT_EQ(orch::engine::quota_day_move_note("Europe/Paris", "Europe/Paris", at), "");
}

TEST(AccountQuotas, EffectiveQuotasFillUnsetFieldsFromTheDefaults) {
    auto defaults = orch::limits::default_actions();
    defaults[idx(action::invite)].limit = {80, 200};
    defaults[idx(action::send)].limit = {150, -1};
    quota_overrides q{};
    q[idx(action::invite)] = {40, std::nullopt};
    auto eff = orch::engine::effective(q, defaults);
    ASSERT_TRUE(eff[idx(action::invite)]);
    EXPECT_EQ(eff[idx(action::invite)]->per_day, 40);
    EXPECT_EQ(eff[idx(action::invite)]->per_week, 200);
    EXPECT_FALSE(eff[idx(action::send)]);  // no override: the limiter's default holds
    auto view = orch::engine::quotas_view(q, defaults);
    EXPECT_EQ(view["invite"], json::parse(R"({"per_day": 40, "per_week": 200, "per_day_source": "override",
                                              "per_week_source": "default"})"));
    EXPECT_EQ(view["send"]["per_week"], nullptr);  // -1: no limit
    EXPECT_EQ(view["send"]["per_day_source"], "default");
    EXPECT_EQ(view.size(), 5u);
}

// ---- on Postgres ----

class AccountQuotasPg : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        env_ = std::make_unique<orchestrator_env>(1);  // no sandbox: nothing here calls the API
        env_->set("ORCH_INVITE_PER_DAY", "80");
        env_->set("ORCH_INVITE_PER_WEEK", "200");
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec("INSERT INTO accounts (account_id, label) VALUES ('acc-1', 'sender-1'), ('acc-2', NULL)");
        tx.commit();
    }

    std::string stored(const std::string& account) {
        return env_->scalar("SELECT quotas::text FROM accounts WHERE account_id = '" + account + "'");
    }

    std::unique_ptr<orchestrator_env> env_;
};

TEST_F(AccountQuotasPg, TheStoreChangesOneAccountAndClearsToNull) {
    orch::engine::store db(env_->database_url());
    auto set = [](const std::string& body) {
        return [body](const quota_overrides& current, std::string& error) {
            return orch::engine::apply_patch(current, json::parse(body), error);
        };
    };
    auto missing = db.change_account_quotas("nobody", set(R"({"invite": {"per_day": 1}})"));
    EXPECT_FALSE(missing.found);

    auto r = db.change_account_quotas("sender-1", set(R"({"invite": {"per_day": 40}})"));  // by label
    ASSERT_TRUE(r.found);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(r.account_id, "acc-1");
    EXPECT_EQ(json::parse(stored("acc-1")), json::parse(R"({"invite": {"per_day": 40}})"));
    EXPECT_EQ(stored("acc-2"), "");  // the other account is untouched

    auto again = db.change_account_quotas("acc-1", set(R"({"invite": {"per_day": 40}})"));
    EXPECT_FALSE(again.changed);

    auto refused = db.change_account_quotas("acc-1", set(R"({"invite": {"per_day": -4}})"));
    EXPECT_TRUE(refused.found);
    EXPECT_NE(refused.error.find("invite.per_day"), std::string::npos) << refused.error;
    EXPECT_EQ(json::parse(stored("acc-1")), json::parse(R"({"invite": {"per_day": 40}})"));

    auto listed = db.accounts();
    ASSERT_EQ(listed.size(), 2u);
    EXPECT_EQ(listed[0].quotas[idx(action::invite)].per_day, 40);
    EXPECT_TRUE(orch::engine::no_overrides(listed[1].quotas));

    auto cleared = db.change_account_quotas("acc-1", set(R"({"invite": null})"));
    EXPECT_TRUE(cleared.changed);
    EXPECT_EQ(stored("acc-1"), "");  // NULL, not {}
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM accounts WHERE quotas IS NULL"), "2");
}

// A lane transaction that gated a lead under the old quota writes its wait for the account's next
// day after the quota change's own wake-up looked (it saw the row still due). The change waits,
// once committed, for the lane transactions that began before it (engine/lane_enter's shared lock)
// and wakes the waits they wrote. The "lane" is that transaction: the worker's first statement,
// then the wait the gate's denial writes.
TEST_F(AccountQuotasPg, AQuotaChangeWakesAWaitALaneWroteUnderTheOldQuota) {
    orch::engine::store db(env_->database_url());
    pqxx::connection c(env_->database_url());
    {
        pqxx::work tx(c);
        const auto campaign = tx.exec("INSERT INTO campaigns (name) VALUES ('q') RETURNING campaign_id")[0][0]
                                  .as<std::int64_t>();
        tx.exec_params("INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) "
                       "VALUES ($1, 1, '{}', '', '')",
                       campaign);
        tx.exec_params("WITH l AS (INSERT INTO leads (canonical_url, profile_url) VALUES ('example.com/in/q', "
                       "'example.com/in/q') RETURNING lead_id) "
                       "INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step) "
                       "SELECT $1, 1, lead_id, 'acc-1', 'invite' FROM l",
                       campaign);
        tx.commit();
    }
    ASSERT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE next_run_at <= now() AND wait_code IS NULL"), "1");

    pqxx::connection lane_conn(env_->database_url());
    pqxx::work lane(lane_conn);
    lane.exec_params(std::string(orch::schema::query("engine/lane_enter")), 0, 0, 2500);
    lane.exec("UPDATE enrollments SET status = 'waiting', due_at = now() + interval '1 day', "
              "next_run_at = now() + interval '1 day', wait_code = 'day_quota', "
              "reason = 'waiting for the invite day quota of account acc-1'");

    auto change = std::async(std::launch::async, [&] {
        return db.change_account_quotas("acc-1", [](const quota_overrides& current, std::string& error) {
            return orch::engine::apply_patch(current, json::parse(R"({"invite": {"per_day": 90}})"), error);
        });
    });
    // The change has committed and waits for the lane's transaction to end.
    EXPECT_EQ(change.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout);
    EXPECT_EQ(json::parse(stored("acc-1")), json::parse(R"({"invite": {"per_day": 90}})"));
    lane.commit();
    ASSERT_EQ(change.wait_for(std::chrono::seconds(15)), std::future_status::ready);
    const auto r = change.get();
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(r.woken, 1);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE next_run_at <= now() AND due_at <= now()"), "1");
}

// Rows written by hand (psql) must hold the same shape the engine reads.
TEST_F(AccountQuotasPg, TheCheckConstraintRefusesWhatTheEngineWouldNotRead) {
    pqxx::connection c(env_->database_url());
    const std::vector<std::string> bad = {
        R"({"bogus": {"per_day": 1}})",       R"({"invite": {"per_day": -1}})", R"({"invite": {"per_day": 1.5}})",
        R"({"invite": {"per_day": "5"}})",    R"({"invite": {"per_day": 1000001}})",
        R"({"invite": {"per_month": 5}})",    R"({"invite": 5})",               R"([1])",
        R"({"invite": {"per_day": 1.0}})",
    };
    for (const auto& q : bad) {
        pqxx::work tx(c);
        try {
            tx.exec_params("UPDATE accounts SET quotas = $1::jsonb WHERE account_id = 'acc-1'", q);
            ADD_FAILURE() << "accepted " << q;
        } catch (const pqxx::check_violation&) {
            // expected
        }
    }
    pqxx::work tx(c);
    tx.exec("UPDATE accounts SET quotas = '{\"invite\": {\"per_day\": 0, \"per_week\": 1000000}, "
            "\"search\": {\"per_week\": null}}' WHERE account_id = 'acc-1'");
    tx.commit();
    EXPECT_NE(stored("acc-1"), "");
}

// A day quota lowered to or below what the account used already today: `accounts limits` says
// that none more goes out in this quota day. Before, it said "changed" only (a trial set a send
// quota of 3 after 10 sends and was told nothing more).
TEST_F(AccountQuotasPg, AQuotaLoweredToTodaysUseSaysNoneMoreGoesOutToday) {
    ORCH_REQUIRE_SERVICE("REDIS_URL");
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    // A key and an account of this test's own: its Redis counts are nobody else's.
    const std::string key = "quota-note-" + std::to_string(::getpid()) + "-" + std::to_string(ms);
    env_ = std::make_unique<orchestrator_env>(1, key);
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec("INSERT INTO accounts (account_id) VALUES ('acc-note')");
        tx.commit();
    }
    // Three sends taken today, as a worker takes them.
    orch::limits::settings ls;
    ls.redis_url = std::getenv("REDIS_URL");
    ls.api_key = key;
    ls.key_requests_per_s = 1'000'000;
    ls.key_burst = 100'000;
    for (auto& d : ls.actions) {
        d.ramp = {};
    }
    orch::limits::limiter limiter(ls);
    for (int i = 0; i < 3; ++i) {
        orch::limits::check c;
        c.account_id = "acc-note";
        c.what = action::send;
        c.day = orch::limits::day_in_zone(std::chrono::system_clock::now(), "UTC").value();
        c.account_quota = orch::limits::quota{100, 1000};
        ASSERT_TRUE(limiter.take(c).allowed) << i;
    }
    auto above = env_->run({"accounts", "limits", "acc-note", "--send-per-day", "5"});
    ASSERT_EQ(above.exit_code, 0) << above.output;
    EXPECT_EQ(above.output.find("note: send"), std::string::npos) << above.output;
    auto at = env_->run({"accounts", "limits", "acc-note", "--send-per-day", "3"});
    ASSERT_EQ(at.exit_code, 0) << at.output;
    EXPECT_NE(at.output.find("note: send: 3 used in this quota day, at or above its day quota of 3: none more until "
                             "the quota day ends"),
              std::string::npos)
        << at.output;
}

TEST_F(AccountQuotasPg, TheCliShowsSetsAndClearsAnAccountsQuotas) {
    auto shown = env_->run({"accounts", "limits", "acc-1"});
    ASSERT_EQ(shown.exit_code, 0) << shown.output;
    EXPECT_NE(shown.output.find("invite     80 (default)"), std::string::npos) << shown.output;

    auto set = env_->run({"accounts", "limits", "sender-1", "--invite-per-day", "40", "--send-per-week", "300",
                          "--format", "json"});
    ASSERT_EQ(set.exit_code, 0) << set.output;
    auto j = json::parse(set.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << set.output;
    EXPECT_EQ(j["account_id"], "acc-1");
    EXPECT_EQ(j["changed"], true);
    EXPECT_EQ(j["quotas"]["invite"]["per_day"], 40);
    EXPECT_EQ(j["quotas"]["invite"]["per_day_source"], "override");
    EXPECT_EQ(j["quotas"]["invite"]["per_week"], 200);
    EXPECT_EQ(j["quotas"]["invite"]["per_week_source"], "default");
    EXPECT_EQ(j["quotas"]["send"]["per_week"], 300);
    EXPECT_EQ(json::parse(stored("acc-1")),
              json::parse(R"({"invite": {"per_day": 40}, "send": {"per_week": 300}})"));

    // A week below the day, the default's included, is refused, and changes nothing.
    auto below = env_->run({"accounts", "limits", "acc-1", "--send-per-day", "400"});
    EXPECT_EQ(below.exit_code, 2) << below.output;
    EXPECT_NE(below.output.find("send: a week of 300 is below a day of 400"), std::string::npos) << below.output;
    EXPECT_EQ(json::parse(stored("acc-1")),
              json::parse(R"({"invite": {"per_day": 40}, "send": {"per_week": 300}})"));

    // A second setter keeps the other field of the action.
    ASSERT_EQ(env_->run({"accounts", "limits", "acc-1", "--invite-per-week", "150"}).exit_code, 0);
    EXPECT_EQ(json::parse(stored("acc-1"))["invite"], json::parse(R"({"per_day": 40, "per_week": 150})"));

    // The table shows the override and its source.
    auto table = env_->run({"accounts", "limits", "acc-1"});
    EXPECT_NE(table.output.find("invite     40 (override)"), std::string::npos) << table.output;
    auto list = env_->run({"accounts", "list", "--format", "json"});
    ASSERT_EQ(list.exit_code, 0) << list.output;
    auto brace = list.output.find('{');
    auto lj = json::parse(list.output.substr(brace == std::string::npos ? 0 : brace), nullptr, false);
    ASSERT_FALSE(lj.is_discarded()) << list.output;
    EXPECT_EQ(lj["accounts"][0]["effective_quotas"]["invite"]["per_day"], 40) << list.output;
    EXPECT_EQ(lj["accounts"][1]["effective_quotas"]["invite"]["per_day"], 80) << list.output;

    // Errors: each exits non-zero with a message, and changes nothing.
    const std::string before = stored("acc-1");
    struct bad_case {
        std::vector<std::string> args;
        std::string message;
    };
    const std::vector<bad_case> bad = {
        {{"accounts", "limits", "nobody", "--invite-per-day", "5"}, "no account 'nobody'"},
        {{"accounts", "limits", "acc-1", "--invite-per-day", "-5"}, "--invite-per-day: must be an integer from 0"},
        {{"accounts", "limits", "acc-1", "--invite-per-day", "x"}, "--invite-per-day: must be an integer"},
        {{"accounts", "limits", "acc-1", "--send-per-day", "2000000"}, "--send-per-day: must be an integer"},
        {{"accounts", "limits", "acc-1", "--clear", "bogus"}, "--clear: unknown action 'bogus'"},
        {{"accounts", "limits", "acc-1", "--clear", "invite", "--invite-per-day", "3"}, "contradict"},
        {{"accounts", "limits", "acc-1", "--clear", "all", "--invite-per-day", "3"},
         "--invite-per-day and --clear all contradict each other"},
        // Every bad flag in one message (it said the first).
        {{"accounts", "limits", "acc-1", "--invite-per-day", "-1", "--send-per-week", "x", "--time-zone", "Mars/Base",
          "--clear", "bogus"},
         "--clear: unknown action 'bogus'; one of invite, send, visit, withdraw, search, all; --invite-per-day: must be "
         "an integer from 0 to"},
        {{"accounts", "limits", "acc-1", "--invite-per-day", "-1", "--send-per-week", "x", "--time-zone", "Mars/Base"},
         "--send-per-week: must be an integer from 0 to 1000000, got 'x'; --time-zone: unknown time zone 'Mars/Base'"},
    };
    for (const auto& c : bad) {
        auto r = env_->run(c.args);
        EXPECT_NE(r.exit_code, 0) << r.output;
        EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
        EXPECT_EQ(stored("acc-1"), before);
    }
    EXPECT_EQ(stored("acc-2"), "");

    // Clearing one action keeps the other; clearing all stores NULL.
    ASSERT_EQ(env_->run({"accounts", "limits", "acc-1", "--clear", "invite"}).exit_code, 0);
    EXPECT_EQ(json::parse(stored("acc-1")), json::parse(R"({"send": {"per_week": 300}})"));
    ASSERT_EQ(env_->run({"accounts", "limits", "--clear", "all", "acc-1"}).exit_code, 0);
    EXPECT_EQ(stored("acc-1"), "");
}

}  // namespace
