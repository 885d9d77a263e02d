// End-to-end tests of the do-not-contact list and the lead operations (engine/dnc.hpp,
// engine/lead_ops.hpp): the real `orchestrator` (serve with the admin API, the dnc and leads
// commands, a worker) against the real sandbox and a Postgres database of the test's own. Bad
// input is checked to answer its documented status and to change nothing; a person added to the
// list mid-campaign is checked against the sandbox's side-effect record.
#include "tests/support/e2e_campaign.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace {

using orch::test::background_process;
using orch::test::free_port;
using orch::test::http_client;
using orch::test::http_result;
using orch::test::json;
using orch::test::orchestrator_env;
using orch::test::read_side_effects;
using orch::test::sandbox_process;

const std::string token = "dnc-test-token-0123456789";

std::string schedule_and_budget() {
    return "schedule:\n  time_zone: UTC\n  days: [mon, tue, wed, thu, fri, sat, sun]\n  hours: \"00:00-24:00\"\n"
           "budget_credits: 1000000\n";
}

class DncTest : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        char tmpl[] = "/tmp/orch-dnc-XXXXXX";
        dir_ = mkdtemp(tmpl);
        sandbox_ = std::make_unique<sandbox_process>(std::vector<std::string>{"--accept-probability", "0"});
        env_ = std::make_unique<orchestrator_env>(sandbox_->port());
        for (int i = 1; i <= 2; ++i) {
            auto r = env_->run({"accounts", "connect", "--login-token", "token-" + std::to_string(i), "--country", "FR",
                                "--label", "sender-" + std::to_string(i)});
            ASSERT_EQ(r.exit_code, 0) << r.output;
        }
        http_client control("127.0.0.1", sandbox_->control_port());
        const auto people = control.get("/control/people?offset=100&limit=8").body_json();
        for (const auto& p : people["people"]) {
            urls_.push_back(p["profile_url"].get<std::string>());
        }
        ASSERT_EQ(urls_.size(), 8u);
        env_->set("ORCH_ADMIN_TOKEN", token);
        port_ = free_port();
        serve_ = env_->spawn({"serve", "--webhook-listen", "127.0.0.1:" + std::to_string(free_port()), "--admin-listen",
                              "127.0.0.1:" + std::to_string(port_)});
        for (int i = 0; i < 400; ++i) {
            try {
                if (http_client("127.0.0.1", port_).get("/healthz").status == 200) {
                    client_ = std::make_unique<http_client>("127.0.0.1", port_);
                    return;
                }
            } catch (const std::exception&) {
                // not listening yet
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
        }
        FAIL() << "the admin endpoint did not come up: " << serve_->log();
    }
    void TearDown() override {
        if (!dir_.empty()) {
            std::filesystem::remove_all(dir_);
        }
    }

    std::string write(const std::string& name, const std::string& text) {
        auto path = dir_ + "/" + name;
        std::ofstream(path) << text;
        return path;
    }

    http_result call(const std::string& method, const std::string& target, const std::string& body = "") {
        return client_->request(method, target, body, {{"Authorization", "Bearer " + token}});
    }

    static std::string error_message(const http_result& r) {
        auto j = r.body_json();
        EXPECT_TRUE(j.contains("error")) << r.body;
        EXPECT_EQ(j["error"]["status"], r.status) << r.body;
        return j["error"].value("message", "");
    }

    std::string q(const std::string& sql) { return env_->scalar(sql); }
    std::string lead_id(const std::string& url) {
        return q("SELECT lead_id FROM leads WHERE profile_url = '" + url + "'");
    }
    // Invitation requests the sandbox received, sent or not (its side-effect record).
    static int invitation_requests(http_client& control) {
        int requested = 0;
        const auto truth = control.get("/control/side-effects").body_json();  // named: outlives the loop
        for (const auto& inv : truth["invitations"]) {
            requested += inv["requests"].get<int>();
        }
        return requested;
    }

    // Waits (up to about 4 s) until `n` enrollments are in a call.
    bool calling(int n) {
        for (int i = 0; i < 2000; ++i) {
            if (q("SELECT count(*) FROM enrollments WHERE status = 'calling'") == std::to_string(n)) {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        return false;
    }

    std::string status_of(const std::string& url) {
        return q("SELECT e.status || '|' || e.reason FROM enrollments e JOIN leads l USING (lead_id) WHERE l.profile_url = '" +
                 url + "'");
    }

    std::string dir_;
    std::vector<std::string> urls_;
    std::unique_ptr<sandbox_process> sandbox_;
    std::unique_ptr<orchestrator_env> env_;
    std::unique_ptr<background_process> serve_;
    std::unique_ptr<http_client> client_;
    unsigned short port_ = 0;
};

// The file's exclude: section, the list at enrollment, entries added over REST and the CLI (one
// and many, CSV import), what they stop, bad input, and removal.
TEST_F(DncTest, ListExcludesAtEnrollmentAndStopsLiveLeads) {
    // Refused before anything is stored: a bad exclude entry, with its line and column.
    auto bad = write("bad.yaml", "name: bad\naccounts: [sender-1]\naudience:\n  file: a.csv\n" + schedule_and_budget() +
                                     "exclude:\n  profile_urls: [\"not a url\"]\nsteps:\n  - id: v\n    kind: visit\n");
    write("a.csv", "profile_url,first_name,company\n" + urls_[0] + ",Ann,Acme\n");
    auto refused = env_->run({"campaign", "apply", bad});
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_NE(refused.output.find("bad.yaml:11:"), std::string::npos) << refused.output;
    EXPECT_NE(refused.output.find("is not a profile URL"), std::string::npos) << refused.output;
    EXPECT_EQ(q("SELECT count(*) FROM campaigns"), "0");

    // On the list before the campaign: urls_[1] by URL (with a trailing slash), Globex by name.
    auto pre = env_->run({"dnc", "add", urls_[1] + "/", "--company", "  globex  ", "--reason", "asked"});
    ASSERT_EQ(pre.exit_code, 0) << pre.output;
    EXPECT_NE(pre.output.find("2 added, 0 duplicates"), std::string::npos) << pre.output;
    // Said once: the engine's info line saying the same is left out at the default log level.
    EXPECT_EQ(pre.output.find("[info]"), std::string::npos) << pre.output;

    std::string csv = "profile_url,first_name,company\n";
    const std::vector<std::string> companies = {"Acme", "Initech", "GLOBEX", "Acme", "Umbrella", "Hooli", "Acme", "Stark"};
    for (int i = 0; i < 8; ++i) {
        csv += urls_[i] + ",P" + std::to_string(i) + "," + companies[i] + "\n";
    }
    write("people.csv", csv);
    auto file = write("c.yaml", "name: c\naccounts: [sender-1, sender-2]\naudience:\n  file: people.csv\n" +
                                    schedule_and_budget() + "exclude:\n  profile_urls: [\"" + urls_[4] +
                                    "?trk=x\"]\n  companies: [hooli]\nsteps:\n  - id: v\n    kind: visit\n"
                                    "  - id: pause\n    kind: delay\n    duration: 1h\n  - id: wait\n"
                                    "    kind: wait_accepted\n    timeout: 2h\n    next: finish\n  - id: finish\n    kind: end\n");
    auto applied = env_->run({"campaign", "apply", file});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    // 8 people: 1 (URL) and 2 (Globex) on the list, 4 (URL) and 5 (Hooli) excluded by the file.
    EXPECT_NE(applied.output.find("4 enrolled, 4 skipped"), std::string::npos) << applied.output;
    EXPECT_EQ(q("SELECT string_agg(reason || ':' || n, ',' ORDER BY reason) FROM (SELECT reason, count(*) n "
                "FROM skipped_leads GROUP BY reason) s"),
              "do not contact:2,excluded by the campaign:2");

    // REST: bad input answers its status and adds nothing.
    const std::string before = q("SELECT count(*) FROM do_not_contact");
    EXPECT_EQ(call("POST", "/v1/dnc", "").status, 400);
    EXPECT_EQ(call("POST", "/v1/dnc", "{not json").status, 400);
    auto invalid = call("POST", "/v1/dnc",
                        R"({"entries": [{"profile_url": ")" + urls_[3] + R"("}, {"profile_url": "nope"}, {"company": ""}, {"x": 1}]})");
    EXPECT_EQ(invalid.status, 422) << invalid.body;
    EXPECT_NE(error_message(invalid).find("nothing changed"), std::string::npos);
    EXPECT_EQ(invalid.body_json()["error"]["details"].size(), 3u) << invalid.body;
    EXPECT_EQ(invalid.body_json()["error"]["details"][0]["index"], 1) << invalid.body;
    auto both = call("POST", "/v1/dnc", R"({"profile_url": ")" + urls_[3] + R"(", "company": "Acme"})");
    EXPECT_EQ(both.status, 422) << both.body;
    // Every problem in one answer: the request's own and each entry's, all of an entry's.
    auto several = call("POST", "/v1/dnc", R"({"added_by": 7, "entries": [{"x": 1, "company": 2}, {"company": "A"}]})");
    EXPECT_EQ(several.status, 422) << several.body;
    EXPECT_EQ(error_message(several),
              "'added_by' must be a string, got 7; 1 invalid entry (first: unknown field 'x' (fields: profile_url, "
              "company, reason); 'company' must be a string, got 2); nothing changed")
        << several.body;
    EXPECT_EQ(several.body_json()["error"]["details"].size(), 1u) << several.body;
    // The list form takes no entry's field beside the list: refused, not dropped (an operator
    // would believe the profile blocked).
    auto beside = call("POST", "/v1/dnc", R"({"entries": [{"company": "NewCo1"}], "profile_url": ")" + urls_[3] +
                                              R"(", "bogus": true})");
    EXPECT_EQ(beside.status, 422) << beside.body;
    EXPECT_EQ(error_message(beside),
              "unknown fields 'bogus', 'profile_url' (fields: entries, added_by; beside entries, an entry's fields go "
              "in its entry); nothing changed")
        << beside.body;
    // The profile prefix alone names no one (it was stored, and matched no lead).
    auto prefix = call("POST", "/v1/dnc", R"({"profile_url": "https://network.example/in/"})");
    EXPECT_EQ(prefix.status, 422) << prefix.body;
    EXPECT_NE(prefix.body.find("names no profile"), std::string::npos) << prefix.body;
    EXPECT_EQ(env_->run({"dnc", "add", "https://network.example/in"}).exit_code, 2);
    EXPECT_EQ(call("PUT", "/v1/dnc", "{}").status, 405);
    EXPECT_EQ(q("SELECT count(*) FROM do_not_contact"), before);
    EXPECT_EQ(status_of(urls_[3]), "ready|");

    // Mid-campaign: urls_[3] (URL) stops at once; a lead in a call (urls_[6], set to calling as a
    // worker with a request in flight would have it) is left to its worker.
    q("UPDATE enrollments e SET status = 'calling', lease_owner = 'w', lease_expires_at = now() + interval '1h' "
      "FROM leads l WHERE l.lead_id = e.lead_id AND l.profile_url = '" + urls_[6] + "'");
    auto one = call("POST", "/v1/dnc", R"({"profile_url": ")" + urls_[3] + R"(", "reason": "unsubscribed"})");
    ASSERT_EQ(one.status, 201) << one.body;
    EXPECT_EQ(one.body_json()["stopped_leads"], 1) << one.body;
    EXPECT_EQ(one.body_json()["added"][0]["kind"], "profile");
    EXPECT_EQ(status_of(urls_[3]), "cancelled|stopped: do-not-contact");
    auto shown = call("GET", "/v1/campaigns/c/leads/" + lead_id(urls_[3]));
    EXPECT_EQ(shown.body_json()["waiting"], "stopped: do-not-contact") << shown.body;
    // Finished: over, not parked (`leads list` said "[parked]" of it).
    EXPECT_EQ(shown.body_json()["parked"], false) << shown.body;
    auto stopped = env_->run({"leads", "list", "c", "--state", "cancelled"});
    ASSERT_EQ(stopped.exit_code, 0) << stopped.output;
    EXPECT_NE(stopped.output.find("stopped: do-not-contact"), std::string::npos) << stopped.output;
    EXPECT_EQ(stopped.output.find("[parked]"), std::string::npos) << stopped.output;
    auto company = call("POST", "/v1/dnc", R"({"entries": [{"company": "ACME"}, {"profile_url": ")" + urls_[3] + R"("}]})");
    ASSERT_EQ(company.status, 201) << company.body;
    EXPECT_EQ(company.body_json()["added"].size(), 1u);
    EXPECT_EQ(company.body_json()["duplicates"].size(), 1u);
    EXPECT_TRUE(company.body_json()["duplicates"][0]["repeats_index"].is_null()) << company.body;  // an entry already
    EXPECT_EQ(company.body_json()["stopped_leads"], 1) << company.body;  // urls_[0]; urls_[6] is calling
    EXPECT_EQ(company.body_json()["in_flight_leads"], 1) << company.body;
    EXPECT_EQ(company.body_json()["live_leads_without_company"], 0) << company.body;  // each has one
    EXPECT_EQ(status_of(urls_[0]), "cancelled|stopped: do-not-contact");
    EXPECT_EQ(status_of(urls_[6]), "calling|");
    EXPECT_EQ(status_of(urls_[7]), "ready|");
    auto again = call("POST", "/v1/dnc", R"({"company": " acme "})");
    EXPECT_EQ(again.status, 200) << again.body;
    EXPECT_EQ(again.body_json()["added"].size(), 0u);

    // CLI import: an invalid line adds nothing; a valid file reports added and duplicates by line.
    auto bad_csv = write("bad.csv", "profile_url,company,reason\n" + urls_[7] + ",,x\nnot-a-url,,y\n,,z\n");
    auto imp_bad = env_->run({"dnc", "import", bad_csv});
    EXPECT_EQ(imp_bad.exit_code, 2) << imp_bad.output;
    EXPECT_NE(imp_bad.output.find("line 3:"), std::string::npos) << imp_bad.output;
    EXPECT_NE(imp_bad.output.find("line 4:"), std::string::npos) << imp_bad.output;
    EXPECT_EQ(status_of(urls_[7]), "ready|");
    auto good_csv = write("good.csv", "company,reason\nStark,legal\nInitech,\nstark,\n");
    // A control character is named, with where it is.
    auto nul_csv = write("nul.csv", std::string("profile_url,company\n,Ac\0me\n", 27));
    auto imp_nul = env_->run({"dnc", "import", nul_csv});
    EXPECT_EQ(imp_nul.exit_code, 2) << imp_nul.output;
    EXPECT_NE(imp_nul.output.find("line 2: company: has a control character (U+0000) at byte 3"), std::string::npos)
        << imp_nul.output;
    auto imp = env_->run({"dnc", "import", good_csv, "--reason", "bulk"});
    ASSERT_EQ(imp.exit_code, 0) << imp.output;
    EXPECT_NE(imp.output.find("2 added, 1 duplicate; 1 live lead stopped"), std::string::npos) << imp.output;
    EXPECT_NE(imp.output.find("duplicate (line 4): stark repeats line 2"), std::string::npos) << imp.output;
    EXPECT_EQ(status_of(urls_[7]), "cancelled|stopped: do-not-contact");

    // List (REST, CLI) and removal.
    auto list = call("GET", "/v1/dnc?limit=2");
    ASSERT_EQ(list.status, 200);
    EXPECT_EQ(list.body_json()["entries"].size(), 2u);
    EXPECT_FALSE(list.body_json()["next_cursor"].is_null());
    EXPECT_EQ(call("GET", "/v1/dnc?limit=0").status, 400);
    auto listed = env_->run({"dnc", "list", "--format", "json"});
    ASSERT_EQ(listed.exit_code, 0) << listed.output;
    auto entries = json::parse(listed.output)["entries"];
    ASSERT_EQ(entries.size(), 6u) << listed.output;
    EXPECT_EQ(entries[1]["company"], "globex");
    EXPECT_EQ(entries[4]["reason"], "legal");
    EXPECT_EQ(entries[5]["reason"], "bulk");
    auto id = std::to_string(entries[0]["id"].get<std::int64_t>());
    EXPECT_EQ(call("DELETE", "/v1/dnc/" + id).status, 200);
    EXPECT_EQ(call("DELETE", "/v1/dnc/" + id).status, 404);
    EXPECT_EQ(call("DELETE", "/v1/dnc/x").status, 400);
    auto rm = env_->run({"dnc", "remove", "--company", "INITECH"});
    EXPECT_EQ(rm.exit_code, 0) << rm.output;
    EXPECT_EQ(env_->run({"dnc", "remove", "--company", "INITECH"}).exit_code, 2);
    EXPECT_EQ(q("SELECT count(*) FROM do_not_contact"), "4");
    EXPECT_EQ(status_of(urls_[7]), "cancelled|stopped: do-not-contact");  // stays stopped
    // A request that names one entry twice: the duplicate says which entry it repeats.
    auto twice = call("POST", "/v1/dnc", R"({"entries": [{"company": "Umbrella"}, {"company": "UMBRELLA"}]})");
    ASSERT_EQ(twice.status, 201) << twice.body;
    EXPECT_EQ(twice.body_json()["duplicates"][0]["index"], 1) << twice.body;
    EXPECT_EQ(twice.body_json()["duplicates"][0]["repeats_index"], 0) << twice.body;
}

// stop, retry, skip and move on one lead and in bulk, over REST and the CLI; a lead in a call and
// a finished one are refused with why; bad input changes nothing.
// A lead in status calling is one of four things, told apart in its `waiting` sentence: a call in
// flight (whose worker and lease are named), an uncertain call waiting to be checked, such a check
// in flight, or a call whose worker stopped before writing its outcome (its lease ended). All four
// read "calling the API" before, so a lead waiting minutes for its reconciliation looked stuck.
// A company on the list matches a lead's company as the field reads, trimmed and in any case,
// inner blanks as typed: "Acme  Corp" (two spaces) was stored as "Acme Corp" and matched no lead
// whose field has the two spaces.
TEST_F(DncTest, ACompanyWithInnerBlanksMatchesAsTyped) {
    auto added = env_->run({"dnc", "add", "--company", " ACME  CORP "});
    ASSERT_EQ(added.exit_code, 0) << added.output;
    EXPECT_EQ(q("SELECT company FROM do_not_contact"), "ACME  CORP");
    write("people.csv", "profile_url,first_name,company\n" + urls_[0] + ",A,Acme  Corp\n" + urls_[1] + ",B,Acme Corp\n" +
                            urls_[2] + ",C, \n");
    auto file = write("c.yaml", "name: blanks\naccounts: [sender-1]\naudience:\n  file: people.csv\n" +
                                    schedule_and_budget() + "steps:\n  - id: v\n    kind: visit\n");
    auto applied = env_->run({"campaign", "apply", file});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    EXPECT_NE(applied.output.find("2 enrolled, 1 skipped"), std::string::npos) << applied.output;
    EXPECT_EQ(q("SELECT count(*) FROM enrollments WHERE lead_id = " + lead_id(urls_[1])), "1");
    // A company entry says how many live leads no company entry can match (no company field, or a
    // blank one): "0 stopped" alone read as "nobody of that company is in a campaign".
    auto other = env_->run({"dnc", "add", "--company", "Initech"});
    ASSERT_EQ(other.exit_code, 0) << other.output;
    EXPECT_NE(other.output.find("0 live leads stopped"), std::string::npos) << other.output;
    EXPECT_NE(other.output.find("note: 1 live lead has no company field (leads from a search carry none)"),
              std::string::npos)
        << other.output;
    auto by_url = env_->run({"dnc", "add", urls_[3]});
    ASSERT_EQ(by_url.exit_code, 0) << by_url.output;
    EXPECT_EQ(by_url.output.find("no company field"), std::string::npos) << by_url.output;
    // A duplicate (a company in another case, a URL in another spelling) takes no id: the next
    // entry's id follows the last one's (they went 1, 2, 4).
    env_->run({"dnc", "add", "--company", "initech", urls_[3] + "/"});
    ASSERT_EQ(env_->run({"dnc", "add", urls_[4]}).exit_code, 0);
    EXPECT_EQ(q("SELECT string_agg((entry_id - (SELECT min(entry_id) FROM do_not_contact))::text, ' ' "
                "ORDER BY entry_id) FROM do_not_contact"),
              "0 1 2 3");
}

TEST_F(DncTest, ACallingLeadSaysWhetherItsCallIsInFlightUncertainOrLost) {
    write("people.csv", "profile_url,first_name\n" + urls_[0] + ",P\n");
    auto file = write("c.yaml", "name: calls\naccounts: [sender-1]\naudience:\n  file: people.csv\n" +
                                    schedule_and_budget() + "steps:\n  - id: v\n    kind: visit\n");
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);
    const auto x = lead_id(urls_[0]);
    const std::string where = " WHERE lead_id = " + x;
    // The lead's `call` names the kind for programs, in the page and the list alike; `campaign
    // watch` counts the kinds apart too.
    const auto kind = [&] {
        auto one = call("GET", "/v1/campaigns/calls/leads/" + x);
        auto page = call("GET", "/v1/campaigns/calls/leads");
        EXPECT_EQ(page.status, 200) << page.body;
        EXPECT_EQ(page.body_json()["items"][0]["call"], one.body_json()["call"]) << page.body;
        EXPECT_EQ(page.body_json()["items"][0]["waiting"], one.body_json()["waiting"]) << page.body;
        return one.body_json()["call"];
    };
    const auto watched = [&] {
        auto w = env_->run({"campaign", "watch", "calls", "--once"});
        EXPECT_EQ(w.exit_code, 0) << w.output;
        return w.output.substr(std::min(w.output.size(), w.output.find("\nwaiting\n")));
    };
    const auto waiting = [&] {
        auto r = call("GET", "/v1/campaigns/calls/leads/" + x);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.body_json()["waiting"].get<std::string>();
    };
    EXPECT_EQ(kind(), nullptr);
    // An attempt in flight, as a worker writes it before its call.
    q("INSERT INTO step_attempts (enrollment_id, step, call, attempt, worker) SELECT enrollment_id, 'v', 'visit', 1, "
      "'w-1/0' FROM enrollments" + where);
    // The row keeps the wait before the call (a worker leaves it); the lead shows none.
    q("UPDATE enrollments SET status = 'calling', lease_owner = 'w-1/0', lease_expires_at = '2100-01-01T10:00:00Z', "
      "reason = 'waiting for the API key''s request rate', wait_code = 'key_rate'" + where);
    EXPECT_EQ(waiting(), "calling the API (step v, worker w-1/0, its lease until 2100-01-01 10:00:00 UTC)");
    EXPECT_EQ(kind(), "in_flight");
    const auto stale = call("GET", "/v1/campaigns/calls/leads/" + x).body_json();
    EXPECT_EQ(stale["reason"], "") << stale.dump();
    EXPECT_EQ(stale["wait_code"], nullptr) << stale.dump();
    auto csv = env_->run({"leads", "list", "calls", "--format", "csv"});
    EXPECT_NE(csv.output.find(",finished_at,wait_code,call,waiting\r\n"), std::string::npos) << csv.output;
    EXPECT_NE(csv.output.find(",in_flight,\"calling the API (step v, worker w-1/0, its lease until 2100-01-01 10:00:00 "
                              "UTC)\"\r\n"),
              std::string::npos)
        << csv.output;
    EXPECT_NE(watched().find("calling  (a call queued or on the wire)"), std::string::npos) << watched();
    auto detail = call("GET", "/v1/campaigns/calls/leads/" + x).body_json();
    EXPECT_EQ(detail["timeline"][0]["outcome"], "in_flight") << detail.dump();
    EXPECT_EQ(detail["timeline"][0]["error"], "") << detail.dump();
    q("UPDATE enrollments SET lease_expires_at = '2001-01-01T10:00:00Z'" + where);
    EXPECT_EQ(waiting(), "due now: worker w-1/0's lease ended at 2001-01-01 10:00:00 UTC before the call's outcome was "
                         "written (step v); the next worker takes it up (a call that may have taken effect is checked "
                         "first)");
    EXPECT_EQ(kind(), "outcome_lost");
    EXPECT_NE(watched().find("calling  due now: a worker's lease ended before the call's outcome was written"),
              std::string::npos)
        << watched();
    // The intent log keeps the call in_flight until the next worker closes it; the timeline says
    // its outcome was not written rather than show it on the wire.
    detail = call("GET", "/v1/campaigns/calls/leads/" + x).body_json();
    EXPECT_EQ(detail["timeline"][0]["outcome"], "in_flight") << detail.dump();
    EXPECT_EQ(detail["timeline"][0]["error"],
              "outcome not written: worker w-1/0's lease ended before it was; the next worker checks whether the call "
              "took effect")
        << detail.dump();
    q("DELETE FROM step_attempts WHERE worker = 'w-1/0'");
    q("UPDATE enrollments SET lease_owner = NULL, lease_expires_at = NULL, reconcile = true, "
      "next_run_at = '2100-01-01T11:00:00Z', due_at = '2100-01-01T11:00:00Z', reason = 'visit uncertain: timeout'" +
      where);
    EXPECT_EQ(waiting(), "waiting to check whether an uncertain call took effect (step v: visit uncertain: timeout) "
                         "until 2100-01-01 11:00:00 UTC");
    EXPECT_EQ(kind(), "to_check");
    // Its check held by the per-account cap: that cap never resets, so no time frees it.
    q("UPDATE enrollments SET wait_code = 'account_budget', reason = 'waiting for the per-account cap'" + where);
    EXPECT_EQ(waiting(), "waiting to check whether an uncertain call took effect (step v: waiting for the per-account "
                         "cap; the cap covers the campaign's whole life; raising it wakes the lead; looked at again "
                         "2100-01-01 11:00:00 UTC)");
    q("UPDATE enrollments SET wait_code = NULL, reason = 'visit uncertain: timeout'" + where);
    EXPECT_NE(watched().find("calling  waiting to check whether an uncertain call took effect"), std::string::npos)
        << watched();
    auto shown = env_->run({"leads", "show", "calls", x});
    ASSERT_EQ(shown.exit_code, 0) << shown.output;
    EXPECT_NE(shown.output.find("waiting to check whether an uncertain call took effect"), std::string::npos)
        << shown.output;
    // The step's count of failed tries: said when there are some ("attempt 0" read as none made).
    const auto tries = q("SELECT attempt FROM enrollments" + where);
    EXPECT_EQ(shown.output.find("failed tr"), std::string::npos) << shown.output;
    q("UPDATE enrollments SET attempt = 2" + where);
    shown = env_->run({"leads", "show", "calls", x});
    EXPECT_NE(shown.output.find("step        v (2 failed tries at it so far)"), std::string::npos) << shown.output;
    q("UPDATE enrollments SET attempt = " + tries + where);
    q("UPDATE enrollments SET lease_owner = 'w-2/1', lease_expires_at = '2100-01-01T10:00:00Z'" + where);
    EXPECT_EQ(waiting(), "checking whether an uncertain call took effect (step v, worker w-2/1, its lease until "
                         "2100-01-01 10:00:00 UTC)");
    EXPECT_EQ(kind(), "checking");
    EXPECT_NE(watched().find("calling  checking whether an uncertain call took effect"), std::string::npos)
        << watched();
    q("UPDATE enrollments SET lease_owner = NULL, lease_expires_at = NULL, next_run_at = now(), due_at = now()" + where);
    EXPECT_EQ(kind(), "to_check");
    EXPECT_NE(watched().find("calling  due now: to check whether an uncertain call took effect"), std::string::npos)
        << watched();
    // A paused campaign outranks the lead's own wait, but not its call: a call that may have
    // taken effect is still said (the sentence and watch said only "paused by an operator").
    ASSERT_EQ(call("POST", "/v1/campaigns/calls/pause").status, 200);
    EXPECT_EQ(waiting(), "paused by an operator; an uncertain call (step v: visit uncertain: timeout) waits to be "
                         "checked when the campaign resumes");
    EXPECT_EQ(kind(), "to_check");
    EXPECT_NE(watched().find("calling  paused by an operator; an uncertain call waits to be checked when the campaign "
                             "resumes"),
              std::string::npos)
        << watched();
    q("UPDATE enrollments SET lease_owner = 'w-1/0', lease_expires_at = '2001-01-01T10:00:00Z'" + where);
    EXPECT_EQ(waiting(), "paused by an operator; worker w-1/0's lease ended at 2001-01-01 10:00:00 UTC before the "
                         "call's outcome was written (step v): whether it took effect is checked when the campaign "
                         "resumes");
    EXPECT_EQ(kind(), "outcome_lost");
    EXPECT_NE(watched().find("calling  paused by an operator; a worker's lease ended before the call's outcome was "
                             "written: whether it took effect is checked when the campaign resumes"),
              std::string::npos)
        << watched();
}

TEST_F(DncTest, LeadOperations) {
    std::string csv = "profile_url,first_name\n";
    for (int i = 0; i < 6; ++i) {
        csv += urls_[i] + ",P\n";
    }
    write("people.csv", csv);
    auto file = write("c.yaml", "name: ops\naccounts: [sender-1]\naudience:\n  file: people.csv\n" + schedule_and_budget() +
                                    "steps:\n  - id: v\n    kind: visit\n  - id: pause\n    kind: delay\n    duration: 1h\n"
                                    "  - id: wait\n    kind: wait_accepted\n    timeout: 2h\n    next: finish\n"
                                    "  - id: finish\n    kind: end\n");
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);
    const auto a = lead_id(urls_[0]), b = lead_id(urls_[1]), c = lead_id(urls_[2]), d = lead_id(urls_[3]);
    const std::string base = "/v1/campaigns/ops/leads/";
    // b is in a call; a waits in its delay until an hour from now.
    q("UPDATE enrollments SET status = 'calling', lease_owner = 'w', lease_expires_at = now() + interval '1h' "
      "WHERE lead_id = " + b);
    q("UPDATE enrollments SET step = 'pause', next_run_at = now() + interval '1h', due_at = now() + interval '1h' "
      "WHERE lead_id = " + a);
    const std::string snapshot_sql =
        "SELECT string_agg(lead_id || status::text || step || account_id || next_run_at::text, ',' ORDER BY lead_id) FROM enrollments";
    const auto snapshot = q(snapshot_sql);

    // Refusals and bad input: nothing changes.
    auto calling = call("POST", base + b + "/stop");
    EXPECT_EQ(calling.status, 409) << calling.body;
    EXPECT_NE(error_message(calling).find("calling the API"), std::string::npos) << calling.body;
    EXPECT_EQ(call("POST", base + "999999/stop").status, 404);
    EXPECT_EQ(call("POST", "/v1/campaigns/nope/leads/" + a + "/stop").status, 404);
    EXPECT_EQ(call("POST", base + "abc/stop").status, 400);
    EXPECT_EQ(call("GET", base + a + "/stop").status, 405);
    EXPECT_EQ(call("POST", base + a + "/explode").status, 404);
    EXPECT_EQ(call("POST", base + a + "/skip").status, 422);                          // no "to"
    // Not a step of the lead's version nor of the campaign's current one: the request's error, not
    // the lead's refusal (409 is for a lead a step cannot take now).
    EXPECT_EQ(call("POST", base + a + "/skip", R"({"to": "nowhere"})").status, 422);
    EXPECT_EQ(call("POST", base + a + "/move", R"({"account": "ghost"})").status, 422);
    // A name that differs by an invisible character says it (it read as the account it mimics).
    auto invisible = call("POST", base + a + "/move", R"({"account": "sender-1\u200b"})");
    EXPECT_EQ(invisible.status, 422) << invisible.body;
    EXPECT_NE(error_message(invisible).find("no account 'sender-1\\u{200b}'"), std::string::npos) << invisible.body;
    EXPECT_EQ(call("POST", base + a + "/stop", "[1]").status, 400);
    EXPECT_EQ(call("POST", base + a + "/stop", R"({"force": true})").status, 422);
    EXPECT_EQ(call("POST", "/v1/campaigns/ops/leads:bulk", R"({"action": "stop"})").status, 422);  // no filter
    EXPECT_EQ(call("POST", "/v1/campaigns/ops/leads:bulk", R"({"action": "zap", "state": "ready"})").status, 422);
    EXPECT_EQ(call("POST", "/v1/campaigns/ops/leads:bulk", R"({"action": "stop", "state": "sleepy"})").status, 422);
    // Both a state and ids: refused as the CLI refuses them (it answered 404 "no lead" though the
    // lead exists).
    auto both = call("POST", "/v1/campaigns/ops/leads:bulk", R"({"action": "stop", "state": "done", "lead_ids": [)" + a + "]}");
    EXPECT_EQ(both.status, 422) << both.body;
    EXPECT_NE(error_message(both).find("give lead ids or a state, not both"), std::string::npos) << both.body;
    // An empty list of ids beside a state is not "no list": refused, as a list and a state are (it
    // stopped every lead in the state); alone, it names nobody.
    const auto live_before = q("SELECT count(*) FROM enrollments WHERE status IN ('ready', 'waiting')");
    auto empty_and_state = call("POST", "/v1/campaigns/ops/leads:bulk", R"({"action": "stop", "state": "live", "lead_ids": []})");
    EXPECT_EQ(empty_and_state.status, 422) << empty_and_state.body;
    EXPECT_NE(error_message(empty_and_state).find("give lead ids or a state, not both"), std::string::npos)
        << empty_and_state.body;
    auto empty = call("POST", "/v1/campaigns/ops/leads:bulk", R"({"action": "stop", "lead_ids": []})");
    EXPECT_EQ(empty.status, 422) << empty.body;
    EXPECT_NE(error_message(empty).find("lead_ids is empty: name at least one lead"), std::string::npos) << empty.body;
    EXPECT_EQ(q("SELECT count(*) FROM enrollments WHERE status IN ('ready', 'waiting')"), live_before);
    EXPECT_NE(live_before, "0");
    // A body with several problems is answered with every one of them, in one 422.
    auto several = call("POST", "/v1/campaigns/ops/leads:bulk",
                        R"({"action": "zap", "state": 3, "lead_ids": [1, "x"], "force": true, "to": 5})");
    EXPECT_EQ(several.status, 422) << several.body;
    for (const char* each : {"unknown field 'force'", "'action' must be one of stop, retry, skip, move, got 'zap'",
                             "'state' must be a string, got 3", "'lead_ids' must hold positive integers, got \"x\"",
                             "'to' must be a string, got 5"}) {
        EXPECT_NE(error_message(several).find(each), std::string::npos) << each << " " << several.body;
    }
    // With the action known, its rules are said beside the fields' problems; ids named badly are
    // not "nothing chosen".
    auto rules = call("POST", "/v1/campaigns/ops/leads:bulk",
                      R"({"action": "skip", "state": "sleepy", "account": "x", "extra": 1})");
    EXPECT_EQ(rules.status, 422) << rules.body;
    for (const char* each : {"unknown field 'extra'", "state must be one of", "skip needs the step to move to",
                             "'account' is for move, not skip"}) {
        EXPECT_NE(error_message(rules).find(each), std::string::npos) << each << " " << rules.body;
    }
    auto no_action = call("POST", "/v1/campaigns/ops/leads:bulk", R"({"state": "ready"})");
    EXPECT_EQ(no_action.status, 422) << no_action.body;
    EXPECT_EQ(error_message(no_action), "'action' is required: stop, retry, skip or move; nothing changed")
        << no_action.body;
    // An empty body is not an object (400, as any body that is not one), not one without its action.
    auto no_body = call("POST", "/v1/campaigns/ops/leads:bulk", "");
    EXPECT_EQ(no_body.status, 400) << no_body.body;
    EXPECT_NE(error_message(no_body).find("empty body: send {\"action\""), std::string::npos) << no_body.body;
    // An empty state is said as one, not as "nothing was chosen".
    auto blank = call("POST", "/v1/campaigns/ops/leads:bulk", R"({"action": "stop", "state": ""})");
    EXPECT_EQ(blank.status, 422) << blank.body;
    EXPECT_EQ(error_message(blank),
              "state is empty: give one of live, ready, calling, waiting, done, replied, failed, cancelled, or lead "
              "ids instead; nothing changed")
        << blank.body;
    // A skip to a step the campaign does not have is the request's error, whether leads match (it
    // answered 200 with each of them refused) or none does (200, "0 changed").
    for (const char* state : {"live", "replied"}) {
        auto nowhere = call("POST", "/v1/campaigns/ops/leads:bulk",
                            std::string(R"({"action": "skip", "to": "nope", "state": ")") + state + "\"}");
        EXPECT_EQ(nowhere.status, 422) << state << " " << nowhere.body;
        EXPECT_NE(error_message(nowhere).find("campaign 'ops' (version 1) has no step 'nope' (steps: "),
                  std::string::npos)
            << nowhere.body;
    }
    auto bad_ids = call("POST", "/v1/campaigns/ops/leads:bulk", R"({"action": "stop", "lead_ids": "1"})");
    EXPECT_EQ(bad_ids.status, 422) << bad_ids.body;
    EXPECT_EQ(error_message(bad_ids), "'lead_ids' must be an array of lead ids, got string; nothing changed")
        << bad_ids.body;
    // A field of the wrong type is said once, not again as missing; an unknown action does not
    // hide a bad state; every bad id is said (the first five), with its place.
    const std::vector<std::pair<std::string, std::string>> once = {
        {R"({"action": "stop", "state": 5})", "'state' must be a string, got 5; nothing changed"},
        {R"({"action": "fly", "state": "nope"})",
         "'action' must be one of stop, retry, skip, move, got 'fly'; state must be one of live, ready, calling, "
         "waiting, done, replied, failed, cancelled, got 'nope'; nothing changed"},
        {R"({"action": "stop", "lead_ids": [1, "x", -3, 2.5, null]})",
         "'lead_ids' must hold positive integers, got \"x\" (at 1), -3 (at 2), 2.5 (at 3), null (at 4); nothing "
         "changed"},
        {R"({"action": "stop", "lead_ids": [100000000000000000000, 18446744073709551615, 0]})",
         "'lead_ids' must hold positive integers, got 1e+20 (at 0, too large for a lead id), 18446744073709551615 "
         "(at 1, too large for a lead id), 0 (at 2); nothing changed"},
        {R"({"action": "skip", "state": "ready", "to": 5})", "'to' must be a string, got 5; nothing changed"},
    };
    for (const auto& [body, message] : once) {
        auto r = call("POST", "/v1/campaigns/ops/leads:bulk", body);
        EXPECT_EQ(r.status, 422) << body << " " << r.body;
        EXPECT_EQ(error_message(r), message) << body;
    }
    auto to_typed = call("POST", base + a + "/skip", R"({"to": 5})");
    EXPECT_EQ(error_message(to_typed), "'to' must be a string, got 5; nothing changed") << to_typed.body;
    auto single = call("POST", base + a + "/move", R"({"to": "v", "why": 1})");
    EXPECT_EQ(single.status, 422) << single.body;
    for (const char* each : {"unknown field 'why' (fields: to, account)", "move needs the new sender",
                             "'to' is for skip, not move"}) {
        EXPECT_NE(error_message(single).find(each), std::string::npos) << each << " " << single.body;
    }
    EXPECT_EQ(env_->run({"leads", "stop", "ops", "--state", "sleepy"}).exit_code, 2);
    EXPECT_EQ(env_->run({"leads", "stop", "ops"}).exit_code, 2);
    EXPECT_EQ(env_->run({"leads", "stop", "ops", b}).exit_code, 2);  // a conflict with its state (409 in the API): the caller's mistake
    EXPECT_EQ(q(snapshot_sql), snapshot);

    // retry: a, in its delay, is refused (it would cut the delay short); e, ready in its first step
    // and held back for a few minutes, is due now; the gate decides later (nothing about quotas is
    // touched here).
    auto in_delay = call("POST", base + a + "/retry");
    EXPECT_EQ(in_delay.status, 409) << in_delay.body;
    EXPECT_NE(error_message(in_delay).find("a delay"), std::string::npos) << in_delay.body;
    EXPECT_EQ(env_->run({"leads", "retry", "ops", a}).exit_code, 2);
    // A lead named twice is one lead (the count of leads found against the ids named read past
    // an empty list, and serve and the CLI died of it): refused as when named once.
    auto twice = call("POST", "/v1/campaigns/ops/leads:bulk", R"({"action": "retry", "lead_ids": [)" + a + "," + a + "]}");
    EXPECT_EQ(twice.status, 409) << twice.body;
    EXPECT_NE(error_message(twice).find("a delay"), std::string::npos) << twice.body;
    EXPECT_EQ(env_->run({"leads", "retry", "ops", a, a}).exit_code, 2);
    EXPECT_EQ(env_->run({"leads", "stop", "ops", b, b}).exit_code, 2);
    auto with_missing = env_->run({"leads", "stop", "ops", b, b, "999999"});
    EXPECT_EQ(with_missing.exit_code, 2) << with_missing.output;
    EXPECT_NE(with_missing.output.find("has no lead 999999"), std::string::npos) << with_missing.output;
    // Every missing id is named, the first five (it named the first, and counted the rest).
    auto missing = call("POST", "/v1/campaigns/ops/leads:bulk",
                        R"({"action": "stop", "lead_ids": [99999, 88888, 77777, )" + a + R"(, 66666, 55555, 44444]})");
    EXPECT_EQ(missing.status, 404) << missing.body;
    EXPECT_EQ(error_message(missing),
              "campaign 'ops' has no leads 99999, 88888, 77777, 66666, 55555 (and 1 more missing); nothing changed")
        << missing.body;
    EXPECT_EQ(q(snapshot_sql), snapshot);
    const auto e = lead_id(urls_[4]);
    q("UPDATE enrollments SET next_run_at = now() + interval '5 minutes', due_at = now() + interval '5 minutes', "
      "reason = 'waiting for the API key''s request rate' WHERE lead_id = " + e);
    auto retried = call("POST", base + e + "/retry");
    ASSERT_EQ(retried.status, 200) << retried.body;
    EXPECT_EQ(retried.body_json()["changed"][0]["state"], "ready");
    EXPECT_EQ(q("SELECT next_run_at <= now() AND due_at <= now() FROM enrollments WHERE lead_id = " + e), "t");
    // skip: a to the wait step (waiting until its timeout), then retry refuses it.
    auto skipped = call("POST", base + a + "/skip", R"({"to": "wait"})");
    ASSERT_EQ(skipped.status, 200) << skipped.body;
    EXPECT_EQ(q("SELECT status || '|' || step || '|' || (next_run_at > now() + interval '1 hour 59 minutes') "
                "FROM enrollments WHERE lead_id = " + a),
              "waiting|wait|true");
    auto waiting = call("POST", base + a + "/retry");
    EXPECT_EQ(waiting.status, 409) << waiting.body;
    EXPECT_NE(error_message(waiting).find("timeout"), std::string::npos);
    // skip to the end step finishes the lead.
    auto ended = env_->run({"leads", "skip", "ops", c, "--to", "finish", "--format", "json"});
    ASSERT_EQ(ended.exit_code, 0) << ended.output;
    EXPECT_EQ(q("SELECT status || '|' || step FROM enrollments WHERE lead_id = " + c), "done|");
    // A failed lead: retry takes its step up again from a fresh count (a visit: ready, due now),
    // stop and move refuse it.
    const auto f = lead_id(urls_[5]);
    q("UPDATE enrollments SET status = 'failed', attempt = 3, reason = 'attempts exhausted', finished_at = now() "
      "WHERE lead_id = " + f);
    EXPECT_EQ(call("POST", base + f + "/stop").status, 409);
    EXPECT_EQ(call("POST", base + f + "/move", R"({"account": "sender-2"})").status, 409);
    // On the do-not-contact list, it stays failed.
    q("INSERT INTO do_not_contact (canonical_url, reason) SELECT canonical_url, 'asked' FROM leads WHERE lead_id = " + f);
    auto on_list = call("POST", base + f + "/retry");
    EXPECT_EQ(on_list.status, 409) << on_list.body;
    EXPECT_NE(error_message(on_list).find("do-not-contact"), std::string::npos) << on_list.body;
    q("DELETE FROM do_not_contact WHERE canonical_url = (SELECT canonical_url FROM leads WHERE lead_id = " + f + ")");
    auto revived = env_->run({"leads", "retry", "ops", f});
    ASSERT_EQ(revived.exit_code, 0) << revived.output;
    EXPECT_EQ(q("SELECT status || '|' || step || '|' || attempt || '|' || reconcile || '|' || (finished_at IS NULL) || '|' || "
                "(next_run_at <= now()) FROM enrollments WHERE lead_id = " + f),
              "ready|v|0|false|true|true");
    // move: d to sender-2 (not contacted yet); a finished lead is refused. d waited for its old
    // sender's day quota until tomorrow: that wait is not the new sender's, so it is due now (a
    // trial's moved leads kept "waiting for the invite day quota of account <the old one>").
    const auto old_sender = q("SELECT account_id FROM enrollments WHERE lead_id = " + d);
    q("UPDATE enrollments SET wait_code = 'day_quota', next_run_at = now() + interval '1 day', reason = "
      "'waiting for the invite day quota of account " + old_sender + "' WHERE lead_id = " + d);
    auto moved = call("POST", base + d + "/move", R"({"account": "sender-2"})");
    ASSERT_EQ(moved.status, 200) << moved.body;
    // The campaign lists sender-1 alone: the move is taken, and said.
    EXPECT_NE(moved.body_json().value("warning", "").find("sender-2 (acc_"), std::string::npos) << moved.body;
    EXPECT_NE(moved.body_json().value("warning", "").find(") is not one of the campaign's senders (sender-1): its "
                                                          "quotas and caps apply to these leads"),
              std::string::npos)
        << moved.body;
    EXPECT_EQ(q("SELECT a.label FROM enrollments e JOIN accounts a USING (account_id) WHERE e.lead_id = " + d), "sender-2");
    EXPECT_EQ(q("SELECT (next_run_at <= now()) || '|' || reason || '|' || COALESCE(wait_code, 'none') FROM "
                "enrollments WHERE lead_id = " + d),
              "true|moved from sender " + old_sender + " by an operator|none");
    // A wait of the lead's own (the working hours) keeps its time and reason on another sender.
    const auto e_sender = q("SELECT a.label FROM enrollments e JOIN accounts a USING (account_id) WHERE e.lead_id = " + e);
    q("UPDATE enrollments SET wait_code = 'schedule', next_run_at = now() + interval '5 hours', reason = "
      "'outside working hours' WHERE lead_id = " + e);
    auto kept = call("POST", base + e + "/move",
                     json{{"account", e_sender == "sender-1" ? "sender-2" : "sender-1"}}.dump());
    ASSERT_EQ(kept.status, 200) << kept.body;
    EXPECT_EQ(q("SELECT (next_run_at > now() + interval '4 hours') || '|' || reason FROM enrollments WHERE lead_id = " + e),
              "true|outside working hours");
    EXPECT_EQ(call("POST", base + c + "/move", R"({"account": "sender-2"})").status, 409);
    // A lead its sender invited already stays with it.
    q("INSERT INTO step_attempts (enrollment_id, step, call, attempt, outcome, worker, finished_at) "
      "SELECT enrollment_id, 'v', 'invite', 1, 'ok', 'w', now() FROM enrollments WHERE lead_id = " + d);
    auto contacted = call("POST", base + d + "/move", R"({"account": "sender-1"})");
    EXPECT_EQ(contacted.status, 409) << contacted.body;
    EXPECT_NE(error_message(contacted).find("contacted it already"), std::string::npos);

    // One stop through the CLI: the lead ends, with no next run to speak of.
    auto one = env_->run({"leads", "stop", "ops", e});
    ASSERT_EQ(one.exit_code, 0) << one.output;
    EXPECT_NE(one.output.find("lead " + e + ": ready -> cancelled"), std::string::npos) << one.output;
    EXPECT_EQ(one.output.find("next run"), std::string::npos) << one.output;
    // Bulk over live leads: the calling one is refused and counted, the rest stop.
    auto bulk = call("POST", "/v1/campaigns/ops/leads:bulk", R"({"action": "stop", "state": "live"})");
    ASSERT_EQ(bulk.status, 200) << bulk.body;
    auto r = bulk.body_json();
    EXPECT_EQ(r["matched"], 4) << bulk.body;  // a (waiting), b (calling), d, and one more ready
    EXPECT_EQ(r["changed_count"], 3) << bulk.body;
    EXPECT_EQ(r["refused_count"], 1) << bulk.body;
    EXPECT_EQ(r["refused"][0]["lead_id"], std::stoll(b));
    EXPECT_EQ(q("SELECT count(*) FROM enrollments WHERE status = 'cancelled' AND reason = 'stopped by an operator'"), "4");
    EXPECT_EQ(q("SELECT status FROM enrollments WHERE lead_id = " + b), "calling");
    // A stop of a lead stopped already is what was asked: a success that changes nothing (as a
    // pause of a paused campaign), not a conflict; a finished lead of another kind stays refused.
    const auto stopped = q(snapshot_sql);
    auto stop_again = call("POST", base + d + "/stop");
    ASSERT_EQ(stop_again.status, 200) << stop_again.body;
    EXPECT_EQ(stop_again.body_json()["already_count"], 1) << stop_again.body;
    EXPECT_EQ(stop_again.body_json()["changed_count"], 0) << stop_again.body;
    auto again_cli = env_->run({"leads", "stop", "ops", d});
    EXPECT_EQ(again_cli.exit_code, 0) << again_cli.output;
    EXPECT_NE(again_cli.output.find("0 changed, 0 refused, 1 stopped already"), std::string::npos) << again_cli.output;
    EXPECT_EQ(env_->run({"leads", "stop", "ops", c}).exit_code, 2);  // done: refused
    // Two leads named, each refused (a in its delay, c done): nothing changed, and the exit status
    // says so, as for one lead (it was 0, which a script reads as done).
    auto both_refused = env_->run({"leads", "retry", "ops", a, c});
    EXPECT_EQ(both_refused.exit_code, 2) << both_refused.output;
    EXPECT_NE(both_refused.output.find("0 changed, 2 refused"), std::string::npos) << both_refused.output;
    EXPECT_NE(both_refused.output.find("nothing changed: every lead matched was refused"), std::string::npos)
        << both_refused.output;
    EXPECT_EQ(q(snapshot_sql), stopped);

    // leads list / show through the CLI.
    auto listed = env_->run({"leads", "list", "ops", "--state", "cancelled", "--format", "json"});
    ASSERT_EQ(listed.exit_code, 0) << listed.output;
    EXPECT_EQ(json::parse(listed.output)["leads"].size(), 4u);
    auto as_csv = env_->run({"leads", "list", "ops", "--format", "csv"});
    ASSERT_EQ(as_csv.exit_code, 0) << as_csv.output;
    EXPECT_EQ(std::count(as_csv.output.begin(), as_csv.output.end(), '\n'), 7);  // header + 6
    // RFC 4180, as every other listing's csv: CRLF line ends.
    EXPECT_EQ(as_csv.output.find("\n"), as_csv.output.find("\r\n") + 1) << as_csv.output;
    // The table's columns line up whatever the values' lengths: each row's profile starts where
    // the header's "profile" does.
    auto as_table = env_->run({"leads", "list", "ops"});
    ASSERT_EQ(as_table.exit_code, 0) << as_table.output;
    std::istringstream lines(as_table.output);
    std::string header, row;
    std::getline(lines, header);
    const auto column = header.find("profile");
    ASSERT_NE(column, std::string::npos) << as_table.output;
    int rows = 0;
    while (std::getline(lines, row) && row.find("https://") != std::string::npos) {
        EXPECT_EQ(row.find("https://"), column) << as_table.output;
        ++rows;
    }
    EXPECT_EQ(rows, 6) << as_table.output;
    EXPECT_NE(as_table.output.find("\n6 leads\n"), std::string::npos) << as_table.output;
    // A finished lead has no next run (the table kept its last one): c, done, shows "-".
    const auto next_run = header.find("next run");
    ASSERT_NE(next_run, std::string::npos) << as_table.output;
    bool saw_c = false;
    std::istringstream again(as_table.output);
    for (std::string line; std::getline(again, line);) {
        if (line.rfind("  " + c + " ", 0) == 0) {   // the table is indented by two spaces
            saw_c = true;
            EXPECT_EQ(line.substr(next_run, 2), "- ") << as_table.output;
        }
    }
    EXPECT_TRUE(saw_c) << as_table.output;
    EXPECT_NE(env_->run({"leads", "show", "ops", c}).output.find("next run    none, finished"), std::string::npos);
    // In JSON (the CLI's and the admin API's) too: no next_run_at.
    const auto c_json = json::parse(env_->run({"leads", "show", "ops", c, "--format", "json"}).output);
    ASSERT_TRUE(c_json.contains("next_run_at")) << c_json.dump();
    EXPECT_TRUE(c_json["next_run_at"].is_null()) << c_json.dump();
    EXPECT_TRUE(c_json["finished_at"].is_string()) << c_json.dump();
    auto show = env_->run({"leads", "show", "ops", d, "--format", "json"});
    ASSERT_EQ(show.exit_code, 0) << show.output;
    EXPECT_EQ(json::parse(show.output)["timeline"].size(), 1u);
    // The CLI's detail is the admin API's, events included.
    auto detail = call("GET", base + d);
    ASSERT_EQ(detail.status, 200) << detail.body;
    EXPECT_EQ(json::parse(show.output), detail.body_json());
    EXPECT_TRUE(detail.body_json()["events"].is_array()) << detail.body;
    auto table = env_->run({"leads", "show", "ops", d});
    EXPECT_NE(table.output.find("events (0):"), std::string::npos) << table.output;
    // A call's text (a note, a message) is shown under it, its line breaks spelled out.
    q("UPDATE step_attempts SET body = 'Hi Ann,' || chr(10) || 'glad to connect', outcome = 'ok', "
      "finished_at = COALESCE(finished_at, now()) WHERE enrollment_id = "
      "(SELECT enrollment_id FROM enrollments WHERE lead_id = " + d + ")");
    auto texted = env_->run({"leads", "show", "ops", d});
    EXPECT_NE(texted.output.find("\n      text: Hi Ann,\\nglad to connect\n"), std::string::npos) << texted.output;
    // The text of a call that was refused was not sent, and says so.
    q("UPDATE step_attempts SET outcome = 'permanent' WHERE enrollment_id = "
      "(SELECT enrollment_id FROM enrollments WHERE lead_id = " + d + ")");
    auto refused = env_->run({"leads", "show", "ops", d});
    EXPECT_NE(refused.output.find("\n      text (not sent): Hi Ann,"), std::string::npos) << refused.output;
    EXPECT_EQ(json::parse(env_->run({"leads", "show", "ops", d, "--format", "json"}).output)["timeline"][0]["text"],
              "Hi Ann,\nglad to connect");
    // The fields print as JSON, its escapes once (a quote is \", not \\"), and a bidi control
    // spelled out.
    q("UPDATE leads SET fields = jsonb_build_object('note', 'say \"hi\"' || chr(8238) || 'x') WHERE lead_id = " + d);
    auto quoted = env_->run({"leads", "show", "ops", d});
    ASSERT_EQ(quoted.exit_code, 0) << quoted.output;
    EXPECT_NE(quoted.output.find(R"(fields      {"note":"say \"hi\"\u{202e}x"})"), std::string::npos) << quoted.output;
    EXPECT_EQ(env_->run({"leads", "show", "ops", "77777777"}).exit_code, 2);
    // A finished lead has no step: the line says so, not an empty name and an attempt.
    q("UPDATE enrollments SET status = 'done', step = '', finished_at = '2026-03-10T12:00:00Z', lease_owner = NULL, "
      "lease_expires_at = NULL, reconcile = false "
      "WHERE lead_id = " + d);
    auto finished = env_->run({"leads", "show", "ops", d});
    ASSERT_EQ(finished.exit_code, 0) << finished.output;
    EXPECT_NE(finished.output.find("  step        none, finished at 2026-03-10T12:00:00Z\n"), std::string::npos)
        << finished.output;
    // Its sentence names its state, said once ("done (finished: done)" before).
    EXPECT_EQ(finished.output.rfind("lead " + d + " in campaign ops: finished: done (", 0), 0u) << finished.output;
    EXPECT_EQ(finished.output.find("(finished:"), std::string::npos) << finished.output;
}

// A failed lead's retry at a step that contacts the person checks the step's effect first only
// when its last telling attempt may have taken effect: an uncertain answer, or one a
// reconciliation found present. One whose request was refused, or a reconciliation found absent,
// is sent afresh (the reconciliation of a refused invite took a connection the operator accepted
// for the invite's effect, and counted the lead invited). A reconciliation that could not say
// tells nothing: the uncertain request before it is checked.
// A lead skipped to a message step with no acceptance seen is not known to be a connection of its
// sender, and the platform lets only connections be messaged: the skip says so (it said nothing,
// and the message failed later). One whose acceptance was seen is not counted.
TEST_F(DncTest, ASkipToAMessageStepSaysWhenNoAcceptanceWasSeen) {
    write("people.csv", "profile_url,first_name\n" + urls_[0] + ",P\n" + urls_[1] + ",Q\n");
    auto file = write("m.yaml", "name: msg\naccounts: [sender-1]\naudience:\n  file: people.csv\n" +
                                    schedule_and_budget() +
                                    "steps:\n  - id: v\n    kind: visit\n  - id: hello\n    kind: send\n"
                                    "    message_text: Hi\n");
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);
    const auto a = lead_id(urls_[0]), b = lead_id(urls_[1]);
    auto skipped = env_->run({"leads", "skip", "msg", a, "--to", "hello"});
    ASSERT_EQ(skipped.exit_code, 0) << skipped.output;
    EXPECT_NE(skipped.output.find("note: 1 lead was moved to a message step with no acceptance seen"),
              std::string::npos)
        << skipped.output;
    q("UPDATE enrollments SET accepted_seen = true WHERE lead_id = " + b);
    auto connected = call("POST", "/v1/campaigns/msg/leads/" + b + "/skip", R"({"to": "hello"})");
    ASSERT_EQ(connected.status, 200) << connected.body;
    EXPECT_EQ(connected.body_json()["changed_count"], 1) << connected.body;
    EXPECT_EQ(connected.body_json()["not_known_connected"], 0) << connected.body;
}

TEST_F(DncTest, ARetriedContactIsCheckedFirstOnlyWhenItMayHaveTakenEffect) {
    std::string csv = "profile_url,first_name\n";
    for (int i = 0; i < 6; ++i) {
        csv += urls_[i] + ",P\n";
    }
    write("people.csv", csv);
    auto file = write("c.yaml", "name: again\naccounts: [sender-1]\naudience:\n  file: people.csv\n" +
                                    schedule_and_budget() + "steps:\n  - id: inv\n    kind: invite\n");
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);
    // Each lead's invite attempts, oldest first: (outcome, reconcile).
    const std::vector<std::vector<std::pair<std::string, bool>>> histories = {
        {{"permanent", false}},                                                  // refused
        {{"uncertain", false}},                                                  // answer lost
        {{"uncertain", false}, {"transient", true}},                             // check failed
        {{"uncertain", false}, {"reconciled_absent", true}, {"transient", false}},  // absent, then refused
        {{"uncertain", false}, {"reconciled_present", true}},                    // found
        {},                                                                      // no attempt
    };
    for (std::size_t i = 0; i < histories.size(); ++i) {
        const auto lead = lead_id(urls_[i]);
        int n = 0;
        for (const auto& [outcome, reconcile] : histories[i]) {
            q("INSERT INTO step_attempts (enrollment_id, step, call, reconcile, attempt, outcome, worker, finished_at) "
              "SELECT enrollment_id, 'inv', 'invite', " + std::string(reconcile ? "true" : "false") + ", " +
              std::to_string(++n) + ", '" + outcome + "', 'w', now() FROM enrollments WHERE lead_id = " + lead);
        }
        q("UPDATE enrollments SET status = 'failed', attempt = 5, reason = 'attempts exhausted', finished_at = now() "
          "WHERE lead_id = " + lead);
    }
    const std::vector<std::string> expected = {"ready|false",   "calling|true", "calling|true",
                                               "ready|false",   "calling|true", "ready|false"};
    for (std::size_t i = 0; i < histories.size(); ++i) {
        const auto lead = lead_id(urls_[i]);
        auto r = env_->run({"leads", "retry", "again", lead});
        ASSERT_EQ(r.exit_code, 0) << i << ": " << r.output;
        EXPECT_EQ(q("SELECT status || '|' || reconcile || '|' || step || '|' || attempt FROM enrollments WHERE lead_id = " +
                    lead),
                  expected[i] + "|inv|0")
            << "history " << i;
    }
}

// A person added while their lead waits between two steps is never contacted again: the
// sandbox's record shows the others invited, and not them.
TEST_F(DncTest, AddedMidCampaignIsNeverContactedAgain) {
    std::string csv = "profile_url,first_name\n";
    for (int i = 0; i < 3; ++i) {
        csv += urls_[i] + ",P\n";
    }
    write("people.csv", csv);
    auto file = write("m.yaml", "name: mid\naccounts: [sender-1]\naudience:\n  file: people.csv\n" + schedule_and_budget() +
                                    "steps:\n  - id: v\n    kind: visit\n  - id: pause\n    kind: delay\n    duration: 6s\n"
                                    "  - id: invite\n    kind: invite\n  - id: finish\n    kind: end\n");
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);
    auto worker = env_->spawn({"worker", "--exit-when-idle"});
    // urls_[1] visited and waiting in the delay.
    bool paused = false;
    for (int i = 0; i < 1000 && !paused; ++i) {
        paused = q("SELECT status || '|' || step FROM enrollments WHERE lead_id = " + lead_id(urls_[1])) == "ready|pause";
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(paused) << worker->log();
    auto added = call("POST", "/v1/dnc", R"({"profile_url": ")" + urls_[1] + R"("})");
    ASSERT_EQ(added.status, 201) << added.body;
    EXPECT_EQ(added.body_json()["stopped_leads"], 1) << added.body;
    ASSERT_EQ(worker->wait(60'000), 0) << worker->log();

    auto truth = read_side_effects(sandbox_->control_port());
    EXPECT_EQ(truth.invited_people, 2);
    EXPECT_FALSE(truth.invites_per_person.contains(urls_[1]));
    EXPECT_TRUE(truth.invites_per_person.contains(urls_[0]));
    EXPECT_TRUE(truth.invites_per_person.contains(urls_[2]));
    EXPECT_EQ(status_of(urls_[1]), "cancelled|stopped: do-not-contact");
    EXPECT_EQ(q("SELECT count(*) FROM step_attempts a JOIN enrollments e USING (enrollment_id) "
                "JOIN leads l USING (lead_id) WHERE l.profile_url = '" + urls_[1] + "' AND a.call <> 'visit'"),
              "0");
}

// A person put on the list while their invite waits in the worker's queue (the row already
// leased, `calling`) is not contacted: the worker checks the list before each side-effecting
// call. One API connection and 1.5 s of sandbox latency keep four of the five invites queued
// behind the first while the entries are added.
TEST_F(DncTest, AddedWhileTheCallWaitsInTheQueueIsNotSent) {
    std::string csv = "profile_url,first_name,company\n";
    for (int i = 3; i < 8; ++i) {
        csv += urls_[i] + ",P,Company " + std::to_string(i) + "\n";
    }
    write("queued.csv", csv);
    auto file = write("q.yaml", "name: queued\naccounts: [sender-1]\naudience:\n  file: queued.csv\n" +
                                    schedule_and_budget() +
                                    "steps:\n  - id: invite\n    kind: invite\n  - id: finish\n    kind: end\n");
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);
    http_client control("127.0.0.1", sandbox_->control_port());
    ASSERT_EQ(control.post("/control/settings", json{{"latency_ms_min", 1500}, {"latency_ms_max", 1500}}).status, 200);
    auto worker = env_->spawn({"worker", "--exit-when-idle", "--api-pool-size", "1", "--worker-lanes", "1",
                               "--batch-size", "50"});
    ASSERT_TRUE(calling(5)) << worker->log();
    // Four by profile URL, the fifth by company.
    json entries = json::array();
    for (int i = 3; i < 7; ++i) {
        entries.push_back({{"profile_url", urls_[i]}});
    }
    entries.push_back({{"company", "  COMPANY 7 "}});
    auto added = call("POST", "/v1/dnc", json{{"entries", entries}}.dump());
    ASSERT_EQ(added.status, 201) << added.body;
    EXPECT_EQ(added.body_json()["stopped_leads"], 0) << added.body;  // all five are in a call
    ASSERT_EQ(worker->wait(60'000), 0) << worker->log();

    // The one call already on the wire went; no request left for the other four.
    EXPECT_EQ(invitation_requests(control), 1) << control.get("/control/side-effects").body;
    int stopped = 0;
    for (int i = 3; i < 8; ++i) {
        stopped += status_of(urls_[i]) == "cancelled|stopped: do-not-contact" ? 1 : 0;
    }
    EXPECT_EQ(stopped, 4) << worker->log();
    // Recorded as failed for good (the lead stops), not as a transient failure to retry.
    EXPECT_EQ(q("SELECT count(*) FROM step_attempts WHERE error = 'not sent: do-not-contact' AND outcome = 'permanent'"),
              "4");
}

// A person put on the list while their invite is on the wire: the invite goes (it left before
// the add), and the lead stops as soon as its outcome is recorded. Before, it went on into its
// wait, stayed live for hours, and its wait's timeout sent a billed check_invitation about the
// person; it stopped only at the message. And a read queued behind it is not sent either.
TEST_F(DncTest, AddedWhileTheCallIsOnTheWireStopsTheLeadWhenItsOutcomeIsRecorded) {
    std::string csv = "profile_url,first_name\n";
    for (int i = 3; i < 5; ++i) {
        csv += urls_[i] + ",P\n";
    }
    write("wire.csv", csv);
    auto file = write("w.yaml", "name: wire\naccounts: [sender-1]\naudience:\n  file: wire.csv\n" +
                                    schedule_and_budget() +
                                    "steps:\n  - id: invite\n    kind: invite\n"
                                    "  - id: wait\n    kind: wait_accepted\n    timeout: 2s\n    next: hello\n"
                                    "    on_timeout: hello\n"
                                    "  - id: hello\n    kind: send\n    message_text: hi\n");
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);
    http_client control("127.0.0.1", sandbox_->control_port());
    ASSERT_EQ(control.post("/control/settings", json{{"latency_ms_min", 1500}, {"latency_ms_max", 1500}}).status, 200);
    auto worker = env_->spawn({"worker", "--exit-when-idle", "--api-pool-size", "1", "--worker-lanes", "1"});
    ASSERT_TRUE(calling(2)) << worker->log();
    auto added = call("POST", "/v1/dnc", json{{"entries", {{{"profile_url", urls_[3]}}, {{"profile_url", urls_[4]}}}}}.dump());
    ASSERT_EQ(added.status, 201) << added.body;
    EXPECT_EQ(added.body_json()["in_flight_leads"], 2) << added.body;
    ASSERT_EQ(worker->wait(60'000), 0) << worker->log();

    // The invite on the wire went; its lead stopped in the step it entered, with the invitation
    // recorded; the queued one was not sent. Nothing else reached the API about either person.
    EXPECT_EQ(invitation_requests(control), 1) << control.get("/control/side-effects").body;
    for (int i = 3; i < 5; ++i) {
        EXPECT_EQ(status_of(urls_[i]), "cancelled|stopped: do-not-contact") << worker->log();
    }
    EXPECT_EQ(q("SELECT count(*) FROM enrollments WHERE status = 'cancelled' AND step = 'wait'"), "1");
    EXPECT_EQ(q("SELECT count(*) FROM step_attempts WHERE call = 'invite' AND outcome = 'ok'"), "1");
    for (const std::string action : {"check_invitation", "send"}) {
        EXPECT_EQ(control.get("/control/requests?action=" + action).body_json()["requests"].size(), 0u) << action;
    }
}

// The same for a new version of the campaign whose `exclude:` names people in a call: the apply
// leaves them to their worker, which stops them as the list's add does (before, the lead on the
// wire went on into its wait and was messaged after it, and the queued invite was sent).
TEST_F(DncTest, ExcludedWhileTheCallIsOnTheWireStopsTheLeadWhenItsOutcomeIsRecorded) {
    std::string csv = "profile_url,first_name\n";
    for (int i = 3; i < 6; ++i) {
        csv += urls_[i] + ",P\n";
    }
    write("wire.csv", csv);
    const std::string yaml = "name: wire\naccounts: [sender-1]\naudience:\n  file: wire.csv\n" + schedule_and_budget() +
                             "steps:\n  - id: invite\n    kind: invite\n"
                             "  - id: wait\n    kind: wait_accepted\n    timeout: 2s\n    next: hello\n"
                             "    on_timeout: hello\n"
                             "  - id: hello\n    kind: send\n    message_text: hi\n";
    auto file = write("w.yaml", yaml);
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);
    http_client control("127.0.0.1", sandbox_->control_port());
    ASSERT_EQ(control.post("/control/settings", json{{"latency_ms_min", 1500}, {"latency_ms_max", 1500}}).status, 200);
    auto worker = env_->spawn({"worker", "--exit-when-idle", "--api-pool-size", "1", "--worker-lanes", "1"});
    ASSERT_TRUE(calling(3)) << worker->log();
    write("w.yaml", yaml + "exclude:\n  profile_urls: [" + urls_[3] + ", " + urls_[4] + "]\n");
    auto applied = env_->run({"campaign", "apply", file});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    EXPECT_NE(applied.output.find("2 live leads this version's `exclude:` names are in a call: its worker stops them"),
              std::string::npos)
        << applied.output;
    ASSERT_EQ(worker->wait(60'000), 0) << worker->log();

    // At most the invite on the wire went about the excluded two (the one sent first); the other
    // was not sent. The third went on to its message.
    const auto truth = read_side_effects(sandbox_->control_port());
    const int excluded_invites = truth.invites_per_person.count(urls_[3]) + truth.invites_per_person.count(urls_[4]);
    EXPECT_LE(excluded_invites, 1) << control.get("/control/side-effects").body;
    EXPECT_TRUE(truth.invites_per_person.contains(urls_[5])) << control.get("/control/side-effects").body;
    for (int i = 3; i < 5; ++i) {
        EXPECT_EQ(status_of(urls_[i]), "cancelled|stopped: excluded by the campaign") << worker->log();
    }
    EXPECT_EQ(status_of(urls_[5]).substr(0, 7), "failed|") << worker->log();
    EXPECT_EQ(q("SELECT count(*) FROM step_attempts WHERE error = 'not sent: excluded by the campaign' AND "
                "outcome = 'permanent'"),
              std::to_string(2 - excluded_invites));
    // Nothing went about the excluded two after the invite: no call of theirs but the invites was
    // made or recorded, and the one message request the sandbox received is the third's (who is
    // no connection: the platform refused it, and the lead failed, for a reason of its own).
    EXPECT_EQ(q("SELECT count(*) FROM step_attempts a JOIN enrollments e USING (enrollment_id) JOIN leads l "
                "USING (lead_id) WHERE l.profile_url IN ('" + urls_[3] + "', '" + urls_[4] + "') AND a.call <> 'invite'"),
              "0");
    EXPECT_EQ(control.get("/control/requests?action=send").body_json()["requests"].size(), 1u);
    EXPECT_EQ(q("SELECT count(*) FROM step_attempts a JOIN enrollments e USING (enrollment_id) JOIN leads l "
                "USING (lead_id) WHERE l.profile_url = '" + urls_[5] + "' AND a.call = 'send'"),
              "1");
}

// A campaign cancelled while its calls are out: the invite on the wire went and was billed, and
// the funnel counts it (its enrollment, cancelled under the worker, kept no invited_at: `report
// funnel` said fewer invited and credits than the API's record); the queued ones are not sent.
TEST_F(DncTest, ACampaignCancelledWhileItsCallsAreOutCountsWhatTheyDid) {
    std::string csv = "profile_url,first_name\n";
    for (int i = 3; i < 6; ++i) {
        csv += urls_[i] + ",P\n";
    }
    write("cancel.csv", csv);
    auto file = write("c.yaml", "name: stopped\naccounts: [sender-1]\naudience:\n  file: cancel.csv\n" +
                                    schedule_and_budget() +
                                    "steps:\n  - id: invite\n    kind: invite\n"
                                    "  - id: wait\n    kind: wait_accepted\n    timeout: 1h\n    next: finish\n"
                                    "    on_timeout: finish\n  - id: finish\n    kind: end\n");
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);
    http_client control("127.0.0.1", sandbox_->control_port());
    ASSERT_EQ(control.post("/control/settings", json{{"latency_ms_min", 1500}, {"latency_ms_max", 1500}}).status, 200);
    auto worker = env_->spawn({"worker", "--exit-when-idle", "--api-pool-size", "1", "--worker-lanes", "1"});
    ASSERT_TRUE(calling(3)) << worker->log();
    auto cancelled = env_->run({"campaign", "cancel", "stopped"});
    ASSERT_EQ(cancelled.exit_code, 0) << cancelled.output;
    ASSERT_EQ(worker->wait(60'000), 0) << worker->log();

    // The invite on the wire went; the two queued behind it were not sent (they went out after
    // the cancel, for as long as the queue took).
    const int sent = read_side_effects(sandbox_->control_port()).invited_people;
    EXPECT_EQ(sent, 1);
    EXPECT_EQ(invitation_requests(control), sent) << control.get("/control/side-effects").body;
    EXPECT_EQ(q("SELECT count(*) FROM step_attempts WHERE error = 'not sent: its campaign was cancelled or paused'"),
              "2");
    EXPECT_EQ(q("SELECT count(*) FROM enrollments WHERE status = 'cancelled'"), "3");
    EXPECT_EQ(q("SELECT count(*) FROM enrollments WHERE invited_at IS NOT NULL"), std::to_string(sent));
    EXPECT_EQ(q("SELECT sum(credits) FROM enrollments"), std::to_string(sent));
    auto funnel = env_->run({"report", "funnel", "stopped", "--format", "json"});
    ASSERT_EQ(funnel.exit_code, 0) << funnel.output;
    const auto f = json::parse(funnel.output.substr(funnel.output.find('{')));
    EXPECT_EQ(f["invited"], sent) << funnel.output;
}

TEST_F(DncTest, AnOperatorsPauseHoldsTheQueuedCallsUntilTheResume) {
    std::string csv = "profile_url,first_name\n";
    for (int i = 3; i < 6; ++i) {
        csv += urls_[i] + ",P\n";
    }
    write("pause.csv", csv);
    auto file = write("p.yaml", "name: held\naccounts: [sender-1]\naudience:\n  file: pause.csv\n" +
                                    schedule_and_budget() +
                                    "steps:\n  - id: invite\n    kind: invite\n  - id: finish\n    kind: end\n");
    ASSERT_EQ(env_->run({"campaign", "apply", file}).exit_code, 0);
    http_client control("127.0.0.1", sandbox_->control_port());
    ASSERT_EQ(control.post("/control/settings", json{{"latency_ms_min", 1500}, {"latency_ms_max", 1500}}).status, 200);
    auto worker = env_->spawn({"worker", "--api-pool-size", "1", "--worker-lanes", "1"});
    ASSERT_TRUE(calling(3)) << worker->log();
    ASSERT_EQ(env_->run({"campaign", "pause", "held"}).exit_code, 0);
    // The call on the wire comes back, and the two queued are held, not sent: nobody is calling.
    for (int i = 0; i < 400 && q("SELECT count(*) FROM enrollments WHERE status = 'calling'") != "0"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(invitation_requests(control), 1) << control.get("/control/side-effects").body;
    EXPECT_EQ(q("SELECT count(*) FROM enrollments WHERE status = 'ready' AND step = 'invite' AND attempt = 0"), "2")
        << worker->log();
    ASSERT_EQ(env_->run({"campaign", "resume", "held"}).exit_code, 0);
    bool done = false;
    for (int i = 0; i < 1000 && !done; ++i) {
        done = q("SELECT count(*) FROM enrollments WHERE status = 'done'") == "3";
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(done) << worker->log();
    worker->stop(SIGTERM);
    EXPECT_EQ(read_side_effects(sandbox_->control_port()).invited_people, 3);
    EXPECT_EQ(invitation_requests(control), 3);
}

}  // namespace
