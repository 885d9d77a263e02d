// Conformance of the admin REST endpoint to its contract, api/openapi.yaml: valid and invalid
// requests of every operation go through Stoplight Prism (a validating proxy, pinned in
// deploy/install-deps.sh) in front of a real `orchestrator serve` (with the sandbox, Postgres and
// Redis), and any response Prism finds off the contract (an undocumented status, a body of another
// shape, a missing field, a wrong media type) fails the test. Request violations are expected for
// the invalid requests and are not failures; a 5xx answer is.
//
// Bodies Prism cannot carry as sent are left to engine_admin_test, which sends them directly:
// Prism (Node) re-encodes a body that is not UTF-8 (U+FFFD in place of the bad bytes) and does
// not answer a body labelled JSON that does not parse, and resets the connection of a path whose
// percent-encoding is not UTF-8 (%ff); it answers a GET with a body itself (501).
#include "tests/support/http_client.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <thread>

#include <unistd.h>

namespace {

using orch::test::background_process;
using orch::test::free_port;
using orch::test::http_client;
using orch::test::http_result;
using orch::test::json;
using orch::test::orchestrator_env;
using orch::test::sandbox_process;

const std::string token = "conformance-token-0123456789";

std::string prism_binary() {
    const char* env = std::getenv("ORCH_PRISM");
    return env != nullptr ? env : "/opt/orch-prism/node_modules/.bin/prism";
}

std::string campaign_yaml(const std::string& name, int total = 3) {
    return "name: " + name + "\naccounts: [sender-1]\naudience:\n  search:\n    title: Engineer\n  total_results: " +
           std::to_string(total) +
           "\nschedule:\n  time_zone: UTC\n  days: [mon, tue, wed, thu, fri, sat, sun]\n  hours: \"00:00-24:00\"\n"
           "budget_credits: 1000\nsteps:\n  - id: invite\n    kind: invite\n    note: \"Hi {{first_name}}\"\n";
}

class AdminConformance : public ::testing::Test {
protected:
    void SetUp() override {
        ORCH_REQUIRE_SERVICE("DATABASE_URL");
        if (!std::filesystem::exists(prism_binary())) {
            if (std::getenv("ORCH_REQUIRE_SERVICES") != nullptr) {
                FAIL() << "Prism is missing at " << prism_binary() << ": run deploy/install-deps.sh";
            }
            GTEST_SKIP() << "Prism is missing at " << prism_binary();
        }
        sandbox_ = std::make_unique<sandbox_process>(std::vector<std::string>{"--accept-probability", "1"});
        env_ = std::make_unique<orchestrator_env>(sandbox_->port());
        auto r = env_->run({"accounts", "connect", "--login-token", "token-1", "--country", "FR", "--label", "sender-1"});
        ASSERT_EQ(r.exit_code, 0) << r.output;
        env_->set("ORCH_ADMIN_TOKEN", token);
        const auto admin_port = free_port();
        serve_ = env_->spawn({"serve", "--webhook-listen", "127.0.0.1:" + std::to_string(free_port()), "--admin-listen",
                              "127.0.0.1:" + std::to_string(admin_port), "--admin-body-limit-bytes", "65536"});
        prism_port_ = free_port();
        prism_ = std::make_unique<background_process>(std::vector<std::string>{
            prism_binary(), "proxy", spec(),
            "http://127.0.0.1:" + std::to_string(admin_port), "--port", std::to_string(prism_port_), "--host",
            "127.0.0.1", "--errors", "false", "--cors", "false", "-v", "warn"});
        // Both up: the admin's liveness through the proxy.
        for (int i = 0; i < 600; ++i) {
            try {
                if (http_client("127.0.0.1", admin_port).get("/healthz").status == 200 &&
                    http_client("127.0.0.1", prism_port_).get("/healthz").status == 200) {
                    client_ = std::make_unique<http_client>("127.0.0.1", prism_port_);
                    return;
                }
            } catch (const std::exception&) {
                // not listening yet
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        FAIL() << "serve or prism did not come up\nserve: " << serve_->log() << "\nprism: " << prism_->log();
    }

    virtual std::string spec() { return std::string(ORCH_SOURCE_DIR) + "/api/openapi.yaml"; }

    // Sends one request through Prism and records any violation it found in the response.
    http_result send(const std::string& method, const std::string& target, const std::string& body = "",
                     std::map<std::string, std::string> headers = {}, bool auth = true) {
        if (auth) {
            headers["Authorization"] = "Bearer " + token;
        }
        if (std::getenv("ORCH_CONFORMANCE_TRACE") != nullptr) {
            std::cerr << "-> " << method << " " << target << std::endl;
        }
        auto r = client_->request(method, target, body, headers);
        ++sent_;
        EXPECT_LT(r.status, 500) << method << " " << target << ": " << r.body;
        auto v = r.header("sl-violations");
        if (!v.empty()) {
            auto list = json::parse(v, nullptr, false);
            EXPECT_TRUE(list.is_array()) << v;
            for (const auto& item : list.is_array() ? list : json::array()) {
                const bool response = item.contains("location") && item["location"].is_array() &&
                                      !item["location"].empty() && item["location"][0] == "response";
                if (response && expect_response_violations_) {
                    ++response_violations_;
                } else if (response) {
                    ADD_FAILURE() << method << " " << target << " -> " << r.status << ": the response is off the "
                                  << "contract: " << item.dump() << "\nbody: " << r.body.substr(0, 400);
                } else {
                    ++request_violations_;
                }
            }
        }
        return r;
    }

    std::unique_ptr<sandbox_process> sandbox_;
    std::unique_ptr<orchestrator_env> env_;
    std::unique_ptr<background_process> serve_;
    std::unique_ptr<background_process> prism_;
    std::unique_ptr<http_client> client_;
    unsigned short prism_port_ = 0;
    int sent_ = 0;
    int request_violations_ = 0;
    int response_violations_ = 0;
    bool expect_response_violations_ = false;
};

TEST_F(AdminConformance, EveryOperationAnswersWithinTheContract) {
    const std::map<std::string, std::string> yaml = {{"Content-Type", "application/yaml"}};
    const std::map<std::string, std::string> js = {{"Content-Type", "application/json"}};
    const std::string account = env_->scalar("SELECT account_id FROM accounts WHERE label = 'sender-1'");

    // Probes and reads.
    EXPECT_EQ(send("GET", "/healthz", "", {}, false).status, 200);
    send("GET", "/readyz", "", {}, false);
    EXPECT_EQ(send("GET", "/metrics").status, 200);
    EXPECT_EQ(send("GET", "/metrics", "", {}, false).status, 401);
    EXPECT_EQ(send("GET", "/v1/campaigns").status, 200);
    EXPECT_EQ(send("GET", "/v1/campaigns", "", {}, false).status, 401);

    // Apply: valid (created, dry run, unchanged) and invalid (422, 400, 415, 413, 409).
    EXPECT_EQ(send("POST", "/v1/campaigns?dry_run=true", campaign_yaml("conf"), yaml).status, 200);
    EXPECT_EQ(send("POST", "/v1/campaigns", campaign_yaml("conf"), yaml).status, 201);
    EXPECT_EQ(send("POST", "/v1/campaigns", campaign_yaml("conf"), yaml).status, 200);
    EXPECT_EQ(send("POST", "/v1/campaigns", campaign_yaml("conf", 4), yaml).status, 200);
    EXPECT_EQ(send("POST", "/v1/campaigns", "name: [unclosed\n", yaml).status, 422);
    EXPECT_EQ(send("POST", "/v1/campaigns", campaign_yaml("\"a\\nb\""), yaml).status, 422);
    EXPECT_EQ(send("POST", "/v1/campaigns", "  ", yaml).status, 400);
    EXPECT_EQ(send("POST", "/v1/campaigns", campaign_yaml("x"), {{"Content-Type", "text/plain"}}).status, 415);
    EXPECT_EQ(send("POST", "/v1/campaigns?dry_run=maybe", campaign_yaml("x"), yaml).status, 400);
    EXPECT_EQ(send("POST", "/v1/campaigns", std::string(70'000, 'x'), yaml).status, 413);
    EXPECT_EQ(send("DELETE", "/v1/campaigns").status, 405);

    // One campaign, its versions and leads.
    EXPECT_EQ(send("GET", "/v1/campaigns/conf").status, 200);
    EXPECT_EQ(send("GET", "/v1/campaigns/nope").status, 404);
    EXPECT_EQ(send("GET", "/v1/campaigns/a%0Ab").status, 400);
    EXPECT_EQ(send("GET", "/v1/campaigns/conf/versions").status, 200);
    EXPECT_EQ(send("GET", "/v1/campaigns/conf/versions/1").status, 200);
    EXPECT_EQ(send("GET", "/v1/campaigns/conf/versions/9").status, 404);
    EXPECT_EQ(send("GET", "/v1/campaigns/conf/versions/abc").status, 400);
    auto page = send("GET", "/v1/campaigns/conf/leads?limit=2");
    EXPECT_EQ(page.status, 200);
    EXPECT_EQ(send("GET", "/v1/campaigns/conf/leads?format=csv").status, 200);
    EXPECT_EQ(send("GET", "/v1/campaigns/conf/leads?state=bogus").status, 400);
    EXPECT_EQ(send("GET", "/v1/campaigns/conf/leads?limit=0").status, 400);
    const auto items = page.body_json()["items"];
    ASSERT_FALSE(items.empty()) << page.body;
    const auto lead = std::to_string(items[0]["lead_id"].get<std::int64_t>());
    EXPECT_EQ(send("GET", "/v1/campaigns/conf/leads/" + lead).status, 200);
    EXPECT_EQ(send("GET", "/v1/campaigns/conf/leads/999999").status, 404);
    EXPECT_EQ(send("GET", "/v1/campaigns/conf/leads/x1").status, 400);

    // Budget changes.
    EXPECT_EQ(send("PUT", "/v1/campaigns/conf/budget", R"({"credits": 2000, "per_day": 100})", js).status, 200);
    EXPECT_EQ(send("PUT", "/v1/campaigns/conf/budget", R"({"clear": ["per_day"], "per_account": null})", js).status, 200);
    EXPECT_EQ(send("PUT", "/v1/campaigns/conf/budget", R"({"credits": -1})", js).status, 422);
    EXPECT_EQ(send("PUT", "/v1/campaigns/conf/budget", R"({"credits": 5})", {{"Content-Type", "text/plain"}}).status, 415);
    EXPECT_EQ(send("PUT", "/v1/campaigns/nope/budget", R"({"credits": 5})", js).status, 404);
    EXPECT_EQ(send("POST", "/v1/campaigns/conf/budget", R"({"credits": 5})", js).status, 405);

    // Accounts and their limits.
    EXPECT_EQ(send("GET", "/v1/accounts").status, 200);
    EXPECT_EQ(send("GET", "/v1/accounts/" + account + "/limits").status, 200);
    EXPECT_EQ(send("PUT", "/v1/accounts/" + account + "/limits", R"({"invite": {"per_day": 40}, "send": null})", js).status,
              200);
    EXPECT_EQ(send("PUT", "/v1/accounts/" + account + "/limits", R"({"clear": ["invite"]})", js).status, 200);
    EXPECT_EQ(send("PUT", "/v1/accounts/" + account + "/limits", R"({"bogus": {"per_day": 1}})", js).status, 422);
    EXPECT_EQ(send("PUT", "/v1/accounts/" + account + "/limits", "{\"invite\": \"\\u0000\"}", js).status, 400);
    EXPECT_EQ(send("GET", "/v1/accounts/nobody/limits").status, 404);

    // Budget and events.
    EXPECT_EQ(send("GET", "/v1/budget").status, 200);
    EXPECT_EQ(send("GET", "/v1/budget?campaign=conf").status, 200);
    EXPECT_EQ(send("GET", "/v1/budget?campaign=nope").status, 404);
    EXPECT_EQ(send("GET", "/v1/budget?campaign=").status, 400);
    EXPECT_EQ(send("GET", "/v1/events?type=message&limit=5").status, 200);
    EXPECT_EQ(send("GET", "/v1/events?type=bogus").status, 400);
    EXPECT_EQ(send("GET", "/v1/events?limit=100000").status, 400);

    // The replies inbox: a reply of a lead of `conf` (stored as the intake stores one), answered
    // (202, then the same request: 200), marked not interested, and the refusals.
    const auto reply = env_->scalar(
        "INSERT INTO events (source_id, account_id, kind, lead_id, payload) SELECT 'conf-reply', e.account_id, "
        "'message', e.lead_id, '{\"type\": \"message\", \"message_text\": \"Tell me more\"}' FROM enrollments e "
        "ORDER BY e.enrollment_id LIMIT 1 RETURNING event_id");
    ASSERT_FALSE(reply.empty());
    EXPECT_EQ(send("GET", "/v1/inbox").status, 200);
    EXPECT_EQ(send("GET", "/v1/inbox?campaign=conf&limit=5").status, 200);
    EXPECT_EQ(send("GET", "/v1/inbox?limit=0").status, 400);
    // A filter that names nothing is a 404 (as /v1/budget's), not an empty inbox; an account is
    // named by its id or its label.
    EXPECT_EQ(send("GET", "/v1/inbox?campaign=nope").status, 404);
    EXPECT_EQ(send("GET", "/v1/inbox?campaign=").status, 400);
    EXPECT_EQ(send("GET", "/v1/inbox?account=nope").status, 404);
    EXPECT_EQ(send("GET", "/v1/inbox?account=%E2%80%8Bsender-1").status, 400);  // an invisible character
    {
        const auto receiver = env_->scalar("SELECT account_id FROM events WHERE event_id = " + reply);
        const auto label = env_->scalar("SELECT COALESCE(label, '') FROM accounts WHERE account_id = '" + receiver + "'");
        ASSERT_FALSE(label.empty());
        for (const auto& name : {receiver, label}) {
            auto r = send("GET", "/v1/inbox?account=" + name);
            ASSERT_EQ(r.status, 200) << r.body;
            EXPECT_EQ(json::parse(r.body)["replies"].size(), 1u) << r.body;
        }
        auto unknown = send("GET", "/v1/inbox?acount=" + receiver);
        EXPECT_EQ(unknown.status, 400);
        EXPECT_NE(unknown.body.find("this path takes campaign, account, cursor, limit"), std::string::npos)
            << unknown.body;
    }
    EXPECT_EQ(send("GET", "/v1/inbox/" + reply).status, 200);
    EXPECT_EQ(send("GET", "/v1/inbox/999999").status, 404);
    EXPECT_EQ(send("GET", "/v1/inbox/abc").status, 400);
    EXPECT_EQ(send("GET", "/v1/inbox/" + reply + "?live=maybe").status, 400);
    EXPECT_EQ(send("GET", "/v1/inbox/" + reply + "?live=true").status, 200);
    EXPECT_EQ(send("POST", "/v1/inbox/" + reply + "/reply", R"({"text": "Sure, here it is"})", js).status, 202);
    EXPECT_EQ(send("POST", "/v1/inbox/" + reply + "/reply", R"({"text": "Sure, here it is"})", js).status, 200);
    EXPECT_EQ(send("POST", "/v1/inbox/" + reply + "/reply", R"({"text": ""})", js).status, 422);
    EXPECT_EQ(send("POST", "/v1/inbox/" + reply + "/reply", R"({"text": "x", "extra": 1})", js).status, 422);
    EXPECT_EQ(send("POST", "/v1/inbox/" + reply + "/reply", R"({"text": "x"})", {{"Content-Type", "text/plain"}}).status,
              415);
    EXPECT_EQ(send("POST", "/v1/inbox/999999/reply", R"({"text": "x"})", js).status, 404);
    EXPECT_EQ(send("GET", "/v1/inbox/" + reply + "/reply").status, 405);
    EXPECT_EQ(send("GET", "/v1/manual-replies/" + env_->scalar("SELECT max(reply_id) FROM manual_replies")).status, 200);
    EXPECT_EQ(send("GET", "/v1/manual-replies/999999").status, 404);
    EXPECT_EQ(send("POST", "/v1/inbox/" + reply + "/mark", R"({"mark": "spam"})", js).status, 422);
    EXPECT_EQ(send("POST", "/v1/inbox/" + reply + "/mark", R"({"mark": "not_interested"})", js).status, 200);
    // The CLI's spelling too; marking again changes nothing.
    EXPECT_EQ(send("POST", "/v1/inbox/" + reply + "/mark", R"({"mark": "not-interested"})", js).status, 200);
    EXPECT_EQ(send("POST", "/v1/inbox/" + reply + "/reply", R"({"text": "Another"})", js).status, 409);
    EXPECT_EQ(send("POST", "/v1/inbox/999999/mark", R"({"mark": "not_interested"})", js).status, 404);

    // State changes, then the cancelled campaign's conflicts.
    EXPECT_EQ(send("POST", "/v1/campaigns/conf/pause").status, 200);
    EXPECT_EQ(send("POST", "/v1/campaigns/conf/resume").status, 200);
    EXPECT_EQ(send("POST", "/v1/campaigns/conf/pause", "{}", js).status, 400);
    EXPECT_EQ(send("POST", "/v1/campaigns/conf/cancel").status, 200);
    EXPECT_EQ(send("POST", "/v1/campaigns/conf/resume").status, 409);
    EXPECT_EQ(send("POST", "/v1/campaigns/conf/pause").status, 409);
    EXPECT_EQ(send("POST", "/v1/campaigns", campaign_yaml("conf", 5), yaml).status, 409);
    EXPECT_EQ(send("GET", "/v1/campaigns/conf/cancel").status, 405);
    EXPECT_EQ(send("POST", "/v1/campaigns/nope/pause").status, 404);

    EXPECT_GE(sent_, 75);
    EXPECT_GT(request_violations_, 0) << "Prism reported no request violation for the invalid requests: is it validating?";
    EXPECT_TRUE(serve_->alive());
}

// The control: with a description that asks /healthz for a field the server does not send, the
// same proxy reports the response as off the contract (so the test above would catch a real one).
class AdminConformanceControl : public AdminConformance {
protected:
    std::string spec() override {
        std::ifstream in(std::string(ORCH_SOURCE_DIR) + "/api/openapi.yaml");
        std::stringstream text;
        text << in.rdbuf();
        std::string yaml = text.str();
        const std::string from = "                required: [status]\n";
        const auto at = yaml.find(from);
        EXPECT_NE(at, std::string::npos) << "the /healthz schema moved: update the control";
        if (at != std::string::npos) {
            yaml.replace(at, from.size(), "                required: [status, uptime_seconds]\n");
        }
        path_ = "/tmp/orch-openapi-control-" + std::to_string(::getpid()) + ".yaml";
        std::ofstream(path_) << yaml;
        return path_;
    }
    void TearDown() override { std::remove(path_.c_str()); }
    std::string path_;
};

TEST_F(AdminConformanceControl, AResponseOffTheContractIsReported) {
    expect_response_violations_ = true;
    EXPECT_EQ(send("GET", "/healthz", "", {}, false).status, 200);
    EXPECT_EQ(response_violations_, 1);
}

}  // namespace
