// The campaign lifecycle (engine/campaign_lifecycle.hpp, migration 0017): the unified diff and
// the apply warnings (pure), then on a real Postgres (a fresh database per test, migrated by the
// real `orchestrator migrate`, campaigns applied with the real `orchestrator campaign apply`):
// a campaign whose leads all finish becomes completed, also when the last two finish in two
// concurrent transactions, and active again when a new apply enrolls new leads; start_at holds
// its leads out of the claim; end_at stops the campaign at the claim and a later end_at resumes
// it; `campaign show | versions | diff`; the warnings `campaign apply` prints.
#include "campaigns/campaigns.hpp"
#include "engine/campaign_lifecycle.hpp"
#include "engine/limits/limits.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"
#include "tests/support/env_limiter.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace {

using json = nlohmann::json;
using orch::test::orchestrator_env;
using namespace std::chrono;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The ids engine/claim_pick picks (up to 100), as the array literal engine/claim_due takes.
std::string picked(pqxx::work& tx) {
    std::string arr = "{";
    for (const auto& r : tx.exec_params(std::string(orch::schema::query("engine/claim_pick")), 100)) {
        arr += (arr.size() > 1 ? "," : "") + r[0].as<std::string>();
    }
    return arr + "}";
}

// ---- pure ----

TEST(LifecycleDiff, EqualTextsHaveNoDiff) { EXPECT_EQ(orch::engine::unified_diff("a\nb\n", "a\nb\n", "x", "y"), ""); }

TEST(LifecycleDiff, OneChangedLineWithThreeLinesOfContext) {
    std::string a, b;
    for (int i = 1; i <= 10; ++i) {
        a += "l" + std::to_string(i) + "\n";
        b += (i == 5 ? std::string("changed") : "l" + std::to_string(i)) + "\n";
    }
    EXPECT_EQ(orch::engine::unified_diff(a, b, "c version 1", "c version 2"),
              "--- c version 1\n+++ c version 2\n"
              "@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+changed\n l6\n l7\n l8\n");
}

TEST(LifecycleDiff, FarApartChangesMakeTwoHunksAndInsertionsCountRight) {
    std::string a, b;
    for (int i = 1; i <= 20; ++i) {
        a += "l" + std::to_string(i) + "\n";
        b += "l" + std::to_string(i) + "\n";
        if (i == 2) {
            b += "new\n";
        }
    }
    b.replace(b.find("l18\n"), 4, "");
    EXPECT_EQ(orch::engine::unified_diff(a, b, "a", "b"),
              "--- a\n+++ b\n"
              "@@ -1,5 +1,6 @@\n l1\n l2\n+new\n l3\n l4\n l5\n"
              "@@ -15,6 +16,5 @@\n l15\n l16\n l17\n-l18\n l19\n l20\n");
}

TEST(LifecycleDiff, FromAndToNothing) {
    EXPECT_EQ(orch::engine::unified_diff("", "x\n", "a", "b"), "--- a\n+++ b\n@@ -0,0 +1,1 @@\n+x\n");
    EXPECT_EQ(orch::engine::unified_diff("x\ny\n", "", "a", "b"), "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-x\n-y\n");
}

orch::campaigns::campaign campaign_of(const std::string& steps, const std::string& extra = "") {
    orch::campaigns::load_options o;
    auto r = orch::campaigns::load_campaign("name: w\naccounts: acc\naudience:\n  search: {title: X}\n"
                                            "schedule: {time_zone: Europe/Berlin, hours: \"09:00-17:00\"}\n"
                                            "budget_credits: 100\n" + extra + "steps:\n" + steps,
                                            o);
    EXPECT_TRUE(r.value) << (r.errors.empty() ? "" : r.errors[0].to_string());
    return *r.value;
}

TEST(LifecycleWarnings, AnAudienceThatMatchedNobody) {
    auto c = campaign_of("  - {id: invite, kind: invite}\n");
    orch::engine::settings s;
    auto w = orch::engine::apply_warnings(c, {0, 0, 0, "completed", nullptr}, s, system_clock::now());
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0], "the audience matched nobody: no lead was enrolled and the campaign is completed (change the "
                    "search or the file, and apply it again)");
}

// A completed campaign applied again enrolls nobody new: the warning says why, telling the
// campaign's own leads from those another campaign or the do-not-contact list holds.
TEST(LifecycleWarnings, NoNewLeadSaysWhoseTheLeadsAre) {
    auto c = campaign_of("  - {id: invite, kind: invite}\n");
    orch::engine::settings s;
    auto own = orch::engine::apply_warnings(c, {5, 0, 0, "completed", nullptr}, s, system_clock::now());
    ASSERT_EQ(own.size(), 1u);
    EXPECT_EQ(own[0], "no new lead of the 5 in the audience was enrolled: each is already this campaign's; the "
                      "campaign is completed");
    auto others = orch::engine::apply_warnings(c, {5, 0, 5, "completed", nullptr}, s, system_clock::now());
    ASSERT_EQ(others.size(), 1u);
    EXPECT_EQ(others[0], "no new lead of the 5 in the audience was enrolled: each is owned by another campaign or on "
                         "the do-not-contact list; the campaign is completed");
    auto mixed = orch::engine::apply_warnings(c, {5, 0, 2, "completed", nullptr}, s, system_clock::now());
    ASSERT_EQ(mixed.size(), 1u);
    EXPECT_EQ(mixed[0], "no new lead of the 5 in the audience was enrolled: 3 already this campaign's, the other 2 "
                        "owned by another campaign or on the do-not-contact list; the campaign is completed");
}

// The audience search's charge used up today's day cap: said, with the way to raise it.
TEST(LifecycleWarnings, AnAudienceSearchThatUsesUpTheDayCap) {
    auto c = campaign_of("  - {id: invite, kind: invite}\n");
    orch::engine::settings s;
    s.pacing = false;
    s.ramp_up = false;
    orch::engine::apply_facts facts{10, 10, 0, "active", nullptr};
    facts.search_charged = 3;
    facts.caps.day_cap = 2;
    facts.caps.day_cap_left = 0;
    facts.caps.day_cap_used = 3;
    auto w = orch::engine::apply_warnings(c, facts, s, system_clock::now());
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0], "the audience search cost 3 credits, which uses up today's day cap of 2 and goes 1 past it "
                    "(budget_per_day_credits, UTC day): no lead makes a billed call before the next UTC day, unless the cap is raised "
                    "(`budget set w --per-day N`)");
    // A search sent again after the day had used the cap up says so.
    facts.caps.day_cap_used = 10;
    w = orch::engine::apply_warnings(c, facts, s, system_clock::now());
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0], "the audience search cost 3 credits, past today's day cap of 2, which was used up already (10 "
                    "used today, the search included) (budget_per_day_credits, UTC day): no lead makes a billed call "
                    "before the next UTC day, unless the cap is raised (`budget set w --per-day N`)");
    // Pacing's first invitation is said from the next UTC day on, not now.
    s.pacing = true;
    w = orch::engine::apply_warnings(c, facts, s, system_clock::now());
    ASSERT_EQ(w.size(), 2u);
    EXPECT_NE(w[0].find(", once the day cap allows (below)"), std::string::npos) << w[0];
    EXPECT_EQ(w[0].find("(now)"), std::string::npos) << w[0];
    s.pacing = false;
    facts.caps.day_cap_used = 3;
    facts.caps.day_cap_left = 1;
    EXPECT_TRUE(orch::engine::apply_warnings(c, facts, s, system_clock::now()).empty());
    facts.caps.day_cap.reset();
    facts.caps.day_cap_left = 0;
    EXPECT_TRUE(orch::engine::apply_warnings(c, facts, s, system_clock::now()).empty());
}

TEST(LifecycleWarnings, AFirstSendToPeopleWhoAreNotConnections) {
    auto c = campaign_of("  - {id: wait, kind: delay, duration: 1h}\n  - {id: hi, kind: send, message_text: hi}\n");
    orch::engine::settings s;
    s.pacing = false;
    s.ramp_up = false;
    std::vector<orch::outreach::person_hit> hits(3);
    hits[0].member_distance = 1;
    hits[1].invitation_state = "connected";
    hits[2].member_distance = 2;
    auto w = orch::engine::apply_warnings(c, {3, 3, 0, "active", &hits}, s, system_clock::now());
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0], "the first step ('hi') sends a message, but 1 of the 3 people found are not connections "
                    "(network degree, invitation state): a message to them fails; start with invite (or "
                    "check_invitation) to connect first");
    hits[2].member_distance = 1;
    EXPECT_TRUE(orch::engine::apply_warnings(c, {3, 3, 0, "active", &hits}, s, system_clock::now()).empty());
    // A file does not say who is a connection.
    auto file = orch::engine::apply_warnings(c, {3, 3, 0, "active", nullptr}, s, system_clock::now());
    ASSERT_EQ(file.size(), 1u);
    EXPECT_TRUE(contains(file[0], "the audience file does not say who is a connection")) << file[0];
}

TEST(LifecycleWarnings, PacingAndRampUpSayTheQuotaAndWhenTheFirstInvitationsGoOut) {
    // start_at on a Saturday at 08:00 UTC: the first working start after it is Monday 09:00 Berlin
    // (08:00 UTC in winter).
    auto c = campaign_of("  - {id: invite, kind: invite}\n", "start_at: 2030-01-05T08:00:00Z\n");
    orch::engine::settings s;  // defaults: ramp-up and pacing on, 80 invitations a day
    auto now = sys_days{2030y / January / 1} + 12h;
    auto w = orch::engine::apply_warnings(c, {5, 5, 0, "active", nullptr}, s, now);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0], "pacing and ramp-up are on: a sender's first day of invite calls through the orchestrator "
                    "allows at most 20, then 10 more each day up to 80 a day, spread over the working hours "
                    "09:00-17:00 Europe/Berlin (about one every 24 min). The first invitations may go out from "
                    "2030-01-07T08:00:00Z (in 5 days), after start_at, as the working hours allow; a sender that "
                    "has used up today's quota waits for its next day (`accounts list` shows what each has left "
                    "today). Settings: ramp_up, pacing, invite_per_day");
    // The campaign's own limit tightens the day quota; without ramp-up, pacing alone.
    auto tight = campaign_of("  - {id: invite, kind: invite}\n", "limits: {invite: {per_day: 8}}\n");
    s.ramp_up = false;
    auto p = orch::engine::apply_warnings(tight, {5, 5, 0, "active", nullptr}, s, now);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_TRUE(contains(p[0], "pacing is on: at most 8 invite calls a day per sender, spread over the working hours "
                               "09:00-17:00 Europe/Berlin (about one every 60 min). The first invitations may go out "
                               "from 2030-01-01T12:00:00Z (now)"))
        << p[0];
    // An opening delay holds the first invitations for its duration (the warning said "now").
    auto delayed = campaign_of("  - {id: pause, kind: delay, duration: 2h}\n  - {id: invite, kind: invite}\n",
                               "limits: {invite: {per_day: 8}}\n");
    auto d = orch::engine::apply_warnings(delayed, {5, 5, 0, "active", nullptr}, s, now);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_TRUE(contains(d[0], "The first invitations may go out from 2030-01-01T14:00:00Z (in ")) << d[0];
    EXPECT_TRUE(contains(d[0], "), after the opening delay, as the working hours allow")) << d[0];
    s.pacing = false;
    EXPECT_TRUE(orch::engine::apply_warnings(tight, {5, 5, 0, "active", nullptr}, s, now).empty());
    // No day quota at all: nothing is held back, nothing to say.
    orch::engine::settings unlimited;
    unlimited.invite_per_day = -1;
    EXPECT_TRUE(orch::engine::apply_warnings(c, {5, 5, 0, "active", nullptr}, unlimited, now).empty());
    // Ramp-up lowers the account's own quota only: with none, a campaign cap is all there is, and
    // no first-day limit is claimed (the demo's settings, whose first day invites 199).
    orch::engine::settings capped_only;
    capped_only.invite_per_day = -1;
    capped_only.pacing = false;
    auto capped = campaign_of("  - {id: invite, kind: invite}\n", "limits: {invite: {per_day: 100}}\n");
    EXPECT_TRUE(orch::engine::apply_warnings(capped, {5, 5, 0, "active", nullptr}, capped_only, now).empty());
    capped_only.pacing = true;
    auto paced = orch::engine::apply_warnings(capped, {5, 5, 0, "active", nullptr}, capped_only, now);
    ASSERT_EQ(paced.size(), 1u);
    EXPECT_TRUE(contains(paced[0], "pacing is on: at most 100 invite calls a day per sender")) << paced[0];
    // Settings that are off are not named.
    EXPECT_TRUE(contains(paced[0], ". Settings: pacing, invite_per_day")) << paced[0];
}

// How long the new leads' invitations take is said, as `campaign estimate` counts it: a trial's
// 500 leads on 2 new senders read only "at most 20 on the first day", not that it meant weeks.
TEST(LifecycleWarnings, PacingSaysHowManyWorkingDaysTheNewLeadsTake) {
    auto c = campaign_of("  - {id: invite, kind: invite}\n", "start_at: 2030-01-07T08:00:00Z\n");
    orch::engine::settings s;  // ramp-up 20 + 10 a day up to 80 a day, 200 a week
    const auto now = sys_days{2030y / January / 1} + 12h;
    orch::engine::apply_facts facts{500, 500, 0, "active", nullptr, true, nullptr, 2};
    auto w = orch::engine::apply_warnings(c, facts, s, now);
    ASSERT_EQ(w.size(), 1u);
    // 250 invitations a sender: the week quota (200) is the bottleneck past the ramp, and the
    // ramp (20, 30, 40, 50, 60 from Monday) holds the first week to 200 too.
    orch::campaigns::estimate_input in;
    in.leads = 500;
    in.senders = 2;
    in.per_day["invite"] = 80;
    in.per_week["invite"] = 200;
    in.ramp["invite"] = {80, 20, 10};
    const auto r = orch::campaigns::estimate(c, in);
    ASSERT_EQ(r.actions.size(), 1u);
    const double ramped = r.actions[0].working_days_new_accounts;
    const auto days = static_cast<std::int64_t>(std::ceil(ramped));
    ASSERT_GT(days, 5);
    const auto past = static_cast<std::int64_t>(std::ceil(r.actions[0].working_days));
    EXPECT_TRUE(contains(w[0], ". At these quotas, the 500 new leads' invite calls take about " + std::to_string(days) +
                                   " working days over 2 senders (to " +
                                   orch::campaigns::finish_date(c.schedule, *c.start_at, ramped, std::chrono::seconds(0)) +
                                   (past < days ? "; " + std::to_string(past) + " for senders past their ramp-up"
                                                : std::string()) +
                                   "; `campaign estimate` gives the whole forecast). Settings: ramp_up, pacing, "
                                   "invite_per_day"))
        << w[0];
    // A day's work or less: nothing more to say.
    facts.audience = facts.enrolled = 10;
    auto few = orch::engine::apply_warnings(c, facts, s, now);
    ASSERT_EQ(few.size(), 1u);
    EXPECT_FALSE(contains(few[0], "At these quotas")) << few[0];
    // A sender with a quota of its own of 5 a day is the slowest: its half of 40 leads takes 4 days.
    facts.audience = facts.enrolled = 40;
    s.ramp_up = false;
    orch::engine::quota_overrides q{};
    q[static_cast<std::size_t>(orch::limits::action::invite)].per_day = 5;
    std::vector<orch::engine::account_overrides> own = {{"acc-1", q}};
    facts.own_quotas = &own;
    auto slow = orch::engine::apply_warnings(c, facts, s, now);
    ASSERT_EQ(slow.size(), 1u);
    EXPECT_TRUE(contains(slow[0], "the 40 new leads' invite calls take about 4 working days over 2 senders (to "
                                  "2030-01-10; `campaign estimate`"))
        << slow[0];
}

// What the senders have left today is said: a trial's apply said "the first invitations may go out
// from <in an hour>" while both senders had used up today's quota, and counted today as a working
// day of the estimate.
TEST(LifecycleWarnings, SendersThatUsedUpTodaysQuotaDelayTheFirstInvitations) {
    auto c = campaign_of("  - {id: invite, kind: invite}\n", "");  // 09:00-17:00 Europe/Berlin, weekdays
    orch::engine::settings s;
    s.ramp_up = false;
    const auto now = sys_days{2030y / January / 1} + 10h;  // a Tuesday, 11:00 in Berlin
    orch::engine::apply_facts facts{5, 5, 0, "active", nullptr, true, nullptr, 2};
    facts.today = orch::engine::apply_facts::quota_today{2, 2, sys_days{2030y / January / 2}};
    auto all = orch::engine::apply_warnings(c, facts, s, now);
    ASSERT_EQ(all.size(), 1u);
    EXPECT_TRUE(contains(all[0], "The first invitations may go out from 2030-01-02T08:00:00Z (in 22 h 0 min), once the "
                                 "first sender's day quota starts again (each of the 2 has used up today's invite "
                                 "quota), as the working hours allow. "))
        << all[0];
    EXPECT_FALSE(contains(all[0], "waits for its next day")) << all[0];
    facts.today = orch::engine::apply_facts::quota_today{2, 1, sys_days{2030y / January / 2}};
    auto some = orch::engine::apply_warnings(c, facts, s, now);
    ASSERT_EQ(some.size(), 1u);
    EXPECT_TRUE(contains(some[0], "may go out from 2030-01-01T10:00:00Z (now), as the working hours allow; 1 of the 2 "
                                  "senders has used up today's invite quota and waits for its next day (`accounts "
                                  "list`)"))
        << some[0];
    facts.today = orch::engine::apply_facts::quota_today{2, 0, {}};
    auto none = orch::engine::apply_warnings(c, facts, s, now);
    ASSERT_EQ(none.size(), 1u);
    EXPECT_TRUE(contains(none[0], "(now), as the working hours allow. Settings: pacing, invite_per_day")) << none[0];
}

// Senders that Redis shows past their ramp-up are not held back by it: with pacing off, nothing
// slows their first invitations, and the apply says nothing of a ramp; one still ramping keeps
// the warning.
TEST(LifecycleWarnings, SendersPastTheirRampUpAreNotWarnedOfIt) {
    auto c = campaign_of("  - {id: invite, kind: invite}\n", "");
    orch::engine::settings s;  // defaults: ramp-up on, 80 invitations a day
    s.pacing = false;
    const auto now = sys_days{2030y / January / 1} + 10h;
    orch::engine::apply_facts facts{500, 500, 0, "active", nullptr, true, nullptr, 2};
    const auto unknown = orch::engine::apply_warnings(c, facts, s, now);
    ASSERT_EQ(unknown.size(), 1u);
    EXPECT_TRUE(contains(unknown[0], "ramp-up is on: ")) << unknown[0];
    facts.today = orch::engine::apply_facts::quota_today{2, 0, {}, 1};
    const auto one_ramping = orch::engine::apply_warnings(c, facts, s, now);
    ASSERT_EQ(one_ramping.size(), 1u);
    EXPECT_TRUE(contains(one_ramping[0], "ramp-up is on: a sender's first day of invite calls through the "
                                         "orchestrator allows at most 20, then 10 more each day up to 80 a day (1 of "
                                         "the 2 senders is new or still ramping up)."))
        << one_ramping[0];
    facts.today = orch::engine::apply_facts::quota_today{2, 0, {}, 2};
    const auto both_ramping = orch::engine::apply_warnings(c, facts, s, now);
    ASSERT_EQ(both_ramping.size(), 1u);
    EXPECT_TRUE(contains(both_ramping[0], "up to 80 a day. The first")) << both_ramping[0];
    facts.today = orch::engine::apply_facts::quota_today{2, 0, {}, 0};
    const auto past = orch::engine::apply_warnings(c, facts, s, now);
    EXPECT_TRUE(past.empty()) << past.front();
}

// A sender's own day quota (`accounts limits`) is said: a trial read "up to 80 a day" for an account
// set to 5. Some senders with their own: the default, and those listed; every sender with its own:
// the largest, or the one they share.
TEST(LifecycleWarnings, TheSendersOwnDayQuotasAreSaid) {
    auto c = campaign_of("  - {id: invite, kind: invite}\n", "");
    orch::engine::settings s;  // defaults: ramp-up and pacing on, 80 invitations a day
    s.ramp_up = false;
    const auto now = sys_days{2030y / January / 1} + 12h;
    using orch::engine::account_overrides;
    auto with = [](std::int64_t invites_a_day, std::optional<std::int64_t> sends_a_day = std::nullopt) {
        orch::engine::quota_overrides q{};
        q[static_cast<std::size_t>(orch::limits::action::invite)].per_day = invites_a_day;
        q[static_cast<std::size_t>(orch::limits::action::send)].per_day = sends_a_day;
        return q;
    };
    std::vector<account_overrides> own = {{"acc-1", with(5)}};
    auto some = orch::engine::apply_warnings(c, {5, 5, 0, "active", nullptr, true, &own, 3}, s, now);
    ASSERT_EQ(some.size(), 1u);
    EXPECT_TRUE(contains(some[0], "pacing is on: at most 80 invite calls a day per sender (senders with a day quota "
                                  "of their own, `accounts limits`: acc-1 5), spread over"))
        << some[0];
    own.push_back({"acc-2", with(40)});
    own.push_back({"acc-3", with(40)});
    auto all = orch::engine::apply_warnings(c, {5, 5, 0, "active", nullptr, true, &own, 3}, s, now);
    ASSERT_EQ(all.size(), 1u);
    EXPECT_TRUE(contains(all[0], "pacing is on: at most 40 invite calls a day per sender (the largest of the "
                                 "senders' own day quotas, `accounts limits`: acc-1 5, acc-2 40, acc-3 40), spread "
                                 "over the working hours 09:00-17:00 Europe/Berlin (about one every 12 min at 40 a day)"))
        << all[0];
    // The same quota for all; a campaign cap below it is what they may make.
    own = {{"acc-1", with(5)}, {"acc-2", with(5)}};
    auto alike = orch::engine::apply_warnings(c, {5, 5, 0, "active", nullptr, true, &own, 2}, s, now);
    ASSERT_EQ(alike.size(), 1u);
    EXPECT_TRUE(contains(alike[0], "at most 5 invite calls a day per sender (the senders' own day quota, `accounts "
                                   "limits`), spread"))
        << alike[0];
    auto capped = campaign_of("  - {id: invite, kind: invite}\n", "limits: {invite: {per_day: 3}}\n");
    auto under_cap = orch::engine::apply_warnings(capped, {5, 5, 0, "active", nullptr, true, &own, 2}, s, now);
    ASSERT_EQ(under_cap.size(), 1u);
    EXPECT_TRUE(contains(under_cap[0], "at most 3 invite calls a day per sender, spread")) << under_cap[0];
    // Only another action's own quota: the default is said, nothing listed.
    own = {{"acc-1", orch::engine::quota_overrides{}}};
    own[0].quotas[static_cast<std::size_t>(orch::limits::action::send)].per_day = 7;
    auto other = orch::engine::apply_warnings(c, {5, 5, 0, "active", nullptr, true, &own, 1}, s, now);
    ASSERT_EQ(other.size(), 1u);
    EXPECT_TRUE(contains(other[0], "at most 80 invite calls a day per sender, spread")) << other[0];
}

// ---- on Postgres ----

class LifecyclePg : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        env_ = std::make_unique<orchestrator_env>(1);  // no sandbox: file audiences call no API
        dir_ = std::filesystem::temp_directory_path() /
               ("lifecycle_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec("INSERT INTO accounts (account_id) VALUES ('acc-1')");
        tx.commit();
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

    // Writes the campaign file (and its audience of `people`, profile URLs p1..pN or as named)
    // and returns its path.
    std::string write(const std::string& name, const std::vector<std::string>& people, const std::string& extra = "",
                      const std::string& steps = "  - {id: invite, kind: invite}\n") {
        std::string csv = "profile_url,first_name\n";
        for (const auto& p : people) {
            csv += "https://network.example/in/" + p + ",P\n";
        }
        std::ofstream(dir_ / (name + ".csv")) << csv;
        auto file = dir_ / (name + ".yaml");
        std::ofstream(file) << "name: " << name << "\naccounts: acc-1\naudience:\n  file: " << name
                            << ".csv\nschedule:\n  time_zone: UTC\nbudget_credits: 100\n"
                            << extra << "steps:\n"
                            << steps;
        return file.string();
    }

    std::string state(const std::string& name) {
        return env_->scalar("SELECT state FROM campaigns WHERE name = '" + name + "'");
    }

    // Ends the enrollment of `person` (done) in its own transaction.
    void finish(const std::string& person) {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        finish_in(tx, person);
        tx.commit();
    }
    static void finish_in(pqxx::work& tx, const std::string& person) {
        auto r = tx.exec("UPDATE enrollments e SET status = 'done', finished_at = now() FROM leads l "
                         "WHERE l.lead_id = e.lead_id AND l.canonical_url = 'network.example/in/" + person + "'");
        ASSERT_EQ(r.affected_rows(), 1u) << person;
    }

    std::unique_ptr<orchestrator_env> env_;
    std::filesystem::path dir_;
};

TEST_F(LifecyclePg, ACampaignWhoseLeadsAllFinishIsCompletedAndNewLeadsMakeItActiveAgain) {
    auto applied = env_->run({"campaign", "apply", write("c", {"p1", "p2"})});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    EXPECT_EQ(state("c"), "active");
    finish("p1");
    EXPECT_EQ(state("c"), "active");  // p2 is still live
    finish("p2");
    EXPECT_EQ(state("c"), "completed");
    auto shown = json::parse(env_->run({"campaign", "show", "c", "--format", "json"}).output, nullptr, false);
    ASSERT_TRUE(shown.is_object());
    EXPECT_EQ(shown["summary"]["state"], "completed");
    EXPECT_EQ(shown["summary"]["live"], 0);
    EXPECT_EQ(shown["steps"][0]["leads"]["done"], 2);
    // Leads the machine finished have no step: they show on a row of their own, after the steps.
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec("UPDATE enrollments SET step = '' WHERE status = 'done'");
        // and one at a step only an older version had
        tx.exec("UPDATE enrollments SET step = 'retired' WHERE enrollment_id = (SELECT min(enrollment_id) FROM enrollments)");
        tx.commit();
    }
    auto ended = json::parse(env_->run({"campaign", "show", "c", "--format", "json"}).output, nullptr, false);
    ASSERT_TRUE(ended.is_object());
    ASSERT_GE(ended["steps"].size(), 2u);
    EXPECT_EQ(ended["steps"][0]["leads"]["done"], 0);
    const auto& past_end = ended["steps"][ended["steps"].size() - 2];
    EXPECT_EQ(past_end["id"], "");
    EXPECT_EQ(past_end["leads"]["done"], 1);
    EXPECT_EQ(ended["steps"].back()["id"], "retired");
    EXPECT_EQ(ended["steps"].back()["leads"]["done"], 1);
    auto table = env_->run({"campaign", "show", "c", "--section", "steps"});
    EXPECT_NE(table.output.find("(ended)"), std::string::npos) << table.output;
    EXPECT_NE(table.output.find("retired (older version)"), std::string::npos) << table.output;

    // The same audience again: nothing new, it stays completed.
    auto same = env_->run({"campaign", "apply", write("c", {"p1", "p2"})});
    ASSERT_EQ(same.exit_code, 0) << same.output;
    EXPECT_EQ(state("c"), "completed");
    EXPECT_TRUE(contains(same.output, "campaign 'c' is completed")) << same.output;
    // A new lead: active again, and the new lead is live.
    auto more = env_->run({"campaign", "apply", write("c", {"p1", "p2", "p3"})});
    ASSERT_EQ(more.exit_code, 0) << more.output;
    EXPECT_TRUE(contains(more.output, "1 enrolled")) << more.output;
    EXPECT_EQ(state("c"), "active");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE status = 'ready'"), "1");
    finish("p3");
    EXPECT_EQ(state("c"), "completed");
    // A finished lead made live again (a lead operation) reopens it too.
    {
        pqxx::connection conn(env_->database_url());
        pqxx::work tx(conn);
        tx.exec("UPDATE enrollments e SET status = 'ready', finished_at = NULL FROM leads l "
                "WHERE l.lead_id = e.lead_id AND l.canonical_url = 'network.example/in/p3'");
        tx.commit();
    }
    EXPECT_EQ(state("c"), "active");
}

TEST_F(LifecyclePg, ACreditsReadCompletesAnActiveCampaignTheTriggerMissed) {
    ASSERT_EQ(env_->run({"campaign", "apply", write("m", {"p1"})}).exit_code, 0);
    ASSERT_EQ(env_->run({"campaign", "apply", write("busy", {"b1"})}).exit_code, 0);
    finish("p1");
    ASSERT_EQ(state("m"), "completed");
    {
        // As if the trigger had missed it (see migration 0017): active with nothing live.
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec("UPDATE campaigns SET state = 'active' WHERE name = 'm'");
        tx.commit();
    }
    orch::engine::store db(env_->database_url());
    auto read = db.record_credit_read(100);
    EXPECT_EQ(read.completed, 1);
    EXPECT_EQ(state("m"), "completed");
    EXPECT_EQ(state("busy"), "active");  // its lead is live
}

// The trigger pairs each row's old and new version (migration 0024 groups them by enrollment_id
// instead of joining the transition tables): one statement over the leads of three campaigns
// completes the one whose last live lead it ends, neither the one whose live lead stays live nor
// the active one whose lead was already finished, and reopens the completed one whose lead it
// makes live again.
TEST_F(LifecyclePg, OneStatementOverSeveralCampaignsCompletesAndReopensOnlyThoseItsRowsChanged) {
    ASSERT_EQ(env_->run({"campaign", "apply", write("ends", {"e1", "e2"})}).exit_code, 0);
    ASSERT_EQ(env_->run({"campaign", "apply", write("stays", {"s1", "s2"})}).exit_code, 0);
    ASSERT_EQ(env_->run({"campaign", "apply", write("quiet", {"q1"})}).exit_code, 0);
    ASSERT_EQ(env_->run({"campaign", "apply", write("back", {"b1"})}).exit_code, 0);
    finish("q1");
    finish("b1");
    ASSERT_EQ(state("quiet"), "completed");
    ASSERT_EQ(state("back"), "completed");
    {
        // As if the trigger had missed it: active, its only lead finished.
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        tx.exec("UPDATE campaigns SET state = 'active' WHERE name = 'quiet'");
        tx.commit();
    }
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        // A small statement first, so that the session's plan of the trigger's queries is made
        // on one row (the estimate that made the old join a nested loop).
        finish_in(tx, "e1");
        auto r = tx.exec(
            "UPDATE enrollments e SET "
            "  status = CASE l.canonical_url WHEN 'network.example/in/b1' THEN 'ready'::enrollment_status "
            "                                WHEN 'network.example/in/s1' THEN 'ready'::enrollment_status "
            "                                ELSE 'done'::enrollment_status END, "
            "  finished_at = CASE WHEN l.canonical_url IN ('network.example/in/b1', 'network.example/in/s1') "
            "                     THEN NULL ELSE now() END "
            "FROM leads l WHERE l.lead_id = e.lead_id AND l.canonical_url IN "
            "('network.example/in/e2', 'network.example/in/s1', 'network.example/in/q1', 'network.example/in/b1')");
        ASSERT_EQ(r.affected_rows(), 4u);
        tx.commit();
    }
    EXPECT_EQ(state("ends"), "completed");  // e1 then e2: its last live lead ended
    EXPECT_EQ(state("stays"), "active");    // s1 stayed live (ready -> ready), s2 untouched
    EXPECT_EQ(state("quiet"), "active");    // q1 went done -> done: nothing of it ended here
    EXPECT_EQ(state("back"), "active");     // b1 went done -> ready
}

TEST_F(LifecyclePg, PausedAndCancelledCampaignsKeepTheirState) {
    ASSERT_EQ(env_->run({"campaign", "apply", write("p", {"p1"})}).exit_code, 0);
    ASSERT_EQ(env_->run({"campaign", "pause", "p"}).exit_code, 0);
    finish("p1");
    EXPECT_EQ(state("p"), "paused");
    ASSERT_EQ(env_->run({"campaign", "apply", write("x", {"x1"})}).exit_code, 0);
    ASSERT_EQ(env_->run({"campaign", "cancel", "x"}).exit_code, 0);
    EXPECT_EQ(state("x"), "cancelled");
}

// A campaign the engine paused (the key's credits here) that an operator then pauses stays paused
// when the credits return: the operator's pause is kept (a trial: "it already was; nothing
// changed", and the next top-up resumed it).
TEST_F(LifecyclePg, AnOperatorsPauseOfACampaignPausedForCreditsOutlastsTheTopUp) {
    ASSERT_EQ(env_->run({"campaign", "apply", write("c", {"c1"})}).exit_code, 0);
    env_->scalar("UPDATE campaigns SET state = 'paused', pause_code = 'credits', pause_reason = 'credits: the key has "
                 "none' WHERE name = 'c' RETURNING 1");
    auto paused = env_->run({"campaign", "pause", "c"});
    ASSERT_EQ(paused.exit_code, 0) << paused.output;
    EXPECT_TRUE(contains(paused.output, "campaign 'c' is paused\nnote: it was paused (credits: the key has none); it is "
                                        "now paused by an operator too, and only `campaign resume` resumes it"))
        << paused.output;
    EXPECT_EQ(env_->scalar("SELECT pause_code || ' ' || pause_reason FROM campaigns WHERE name = 'c'"),
              "operator paused by an operator");
    // What serve's balance read runs once the key has credits again.
    std::string resume(orch::schema::query("credits/resume"));
    resume = resume.substr(resume.find("UPDATE"));
    resume = resume.substr(0, resume.find(';'));
    EXPECT_EQ(env_->scalar("WITH resumed AS (" + resume + ") SELECT count(*) FROM resumed"), "0");
    EXPECT_EQ(state("c"), "paused");
    // An operator's pause paused again changes nothing.
    auto again = env_->run({"campaign", "pause", "c"});
    EXPECT_TRUE(contains(again.output, "(it already was; nothing changed)")) << again.output;
    ASSERT_EQ(env_->run({"campaign", "resume", "c"}).exit_code, 0);
    EXPECT_EQ(state("c"), "active");
}

// A cap changed while the campaign was paused: its wake-up leaves the parked leads alone, so the
// resume makes the leads that waited for a budget cap due now (the ledger decides again); other
// waits keep their time. Before, a trial's leads kept waiting for a removed cap until midnight UTC.
TEST_F(LifecyclePg, AResumeMakesTheLeadsWaitingForABudgetCapDueNow) {
    ASSERT_EQ(env_->run({"campaign", "apply", write("w", {"p1", "p2"})}).exit_code, 0);
    ASSERT_EQ(env_->run({"campaign", "pause", "w"}).exit_code, 0);
    auto wait_as = [&](const std::string& person, const std::string& code) {
        env_->scalar("UPDATE enrollments e SET wait_code = '" + code + "', next_run_at = now() + interval '10 hours' "
                     "FROM leads l WHERE l.lead_id = e.lead_id AND l.canonical_url = 'network.example/in/" + person +
                     "' RETURNING 1");
    };
    wait_as("p1", "day_budget");
    wait_as("p2", "schedule");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE due_at = 'infinity'"), "2");  // parked
    ASSERT_EQ(env_->run({"campaign", "resume", "w"}).exit_code, 0);
    EXPECT_EQ(env_->scalar("SELECT string_agg(wait_code || ':' || (next_run_at <= now()), ',' ORDER BY wait_code) "
                           "FROM enrollments"),
              "day_budget:true,schedule:false");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE due_at <= now()"), "2");
}

// A raised cap or quota wakes the leads waiting for it; a call to check (its outcome lost) among
// them is due a second before the others, so that the claim, which takes due rows in due_at order,
// checks the calls already made before it makes new ones with a small raise. Before, all were due
// at the same instant and new sends took a small raise from the waiting checks (a trial's).
TEST_F(LifecyclePg, TheWakeUpOfACapOrQuotaPutsTheCallsToCheckFirst) {
    ASSERT_EQ(env_->run({"campaign", "apply", write("first", {"p1", "p2", "p3"})}).exit_code, 0);
    auto wait_as = [&](const std::string& person, const std::string& status, const std::string& code) {
        env_->scalar("UPDATE enrollments e SET status = '" + status + "', reconcile = " +
                     (status == "calling" ? "true" : "false") + ", wait_code = '" + code +
                     "', next_run_at = now() + interval '10 hours', due_at = now() + interval '10 hours' "
                     "FROM leads l WHERE l.lead_id = e.lead_id AND l.canonical_url = 'network.example/in/" + person +
                     "' RETURNING 1");
    };
    const std::string order = "SELECT string_agg(l.canonical_url, ' ' ORDER BY e.due_at, l.canonical_url) "
                              "FROM enrollments e JOIN leads l USING (lead_id) WHERE e.due_at <= now()";
    const auto campaign = std::stoll(env_->scalar("SELECT campaign_id FROM campaigns WHERE name = 'first'"));
    const auto account = env_->scalar("SELECT min(account_id) FROM enrollments");
    pqxx::connection c(env_->database_url());
    for (const auto& [query, code] : {std::pair<std::string, std::string>{"engine/wake_budget_waits", "day_budget"},
                                      {"accounts/wake_quota_waiters", "campaign_quota"}}) {
        wait_as("p1", "ready", code);
        wait_as("p2", "calling", code);
        wait_as("p3", "ready", code);
        {
            pqxx::work tx(c);
            const auto woken = query == "engine/wake_budget_waits"
                                   ? tx.exec_params(std::string(orch::schema::query(query)), campaign)
                                   : tx.exec_params(std::string(orch::schema::query(query)), account);
            EXPECT_EQ(woken.size(), 3u) << query;
            tx.commit();
        }
        EXPECT_EQ(env_->scalar(order),
                  "network.example/in/p2 network.example/in/p1 network.example/in/p3")
            << query;
        EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE next_run_at <= now()"), "3") << query;
    }
}

TEST_F(LifecyclePg, TheLastTwoLeadsEndingInConcurrentTransactionsStillCompleteIt) {
    ASSERT_EQ(env_->run({"campaign", "apply", write("r", {"p1", "p2"})}).exit_code, 0);
    pqxx::connection c1(env_->database_url());
    pqxx::work first(c1);
    finish_in(first, "p1");  // sees p2 live: does not complete; holds the lifecycle lock
    std::atomic<bool> done{false};
    std::thread second([&] {
        pqxx::connection c2(env_->database_url());
        pqxx::work tx(c2);
        finish_in(tx, "p2");  // waits for `first`, then sees p1 done
        tx.commit();
        done = true;
    });
    std::this_thread::sleep_for(milliseconds(300));
    EXPECT_FALSE(done.load());  // it waits for the lock `first` holds
    first.commit();
    second.join();
    EXPECT_TRUE(done.load());
    EXPECT_EQ(state("r"), "completed");
}

TEST_F(LifecyclePg, NoLeadOfACampaignIsClaimedBeforeItsStartAt) {
    const auto start = floor<seconds>(system_clock::now()) + hours(48);
    const std::string start_text = orch::campaigns::format_instant(start);
    ASSERT_EQ(env_->run({"campaign", "apply", write("later", {"p1", "p2"}, "start_at: " + start_text + "\n")}).exit_code, 0);
    ASSERT_EQ(env_->run({"campaign", "apply", write("now", {"n1"})}).exit_code, 0);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments e JOIN campaigns c USING (campaign_id) WHERE c.name = "
                           "'later' AND e.next_run_at = '" + start_text + "' AND e.due_at = '" + start_text + "'"),
              "2");
    EXPECT_EQ(env_->scalar("SELECT to_char(start_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM "
                           "campaigns WHERE name = 'later'"),
              start_text);
    auto shown = json::parse(env_->run({"campaign", "show", "later", "--format", "json"}).output, nullptr, false);
    ASSERT_TRUE(shown.is_object());
    EXPECT_EQ(shown["summary"]["start_at"], start_text);
    // The worker's claim (engine/claim_pick, engine/claim_due) picks the other campaign's lead only.
    pqxx::connection c(env_->database_url());
    pqxx::work tx(c);
    std::vector<std::int64_t> ids;
    for (const auto& r : tx.exec_params(std::string(orch::schema::query("engine/claim_pick")), 100)) {
        ids.push_back(r[0].as<std::int64_t>());
    }
    ASSERT_EQ(ids.size(), 1u);
    std::string arr = "{" + std::to_string(ids[0]) + "}";
    auto claimed = tx.exec_params(std::string(orch::schema::query("engine/claim_due")), arr);
    ASSERT_EQ(claimed.size(), 1u);
    EXPECT_EQ(claimed[0][1].as<std::int64_t>(),
              std::stoll(env_->scalar("SELECT campaign_id FROM campaigns WHERE name = 'now'")));
    tx.abort();

    // An operator's retry or skip does not make a lead due before start_at either.
    const auto p1 = env_->scalar("SELECT lead_id FROM leads WHERE profile_url LIKE '%/p1'");
    const auto p2 = env_->scalar("SELECT lead_id FROM leads WHERE profile_url LIKE '%/p2'");
    auto retried = env_->run({"leads", "retry", "later", p1});
    ASSERT_EQ(retried.exit_code, 0) << retried.output;
    auto skipped = env_->run({"leads", "skip", "later", p2, "--to", "invite"});
    ASSERT_EQ(skipped.exit_code, 0) << skipped.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments e JOIN campaigns c USING (campaign_id) WHERE c.name = "
                           "'later' AND e.next_run_at = '" + start_text + "' AND e.due_at = '" + start_text + "'"),
              "2");

    // A new version with a later start_at moves the leads already enrolled.
    const std::string later_text = orch::campaigns::format_instant(start + hours(24));
    ASSERT_EQ(env_->run({"campaign", "apply", write("later", {"p1", "p2"}, "start_at: " + later_text + "\n")}).exit_code, 0);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE next_run_at = '" + later_text + "'"), "2");

    // An earlier start_at releases them to it; a version without one, to now (they waited for the
    // old start_at: the README's promise was only that a later one moves them).
    const std::string earlier_text = orch::campaigns::format_instant(start + hours(2));
    ASSERT_EQ(env_->run({"campaign", "apply", write("later", {"p1", "p2"}, "start_at: " + earlier_text + "\n")}).exit_code, 0);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE next_run_at = '" + earlier_text + "' AND due_at = '" +
                           earlier_text + "'"),
              "2");
    // p2 was held while not yet worked (its next run is the old start_at) and has been worked
    // since (a call made): it is no longer released as a lead at the entry step, and it keeps the
    // start_at it waits for rather than be released early (a wait's timeout, a delay).
    env_->scalar("INSERT INTO step_attempts (enrollment_id, step, call, attempt, outcome, worker, finished_at) "
                 "SELECT e.enrollment_id, e.step, 'invite', 1, 'transient', 'w', now() FROM enrollments e "
                 "JOIN leads l USING (lead_id) WHERE l.profile_url LIKE '%/p2' RETURNING 1");
    const auto before = floor<seconds>(system_clock::now());
    ASSERT_EQ(env_->run({"campaign", "apply", write("later", {"p1", "p2"})}).exit_code, 0);
    EXPECT_EQ(env_->scalar("SELECT string_agg(l.profile_url, ',') FROM enrollments e JOIN campaigns c USING "
                           "(campaign_id) JOIN leads l USING (lead_id) WHERE c.name = 'later' AND e.next_run_at = "
                           "e.due_at AND e.next_run_at BETWEEN '" + orch::campaigns::format_instant(before) +
                           "' AND now()"),
              "https://network.example/in/p1");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments e JOIN leads l USING (lead_id) WHERE l.profile_url LIKE "
                           "'%/p2' AND e.next_run_at = '" + earlier_text + "'"),
              "1");
    EXPECT_EQ(env_->scalar("SELECT start_at IS NULL FROM campaigns WHERE name = 'later'"), "t");
}

// A lead past its first call keeps its own next run under a later start_at (only its due time
// waits), so an earlier start_at, or none, gives it back; and whatever makes a row of a campaign
// not started yet due now (here a restart's gate wake-up) is held by the claim until start_at.
TEST_F(LifecyclePg, ALaterStartAtHoldsMidSequenceLeadsByTheirDueTimeAndTheClaimHoldsWakeUps) {
    ASSERT_EQ(env_->run({"campaign", "apply", write("mid", {"m1", "m2"})}).exit_code, 0);
    const auto secs = [](system_clock::time_point t) { return duration_cast<seconds>(t.time_since_epoch()).count(); };
    const auto now = floor<seconds>(system_clock::now());
    const auto own = now + hours(1);
    // m1 has made its call and waits until `own` (a wait's timeout); m2 is not worked yet.
    env_->scalar("INSERT INTO step_attempts (enrollment_id, step, call, attempt, outcome, worker, finished_at) "
                 "SELECT e.enrollment_id, e.step, 'invite', 1, 'transient', 'w', now() FROM enrollments e "
                 "JOIN leads l USING (lead_id) WHERE l.profile_url LIKE '%/m1' RETURNING 1");
    env_->scalar("UPDATE enrollments e SET next_run_at = to_timestamp(" + std::to_string(secs(own)) +
                 "), due_at = to_timestamp(" + std::to_string(secs(own)) +
                 ") FROM leads l WHERE l.lead_id = e.lead_id AND l.profile_url LIKE '%/m1' RETURNING 1");
    const auto times = [&](const std::string& who) {
        return env_->scalar("SELECT floor(extract(epoch FROM e.next_run_at))::bigint || ' ' || "
                            "floor(extract(epoch FROM e.due_at))::bigint FROM enrollments e JOIN leads l USING "
                            "(lead_id) WHERE l.profile_url LIKE '%/" + who + "'");
    };
    const auto pair = [](std::int64_t next, std::int64_t due) { return std::to_string(next) + " " + std::to_string(due); };

    const auto start = now + hours(48);
    ASSERT_EQ(env_->run({"campaign", "apply", write("mid", {"m1", "m2"}, "start_at: " + orch::campaigns::format_instant(start) + "\n")})
                  .exit_code,
              0);
    EXPECT_EQ(times("m1"), pair(secs(own), secs(start)));    // its own next run kept, due at start_at
    EXPECT_EQ(times("m2"), pair(secs(start), secs(start)));  // starts at start_at

    // A restart's wake-up makes m2 due now (wait code pacing); the claim holds it to start_at,
    // keeping its next run, and returns nothing of the campaign.
    env_->scalar("UPDATE enrollments e SET wait_code = 'pacing' FROM leads l WHERE l.lead_id = e.lead_id AND "
                 "l.profile_url LIKE '%/m2' RETURNING 1");
    const auto woken_at = floor<seconds>(system_clock::now());
    EXPECT_EQ(env_->scalar(std::string(orch::schema::query("engine/wake_gate_waiters"))), "1");
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        const std::string arr = picked(tx);
        EXPECT_EQ(arr.size() > 2, true) << "the woken lead is picked";
        EXPECT_EQ(tx.exec_params(std::string(orch::schema::query("engine/claim_due")), arr).size(), 0u);
        tx.commit();
    }
    std::istringstream m2(times("m2"));
    std::int64_t next = 0, due = 0;
    m2 >> next >> due;
    EXPECT_GE(next, secs(woken_at));
    EXPECT_LE(next, secs(ceil<seconds>(system_clock::now())));
    EXPECT_EQ(due, secs(start));
    EXPECT_EQ(times("m1"), pair(secs(own), secs(start)));
    // `leads show` (the admin API's lead) says it waits for start_at, and when it runs; so does
    // `campaign watch`'s list of waits (inbox/waiting_reasons).
    const auto m2_id = env_->scalar("SELECT lead_id FROM leads WHERE profile_url LIKE '%/m2'");
    auto shown = env_->run({"leads", "show", "mid", m2_id, "--format", "json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.output;
    auto lead = json::parse(shown.output, nullptr, false);
    EXPECT_EQ(lead.value("next_run_at", json()), orch::campaigns::format_instant(start)) << shown.output;
    EXPECT_EQ(lead.value("waiting", json()),
              "waiting for the campaign to start (start_at) until " + orch::campaigns::format_instant(start).substr(0, 10) +
                  " " + orch::campaigns::format_instant(start).substr(11, 8) + " UTC")
        << shown.output;
    {
        pqxx::connection c(env_->database_url());
        pqxx::nontransaction tx(c);
        std::string reasons;
        for (const auto& r : tx.exec_params(std::string(orch::schema::query("inbox/waiting_reasons")), "mid")) {
            reasons += r[1].as<std::string>() + " " + r[2].as<std::string>() + "; ";
        }
        EXPECT_EQ(reasons, "waiting for the campaign to start (start_at " +
                               orch::campaigns::format_instant(start).substr(0, 10) + " " +
                               orch::campaigns::format_instant(start).substr(11, 8) + " UTC) 2; ");
    }
    // A lead whose own next run comes after start_at shows it, unless an inbox event waits for it
    // (an acceptance: the claim applies it at start_at), when it shows start_at.
    const auto m1_id = env_->scalar("SELECT lead_id FROM leads WHERE profile_url LIKE '%/m1'");
    const auto m1_next = [&] {
        auto r = env_->run({"leads", "show", "mid", m1_id, "--format", "json"});
        auto j = json::parse(r.output, nullptr, false);
        return j.is_object() ? j.value("next_run_at", std::string()) + " | " + j.value("waiting", std::string())
                             : r.output;
    };
    env_->scalar("UPDATE enrollments e SET next_run_at = to_timestamp(" + std::to_string(secs(start + hours(1))) +
                 ") FROM leads l WHERE l.lead_id = e.lead_id AND l.profile_url LIKE '%/m1' RETURNING 1");
    EXPECT_EQ(m1_next().rfind(orch::campaigns::format_instant(start + hours(1)) + " | waiting", 0), 0u) << m1_next();
    env_->scalar("INSERT INTO events (source_id, account_id, kind, lead_id, payload) SELECT 'test:m1', e.account_id, "
                 "'accepted_invitation', e.lead_id, '{}' FROM enrollments e JOIN leads l USING (lead_id) "
                 "WHERE l.profile_url LIKE '%/m1' RETURNING 1");
    EXPECT_EQ(m1_next().rfind(orch::campaigns::format_instant(start) +
                                  " | waiting for the campaign to start (start_at) until ",
                              0),
              0u)
        << m1_next();
    env_->scalar("DELETE FROM events WHERE source_id = 'test:m1' RETURNING 1");
    env_->scalar("UPDATE enrollments e SET next_run_at = to_timestamp(" + std::to_string(secs(own)) +
                 ") FROM leads l WHERE l.lead_id = e.lead_id AND l.profile_url LIKE '%/m1' RETURNING 1");

    // An earlier start_at releases both to it: m1 to be claimed then, and m2, not worked yet, to
    // start then (the version's hold writes a lead at the entry step a next run of start_at).
    // None releases both to now.
    const auto earlier = now + hours(24);
    ASSERT_EQ(env_->run({"campaign", "apply", write("mid", {"m1", "m2"}, "start_at: " + orch::campaigns::format_instant(earlier) + "\n")})
                  .exit_code,
              0);
    EXPECT_EQ(times("m1"), pair(secs(own), secs(earlier)));
    EXPECT_EQ(times("m2"), pair(secs(earlier), secs(earlier)));
    const auto removed_from = floor<seconds>(system_clock::now());
    ASSERT_EQ(env_->run({"campaign", "apply", write("mid", {"m1", "m2"})}).exit_code, 0);
    // m1 is due at once: the claim applies what came while it was held (an acceptance) or puts it
    // back to its own next run, which it keeps.
    std::istringstream m1_after(times("m1"));
    m1_after >> next >> due;
    EXPECT_EQ(next, secs(own));
    EXPECT_GE(due, secs(removed_from));
    EXPECT_LE(due, secs(ceil<seconds>(system_clock::now())));
    std::istringstream m2_after(times("m2"));
    m2_after >> next >> due;
    EXPECT_GE(due, secs(removed_from));
    EXPECT_LE(due, secs(ceil<seconds>(system_clock::now())));
    EXPECT_EQ(next, due);
}

// A campaign that opens with a delay: its new leads are due when the delay has passed from their
// start (now, or start_at), not at once (the delay was skipped and the first call went out within
// seconds). A start_at moved later moves them with the delay.
TEST_F(LifecyclePg, AnOpeningDelayHoldsNewLeadsForItsDuration) {
    const std::string steps = "  - {id: pause, kind: delay, duration: 40m}\n  - {id: invite, kind: invite}\n";
    const auto before = floor<seconds>(system_clock::now());
    ASSERT_EQ(env_->run({"campaign", "apply", write("opening", {"o1", "o2"}, "", steps)}).exit_code, 0);
    const auto after = ceil<seconds>(system_clock::now());
    const auto due = [&](const std::string& name) {
        return env_->scalar("SELECT string_agg(DISTINCT e.step || ' ' || e.status || ' ' || "
                            "floor(extract(epoch FROM e.next_run_at))::bigint || ' ' || "
                            "floor(extract(epoch FROM e.due_at))::bigint, ',') FROM enrollments e JOIN campaigns c "
                            "USING (campaign_id) WHERE c.name = '" + name + "'");
    };
    const auto opened = due("opening");
    std::istringstream in(opened);
    std::string step, status;
    std::int64_t next = 0, due_at = 0;
    in >> step >> status >> next >> due_at;
    EXPECT_EQ(step, "pause") << opened;
    EXPECT_EQ(status, "ready") << opened;
    EXPECT_GE(next, duration_cast<seconds>((before + minutes(40)).time_since_epoch()).count()) << opened;
    EXPECT_LE(next, duration_cast<seconds>((after + minutes(40)).time_since_epoch()).count()) << opened;
    EXPECT_EQ(due_at, next) << opened;

    // With a start_at, the delay runs from it; a later start_at moves the leads with it.
    const auto start = floor<seconds>(system_clock::now()) + hours(48);
    const auto at = [](system_clock::time_point t) { return std::to_string(duration_cast<seconds>(t.time_since_epoch()).count()); };
    ASSERT_EQ(env_->run({"campaign", "apply",
                         write("later", {"l1"}, "start_at: " + orch::campaigns::format_instant(start) + "\n", steps)})
                  .exit_code,
              0);
    EXPECT_EQ(due("later"), "pause ready " + at(start + minutes(40)) + " " + at(start + minutes(40)));
    ASSERT_EQ(env_->run({"campaign", "apply",
                         write("later", {"l1"}, "start_at: " + orch::campaigns::format_instant(start + hours(1)) + "\n",
                               steps)})
                  .exit_code,
              0);
    EXPECT_EQ(due("later"), "pause ready " + at(start + hours(1) + minutes(40)) + " " + at(start + hours(1) + minutes(40)));
    // An earlier start_at, and then none: the delay runs from the new start, or from now.
    ASSERT_EQ(env_->run({"campaign", "apply",
                         write("later", {"l1"}, "start_at: " + orch::campaigns::format_instant(start - hours(1)) + "\n",
                               steps)})
                  .exit_code,
              0);
    EXPECT_EQ(due("later"), "pause ready " + at(start - hours(1) + minutes(40)) + " " + at(start - hours(1) + minutes(40)));
    const auto released_from = floor<seconds>(system_clock::now());
    ASSERT_EQ(env_->run({"campaign", "apply", write("later", {"l1"}, "", steps)}).exit_code, 0);
    const auto released_by = ceil<seconds>(system_clock::now());
    std::istringstream released(due("later"));
    released >> step >> status >> next >> due_at;
    EXPECT_EQ(step, "pause");
    EXPECT_GE(next, duration_cast<seconds>((released_from + minutes(40)).time_since_epoch()).count());
    EXPECT_LE(next, duration_cast<seconds>((released_by + minutes(40)).time_since_epoch()).count());
    EXPECT_EQ(due_at, next);
}

TEST_F(LifecyclePg, AtEndAtTheClaimStopsTheCampaignAndALaterEndAtResumesIt) {
    const auto now = floor<seconds>(system_clock::now());
    const std::string passed = "end_at: " + orch::campaigns::format_instant(now - hours(1)) + "\n";
    // A new campaign already past its end_at would stop at once: refused before anything is
    // stored (a trial's apply billed its search and enrolled its leads, then stopped).
    auto refused = env_->run({"campaign", "apply", write("e", {"p1", "p2"}, passed)});
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_TRUE(contains(refused.output, "campaign 'e': its end_at " + orch::campaigns::format_instant(now - hours(1)) +
                                              " has passed: a new campaign would stop at once; give a later end_at, "
                                              "or none"))
        << refused.output;
    auto validated = env_->run({"campaign", "validate", write("e", {"p1", "p2"}, passed)});
    EXPECT_TRUE(contains(validated.output, "has passed: a new campaign would stop at once")) << validated.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM campaigns"), "0");
    // Created with a later end_at, which then passes; a re-apply of the past end_at keeps it, warned.
    ASSERT_EQ(env_->run({"campaign", "apply", write("e", {"p1", "p2"},
                                                    "end_at: " + orch::campaigns::format_instant(now + hours(1)) + "\n")})
                  .exit_code,
              0);
    env_->scalar("UPDATE campaigns SET end_at = '" + orch::campaigns::format_instant(now - hours(2)) + "' RETURNING 1");
    auto applied = env_->run({"campaign", "apply", write("e", {"p1", "p2"}, passed)});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    EXPECT_TRUE(contains(applied.output, "has passed: the campaign stops")) << applied.output;
    {
        pqxx::connection c(env_->database_url());
        pqxx::work tx(c);
        const std::string arr = picked(tx);
        EXPECT_EQ(arr.size() > 2, true);
        EXPECT_EQ(tx.exec_params(std::string(orch::schema::query("engine/claim_due")), arr).size(), 0u);
        tx.commit();
    }
    EXPECT_EQ(state("e"), "paused");
    EXPECT_TRUE(contains(env_->scalar("SELECT pause_reason FROM campaigns WHERE name = 'e'"), "ended: end_at"));
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE due_at = 'infinity'"), "2");
    // A resume would say active and be paused again by the next claim: it is refused, naming the
    // way (a trial's resume printed "is active", exit 0, and the campaign was paused 3 s later).
    auto resumed = env_->run({"campaign", "resume", "e"});
    EXPECT_EQ(resumed.exit_code, 2) << resumed.output;
    EXPECT_TRUE(contains(resumed.output, "cannot resume campaign 'e': its end_at " +
                                             orch::campaigns::format_instant(now - hours(1)) +
                                             " has passed; apply its file with a later end_at, or none, to resume it; "
                                             "nothing changed"))
        << resumed.output;
    EXPECT_EQ(state("e"), "paused");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE due_at = 'infinity'"), "2");

    auto later = env_->run({"campaign", "apply", write("e", {"p1", "p2"},
                                                       "end_at: " + orch::campaigns::format_instant(now + hours(24)) + "\n")});
    ASSERT_EQ(later.exit_code, 0) << later.output;
    EXPECT_TRUE(contains(later.output, "the campaign was paused at its end_at; this version's later end_at (" +
                                           orch::campaigns::format_instant(now + hours(24)) +
                                           ") resumes it, and its leads go on"))
        << later.output;
    EXPECT_EQ(state("e"), "active");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE due_at = 'infinity'"), "0");
}

TEST_F(LifecyclePg, ShowVersionsAndDiff) {
    ASSERT_EQ(env_->run({"campaign", "apply", write("s", {"p1", "p2"})}).exit_code, 0);
    auto v1only = env_->run({"campaign", "diff", "s"});
    EXPECT_NE(v1only.exit_code, 0);
    EXPECT_TRUE(contains(v1only.output, "has only version 1")) << v1only.output;

    auto file = write("s", {"p1", "p2"}, "", "  - {id: invite, kind: invite, next: later}\n  - {id: later, kind: delay, duration: 1d}\n");
    {
        std::string text;
        std::ifstream in(file);
        text.assign(std::istreambuf_iterator<char>(in), {});
        text.replace(text.find("budget_credits: 100"), 19, "budget_credits: 250");
        std::ofstream(file) << text;
    }
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);

    auto shown = env_->run({"campaign", "show", "s", "--format", "json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.output;
    auto j = json::parse(shown.output, nullptr, false);
    ASSERT_TRUE(j.is_object()) << shown.output;
    EXPECT_EQ(j["summary"]["state"], "active");
    EXPECT_EQ(j["summary"]["version"], 2);
    EXPECT_EQ(j["summary"]["budget"]["credits"], 250);
    EXPECT_EQ(j["summary"]["budget"]["available"], 250);
    EXPECT_TRUE(j["summary"]["start_at"].is_null()) << j;
    EXPECT_TRUE(j["summary"]["end_at"].is_null()) << j;
    ASSERT_EQ(j["steps"].size(), 2u);
    EXPECT_EQ(j["steps"][0]["id"], "invite");
    EXPECT_EQ(j["steps"][0]["leads"]["ready"], 2);
    EXPECT_EQ(j["steps"][1]["kind"], "delay");
    EXPECT_EQ(j["summary"]["enrollments"], 2);
    EXPECT_EQ(j["summary"]["live"], 2);
    EXPECT_EQ(j["funnel"]["found"], 2);
    auto table = env_->run({"campaign", "show", "s"});
    ASSERT_EQ(table.exit_code, 0) << table.output;
    EXPECT_TRUE(contains(table.output, "250")) << table.output;
    EXPECT_TRUE(contains(table.output, "invite")) << table.output;

    auto versions = json::parse(env_->run({"campaign", "versions", "s", "--format", "json"}).output, nullptr, false);
    ASSERT_TRUE(versions.is_object());
    ASSERT_EQ(versions["versions"].size(), 2u);
    EXPECT_EQ(versions["versions"][0]["version"], 1);
    EXPECT_EQ(versions["versions"][0]["current"], false);
    EXPECT_EQ(versions["versions"][1]["current"], true);
    EXPECT_EQ(versions["versions"][0]["enrollments"], 2);

    auto diff = env_->run({"campaign", "diff", "s"});
    ASSERT_EQ(diff.exit_code, 0) << diff.output;
    EXPECT_TRUE(contains(diff.output, "--- s version 1\n+++ s version 2\n")) << diff.output;
    // As YAML, as the file is written: sorted keys, block style, empty maps and lists on their line.
    EXPECT_TRUE(contains(diff.output, "\n-budget_credits: 100\n+budget_credits: 250\n")) << diff.output;
    EXPECT_TRUE(contains(diff.output, "\n limits: {}\n")) << diff.output;
    // A step's keys the file did not give (unset, or of another kind of step) are left out: the
    // diff showed `on_accepted: ""`, `note: null` and `timeout_seconds: 0` of an invite (a trial).
    EXPECT_TRUE(contains(diff.output, "\n+  - id: later\n+    kind: delay\n+    duration_seconds: 86400\n"))
        << diff.output;
    EXPECT_TRUE(contains(diff.output, "\n+    next: later\n")) << diff.output;
    EXPECT_FALSE(contains(diff.output, "note: null")) << diff.output;
    EXPECT_FALSE(contains(diff.output, "on_accepted: \"\"")) << diff.output;
    EXPECT_FALSE(contains(diff.output, "timeout_seconds: 0")) << diff.output;
    EXPECT_EQ(env_->run({"campaign", "diff", "s", "2", "1"}).exit_code, 0);
    auto same = env_->run({"campaign", "diff", "s", "2", "2"});
    EXPECT_EQ(same.exit_code, 0);
    EXPECT_TRUE(contains(same.output, "have the same definition")) << same.output;
    auto missing = env_->run({"campaign", "diff", "s", "1", "7"});
    EXPECT_NE(missing.exit_code, 0);
    EXPECT_TRUE(contains(missing.output, "has no version 7 (versions 1 to 2)")) << missing.output;
    auto one = env_->run({"campaign", "diff", "s", "1"});
    EXPECT_NE(one.exit_code, 0);
    // An `exclude:` of profile URLs alone shows as the file gave it (the diff printed
    // `companies: []` beside it, which the file did not set).
    {
        std::string text;
        std::ifstream in(file);
        text.assign(std::istreambuf_iterator<char>(in), {});
        text.replace(text.find("steps:"), 6, "exclude:\n  profile_urls: [https://network.example/in/p9]\nsteps:");
        std::ofstream(file) << text;
    }
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);
    auto excluded = env_->run({"campaign", "diff", "s"});
    ASSERT_EQ(excluded.exit_code, 0) << excluded.output;
    EXPECT_TRUE(contains(excluded.output, "\n+exclude:\n+  profile_urls:\n+    - https://network.example/in/p9\n"))
        << excluded.output;
    EXPECT_FALSE(contains(excluded.output, "companies")) << excluded.output;
    auto unknown = env_->run({"campaign", "show", "nope"});
    EXPECT_NE(unknown.exit_code, 0);
    EXPECT_TRUE(contains(unknown.output, "no campaign named 'nope'")) << unknown.output;
}

// The apply reads the senders' use of today's quota from Redis: a sender whose invite quota is
// used up holds the first invitations until its next day.
TEST_F(LifecyclePg, ApplySaysWhenTheSendersHaveUsedUpTodaysQuota) {
    ORCH_REQUIRE_SERVICE("REDIS_URL");
    // An account of this test's own: Redis is shared by every test of the API key.
    const std::string account = "acc-used-" + std::to_string(::getpid()) + "-" +
                                std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    env_->scalar("INSERT INTO accounts (account_id) VALUES ('" + account + "') RETURNING 1");
    auto limiter = orch::test::env_limiter();
    ASSERT_TRUE(orch::test::take_today(*limiter, account, orch::limits::action::invite, 1));
    std::ofstream(dir_ / "used.csv") << "profile_url,first_name\nhttps://network.example/in/u1,P\n";
    std::ofstream(dir_ / "used.yaml") << "name: used\naccounts: " << account
                                      << "\naudience:\n  file: used.csv\nschedule:\n  time_zone: UTC\n"
                                         "budget_credits: 100\nsteps:\n  - {id: invite, kind: invite}\n";
    env_->set("ORCH_INVITE_PER_DAY", "1");
    env_->set("ORCH_PACING", "true");
    auto applied = env_->run({"campaign", "apply", (dir_ / "used.yaml").string()});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    EXPECT_TRUE(contains(applied.output, "once the sender's day quota starts again (it has used up today's invite "
                                         "quota), as the working hours allow."))
        << applied.output;
}

TEST_F(LifecyclePg, ApplyWarnsOfAnEmptyAudienceAFirstMessageAndPacing) {
    env_->set("ORCH_RAMP_UP", "true");
    env_->set("ORCH_INVITE_PER_DAY", "80");
    auto paced = env_->run({"campaign", "apply", write("w", {"p1"})});
    ASSERT_EQ(paced.exit_code, 0) << paced.output;
    EXPECT_TRUE(contains(paced.output, "warning: pacing and ramp-up are on: a sender's first day of invite calls "
                                       "through the orchestrator allows at most 20, then"))
        << paced.output;

    auto msg = env_->run({"campaign", "apply", write("m", {"m1"}, "", "  - {id: hi, kind: send, message_text: hi}\n")});
    ASSERT_EQ(msg.exit_code, 0) << msg.output;
    EXPECT_TRUE(contains(msg.output, "warning: the first step ('hi') sends a message")) << msg.output;

    // Every lead of this audience is owned by campaign w: nothing enrolled, completed at once.
    auto owned = env_->run({"campaign", "apply", write("o", {"p1"})});
    ASSERT_EQ(owned.exit_code, 0) << owned.output;
    EXPECT_TRUE(contains(owned.output, "warning: no new lead of the 1 in the audience was enrolled: each is owned by another campaign")) << owned.output;
    EXPECT_EQ(state("o"), "completed");
}

}  // namespace
