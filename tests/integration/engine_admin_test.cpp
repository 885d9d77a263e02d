// End-to-end tests of the admin REST endpoint (engine/admin.hpp): the real `orchestrator serve`
// with ORCH_ADMIN_TOKEN, against the real sandbox, Postgres (a database of the test's own) and
// Redis; every endpoint, auth, and the 400/401/404/405/409/413/422 cases, each checked to change
// nothing in the database.
#include "tests/support/env_limiter.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <regex>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <random>
#include <csignal>
#include <cstdlib>
#include <set>
#include <thread>

namespace {

using orch::test::free_port;

using orch::test::background_process;
using orch::test::http_client;
using orch::test::http_result;
using orch::test::json;
using orch::test::orchestrator_env;
using orch::test::parse_answer;
using orch::test::raw_exchange;
using orch::test::sandbox_process;

const std::string token = "admin-test-token-0123456789";


std::string campaign_yaml(const std::string& name, const std::string& audience, int budget = 1000000) {
    return "name: " + name + "\naccounts: [sender-1, sender-2]\naudience:\n" + audience +
           "schedule:\n  time_zone: UTC\n  days: [mon, tue, wed, thu, fri, sat, sun]\n  hours: \"00:00-24:00\"\n"
           "budget_credits: " + std::to_string(budget) + "\nstop_on_reply: true\nsteps:\n"
           "  - id: check\n    kind: check_invitation\n    on_accepted: message\n    on_pending: wait\n"
           "    on_no_invitation: invite\n"
           "  - id: invite\n    kind: invite\n    note: \"Hi {{first_name}}, let's connect.\"\n"
           "  - id: wait\n    kind: wait_accepted\n    timeout: 1h\n    next: message\n    on_timeout: end\n"
           "  - id: message\n    kind: send\n    message_text: \"Thanks {{first_name}}, open to a chat?\"\n";
}

std::string search_audience(int n) {
    return "  search:\n    title: Engineer\n  total_results: " + std::to_string(n) + "\n";
}


// True when `body` is the documented Error object for `status`.
bool is_error_shape(const std::string& body, int status) {
    auto j = json::parse(body, nullptr, false);
    return j.is_object() && j.contains("error") && j["error"].is_object() && j["error"].contains("status") &&
           j["error"]["status"] == status && j["error"].contains("message") && j["error"]["message"].is_string();
}

class AdminTest : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        sandbox_ = std::make_unique<sandbox_process>(std::vector<std::string>{"--accept-probability", "1"});
        env_ = std::make_unique<orchestrator_env>(sandbox_->port());
        for (int i = 1; i <= 2; ++i) {
            auto r = env_->run({"accounts", "connect", "--login-token", "token-" + std::to_string(i), "--country", "FR",
                                "--label", "sender-" + std::to_string(i)});
            ASSERT_EQ(r.exit_code, 0) << r.output;
        }
        env_->set("ORCH_ADMIN_TOKEN", token);
        port_ = free_port();
        serve_ = env_->spawn({"serve", "--webhook-listen", "127.0.0.1:" + std::to_string(free_port()), "--admin-listen",
                              "127.0.0.1:" + std::to_string(port_), "--admin-body-limit-bytes", "65536"});
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

    http_result call(const std::string& method, const std::string& target, const std::string& body = "",
                     const std::string& bearer = token) {
        std::map<std::string, std::string> h;
        if (!bearer.empty()) {
            h["Authorization"] = "Bearer " + bearer;
        }
        // Campaign definitions go as YAML (the test client labels other bodies JSON).
        if (method == "POST" && (target == "/v1/campaigns" || target.rfind("/v1/campaigns?", 0) == 0)) {
            h["Content-Type"] = "application/yaml";
        }
        return client_->request(method, target, body, h);
    }
    http_result get(const std::string& target) { return call("GET", target); }

    // The error object of a response, checked to have the response's status.
    static std::string error_message(const http_result& r) {
        auto j = r.body_json();
        EXPECT_TRUE(j.contains("error")) << r.body;
        EXPECT_EQ(j["error"]["status"], r.status) << r.body;
        return j["error"].value("message", "");
    }

    std::string count(const std::string& table) { return env_->scalar("SELECT count(*) FROM " + table); }

    std::unique_ptr<sandbox_process> sandbox_;
    std::unique_ptr<orchestrator_env> env_;
    std::unique_ptr<background_process> serve_;
    std::unique_ptr<http_client> client_;
    unsigned short port_ = 0;
};

TEST_F(AdminTest, AuthIsRequiredExceptForProbes) {
    EXPECT_EQ(call("GET", "/healthz", "", "").status, 200);
    auto none = call("GET", "/v1/campaigns", "", "");
    EXPECT_EQ(none.status, 401);
    EXPECT_NE(error_message(none).find("missing"), std::string::npos);
    EXPECT_EQ(none.header("www-authenticate").rfind("Bearer", 0), 0u);
    auto wrong = call("GET", "/v1/campaigns", "", "admin-test-token-0123456780");
    EXPECT_EQ(wrong.status, 401);
    EXPECT_EQ(error_message(wrong), "invalid token");
    EXPECT_EQ(call("GET", "/v1/campaigns", "", token.substr(0, 10)).status, 401);
    EXPECT_EQ(call("GET", "/metrics", "", "").status, 401);
    EXPECT_EQ(call("POST", "/v1/campaigns", campaign_yaml("x", search_audience(3)), "").status, 401);
    EXPECT_EQ(count("campaigns"), "0");
    // Basic auth or another scheme is refused too.
    auto basic = client_->request("GET", "/v1/campaigns", "", {{"Authorization", "Basic " + token}});
    EXPECT_EQ(basic.status, 401);
    EXPECT_EQ(get("/v1/campaigns").status, 200);
}

TEST_F(AdminTest, UnknownPathsAndMethods) {
    auto r = get("/v1/nothing");
    EXPECT_EQ(r.status, 404);
    EXPECT_NE(error_message(r).find("no such path"), std::string::npos);
    EXPECT_EQ(get("/").status, 404);
    auto m = call("DELETE", "/v1/campaigns");
    EXPECT_EQ(m.status, 405);
    EXPECT_EQ(m.header("allow"), "GET, POST");
    error_message(m);
    EXPECT_EQ(call("POST", "/v1/accounts").status, 405);
    EXPECT_EQ(call("GET", "/v1/campaigns/x/pause").status, 405);
    EXPECT_EQ(call("PUT", "/healthz").status, 405);
    // The probes and /metrics take no query parameter, as every route refuses one it does not take.
    for (const char* probe : {"/healthz?x=1", "/readyz?verbose=true", "/metrics?x=1"}) {
        auto r = std::string_view(probe).starts_with("/metrics") ? call("GET", probe) : call("GET", probe, "", "");
        EXPECT_EQ(r.status, 400) << probe;
        EXPECT_NE(error_message(r).find("unknown query parameter"), std::string::npos) << r.body;
    }
    EXPECT_EQ(get("/v1/campaigns/nope").status, 404);
    EXPECT_EQ(get("/v1/campaigns/nope/leads").status, 404);
    EXPECT_EQ(get("/v1/campaigns/nope/versions").status, 404);
    EXPECT_EQ(call("POST", "/v1/campaigns/nope/pause").status, 404);
}

TEST_F(AdminTest, BadDefinitionsChangeNothing) {
    // Empty body: 400. Over the body limit: 413. Invalid: 422 with line and column. Audience file: 422.
    auto empty = call("POST", "/v1/campaigns", "  \n");
    EXPECT_EQ(empty.status, 400);
    EXPECT_NE(error_message(empty).find("empty body"), std::string::npos);

    auto big = call("POST", "/v1/campaigns", std::string(70'000, 'x'));
    EXPECT_EQ(big.status, 413) << big.body;

    auto bad = campaign_yaml("bad", search_audience(3));
    bad.replace(bad.find("kind: invite"), 12, "kind: invitee");
    auto invalid = call("POST", "/v1/campaigns", bad);
    ASSERT_EQ(invalid.status, 422) << invalid.body;
    EXPECT_NE(error_message(invalid).find("nothing was stored"), std::string::npos);
    auto details = invalid.body_json()["error"]["details"];
    ASSERT_FALSE(details.empty());
    EXPECT_GT(details[0]["line"].get<int>(), 0);

    auto syntax = call("POST", "/v1/campaigns", "name: [unclosed\n");
    EXPECT_EQ(syntax.status, 422) << syntax.body;
    // yaml-cpp alone would loop forever on this one (a ',' where a value should start).
    auto comma = call("POST", "/v1/campaigns", "[a][a]\n,\n,");
    EXPECT_EQ(comma.status, 422) << comma.body;
    EXPECT_NE(comma.body.find("2:1: YAML syntax error: unexpected ','"), std::string::npos) << comma.body;

    auto unknown_account = campaign_yaml("acc", search_audience(3));
    unknown_account.replace(unknown_account.find("sender-2"), 8, "sender-9");
    EXPECT_EQ(call("POST", "/v1/campaigns", unknown_account).status, 422);

    auto file = call("POST", "/v1/campaigns", campaign_yaml("f", "  file: leads.csv\n"));
    EXPECT_EQ(file.status, 422);
    EXPECT_NE(error_message(file).find("audience.file 'leads.csv' cannot be read by the server"), std::string::npos);

    EXPECT_EQ(call("POST", "/v1/campaigns?dry_run=maybe", campaign_yaml("d", search_audience(3))).status, 400);
    auto dry = call("POST", "/v1/campaigns?dry_run=true", campaign_yaml("dry", search_audience(3)));
    EXPECT_EQ(dry.status, 200) << dry.body;
    EXPECT_EQ(dry.body_json()["valid"], true);
    EXPECT_EQ(dry.body_json()["apply_warnings"], json::array()) << dry.body;
    EXPECT_TRUE(dry.body_json()["live_budget"].is_null()) << dry.body;
    EXPECT_TRUE(dry.body_json()["search_held"].is_null()) << dry.body;  // the budget pays for the whole search

    EXPECT_EQ(count("campaigns"), "0");
    EXPECT_EQ(count("enrollments"), "0");
    EXPECT_EQ(count("leads"), "0");
    EXPECT_EQ(count("campaign_versions"), "0");
}

TEST_F(AdminTest, ApplyListGetVersionsAndStateChanges) {
    auto created = call("POST", "/v1/campaigns", campaign_yaml("alpha", search_audience(5)));
    ASSERT_EQ(created.status, 201) << created.body;
    auto c = created.body_json();
    EXPECT_EQ(c["result"], "created");
    EXPECT_EQ(c["version"], 1);
    EXPECT_EQ(c["enrolled"], 5);
    EXPECT_EQ(count("enrollments"), "5");
    // The audience search (5 results: 1 credit) is booked in the campaign's ledger.
    EXPECT_EQ(c["audience_credits"], 1) << c;
    EXPECT_TRUE(c["paused"].is_null()) << c;

    // Unchanged: no search is sent again, nothing is billed.
    auto again = call("POST", "/v1/campaigns", campaign_yaml("alpha", search_audience(5)));
    EXPECT_EQ(again.status, 200);
    EXPECT_EQ(again.body_json()["result"], "unchanged");
    EXPECT_EQ(again.body_json()["audience_credits"], 0);
    EXPECT_EQ(again.body_json()["version"], 1);
    EXPECT_EQ(env_->scalar("SELECT count(*) || ' ' || sum(posted) FROM ledger_transfers "
                           "WHERE attempt_id IS NULL AND action = 'search_people'"),
              "1 1");

    // A bad new version of an existing campaign changes nothing either.
    auto bad = campaign_yaml("alpha", search_audience(5));
    bad.replace(bad.find("timeout: 1h"), 11, "timeout: 1 fortnight");
    EXPECT_EQ(call("POST", "/v1/campaigns", bad).status, 422);
    EXPECT_EQ(count("campaign_versions"), "1");

    // A new budget leaves the audience as it was: a new version, and no search sent again.
    auto updated = call("POST", "/v1/campaigns", campaign_yaml("alpha", search_audience(5), 5000));
    EXPECT_EQ(updated.body_json()["excluded"], (json{{"stopped", 0}, {"in_call", 0}, {"without_company", 0}}))
        << updated.body;
    EXPECT_EQ(updated.status, 200);
    EXPECT_EQ(updated.body_json()["result"], "updated");
    EXPECT_EQ(updated.body_json()["version"], 2);
    EXPECT_EQ(updated.body_json()["audience_credits"], 0) << updated.body;
    EXPECT_TRUE(updated.body_json()["audience_search"].is_null()) << updated.body;
    EXPECT_NE(updated.body_json().value("note", "").find("search_again=true sends it"), std::string::npos)
        << updated.body;
    EXPECT_EQ(updated.body_json()["warnings"].size(), 0u) << updated.body;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE attempt_id IS NULL AND action = 'search_people'"),
              "1");
    EXPECT_EQ(call("POST", "/v1/campaigns?search_again=maybe", campaign_yaml("alpha", search_audience(5), 5000)).status,
              400);
    auto searched = call("POST", "/v1/campaigns?search_again=true", campaign_yaml("alpha", search_audience(5), 5000));
    EXPECT_EQ(searched.status, 200) << searched.body;
    EXPECT_EQ(searched.body_json()["result"], "unchanged") << searched.body;
    EXPECT_EQ(searched.body_json()["audience_search"]["found"], 5) << searched.body;
    EXPECT_EQ(searched.body_json()["enrolled"], 0) << searched.body;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE attempt_id IS NULL AND action = 'search_people'"),
              "2");
    // The leads enrolled under version 1 move to version 2 when asked: no search, nothing billed.
    EXPECT_EQ(call("POST", "/v1/campaigns?move_running=yes", campaign_yaml("alpha", search_audience(5), 5000)).status,
              400);
    auto moved = call("POST", "/v1/campaigns?move_running=true", campaign_yaml("alpha", search_audience(5), 5000));
    EXPECT_EQ(moved.status, 200) << moved.body;
    EXPECT_EQ(moved.body_json()["result"], "unchanged") << moved.body;
    EXPECT_EQ(moved.body_json()["moved"], 5) << moved.body;
    EXPECT_EQ(moved.body_json()["kept"], json::array()) << moved.body;
    EXPECT_TRUE(moved.body_json()["audience_search"].is_null()) << moved.body;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE version = 2"), "5");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE attempt_id IS NULL AND action = 'search_people'"),
              "2");
    // A budget the two searches used up: no third search is sent, nothing is stored or billed. A
    // dry run says so first; of an apply that sends no search, it says nothing.
    const auto stored_versions = count("campaign_versions");
    auto predicted = call("POST", "/v1/campaigns?dry_run=true&search_again=true",
                          campaign_yaml("alpha", search_audience(5), 2));
    EXPECT_EQ(predicted.status, 200) << predicted.body;
    EXPECT_NE(predicted.body_json().value("search_refused", "").find(
                  "campaign 'alpha': an apply now would not send the audience search: its budget of 2 credits "
                  "(budget_credits) has nothing left (2 spent or held"),
              std::string::npos)
        << predicted.body;
    // What the apply would say of the leads already there, from the apply rolled back.
    ASSERT_EQ(predicted.body_json()["apply_warnings"].size(), 1u) << predicted.body;
    EXPECT_NE(predicted.body_json()["apply_warnings"][0].get<std::string>().find(
                  "this version's budget of 2 credits is no more than what is already spent or reserved (2 credits)"),
              std::string::npos)
        << predicted.body;
    EXPECT_EQ(count("campaign_versions"), stored_versions);
    EXPECT_EQ(env_->scalar("SELECT total FROM ledger_budgets b JOIN campaigns c USING (campaign_id)"), "5000");
    auto quiet = call("POST", "/v1/campaigns?dry_run=true", campaign_yaml("alpha", search_audience(5), 5000));
    EXPECT_EQ(quiet.status, 200) << quiet.body;
    EXPECT_TRUE(quiet.body_json()["search_refused"].is_null()) << quiet.body;
    EXPECT_EQ(quiet.body_json()["apply_warnings"], json::array()) << quiet.body;
    // Caps this version would set below what the two searches (through sender-1, today) used.
    auto capped_yaml = campaign_yaml("alpha", search_audience(5), 5000);
    capped_yaml.replace(capped_yaml.find("budget_credits: 5000\n"), 21,
                        "budget_credits: 5000\nbudget_per_day_credits: 1\nbudget_per_account_credits: 2\n");
    auto capped = call("POST", "/v1/campaigns?dry_run=true", capped_yaml);
    EXPECT_EQ(capped.status, 200) << capped.body;
    const std::string said = capped.body_json()["apply_warnings"].dump();
    EXPECT_NE(said.find("this version's day cap of 1 credit is no more than what the campaign has spent or holds "
                        "today (2 credits, UTC day "),
              std::string::npos)
        << capped.body;
    EXPECT_NE(said.find("this version's per-account cap of 2 credits is no more than what the campaign has spent or "
                        "holds through account "),
              std::string::npos)
        << capped.body;
    EXPECT_EQ(capped.body_json()["apply_warnings"].size(), 2u) << capped.body;
    EXPECT_EQ(count("campaign_versions"), stored_versions);
    auto spent = call("POST", "/v1/campaigns?search_again=true", campaign_yaml("alpha", search_audience(5), 2));
    EXPECT_EQ(spent.status, 409) << spent.body;
    EXPECT_NE(spent.body_json()["error"].value("message", "").find("campaign 'alpha': the audience search was not sent: its "
                                                         "budget of 2 credits (budget_credits) has nothing left (2 spent or held"),
              std::string::npos)
        << spent.body;
    EXPECT_EQ(count("campaign_versions"), stored_versions);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE attempt_id IS NULL AND action = 'search_people'"),
              "2");

    auto list = get("/v1/campaigns").body_json();
    ASSERT_EQ(list["campaigns"].size(), 1u);
    EXPECT_EQ(list["campaigns"][0]["name"], "alpha");
    EXPECT_EQ(list["campaigns"][0]["enrollments"], 5);

    auto one = get("/v1/campaigns/alpha");
    ASSERT_EQ(one.status, 200);
    EXPECT_EQ(one.body_json()["funnel"]["found"], 5);
    EXPECT_EQ(one.body_json()["state"], "active");
    EXPECT_EQ(get("/v1/campaigns/alpha/").status, 200) << serve_->log();

    auto versions = get("/v1/campaigns/alpha/versions").body_json();
    ASSERT_EQ(versions["versions"].size(), 2u);
    EXPECT_EQ(versions["versions"][1]["current"], true);
    auto v1 = get("/v1/campaigns/alpha/versions/1");
    ASSERT_EQ(v1.status, 200);
    EXPECT_EQ(v1.body_json()["definition"]["budget_credits"], 1000000);
    EXPECT_EQ(get("/v1/campaigns/alpha/versions/9").status, 404);
    EXPECT_EQ(get("/v1/campaigns/alpha/versions/abc").status, 400);

    auto paused = call("POST", "/v1/campaigns/alpha/pause");
    ASSERT_EQ(paused.status, 200) << paused.body;
    EXPECT_EQ(paused.body_json()["changed"], true);
    EXPECT_EQ(env_->scalar("SELECT state FROM campaigns"), "paused");
    EXPECT_EQ(call("POST", "/v1/campaigns/alpha/pause").body_json()["changed"], false);
    EXPECT_EQ(call("POST", "/v1/campaigns/alpha/resume").body_json()["state"], "active");
    EXPECT_EQ(call("POST", "/v1/campaigns/alpha/cancel").status, 200);
    EXPECT_EQ(count("enrollments WHERE status = 'cancelled'"), "5");
    auto conflict = call("POST", "/v1/campaigns/alpha/resume");
    EXPECT_EQ(conflict.status, 409);
    EXPECT_NE(error_message(conflict).find("it is cancelled"), std::string::npos);
    EXPECT_EQ(call("POST", "/v1/campaigns/alpha/pause").status, 409);
    EXPECT_EQ(env_->scalar("SELECT state FROM campaigns"), "cancelled");
}

// A new version's `exclude:` says in the apply's body what it did to the leads already there
// (it was only in the warnings' text): those it stopped, those in a call (their worker stops
// them), and the live leads a company exclusion cannot match (a search's carry no company).
TEST_F(AdminTest, AnApplyCountsWhatItsExclusionsDid) {
    ASSERT_EQ(call("POST", "/v1/campaigns", campaign_yaml("omega", search_audience(5))).status, 201);
    const std::string ids = "(SELECT enrollment_id FROM enrollments ORDER BY enrollment_id";
    ASSERT_EQ(env_->scalar("WITH u AS (UPDATE enrollments SET status = 'calling', lease_owner = 'elsewhere', "
                           "lease_expires_at = now() + interval '1 hour' WHERE enrollment_id = " + ids +
                           " OFFSET 1 LIMIT 1) RETURNING 1) SELECT count(*) FROM u"),
              "1");
    const auto urls = env_->scalar("SELECT string_agg(l.profile_url, ', ' ORDER BY e.enrollment_id) FROM enrollments e "
                                   "JOIN leads l USING (lead_id) WHERE e.enrollment_id IN " + ids + " LIMIT 2)");
    auto applied = call("POST", "/v1/campaigns", campaign_yaml("omega", search_audience(5)) + "exclude:\n  profile_urls: [" +
                                                     urls + "]\n  companies: [Acme]\n");
    ASSERT_EQ(applied.status, 200) << applied.body;
    // 5 leads: 1 stopped, 1 in a call; the 3 others (and the one in a call) have no company field.
    EXPECT_EQ(applied.body_json()["excluded"], (json{{"stopped", 1}, {"in_call", 1}, {"without_company", 4}}))
        << applied.body;
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE status = 'cancelled'"), "1");
}

TEST_F(AdminTest, LeadsPagesCsvAndTimeline) {
    ASSERT_EQ(call("POST", "/v1/campaigns", campaign_yaml("beta", search_audience(5))).status, 201);
    auto page1 = get("/v1/campaigns/beta/leads?limit=2");
    ASSERT_EQ(page1.status, 200) << page1.body;
    auto p1 = page1.body_json();
    ASSERT_EQ(p1["items"].size(), 2u);
    ASSERT_TRUE(p1["next_cursor"].is_string());
    std::set<std::int64_t> seen;
    std::string cursor = p1["next_cursor"];
    for (const auto& i : p1["items"]) {
        seen.insert(i["lead_id"].get<std::int64_t>());
    }
    for (int guard = 0; guard < 10 && !cursor.empty(); ++guard) {
        auto p = get("/v1/campaigns/beta/leads?limit=2&cursor=" + cursor).body_json();
        for (const auto& i : p["items"]) {
            EXPECT_TRUE(seen.insert(i["lead_id"].get<std::int64_t>()).second) << "a lead on two pages";
        }
        cursor = p["next_cursor"].is_string() ? p["next_cursor"].get<std::string>() : "";
    }
    EXPECT_EQ(seen.size(), 5u);
    const auto live = get("/v1/campaigns/beta/leads?state=live").body_json()["items"];
    ASSERT_EQ(live.size(), 5u);
    for (const auto& l : live) {  // why each waits, as one lead's detail says it
        EXPECT_TRUE(l["waiting"].is_string() && !l["waiting"].get<std::string>().empty()) << l.dump();
    }
    EXPECT_EQ(get("/v1/campaigns/beta/leads?state=done").body_json()["items"].size(), 0u);
    EXPECT_EQ(get("/v1/campaigns/beta/leads?state=bogus").status, 400);
    EXPECT_EQ(get("/v1/campaigns/beta/leads?limit=0").status, 400);
    EXPECT_EQ(get("/v1/campaigns/beta/leads?limit=abc").status, 400);
    EXPECT_EQ(get("/v1/campaigns/beta/leads?cursor=-1").status, 400);
    EXPECT_EQ(get("/v1/campaigns/beta/leads?format=xml").status, 400);

    auto csv = get("/v1/campaigns/beta/leads?format=csv");
    ASSERT_EQ(csv.status, 200);
    EXPECT_EQ(csv.header("content-type").rfind("text/csv", 0), 0u);
    EXPECT_EQ(std::count(csv.body.begin(), csv.body.end(), '\n'), 6);  // header + 5
    EXPECT_EQ(csv.body.rfind("enrollment_id,lead_id,profile_url", 0), 0u);

    auto lead_id = std::to_string(*seen.begin());
    auto lead = get("/v1/campaigns/beta/leads/" + lead_id);
    ASSERT_EQ(lead.status, 200) << lead.body;
    auto l = lead.body_json();
    EXPECT_EQ(l["step"], "check");
    EXPECT_TRUE(l["timeline"].is_array());
    EXPECT_NE(l["waiting"].get<std::string>().find("due now"), std::string::npos) << l["waiting"];
    EXPECT_TRUE(l.contains("wait_code") && l["wait_code"].is_null()) << l.dump();  // waits for nothing
    // A lead deferred by the gate (as the worker writes it): its code in the view and the pages.
    env_->scalar("UPDATE enrollments SET reason = 'waiting for the invite day quota of account x', "
                 "wait_code = 'day_quota' WHERE lead_id = " + lead_id + " RETURNING 1");
    EXPECT_EQ(get("/v1/campaigns/beta/leads/" + lead_id).body_json()["wait_code"], "day_quota");
    std::size_t coded = 0;
    const auto listed = get("/v1/campaigns/beta/leads").body_json();
    for (const auto& i : listed["items"]) {
        coded += i["wait_code"] == "day_quota" ? 1 : 0;
    }
    EXPECT_EQ(coded, 1u) << listed.dump();
    ASSERT_EQ(call("POST", "/v1/campaigns/beta/pause").status, 200);
    EXPECT_EQ(get("/v1/campaigns/beta/leads/" + lead_id).body_json()["waiting"], "paused by an operator");
    EXPECT_EQ(get("/v1/campaigns/beta/leads/999999").status, 404);
    EXPECT_EQ(get("/v1/campaigns/beta/leads/x1").status, 400);
}

TEST_F(AdminTest, AccountsBudgetEventsReadyzAndMetrics) {
    ASSERT_EQ(call("POST", "/v1/campaigns", campaign_yaml("gamma", search_audience(4))).status, 201);

    auto accounts = get("/v1/accounts");
    ASSERT_EQ(accounts.status, 200) << accounts.body;
    auto a = accounts.body_json()["accounts"];
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0]["connected"], true);
    ASSERT_TRUE(a[0]["limits"].is_object()) << a[0];
    EXPECT_FALSE(a[0]["limits"]["actions"].empty());
    EXPECT_EQ(a[0]["live_enrollments"].get<int>() + a[1]["live_enrollments"].get<int>(), 4);

    // serve reads the key's balance at start (then every credits_poll_seconds).
    for (int i = 0; i < 200 && env_->scalar("SELECT count(*) FROM api_credit_reads") == "0"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    auto budget = get("/v1/budget");
    ASSERT_EQ(budget.status, 200) << budget.body;
    auto b = budget.body_json();
    ASSERT_EQ(b["campaigns"].size(), 1u);
    EXPECT_EQ(b["campaigns"][0]["budget"], 1000000);
    EXPECT_TRUE(b["key"]["balance"].is_number_integer()) << b["key"];
    EXPECT_EQ(b["key"]["drift"], 0);  // one read so far: nothing to compare yet
    EXPECT_GE(b["key"]["polls"]["reads"].get<int>(), 1) << b["key"];
    // Times in ISO 8601 UTC, as every other time of the admin API.
    EXPECT_TRUE(std::regex_match(b["key"]["polls"]["first_at"].get<std::string>(),
                                 std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
        << b["key"];
    auto one = get("/v1/budget?campaign=gamma").body_json();
    ASSERT_EQ(one["campaigns"].size(), 1u);
    // One campaign: its spend per action, the apply's audience search (4 results: 1 credit) included.
    const auto& by_action = one["campaigns"][0]["spend"]["by_action"];
    ASSERT_EQ(by_action.size(), 1u) << one;
    EXPECT_EQ(by_action[0]["action"], "search_people");
    EXPECT_EQ(by_action[0]["calls"], 1);
    EXPECT_EQ(by_action[0]["posted"], 1);
    EXPECT_EQ(by_action[0]["reserved_posted"], 0);
    EXPECT_EQ(one["campaigns"][0]["spent"], 1);
    EXPECT_FALSE(b["campaigns"][0].contains("spend"));   // the list of every campaign: no spend
    EXPECT_EQ(get("/v1/budget?campaign=nope").status, 404);
    EXPECT_EQ(get("/v1/budget?campaign=").status, 400);

    EXPECT_EQ(get("/v1/events?type=bogus").status, 400);
    EXPECT_EQ(get("/v1/events?limit=100000").status, 400);
    auto events = get("/v1/events?type=message&limit=5");
    ASSERT_EQ(events.status, 200);
    EXPECT_TRUE(events.body_json()["events"].is_array());

    auto ready = call("GET", "/readyz", "", "");
    ASSERT_EQ(ready.status, 200) << ready.body;
    EXPECT_EQ(ready.body_json()["checks"]["postgres"], "ok");
    EXPECT_EQ(ready.body_json()["checks"]["redis"], "ok");
    EXPECT_EQ(ready.body_json()["checks"]["api"], "ok");

    // Steps run in a worker process; /metrics derives them from Postgres. A call in flight before
    // them (a worker killed mid-call leaves one for its lease) does not hold back their counts: it
    // held back every later one until it settled (a trial: the counts frozen for a lease).
    const auto ghost = env_->scalar(
        "INSERT INTO step_attempts (enrollment_id, step, call, attempt, worker) SELECT enrollment_id, 'ghost', "
        "'visit', 1, 'killed-worker' FROM enrollments ORDER BY enrollment_id LIMIT 1 RETURNING attempt_id");
    ASSERT_FALSE(ghost.empty());
    ASSERT_EQ(get("/metrics").status, 200);
    auto worker = env_->spawn({"worker", "--lease-seconds", "10", "--api-timeout-ms", "5000"});
    std::string text;
    for (int i = 0; i < 200; ++i) {
        auto m = get("/metrics");
        ASSERT_EQ(m.status, 200);
        text = m.body;
        if (text.find("orch_steps_total{action=\"invite\",outcome=\"ok\"} 4") != std::string::npos) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    worker->stop(SIGTERM);
    // A lease under twice the timeout (plus 2 s) may not hold a follow-up's reply check and send:
    // the worker says so at start.
    EXPECT_NE(worker->log().find("lease_seconds (10 s) is below twice api_timeout_ms (5000 ms) plus 2 s"),
              std::string::npos)
        << worker->log();
    EXPECT_NE(worker->log().find("raise lease_seconds to 12 or more"), std::string::npos) << worker->log();
    EXPECT_NE(text.find("orch_steps_total{action=\"check_invitation\",outcome=\"ok\"} 4"), std::string::npos) << text;
    EXPECT_NE(text.find("orch_steps_total{action=\"invite\",outcome=\"ok\"} 4"), std::string::npos) << text;
    EXPECT_NE(text.find("orch_api_call_seconds_count{action=\"invite\"} 4"), std::string::npos) << text;
    EXPECT_NE(text.find("# TYPE orch_due_backlog gauge"), std::string::npos);
    EXPECT_NE(text.find("orch_event_lag_seconds"), std::string::npos);
    EXPECT_NE(text.find("orch_ledger_credits{balance=\"spent\"}"), std::string::npos);
    // Counted once: a second scrape gives the same totals.
    auto again = get("/metrics").body;
    EXPECT_NE(again.find("orch_steps_total{action=\"invite\",outcome=\"ok\"} 4"), std::string::npos) << again;
    // The call in flight is counted once it settles, and once only.
    EXPECT_EQ(again.find("orch_steps_total{action=\"visit\""), std::string::npos) << again;
    // It settles uncertain on an answer the client could not read: counted apart too, by kind.
    env_->scalar("UPDATE step_attempts SET outcome = 'uncertain', finished_at = now(), error = 'malformed_response "
                 "MALFORMED_RESPONSE (HTTP 200): the answer is not JSON [give_up, may have taken effect, at parse]' "
                 "WHERE attempt_id = " + ghost);
    ASSERT_EQ(get("/metrics").status, 200);
    const auto settled = get("/metrics").body;
    EXPECT_NE(settled.find("orch_steps_total{action=\"visit\",outcome=\"uncertain\"} 1"), std::string::npos)
        << settled;
    EXPECT_NE(settled.find("orch_api_unreadable_answers_total{action=\"visit\",kind=\"malformed_response\"} 1"),
              std::string::npos)
        << settled;
    EXPECT_EQ(settled.find("orch_api_unreadable_answers_total{action=\"invite\""), std::string::npos) << settled;
    EXPECT_NE(settled.find("orch_steps_total{action=\"invite\",outcome=\"ok\"} 4"), std::string::npos) << settled;
    EXPECT_TRUE(serve_->alive());
}

// While the key's rate is spent, /readyz cannot probe the API itself; it then asks what the
// workers' calls of the last minute met, and none of them reaching the API makes it not ready (it
// said "ready", "not checked: rate", through a trial's outage).
TEST_F(AdminTest, ReadyzIsNotReadyWhileNoneOfTheWorkersCallsReachTheApi) {
    auto applied = call("POST", "/v1/campaigns", campaign_yaml("reach", search_audience(4)));
    ASSERT_LT(applied.status, 300) << applied.body;
    sandbox_.reset();  // the API is gone: every call fails to connect
    auto worker = env_->spawn({"worker", "--api-timeout-ms", "1000"});
    for (int i = 0; i < 200 && std::stoi(env_->scalar("SELECT count(*) FROM step_attempts WHERE error LIKE "
                                                      "'%CONNECT_FAILED%'")) < 3; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // The worker says so in its log (it said nothing through an outage): at its next second.
    const std::string told = "got no answer from the API at http://127.0.0.1:";
    const std::string hint = "none of this worker's calls has been answered: is OUTREACH_API_URL right?";
    for (int i = 0; i < 50 && worker->log().find(told) == std::string::npos; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    worker->stop(SIGTERM);
    ASSERT_GE(std::stoi(env_->scalar("SELECT count(*) FROM step_attempts WHERE error LIKE '%CONNECT_FAILED%'")), 3)
        << worker->log();
    EXPECT_NE(worker->log().find(told), std::string::npos) << worker->log();
    EXPECT_NE(worker->log().find(hint), std::string::npos) << worker->log();
    // A call that reached no API spends none of its lead's attempts (five of them failed the lead
    // for good: a worker started with a wrong api_url failed the leads a healthy one would send).
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE status = 'failed' OR attempt > 0"), "0");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM enrollments WHERE status = 'ready' AND next_run_at > now() + interval '20 s'"),
              "4");
    // A replica whose key rate is one request a minute: its first /readyz takes the place, the
    // next finds the rate spent. Under a key of its own (the API is gone: the key only names the
    // bucket), or the tests that share this one would find its rate spent for a minute.
    env_->set("OUTREACH_API_KEY", "readyz-own-key-" + std::to_string(::getpid()));
    env_->set("ORCH_KEY_REQUESTS_PER_MINUTE", "1");
    env_->set("ORCH_KEY_BURST", "1");
    const auto port = free_port();
    auto replica = env_->spawn({"serve", "--webhook-listen", "127.0.0.1:" + std::to_string(free_port()),
                                "--admin-listen", "127.0.0.1:" + std::to_string(port)});
    http_client admin("127.0.0.1", port);
    for (int i = 0; i < 400; ++i) {
        try {
            if (admin.get("/healthz").status == 200) {
                break;
            }
        } catch (const std::exception&) {
            // not listening yet
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    admin.get("/readyz");
    auto ready = admin.get("/readyz");
    EXPECT_EQ(ready.status, 503) << ready.body;
    const auto api = ready.body_json()["checks"]["api"].get<std::string>();
    EXPECT_NE(api.find("none of the workers' last"), std::string::npos) << ready.body;
    EXPECT_NE(api.find("CONNECT_FAILED"), std::string::npos) << ready.body;
}

// An API slower than /readyz's own 2 s probe, which answers the workers' calls (api_timeout_ms is
// 30 s), is slow, not down: the replica stays ready, degraded, saying so. It answered 503 (a
// trial), and a load balancer would have taken every replica, with the webhook deliveries, away.
TEST_F(AdminTest, ReadyzIsReadyWhileTheApiIsSlowerThanItsProbeButAnswers) {
    auto applied = call("POST", "/v1/campaigns", campaign_yaml("slow", search_audience(4)));
    ASSERT_LT(applied.status, 300) << applied.body;
    http_client control("127.0.0.1", sandbox_->control_port());
    ASSERT_EQ(control.post("/control/settings", json{{"latency_ms_min", 2500}, {"latency_ms_max", 3000}}).status, 200);
    // No worker call yet: the probe's timeout alone says unavailable.
    auto alone = get("/readyz");
    EXPECT_EQ(alone.status, 503) << alone.body;
    auto worker = env_->spawn({"worker"});
    for (int i = 0; i < 300 && env_->scalar("SELECT count(*) FROM step_attempts WHERE finished_at IS NOT NULL "
                                            "AND error = ''") == "0"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    auto ready = get("/readyz");
    worker->stop(SIGTERM);
    EXPECT_EQ(ready.status, 200) << ready.body;
    EXPECT_EQ(ready.body_json()["status"], "degraded") << ready.body;
    EXPECT_EQ(ready.body_json()["checks"]["api"].get<std::string>().rfind("slow: no answer to the probe within 2 s, but ",
                                                                          0),
              0u)
        << ready.body;
}

// PUT /v1/campaigns/{name}/budget: sets the budget and caps (null removes a cap), GET /v1/budget
// shows them with today's use, a raise resumes a campaign paused for its budget; bad bodies are
// 400 or 422 and an unknown campaign 404, each changing nothing.
// ---- the campaign lifecycle over REST (engine/campaign_lifecycle.hpp) ----
TEST_F(AdminTest, LifecycleShowDiffAndApplyState) {
    auto created = call("POST", "/v1/campaigns", campaign_yaml("life", search_audience(3)));
    ASSERT_EQ(created.status, 201) << created.body;
    auto c = created.body_json();
    EXPECT_EQ(c["state"], "active");
    ASSERT_TRUE(c["warnings"].is_array()) << c;
    for (const auto& w : c["warnings"]) {
        EXPECT_EQ(w["message"].get<std::string>().find("matched nobody"), std::string::npos) << w;
    }
    ASSERT_EQ(call("POST", "/v1/campaigns", campaign_yaml("life", search_audience(3), 5000)).status, 200);

    auto one = get("/v1/campaigns/life");
    ASSERT_EQ(one.status, 200);
    auto j = one.body_json();
    EXPECT_EQ(j["version"], 2);
    EXPECT_EQ(j["budget"]["total"], 5000) << j;
    ASSERT_EQ(j["steps"].size(), 4u) << j;
    EXPECT_EQ(j["steps"][0]["next"]["on_no_invitation"], "invite");
    // A wait gives its timeout and where it leads then (the overview gave `next` alone).
    EXPECT_EQ(j["steps"][2]["kind"], "wait_accepted");
    EXPECT_EQ(j["steps"][2]["timeout_seconds"], 3600);
    EXPECT_EQ(j["steps"][2]["next"]["on_timeout"], "end");
    EXPECT_EQ(j["steps"][2]["next"]["next"], "message");
    EXPECT_EQ(j["counts"]["live"], 3);
    EXPECT_TRUE(j["start_at"].is_null());
    EXPECT_TRUE(j["end_at"].is_null());

    auto diff = get("/v1/campaigns/life/diff");
    ASSERT_EQ(diff.status, 200) << diff.body;
    auto d = diff.body_json();
    EXPECT_EQ(d["from"], 1);
    EXPECT_EQ(d["to"], 2);
    EXPECT_EQ(d["same"], false);
    EXPECT_NE(d["diff"].get<std::string>().find("-budget_credits: 1000000\n+budget_credits: 5000\n"),
              std::string::npos)
        << d;
    auto same = get("/v1/campaigns/life/diff?from=2&to=2").body_json();
    EXPECT_EQ(same["same"], true);
    EXPECT_EQ(same["diff"], "");
    EXPECT_EQ(get("/v1/campaigns/life/diff?from=abc").status, 400);
    EXPECT_EQ(get("/v1/campaigns/life/diff?from=0").status, 400);
    EXPECT_EQ(get("/v1/campaigns/life/diff?to=9").status, 404);
    EXPECT_EQ(get("/v1/campaigns/nope/diff").status, 404);
    EXPECT_EQ(call("POST", "/v1/campaigns/life/diff").status, 405);
}

// The admin API's apply reads the senders' use of today's quota from Redis, as the CLI's does
// (LifecyclePg.ApplySaysWhenTheSendersHaveUsedUpTodaysQuota): one sender used up is counted, both
// used up hold the first invitations until the first of their next days.
TEST_F(AdminTest, ApplySaysWhenTheSendersHaveUsedUpTodaysQuota) {
    ORCH_REQUIRE_SERVICE("REDIS_URL");
    // Two senders of this test's own: the sandbox's account ids follow the login token, and the
    // tests of the run share the key's Redis buckets.
    const std::string own = std::to_string(::getpid()) + "-" +
                            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    for (const std::string label : {"used-1", "used-2"}) {
        auto r = env_->run({"accounts", "connect", "--login-token", label + "-" + own, "--country", "FR", "--label",
                            label});
        ASSERT_EQ(r.exit_code, 0) << r.output;
    }
    // A replica with pacing on and a day quota of 1 invitation.
    env_->set("ORCH_PACING", "true");
    env_->set("ORCH_INVITE_PER_DAY", "1");
    const auto port = free_port();
    auto paced = env_->spawn({"serve", "--webhook-listen", "127.0.0.1:" + std::to_string(free_port()),
                              "--admin-listen", "127.0.0.1:" + std::to_string(port)});
    auto admin = orch::test::client_when_up(port);
    ASSERT_TRUE(admin) << paced->log();
    // (Each campaign searches for other people: a lead owned by the first is not enrolled again.)
    auto apply = [&](const std::string& name, const std::string& title) {
        std::string yaml = campaign_yaml(name, "  search:\n    title: " + title + "\n  total_results: 2\n");
        const std::string senders = "accounts: [sender-1, sender-2]";
        yaml.replace(yaml.find(senders), senders.size(), "accounts: [used-1, used-2]");
        auto r = admin->request("POST", "/v1/campaigns", yaml,
                                {{"Authorization", "Bearer " + token}, {"Content-Type", "application/yaml"}});
        EXPECT_EQ(r.status, 201) << r.body;
        std::string said;
        const json body = r.body_json();  // named: the loop must not outlive it
        for (const auto& w : body["warnings"]) {
            said += w["message"].get<std::string>() + "\n";
        }
        return said;
    };
    // The senders' invite quota today in Redis, under the key the replica uses.
    auto limiter = orch::test::env_limiter();
    auto use_up = [&](const std::string& label) {
        ASSERT_TRUE(orch::test::take_today(
            *limiter, env_->scalar("SELECT account_id FROM accounts WHERE label = '" + label + "'"),
            orch::limits::action::invite, 1));
    };
    use_up("used-1");
    const auto one = apply("one-used-up", "Engineer");
    EXPECT_NE(one.find("1 of the 2 senders has used up today's invite quota and waits for its next day"),
              std::string::npos)
        << one;
    EXPECT_EQ(one.find("day quota starts again"), std::string::npos) << one;
    use_up("used-2");
    const auto both = apply("both-used-up", "Designer");
    EXPECT_NE(both.find("once the first sender's day quota starts again (each of the 2 has used up today's invite "
                        "quota), as the working hours allow"),
              std::string::npos)
        << both;
}

TEST_F(AdminTest, PutCampaignBudget) {
    ASSERT_EQ(call("POST", "/v1/campaigns", campaign_yaml("delta", search_audience(2), 100)).status, 201);
    auto limits = [&] {
        return env_->scalar("SELECT b.total || ' ' || COALESCE(b.per_day::text, '-') || ' ' || "
                            "COALESCE(b.per_account::text, '-') FROM ledger_budgets b JOIN campaigns c USING (campaign_id) "
                            "WHERE c.name = 'delta'");
    };
    EXPECT_EQ(limits(), "100 - -");

    auto set = call("PUT", "/v1/campaigns/delta/budget", R"({"credits": 200, "per_day": 50})");
    ASSERT_EQ(set.status, 200) << set.body;
    auto j = set.body_json();
    EXPECT_EQ(j["credits"], 200);
    EXPECT_EQ(j["per_day"], 50);
    EXPECT_TRUE(j["per_account"].is_null());
    EXPECT_EQ(j["available"], 199);   // the audience search at apply spent 1
    EXPECT_EQ(j["resumed"], false);
    EXPECT_EQ(limits(), "200 50 -");

    auto shown = get("/v1/budget?campaign=delta");
    ASSERT_EQ(shown.status, 200) << shown.body;
    auto c = shown.body_json()["campaigns"][0];
    EXPECT_EQ(c["per_day"], 50);
    EXPECT_EQ(c["today"]["per_day"], 50);
    // The day cap counts the whole day: the audience search's credit, spent before it was set.
    EXPECT_EQ(c["today"]["spent"], 1);
    EXPECT_EQ(c["today"]["available"], 49);
    EXPECT_TRUE(c["accounts"].is_array());

    // null is the same as absent (unchanged); "clear" removes a cap.
    auto nulls = call("PUT", "/v1/campaigns/delta/budget", R"({"credits": null, "per_day": null, "per_account": 20})");
    ASSERT_EQ(nulls.status, 200) << nulls.body;
    EXPECT_EQ(limits(), "200 50 20");
    auto swap = call("PUT", "/v1/campaigns/delta/budget", R"({"clear": ["per_day"]})");
    ASSERT_EQ(swap.status, 200) << swap.body;
    EXPECT_EQ(limits(), "200 - 20");
    EXPECT_TRUE(get("/v1/budget?campaign=delta").body_json()["campaigns"][0]["today"].is_null());

    struct bad {
        std::string target, body;
        int status;
    };
    for (const auto& b : {bad{"/v1/campaigns/delta/budget", "", 400},
                          bad{"/v1/campaigns/delta/budget", "not json", 400},
                          bad{"/v1/campaigns/delta/budget", "[1]", 400},
                          bad{"/v1/campaigns/delta/budget", "{}", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"credits": -1})", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"credits": "many"})", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"credits": 1.5})", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"per_day": 0})", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"credits": 1000000000001})", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"per_day": 201})", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"credits": 10})", 422},  // below per_account 20
                          bad{"/v1/campaigns/delta/budget", R"({"budget": 10})", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"clear": ["credits"]})", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"clear": "per_day"})", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"per_day": 5, "clear": ["per_day"]})", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"per_day": null})", 422},
                          bad{"/v1/campaigns/nope/budget", R"({"credits": 10})", 404}}) {
        auto r = call("PUT", b.target, b.body);
        EXPECT_EQ(r.status, b.status) << b.body << ": " << r.body;
        EXPECT_FALSE(error_message(r).empty()) << b.body;
    }
    // Every problem of a body in one answer; a number beyond JSON's integers is echoed as written.
    auto several = call("PUT", "/v1/campaigns/delta/budget",
                        R"({"credits": 99999999999999999999, "per_day": -2, "color": 1})");
    EXPECT_EQ(several.status, 422) << several.body;
    for (const char* part : {"credits cannot be above 1000000000000 credits, got 99999999999999999999",
                             "per_day must be a whole number >= 1", "unknown field 'color'", "nothing changed"}) {
        EXPECT_NE(error_message(several).find(part), std::string::npos) << part << ": " << several.body;
    }
    // 2^64, beyond an unsigned too, is echoed as written.
    auto beyond = call("PUT", "/v1/campaigns/delta/budget", R"({"per_day": 18446744073709551616})");
    EXPECT_EQ(beyond.status, 422) << beyond.body;
    EXPECT_NE(error_message(beyond).find("per_day cannot be above 1000000000000 credits, got 18446744073709551616"),
              std::string::npos)
        << beyond.body;
    // Too large for 64 bits, as an unsigned: refused by the budget's limit too, with the others.
    auto unsigned_max = call("PUT", "/v1/campaigns/delta/budget",
                             R"({"per_account": 18446744073709551615, "per_day": 1.5})");
    EXPECT_EQ(unsigned_max.status, 422) << unsigned_max.body;
    for (const char* part : {"per_account cannot be above 1000000000000 credits, got 18446744073709551615",
                             "per_day must be a whole number >= 1"}) {
        EXPECT_NE(error_message(unsigned_max).find(part), std::string::npos) << part << ": " << unsigned_max.body;
    }
    // A cap above the total of the same body is said beside the fields' problems.
    auto above = call("PUT", "/v1/campaigns/delta/budget", R"({"credits": 10, "per_day": 20, "color": 1})");
    EXPECT_EQ(above.status, 422) << above.body;
    for (const char* part : {"per_day (20) cannot be above credits (10)", "unknown field 'color'"}) {
        EXPECT_NE(error_message(above).find(part), std::string::npos) << part << ": " << above.body;
    }
    EXPECT_EQ(limits(), "200 - 20");
    // A field given twice is said with the body's other problems, not alone before them.
    auto twice = call("PUT", "/v1/campaigns/delta/budget", R"({"credits": 300, "credits": 10, "per_day": -2})");
    EXPECT_EQ(twice.status, 422) << twice.body;
    for (const char* part : {"the body gives the field 'credits' twice: send each field once",
                             "per_day must be a whole number >= 1"}) {
        EXPECT_NE(error_message(twice).find(part), std::string::npos) << part << ": " << twice.body;
    }
    auto dnc_twice = call("POST", "/v1/dnc", R"({"company": "Acme", "company": "Initech", "reason": 7})");
    EXPECT_EQ(dnc_twice.status, 422) << dnc_twice.body;
    for (const char* part : {"the body gives the field 'company' twice", "'reason'"}) {
        EXPECT_NE(error_message(dnc_twice).find(part), std::string::npos) << part << ": " << dnc_twice.body;
    }
    EXPECT_EQ(limits(), "200 - 20");
    auto wrong_method = call("POST", "/v1/campaigns/delta/budget", R"({"credits": 10})");
    EXPECT_EQ(wrong_method.status, 405);
    EXPECT_EQ(wrong_method.headers["allow"], "PUT");
    EXPECT_EQ(call("PUT", "/v1/campaigns/delta/budget", R"({"credits": 300})", "").status, 401);

    // Paused for its budget (as the ledger pauses it): a raise resumes it.
    env_->scalar("UPDATE campaigns SET state = 'paused', pause_reason = 'budget exhausted: test', pause_code = 'budget' "
                 "WHERE name = 'delta' RETURNING 1");
    // A resume without a raise says that it pauses again at the first call the credits left
    // cannot cover; an operator's pause and resume say nothing of the budget.
    auto resumed = call("POST", "/v1/campaigns/delta/resume", "");
    ASSERT_EQ(resumed.status, 200) << resumed.body;
    EXPECT_NE(resumed.body_json()["warning"].get<std::string>().find(
                  "it was paused for its budget (budget exhausted: test)"),
              std::string::npos)
        << resumed.body;
    ASSERT_EQ(call("POST", "/v1/campaigns/delta/pause", "").status, 200);
    auto plain = call("POST", "/v1/campaigns/delta/resume", "");
    ASSERT_EQ(plain.status, 200) << plain.body;
    EXPECT_TRUE(plain.body_json()["warning"].is_null()) << plain.body;
    env_->scalar("UPDATE campaigns SET state = 'paused', pause_reason = 'budget exhausted: test', pause_code = 'budget' "
                 "WHERE name = 'delta' RETURNING 1");
    auto raise = call("PUT", "/v1/campaigns/delta/budget", R"({"credits": 300})");
    ASSERT_EQ(raise.status, 200) << raise.body;
    EXPECT_EQ(raise.body_json()["resumed"], true);
    EXPECT_EQ(env_->scalar("SELECT state FROM campaigns WHERE name = 'delta'"), "active");
    // A cancelled campaign's budget is refused: nothing of it runs again (it was taken, with a
    // note that the next apply keeps it, which is refused).
    ASSERT_EQ(call("POST", "/v1/campaigns/delta/cancel", "").status, 200);
    auto after_cancel = call("PUT", "/v1/campaigns/delta/budget", R"({"credits": 1000})");
    EXPECT_EQ(after_cancel.status, 422) << after_cancel.body;
    EXPECT_NE(error_message(after_cancel).find("is cancelled: nothing of it runs again"), std::string::npos)
        << after_cancel.body;
    auto cli = env_->run({"budget", "set", "delta", "--credits", "1000"});
    EXPECT_EQ(cli.exit_code, 2) << cli.output;
    EXPECT_NE(cli.output.find("campaign 'delta' is cancelled"), std::string::npos) << cli.output;
    EXPECT_EQ(limits().substr(0, 4), "300 ");
}

// A budget set below what the campaign has already spent or reserved is taken (nothing already
// spent is taken back), and the answer says so: nothing is available, and the campaign pauses at
// its next call. The CLI says the same.
TEST_F(AdminTest, ABudgetBelowWhatIsSpentIsSaidSo) {
    ASSERT_EQ(call("POST", "/v1/campaigns", campaign_yaml("epsilon", search_audience(25), 100)).status, 201);
    auto fine = call("PUT", "/v1/campaigns/epsilon/budget", R"({"credits": 50})");
    ASSERT_EQ(fine.status, 200) << fine.body;
    EXPECT_EQ(fine.body_json()["committed"], 3);  // the audience search: 25 people, 3 credits
    EXPECT_TRUE(fine.body_json()["warning"].is_null()) << fine.body;
    auto below = call("PUT", "/v1/campaigns/epsilon/budget", R"({"credits": 2})");
    ASSERT_EQ(below.status, 200) << below.body;
    EXPECT_EQ(below.body_json()["available"], 0);
    EXPECT_NE(below.body_json()["warning"].get<std::string>().find("no more than what is already spent or reserved (3"),
              std::string::npos)
        << below.body;
    // Exactly what is spent leaves nothing either: said too.
    auto equal = call("PUT", "/v1/campaigns/epsilon/budget", R"({"credits": 3})");
    ASSERT_EQ(equal.status, 200) << equal.body;
    ASSERT_TRUE(equal.body_json()["warning"].is_string()) << equal.body;
    EXPECT_NE(equal.body_json()["warning"].get<std::string>().find("no more than what is already spent or reserved (3"),
              std::string::npos)
        << equal.body;
    auto cli = env_->run({"budget", "set", "epsilon", "--credits", "1"});
    EXPECT_EQ(cli.exit_code, 0) << cli.output;
    EXPECT_NE(cli.output.find("warning: the budget is no more than what is already spent or reserved (3 credits)"),
              std::string::npos)
        << cli.output;
}

// A budget change while new versions of the campaign's file are applied finds the campaign every
// time: it waits for the apply's lock, then reads the campaign as the apply committed it. (It
// answered 404 "no campaign named" when its wait ended on an apply that had made a new version.)
TEST_F(AdminTest, ABudgetSetWhileTheCampaignIsAppliedFindsIt) {
    ASSERT_EQ(call("POST", "/v1/campaigns", campaign_yaml("eta", search_audience(3), 1000)).status, 201);
    std::atomic<bool> done{false};
    std::vector<int> apply_statuses;
    std::thread applier([&] {
        http_client applies("127.0.0.1", port_);
        const std::map<std::string, std::string> h{{"Authorization", "Bearer " + std::string(token)},
                                                   {"Content-Type", "application/yaml"}};
        // Each file gives another budget: a new version each time.
        for (int i = 1; i <= 30; ++i) {
            apply_statuses.push_back(
                applies.request("POST", "/v1/campaigns", campaign_yaml("eta", search_audience(3), 1000 + i), h).status);
        }
        done = true;
    });
    std::map<int, int> put_statuses;
    std::string last_refusal;
    int puts = 0;
    while (!done || puts < 30) {
        auto r = call("PUT", "/v1/campaigns/eta/budget", R"({"credits": 5000})");
        ++put_statuses[r.status];
        if (r.status != 200) {
            last_refusal = r.body;
        }
        ++puts;
    }
    applier.join();
    EXPECT_EQ(put_statuses[200], puts) << "statuses other than 200, the last: " << last_refusal;
    EXPECT_EQ(std::count(apply_statuses.begin(), apply_statuses.end(), 200), 30);
    EXPECT_EQ(env_->scalar("SELECT current_version FROM campaigns WHERE name = 'eta'"), "31");
}

// PUT /v1/accounts/{id}/limits: an account's own quotas. Bad requests (no token, unknown
// account, not JSON, an unknown action, a bad value) change nothing; a good one is stored, shown
// by GET /v1/accounts (effective quotas and today's limit from the Redis buckets) and cleared
// with null.
TEST_F(AdminTest, AccountLimitsAreSetShownAndCleared) {
    const std::string id = env_->scalar("SELECT account_id FROM accounts WHERE label = 'sender-1'");
    ASSERT_FALSE(id.empty());
    const std::string path = "/v1/accounts/" + id + "/limits";
    const std::string good = R"({"invite": {"per_day": 40, "per_week": 150}, "send": null})";  // null: unchanged
    auto stored = [&] { return env_->scalar("SELECT quotas::text FROM accounts WHERE account_id = '" + id + "'"); };

    EXPECT_EQ(call("PUT", path, good, "").status, 401);
    EXPECT_EQ(call("PUT", path, good, "admin-test-token-0123456780").status, 401);
    auto missing = call("PUT", "/v1/accounts/nobody/limits", good);
    EXPECT_EQ(missing.status, 404);
    EXPECT_NE(error_message(missing).find("no account 'nobody'"), std::string::npos);
    auto not_json = call("PUT", path, "{\"invite\": ");
    EXPECT_EQ(not_json.status, 400);
    EXPECT_NE(error_message(not_json).find("not valid JSON"), std::string::npos);
    EXPECT_NE(error_message(not_json).find("line 1, column"), std::string::npos) << error_message(not_json);
    auto overflow = call("PUT", path, R"({"invite": {"per_day": 1e400}})");
    EXPECT_EQ(overflow.status, 400);
    EXPECT_NE(error_message(overflow).find("number overflow parsing '1e400' at line 1, column 28"), std::string::npos)
        << error_message(overflow);
    // Where on a later line, too.
    auto overflow_below = call("PUT", path, "{\n  \"invite\": {\n    \"per_day\": -1e999}}");
    EXPECT_EQ(overflow_below.status, 400);
    EXPECT_NE(error_message(overflow_below).find("number overflow parsing '-1e999' at line 3, column 21"),
              std::string::npos)
        << error_message(overflow_below);
    EXPECT_EQ(call("PUT", path, "").status, 400);
    const std::vector<std::pair<std::string, std::string>> invalid = {
        {R"({"invite": {"per_day": -1}})", "invite.per_day"},
        {R"({"invite": {"per_day": 1.5}})", "invite.per_day"},
        {R"({"send": {"per_week": "9"}})", "send.per_week"},
        {R"({"invite": {"per_day": 40, "per_week": 30}})", "invite: a week of 30 is below a day of 40, whose quota"},
        {R"({"bogus": {"per_day": 1}})", "unknown action 'bogus' (actions: invite, send"},
        {R"({"bogus": null})", "unknown action 'bogus'"},
        // The settings' flat name: the message shows the body's shape.
        {R"({"invite_per_day": 5})", R"(each action takes an object of its quotas, such as {"invite": {"per_day": 40)"},
        {R"({"visit": {"per_hour": 1}})", "visit.per_hour"},
        {R"([1])", "JSON object"},
        {R"({"time_zone": "Mars/Olympus_Mons"})", "time_zone: unknown time zone 'Mars/Olympus_Mons'"},
        {R"({"time_zone": "localtime"})", "time_zone: unknown time zone 'localtime'"},
        {R"({"time_zone": 3})", "time_zone: expected an IANA time zone name"},
        // A field given twice (the parser would keep the last) is refused, nested too.
        {R"({"invite": {"per_day": 40, "per_day": 5}})", "the body gives the field 'invite/per_day' twice"},
        {R"({"time_zone": "UTC", "invite": {}, "time_zone": "Asia/Tokyo"})", "the field 'time_zone' twice"},
    };
    for (const auto& [body, field] : invalid) {
        auto r = call("PUT", path, body);
        EXPECT_EQ(r.status, 422) << body << " " << r.body;
        EXPECT_NE(error_message(r).find(field), std::string::npos) << body << " " << r.body;
    }
    // A body with several problems is answered with every one of them.
    auto several = call("PUT", path, R"({"bogus": {"per_day": 1}, "invite": {"per_day": -1, "per_week": "x",
                                        "per_month": 3}, "time_zone": 3, "clear": [7], "send": {"per_week": "9"}})");
    EXPECT_EQ(several.status, 422) << several.body;
    for (const char* each : {"unknown action 'bogus'", "invite.per_day", "invite.per_week", "invite.per_month: unknown field",
                             "time_zone: expected an IANA time zone name", "clear: expected an action name, got 7",
                             "send.per_week", "such as {\"invite\""}) {
        EXPECT_NE(error_message(several).find(each), std::string::npos) << each << " " << several.body;
    }
    // Thousands of bad fields get an answer of a few lines: the first problems, the rest counted.
    json many = json::object();
    for (int i = 0; i < 2000; ++i) {
        many["f" + std::to_string(i)] = 1;
    }
    auto flood = call("PUT", path, many.dump());
    EXPECT_EQ(flood.status, 422);
    EXPECT_LT(flood.body.size(), 8000u) << flood.body.substr(0, 300);
    EXPECT_NE(error_message(flood).find("unknown actions 'f0', 'f1', 'f10', 'f100', 'f1000' and 1995 more (actions: "),
              std::string::npos)
        << flood.body.substr(0, 300);
    json dnc_many = json::array();
    for (int i = 0; i < 2000; ++i) {
        dnc_many.push_back({{"company", i}});
    }
    auto dnc_flood = call("POST", "/v1/dnc", json{{"entries", dnc_many}}.dump());
    EXPECT_EQ(dnc_flood.status, 422);
    EXPECT_NE(error_message(dnc_flood).find("2000 invalid entries (first: 'company' must be a string, got 0)"),
              std::string::npos)
        << dnc_flood.body.substr(0, 300);
    auto budget_flood = call("PUT", "/v1/campaigns/none/budget", many.dump());
    EXPECT_EQ(budget_flood.status, 422);
    EXPECT_LT(budget_flood.body.size(), 1000u) << budget_flood.body.substr(0, 300);
    EXPECT_NE(error_message(budget_flood).find("unknown fields 'f0', 'f1', 'f10', 'f100', 'f1000' and 1995 more"),
              std::string::npos)
        << budget_flood.body.substr(0, 300);
    auto wrong_method = call("POST", path, good);
    EXPECT_EQ(wrong_method.status, 405);
    EXPECT_EQ(wrong_method.header("allow"), "GET, PUT");
    EXPECT_EQ(stored(), "") << "a refused request changed the account";
    auto zone = [&] { return env_->scalar("SELECT COALESCE(time_zone, 'none') FROM accounts WHERE account_id = '" + id + "'"); };
    EXPECT_EQ(zone(), "none") << "a refused request changed the account";

    // The account's quota day: set alone, shown, and left alone by a change that does not name it.
    auto zoned = call("PUT", path, R"({"time_zone": "Asia/Tokyo"})");
    ASSERT_EQ(zoned.status, 200) << zoned.body;
    EXPECT_EQ(zoned.body_json()["changed"], true);
    EXPECT_EQ(zoned.body_json()["time_zone"], "Asia/Tokyo");
    EXPECT_EQ(zoned.body_json()["overrides"], json::object());
    EXPECT_EQ(zone(), "Asia/Tokyo");
    EXPECT_EQ(call("PUT", path, R"({"time_zone": "Asia/Tokyo"})").body_json()["changed"], false);

    auto ok = call("PUT", path, good);
    ASSERT_EQ(ok.status, 200) << ok.body;
    auto j = ok.body_json();
    EXPECT_EQ(j["account_id"], id);
    EXPECT_EQ(j["changed"], true);
    EXPECT_EQ(j["overrides"], json::parse(R"({"invite": {"per_day": 40, "per_week": 150}})"));
    EXPECT_EQ(j["quotas"]["invite"]["per_day"], 40);
    EXPECT_EQ(j["quotas"]["invite"]["per_day_source"], "override");
    EXPECT_EQ(j["quotas"]["send"]["per_day"], nullptr);  // the test's default: no limit
    EXPECT_EQ(j["quotas"]["send"]["per_day_source"], "default");
    EXPECT_EQ(json::parse(stored()), json::parse(R"({"invite": {"per_day": 40, "per_week": 150}})"));
    EXPECT_EQ(call("PUT", path, good).body_json()["changed"], false);
    // The same account by label.
    EXPECT_EQ(get("/v1/accounts/sender-1/limits").body_json()["overrides"]["invite"]["per_day"], 40);
    EXPECT_EQ(get("/v1/accounts/sender-1/limits").body_json()["time_zone"], "Asia/Tokyo");

    auto accounts = get("/v1/accounts");
    ASSERT_EQ(accounts.status, 200) << accounts.body;
    int seen = 0;
    const json listed = accounts.body_json();  // named: the loop must not outlive it
    ASSERT_EQ(listed["accounts"].size(), 2u) << accounts.body;
    for (const auto& a : listed["accounts"]) {
        const bool own = a["account_id"] == id;
        EXPECT_EQ(a["time_zone"], own ? json("Asia/Tokyo") : json(nullptr)) << a;
        EXPECT_EQ(a["limits"]["time_zone"], own ? "Asia/Tokyo" : "UTC") << "the day its quotas are counted in: " << a;
        EXPECT_EQ(a["limits"]["day"], a["limits"]["time_zone"]) << a;  // for older clients
        EXPECT_TRUE(std::regex_match(a["limits"]["date"].get<std::string>(), std::regex(R"(\d{4}-\d{2}-\d{2})"))) << a;
        EXPECT_EQ(a["effective_quotas"]["invite"]["per_day"], own ? json(40) : json(nullptr)) << a;
        EXPECT_EQ(a["effective_quotas"]["invite"]["per_day_source"], own ? "override" : "default") << a;
        ASSERT_TRUE(a["limits"].is_object()) << a;
        for (const auto& act : a["limits"]["actions"]) {
            if (act["action"] == "invite") {
                EXPECT_EQ(act["limit_today"], own ? json(40) : json(nullptr)) << a;
                EXPECT_EQ(act["limit_week"], own ? json(150) : json(nullptr)) << a;
                // (other tests of the run share the key's Redis buckets: count what they used; a
                // quota they already exceeded has nothing left, never a negative number)
                EXPECT_EQ(act["left_today"], own ? json(std::max(0, 40 - act["used_today"].get<int>())) : json(nullptr))
                    << a;
                ++seen;
            }
        }
    }
    EXPECT_EQ(seen, 2);
    // `accounts list --format json` gives each account as this does (it named the quota use
    // "quotas", its actions an object, its date "day", and the API status "status"): the same
    // fields, but the counts of the account's leads, which the admin API alone adds.
    auto cli = env_->run({"accounts", "list", "--format", "json"});
    ASSERT_EQ(cli.exit_code, 0) << cli.output;
    const json cli_listed = json::parse(cli.output);  // named: the loop must not outlive it
    ASSERT_EQ(cli_listed["accounts"].size(), 2u) << cli.output;
    const auto keys = [](const json& o) {
        std::set<std::string> out;
        for (const auto& [k, v] : o.items()) {
            out.insert(k);
        }
        return out;
    };
    for (std::size_t i = 0; i < 2; ++i) {
        json api = listed["accounts"][i];
        const json& mine = cli_listed["accounts"][i];
        EXPECT_EQ(api["account_id"], mine["account_id"]);
        api.erase("live_enrollments");
        api.erase("parked_enrollments");
        EXPECT_EQ(keys(api), keys(mine)) << api << "\n" << mine;
        EXPECT_EQ(keys(api["limits"]), keys(mine["limits"])) << api << "\n" << mine;
        EXPECT_EQ(keys(api["limits"]["actions"][0]), keys(mine["limits"]["actions"][0])) << api << "\n" << mine;
        for (const char* same : {"api_status", "time_zone", "effective_quotas", "quota_overrides"}) {
            EXPECT_EQ(api[same], mine[same]) << same;
        }
        EXPECT_EQ(api["limits"]["time_zone"], mine["limits"]["time_zone"]);
        EXPECT_EQ(api["limits"]["date"], mine["limits"]["date"]);
        EXPECT_EQ(api["limits"]["day"], mine["limits"]["day"]);
    }

    // null is the same as absent: nothing changes; "clear" drops the override.
    auto kept = call("PUT", path, R"({"invite": null})");
    ASSERT_EQ(kept.status, 200) << kept.body;
    EXPECT_EQ(kept.body_json()["changed"], false);
    EXPECT_EQ(call("PUT", path, R"({"invite": {"per_day": 1}, "clear": ["invite"]})").status, 422);
    EXPECT_EQ(call("PUT", path, R"({"clear": ["bogus"]})").status, 422);
    EXPECT_EQ(call("PUT", path, R"({"clear": 5})").status, 422);
    EXPECT_EQ(error_message(call("PUT", path, R"({"clear": "al"})")),
              "clear: unknown action 'al'; one of invite, send, visit, withdraw, search, all; nothing changed");
    EXPECT_EQ(json::parse(stored()), json::parse(R"({"invite": {"per_day": 40, "per_week": 150}})"));
    // One name alone is a list of one ("clear": "all" read as refused with "or \"all\"" before).
    auto cleared = call("PUT", path, R"({"clear": "invite"})");
    ASSERT_EQ(cleared.status, 200) << cleared.body;
    EXPECT_EQ(cleared.body_json()["overrides"], json::object());
    EXPECT_EQ(stored(), "");
}

// Invalid UTF-8 and NUL bytes anywhere in a request (path, query, body, JSON strings) get a 400
// that says where: never a 5xx, never the database's text. Nothing is stored.
TEST_F(AdminTest, InvalidTextIsA400SayingWhere) {
    struct probe {
        std::string method, target, body, expect;
    };
    const std::vector<probe> probes = {
        {"GET", "/v1/accounts/%ff/limits", "", "path segment 3"},
        {"PUT", "/v1/accounts/%ff/limits", R"({"invite": {"per_day": 1}})", "invalid UTF-8 (byte 0xff)"},
        {"GET", "/v1/campaigns/a%00b", "", "a NUL byte at byte 2"},
        {"GET", "/v1/campaigns/%c3%28/leads", "", "path segment 3"},
        {"GET", "/v1/campaigns/%ed%a0%80", "", "invalid UTF-8"},  // a UTF-16 surrogate
        {"GET", "/v1/campaigns/%c0%af", "", "invalid UTF-8"},     // an overlong '/'
        {"GET", "/v1/events?type=%ff", "", "query parameter 'type'"},
        {"GET", "/v1/budget?campaign=x%00", "", "a NUL byte"},
        {"GET", "/v1/events?%fe=1", "", "query parameter's name"},
        {"PUT", "/v1/campaigns/x/budget", "{\"credits\": 5, \"x\\u0000\": 1}", "NUL character"},
        {"PUT", "/v1/campaigns/x/budget", "{\"credits\": \"\xff\"}", "line 1, column 14"},
        {"PUT", "/v1/accounts/sender-1/limits", "{\"invite\": {\"per_day\": 1}}\n\xc3", "line 2, column 1"},
        {"PUT", "/v1/accounts/sender-1/limits", std::string("{\"invite\"\0: 1}", 14), "a NUL byte"},
    };
    for (const auto& p : probes) {
        auto r = call(p.method, p.target, p.body);
        EXPECT_EQ(r.status, 400) << p.target << " " << r.body;
        EXPECT_TRUE(is_error_shape(r.body, 400)) << r.body;
        EXPECT_NE(r.body.find(p.expect), std::string::npos) << p.target << ": " << r.body;
        EXPECT_EQ(r.body.find("ERROR:"), std::string::npos) << "database text leaked: " << r.body;
    }
    // A campaign body: not UTF-8, or a raw NUL, is a 400 with its line and column; a NUL through
    // an escape is a 422 at the field (YAML "\0"), or a 400 for JSON's \u0000.
    auto bad_utf8 = call("POST", "/v1/campaigns", campaign_yaml("bad\xff", search_audience(3)));
    EXPECT_EQ(bad_utf8.status, 400) << bad_utf8.body;
    EXPECT_NE(bad_utf8.body.find("line 1, column 10"), std::string::npos) << bad_utf8.body;
    auto raw_nul = call("POST", "/v1/campaigns", campaign_yaml(std::string("ab\0c", 4), search_audience(3)));
    EXPECT_EQ(raw_nul.status, 400) << raw_nul.body;
    auto escaped_nul = call("POST", "/v1/campaigns", campaign_yaml("\"ab\\0c\"", search_audience(3)));
    EXPECT_EQ(escaped_nul.status, 422) << escaped_nul.body;
    EXPECT_NE(escaped_nul.body.find("NUL character"), std::string::npos) << escaped_nul.body;
    auto json_nul = client_->request("POST", "/v1/campaigns", R"({"name": "a\u0000b"})",
                                     {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}});
    EXPECT_EQ(json_nul.status, 400) << json_nul.body;
    EXPECT_NE(json_nul.body.find("/name"), std::string::npos) << json_nul.body;
    EXPECT_EQ(count("campaigns"), "0");
    EXPECT_EQ(count("ledger_transfers"), "0");
    EXPECT_TRUE(serve_->alive());
}

// Campaign and account names hold no control characters (C0, DEL, C1) and no bidirectional
// overrides or isolates: in a definition (422 at the field) or a path (400).
TEST_F(AdminTest, NamesWithControlCharactersAreRefused) {
    for (const std::string name : {"\"a\\nforged line\"", "\"ansi\\e[31mred\"", "\"evil\\u202Eeman\"",
                                   "\"iso\\u2066late\"", "\"del\\x7f\"", "\"c1\\x85\""}) {
        auto r = call("POST", "/v1/campaigns", campaign_yaml(name, search_audience(3)));
        EXPECT_EQ(r.status, 422) << name << ": " << r.body;
        ASSERT_TRUE(is_error_shape(r.body, 422)) << r.body;
        auto details = r.body_json()["error"]["details"];
        ASSERT_FALSE(details.empty()) << r.body;
        EXPECT_EQ(details[0]["line"], 1) << r.body;
        EXPECT_NE(details[0]["message"].get<std::string>().find("not a valid name"), std::string::npos) << r.body;
    }
    auto account = campaign_yaml("ok-name", search_audience(3));
    account.replace(account.find("sender-2"), 8, "\"sender\\t2\"");
    auto a = call("POST", "/v1/campaigns", account);
    EXPECT_EQ(a.status, 422) << a.body;
    EXPECT_NE(a.body.find("accounts[1] is not a valid name: control character U+0009"), std::string::npos) << a.body;
    for (const std::string target : {"/v1/campaigns/a%0Ab", "/v1/campaigns/a%1b%5b31m/leads", "/v1/campaigns/%e2%80%ae",
                                     "/v1/accounts/x%c2%85/limits", "/v1/campaigns/x%7f/pause"}) {
        auto r = call(target.find("pause") != std::string::npos ? "POST" : "GET", target);
        EXPECT_EQ(r.status, 400) << target << ": " << r.body;
        EXPECT_NE(r.body.find("not a valid name"), std::string::npos) << r.body;
    }
    EXPECT_EQ(count("campaigns"), "0");
    // A character that shows as nothing: a name that looks like another's (422), a path (400), a
    // do-not-contact company or URL that would match no lead (422).
    auto invisible = call("POST", "/v1/campaigns", campaign_yaml("\"look\u200Balike\"", search_audience(3)));
    EXPECT_EQ(invisible.status, 422) << invisible.body;
    EXPECT_NE(invisible.body.find("invisible character U+200B"), std::string::npos) << invisible.body;
    EXPECT_EQ(call("GET", "/v1/campaigns/look%E2%80%8Balike").status, 400);
    // An error's message spells what a quoted value could hide: a space other than U+0020.
    auto odd_space = call("GET", "/v1/inbox/1%C2%A0");
    EXPECT_GE(odd_space.status, 400) << odd_space.body;
    EXPECT_LT(odd_space.status, 500) << odd_space.body;
    EXPECT_NE(odd_space.body.find("'1\\\\u{00a0}'"), std::string::npos) << odd_space.body;
    EXPECT_EQ(odd_space.body.find("\xc2\xa0"), std::string::npos) << odd_space.body;
    for (const std::string entry : {R"({"entries": [{"company": "Acme\u200B"}]})", R"({"entries": [{"company": "Ac\u202Eme"}]})",
                                    R"({"entries": [{"profile_url": "https://n.example/in/a\u200Bb"}]})",
                                    R"({"entries": [{"profile_url": "https://n.example/in/jo%E2%80%8Bhn"}]})",
                                    R"({"entries": [{"company": "\u00A0"}]})", R"({"entries": [{"company": "Acme\u200D"}]})"}) {
        auto r = call("POST", "/v1/dnc", entry);
        EXPECT_EQ(r.status, 422) << entry << ": " << r.body;
        EXPECT_NE(r.body.find("which would match no lead"), std::string::npos) << r.body;
    }
    EXPECT_EQ(count("do_not_contact"), "0");
    EXPECT_EQ(count("campaigns"), "0");
    // Nothing of it reached serve's log as a line of its own.
    EXPECT_EQ(serve_->log().find("\nforged line"), std::string::npos) << serve_->log();
}

// A body route takes only its declared media types (415), a route without a body refuses one
// (400); each refusal changes nothing.
// A JSON body nested 20,000 deep (40 KB) on any route that reads JSON: a 400 that says so, and the
// replica goes on (it overflowed serve's stack and killed it).
TEST_F(AdminTest, ADeeplyNestedJsonBodyIsA400AndServeGoesOn) {
    const std::string deep = std::string(20'000, '[') + std::string(20'000, ']');
    const std::string deep_object = "{\"credits\": " + deep + "}";
    const std::vector<std::pair<std::string, std::string>> routes = {
        {"PUT", "/v1/campaigns/none/budget"}, {"POST", "/v1/dnc"}, {"POST", "/v1/campaigns/none/leads:bulk"}};
    for (const auto& [method, target] : routes) {
        for (const std::string& body : {deep, deep_object}) {
            auto r = client_->request(method, target, body,
                                      {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}});
            EXPECT_EQ(r.status, 400) << method << " " << target << ": " << r.body;
            EXPECT_NE(error_message(r).find("deeper than 64 levels"), std::string::npos) << r.body;
        }
    }
    auto campaign = client_->request("POST", "/v1/campaigns?dry_run=true", deep,
                                     {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}});
    EXPECT_EQ(campaign.status, 400) << campaign.body;
    EXPECT_TRUE(serve_->alive()) << serve_->log();
    EXPECT_EQ(get("/healthz").status, 200);
}

// A query parameter a route does not take, or one given twice, is a 400 naming it, and nothing
// is done: a misspelt `?dryrun=true` applied for real, and `?dry_run=true&dry_run=false` too.
TEST_F(AdminTest, UnknownOrRepeatedQueryParametersAreRefused) {
    const auto file = campaign_yaml("theta", search_audience(3));
    struct bad {
        std::string method, target, says;
    };
    for (const auto& b : {bad{"POST", "/v1/campaigns?dryrun=true", "unknown query parameter 'dryrun' (this path takes "
                                                                    "dry_run, search_again, move_running)"},
                          bad{"POST", "/v1/campaigns?dry_run=true&dry_run=false",
                              "query parameter 'dry_run' is given more than once"},
                          bad{"GET", "/v1/campaigns?limit=5", "unknown query parameter 'limit' (this path takes none)"},
                          bad{"GET", "/v1/events?typ=reply", "unknown query parameter 'typ' (this path takes type, limit)"},
                          bad{"GET", "/v1/budget?campaign=a&campaign=b", "given more than once"},
                          bad{"GET", "/v1/dnc?cursor=0&limt=5", "unknown query parameter 'limt'"},
                          bad{"GET", "/v1/campaigns/theta/leads?sate=done", "unknown query parameter 'sate'"},
                          bad{"PUT", "/v1/campaigns/theta/budget?force=1", "unknown query parameter 'force'"}}) {
        auto r = call(b.method, b.target, b.method == "GET" ? "" : b.method == "PUT" ? R"({"credits": 5})" : file);
        EXPECT_EQ(r.status, 400) << b.target << ": " << r.body;
        EXPECT_NE(error_message(r).find(b.says), std::string::npos) << b.target << ": " << r.body;
    }
    EXPECT_EQ(count("campaigns"), "0");
    // The parameters a route takes still work.
    EXPECT_EQ(call("POST", "/v1/campaigns?dry_run=true", file).status, 200);
    EXPECT_EQ(count("campaigns"), "0");
    EXPECT_EQ(get("/v1/events?type=message&limit=5").status, 200);
    EXPECT_EQ(get("/v1/dnc?limit=5&cursor=0").status, 200);
    // A bare separator is no parameter.
    for (const std::string target : {"/v1/dnc?limit=5&", "/v1/campaigns?", "/v1/campaigns?&"}) {
        const auto r = get(target);
        EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    }
}

// A HEAD is answered with the GET's status and Content-Length, and no body.
TEST_F(AdminTest, AHeadHasTheGetsHeaderAndNoBody) {
    ASSERT_EQ(call("POST", "/v1/campaigns", campaign_yaml("iota", search_audience(3))).status, 201);
    for (const std::string target : {"/v1/campaigns", "/v1/dnc", "/v1/events/quarantine", "/healthz"}) {
        const auto got = get(target);
        const auto head = call("HEAD", target);
        EXPECT_EQ(head.status, got.status) << target;
        EXPECT_TRUE(head.body.empty()) << target << ": " << head.body;
        EXPECT_EQ(head.header("content-length"), std::to_string(got.body.size())) << target;
        // On the wire: the header and nothing after it (a client library skips a HEAD's body).
        const auto wire = raw_exchange(port_, "HEAD " + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                                                  std::string(token) + "\r\nConnection: close\r\n\r\n");
        ASSERT_NE(wire.find("\r\n\r\n"), std::string::npos) << wire;
        EXPECT_EQ(wire.substr(wire.find("\r\n\r\n") + 4), "") << target;
    }
    // The connection goes on after a HEAD (its answer's length did not swallow the next one).
    EXPECT_EQ(get("/v1/campaigns").status, 200);
}

TEST_F(AdminTest, ContentTypesAndUnexpectedBodies) {
    auto with_type = [&](const std::string& method, const std::string& target, const std::string& body,
                         const std::string& type) {
        return client_->request(method, target, body, {{"Authorization", "Bearer " + token}, {"Content-Type", type}});
    };
    const auto yaml = campaign_yaml("typed", search_audience(3));
    for (const std::string type : {"text/plain", "application/x-www-form-urlencoded", "", "application/yaml; charset=latin1",
                                   "multipart/form-data"}) {
        auto r = with_type("POST", "/v1/campaigns", yaml, type);
        EXPECT_EQ(r.status, 415) << type << ": " << r.body;
        EXPECT_TRUE(is_error_shape(r.body, 415)) << r.body;
    }
    EXPECT_NE(with_type("POST", "/v1/campaigns", yaml, "").body.find("no Content-Type"), std::string::npos);
    auto yaml_as_json = with_type("POST", "/v1/campaigns?dry_run=true", yaml, "application/json");
    EXPECT_EQ(yaml_as_json.status, 400) << yaml_as_json.body;
    EXPECT_NE(yaml_as_json.body.find("not valid JSON"), std::string::npos);
    for (const std::string type : {"application/yaml", "application/x-yaml", "text/yaml; charset=utf-8", "Application/YAML"}) {
        EXPECT_EQ(with_type("POST", "/v1/campaigns?dry_run=true", yaml, type).status, 200) << type;
    }
    EXPECT_EQ(with_type("PUT", "/v1/campaigns/typed/budget", R"({"credits": 5})", "text/plain").status, 415);
    EXPECT_EQ(with_type("PUT", "/v1/accounts/sender-1/limits", R"({"invite": null})", "application/yaml").status, 415);

    for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
             {"GET", "/v1/campaigns"}, {"POST", "/v1/campaigns/typed/pause"}, {"GET", "/v1/accounts"},
             {"GET", "/v1/accounts/sender-1/limits"}, {"GET", "/v1/budget"}, {"GET", "/healthz"}}) {
        auto r = call(method, target, R"({"state": "paused"})");
        EXPECT_EQ(r.status, 400) << target << ": " << r.body;
        EXPECT_NE(r.body.find("takes no request body"), std::string::npos) << r.body;
    }
    EXPECT_EQ(count("campaigns"), "0");
}

// The HTTP layer's own answers (413, 431, malformed HTTP) have the documented Error shape too.
TEST_F(AdminTest, HttpLayerErrorsUseTheErrorShape) {
    auto big = call("POST", "/v1/campaigns", std::string(70'000, 'x'));
    EXPECT_EQ(big.status, 413);
    EXPECT_TRUE(is_error_shape(big.body, 413)) << big.body;
    auto big_get = parse_answer(raw_exchange(port_, "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n" +
                                                        std::string(70'000, 'a')));
    EXPECT_EQ(big_get.status, 413);
    EXPECT_TRUE(is_error_shape(big_get.body, 413)) << big_get.body;
    auto headers = parse_answer(
        raw_exchange(port_, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(70'000, 'h') + "\r\n\r\n"));
    EXPECT_EQ(headers.status, 431);
    EXPECT_TRUE(is_error_shape(headers.body, 431)) << headers.body;
    for (const std::string& garbage : {std::string("GARBAGE\r\n\r\n"), std::string("GET / HTTP/9.9\r\n\r\n"),
                                      std::string("GET /healthz HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
                                      std::string("GET /v1/campaigns/\xff\x00 HTTP/1.1\r\nHost: x\r\n\r\n", 42)}) {
        auto a = parse_answer(raw_exchange(port_, garbage));
        EXPECT_EQ(a.status, 400) << garbage;
        EXPECT_TRUE(is_error_shape(a.body, 400)) << a.body;
    }
    EXPECT_TRUE(serve_->alive());
}

// A cancelled campaign: re-applying it is a 409 (not a 503) that sends no search and bills
// nothing; the CLI refuses to pause or resume it with the API's message, and refuses its apply.
TEST_F(AdminTest, CancelledCampaignRulesAreTheSameInTheApiAndTheCli) {
    auto credits = [&] {
        return http_client("127.0.0.1", sandbox_->port()).get("/v2/credits", "test-key").body_json()["data"]["credits"];
    };
    ASSERT_EQ(call("POST", "/v1/campaigns", campaign_yaml("omega", search_audience(3))).status, 201);
    ASSERT_EQ(call("POST", "/v1/campaigns/omega/cancel").status, 200);
    const auto before = credits();
    const auto transfers = count("ledger_transfers");
    auto again = call("POST", "/v1/campaigns", campaign_yaml("omega", search_audience(4)));
    EXPECT_EQ(again.status, 409) << again.body;
    EXPECT_NE(error_message(again).find("was cancelled"), std::string::npos) << again.body;
    EXPECT_EQ(credits(), before) << "the refused apply sent an audience search";
    EXPECT_EQ(count("ledger_transfers"), transfers);

    auto api = call("POST", "/v1/campaigns/omega/resume");
    ASSERT_EQ(api.status, 409);
    for (const std::string verb : {"resume", "pause"}) {
        auto r = env_->run({"campaign", verb, "omega"});
        EXPECT_EQ(r.exit_code, 2) << r.output;
        EXPECT_NE(r.output.find("cannot " + verb + " campaign 'omega': it is cancelled"), std::string::npos) << r.output;
    }
    EXPECT_NE(error_message(api).find("cannot resume campaign 'omega': it is cancelled"), std::string::npos);
    auto cancel = env_->run({"campaign", "cancel", "omega"});
    EXPECT_EQ(cancel.exit_code, 0) << cancel.output;
    EXPECT_NE(cancel.output.find("already"), std::string::npos) << cancel.output;
    EXPECT_EQ(env_->scalar("SELECT state FROM campaigns WHERE name = 'omega'"), "cancelled");

    const std::string file = "/tmp/orch-admin-cancelled-" + std::to_string(::getpid()) + ".yaml";
    {
        std::ofstream out(file);
        out << campaign_yaml("omega", search_audience(5));
    }
    auto cli = env_->run({"campaign", "apply", file});
    std::remove(file.c_str());
    EXPECT_EQ(cli.exit_code, 2) << cli.output;
    EXPECT_NE(cli.output.find("was cancelled"), std::string::npos) << cli.output;
    EXPECT_EQ(credits(), before);
    EXPECT_EQ(count("ledger_transfers"), transfers);
}

// The apply's audience search goes through the sender's own search quota (its override), in the
// API and the CLI alike. A search a limit holds is not sent:
// the API answers 429 with Retry-After (not a 502: the API did not fail), the CLI exits 1, and
// nothing is stored or billed.
TEST_F(AdminTest, AnAudienceSearchALimitHoldsIsA429ThatBillsNothing) {
    auto credits = [&] {
        return http_client("127.0.0.1", sandbox_->port()).get("/v2/credits", "test-key").body_json()["data"]["credits"];
    };
    ASSERT_EQ(call("PUT", "/v1/accounts/sender-1/limits", R"({"search": {"per_day": 0}})").status, 200);
    const auto before = credits();
    auto held = call("POST", "/v1/campaigns", campaign_yaml("held", search_audience(3)));
    EXPECT_EQ(held.status, 429) << held.body;
    EXPECT_NE(error_message(held).find("search"), std::string::npos) << held.body;
    EXPECT_NE(error_message(held).find("not sent"), std::string::npos) << held.body;
    ASSERT_FALSE(held.header("retry-after").empty()) << held.body;
    EXPECT_GE(std::stoll(held.header("retry-after")), 1);
    EXPECT_EQ(count("campaigns"), "0");
    EXPECT_EQ(credits(), before) << "a held search was sent";

    const std::string file = "/tmp/orch-admin-held-" + std::to_string(::getpid()) + ".yaml";
    {
        std::ofstream out(file);
        out << campaign_yaml("held", search_audience(3));
    }
    auto cli = env_->run({"campaign", "apply", file});
    EXPECT_EQ(cli.exit_code, 1) << cli.output;
    EXPECT_NE(cli.output.find("not sent"), std::string::npos) << cli.output;
    EXPECT_EQ(count("campaigns"), "0");
    EXPECT_EQ(credits(), before);

    ASSERT_EQ(call("PUT", "/v1/accounts/sender-1/limits", R"({"clear": ["search"]})").status, 200);
    // Without it, the search goes through.
    auto applied = call("POST", "/v1/campaigns", campaign_yaml("held", search_audience(3)));
    EXPECT_EQ(applied.status, 201) << applied.body;
    EXPECT_LT(credits(), before);
    std::remove(file.c_str());
}

// A label names one account: connecting another account under a taken label exits 2 and says
// so (not a raw database error), storing nothing; connecting the same account again under
// another label renames it and says that campaign files naming the old label no longer find it.
TEST_F(AdminTest, AccountLabelsNameOneAccount) {
    const auto before = count("accounts");
    auto clash = env_->run({"accounts", "connect", "--login-token", "token-3", "--country", "FR", "--label", "sender-1"});
    EXPECT_EQ(clash.exit_code, 2) << clash.output;
    EXPECT_NE(clash.output.find("--label 'sender-1' is already account"), std::string::npos) << clash.output;
    EXPECT_EQ(clash.output.find("duplicate key"), std::string::npos) << clash.output;
    EXPECT_EQ(count("accounts"), before);
    const auto id = env_->scalar("SELECT account_id FROM accounts WHERE label = 'sender-2'");
    auto renamed = env_->run({"accounts", "connect", "--login-token", "token-2", "--country", "FR", "--label", "sender-b"});
    EXPECT_EQ(renamed.exit_code, 0) << renamed.output;
    EXPECT_NE(renamed.output.find("was labelled 'sender-2', now 'sender-b'"), std::string::npos) << renamed.output;
    EXPECT_EQ(env_->scalar("SELECT label FROM accounts WHERE account_id = '" + id + "'"), "sender-b");
}

// A small fuzz over the admin API: a few hundred requests with invalid UTF-8, NULs, control and
// bidirectional characters, huge headers and bodies, and wrong content types. None may get a
// 5xx, every error has the documented shape, and serve keeps running.
TEST_F(AdminTest, FuzzedRequestsNeverGet5xx) {
    std::mt19937 rng(20261126);
    auto pick = [&](const auto& list) { return list[std::uniform_int_distribution<std::size_t>(0, list.size() - 1)(rng)]; };
    const std::vector<std::string> nasty = {"%ff", "%00", "%0a", "%0d%0a", "%1b%5b2J", "%e2%80%ae", "%e2%81%a6",
                                            "%c2%85", "%7f", "%c0%80", "%ed%a0%80", "%f4%90%80%80", "a%2fb", "%",
                                            "%zz", "\xff", "\xc3", "~", "..", "x"};
    const std::vector<std::string> templates = {"/v1/campaigns/{}", "/v1/campaigns/{}/leads", "/v1/campaigns/{}/pause",
                                                "/v1/campaigns/{}/versions/{}", "/v1/campaigns/{}/leads/{}",
                                                "/v1/accounts/{}/limits", "/v1/campaigns/{}/budget",
                                                "/v1/events?type={}&limit={}", "/v1/budget?campaign={}",
                                                "/v1/campaigns?dry_run={}", "/v1/campaigns/x/leads?state={}&cursor={}",
                                                "/{}", "/v1/{}"};
    const std::vector<std::string> methods = {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"};
    const std::vector<std::string> types = {"application/json", "application/yaml", "text/plain", "", "image/png",
                                            "application/json; charset=utf-16"};
    auto body_of = [&](int kind) -> std::string {
        switch (kind) {
            case 0: return "";
            case 1: return R"({"credits": "\u0000"})";
            case 2: return "{\"invite\": {\"per_day\": \"\xff\"}}";
            case 3: return std::string("name: a\0b\n", 10);
            case 4: return "name: \"\\e[31m\\u202e\"\naccounts: [sender-1]\n";
            case 5: return std::string(70'000, '{');
            case 6: return "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[";
            default: return R"({"clear": [null, 1, "all"], "per_day": 1e999})";
        }
    };
    int answered = 0;
    for (int i = 0; i < 300; ++i) {
        std::string target = pick(templates);
        for (auto at = target.find("{}"); at != std::string::npos; at = target.find("{}")) {
            target.replace(at, 2, pick(nasty) + pick(nasty));
        }
        const std::string method = pick(methods);
        std::map<std::string, std::string> h = {{"Authorization", "Bearer " + token}, {"Content-Type", pick(types)}};
        if (i % 37 == 0) {
            h["X-Huge"] = std::string(70'000, 'h');
        }
        if (i % 11 == 0) {
            h["X-Ctl"] = "a\x01\x7f\xff";
        }
        const std::string body = method == "GET" || method == "HEAD" ? (i % 5 == 0 ? "x" : "") : body_of(i % 8);
        http_result r;
        try {
            r = client_->request(method, target, body, h);
        } catch (const std::exception&) {
            // The server closed a connection it refused (431, a malformed target): fine, if it answered
            // the next request; a crash fails below.
            continue;
        }
        ++answered;
        EXPECT_LT(r.status, 500) << method << " " << target << ": " << r.body;
        if (r.status >= 400 && method != "HEAD") {
            EXPECT_TRUE(is_error_shape(r.body, r.status)) << method << " " << target << ": " << r.body;
        }
    }
    EXPECT_GT(answered, 250);
    EXPECT_TRUE(serve_->alive());
    EXPECT_EQ(get("/healthz").status, 200);
    EXPECT_EQ(count("campaigns"), "0");
}

TEST_F(AdminTest, ServeRefusesAShortTokenAndATokenFlag) {
    env_->set("ORCH_ADMIN_TOKEN", "short");
    auto r = env_->run({"serve", "--admin-listen", "127.0.0.1:" + std::to_string(free_port())}, 10'000);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("admin_token (ORCH_ADMIN_TOKEN) must have at least 16 characters"), std::string::npos)
        << r.output;
    env_->set("ORCH_ADMIN_TOKEN", token);
    auto flag = env_->run({"serve", "--admin-token", token}, 10'000);
    EXPECT_EQ(flag.exit_code, 2);
    EXPECT_EQ(flag.output.find(token), std::string::npos) << "the token was echoed: " << flag.output;
}

}  // namespace
