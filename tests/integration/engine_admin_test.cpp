// End-to-end tests of the admin REST endpoint (engine/admin.hpp): the real `orchestrator serve`
// with ORCH_ADMIN_TOKEN, against the real sandbox, Postgres (a database of the test's own) and
// Redis; every endpoint, auth, and the 400/401/404/405/409/413/422 cases, each checked to change
// nothing in the database.
#include "tests/support/http_client.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
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

    // Unchanged, but the search was sent again: booked again.
    auto again = call("POST", "/v1/campaigns", campaign_yaml("alpha", search_audience(5)));
    EXPECT_EQ(again.status, 200);
    EXPECT_EQ(again.body_json()["result"], "unchanged");
    EXPECT_EQ(again.body_json()["audience_credits"], 1);
    EXPECT_EQ(env_->scalar("SELECT count(*) || ' ' || sum(posted) FROM ledger_transfers "
                           "WHERE attempt_id IS NULL AND action = 'search_people'"),
              "2 2");

    // A bad new version of an existing campaign changes nothing either.
    auto bad = campaign_yaml("alpha", search_audience(5));
    bad.replace(bad.find("timeout: 1h"), 11, "timeout: 1 fortnight");
    EXPECT_EQ(call("POST", "/v1/campaigns", bad).status, 422);
    EXPECT_EQ(count("campaign_versions"), "1");

    auto updated = call("POST", "/v1/campaigns", campaign_yaml("alpha", search_audience(5), 5000));
    EXPECT_EQ(updated.status, 200);
    EXPECT_EQ(updated.body_json()["result"], "updated");
    EXPECT_EQ(updated.body_json()["version"], 2);

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
    EXPECT_EQ(get("/v1/campaigns/beta/leads?state=live").body_json()["items"].size(), 5u);
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
    ASSERT_EQ(call("POST", "/v1/campaigns/beta/pause").status, 200);
    EXPECT_EQ(get("/v1/campaigns/beta/leads/" + lead_id).body_json()["waiting"], "paused: paused by an operator");
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

    // Steps run in a worker process; /metrics derives them from Postgres.
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
    EXPECT_NE(text.find("orch_steps_total{action=\"check_invitation\",outcome=\"ok\"} 4"), std::string::npos) << text;
    EXPECT_NE(text.find("orch_steps_total{action=\"invite\",outcome=\"ok\"} 4"), std::string::npos) << text;
    EXPECT_NE(text.find("orch_api_call_seconds_count{action=\"invite\"} 4"), std::string::npos) << text;
    EXPECT_NE(text.find("# TYPE orch_due_backlog gauge"), std::string::npos);
    EXPECT_NE(text.find("orch_event_lag_seconds"), std::string::npos);
    EXPECT_NE(text.find("orch_ledger_credits{balance=\"spent\"}"), std::string::npos);
    // Counted once: a second scrape gives the same totals.
    auto again = get("/metrics").body;
    EXPECT_NE(again.find("orch_steps_total{action=\"invite\",outcome=\"ok\"} 4"), std::string::npos) << again;
    EXPECT_TRUE(serve_->alive());
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
    EXPECT_EQ(j["counts"]["live"], 3);
    EXPECT_TRUE(j["start_at"].is_null());
    EXPECT_TRUE(j["end_at"].is_null());

    auto diff = get("/v1/campaigns/life/diff");
    ASSERT_EQ(diff.status, 200) << diff.body;
    auto d = diff.body_json();
    EXPECT_EQ(d["from"], 1);
    EXPECT_EQ(d["to"], 2);
    EXPECT_EQ(d["same"], false);
    EXPECT_NE(d["diff"].get<std::string>().find("-  \"budget_credits\": 1000000,\n+  \"budget_credits\": 5000,\n"),
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
    EXPECT_EQ(c["today"]["spent"], 0);
    EXPECT_EQ(c["today"]["available"], 50);
    EXPECT_TRUE(c["accounts"].is_array());

    auto swap = call("PUT", "/v1/campaigns/delta/budget", R"({"per_day": null, "per_account": 20})");
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
                          bad{"/v1/campaigns/delta/budget", R"({"per_day": 201})", 422},
                          bad{"/v1/campaigns/delta/budget", R"({"credits": 10})", 422},  // below per_account 20
                          bad{"/v1/campaigns/delta/budget", R"({"budget": 10})", 422},
                          bad{"/v1/campaigns/nope/budget", R"({"credits": 10})", 404}}) {
        auto r = call("PUT", b.target, b.body);
        EXPECT_EQ(r.status, b.status) << b.body << ": " << r.body;
        EXPECT_FALSE(error_message(r).empty()) << b.body;
    }
    EXPECT_EQ(limits(), "200 - 20");
    auto wrong_method = call("POST", "/v1/campaigns/delta/budget", R"({"credits": 10})");
    EXPECT_EQ(wrong_method.status, 405);
    EXPECT_EQ(wrong_method.headers["allow"], "PUT");
    EXPECT_EQ(call("PUT", "/v1/campaigns/delta/budget", R"({"credits": 300})", "").status, 401);

    // Paused for its budget (as the ledger pauses it): a raise resumes it.
    env_->scalar("UPDATE campaigns SET state = 'paused', pause_reason = 'budget exhausted: test' WHERE name = 'delta' "
                 "RETURNING 1");
    auto raise = call("PUT", "/v1/campaigns/delta/budget", R"({"credits": 300})");
    ASSERT_EQ(raise.status, 200) << raise.body;
    EXPECT_EQ(raise.body_json()["resumed"], true);
    EXPECT_EQ(env_->scalar("SELECT state FROM campaigns WHERE name = 'delta'"), "active");
}

// PUT /v1/accounts/{id}/limits: an account's own quotas. Bad requests (no token, unknown
// account, not JSON, an unknown action, a bad value) change nothing; a good one is stored, shown
// by GET /v1/accounts (effective quotas and today's limit from the Redis buckets) and cleared
// with null.
TEST_F(AdminTest, AccountLimitsAreSetShownAndCleared) {
    const std::string id = env_->scalar("SELECT account_id FROM accounts WHERE label = 'sender-1'");
    ASSERT_FALSE(id.empty());
    const std::string path = "/v1/accounts/" + id + "/limits";
    const std::string good = R"({"invite": {"per_day": 40, "per_week": 150}, "send": null})";
    auto stored = [&] { return env_->scalar("SELECT quotas::text FROM accounts WHERE account_id = '" + id + "'"); };

    EXPECT_EQ(call("PUT", path, good, "").status, 401);
    EXPECT_EQ(call("PUT", path, good, "admin-test-token-0123456780").status, 401);
    auto missing = call("PUT", "/v1/accounts/nobody/limits", good);
    EXPECT_EQ(missing.status, 404);
    EXPECT_NE(error_message(missing).find("no account 'nobody'"), std::string::npos);
    auto not_json = call("PUT", path, "{\"invite\": ");
    EXPECT_EQ(not_json.status, 400);
    EXPECT_NE(error_message(not_json).find("not valid JSON"), std::string::npos);
    EXPECT_EQ(call("PUT", path, "").status, 400);
    const std::vector<std::pair<std::string, std::string>> invalid = {
        {R"({"invite": {"per_day": -1}})", "invite.per_day"},
        {R"({"invite": {"per_day": 1.5}})", "invite.per_day"},
        {R"({"send": {"per_week": "9"}})", "send.per_week"},
        {R"({"bogus": {"per_day": 1}})", "bogus: unknown action"},
        {R"({"visit": {"per_hour": 1}})", "visit.per_hour"},
        {R"([1])", "JSON object"},
    };
    for (const auto& [body, field] : invalid) {
        auto r = call("PUT", path, body);
        EXPECT_EQ(r.status, 422) << body << " " << r.body;
        EXPECT_NE(error_message(r).find(field), std::string::npos) << body << " " << r.body;
    }
    auto wrong_method = call("POST", path, good);
    EXPECT_EQ(wrong_method.status, 405);
    EXPECT_EQ(wrong_method.header("allow"), "GET, PUT");
    EXPECT_EQ(stored(), "") << "a refused request changed the account";

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

    auto accounts = get("/v1/accounts");
    ASSERT_EQ(accounts.status, 200) << accounts.body;
    int seen = 0;
    const json listed = accounts.body_json();  // named: the loop must not outlive it
    ASSERT_EQ(listed["accounts"].size(), 2u) << accounts.body;
    for (const auto& a : listed["accounts"]) {
        const bool own = a["account_id"] == id;
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

    auto cleared = call("PUT", path, R"({"invite": null})");
    ASSERT_EQ(cleared.status, 200) << cleared.body;
    EXPECT_EQ(cleared.body_json()["overrides"], json::object());
    EXPECT_EQ(stored(), "");
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
