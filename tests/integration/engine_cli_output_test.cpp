// The CLI's outputs and start checks, end to end with the real `orchestrator` binary, sandbox,
// Postgres and Redis: --format table|json|csv on listing commands (CSV as RFC 4180, one table per
// run, --section to pick one), `campaign show` with state, version, budget, steps and counts, ISO
// dates, flags' types and defaults in --help, an unmigrated database, a worker without Redis, and
// a re-apply of an unchanged file that bills nothing.
#include "tests/support/env_limiter.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace {

using orch::test::http_client;
using orch::test::json;
using orch::test::orchestrator_env;
using orch::test::sandbox_process;

std::string campaign_yaml(const std::string& name, int total) {
    return "name: " + name + "\naccounts: [sender-1]\naudience:\n  search:\n    title: Engineer\n  total_results: " +
           std::to_string(total) +
           "\nschedule:\n  time_zone: UTC\n  days: [mon, tue, wed, thu, fri, sat, sun]\n  hours: \"00:00-24:00\"\n"
           "budget_credits: 500\nbudget_per_day_credits: 100\nsteps:\n"
           "  - id: check\n    kind: check_invitation\n    on_accepted: end\n    on_pending: end\n"
           "    on_no_invitation: invite\n"
           "  - id: invite\n    kind: invite\n    note: \"Hi {{first_name}}\"\n";
}

class CliOutput : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        sandbox_ = std::make_unique<sandbox_process>();
        env_ = std::make_unique<orchestrator_env>(sandbox_->port());
        auto r = env_->run({"accounts", "connect", "--login-token", "token-1", "--country", "FR", "--label", "sender-1"});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        file_ = "/tmp/orch-cli-output-" + std::to_string(::getpid()) + ".yaml";
    }
    void TearDown() override { std::remove(file_.c_str()); }

    orch::test::run_result apply(const std::string& yaml) {
        std::ofstream(file_) << yaml;
        return env_->run({"campaign", "apply", file_});
    }
    json credits() {
        return http_client("127.0.0.1", sandbox_->port()).get("/v2/credits", "test-key").body_json()["data"]["credits"];
    }

    std::unique_ptr<sandbox_process> sandbox_;
    std::unique_ptr<orchestrator_env> env_;
    std::string file_;
};

TEST_F(CliOutput, CampaignListAndShowInEveryFormat) {
    // A name with a comma and quotes: CSV quotes it, the table shows it as it is.
    auto a = apply(campaign_yaml("listed, \"quoted\"", 3));
    ASSERT_EQ(a.exit_code, 0) << a.output;

    auto csv = env_->run({"campaign", "list", "--format", "csv"});
    ASSERT_EQ(csv.exit_code, 0) << csv.output;
    EXPECT_EQ(csv.output,
              "campaign,state,version,enrollments,live,pause_reason\r\n"
              "\"listed, \"\"quoted\"\"\",active,1,3,3,\r\n");
    auto js = env_->run({"campaign", "list", "--format", "json"});
    ASSERT_EQ(js.exit_code, 0) << js.output;
    auto list = json::parse(js.output);
    ASSERT_EQ(list["campaigns"].size(), 1u);
    EXPECT_EQ(list["campaigns"][0]["name"], "listed, \"quoted\"");
    EXPECT_EQ(list["campaigns"][0]["enrollments"], 3);
    auto table = env_->run({"campaign", "list"});
    ASSERT_EQ(table.exit_code, 0) << table.output;
    EXPECT_NE(table.output.find("listed, \"quoted\"  active"), std::string::npos) << table.output;

    const std::string name = "listed, \"quoted\"";
    auto show = env_->run({"campaign", "show", name, "--format", "json"});
    ASSERT_EQ(show.exit_code, 0) << show.output;
    auto j = json::parse(show.output);
    EXPECT_EQ(j["summary"]["state"], "active");
    EXPECT_EQ(j["summary"]["version"], 1);
    EXPECT_EQ(j["summary"]["enrollments"], 3);
    EXPECT_EQ(j["summary"]["budget"]["credits"], 500);
    EXPECT_EQ(j["summary"]["budget"]["per_day"], 100);
    EXPECT_TRUE(j["summary"]["budget"]["per_account"].is_null());
    EXPECT_EQ(j["summary"]["budget"]["spent"], 1);  // the audience search
    EXPECT_TRUE(std::regex_match(j["summary"]["created_at"].get<std::string>(),
                                 std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")))
        << j["summary"]["created_at"];
    ASSERT_EQ(j["steps"].size(), 2u);
    EXPECT_EQ(j["steps"][0]["id"], "check");
    EXPECT_EQ(j["steps"][0]["kind"], "check_invitation");
    EXPECT_EQ(j["steps"][0]["leads"]["ready"], 3);
    EXPECT_EQ(j["steps"][1]["leads"]["ready"], 0);
    EXPECT_EQ(j["funnel"]["found"], 3);

    auto show_csv = env_->run({"campaign", "show", name, "--format", "csv"});
    ASSERT_EQ(show_csv.exit_code, 0) << show_csv.output;
    EXPECT_EQ(show_csv.output.rfind("field,value\r\nname,\"listed, \"\"quoted\"\"\"\r\nstate,active\r\n", 0), 0u)
        << show_csv.output;
    EXPECT_NE(show_csv.output.find("\r\nbudget.credits,500\r\n"), std::string::npos) << show_csv.output;
    EXPECT_EQ(show_csv.output.find("funnel"), std::string::npos) << "one table per CSV: " << show_csv.output;
    auto steps_csv = env_->run({"campaign", "show", name, "--format", "csv", "--section", "steps"});
    ASSERT_EQ(steps_csv.exit_code, 0) << steps_csv.output;
    EXPECT_EQ(steps_csv.output,
              "step,kind,ready,calling,waiting,done,replied,failed,cancelled\r\n"
              "check,check_invitation,3,0,0,0,0,0,0\r\ninvite,invite,0,0,0,0,0,0,0\r\n");
    auto show_table = env_->run({"campaign", "show", name});
    ASSERT_EQ(show_table.exit_code, 0) << show_table.output;
    for (const std::string part : {"state", "active", "version", "budget.credits", "500", "steps of", "check_invitation",
                                   "funnel", "found"}) {
        EXPECT_NE(show_table.output.find(part), std::string::npos) << part << "\n" << show_table.output;
    }
    auto missing = env_->run({"campaign", "show", "nope"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.output.find("no campaign named 'nope'"), std::string::npos) << missing.output;
    // A command line the parser refuses is the caller's mistake: 2, as any other.
    auto bad_value = env_->run({"campaign", "show", name, "--format", "xml"});
    EXPECT_EQ(bad_value.exit_code, 2) << bad_value.output;
    EXPECT_NE(bad_value.output.find("--format"), std::string::npos) << bad_value.output;
    EXPECT_EQ(env_->run({"campaign", "show", name, "--bogus"}).exit_code, 2);
    EXPECT_EQ(env_->run({"--help"}).exit_code, 0);

    // A lead whose sequence ended and who replied afterwards stays done; the funnel counts the
    // reply, and the step table's heading says why the two differ.
    ASSERT_EQ(env_->scalar("WITH u AS (UPDATE enrollments SET status = 'done', step = '', finished_at = now(), "
                           "replied_at = now() WHERE enrollment_id = (SELECT min(enrollment_id) FROM enrollments) "
                           "RETURNING 1) SELECT count(*) FROM u"),
              "1");
    auto later = json::parse(env_->run({"campaign", "show", name, "--format", "json"}).output);
    EXPECT_EQ(later["funnel"]["replied"], 1) << later.dump();
    bool ended = false;
    for (const auto& st : later["steps"]) {
        if (st["id"] == "") {
            ended = true;
            EXPECT_EQ(st["leads"]["done"], 1) << later.dump();
            EXPECT_EQ(st["leads"]["replied"], 0) << later.dump();
            EXPECT_EQ(st["done_then_replied"], 1) << later.dump();
        }
    }
    EXPECT_TRUE(ended) << later.dump();
    auto later_table = env_->run({"campaign", "show", name});
    EXPECT_NE(later_table.output.find("1 done lead replied after the last step, counted as replied in the funnel"),
              std::string::npos)
        << later_table.output;
}

// An account label is a name: one with a control or bidirectional character is refused before
// the API is asked; the table escapes what the API sent.
TEST_F(CliOutput, AccountLabelsAreNames) {
    for (const std::string label : {"evil\nlabel", "x\x1b[31m", "a\xe2\x80\xae" "b"}) {
        auto r = env_->run({"accounts", "connect", "--login-token", "token-2", "--label", label});
        EXPECT_EQ(r.exit_code, 2) << r.output;
        EXPECT_NE(r.output.find("--label is not a valid name"), std::string::npos) << r.output;
    }
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM accounts"), "1");
}

// Re-applying an unchanged file sends no search and bills nothing; a changed audience does. A
// change that leaves the audience as it was (the budget here) stores a new version and sends no
// search either, unless --search-again asks for it.
TEST_F(CliOutput, UnchangedReapplyBillsNothing) {
    ASSERT_EQ(apply(campaign_yaml("again", 3)).exit_code, 0);
    const auto before = credits();
    auto again = apply(campaign_yaml("again", 3));
    ASSERT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.output.find("campaign 'again' unchanged, version 1: the audience search was not sent again"),
              std::string::npos)
        << again.output;
    EXPECT_EQ(credits(), before);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE action = 'search_people'"), "1");
    auto changed = apply(campaign_yaml("again", 4));
    ASSERT_EQ(changed.exit_code, 0) << changed.output;
    EXPECT_NE(changed.output.find("updated, version 2"), std::string::npos) << changed.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE action = 'search_people'"), "2");

    std::string budget_only = campaign_yaml("again", 4);
    const auto at = budget_only.find("budget_credits: 500");
    ASSERT_NE(at, std::string::npos);
    budget_only.replace(at, 19, "budget_credits: 600");
    auto rebudgeted = apply(budget_only);
    ASSERT_EQ(rebudgeted.exit_code, 0) << rebudgeted.output;
    EXPECT_NE(rebudgeted.output.find("campaign 'again' updated, version 3: the audience is unchanged, so its search "
                                     "was not sent again (nothing billed; --search-again sends it)"),
              std::string::npos)
        << rebudgeted.output;
    EXPECT_EQ(rebudgeted.output.find("warning"), std::string::npos) << "nothing was searched, so nothing matched "
                                                                         "nobody: "
                                                                      << rebudgeted.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE action = 'search_people'"), "2");
    EXPECT_EQ(env_->scalar("SELECT current_version FROM campaigns WHERE name = 'again'"), "3");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments e JOIN campaigns c USING (campaign_id) "
                           "WHERE c.name = 'again'"),
              "4");

    std::ofstream(file_) << budget_only;
    auto searched = env_->run({"campaign", "apply", file_, "--search-again"});
    ASSERT_EQ(searched.exit_code, 0) << searched.output;
    EXPECT_NE(searched.output.find("audience search: 4 people found"), std::string::npos) << searched.output;
    EXPECT_NE(searched.output.find("4 leads, 0 enrolled, 0 skipped (enrolled by another campaign, on the do-not-contact "
                                   "list or excluded), 4 enrolled or skipped by an earlier apply"),
              std::string::npos)
        << searched.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE action = 'search_people'"), "3");

    // New exclusions change who the search enrolls: it is sent.
    std::ofstream(file_) << budget_only << "exclude:\n  companies: [Nobody Inc]\n";
    auto excluded = env_->run({"campaign", "apply", file_});
    ASSERT_EQ(excluded.exit_code, 0) << excluded.output;
    EXPECT_NE(excluded.output.find("audience search: 4 people found"), std::string::npos) << excluded.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE action = 'search_people'"), "4");
}

// A new version whose `exclude:` names live leads cancels those between calls and says so (a
// trial's apply said "0 enrolled, 0 skipped" of it), and says that one in a call is left to its
// worker (DncTest.ExcludedWhileTheCallIsOnTheWireStopsTheLeadWhenItsOutcomeIsRecorded); the dry
// run says the same and cancels nothing.
TEST_F(CliOutput, AnExclusionThatStopsLiveLeadsSaysSo) {
    ASSERT_EQ(apply(campaign_yaml("ex", 3)).exit_code, 0);
    const std::string ids = "(SELECT enrollment_id FROM enrollments e JOIN campaigns c USING (campaign_id) "
                            "WHERE c.name = 'ex' ORDER BY enrollment_id";
    ASSERT_EQ(env_->scalar("WITH u AS (UPDATE enrollments SET status = 'calling', lease_owner = 'elsewhere', "
                           "lease_expires_at = now() + interval '1 hour' WHERE enrollment_id = " + ids +
                           " OFFSET 1 LIMIT 1) RETURNING 1) SELECT count(*) FROM u"),
              "1");
    const auto urls = env_->scalar("SELECT string_agg(l.profile_url, ', ' ORDER BY e.enrollment_id) FROM enrollments e "
                                   "JOIN leads l USING (lead_id) WHERE e.enrollment_id IN " + ids + " LIMIT 2)");
    std::ofstream(file_) << campaign_yaml("ex", 3) << "exclude:\n  profile_urls: [" << urls << "]\n";
    const std::string stopped = "1 live lead stopped: this version's `exclude:` names them (cancelled, reason "
                                "'stopped: excluded by the campaign')";
    const std::string calling = "1 live lead this version's `exclude:` names is in a call: its worker stops it when the "
                                "call's outcome is recorded (a request already sent has gone; one still queued is not "
                                "sent)";
    const auto states = [&] {
        return env_->scalar("SELECT string_agg(status::text, ' ' ORDER BY enrollment_id) FROM enrollments");
    };
    const auto before = states();
    auto dry = env_->run({"campaign", "apply", file_, "--dry-run"});
    ASSERT_EQ(dry.exit_code, 0) << dry.output;
    EXPECT_NE(dry.output.find(stopped), std::string::npos) << dry.output;
    EXPECT_NE(dry.output.find(calling), std::string::npos) << dry.output;
    EXPECT_EQ(states(), before);
    auto applied = env_->run({"campaign", "apply", file_});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    EXPECT_NE(applied.output.find(stopped), std::string::npos) << applied.output;
    EXPECT_NE(applied.output.find(calling), std::string::npos) << applied.output;
    EXPECT_EQ(env_->scalar("SELECT string_agg(status::text || ' ' || reason, ', ' ORDER BY enrollment_id) FROM "
                           "enrollments WHERE enrollment_id IN " + ids + " LIMIT 2)"),
              "cancelled stopped: excluded by the campaign, calling ");
    // A company exclusion cannot match leads with no company field (a search's): said, as `dnc add
    // --company` says it (a trial's exclusion of two companies stopped nobody, silently).
    std::ofstream(file_) << campaign_yaml("ex", 3) << "exclude:\n  profile_urls: [" << urls
                         << "]\n  companies: [Initech]\n";
    auto companies = env_->run({"campaign", "apply", file_, "--dry-run"});
    ASSERT_EQ(companies.exit_code, 0) << companies.output;
    EXPECT_NE(companies.output.find("2 live leads have no company field (leads from a search carry none): this "
                                    "version's `exclude: companies:` cannot match them"),
              std::string::npos)
        << companies.output;
}

// `campaign apply --move-running`: the live leads of older versions move to the new one where
// their step is in it with the same kind; a lead in a call, or at a step the new version has not,
// stays, and the output says so by step and why. An unchanged definition moves them too.
TEST_F(CliOutput, MoveRunningMovesTheLeadsBetweenCalls) {
    ASSERT_EQ(apply(campaign_yaml("mover", 3)).exit_code, 0);
    const std::string ids = "(SELECT enrollment_id FROM enrollments e JOIN campaigns c USING (campaign_id) "
                            "WHERE c.name = 'mover' ORDER BY enrollment_id";
    // The first lead waits at the invite step for 3 days, the second is in a call, the third is
    // still at the check.
    ASSERT_EQ(env_->scalar("WITH u AS (UPDATE enrollments SET step = 'invite', status = 'waiting', "
                           "next_run_at = now() + interval '3 days', due_at = now() + interval '3 days' "
                           "WHERE enrollment_id = " + ids + " LIMIT 1) RETURNING 1) SELECT count(*) FROM u"),
              "1");
    ASSERT_EQ(env_->scalar("WITH u AS (UPDATE enrollments SET status = 'calling', lease_owner = 'elsewhere', "
                           "lease_expires_at = now() + interval '1 hour' WHERE enrollment_id = " + ids +
                           " OFFSET 1 LIMIT 1) RETURNING 1) SELECT count(*) FROM u"),
              "1");
    const auto on_version = [&](int v) {
        return env_->scalar("SELECT count(*) FROM enrollments e JOIN campaigns c USING (campaign_id) "
                            "WHERE c.name = 'mover' AND e.version = " + std::to_string(v));
    };

    // A new message: without the flag, nothing moves, and the output says how to move them.
    std::string v2 = campaign_yaml("mover", 3);
    v2.replace(v2.find("Hi {{first_name}}"), 17, "Hello {{first_name}}");
    auto kept = apply(v2);
    ASSERT_EQ(kept.exit_code, 0) << kept.output;
    EXPECT_NE(kept.output.find("(--move-running moves them)"), std::string::npos) << kept.output;
    EXPECT_EQ(on_version(1), "3");

    // The same file again, with the flag: the definition is unchanged, and the two leads between
    // calls move.
    std::ofstream(file_) << v2;
    // The dry run says the same of the moves, and moves, stores and bills nothing.
    auto dry = env_->run({"campaign", "apply", file_, "--move-running", "--dry-run"});
    ASSERT_EQ(dry.exit_code, 0) << dry.output;
    EXPECT_NE(dry.output.find("note: if applied now with --move-running, it would have moved 2 running leads to version "
                              "2; 1 kept on its version: 1 at step 'check' (in a call)"),
              std::string::npos)
        << dry.output;
    // ... and closes with what the apply would do, in its own words.
    EXPECT_NE(dry.output.find("\ndry run: nothing was stored or billed; an apply now would store nothing new: the "
                              "file is version 2's definition; it would move running leads (the note above)\n"),
              std::string::npos)
        << dry.output;
    EXPECT_EQ(on_version(1), "3");
    EXPECT_EQ(on_version(2), "0");
    auto moved = env_->run({"campaign", "apply", file_, "--move-running"});
    ASSERT_EQ(moved.exit_code, 0) << moved.output;
    EXPECT_NE(moved.output.find("campaign 'mover' unchanged, version 2"), std::string::npos) << moved.output;
    EXPECT_NE(moved.output.find("moved 2 running leads to version 2; 1 kept on its version: 1 at step 'check' "
                                "(in a call); apply again with --move-running once its call has ended"),
              std::string::npos)
        << moved.output;
    EXPECT_EQ(on_version(2), "2");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE step = 'invite' AND version = 2 "
                           "AND next_run_at > now() + interval '2 days'"),
              "1")
        << "a wait the step set keeps its end";

    // The invite step renamed: the lead at it stays; the lead at the check moves.
    std::string v3 = v2;
    v3.replace(v3.find("on_no_invitation: invite"), 24, "on_no_invitation: connect");
    v3.replace(v3.find("- id: invite"), 12, "- id: connect");
    ASSERT_EQ(env_->scalar("WITH u AS (UPDATE enrollments SET status = 'ready', lease_owner = NULL, "
                           "lease_expires_at = NULL WHERE status = 'calling' RETURNING 1) SELECT count(*) FROM u"),
              "1");
    std::ofstream(file_) << v3;
    auto renamed_dry = env_->run({"campaign", "apply", file_, "--dry-run"});
    ASSERT_EQ(renamed_dry.exit_code, 0) << renamed_dry.output;
    EXPECT_NE(renamed_dry.output.find("\ndry run: nothing was stored or billed; an apply now would store version 3 "
                                      "of campaign 'mover', keeping its audience (no search)\n"),
              std::string::npos)
        << renamed_dry.output;
    auto renamed = env_->run({"campaign", "apply", file_, "--move-running"});
    ASSERT_EQ(renamed.exit_code, 0) << renamed.output;
    EXPECT_NE(renamed.output.find("campaign 'mover' updated, version 3"), std::string::npos) << renamed.output;
    EXPECT_NE(renamed.output.find("moved 2 running leads to version 3; 1 kept on its version: 1 at step 'invite' "
                                  "(not in the version)"),
              std::string::npos)
        << renamed.output;
    EXPECT_EQ(on_version(3), "2");
    EXPECT_EQ(on_version(2), "1");

    // The connect step becomes a visit: a lead waiting at it stays; a lead at the check waiting
    // for the working hours moves, and is due at once for the claim to decide again.
    ASSERT_EQ(env_->scalar("WITH u AS (UPDATE enrollments SET step = 'connect', status = 'waiting', "
                           "next_run_at = now() + interval '2 days', due_at = now() + interval '2 days' "
                           "WHERE enrollment_id = (SELECT min(enrollment_id) FROM enrollments WHERE version = 3) "
                           "RETURNING 1) SELECT count(*) FROM u"),
              "1");
    ASSERT_EQ(env_->scalar("WITH u AS (UPDATE enrollments SET wait_code = 'schedule', "
                           "next_run_at = now() + interval '10 hours', due_at = now() + interval '10 hours' "
                           "WHERE enrollment_id = (SELECT max(enrollment_id) FROM enrollments WHERE version = 3) "
                           "RETURNING 1) SELECT count(*) FROM u"),
              "1");
    std::string v4 = v3;
    const auto connect = v4.find("- id: connect");
    ASSERT_NE(connect, std::string::npos);
    v4 = v4.substr(0, connect) + "- id: connect\n    kind: visit\n";
    std::ofstream(file_) << v4;
    auto rekinded = env_->run({"campaign", "apply", file_, "--move-running"});
    ASSERT_EQ(rekinded.exit_code, 0) << rekinded.output;
    EXPECT_NE(rekinded.output.find("moved 1 running lead to version 4; 2 kept on their version: 1 at step 'connect' "
                                   "(now of kind visit), 1 at step 'invite' (not in the version)\n"),
              std::string::npos)
        << rekinded.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE version = 4 AND wait_code = 'schedule' "
                           "AND next_run_at <= now() AND due_at <= now()"),
              "1")
        << "a wait for the working hours is decided again";
    // `campaign show` counts the lead kept at the old connect (an invite) apart from the current
    // visit of that id (a trial: leads kept at a check_invitation were shown as at a visit).
    auto shown = env_->run({"campaign", "show", "mover", "--format", "json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.output;
    std::map<std::string, std::int64_t> live_at;  // "id kind older" -> waiting leads
    const auto show = json::parse(shown.output);
    for (const auto& st : show["steps"]) {
        live_at[st["id"].get<std::string>() + " " + st["kind"].get<std::string>() +
                (st["older_version"].get<bool>() ? " older" : "")] += st["leads"]["waiting"].get<std::int64_t>();
    }
    EXPECT_EQ(live_at["connect invite older"], 1) << shown.output;
    EXPECT_EQ(live_at["connect visit"], 0) << shown.output;
    auto table = env_->run({"campaign", "show", "mover", "--section", "steps"});
    EXPECT_NE(table.output.find("connect (older version)  invite"), std::string::npos) << table.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE action = 'search_people'"), "1")
        << "no apply after the first sent a search";
}

// A live budget (`budget set`) survives an apply that leaves the file's budget as it was, which
// says so; an apply that changes the file's budget replaces it and warns; once the file and the
// live budget agree, nothing is said.
TEST_F(CliOutput, ALiveBudgetIsKeptUnlessTheFileChangesItsBudget) {
    ASSERT_EQ(apply(campaign_yaml("live", 3)).exit_code, 0);
    auto budget = [this] {
        return env_->scalar("SELECT total || ' ' || COALESCE(per_day, -1) FROM ledger_budgets b "
                            "JOIN campaigns c USING (campaign_id) WHERE c.name = 'live'");
    };
    ASSERT_EQ(budget(), "500 100");
    auto set = env_->run({"budget", "set", "live", "--credits", "800"});
    ASSERT_EQ(set.exit_code, 0) << set.output;
    EXPECT_NE(set.output.find("keeps this budget unless its file changes the budget it gives"), std::string::npos)
        << set.output;
    ASSERT_EQ(budget(), "800 100");

    std::string note_only = campaign_yaml("live", 3);
    note_only.replace(note_only.find("Hi {{first_name}}"), 17, "Hello {{first_name}}");
    auto kept = apply(note_only);
    ASSERT_EQ(kept.exit_code, 0) << kept.output;
    EXPECT_NE(kept.output.find("note: the campaign keeps its live budget (800 credits, per day 100, per account "
                               "none, from `budget set`): this version did not change the file's budget (500 "
                               "credits"),
              std::string::npos)
        << kept.output;
    EXPECT_EQ(budget(), "800 100");

    std::string rebudgeted = note_only;
    rebudgeted.replace(rebudgeted.find("budget_credits: 500"), 19, "budget_credits: 600");
    auto replaced = apply(rebudgeted);
    ASSERT_EQ(replaced.exit_code, 0) << replaced.output;
    EXPECT_NE(replaced.output.find("warning: the file's new budget (600 credits, per day 100, per account none) "
                                   "replaced the live one (800 credits"),
              std::string::npos)
        << replaced.output;
    EXPECT_EQ(budget(), "600 100");

    std::string again = rebudgeted;
    again.replace(again.find("Hello {{first_name}}"), 20, "Hey {{first_name}}");
    auto quiet = apply(again);
    ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
    EXPECT_EQ(quiet.output.find("budget"), std::string::npos) << quiet.output;
    EXPECT_EQ(budget(), "600 100");
}

// A new version says what it does to the leads already running: a budget below what is spent
// (as `budget set` does), a start_at still to come that holds every live lead, and the live leads
// on a sender it no longer lists (they stay on it).
TEST_F(CliOutput, AnApplySaysWhatItsVersionDoesToTheRunningLeads) {
    ASSERT_EQ(env_->run({"accounts", "connect", "--login-token", "token-2", "--country", "FR", "--label", "sender-2"})
                  .exit_code,
              0);
    std::string two = campaign_yaml("running", 12);
    two.replace(two.find("accounts: [sender-1]"), 20, "accounts: [sender-1, sender-2]");
    ASSERT_EQ(apply(two).exit_code, 0);
    auto shown = env_->run({"budget", "show", "running", "--format", "json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.output;
    const json budget = json::parse(shown.output);
    const std::string committed =
        std::to_string(budget["spent"].get<std::int64_t>() + budget["reserved"].get<std::int64_t>());
    ASSERT_GE(std::stoll(committed), 2) << "the audience search of 12 people costs 2 credits or more";
    const std::string on_two = env_->scalar(
        "SELECT count(*) FROM enrollments e JOIN accounts a USING (account_id) WHERE a.label = 'sender-2'");
    ASSERT_GT(std::stoll(on_two), 0);
    // `campaign validate` says when an apply would send the (billed) search again: a new first
    // account does; the same file does not.
    std::string swapped = two;
    swapped.replace(swapped.find("accounts: [sender-1, sender-2]"), 30, "accounts: [sender-2, sender-1]");
    std::ofstream(file_) << swapped;
    auto validated = env_->run({"campaign", "validate", file_});
    ASSERT_EQ(validated.exit_code, 0) << validated.output;
    EXPECT_NE(validated.output.find("note: an apply sends the audience search again (up to 12 people, through account "
                                    "'sender-2', billed in the campaign's budget"),
              std::string::npos)
        << validated.output;
    EXPECT_NE(validated.output.find("the first account differs from version 1's"), std::string::npos)
        << validated.output;
    std::ofstream(file_) << two;
    validated = env_->run({"campaign", "validate", file_});
    ASSERT_EQ(validated.exit_code, 0) << validated.output;
    EXPECT_EQ(validated.output.find("sends the audience search again"), std::string::npos) << validated.output;
    // The first account named by its id rather than its label is the same sender: no search.
    const auto sender_1 = env_->scalar("SELECT account_id FROM accounts WHERE label = 'sender-1'");
    std::string by_id = two;
    by_id.replace(by_id.find("accounts: [sender-1, sender-2]"), 30, "accounts: [" + sender_1 + ", sender-2]");
    std::ofstream(file_) << by_id;
    validated = env_->run({"campaign", "validate", file_});
    ASSERT_EQ(validated.exit_code, 0) << validated.output;
    EXPECT_EQ(validated.output.find("sends the audience search again"), std::string::npos) << validated.output;
    const auto searches_before = env_->scalar("SELECT count(*) FROM ledger_transfers WHERE action = 'search_people'");
    auto by_id_applied = env_->run({"campaign", "apply", file_});
    ASSERT_EQ(by_id_applied.exit_code, 0) << by_id_applied.output;
    EXPECT_NE(by_id_applied.output.find("its search was not sent again"), std::string::npos) << by_id_applied.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE action = 'search_people'"), searches_before);

    std::string one = campaign_yaml("running", 12);
    one.replace(one.find("budget_credits: 500\nbudget_per_day_credits: 100"), 47,
                "budget_credits: 1\nstart_at: \"2099-01-05T09:00:00Z\"");
    ASSERT_NE(one.find("start_at"), std::string::npos);
    std::ofstream(file_) << one;
    // `campaign validate` says beforehand what the apply will say, from the apply rolled back:
    // nothing changes.
    const auto state = [this] {
        return env_->scalar("SELECT count(*) FROM campaign_versions") + "|" +
               env_->scalar("SELECT string_agg(total::text, ',') FROM ledger_budgets") + "|" +
               env_->scalar("SELECT count(*) FROM enrollments WHERE next_run_at > now() + interval '1 year'") + "|" +
               env_->scalar("SELECT string_agg(COALESCE(start_at::text, '-'), ',') FROM campaigns");
    };
    const auto before = state();
    validated = env_->run({"campaign", "validate", file_});
    ASSERT_EQ(validated.exit_code, 0) << validated.output;
    EXPECT_NE(validated.output.find("warning: if applied now, this version's budget of 1 credit is no more than what is "
                                    "already spent or reserved (" + committed + " credits)"),
              std::string::npos)
        << validated.output;
    EXPECT_NE(validated.output.find("warning: if applied now, 12 live leads wait for start_at (2099-01-05T09:00:00Z)"),
              std::string::npos)
        << validated.output;
    EXPECT_NE(validated.output.find("warning: if applied now, " + on_two + " live lead"), std::string::npos)
        << validated.output;
    EXPECT_EQ(state(), before);
    auto r = env_->run({"campaign", "apply", file_, "--move-running"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("warning: this version's budget of 1 credit is no more than what is already spent or reserved (" +
                            committed + " credits): nothing is available"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("warning: 12 live leads wait for start_at (2099-01-05T09:00:00Z)"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("warning: " + on_two + " live lead"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(" on senders this version no longer lists (sender-2 ("), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("): " + on_two + "): a lead keeps the sender it was given"), std::string::npos) << r.output;
    // The leads stayed where they were.
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments e JOIN accounts a USING (account_id) "
                           "WHERE a.label = 'sender-2' AND e.status IN ('ready', 'waiting', 'calling')"),
              on_two);

    // A version that keeps its budget does not say it again (the leads on sender-2 are said again:
    // they are still there).
    std::string note = one;
    note.replace(note.find("Hi {{first_name}}"), 17, "Hello {{first_name}}");
    std::ofstream(file_) << note;
    auto again = env_->run({"campaign", "apply", file_});
    ASSERT_EQ(again.exit_code, 0) << again.output;
    EXPECT_EQ(again.output.find("is no more than what is already spent"), std::string::npos) << again.output;
}

// A disconnected sender beside a connected one does not block an apply: a warning, and the new
// leads go to the connected sender.
TEST_F(CliOutput, ADisconnectedSenderBesideAConnectedOneIsAWarning) {
    ASSERT_EQ(env_->run({"accounts", "connect", "--login-token", "token-2", "--country", "FR", "--label", "sender-2"})
                  .exit_code,
              0);
    const auto account = env_->scalar("SELECT account_id FROM accounts WHERE label = 'sender-1'");
    ASSERT_EQ(http_client("127.0.0.1", sandbox_->control_port())
                  .post("/control/events", {{"type", "disconnection"}, {"account_id", account}})
                  .status,
              200);
    ASSERT_EQ(env_->run({"accounts", "sync"}).exit_code, 0);
    ASSERT_EQ(env_->scalar("SELECT connected FROM accounts WHERE label = 'sender-1'"), "f");
    std::string yaml = campaign_yaml("outage", 6);
    yaml.replace(yaml.find("accounts: [sender-1]"), 20, "accounts: [sender-2, sender-1]");
    auto r = apply(yaml);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("account 'sender-1' is disconnected: its live leads wait until it logs in again"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments e JOIN accounts a USING (account_id) "
                           "WHERE a.label = 'sender-1'"),
              "0");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments e JOIN accounts a USING (account_id) "
                           "WHERE a.label = 'sender-2'"),
              "6");
    // Alone, it is refused, and nothing is stored.
    auto alone = apply(campaign_yaml("alone", 2));
    EXPECT_EQ(alone.exit_code, 2) << alone.output;
    EXPECT_NE(alone.output.find("account 'sender-1' is disconnected (log it in again, or remove it)"),
              std::string::npos)
        << alone.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM campaigns WHERE name = 'alone'"), "0");
}

// An account has one quota day, whichever campaign calls through it: the first campaign applied
// with it gives it its time zone, a campaign in another zone is told so, and `accounts limits
// --time-zone` changes it (a bad zone changes nothing).
TEST_F(CliOutput, AnAccountHasOneQuotaDayInItsOwnTimeZone) {
    auto zone_of_sender = [this]() -> json {
        auto r = env_->run({"accounts", "list", "--format", "json"});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        auto j = json::parse(r.output);
        return j["accounts"].empty() ? json("no account") : j["accounts"][0]["time_zone"];
    };
    EXPECT_TRUE(zone_of_sender().is_null()) << "no campaign has used it yet";
    std::string far = campaign_yaml("zone-far", 3);
    far.replace(far.find("time_zone: UTC"), 14, "time_zone: Pacific/Kiritimati");
    auto first = apply(far);
    ASSERT_EQ(first.exit_code, 0) << first.output;
    EXPECT_EQ(first.output.find("quota day"), std::string::npos) << first.output;
    EXPECT_EQ(zone_of_sender(), "Pacific/Kiritimati") << "the first campaign applied with it chose its zone";

    auto other = apply(campaign_yaml("zone-utc", 3));
    ASSERT_EQ(other.exit_code, 0) << other.output;
    EXPECT_NE(other.output.find("counts its day quotas in Pacific/Kiritimati, not in this campaign's time zone (UTC)"),
              std::string::npos)
        << other.output;
    EXPECT_NE(other.output.find("warning: account sender-1 (" +
                                env_->scalar("SELECT account_id FROM accounts WHERE label = 'sender-1'") +
                                ") counts its day quotas"),
              std::string::npos)
        << other.output;
    EXPECT_EQ(zone_of_sender(), "Pacific/Kiritimati") << "a later campaign does not move it";
    // `validate` previews it for a new version, and not for the same file, whose apply says nothing.
    auto same = env_->run({"campaign", "validate", file_});
    ASSERT_EQ(same.exit_code, 0) << same.output;
    EXPECT_EQ(same.output.find("if applied now"), std::string::npos) << same.output;
    std::string next = campaign_yaml("zone-utc", 3);
    next.replace(next.find("Hi {{first_name}}"), 17, "Hello {{first_name}}");
    std::ofstream(file_) << next;
    auto changed = env_->run({"campaign", "validate", file_});
    ASSERT_EQ(changed.exit_code, 0) << changed.output;
    EXPECT_NE(changed.output.find("warning: if applied now, account sender-1 ("), std::string::npos) << changed.output;

    auto bad = env_->run({"accounts", "limits", "sender-1", "--time-zone", "Mars/Olympus_Mons"});
    EXPECT_EQ(bad.exit_code, 2) << bad.output;
    EXPECT_NE(bad.output.find("--time-zone: unknown time zone 'Mars/Olympus_Mons'"), std::string::npos) << bad.output;
    EXPECT_EQ(zone_of_sender(), "Pacific/Kiritimati");

    auto set = env_->run({"accounts", "limits", "sender-1", "--time-zone", "UTC"});
    ASSERT_EQ(set.exit_code, 0) << set.output;
    EXPECT_NE(set.output.find(": changed"), std::string::npos) << set.output;
    EXPECT_NE(set.output.find("quota day: UTC"), std::string::npos) << set.output;
    EXPECT_EQ(zone_of_sender(), "UTC");
    auto quiet = apply(campaign_yaml("zone-same", 3));
    ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
    EXPECT_EQ(quiet.output.find("quota day"), std::string::npos) << quiet.output;
    auto list = env_->run({"accounts", "list"});
    ASSERT_EQ(list.exit_code, 0) << list.output;
    EXPECT_NE(list.output.find("quota day "), std::string::npos) << list.output;
    EXPECT_NE(list.output.find(" in UTC"), std::string::npos) << list.output;

    // A new account's ramp-up keeps today's limit below its own day quota: the listing says so.
    ASSERT_EQ(env_->run({"accounts", "limits", "sender-1", "--invite-per-day", "40"}).exit_code, 0);
    env_->set("ORCH_RAMP_UP", "true");
    auto ramping = env_->run({"accounts", "list"});
    ASSERT_EQ(ramping.exit_code, 0) << ramping.output;
    // Today's limit is the ramp's: 20 on the account's first day, 10 more each day after (the
    // account's first day is kept in Redis, which other tests of the run share: a run that
    // crosses midnight UTC finds it a day old).
    std::smatch ramped;
    ASSERT_TRUE(std::regex_search(ramping.output, ramped, std::regex(R"(/(\d+) \(\d+ left\) ramp-up to 40)")))
        << ramping.output;
    EXPECT_GE(std::stoi(ramped[1].str()), 20) << ramping.output;
    EXPECT_LT(std::stoi(ramped[1].str()), 40) << ramping.output;
    EXPECT_EQ(std::stoi(ramped[1].str()) % 10, 0) << ramping.output;
    // The apply's warning counts with the sender's own day quota, not the default (80): a trial
    // read "up to 80 a day" for an account set to 5. Its 3 new leads are the search's next 3.
    auto own = apply(campaign_yaml("zone-own", 6));
    ASSERT_EQ(own.exit_code, 0) << own.output;
    EXPECT_NE(own.output.find("3 enrolled"), std::string::npos) << own.output;
    EXPECT_NE(own.output.find(" more each day up to 40 a day (the senders' own day quota, `accounts limits`)"),
              std::string::npos)
        << own.output;

    // A raised quota says how many of the account's waiting leads it woke (as the worker's gate
    // writes such waits: due at the account's next midnight, code day_quota).
    const std::string waiting = env_->scalar(
        "WITH u AS (UPDATE enrollments SET status = 'waiting', wait_code = 'day_quota', "
        "due_at = now() + interval '1 day', next_run_at = now() + interval '1 day' "
        "WHERE status IN ('ready', 'waiting') RETURNING 1) SELECT count(*) FROM u");
    ASSERT_NE(waiting, "0");
    auto raised = env_->run({"accounts", "limits", "sender-1", "--invite-per-day", "45"});
    ASSERT_EQ(raised.exit_code, 0) << raised.output;
    EXPECT_NE(raised.output.find(waiting + " leads waiting for its quotas (or a campaign's cap on it) are due again"),
              std::string::npos)
        << raised.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE wait_code = 'day_quota' AND next_run_at > now()"),
              "0");
}

// Days are ISO dates, never day numbers; flags name their type and default.
TEST_F(CliOutput, IsoDatesAndTypedFlags) {
    auto r = env_->run({"accounts", "list", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = json::parse(r.output);
    ASSERT_FALSE(j["accounts"].empty()) << r.output;
    ASSERT_TRUE(j["accounts"][0]["limits"].is_object()) << r.output;
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char today[16];
    std::strftime(today, sizeof today, "%Y-%m-%d", &tm);
    // No campaign has used the account: no time zone chosen, its quota day is UTC's.
    EXPECT_TRUE(j["accounts"][0]["time_zone"].is_null()) << r.output;
    EXPECT_EQ(j["accounts"][0]["limits"]["time_zone"], "UTC") << r.output;
    EXPECT_EQ(j["accounts"][0]["limits"]["date"], today) << r.output;
    auto csv = env_->run({"accounts", "list", "--format", "csv", "--section", "quotas"});
    ASSERT_EQ(csv.exit_code, 0) << csv.output;
    EXPECT_EQ(csv.output.rfind("account,action,day,time_zone,used_today,limit_today", 0), 0u) << csv.output;
    EXPECT_NE(csv.output.find(std::string(",") + today + ","), std::string::npos) << csv.output;

    auto help = env_->run({"--help"});
    EXPECT_EQ(help.exit_code, 0) << help.output;
    EXPECT_TRUE(std::regex_search(help.output, std::regex(R"(--lease-seconds INT=90 )"))) << help.output;
    EXPECT_TRUE(std::regex_search(help.output, std::regex(R"(--admin-body-limit-bytes INT=1048576)"))) << help.output;
    EXPECT_TRUE(std::regex_search(help.output, std::regex(R"(--log-level TEXT=info )"))) << help.output;
    EXPECT_TRUE(std::regex_search(help.output, std::regex(R"(--ramp-up BOOL=)"))) << help.output;
    EXPECT_EQ(help.output.find("--admin-token TEXT="), std::string::npos) << "a secret's default is not shown";
    auto list_help = env_->run({"campaign", "list", "--help"});
    EXPECT_NE(list_help.output.find("--format FORMAT:{table,json,csv}=table"), std::string::npos) << list_help.output;
    // A subcommand's help, which lists only its own flags, points at the settings.
    for (const std::vector<std::string>& args : {std::vector<std::string>{"worker", "--help"},
                                                 std::vector<std::string>{"campaign", "list", "--help"}}) {
        auto sub_help = env_->run(args);
        EXPECT_EQ(sub_help.exit_code, 0) << sub_help.output;
        EXPECT_NE(sub_help.output.find("`orchestrator --help` lists them"), std::string::npos) << sub_help.output;
    }
    // A flag's shown default does not override the environment (settings precedence holds).
    env_->set("ORCH_LOG_LEVEL", "nonsense");
    auto bad = env_->run({"campaign", "list"});
    EXPECT_EQ(bad.exit_code, 2) << bad.output;
    EXPECT_NE(bad.output.find("log_level"), std::string::npos) << bad.output;
}

// Every listing command takes csv (RFC 4180: a header line, CRLF line ends), and a connected
// account's status is the word the API used, not one of our own.
TEST_F(CliOutput, EveryListingTakesCsv) {
    ASSERT_EQ(apply(campaign_yaml("listed", 3)).exit_code, 0);
    const std::vector<std::pair<std::vector<std::string>, std::string>> listings = {
        {{"campaign", "list"}, "campaign,state,"},
        {{"campaign", "versions", "listed"}, "version,created_at,enrollments,current,digest\r\n1,"},
        {{"accounts", "list"}, "account,label,status,connected,webhook,time_zone\r\n"},
        {{"leads", "list", "listed"}, "lead_id,enrollment_id,profile_url,"},
        {{"dnc", "list"}, "id,kind,profile_url,company,reason,added_by,added_at\r\n"},
        {{"inbox", "list"}, "id,received_at,campaign,account_id,lead_id,profile_url,"},
        {{"events", "quarantine"}, "quarantine_id,received_at,account_id,channel,source_id,reason,"},
    };
    for (const auto& [args, header] : listings) {
        auto cmd = args;
        cmd.insert(cmd.end(), {"--format", "csv"});
        auto r = env_->run(cmd);
        ASSERT_EQ(r.exit_code, 0) << args[0] << " " << args[1] << ": " << r.output;
        EXPECT_EQ(r.output.rfind(header, 0), 0u) << args[0] << " " << args[1] << ": " << r.output;
        // Every line ends in CRLF.
        std::size_t lf = 0, crlf = 0;
        for (std::size_t i = 0; i < r.output.size(); ++i) {
            lf += r.output[i] == '\n' ? 1 : 0;
            crlf += r.output[i] == '\n' && i > 0 && r.output[i - 1] == '\r' ? 1 : 0;
        }
        EXPECT_GT(lf, 0u) << args[0] << " " << args[1] << ": " << r.output;
        EXPECT_EQ(crlf, lf) << args[0] << " " << args[1] << ": " << r.output;
    }
    auto versions = env_->run({"campaign", "versions", "listed"});
    ASSERT_EQ(versions.exit_code, 0) << versions.output;
    EXPECT_TRUE(std::regex_search(versions.output, std::regex(R"(\n +1 +\S+ +3 +yes +[0-9a-f]{12}\n)"))) << versions.output;

    auto accounts = env_->run({"accounts", "list", "--format", "json"});
    ASSERT_EQ(accounts.exit_code, 0) << accounts.output;
    EXPECT_EQ(json::parse(accounts.output)["accounts"][0]["api_status"], "connected") << accounts.output;
}

// Tables line up on a terminal whatever the characters: a wide (CJK) character takes two
// columns, so the next column starts where the header's does on screen, not by bytes or code
// points; a text too long for its column is cut between characters.
TEST_F(CliOutput, TablesLineUpWithWideCharacters) {
    ASSERT_EQ(env_->run({"dnc", "add", "https://n.example/in/abc"}).exit_code, 0);
    ASSERT_EQ(env_->run({"dnc", "add", "https://n.example/in/j\u00fcrgen-\u65e5\u672c\u8a9e"}).exit_code, 0);
    auto r = env_->run({"dnc", "list"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // The screen column of `needle` in `line`: code points, plus one for each of the three wide
    // characters before it.
    auto column = [](const std::string& line, const std::string& needle) {
        const auto at = line.find(needle);
        if (at == std::string::npos) {
            return std::string::npos;
        }
        std::size_t points = 0;
        for (std::size_t i = 0; i < at; ++i) {
            points += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 ? 1 : 0;
        }
        const bool wide = line.substr(0, at).find("\u65e5") != std::string::npos;
        return points + (wide ? 3 : 0);
    };
    std::istringstream lines(r.output);
    std::string header, first, second;
    std::getline(lines, header);
    std::getline(lines, first);
    std::getline(lines, second);
    const auto added = column(header, "added");
    ASSERT_NE(added, std::string::npos) << r.output;
    EXPECT_EQ(column(first, "20"), added) << r.output;
    EXPECT_EQ(column(second, "20"), added) << r.output;
}

// Mistakes on the command line are said, with exit 2: a filter naming nothing, an empty name, a
// directory or no path given as a file, a sender the database does not know (estimate looks the
// senders up as validate does when a database is configured).
TEST_F(CliOutput, NamesThatNameNothingAreRefused) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"inbox", "list", "--campaign", "nope"},
          std::vector<std::string>{"inbox", "list", "--account", "nope"},
          std::vector<std::string>{"inbox", "list", "--campaign", ""}, std::vector<std::string>{"budget", "show", ""},
          std::vector<std::string>{"campaign", "estimate", ""}, std::vector<std::string>{"campaign", "validate", "/tmp"},
          std::vector<std::string>{"dnc", "import", "/tmp"}}) {
        auto r = env_->run(args);
        EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.output;
    }
    EXPECT_NE(env_->run({"inbox", "list", "--campaign", "nope"}).output.find("no campaign named 'nope'"), std::string::npos);
    EXPECT_NE(env_->run({"campaign", "validate", "/tmp"}).output.find("it is a directory"), std::string::npos);
    EXPECT_NE(env_->run({"campaign", "estimate", ""}).output.find("no file was named"), std::string::npos);
    // A file that never ends (a device) is read up to the limit and refused, not read until
    // memory runs out: a campaign file, an audience file, a do-not-contact import, a configuration.
    auto endless = env_->run({"campaign", "validate", "/dev/zero"});
    EXPECT_EQ(endless.exit_code, 2) << endless.output;
    EXPECT_NE(endless.output.find("'/dev/zero': cannot read the campaign file: it is larger than 1 MiB"),
              std::string::npos)
        << endless.output;
    const std::string zero_csv = file_ + ".zero.csv";
    std::filesystem::remove(zero_csv);
    std::filesystem::create_symlink("/dev/zero", zero_csv);
    std::ofstream(file_) << "name: e\naccounts: [nobody]\naudience:\n  file: " << zero_csv << "\n"
                            "schedule:\n  time_zone: UTC\nbudget_credits: 50\nsteps:\n  - id: v\n    kind: visit\n";
    auto audience = env_->run({"campaign", "validate", file_});
    std::filesystem::remove(zero_csv);
    EXPECT_EQ(audience.exit_code, 2) << audience.output;
    EXPECT_NE(audience.output.find("cannot read '" + zero_csv + "': it is larger than 64 MiB"), std::string::npos)
        << audience.output;
    auto dnc = env_->run({"dnc", "import", "/dev/zero"});
    EXPECT_EQ(dnc.exit_code, 2) << dnc.output;
    EXPECT_NE(dnc.output.find("it is larger than 64 MiB"), std::string::npos) << dnc.output;
    auto config = env_->run({"--config", "/dev/zero", "campaign", "list"});
    EXPECT_EQ(config.exit_code, 2) << config.output;
    EXPECT_NE(config.output.find("cannot read the configuration file: it is larger than 1 MiB"), std::string::npos)
        << config.output;
    auto no_config = env_->run({"--config", "", "campaign", "list"});
    EXPECT_EQ(no_config.exit_code, 2) << no_config.output;
    EXPECT_NE(no_config.output.find("--config: no file was named (an empty path)"), std::string::npos)
        << no_config.output;

    std::ofstream(file_) << "name: e\naccounts: [nobody]\naudience:\n  search:\n    title: Engineer\n"
                            "schedule:\n  time_zone: UTC\nbudget_credits: 50\nsteps:\n  - id: v\n    kind: visit\n";
    auto unknown = env_->run({"campaign", "estimate", file_});
    EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
    EXPECT_NE(unknown.output.find("unknown account 'nobody'"), std::string::npos) << unknown.output;
}

// `accounts sync` says which stored accounts the API no longer lists, and changes none of them.
TEST_F(CliOutput, SyncSaysWhichStoredAccountsTheApiNoLongerLists) {
    pqxx::connection c(env_->database_url());
    pqxx::work tx(c);
    tx.exec("INSERT INTO accounts (account_id, label, connected) VALUES ('gone-1', 'old-sender', true)");
    tx.commit();
    auto r = env_->run({"accounts", "sync"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("synced 1 account\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("warning: account gone-1 ('old-sender') is stored here but the API no longer lists it"),
              std::string::npos)
        << r.output;
    // Only that one: the account the API lists is not warned of.
    EXPECT_EQ(r.output.find("warning: account "), r.output.rfind("warning: account ")) << r.output;
    pqxx::nontransaction read(c);
    EXPECT_TRUE(read.exec("SELECT connected FROM accounts WHERE account_id = 'gone-1'")[0][0].as<bool>());
}

// `accounts sync` says which accounts the API lists as not connected (stored with their status):
// before, an unlabelled inactive row appeared in `accounts list` without a word.
TEST_F(CliOutput, SyncSaysWhichAccountsAreNotConnected) {
    const auto account = env_->scalar("SELECT account_id FROM accounts WHERE label = 'sender-1'");
    auto fired = http_client("127.0.0.1", sandbox_->control_port())
                     .post("/control/events", {{"type", "disconnection"}, {"account_id", account}});
    ASSERT_EQ(fired.status, 200) << fired.body;
    auto r = env_->run({"accounts", "sync"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("warning: account " + account + " ('sender-1') is not connected (status "), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("its calls are refused until it logs in again (accounts connect)"), std::string::npos)
        << r.output;
    EXPECT_EQ(env_->scalar("SELECT connected FROM accounts WHERE label = 'sender-1'"), "f");
    // Connected again: no warning.
    ASSERT_EQ(env_->run({"accounts", "connect", "--login-token", "token-1", "--country", "FR", "--label", "sender-1"})
                  .exit_code,
              0);
    r = env_->run({"accounts", "sync"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("is not connected"), std::string::npos) << r.output;
}

// No error reaches the terminal with a control character of what was typed in it: the
// command's own errors and CLI11's are printed through terminal_lines.
TEST_F(CliOutput, ErrorsNeverPrintAControlCharacterTheyQuote) {
    ASSERT_EQ(apply(campaign_yaml("quoted", 2)).exit_code, 0);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"leads", "list", "quoted", "--state", "x\x1b[31m"},
          std::vector<std::string>{"accounts", "limits", "x\x1b[31m", "--invite-per-day", "5"},
          std::vector<std::string>{"campaign", "list", "--format", "x\x1b[31m"},
          std::vector<std::string>{"budget", "set", "quoted", "--credits", "9\x1b[31m"},
          std::vector<std::string>{"campaign", "show", "x\x1b[31m"}}) {
        auto r = env_->run(args);
        EXPECT_NE(r.exit_code, 0) << args[0] << " " << args[1];
        EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << args[0] << " " << args[1] << ": " << r.output;
        EXPECT_NE(r.output.find("\\x1b"), std::string::npos) << args[0] << " " << args[1] << ": " << r.output;
    }
}

// An id of more digits than any id has is said to be too large, not "not a positive integer".
TEST_F(CliOutput, AnIdTooLargeForAnyIdIsSaidToBeTooLarge) {
    ASSERT_EQ(apply(campaign_yaml("big", 2)).exit_code, 0);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"leads", "show", "big", "99999999999999999999"},
          std::vector<std::string>{"leads", "stop", "big", "99999999999999999999"},
          std::vector<std::string>{"inbox", "show", "99999999999999999999"}}) {
        auto r = env_->run(args);
        EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.output;
        EXPECT_NE(r.output.find(" is too large: no id is above 9223372036854775807, got '99999999999999999999'"),
                  std::string::npos)
            << args[0] << " " << args[1] << ": " << r.output;
    }
    // Every bad id of a lead action at once, not the first alone.
    auto several = env_->run({"leads", "stop", "big", "0", "abc", "1"});
    EXPECT_EQ(several.exit_code, 2) << several.output;
    EXPECT_NE(several.output.find("LEAD_ID must be a positive integer, got '0'; LEAD_ID must be a positive integer, "
                                  "got 'abc'; nothing changed"),
              std::string::npos)
        << several.output;
    for (const std::string bad : {"0", "1x"}) {
        auto r = env_->run({"leads", "show", "big", bad});
        EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
        EXPECT_NE(r.output.find("LEAD_ID must be a positive integer, got '" + bad + "'"), std::string::npos)
            << bad << ": " << r.output;
    }
}

// A name quoted in an error spells a space that is not a plain one and a character that shows as
// nothing, so that 'sender 1' with a no-break space does not read as 'sender 1'; `dnc add` names
// the flag once and quotes what was typed spelled.
TEST_F(CliOutput, ErrorsSpellTheSpacesAndInvisibleCharactersOfANameTheyQuote) {
    ASSERT_EQ(apply(campaign_yaml("quoted", 2)).exit_code, 0);
    const std::string nbsp = "sender\xc2\xa0" "1";
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"accounts", "limits", nbsp, "--invite-per-day", "5"},
          std::vector<std::string>{"inbox", "list", "--account", nbsp},
          std::vector<std::string>{"leads", "move", "quoted", "1", "--account", nbsp},
          std::vector<std::string>{"leads", "list", "quoted", "--state", nbsp},
          std::vector<std::string>{"inbox", "show", nbsp}}) {
        auto r = env_->run(args);
        EXPECT_NE(r.exit_code, 0) << args[0] << " " << args[1] << ": " << r.output;
        EXPECT_NE(r.output.find("sender\\u{00a0}1"), std::string::npos) << args[0] << " " << args[1] << ": " << r.output;
        EXPECT_EQ(r.output.find("\xc2\xa0"), std::string::npos) << args[0] << " " << args[1] << ": " << r.output;
    }
    auto added = env_->run({"dnc", "add", "--company", "A\tB", "--company", "A\xe2\x80\x8b" "B",
                            "https://n.example/in/a\xe2\x80\x8b" "b"});
    EXPECT_EQ(added.exit_code, 2) << added.output;
    EXPECT_NE(added.output.find("\n  --company 'A\\tB': has a control character (U+0009) at byte 2\n"), std::string::npos)
        << added.output;
    EXPECT_NE(added.output.find("\n  --company 'A\\u{200b}B' has invisible character U+200B at byte 2"),
              std::string::npos)
        << added.output;
    EXPECT_NE(added.output.find("\n  'https://n.example/in/a\\u{200b}b' has a zero-width space"), std::string::npos)
        << added.output;
    EXPECT_EQ(added.output.find("company: "), std::string::npos) << added.output;
    EXPECT_EQ(added.output.find("\xe2\x80\x8b"), std::string::npos) << added.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM do_not_contact"), "0");
}

// A value that is not UTF-8 is refused at parse, exit 2 naming its option, before it reaches
// PostgreSQL or the JSON library (exit 1 with their error); a path may be any bytes.
TEST_F(CliOutput, AValueThatIsNotUtf8IsRefusedNamingItsOption) {
    ASSERT_EQ(apply(campaign_yaml("bytes", 2)).exit_code, 0);
    const auto before = env_->scalar("SELECT count(*) FROM do_not_contact") + "|" +
                        env_->scalar("SELECT count(*) FROM accounts") + "|" +
                        env_->scalar("SELECT COALESCE(sum(total), 0) FROM ledger_budgets");
    for (const auto& [args, option] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"campaign", "show", "caf\xe9"}, "NAME"},
             {{"budget", "set", "bytes\xff", "--credits", "9"}, "CAMPAIGN"},
             {{"leads", "list", "bytes\xc3"}, "CAMPAIGN"},
             {{"dnc", "add", "https://network.example/in/x", "--reason", "asked\xff"}, "--reason"},
             {{"accounts", "connect", "--login-token", "token-9", "--country", "FR", "--email", "a\xff@b.example"},
              "--email"}}) {
        auto r = env_->run(args);
        EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.output;
        EXPECT_NE(r.output.find("not UTF-8 text"), std::string::npos) << args[0] << " " << args[1] << ": " << r.output;
        EXPECT_NE(r.output.find(option), std::string::npos) << args[0] << " " << args[1] << ": " << r.output;
    }
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM do_not_contact") + "|" + env_->scalar("SELECT count(*) FROM accounts") +
                  "|" + env_->scalar("SELECT COALESCE(sum(total), 0) FROM ledger_budgets"),
              before);
    // A path is not text: a campaign file whose name is not UTF-8 is read.
    const std::string latin1 = file_ + "-caf\xe9.yaml";
    std::ofstream(latin1) << campaign_yaml("latin", 2);
    auto r = env_->run({"campaign", "validate", latin1});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const std::string config = file_ + "-caf\xe9-settings.yaml";
    std::ofstream(config) << "batch_size: 10\n";
    auto configured = env_->run({"--config", config, "campaign", "list"});
    EXPECT_EQ(configured.exit_code, 0) << configured.output;
    std::remove(latin1.c_str());
    std::remove(config.c_str());
}

// `validate` previews the apply by running it and rolling it back: when that fails (here a
// database role that may read and lock rows, as the plan does, but not insert), it says that part
// was not checked and validates the rest, exit 0.
TEST_F(CliOutput, ValidateSaysTheApplysWarningsWereNotCheckedWhenThePreviewFails) {
    ASSERT_EQ(apply(campaign_yaml("readonly", 3)).exit_code, 0);
    const std::string role = "orch_reader_" + std::to_string(::getpid());
    env_->scalar("DROP ROLE IF EXISTS " + role);
    env_->scalar("CREATE ROLE " + role + " LOGIN");
    env_->scalar("GRANT SELECT, UPDATE ON ALL TABLES IN SCHEMA public TO " + role);
    std::string url = env_->database_url();
    const auto at = url.find('@');
    ASSERT_NE(at, std::string::npos) << url;
    url = "postgresql://" + role + url.substr(at);
    std::string next = campaign_yaml("readonly", 3);
    next.replace(next.find("Hi {{first_name}}"), 17, "Hello {{first_name}}");
    std::ofstream(file_) << next;
    auto r = env_->run({"campaign", "validate", file_, "--database-url", url});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(": ok (campaign 'readonly'"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("warning: what an apply would warn of is not checked: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("permission denied"), std::string::npos) << r.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM campaign_versions"), "1");
    env_->scalar("DROP OWNED BY " + role);
    env_->scalar("DROP ROLE " + role);
}

// The estimate's finish date is a day the schedule works: with only Wednesdays, a Wednesday.
// The sender's own quota (10 invites a day) makes it 10 working days, whatever today is.
TEST_F(CliOutput, TheEstimatesFinishDateIsAWorkingDay) {
    ASSERT_EQ(env_->run({"accounts", "limits", "sender-1", "--invite-per-day", "10"}).exit_code, 0);
    std::ofstream(file_) << "name: wednesdays\naccounts: [sender-1]\naudience:\n  search:\n    title: Engineer\n"
                            "  total_results: 100\nschedule:\n  time_zone: UTC\n  days: [wed]\n  hours: \"00:00-24:00\"\n"
                            "budget_credits: 500\nsteps:\n  - id: i\n    kind: invite\n";
    auto r = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto day = json::parse(r.output)["finish_around"].get<std::string>();
    std::tm tm{};
    ASSERT_NE(strptime(day.c_str(), "%Y-%m-%d", &tm), nullptr) << day;
    tm.tm_hour = 12;
    const std::time_t t = timegm(&tm);
    std::tm back{};
    gmtime_r(&t, &back);
    EXPECT_EQ(back.tm_wday, 3) << day << " is not a Wednesday";
    // The duration said is the days from today (UTC here) to that date, not a week's average:
    // 10 working days of Wednesdays alone end 9 or 10 weeks out, which the average (10 x 7 = 70
    // days) only meets on some weekdays.
    const auto j = json::parse(r.output);
    const std::time_t now = std::time(nullptr);
    const auto today = now - now % 86'400;
    const auto days = static_cast<int>((t - 12 * 3600 - today) / 86'400);
    EXPECT_EQ(j["days_to_finish"], days) << r.output;
    auto text = env_->run({"campaign", "estimate", file_});
    EXPECT_GE(days, 63) << r.output;
    // The table says the JSON's count (the two runs may straddle a midnight).
    const auto said = j["days_to_finish"].get<int>();
    EXPECT_NE(text.output.find("duration     about " + std::to_string(said) + " calendar days"), std::string::npos)
        << text.output;
    EXPECT_NE(text.output.find("finishing around " + day), std::string::npos) << text.output;
}

// A search audience applied already is kept by an apply of the same file (no search, nobody
// enrolled): the estimate forecasts no new leads and no search, not the whole audience again.
TEST_F(CliOutput, TheEstimateOfASearchAppliedAlreadyForecastsNoSearchAndNoLeads) {
    const std::string yaml = campaign_yaml("searched", 3);
    std::ofstream(file_) << yaml;
    auto before = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(before.exit_code, 0) << before.output;
    const auto b = json::parse(before.output);
    EXPECT_EQ(b["leads"], 3) << before.output;
    EXPECT_EQ(b["audience_search"], "sent") << before.output;
    EXPECT_GT(b["audience_credits"].get<int>(), 0) << before.output;
    ASSERT_EQ(apply(yaml).exit_code, 0);
    auto after = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(after.exit_code, 0) << after.output;
    const auto a = json::parse(after.output);
    EXPECT_EQ(a["leads"], 0) << after.output;
    EXPECT_EQ(a["audience_credits"], 0) << after.output;
    EXPECT_EQ(a["audience_search"], "kept") << after.output;
    auto text = env_->run({"campaign", "estimate", file_});
    EXPECT_NE(text.output.find("Estimate for 'searched': 0 leads, 1 sender\n  (applied already with this audience: an "
                               "apply now keeps the campaign's leads, sends no search and enrolls nobody"),
              std::string::npos)
        << text.output;
    // The sweep's range stays a range with no new leads (it said "up to 1" beside "at least 2").
    EXPECT_GE(a["sweep"]["credits_per_sender_and_sweep_max"].get<int>(),
              a["sweep"]["credits_per_sender_and_sweep_min"].get<int>())
        << after.output;
    // A search sent again may find the campaign's leads again, whom an apply does not enroll twice.
    std::string more = yaml;
    more.replace(more.find("total_results: 3"), 16, "total_results: 5");
    std::ofstream(file_) << more;
    auto again = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(again.exit_code, 0) << again.output;
    const auto g = json::parse(again.output);
    EXPECT_EQ(g["audience_search"], "sent") << again.output;
    EXPECT_EQ(g["search_overlap"], json::parse(R"({"in_this_campaign": 3, "leads_at_least": 2})")) << again.output;
    auto again_text = env_->run({"campaign", "estimate", file_});
    EXPECT_NE(again_text.output.find("(the campaign has 3 leads already: those the search finds again are not enrolled "
                                     "again, so an apply now enrolls between 2 and 5"),
              std::string::npos)
        << again_text.output;
}

// A file audience's people an apply would skip (the file's exclusions, the do-not-contact list,
// another campaign's leads) are left out of the estimate, as the apply leaves them out (a trial:
// 40 estimated, 29 enrolled).
TEST_F(CliOutput, TheEstimateOfAFileLeavesOutThePeopleAnApplySkips) {
    ASSERT_EQ(apply(campaign_yaml("first", 3)).exit_code, 0);
    const auto taken = env_->scalar("SELECT string_agg(profile_url || ',X', E'\\n' ORDER BY lead_id) FROM leads");
    const std::string base = "https://www.network.example/in/";
    ASSERT_EQ(env_->run({"dnc", "add", base + "asked-not-to-be"}).exit_code, 0);
    const std::string csv = "/tmp/orch-cli-output-" + std::to_string(::getpid()) + ".csv";
    std::ofstream(csv) << "profile_url,first_name\n" << taken << "\n" << base << "asked-not-to-be,A\n"
                       << base << "left-out,B\n" << base << "someone-new,C\n";
    std::string yaml = campaign_yaml("second", 1);
    yaml.replace(yaml.find("  search:\n    title: Engineer\n  total_results: 1\n"),
                 std::string("  search:\n    title: Engineer\n  total_results: 1\n").size(), "  file: " + csv + "\n");
    std::ofstream(file_) << yaml << "exclude:\n  profile_urls: [" << base << "left-out/]\n";
    auto r = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto j = json::parse(r.output);
    EXPECT_EQ(j["leads"], 1) << r.output;
    EXPECT_EQ(j["skipped"],
              json::parse(R"({"excluded": 1, "do_not_contact": 1, "enrolled_elsewhere": 3, "in_this_campaign": 0})"))
        << r.output;
    auto text = env_->run({"campaign", "estimate", file_});
    EXPECT_NE(text.output.find("Estimate for 'second': 1 lead, 1 sender\n  (6 people in the file; an apply now skips 5: "
                               "1 excluded by the campaign, 1 on the do-not-contact list, 3 enrolled by another "
                               "campaign)\n"),
              std::string::npos)
        << text.output;
    auto applied = env_->run({"campaign", "apply", file_});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    EXPECT_NE(applied.output.find("1 enrolled, 5 skipped"), std::string::npos) << applied.output;
    // The people it skipped as the first campaign's keep their fields, from which that campaign's
    // invitations and messages are written (a file that skipped a person renamed them "X" in the
    // other campaign's next message); its own new lead has the file's.
    const std::string first_names = "SELECT string_agg(COALESCE(l.fields->>'first_name', '-'), ',' ORDER BY l.lead_id) "
                                    "FROM leads l JOIN enrollments e ON e.lead_id = l.lead_id "
                                    "JOIN campaigns c ON c.campaign_id = e.campaign_id WHERE c.name = ";
    EXPECT_EQ(env_->scalar(first_names + "'first' AND l.fields->>'first_name' = 'X'"), "") << "renamed by 'second'";
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments e JOIN campaigns c USING (campaign_id) WHERE c.name = 'first'"),
              "3");
    EXPECT_EQ(env_->scalar(first_names + "'second'"), "C");
    // A re-apply of its own file does write its own lead's fields.
    std::ofstream(csv) << "profile_url,first_name\n" << taken << "\n" << base << "asked-not-to-be,A\n"
                       << base << "left-out,B\n" << base << "someone-new,D\n";
    auto reapplied = env_->run({"campaign", "apply", file_});
    ASSERT_EQ(reapplied.exit_code, 0) << reapplied.output;
    EXPECT_EQ(env_->scalar(first_names + "'second'"), "D");
    EXPECT_EQ(env_->scalar(first_names + "'first' AND l.fields->>'first_name' = 'X'"), "");
    // Applied, its lead is the campaign's: an estimate of the file now leaves it out too (it
    // forecast the whole file for an apply that would enroll nobody).
    auto again = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(again.exit_code, 0) << again.output;
    EXPECT_EQ(json::parse(again.output)["leads"], 0) << again.output;
    EXPECT_EQ(json::parse(again.output)["skipped"]["in_this_campaign"], 1) << again.output;
    auto again_text = env_->run({"campaign", "estimate", file_});
    EXPECT_NE(again_text.output.find(", 1 this campaign's leads already (the estimate is of the new ones))"),
              std::string::npos)
        << again_text.output;
    std::remove(csv.c_str());
}

// With ramp-up on, the estimate reads in Redis which senders are still ramping up: for senders
// new to the orchestrator its headline is the ramped forecast; for senders past their ramp-up, the
// steady one; without Redis, both, each said for whom.
TEST_F(CliOutput, TheEstimateHeadlinesTheForecastForItsSendersRampUp) {
    ORCH_REQUIRE_SERVICE("REDIS_URL");
    // A sender of this test's own: the sandbox's account ids follow the login token, and the tests
    // of the run share the key's Redis buckets.
    const std::string own = std::to_string(::getpid()) + "-" +
                            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    auto connected = env_->run({"accounts", "connect", "--login-token", "ramp-" + own, "--country", "FR", "--label",
                                "ramping"});
    ASSERT_EQ(connected.exit_code, 0) << connected.output;
    env_->set("ORCH_RAMP_UP", "true");
    env_->set("ORCH_INVITE_PER_DAY", "40");
    std::ofstream(file_) << "name: ramp\naccounts: [ramping]\naudience:\n  search:\n    title: Engineer\n"
                            "  total_results: 400\nschedule:\n  time_zone: UTC\n"
                            "budget_credits: 5000\nsteps:\n  - id: i\n    kind: invite\n";
    auto fresh = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(fresh.exit_code, 0) << fresh.output;
    const auto j = json::parse(fresh.output);
    EXPECT_EQ(j["senders_ramping_up"], json::parse(R"({"read": 1, "ramping": 1})")) << fresh.output;
    const auto ramped_day = j["new_accounts"]["finish_around"].get<std::string>();
    const auto steady_day = j["finish_around"].get<std::string>();
    ASSERT_NE(ramped_day, steady_day) << fresh.output;
    auto table = env_->run({"campaign", "estimate", file_});
    ASSERT_EQ(table.exit_code, 0) << table.output;
    EXPECT_NE(table.output.find("working days as the sender is new to the orchestrator or ramping up, plus 0.0 days of "
                                "waits); finishing around " + ramped_day),
              std::string::npos)
        << table.output;
    EXPECT_NE(table.output.find("ramped up    about"), std::string::npos) << table.output;
    EXPECT_NE(table.output.find("once past their ramp-up (ramp_up), finishing around " + steady_day), std::string::npos)
        << table.output;

    // Without Redis: the steady forecast is said to be for senders past their ramp-up.
    env_->set("REDIS_URL", "");
    auto unknown = env_->run({"campaign", "estimate", file_});
    ASSERT_EQ(unknown.exit_code, 0) << unknown.output;
    EXPECT_NE(unknown.output.find(" for senders past their ramp-up (bottleneck invite"), std::string::npos)
        << unknown.output;
    EXPECT_NE(unknown.output.find("new senders  about"), std::string::npos) << unknown.output;
    // ... naming their own bottleneck, as the JSON does.
    EXPECT_NE(unknown.output.find("for accounts new to the orchestrator (bottleneck invite: "), std::string::npos)
        << unknown.output;
    EXPECT_TRUE(json::parse(env_->run({"campaign", "estimate", file_, "--format", "json"}).output)["senders_ramping_up"]
                    .is_null());
    EXPECT_NE(unknown.output.find("(which senders are still ramping up was not read: Redis: REDIS_URL is not set)"),
              std::string::npos)
        << unknown.output;
    // Redis set but not answering: said too, not taken for no Redis.
    env_->set("REDIS_URL", "redis://127.0.0.1:1/0");
    auto down = env_->run({"campaign", "estimate", file_});
    ASSERT_EQ(down.exit_code, 0) << down.output;
    EXPECT_NE(down.output.find("(which senders are still ramping up was not read: Redis: no answer from "
                               "redis://127.0.0.1:1/0)"),
              std::string::npos)
        << down.output;
    EXPECT_NE(down.output.find(" for senders past their ramp-up (bottleneck invite"), std::string::npos) << down.output;

    // A sender whose first invitation through the orchestrator was 60 days ago is past its ramp-up.
    env_->set("REDIS_URL", std::getenv("REDIS_URL"));
    const auto account = env_->scalar("SELECT account_id FROM accounts WHERE label = 'ramping'");
    auto limiter = orch::test::env_limiter();
    ASSERT_TRUE(orch::test::take_today(*limiter, account, orch::limits::action::invite, 40));
    ASSERT_TRUE(orch::test::move_first_day_back(account, orch::limits::action::invite, 60));
    auto seasoned = env_->run({"campaign", "estimate", file_});
    ASSERT_EQ(seasoned.exit_code, 0) << seasoned.output;
    EXPECT_NE(seasoned.output.find("finishing around " + steady_day), std::string::npos) << seasoned.output;
    EXPECT_NE(seasoned.output.find("(ramp_up: the sender is past the ramp-up)"), std::string::npos) << seasoned.output;
    EXPECT_EQ(seasoned.output.find("new senders  about"), std::string::npos) << seasoned.output;
}

// With the senders looked up, each one's own quotas (`accounts limits`) count: two senders, one
// held to 5 invites a day, the other at the settings' number.
TEST_F(CliOutput, TheEstimateCountsEachSendersOwnQuotas) {
    auto second = env_->run({"accounts", "connect", "--login-token", "token-2", "--country", "FR", "--label", "sender-2"});
    ASSERT_EQ(second.exit_code, 0) << second.output;
    std::ofstream(file_) << "name: own\naccounts: [sender-1, sender-2]\naudience:\n  search:\n    title: Engineer\n"
                            "  total_results: 100\nschedule:\n  time_zone: UTC\n"
                            "budget_credits: 500\nsteps:\n  - id: i\n    kind: invite\n";
    auto before = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(before.exit_code, 0) << before.output;
    const auto invites = [](const json& j) {
        for (const auto& a : j["actions"]) {
            if (a["action"] == "invite") {
                return a;
            }
        }
        return json();
    };
    // The tests' settings give no invite quota: unlimited, no days.
    EXPECT_EQ(invites(json::parse(before.output))["per_working_day"], -1) << before.output;

    auto limited = env_->run({"accounts", "limits", "sender-2", "--invite-per-day", "5"});
    ASSERT_EQ(limited.exit_code, 0) << limited.output;
    auto after = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(after.exit_code, 0) << after.output;
    json own = invites(json::parse(after.output));
    EXPECT_EQ(own["per_working_day"], 5) << after.output;  // sender-2's; sender-1 has no limit still
    EXPECT_EQ(own["unlimited_senders"], 1) << after.output;
    auto mixed = env_->run({"campaign", "estimate", file_});
    EXPECT_NE(mixed.output.find("5 + unlimited"), std::string::npos) << mixed.output;
    // 50 invites each; sender-2 does 5 a working day.
    EXPECT_DOUBLE_EQ(own["working_days"].get<double>(), 10.0) << after.output;
    ASSERT_EQ(env_->run({"accounts", "limits", "sender-1", "--invite-per-day", "20"}).exit_code, 0);
    auto both = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(both.exit_code, 0) << both.output;
    own = invites(json::parse(both.output));
    EXPECT_EQ(own["per_working_day"], 25) << both.output;
    EXPECT_EQ(own["unlimited_senders"], 0) << both.output;
    EXPECT_EQ(json::parse(both.output)["senders_with_own_quotas"], 2) << both.output;
    EXPECT_DOUBLE_EQ(own["working_days"].get<double>(), 10.0) << both.output;
    auto table = env_->run({"campaign", "estimate", file_});
    ASSERT_EQ(table.exit_code, 0) << table.output;
    EXPECT_NE(table.output.find("2 senders have their own quotas from `accounts limits`"), std::string::npos)
        << table.output;
}

// A sender held to 0 invites a day never finishes: the table says "never" and the JSON gives no
// number of days (it gave 1e9 working days, a number a script could take for a forecast).
TEST_F(CliOutput, AQuotaThatLetsNothingThroughNeverFinishes) {
    std::ofstream(file_) << "name: stuck\naccounts: [sender-1]\naudience:\n  search:\n    title: Engineer\n"
                            "  total_results: 10\nschedule:\n  time_zone: UTC\n"
                            "budget_credits: 500\nsteps:\n  - id: i\n    kind: invite\n";
    ASSERT_EQ(env_->run({"accounts", "limits", "sender-1", "--invite-per-day", "0"}).exit_code, 0);
    auto r = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto j = json::parse(r.output);
    EXPECT_TRUE(j["working_days"].is_null()) << r.output;
    EXPECT_TRUE(j["calendar_days"].is_null()) << r.output;
    EXPECT_TRUE(j["days_to_finish"].is_null()) << r.output;
    EXPECT_TRUE(j["finish_around"].is_null()) << r.output;
    EXPECT_TRUE(j["new_accounts"]["working_days"].is_null()) << r.output;
    bool invite = false;
    for (const auto& a : j["actions"]) {
        if (a["action"] == "invite") {
            invite = true;
            EXPECT_EQ(a["per_working_day"], 0) << r.output;
            EXPECT_TRUE(a["working_days"].is_null()) << r.output;
        }
    }
    EXPECT_TRUE(invite) << r.output;
    auto csv = env_->run({"campaign", "estimate", file_, "--format", "csv"});
    ASSERT_EQ(csv.exit_code, 0) << csv.output;
    EXPECT_NE(csv.output.find("invite,10,0,never,never,0"), std::string::npos) << csv.output;
    auto text = env_->run({"campaign", "estimate", file_});
    ASSERT_EQ(text.exit_code, 0) << text.output;
    EXPECT_NE(text.output.find("not finishing within a century"), std::string::npos) << text.output;
    EXPECT_EQ(text.output.find("1000000000"), std::string::npos) << text.output;
}

// One person in several spellings of their URL (case, www., a trailing slash, a %XX of a plain
// letter) is one lead, and one do-not-contact entry: the apply enrolls them once (it used to
// stop with a database error), and `dnc add` of another spelling is a duplicate.
TEST_F(CliOutput, OnePersonHoweverTheUrlIsSpelled) {
    const std::string csv = file_ + ".csv";
    std::ofstream(csv) << "profile_url,first_name\nhttps://n.example/in/noah-allen,Noah\n"
                          "https://n.example/in/Noah-Allen/,Again\nhttps://www.n.example/in/%6Eoah-allen?x=1,Encoded\n";
    std::ofstream(file_) << "name: spelled\naccounts: [sender-1]\naudience: {file: " << csv
                         << "}\nschedule: {time_zone: UTC}\nbudget_credits: 10\nsteps:\n  - {id: v, kind: visit}\n";
    auto applied = env_->run({"campaign", "apply", file_});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    EXPECT_NE(applied.output.find("is the same person as 'https://n.example/in/noah-allen' (line 2)"), std::string::npos)
        << applied.output;
    auto leads = env_->run({"leads", "list", "spelled", "--format", "json"});
    ASSERT_EQ(leads.exit_code, 0) << leads.output;
    ASSERT_EQ(json::parse(leads.output)["leads"].size(), 1u) << leads.output;
    ASSERT_EQ(env_->run({"dnc", "add", "https://n.example/in/noah-allen"}).exit_code, 0);
    auto again = env_->run({"dnc", "add", "https://N.example/in/%6eoah-ALLEN/"});
    ASSERT_EQ(again.exit_code, 0) << again.output;
    EXPECT_NE(again.output.find("0 added, 1 duplicate"), std::string::npos) << again.output;
    // A refused URL is quoted with its tab spelled once (the loader's escape was escaped again).
    std::ofstream(csv) << "profile_url\n\"https://n.example/in/a\tb\"\n";
    auto tab = env_->run({"campaign", "validate", file_});
    EXPECT_EQ(tab.exit_code, 2) << tab.output;
    EXPECT_NE(tab.output.find("profile_url 'https://n.example/in/a\\tb' has"), std::string::npos) << tab.output;
    std::remove(csv.c_str());
}

// The command line's own mistakes read in the order typed, and an empty value shows as "".
TEST_F(CliOutput, ParseErrorsQuoteWhatWasTyped) {
    auto extra = env_->run({"migrate", "--format", "csv"});
    EXPECT_EQ(extra.exit_code, 2) << extra.output;
    EXPECT_NE(extra.output.find("These arguments were not expected: --format csv\n"), std::string::npos)
        << extra.output;
    auto one = env_->run({"migrate", "csv"});
    EXPECT_NE(one.output.find("This argument was not expected: csv\n"), std::string::npos) << one.output;
    // A value outside an option's range, or not a number, says what the option takes.
    auto range = env_->run({"campaign", "watch", "x", "--interval", "abc"});
    EXPECT_EQ(range.exit_code, 2) << range.output;
    EXPECT_NE(range.output.find("--interval: 'abc' is not a whole number from 1 to 3600\n"), std::string::npos)
        << range.output;
    // An option of one value typed twice: which one was meant is not guessed.
    auto twice = env_->run({"campaign", "list", "--format", "json", "--format", "csv"});
    EXPECT_EQ(twice.exit_code, 2) << twice.output;
    EXPECT_NE(twice.output.find("--format is given 2 times: give it once\n"), std::string::npos) << twice.output;
    auto empty = env_->run({"campaign", "list", "--format", ""});
    EXPECT_EQ(empty.exit_code, 2) << empty.output;
    EXPECT_NE(empty.output.find("--format: \"\" not in {table,json,csv}"), std::string::npos) << empty.output;
    // A mistyped command is named, with the nearest one and the list.
    auto typo = env_->run({"campaign", "lisst"});
    EXPECT_EQ(typo.exit_code, 2) << typo.output;
    EXPECT_NE(typo.output.find("unknown command 'campaign lisst' (did you mean 'list'?)\n"), std::string::npos)
        << typo.output;
    EXPECT_NE(typo.output.find("the commands of 'campaign': validate, estimate,"), std::string::npos) << typo.output;
    auto top = env_->run({"campain", "list"});
    EXPECT_EQ(top.exit_code, 2) << top.output;
    EXPECT_NE(top.output.find("unknown command 'campain' (did you mean 'campaign'?)"), std::string::npos) << top.output;
    auto bare = env_->run({"campaign"});
    EXPECT_EQ(bare.exit_code, 2) << bare.output;
    EXPECT_NE(bare.output.find("'campaign' needs a command\nthe commands of 'campaign': validate,"), std::string::npos)
        << bare.output;
    auto far = env_->run({"accounts", "frobnicate"});
    EXPECT_NE(far.output.find("unknown command 'accounts frobnicate'\n"), std::string::npos) << far.output;
    // An empty value given is a mistake, not "not given".
    auto state = env_->run({"leads", "list", "c", "--state", ""});
    EXPECT_EQ(state.exit_code, 2) << state.output;
    EXPECT_NE(state.output.find("--state: \"\" not in {live,ready,"), std::string::npos) << state.output;
    auto credits = env_->run({"budget", "set", "c", "--credits", ""});
    EXPECT_EQ(credits.exit_code, 2) << credits.output;
    EXPECT_NE(credits.output.find("--credits: \"\" is not a positive whole number (a campaign always has a budget)"),
              std::string::npos)
        << credits.output;
    auto negative = env_->run({"budget", "set", "c", "--credits", "-1"});
    EXPECT_EQ(negative.exit_code, 2) << negative.output;
    EXPECT_EQ(negative.output.find("none"), std::string::npos) << negative.output;
    // Too large for 64 bits: refused by the budget's limit, as a large one that fits is.
    for (const char* large : {"99999999999999999999", "9223372036854775807"}) {
        auto huge = env_->run({"budget", "set", "c", "--credits", large});
        EXPECT_EQ(huge.exit_code, 2) << huge.output;
        EXPECT_NE(huge.output.find("--credits: \"" + std::string(large) + "\" cannot be above 1000000000000 credits"),
                  std::string::npos)
            << huge.output;
    }
    // With another flag's problem: both said.
    auto over_and_bad = env_->run({"budget", "set", "c", "--credits", "18446744073709551615", "--per-day", "-1"});
    EXPECT_EQ(over_and_bad.exit_code, 2) << over_and_bad.output;
    EXPECT_NE(over_and_bad.output.find("--credits: \"18446744073709551615\" cannot be above"), std::string::npos) << over_and_bad.output;
    EXPECT_NE(over_and_bad.output.find("--per-day: \"-1\" is not a positive whole number"), std::string::npos) << over_and_bad.output;
    auto per_day = env_->run({"budget", "set", "c", "--per-day", "x"});
    EXPECT_NE(per_day.output.find("--per-day: \"x\" is not a positive whole number (or 'none')"), std::string::npos)
        << per_day.output;
    // Every bad flag at once.
    auto both = env_->run({"budget", "set", "c", "--credits", "0", "--per-account", "-3"});
    EXPECT_EQ(both.exit_code, 2) << both.output;
    for (const char* part : {"--credits: \"0\" is not a positive whole number", "--per-account: \"-3\" is not",
                             "nothing changed"}) {
        EXPECT_NE(both.output.find(part), std::string::npos) << part << ": " << both.output;
    }
}

// A budget that covers the costliest case but not an invite's reservation at the end of the
// path (its refusal check) is not "within budget", and the text says what covers it.
TEST_F(CliOutput, TheEstimateCountsAnInvitesReservation) {
    const std::string csv = file_ + ".csv";
    std::ofstream(csv) << "profile_url,first_name\nhttps://n.example/in/only,Only\n";
    auto write = [&](int budget) {
        std::ofstream(file_) << "name: tight\naccounts: [sender-1]\naudience: {file: " << csv
                             << "}\nschedule: {time_zone: UTC}\nbudget_credits: " << budget
                             << "\nsteps:\n  - {id: check, kind: check_invitation, on_accepted: end, on_pending: end, "
                                "on_no_invitation: invite}\n  - {id: invite, kind: invite}\n";
    };
    write(2);
    auto tight = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(tight.exit_code, 0) << tight.output;
    const json j = json::parse(tight.output);
    EXPECT_EQ(j["credits"]["max"], 2) << tight.output;
    EXPECT_EQ(j["headroom_credits"], 1) << tight.output;
    EXPECT_EQ(j["within_budget"], false) << tight.output;
    auto text = env_->run({"campaign", "estimate", file_});
    EXPECT_NE(text.output.find("budget 2 (it covers the costliest case, 2, not the last lead's reservation"),
              std::string::npos)
        << text.output;
    EXPECT_NE(text.output.find("3 covers it)"), std::string::npos) << text.output;
    write(3);
    auto enough = env_->run({"campaign", "estimate", file_, "--format", "json"});
    ASSERT_EQ(enough.exit_code, 0) << enough.output;
    EXPECT_EQ(json::parse(enough.output)["within_budget"], true) << enough.output;
    std::remove(csv.c_str());
}

// An API that cannot be reached (a closed port: nothing was sent) is as likely a wrong api_url as
// an outage: the command names the setting and its value, exits 1, and stores nothing.
// A setting's flag written `--name=` is an empty value, as `--name ""` is: refused where empty
// means nothing, with the default, and taken where it means something (CLI11 said "1 required
// TEXT missing" of both).
TEST_F(CliOutput, ASettingsFlagWithAnEqualsSignAndNothingIsAnEmptyValue) {
    auto level = env_->run({"campaign", "list", "--log-level="});
    EXPECT_EQ(level.exit_code, 2) << level.output;
    EXPECT_NE(level.output.find("flag --log-level: log_level is empty; leave it out for its default (info)"),
              std::string::npos)
        << level.output;
    auto taken = env_->run({"campaign", "list", "--webhook-public-url=", "--redis-url="});
    EXPECT_EQ(taken.exit_code, 0) << taken.output;
    // After "--" it is an argument, not a flag.
    auto argument = env_->run({"campaign", "show", "--", "--log-level="});
    EXPECT_EQ(argument.exit_code, 2) << argument.output;
    EXPECT_NE(argument.output.find("no campaign named '--log-level='"), std::string::npos) << argument.output;
}

// An answer of the API cut short (the sandbox's garbled_response_rate: a 200 whose JSON ends
// half-way) is one to try again: the command says so, exits 1, and blames api_url only if it
// persists (it asked "is api_url ... the API's URL?" of one torn page, as of another server's 404).
TEST_F(CliOutput, ATornAnswerIsToTryAgainNotAWrongApiUrl) {
    http_client control("127.0.0.1", sandbox_->control_port());
    ASSERT_EQ(control.post("/control/settings", json{{"garbled_response_rate", 1.0}}).status, 200);
    auto torn = apply(campaign_yaml("torn", 3));
    EXPECT_EQ(torn.exit_code, 1) << torn.output;
    EXPECT_NE(torn.output.find("the audience search failed: malformed_response"), std::string::npos) << torn.output;
    EXPECT_NE(torn.output.find("(the answer is not of the API's documented shape: try again later; if it persists, "
                               "check that api_url http://127.0.0.1:" + std::to_string(sandbox_->port()) +
                               " is the API's URL)"),
              std::string::npos)
        << torn.output;
    EXPECT_EQ(torn.output.find("the answer is not the API's"), std::string::npos) << torn.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM campaigns"), "0");
    ASSERT_EQ(control.post("/control/settings", json{{"garbled_response_rate", 0.0}}).status, 200);
}

TEST_F(CliOutput, AnApiUrlNobodyAnswersIsNamed) {
    const std::string url = "http://127.0.0.1:1";
    env_->set("OUTREACH_API_URL", url);
    const auto before = env_->scalar("SELECT count(*) FROM accounts");
    for (const std::vector<std::string>& cmd :
         {std::vector<std::string>{"accounts", "sync"},
          std::vector<std::string>{"accounts", "connect", "--login-token", "token-9", "--country", "FR"}}) {
        auto r = env_->run(cmd);
        EXPECT_EQ(r.exit_code, 1) << cmd[1] << ": " << r.output;
        EXPECT_NE(r.output.find("CONNECT_FAILED"), std::string::npos) << r.output;
        EXPECT_NE(r.output.find("(no API answered at api_url " + url +
                                ": check the api_url setting, or try again once the API is up)"),
                  std::string::npos)
            << r.output;
        EXPECT_EQ(r.output.find("(try again later)"), std::string::npos) << r.output;
        // Nothing reached an API: the login was not sent, and nobody refused it.
        if (cmd[1] == "connect") {
            EXPECT_NE(r.output.find("login not sent: "), std::string::npos) << r.output;
            EXPECT_EQ(r.output.find("login refused"), std::string::npos) << r.output;
        }
    }
    // Another server (the sandbox's control port answers 404 to the API's paths): its answer is
    // not the API's, said with the setting.
    const std::string other = "http://127.0.0.1:" + std::to_string(sandbox_->control_port());
    env_->set("OUTREACH_API_URL", other);
    auto wrong = env_->run({"accounts", "sync"});
    EXPECT_EQ(wrong.exit_code, 2) << wrong.output;
    EXPECT_NE(wrong.output.find("(the answer is not the API's: is api_url " + other + " the API's URL?)"),
              std::string::npos)
        << wrong.output;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM accounts"), before);
}


// An empty database: every command says to run `orchestrator migrate`; a worker without Redis
// stops at start with one clear message.
TEST_F(CliOutput, UnmigratedDatabaseAndMissingRedisAreClear) {
    const std::string admin = orch::test::services_database_url();
    const std::string db = "orch_unmigrated_" + std::to_string(::getpid());
    {
        pqxx::connection c(admin);
        pqxx::nontransaction tx(c);
        tx.exec("DROP DATABASE IF EXISTS " + db);
        tx.exec("CREATE DATABASE " + db);
    }
    env_->set("DATABASE_URL", admin.substr(0, admin.rfind('/') + 1) + db);
    for (const std::vector<std::string>& cmd : {std::vector<std::string>{"campaign", "list"},
                                               std::vector<std::string>{"accounts", "list"},
                                               std::vector<std::string>{"budget", "show"},
                                               std::vector<std::string>{"campaign", "show", "x"}}) {
        auto r = env_->run(cmd);
        EXPECT_NE(r.exit_code, 0) << cmd[0] << " " << cmd[1];
        EXPECT_NE(r.output.find("run `orchestrator migrate` first"), std::string::npos) << r.output;
    }
    {
        pqxx::connection c(admin);
        pqxx::nontransaction tx(c);
        tx.exec("DROP DATABASE IF EXISTS " + db);
    }
    // A database nobody answers for: the setting is named, and no connection is said to be lost.
    env_->set("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none");
    auto closed = env_->run({"campaign", "list"});
    EXPECT_EQ(closed.exit_code, 1) << closed.output;
    EXPECT_NE(closed.output.find("cannot connect to the database of the database_url setting: "), std::string::npos)
        << closed.output;
    EXPECT_EQ(closed.output.find("connection lost"), std::string::npos) << closed.output;
    env_->set("DATABASE_URL", env_->database_url());
    env_->set("REDIS_URL", "redis://127.0.0.1:1/0");
    auto worker = env_->run({"worker", "--exit-when-idle"}, 20'000);
    EXPECT_EQ(worker.exit_code, 2) << worker.output;
    EXPECT_NE(worker.output.find("Redis does not answer at redis://127.0.0.1:1/0"), std::string::npos) << worker.output;
}

// A database that accepts the connection and never answers (a frozen server: the kernel completes
// the handshake from the listen queue): libpq waited without limit, and a command or a lane's
// reconnect hung silently (a trial's SIGSTOPped postmaster). Every connection now gives up after
// 10 s unless its URL or PGCONNECT_TIMEOUT says otherwise.
TEST_F(CliOutput, ADatabaseThatNeverAnswersFailsTheCommandInsteadOfHangingIt) {
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(listener, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(listener, 16), 0);  // never accepted, never answered
    socklen_t len = sizeof addr;
    ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    ::unsetenv("PGCONNECT_TIMEOUT");  // the command's own default, not an inherited one
    env_->set("DATABASE_URL", "postgresql://nobody@127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/none");
    const auto started = std::chrono::steady_clock::now();
    auto frozen = env_->run({"campaign", "list"}, 40'000);
    const auto took = std::chrono::steady_clock::now() - started;
    ::close(listener);
    env_->set("DATABASE_URL", env_->database_url());
    EXPECT_EQ(frozen.exit_code, 1) << frozen.output;  // -1 when the run's 40 s ran out
    EXPECT_LT(took, std::chrono::seconds(20)) << frozen.output;
    EXPECT_NE(frozen.output.find("cannot connect to the database of the database_url setting: "), std::string::npos)
        << frozen.output;
    EXPECT_NE(frozen.output.find("timeout expired"), std::string::npos) << frozen.output;
}

}  // namespace
