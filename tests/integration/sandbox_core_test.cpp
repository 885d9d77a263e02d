// Conformance of the sandbox's request pipeline: auth, envelope, routing, bad input, accounts,
// login and checkpoint, credits, rate limits and faults. Runs the real binary over HTTP.
#include "tests/support/http_client.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

using namespace orch::test;

namespace {

constexpr const char* key = "test-key";

TEST(SandboxCore, HealthAndUnknownPaths) {
    sandbox_process sb;
    http_client c("127.0.0.1", sb.port());
    EXPECT_EQ(c.get("/healthz").status, 200);
    auto r = c.get("/v2/nothing", key);
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.body_json()["error"]["code"], "NOT_FOUND");
    auto m = c.get("/v2/login", key);
    EXPECT_EQ(m.status, 405);
    EXPECT_EQ(m.header("allow"), "POST");
}

TEST(SandboxCore, MissingAndInvalidKeyAre403) {
    sandbox_process sb;
    http_client c("127.0.0.1", sb.port());
    auto r = c.get("/v2/credits");
    EXPECT_EQ(r.status, 403);
    EXPECT_EQ(r.body_json()["error"]["code"], "INVALID_API_KEY");
    EXPECT_EQ(r.body_json()["metadata"]["credits_consumed"], 0);
    auto bad = c.get("/v2/credits", "nope");
    EXPECT_EQ(bad.status, 403);
    EXPECT_EQ(bad.body_json()["error"]["code"], "INVALID_API_KEY");
}

TEST(SandboxCore, LoginIsIdempotentAndFree) {
    sandbox_process sb({"--api-key", "k:500"});
    http_client c("127.0.0.1", sb.port());
    std::string a1 = login_account(c, "k", "token-1");
    std::string a2 = login_account(c, "k", "token-1");
    std::string a3 = login_account(c, "k", "token-2");
    EXPECT_EQ(a1, a2);
    EXPECT_NE(a1, a3);
    auto credits = c.get("/v2/credits", "k").body_json();
    EXPECT_EQ(credits["data"]["credits"], 500);
    auto list = c.get("/v2/accounts", "k").body_json();
    EXPECT_EQ(list["data"]["total"], 2);
    EXPECT_EQ(list["metadata"]["action"], "list_accounts");
    auto one = c.get("/v2/accounts/" + a1, "k");
    EXPECT_EQ(one.status, 200);
    EXPECT_EQ(one.body_json()["data"]["account_id"], a1);
    EXPECT_EQ(c.get("/v2/accounts/acc_unknown", "k").status, 404);
}

TEST(SandboxCore, LoginValidatesItsBody) {
    sandbox_process sb;
    http_client c("127.0.0.1", sb.port());
    auto no_platform = c.post("/v2/login", json{{"country", "FR"}, {"login_token", "t"}}, key);
    EXPECT_EQ(no_platform.status, 400);
    EXPECT_NE(no_platform.body_json()["error"]["message"].get<std::string>().find("platform"), std::string::npos);
    auto bad_type = c.post("/v2/login", json{{"platform", "network"}, {"country", 7}, {"login_token", "t"}}, key);
    EXPECT_EQ(bad_type.status, 400);
    EXPECT_NE(bad_type.body_json()["error"]["message"].get<std::string>().find("country"), std::string::npos);
    auto malformed = c.request("POST", "/v2/login", "{not json", {{"x-api-key", key}});
    EXPECT_EQ(malformed.status, 400);
    EXPECT_EQ(malformed.body_json()["error"]["code"], "INVALID_PARAMS");
    auto array = c.request("POST", "/v2/login", "[1,2]", {{"x-api-key", key}});
    EXPECT_EQ(array.status, 400);
}

TEST(SandboxCore, CheckpointCompletesAnEmailLogin) {
    sandbox_process sb({"--checkpoint-rate", "1", "--checkpoint-code", "424242"});
    http_client c("127.0.0.1", sb.port());
    auto r = c.post("/v2/login",
                    json{{"platform", "network"}, {"country", "US"}, {"email", "a@b.c"}, {"password", "pw"}}, key);
    ASSERT_EQ(r.status, 200);
    auto j = r.body_json();
    EXPECT_EQ(j["data"]["status"], "checkpoint_required");
    std::string id = j["data"]["account_id"];
    // The account cannot act until the checkpoint is done.
    EXPECT_EQ(c.v2(key, "profiles", id, "get_me").status, 403);
    auto wrong = c.post("/v2/checkpoint", json{{"account_id", id}, {"code", "000000"}}, key);
    EXPECT_EQ(wrong.status, 400);
    auto ok = c.post("/v2/checkpoint", json{{"account_id", id}, {"code", "424242"}}, key);
    ASSERT_EQ(ok.status, 200);
    EXPECT_EQ(ok.body_json()["data"]["status"], "connected");
    EXPECT_EQ(ok.body_json()["metadata"]["credits_consumed"], 1);
    auto wrong_password = c.post(
        "/v2/login", json{{"platform", "network"}, {"country", "US"}, {"email", "a@b.c"}, {"password", "nope"}}, key);
    EXPECT_EQ(wrong_password.status, 400);
}

TEST(SandboxCore, OversizedBodyIs413) {
    sandbox_process sb({"--body-limit-bytes", "2048"});
    http_client c("127.0.0.1", sb.port());
    auto r = c.request("POST", "/v2/login", std::string(4096, 'x'), {{"x-api-key", key}});
    EXPECT_EQ(r.status, 413);
    // The server is still up.
    http_client c2("127.0.0.1", sb.port());
    EXPECT_EQ(c2.get("/healthz").status, 200);
}

TEST(SandboxCore, KeyRateLimitAnswers429WithRetryAfter) {
    sandbox_process sb({"--key-rate-per-s", "2", "--key-burst", "2", "--retry-after-s", "3"});
    http_client c("127.0.0.1", sb.port());
    EXPECT_EQ(c.get("/v2/credits", key).status, 200);
    EXPECT_EQ(c.get("/v2/credits", key).status, 200);
    auto limited = c.get("/v2/credits", key);
    EXPECT_EQ(limited.status, 429);
    EXPECT_EQ(limited.body_json()["error"]["code"], "RATE_LIMITED");
    EXPECT_EQ(limited.header("retry-after"), "3");
}

TEST(SandboxCore, RateLimitWithoutRetryAfterWhenConfiguredOff) {
    sandbox_process sb({"--key-rate-per-s", "1", "--retry-after", "false"});
    http_client c("127.0.0.1", sb.port());
    EXPECT_EQ(c.get("/v2/credits", key).status, 200);
    auto limited = c.get("/v2/credits", key);
    EXPECT_EQ(limited.status, 429);
    EXPECT_EQ(limited.header("retry-after"), "");
}

TEST(SandboxCore, ForcedBurstFromTheControlInterface) {
    sandbox_process sb;
    http_client c("127.0.0.1", sb.port());
    http_client ctl("127.0.0.1", sb.control_port());
    auto b = ctl.post("/control/rate-limit-burst", json{{"key", key}, {"duration_ms", 60000}, {"retry_after_s", 7}});
    ASSERT_EQ(b.status, 200);
    auto r = c.get("/v2/credits", key);
    EXPECT_EQ(r.status, 429);
    EXPECT_EQ(r.header("retry-after"), "7");
    ASSERT_EQ(ctl.post("/control/rate-limit-burst", json{{"key", key}, {"duration_ms", 0}}).status, 200);
    EXPECT_EQ(c.get("/v2/credits", key).status, 200);
    // The request log records both answers.
    auto log = ctl.get("/control/requests").body_json()["requests"];
    ASSERT_GE(log.size(), 2u);
    EXPECT_EQ(log[0]["status"], 429);
    EXPECT_EQ(log[1]["status"], 200);
}

TEST(SandboxCore, BadSettingsStopTheProgramWithEveryProblem) {
    EXPECT_THROW(sandbox_process({"--accept-probability", "2", "--latency-ms-min", "5", "--latency-ms-max", "1"}),
                 std::runtime_error);
    try {
        sandbox_process sb({"--accept-probability", "2", "--latency-ms-min", "5", "--latency-ms-max", "1"});
    } catch (const std::runtime_error& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("accept_probability"), std::string::npos);
        EXPECT_NE(what.find("latency_ms_max"), std::string::npos);
    }
}

TEST(SandboxCore, ControlSettingsChangeAtRunTimeAndRejectBadValues) {
    sandbox_process sb;
    http_client ctl("127.0.0.1", sb.control_port());
    EXPECT_EQ(ctl.post("/control/settings", json{{"accept_probability", 0.25}}).status, 200);
    EXPECT_EQ(ctl.get("/control/settings").body_json()["accept_probability"], "0.25");
    auto bad = ctl.post("/control/settings", json{{"accept_probability", 3}, {"seed", 1}});
    EXPECT_EQ(bad.status, 400);
    EXPECT_EQ(bad.body_json()["errors"].size(), 2u);
    EXPECT_EQ(ctl.get("/control/settings").body_json()["accept_probability"], "0.25");
}

TEST(SandboxCore, DisconnectionMakesTheAccountInactiveUntilReLogin) {
    sandbox_process sb;
    http_client c("127.0.0.1", sb.port());
    http_client ctl("127.0.0.1", sb.control_port());
    std::string id = login_account(c, key, "tok");
    ASSERT_EQ(ctl.post("/control/events", json{{"type", "disconnection"}, {"account_id", id}}).status, 200);
    auto r = c.v2(key, "profiles", id, "get_me");
    EXPECT_EQ(r.status, 403);
    EXPECT_EQ(r.body_json()["error"]["code"], "ACCOUNT_INACTIVE");
    auto acc = c.get("/v2/accounts/" + id, key).body_json();
    EXPECT_EQ(acc["data"]["is_active"], false);
    EXPECT_EQ(login_account(c, key, "tok"), id);
    EXPECT_EQ(c.get("/v2/accounts/" + id, key).body_json()["data"]["is_active"], true);
    auto events = ctl.get("/control/events").body_json()["events"];
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0]["type"], "disconnection");
}

} // namespace
