// Upgrading a database that already holds campaigns: the schema is taken back to migration 0004,
// filled with enrollments in every state, their intent log and inbox events, and `orchestrator
// migrate` then applies 0005 onwards. The backfills must give the rows what the engine would have
// written: the milestones of 0005 (from the intent log and the inbox) and the funnel counts of
// 0008 (equal to a recount, and to the counts worked out here by hand); the later migrations
// (fillfactors, the dropped foreign key, the row types) must apply to filled tables.
#include "engine/store.hpp"
#include "schema/schema.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <memory>
#include <string>
#include <utility>

namespace {

using orch::test::orchestrator_env;

class MigrationsOnAFilledDatabase : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        env_ = std::make_unique<orchestrator_env>(1);   // no sandbox: nothing is called
        // Back to an empty schema, then migrations 1-4 as `migrate` applies them.
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec("DROP SCHEMA public CASCADE");
        tx.exec("CREATE SCHEMA public");
        tx.exec(std::string(orch::schema::query("migrate/ensure_table")));
        migrate(tx, 0, 4);
        tx.commit();
    }

    // Applies and records migrations first..last, as `migrate` does, in `tx`.
    static void migrate(pqxx::work& tx, int first, int last) {
        for (const auto& m : orch::schema::migrations()) {
            if (m.version >= first && m.version <= last) {
                tx.exec(std::string(m.sql));
                tx.exec_params(std::string(orch::schema::query("migrate/record")), m.version, std::string(m.name));
            }
        }
    }

    std::string scalar(const std::string& sql) { return env_->scalar(sql); }

    std::unique_ptr<orchestrator_env> env_;
};

TEST_F(MigrationsOnAFilledDatabase, BackfillsGiveWhatTheEngineWouldHaveWritten) {
    ASSERT_EQ(scalar("SELECT max(version) FROM schema_migrations"), "4");
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec(R"sql(
INSERT INTO accounts (account_id) VALUES ('acc-1'), ('acc-2');
INSERT INTO campaigns (campaign_id, name) VALUES (1, 'old');
INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) VALUES (1, 1, '{}', '', '');
INSERT INTO leads (lead_id, canonical_url, profile_url)
SELECT g, 'example.com/in/p' || g, 'https://example.com/in/p' || g FROM generate_series(1, 6) g;
-- 1 replied after invite, acceptance and message; 2 invited, waiting; 3 failed at its check;
-- 4 not started; 5 ended at its check (already connected); 6 waiting after a send whose answer was
-- lost, and a reply came after it.
INSERT INTO enrollments (enrollment_id, campaign_id, version, lead_id, account_id, step, status, finished_at) VALUES
    (1, 1, 1, 1, 'acc-1', 'send', 'replied', now()),
    (2, 1, 1, 2, 'acc-1', 'wait', 'waiting', NULL),
    (3, 1, 1, 3, 'acc-2', 'check', 'failed', now()),
    (4, 1, 1, 4, 'acc-2', 'check', 'ready', NULL),
    (5, 1, 1, 5, 'acc-1', 'check', 'done', now()),
    (6, 1, 1, 6, 'acc-2', 'send', 'waiting', NULL);
INSERT INTO step_attempts (enrollment_id, step, call, attempt, worker, outcome, credits, started_at, finished_at) VALUES
    (1, 'check', 'check_invitation', 0, 'w', 'ok', 1, now() - interval '3 days', now() - interval '3 days'),
    (1, 'invite', 'invite', 0, 'w', 'ok', 2, now() - interval '3 days', now() - interval '3 days'),
    (1, 'send', 'send', 0, 'w', 'ok', 1, now() - interval '1 day', now() - interval '1 day'),
    (2, 'check', 'check_invitation', 0, 'w', 'ok', 1, now() - interval '2 days', now() - interval '2 days'),
    (2, 'invite', 'invite', 0, 'w', 'ok', 2, now() - interval '2 days', now() - interval '2 days'),
    (3, 'check', 'check_invitation', 0, 'w', 'permanent', 0, now() - interval '2 days', now() - interval '2 days'),
    (5, 'check', 'check_invitation', 0, 'w', 'ok', 1, now() - interval '2 days', now() - interval '2 days'),
    (6, 'check', 'check_invitation', 0, 'w', 'ok', 1, now() - interval '3 days', now() - interval '3 days'),
    (6, 'invite', 'invite', 0, 'w', 'ok', 2, now() - interval '3 days', now() - interval '3 days'),
    (6, 'send', 'send', 0, 'w', 'uncertain', 1, now() - interval '2 hours', now() - interval '2 hours');
INSERT INTO events (source_id, account_id, kind, lead_id, payload, received_at) VALUES
    ('a1', 'acc-1', 'accepted_invitation', 1, '{}', now() - interval '2 days'),
    ('m1', 'acc-1', 'message', 1, '{}', now() - interval '12 hours'),
    ('m6', 'acc-2', 'message', 6, '{}', now() - interval '1 hour'),
    ('x2', 'acc-2', 'message', 2, '{}', now());  -- lead 2 is acc-1's: not its reply
)sql");
        tx.commit();
    }

    auto r = env_->run({"migrate"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(scalar("SELECT max(version) FROM schema_migrations"), std::to_string(orch::schema::latest_version()));

    // 0005: the milestones, from the intent log and the inbox.
    auto milestones = [&](int id) {
        return scalar("SELECT concat_ws(' ', checked_at IS NOT NULL, invited_at IS NOT NULL, messaged_at IS NOT NULL, "
                      "send_uncertain_at IS NOT NULL, accepted_at IS NOT NULL, replied_at IS NOT NULL, credits) "
                      "FROM enrollments WHERE enrollment_id = " +
                      std::to_string(id));
    };
    EXPECT_EQ(milestones(1), "t t t f t t 4");
    EXPECT_EQ(milestones(2), "t t f f f f 3");
    EXPECT_EQ(milestones(3), "f f f f f f 0");
    EXPECT_EQ(milestones(4), "f f f f f f 0");
    EXPECT_EQ(milestones(5), "t f f f f f 1");
    EXPECT_EQ(milestones(6), "t t f t f t 4");

    // 0008: the counts, equal to a recount and to these, worked out by hand per sender account.
    const std::string kept = "SELECT campaign_id, account_id, sum(enrolled), sum(checked), sum(invited), "
                             "sum(accepted), sum(messaged), sum(replied), sum(failed), sum(live), sum(credits) "
                             "FROM funnel_counts GROUP BY 1, 2";
    const std::string recount = "SELECT campaign_id, account_id, enrolled, checked, invited, accepted, messaged, "
                                "replied, failed, live, credits FROM funnel_recount";
    EXPECT_EQ(scalar("SELECT count(*) FROM ((" + kept + " EXCEPT " + recount + ") UNION ALL (" + recount +
                     " EXCEPT " + kept + ")) d"),
              "0");
    auto counts = [&](const std::string& account) {
        return scalar("SELECT concat_ws(' ', sum(enrolled), sum(checked), sum(invited), sum(accepted), sum(messaged), "
                      "sum(replied), sum(failed), sum(live), sum(credits)) FROM funnel_counts WHERE account_id = '" +
                      account + "'");
    };
    // acc-1: enrollments 1, 2, 5; acc-2: 3, 4, 6 (6 counts as messaged: its lost send was answered)
    EXPECT_EQ(counts("acc-1"), "3 3 2 1 1 1 0 1 8");
    EXPECT_EQ(counts("acc-2"), "3 1 1 0 1 1 1 2 4");

    // The later migrations on the filled tables: the intent log and the transfers lost their
    // foreign key, the ledger checks sound, and the triggers count what changes next.
    EXPECT_EQ(scalar("SELECT count(*) FROM pg_constraint WHERE conname = 'ledger_transfers_attempt_id_fkey'"), "0");
    EXPECT_EQ(scalar("SELECT count(*) FROM pg_constraint WHERE conname = 'step_attempts_enrollment_id_fkey'"), "0");
    EXPECT_EQ(scalar("SELECT count(*) FROM ledger_check"), "0");
    pqxx::connection c(env_->database_url());
    pqxx::work tx(c);
    tx.exec("UPDATE enrollments SET status = 'done', finished_at = now() WHERE enrollment_id = 4");
    tx.commit();
    EXPECT_EQ(counts("acc-2"), "3 1 1 0 1 1 1 1 4");
}

// 0018 on a database the previous version filled: each live lead's wait code from the sentence
// the engine wrote (every sentence it wrote for a wait), none for a reason that is not a wait or
// a finished lead; the wake-ups then find the leads by code.
TEST_F(MigrationsOnAFilledDatabase, WaitCodesAreBackfilledFromTheOldSentences) {
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        migrate(tx, 5, 17);
        tx.exec(R"sql(
INSERT INTO accounts (account_id) VALUES ('acc-1');
INSERT INTO campaigns (campaign_id, name) VALUES (1, 'old');
INSERT INTO campaigns (campaign_id, name, state, pause_reason) VALUES
    (2, 'budget', 'paused', 'budget exhausted: 3 credits short'),
    (3, 'credits', 'paused', 'credits: the API key is out of credits (INSUFFICIENT_CREDITS)'),
    (4, 'ended', 'paused', 'ended: end_at 2026-01-01T00:00:00Z passed'),
    (5, 'held', 'paused', 'holiday'),
    (6, 'gone', 'cancelled', NULL);
INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) VALUES (1, 1, '{}', '', '');
INSERT INTO leads (lead_id, canonical_url, profile_url)
SELECT g, 'example.com/in/p' || g, 'https://example.com/in/p' || g FROM generate_series(1, 20) g;
INSERT INTO enrollments (enrollment_id, campaign_id, version, lead_id, account_id, step, status, reason,
                         next_run_at, due_at, finished_at) VALUES
    (1, 1, 1, 1, 'acc-1', 'invite', 'ready', 'outside working hours', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (2, 1, 1, 2, 'acc-1', 'invite', 'ready', 'waiting for the API key''s request rate', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (3, 1, 1, 3, 'acc-1', 'invite', 'ready', 'waiting for the API key''s RATE_LIMITED cooldown', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (4, 1, 1, 4, 'acc-1', 'invite', 'ready', 'waiting for the invite RATE_LIMITED cooldown of account acc-1', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (5, 1, 1, 5, 'acc-1', 'invite', 'ready', 'waiting for the invite day quota of account acc-1', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (6, 1, 1, 6, 'acc-1', 'send', 'ready', 'waiting for the send week quota of account acc-1', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (7, 1, 1, 7, 'acc-1', 'invite', 'ready', 'waiting for the campaign''s invite cap on account acc-1', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (8, 1, 1, 8, 'acc-1', 'invite', 'ready', 'waiting for the invite pacing of account acc-1', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (9, 1, 1, 9, 'acc-1', 'invite', 'ready', 'waiting for the rate-limit store (Redis) to come back', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (10, 1, 1, 10, 'acc-1', 'invite', 'ready', 'waiting for the rate limits (bad_input)', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (11, 1, 1, 11, 'acc-1', 'invite', 'ready', 'not sent: a cooldown or an unavailable account holds it', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (12, 1, 1, 12, 'acc-1', 'invite', 'ready', 'RATE_LIMITED: too many requests (HTTP 429)', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (13, 1, 1, 13, 'acc-1', 'invite', 'ready', 'paused: budget exhausted', now(), 'infinity', NULL),
    (14, 1, 1, 14, 'acc-1', 'invite', 'ready', 'waiting for the campaign''s daily budget (tomorrow, UTC)', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (15, 1, 1, 15, 'acc-1', 'invite', 'ready', 'the campaign''s budget for account acc-1 is spent', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (16, 1, 1, 16, 'acc-1', 'invite', 'ready', 'the campaign has no budget in the ledger (apply it again)', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (17, 1, 1, 17, 'acc-1', 'invite', 'ready', 'HTTP 503 from the API', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (18, 1, 1, 18, 'acc-1', 'invite', 'ready', '', now() + interval '1 hour', now() + interval '1 hour', NULL),
    (19, 1, 1, 19, 'acc-1', 'invite', 'failed', 'waiting for the invite day quota of account acc-1', now(), now(), now()),
    (20, 1, 1, 20, 'acc-1', 'wait', 'waiting', 'waiting for the campaign''s daily budget (tomorrow, UTC)', now() + interval '1 hour', now() + interval '1 hour', NULL);
)sql");
        tx.commit();
    }
    ASSERT_EQ(scalar("SELECT max(version) FROM schema_migrations"), "17");
    auto r = env_->run({"migrate"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(scalar("SELECT string_agg(enrollment_id || ' ' || COALESCE(wait_code, '-'), ', ' ORDER BY enrollment_id) "
                     "FROM enrollments"),
              "1 schedule, 2 key_rate, 3 key_cooldown, 4 account_cooldown, 5 day_quota, 6 week_quota, "
              "7 campaign_quota, 8 pacing, 9 limits_unavailable, 10 limits_error, 11 throttled, 12 throttled, "
              "13 campaign_budget, 14 day_budget, 15 account_budget, 16 no_budget, 17 -, 18 -, 19 -, 20 day_budget");

    EXPECT_EQ(scalar("SELECT string_agg(name || ' ' || COALESCE(pause_code, '-'), ', ' ORDER BY campaign_id) "
                     "FROM campaigns"),
              "old -, budget budget, credits credits, ended ended, held operator, gone -");

    // The wake-ups match the codes: the quota and campaign-cap waiters of acc-1 (5, 6 and 7), then
    // the budget waiters of campaign 1 (14, 15 and 20); nothing else moves.
    pqxx::connection c(env_->database_url());
    {
        pqxx::work tx(c);
        EXPECT_EQ(tx.exec_params(std::string(orch::schema::query("accounts/wake_quota_waiters")), "acc-1").affected_rows(),
                  3u);
        EXPECT_EQ(tx.exec_params(std::string(orch::schema::query("engine/wake_budget_waits")), 1).affected_rows(), 3u);
        tx.commit();
    }
    EXPECT_EQ(scalar("SELECT string_agg(enrollment_id::text, ' ' ORDER BY enrollment_id) FROM enrollments "
                     "WHERE due_at <= now() AND status <> 'failed'"),
              "5 6 7 14 15 20");

    // The resumes match the pause codes: a raised budget lifts the ledger's pause only, credits
    // read again lift the credits pause only; the operator's pause stays.
    {
        pqxx::work tx(c);
        EXPECT_EQ(tx.exec_params(std::string(orch::schema::query("ledger/resume_campaign")), 5).size(), 0u);
        EXPECT_EQ(tx.exec_params(std::string(orch::schema::query("ledger/resume_campaign")), 2).size(), 1u);
        EXPECT_EQ(tx.exec(std::string(orch::schema::query("credits/resume"))).size(), 1u);
        tx.commit();
    }
    EXPECT_EQ(scalar("SELECT string_agg(name || ' ' || state || ' ' || COALESCE(pause_code, '-'), ', ' "
                     "ORDER BY campaign_id) FROM campaigns WHERE campaign_id > 1"),
              "budget active -, credits active -, ended paused ended, held paused operator, gone cancelled -");
}

// Migration 0030: the stored canonical URLs move to one spelling per character, as
// canonical_profile_url now writes them; two stored spellings of one person keep two rows (the
// first takes the new key), and a do-not-contact entry in the old spelling matches every spelling.
TEST_F(MigrationsOnAFilledDatabase, CanonicalUrlsAreRespelled) {
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        migrate(tx, 5, 29);
        // The old keys: lower case, otherwise as written.
        tx.exec(R"sql(
INSERT INTO leads (lead_id, canonical_url, profile_url) VALUES
    (1, 'example.com/in/josé', 'https://example.com/in/José'),
    (2, 'example.com/in/jos%c3%a9', 'https://example.com/in/jos%C3%A9'),
    (3, 'example.com/in/%63hloe', 'https://example.com/in/%63hloe'),
    (4, 'example.com/in/plain', 'https://example.com/in/plain'),
    (5, 'example.com/in/100%25-sure', 'https://example.com/in/100%25-sure');
INSERT INTO do_not_contact (canonical_url, profile_url, reason) VALUES
    ('example.com/in/m%c3%bcller', 'https://example.com/in/M%C3%BCller', 'asked');
)sql");
        tx.commit();
    }
    auto r = env_->run({"migrate"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // 1 and 2 are one person: 2 holds the new key already, so 1 keeps its old one.
    EXPECT_EQ(scalar("SELECT string_agg(lead_id || ' ' || canonical_url, ', ' ORDER BY lead_id) FROM leads"),
              "1 example.com/in/josé, 2 example.com/in/jos%c3%a9, 3 example.com/in/chloe, "
              "4 example.com/in/plain, 5 example.com/in/100%25-sure");
    // Each stored key is what canonical_profile_url gives for its profile URL now.
    for (const auto& [id, url] : {std::pair{"3", "https://example.com/in/%63hloe"},
                                  std::pair{"4", "https://example.com/in/plain"},
                                  std::pair{"5", "https://example.com/in/100%25-sure"}}) {
        EXPECT_EQ(scalar(std::string("SELECT canonical_url FROM leads WHERE lead_id = ") + id),
                  orch::engine::canonical_profile_url(url));
    }
    EXPECT_EQ(scalar("SELECT canonical_url FROM do_not_contact"),
              orch::engine::canonical_profile_url("https://www.example.com/in/Müller/"));
}

// Migration 0032: each account a campaign already uses gets the time zone of its first live
// campaign (the lowest id, active or paused), else of its first campaign of any state, as that
// campaign's apply would now have set; a definition without a schedule counts as UTC; an account
// no campaign uses keeps none.
TEST_F(MigrationsOnAFilledDatabase, AccountsTakeTheTimeZoneOfTheirFirstCampaign) {
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        migrate(tx, 5, 31);
        tx.exec(R"sql(
INSERT INTO accounts (account_id) VALUES ('acc-live'), ('acc-old'), ('acc-plain'), ('acc-idle');
INSERT INTO campaigns (campaign_id, name, current_version, state) VALUES
    (1, 'first', 2, 'cancelled'), (2, 'later', 1, 'active'), (3, 'bare', 1, 'active');
INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) VALUES
    (1, 1, '{"schedule": {"time_zone": "Europe/Paris"}}', '', 'a'),
    (1, 2, '{"schedule": {"time_zone": "Asia/Tokyo"}}', '', 'b'),
    (2, 1, '{"schedule": {"time_zone": "America/New_York"}}', '', 'c'),
    (3, 1, '{}', '', 'd');
INSERT INTO leads (lead_id, canonical_url, profile_url)
SELECT g, 'example.com/in/p' || g, 'https://example.com/in/p' || g FROM generate_series(1, 4) g;
INSERT INTO enrollments (enrollment_id, campaign_id, version, lead_id, account_id, step, status, finished_at) VALUES
    (1, 2, 1, 1, 'acc-live', 'check', 'ready', NULL),
    (2, 1, 2, 2, 'acc-live', 'check', 'cancelled', now()),
    (3, 3, 1, 3, 'acc-plain', 'check', 'ready', NULL),
    (4, 1, 2, 4, 'acc-old', 'check', 'cancelled', now());
)sql");
        tx.commit();
    }
    auto r = env_->run({"migrate"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(scalar("SELECT string_agg(account_id || ' ' || COALESCE(time_zone, 'none'), ', ' ORDER BY account_id) "
                     "FROM accounts"),
              "acc-idle none, acc-live America/New_York, acc-old Asia/Tokyo, acc-plain UTC");
}

// 0040/0041: a follow-up that the read before it found replied to was recorded ok, as if sent.
// The migration makes that attempt not_sent (the lead's last, a send, with the machine's reason
// for it), and leaves a follow-up of a lead whose reply came otherwise as it was.
TEST_F(MigrationsOnAFilledDatabase, FollowUpsNotSentAreRecordedSo) {
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        migrate(tx, 5, 39);
        tx.exec(R"sql(
INSERT INTO accounts (account_id) VALUES ('acc-1');
INSERT INTO campaigns (campaign_id, name) VALUES (1, 'old');
INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) VALUES (1, 1, '{}', '', '');
INSERT INTO leads (lead_id, canonical_url, profile_url)
SELECT g, 'example.com/in/p' || g, 'https://example.com/in/p' || g FROM generate_series(1, 2) g;
INSERT INTO enrollments (enrollment_id, campaign_id, version, lead_id, account_id, step, status, reason, finished_at) VALUES
    (1, 1, 1, 1, 'acc-1', '', 'replied', 'the lead replied (found before the follow-up, which was not sent)', now()),
    (2, 1, 1, 2, 'acc-1', '', 'replied', 'the lead replied', now());
INSERT INTO step_attempts (enrollment_id, step, call, attempt, worker, outcome, credits, body, started_at, finished_at) VALUES
    (1, 'hello', 'send', 0, 'w', 'ok', 1, 'Hi', now() - interval '2 days', now() - interval '2 days'),
    (2, 'hello', 'send', 0, 'w', 'ok', 1, 'Hi', now() - interval '2 days', now() - interval '2 days'),
    (1, 'again', 'send', 0, 'w', 'ok', 1, 'Following up', now() - interval '1 day', now() - interval '1 day'),
    (2, 'again', 'send', 0, 'w', 'ok', 1, 'Following up', now() - interval '1 day', now() - interval '1 day');
)sql");
        tx.commit();
    }
    auto r = env_->run({"migrate"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(scalar("SELECT string_agg(enrollment_id || ' ' || step || ' ' || outcome, ', ' ORDER BY attempt_id) "
                     "FROM step_attempts"),
              "1 hello ok, 2 hello ok, 1 again not_sent, 2 again ok");
}

// A follow-up of one message_text overwrote the variant a lead got in an A/B test before it
// (migration 0046): such leads get back their sends' last other variant; a lead whose sends were
// all 'default', or that has no send, keeps what it had.
TEST_F(MigrationsOnAFilledDatabase, AbVariantsOverwrittenByAFollowUpComeBack) {
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        migrate(tx, 5, 39);  // 0040 adds an enum value that 0041 uses: `migrate` commits each
        tx.exec(R"sql(
INSERT INTO accounts (account_id) VALUES ('acc-1');
INSERT INTO campaigns (campaign_id, name) VALUES (1, 'ab');
INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) VALUES (1, 1, '{}', '', '');
INSERT INTO leads (lead_id, canonical_url, profile_url)
SELECT g, 'example.com/in/p' || g, 'https://example.com/in/p' || g FROM generate_series(1, 4) g;
INSERT INTO enrollments (enrollment_id, campaign_id, version, lead_id, account_id, step, status, variant, messaged_at,
                         finished_at)
VALUES (1, 1, 1, 1, 'acc-1', '', 'done', 'default', now(), now()), (2, 1, 1, 2, 'acc-1', '', 'done', 'default', now(), now()),
    (3, 1, 1, 3, 'acc-1', '', 'done', 'default', now(), now()), (4, 1, 1, 4, 'acc-1', 'intro', 'ready', NULL, NULL, NULL);
INSERT INTO step_attempts (enrollment_id, step, call, attempt, worker, outcome, credits, body, variant, finished_at)
SELECT e, s, 'send', 0, 'w', 'ok', 1, 'Hi', v, now()
FROM (VALUES (1, 'intro', 'A'), (1, 'again', 'default'), (2, 'intro', 'B'), (2, 'again', 'default'),
             (3, 'intro', 'default'), (3, 'again', 'default')) AS x(e, s, v);
)sql");
        tx.commit();
    }
    auto r = env_->run({"migrate"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(scalar("SELECT string_agg(enrollment_id || ' ' || COALESCE(variant, '-'), ', ' ORDER BY enrollment_id) "
                     "FROM enrollments"),
              "1 A, 2 B, 3 default, 4 -");
    EXPECT_EQ(scalar("SELECT string_agg(variant || ' ' || messaged, ', ' ORDER BY variant) FROM report_rates_by_variant "
                     "WHERE campaign = 'ab'"),
              "A 1, B 1, default 1");
}

}  // namespace
