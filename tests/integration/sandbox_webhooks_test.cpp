// V2 webhooks of the sandbox: management and its validation, monitoring credits, signed
// custom-mode deliveries with retries (to a real loopback receiver), hosted-mode SSE streams
// and polling. Runs the real binary over HTTP; events are triggered through the control
// interface.
#include "engine/outreach/signature.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/sandbox_process.hpp"
#include "tests/support/sse_client.hpp"
#include "tests/support/test_receiver.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <thread>

using namespace orch::test;
using namespace std::chrono_literals;

namespace {

constexpr const char* key = "test-key";

// A sandbox with its API and control clients.
struct sandbox {
    explicit sandbox(std::vector<std::string> args = {})
        : process(std::move(args)), api("127.0.0.1", process.port()), control("127.0.0.1", process.control_port()) {}
    sandbox_process process;
    http_client api;
    http_client control;

    http_result create(const json& body, const std::string& api_key = key) {
        return api.post("/v2/webhooks", body, api_key);
    }
    // Creates a webhook and returns its data (asserting success).
    json create_ok(const json& body) {
        auto r = create(body);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.body_json()["data"];
    }
    http_result call(const std::string& method, const std::string& target, const std::string& body = "",
                     const std::string& api_key = key) {
        return api.request(method, target, body, {{"x-api-key", api_key}});
    }
    // Publishes a disconnection of `account` and returns its event id.
    std::string disconnect(const std::string& account) {
        auto r = control.post("/control/events", json{{"type", "disconnection"}, {"account_id", account}});
        EXPECT_EQ(r.status, 200) << r.body;
        return last_event_id();
    }
    std::string last_event_id() {
        auto events = control.get("/control/events").body_json()["events"];
        return events.empty() ? std::string() : events.back()["event_id"].get<std::string>();
    }
    std::int64_t monitoring_charged(const std::string& api_key = key) {
        json credits = control.get("/control/credits").body_json();
        for (const auto& k : credits["keys"]) {
            if (k["key"] == api_key) {
                return k["charged_by_action"].value("monitoring", 0);
            }
        }
        return -1;
    }
};

std::string error_code(const http_result& r) { return r.body_json()["error"].value("code", ""); }
std::string error_message(const http_result& r) { return r.body_json()["error"].value("message", ""); }

void expect_invalid(const http_result& r, const std::string& field) {
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(error_code(r), "INVALID_PARAMS") << r.body;
    EXPECT_NE(error_message(r).find(field), std::string::npos) << "message should name " << field << ": " << r.body;
    EXPECT_EQ(r.body_json()["metadata"]["credits_consumed"], 0);
}

bool is_hex(const std::string& s, std::size_t n) {
    return s.size() == n && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string stream_target(const std::string& id, const std::string& api_key = key) {
    return "/v2/webhooks/" + id + "/stream?api_key=" + api_key;
}

// ---------------------------------------------------------------------------------------------
// Management

TEST(SandboxWebhooks, CreateValidatesEveryField) {
    sandbox sb({"--api-key", "k1", "--api-key", "k2"});
    std::string a1 = login_account(sb.api, "k1", "tok-1");
    std::string other = login_account(sb.api, "k2", "tok-2");
    auto make = [&](const json& body) { return sb.create(body, "k1"); };

    expect_invalid(sb.api.request("POST", "/v2/webhooks", "", {{"x-api-key", "k1"}}), "body");
    expect_invalid(sb.api.request("POST", "/v2/webhooks", "{nope", {{"x-api-key", "k1"}}), "JSON");
    expect_invalid(sb.api.request("POST", "/v2/webhooks", "[1]", {{"x-api-key", "k1"}}), "object");
    expect_invalid(make(json{{"url", "http://127.0.0.1:9/x"}}), "account_id");
    expect_invalid(make(json{{"account_id", 7}}), "account_id");
    expect_invalid(make(json{{"account_id", a1}, {"url", 5}}), "url");
    expect_invalid(make(json{{"account_id", a1}, {"url", ""}}), "url");
    expect_invalid(make(json{{"account_id", a1}, {"url", "ftp://example.com/x"}}), "url");
    expect_invalid(make(json{{"account_id", a1}, {"url", "/relative/hook"}}), "url");
    expect_invalid(make(json{{"account_id", a1}, {"url", "http://example.com:99999/x"}}), "url");
    expect_invalid(make(json{{"account_id", a1}, {"events", "all"}}), "events");
    expect_invalid(make(json{{"account_id", a1}, {"events", json::array()}}), "events");
    expect_invalid(make(json{{"account_id", a1}, {"events", {"all", "message_sent"}}}), "events[1]");
    expect_invalid(make(json{{"account_id", a1}, {"events", {3}}}), "events[0]");
    expect_invalid(make(json{{"account_id", a1}, {"url", "http://127.0.0.1:9/x"}, {"enable_signature", "yes"}}),
                   "enable_signature");
    // Signing is for custom mode only.
    expect_invalid(make(json{{"account_id", a1}, {"enable_signature", true}}), "enable_signature");

    auto unknown = make(json{{"account_id", "acc_nope"}});
    EXPECT_EQ(unknown.status, 404);
    EXPECT_EQ(error_code(unknown), "INVALID_ACCOUNT");
    auto foreign = make(json{{"account_id", other}});
    EXPECT_EQ(foreign.status, 404);
    EXPECT_EQ(error_code(foreign), "INVALID_ACCOUNT");

    auto no_key = sb.api.post("/v2/webhooks", json{{"account_id", a1}});
    EXPECT_EQ(no_key.status, 403);
    EXPECT_EQ(error_code(no_key), "INVALID_API_KEY");
    auto bad_key = sb.create(json{{"account_id", a1}}, "wrong");
    EXPECT_EQ(bad_key.status, 403);
    EXPECT_EQ(error_code(bad_key), "INVALID_API_KEY");
    EXPECT_EQ(bad_key.body_json()["metadata"]["action"], "create_webhook");

    // Nothing was created by any of these.
    auto list = sb.call("GET", "/v2/webhooks", "", "k1").body_json();
    EXPECT_EQ(list["data"]["items"].size(), 0u);
    EXPECT_EQ(sb.monitoring_charged("k1"), 0);
}

TEST(SandboxWebhooks, RoutingMethodsAndUnknownIds) {
    sandbox sb({"--api-key", "k1", "--api-key", "k2"});
    std::string a1 = login_account(sb.api, "k1", "tok-1");
    std::string a2 = login_account(sb.api, "k2", "tok-2");
    std::string theirs = [&] {
        auto r = sb.create(json{{"account_id", a2}}, "k2");
        return r.body_json()["data"]["webhook_id"].get<std::string>();
    }();
    (void)a1;

    auto wrong = sb.call("PATCH", "/v2/webhooks", "", "k1");
    EXPECT_EQ(wrong.status, 405);
    EXPECT_EQ(wrong.header("allow"), "GET, POST");
    auto wrong_item = sb.call("POST", "/v2/webhooks/" + theirs, "", "k1");
    EXPECT_EQ(wrong_item.status, 405);
    EXPECT_EQ(wrong_item.header("allow"), "GET, PUT, DELETE");
    EXPECT_EQ(sb.call("GET", "/v2/webhooks/" + theirs + "/start", "", "k1").header("allow"), "POST");
    EXPECT_EQ(sb.call("GET", "/v2/webhooks/" + theirs + "/secret", "", "k1").header("allow"), "DELETE");
    EXPECT_EQ(sb.call("POST", "/v2/webhooks/" + theirs + "/events", "", "k1").header("allow"), "GET");

    auto nothing = sb.call("GET", "/v2/webhooks/" + theirs + "/nothing", "", "k1");
    EXPECT_EQ(nothing.status, 404);
    EXPECT_EQ(error_code(nothing), "NOT_FOUND");

    // Another key's webhook is invisible: NOT_FOUND everywhere, and it stays untouched.
    for (auto [method, suffix] : std::vector<std::pair<std::string, std::string>>{{"GET", ""},
                                                                                  {"PUT", ""},
                                                                                  {"DELETE", ""},
                                                                                  {"POST", "/start"},
                                                                                  {"POST", "/stop"},
                                                                                  {"POST", "/rotate-secret"},
                                                                                  {"DELETE", "/secret"},
                                                                                  {"GET", "/events"}}) {
        auto r = sb.call(method, "/v2/webhooks/" + theirs + suffix, method == "PUT" ? "{}" : "", "k1");
        EXPECT_EQ(r.status, 404) << method << " " << suffix << ": " << r.body;
        EXPECT_EQ(error_code(r), "NOT_FOUND") << method << " " << suffix;
    }
    auto unknown = sb.call("GET", "/v2/webhooks/wh_0000000000000000", "", "k1");
    EXPECT_EQ(unknown.status, 404);
    EXPECT_EQ(error_code(unknown), "NOT_FOUND");
    auto still = sb.call("GET", "/v2/webhooks/" + theirs, "", "k2");
    EXPECT_EQ(still.status, 200);
    EXPECT_EQ(still.body_json()["data"]["is_active"], true);
    auto no_key = sb.api.get("/v2/webhooks/" + theirs);
    EXPECT_EQ(no_key.status, 403);
    EXPECT_EQ(error_code(no_key), "INVALID_API_KEY");
}

TEST(SandboxWebhooks, CreateShapesAndSecretShownOnce) {
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    auto custom =
        sb.create(json{{"account_id", account}, {"url", "http://127.0.0.1:9/hook"}, {"enable_signature", true}});
    ASSERT_EQ(custom.status, 200) << custom.body;
    auto cj = custom.body_json();
    EXPECT_EQ(cj["metadata"]["action"], "create_webhook");
    EXPECT_EQ(cj["metadata"]["credits_consumed"], 0);
    EXPECT_EQ(cj["metadata"]["account_id"], account);
    auto c = cj["data"];
    std::string custom_id = c["webhook_id"];
    EXPECT_TRUE(custom_id.starts_with("wh_"));
    EXPECT_EQ(c["account_id"], account);
    EXPECT_EQ(c["mode"], "custom");
    EXPECT_EQ(c["url"], "http://127.0.0.1:9/hook");
    EXPECT_EQ(c["events"], json({"all"}));
    EXPECT_EQ(c["is_active"], true);
    EXPECT_EQ(c["signature_enabled"], true);
    EXPECT_TRUE(is_hex(c.value("secret", ""), 64)) << c;
    EXPECT_EQ(c["signature_scheme"], "v1=hmac-sha256(<timestamp>.<raw_body>)");
    EXPECT_TRUE(c.contains("created_at"));

    auto h = sb.create_ok(json{{"account_id", account}, {"events", {"accepted_invitation", "accepted_invitation"}}});
    std::string hosted_id = h["webhook_id"];
    EXPECT_EQ(h["mode"], "hosted");
    EXPECT_FALSE(h.contains("url"));
    EXPECT_FALSE(h.contains("secret"));
    EXPECT_EQ(h["signature_enabled"], false);
    EXPECT_EQ(h["events"], json({"accepted_invitation"})); // duplicates removed
    EXPECT_NE(h["stream_url"].get<std::string>().find("/v2/webhooks/" + hosted_id + "/stream?api_key="),
              std::string::npos);
    EXPECT_TRUE(h["events_url"].get<std::string>().ends_with("/v2/webhooks/" + hosted_id + "/events"));

    // List and get never carry the secret.
    auto list = sb.call("GET", "/v2/webhooks");
    ASSERT_EQ(list.status, 200);
    EXPECT_EQ(list.body.find(c["secret"].get<std::string>()), std::string::npos);
    EXPECT_EQ(list.body_json()["metadata"]["action"], "list_webhooks");
    auto items = list.body_json()["data"]["items"];
    ASSERT_EQ(items.size(), 2u);
    for (const auto& item : items) {
        EXPECT_FALSE(item.contains("secret"));
        for (const char* f : {"webhook_id", "account_id", "mode", "events", "is_active", "signature_enabled",
                              "created_at", "updated_at"}) {
            EXPECT_TRUE(item.contains(f)) << f;
        }
    }
    auto one = sb.call("GET", "/v2/webhooks/" + custom_id);
    ASSERT_EQ(one.status, 200);
    EXPECT_EQ(one.body.find(c["secret"].get<std::string>()), std::string::npos);
    EXPECT_EQ(one.body_json()["data"]["signature_enabled"], true);
    EXPECT_EQ(one.body_json()["metadata"]["action"], "get_webhook");

    // The account filter of the list.
    std::string other = login_account(sb.api, key, "tok-2");
    EXPECT_EQ(sb.call("GET", "/v2/webhooks?account_id=" + other).body_json()["data"]["items"].size(), 0u);
    EXPECT_EQ(sb.call("GET", "/v2/webhooks?account_id=" + account).body_json()["data"]["items"].size(), 2u);
    EXPECT_EQ(error_code(sb.call("GET", "/v2/webhooks?account_id=acc_nope")), "INVALID_ACCOUNT");
}

TEST(SandboxWebhooks, UpdateDeleteStartStop) {
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    auto w = sb.create_ok(json{{"account_id", account}, {"url", "http://127.0.0.1:9/a"}, {"enable_signature", true}});
    std::string id = w["webhook_id"];
    std::string path = "/v2/webhooks/" + id;

    // Validation errors change nothing.
    expect_invalid(sb.call("PUT", path, ""), "body");
    expect_invalid(sb.call("PUT", path, json{{"events", {"nope"}}}.dump()), "events[0]");
    expect_invalid(sb.call("PUT", path, json{{"url", "mailto:x@y.z"}}.dump()), "url");
    expect_invalid(sb.call("PUT", path, json{{"is_active", 1}}.dump()), "is_active");
    expect_invalid(sb.call("PUT", path, json{{"enable_signature", true}}.dump()), "enable_signature");
    expect_invalid(sb.call("PUT", path, json{{"url", "http://127.0.0.1:9/b"}, {"events", json::array()}}.dump()),
                   "events");
    auto unchanged = sb.call("GET", path).body_json()["data"];
    EXPECT_EQ(unchanged["url"], "http://127.0.0.1:9/a");
    EXPECT_EQ(unchanged["events"], json({"all"}));

    auto upd = sb.call("PUT", path, json{{"url", "http://127.0.0.1:9/b"}, {"events", {"message_received"}}}.dump());
    ASSERT_EQ(upd.status, 200) << upd.body;
    EXPECT_EQ(upd.body_json()["metadata"]["action"], "update_webhook");
    EXPECT_EQ(upd.body_json()["data"]["url"], "http://127.0.0.1:9/b");
    EXPECT_EQ(upd.body_json()["data"]["events"], json({"message_received"}));
    EXPECT_EQ(upd.body_json()["data"]["signature_enabled"], true); // the secret survives a URL change

    auto stop = sb.call("POST", path + "/stop");
    ASSERT_EQ(stop.status, 200);
    EXPECT_EQ(stop.body_json()["data"], json({{"webhook_id", id}, {"account_id", account}, {"monitoring", false}}));
    EXPECT_EQ(stop.body_json()["metadata"]["action"], "stop_webhook");
    EXPECT_EQ(stop.body_json()["metadata"]["credits_consumed"], 0);
    EXPECT_EQ(sb.call("GET", path).body_json()["data"]["is_active"], false);
    auto start = sb.call("POST", path + "/start");
    ASSERT_EQ(start.status, 200);
    EXPECT_EQ(start.body_json()["data"], json({{"webhook_id", id}, {"account_id", account}, {"monitoring", true}}));
    EXPECT_EQ(start.body_json()["metadata"]["action"], "start_webhook");
    EXPECT_EQ(sb.call("GET", path).body_json()["data"]["is_active"], true);
    auto off = sb.call("PUT", path, json{{"is_active", false}}.dump());
    EXPECT_EQ(off.body_json()["data"]["is_active"], false);

    // Starting needs a connected account.
    sb.disconnect(account);
    auto inactive = sb.call("POST", path + "/start");
    EXPECT_EQ(inactive.status, 403);
    EXPECT_EQ(error_code(inactive), "ACCOUNT_INACTIVE");
    EXPECT_EQ(error_code(sb.call("PUT", path, json{{"is_active", true}}.dump())), "ACCOUNT_INACTIVE");
    login_account(sb.api, key, "tok-1");
    EXPECT_EQ(sb.call("PUT", path, json{{"is_active", true}}.dump()).body_json()["data"]["is_active"], true);

    // Switching to hosted mode drops the secret; back to custom it stays unsigned.
    auto hosted = sb.call("PUT", path, json{{"url", nullptr}}.dump()).body_json()["data"];
    EXPECT_EQ(hosted["mode"], "hosted");
    EXPECT_EQ(hosted["signature_enabled"], false);
    EXPECT_TRUE(hosted.contains("stream_url"));
    auto custom = sb.call("PUT", path, json{{"url", "http://127.0.0.1:9/c"}}.dump()).body_json()["data"];
    EXPECT_EQ(custom["mode"], "custom");
    EXPECT_EQ(custom["signature_enabled"], false);

    auto del = sb.call("DELETE", path);
    ASSERT_EQ(del.status, 200);
    EXPECT_EQ(del.body_json()["data"], json({{"webhook_id", id}, {"deleted", true}}));
    EXPECT_EQ(del.body_json()["metadata"]["action"], "delete_webhook");
    EXPECT_EQ(error_code(sb.call("GET", path)), "NOT_FOUND");
    EXPECT_EQ(error_code(sb.call("DELETE", path)), "NOT_FOUND");
}

TEST(SandboxWebhooks, SecretRotationAndRemovalRules) {
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    std::string custom = sb.create_ok(json{{"account_id", account}, {"url", "http://127.0.0.1:9/a"}})["webhook_id"];
    std::string hosted = sb.create_ok(json{{"account_id", account}})["webhook_id"];
    EXPECT_EQ(sb.call("GET", "/v2/webhooks/" + custom).body_json()["data"]["signature_enabled"], false);

    auto rotated = sb.call("POST", "/v2/webhooks/" + custom + "/rotate-secret");
    ASSERT_EQ(rotated.status, 200);
    auto rj = rotated.body_json();
    EXPECT_EQ(rj["success"], true);
    EXPECT_EQ(rj["data"]["webhook_id"], custom);
    EXPECT_TRUE(is_hex(rj["data"].value("secret", ""), 64));
    EXPECT_EQ(rj["data"]["signature_scheme"], "v1=hmac-sha256(<timestamp>.<raw_body>)");
    EXPECT_EQ(sb.call("GET", "/v2/webhooks/" + custom).body_json()["data"]["signature_enabled"], true);
    auto again = sb.call("POST", "/v2/webhooks/" + custom + "/rotate-secret").body_json();
    EXPECT_NE(again["data"]["secret"], rj["data"]["secret"]);

    auto removed = sb.call("DELETE", "/v2/webhooks/" + custom + "/secret");
    ASSERT_EQ(removed.status, 200);
    EXPECT_EQ(removed.body_json()["data"]["signature_enabled"], false);
    EXPECT_EQ(sb.call("GET", "/v2/webhooks/" + custom).body_json()["data"]["signature_enabled"], false);

    expect_invalid(sb.call("POST", "/v2/webhooks/" + hosted + "/rotate-secret"), "hosted");
    expect_invalid(sb.call("DELETE", "/v2/webhooks/" + hosted + "/secret"), "hosted");
}

TEST(SandboxWebhooks, MonitoringIsChargedOncePerAccountAndDay) {
    sandbox sb({"--api-key", "k:25"});
    std::string a = login_account(sb.api, "k", "tok-a");
    std::string b = login_account(sb.api, "k", "tok-b");
    std::string c = login_account(sb.api, "k", "tok-c");
    ASSERT_EQ(sb.create(json{{"account_id", a}}, "k").status, 200);
    ASSERT_EQ(sb.create(json{{"account_id", a}, {"url", "http://127.0.0.1:9/x"}}, "k").status, 200);
    EXPECT_EQ(sb.monitoring_charged("k"), 10);
    ASSERT_EQ(sb.create(json{{"account_id", b}}, "k").status, 200);
    EXPECT_EQ(sb.monitoring_charged("k"), 20);
    EXPECT_EQ(sb.api.get("/v2/credits", "k").body_json()["data"]["credits"], 5);

    // A third account cannot pay its day: nothing is created, nothing charged.
    auto poor = sb.create(json{{"account_id", c}}, "k");
    EXPECT_EQ(poor.status, 402);
    EXPECT_EQ(error_code(poor), "INSUFFICIENT_CREDITS");
    EXPECT_EQ(poor.body_json()["metadata"]["credits_consumed"], 0);
    EXPECT_EQ(sb.call("GET", "/v2/webhooks", "", "k").body_json()["data"]["items"].size(), 3u);
    EXPECT_EQ(sb.monitoring_charged("k"), 20);

    // Stop and start within the day do not charge again.
    std::string wa =
        sb.call("GET", "/v2/webhooks?account_id=" + a, "", "k").body_json()["data"]["items"][0]["webhook_id"];
    ASSERT_EQ(sb.call("POST", "/v2/webhooks/" + wa + "/stop", "", "k").status, 200);
    ASSERT_EQ(sb.call("POST", "/v2/webhooks/" + wa + "/start", "", "k").status, 200);
    EXPECT_EQ(sb.monitoring_charged("k"), 20);
}

TEST(SandboxWebhooks, CreateRefusedWhenMonitoringCannotBePaid) {
    sandbox sb({"--api-key", "k:5"});
    std::string a = login_account(sb.api, "k", "tok-a");
    auto r = sb.create(json{{"account_id", a}}, "k");
    EXPECT_EQ(r.status, 402);
    EXPECT_EQ(error_code(r), "INSUFFICIENT_CREDITS");
    EXPECT_NE(error_message(r).find("required 10"), std::string::npos) << r.body;
    EXPECT_EQ(sb.call("GET", "/v2/webhooks", "", "k").body_json()["data"]["items"].size(), 0u);
    EXPECT_EQ(sb.monitoring_charged("k"), 0);
}

// ---------------------------------------------------------------------------------------------
// Custom-mode delivery

TEST(SandboxWebhooks, SignedDeliveryRotationAndUnsigned) {
    test_receiver receiver;
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    auto w =
        sb.create_ok(json{{"account_id", account}, {"url", receiver.url("/hooks/in?x=1")}, {"enable_signature", true}});
    std::string id = w["webhook_id"];
    std::string secret = w["secret"];

    std::string event_id = sb.disconnect(account);
    ASSERT_TRUE(receiver.wait_for(1, 3s));
    auto first = receiver.requests()[0];
    EXPECT_EQ(first.method, "POST");
    EXPECT_EQ(first.target, "/hooks/in?x=1");
    EXPECT_EQ(first.header("content-type"), "application/json");
    EXPECT_EQ(first.header("x-service-event-id"), event_id);
    EXPECT_EQ(first.header("x-service-delivery-attempt"), "1");
    auto now = std::chrono::system_clock::now();
    EXPECT_EQ(orch::outreach::verify_webhook(secret, first.header("x-service-timestamp"),
                                             first.header("x-service-signature"), first.body, now),
              orch::outreach::signature_check::valid);
    EXPECT_TRUE(first.header("x-service-signature").starts_with("v1="));
    auto body = json::parse(first.body);
    EXPECT_EQ(body["event_id"], event_id);
    EXPECT_EQ(body["account_id"], account);
    EXPECT_TRUE(body.contains("account_name"));
    EXPECT_TRUE(body.contains("timestamp"));
    EXPECT_EQ(body["event"]["type"], "disconnection");
    // A changed byte breaks the signature: it covers the raw body.
    EXPECT_EQ(orch::outreach::verify_webhook(secret, first.header("x-service-timestamp"),
                                             first.header("x-service-signature"), first.body + " ", now),
              orch::outreach::signature_check::mismatch);

    // After rotation the old secret no longer verifies, the new one does.
    std::string fresh = sb.call("POST", "/v2/webhooks/" + id + "/rotate-secret").body_json()["data"]["secret"];
    sb.disconnect(account);
    ASSERT_TRUE(receiver.wait_for(2, 3s));
    auto second = receiver.requests()[1];
    now = std::chrono::system_clock::now();
    EXPECT_EQ(orch::outreach::verify_webhook(secret, second.header("x-service-timestamp"),
                                             second.header("x-service-signature"), second.body, now),
              orch::outreach::signature_check::mismatch);
    EXPECT_EQ(orch::outreach::verify_webhook(fresh, second.header("x-service-timestamp"),
                                             second.header("x-service-signature"), second.body, now),
              orch::outreach::signature_check::valid);

    // Without a secret, deliveries carry no signature headers.
    ASSERT_EQ(sb.call("DELETE", "/v2/webhooks/" + id + "/secret").status, 200);
    std::string third_id = sb.disconnect(account);
    ASSERT_TRUE(receiver.wait_for(3, 3s));
    auto third = receiver.requests()[2];
    EXPECT_FALSE(third.has_header("x-service-signature"));
    EXPECT_FALSE(third.has_header("x-service-timestamp"));
    EXPECT_EQ(third.header("x-service-event-id"), third_id);
}

TEST(SandboxWebhooks, RetriesUntilAcknowledged) {
    test_receiver receiver({500, 500, 200});
    sandbox sb({"--webhook-retry-base-ms", "20"});
    std::string account = login_account(sb.api, key, "tok-1");
    auto w = sb.create_ok(json{{"account_id", account}, {"url", receiver.url()}, {"enable_signature", true}});
    std::string event_id = sb.disconnect(account);
    ASSERT_TRUE(receiver.wait_for(3, 3s));
    std::this_thread::sleep_for(300ms); // no fourth attempt after the 200
    auto got = receiver.requests();
    ASSERT_EQ(got.size(), 3u);
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].header("x-service-event-id"), event_id);
        EXPECT_EQ(got[i].header("x-service-delivery-attempt"), std::to_string(i + 1));
        EXPECT_EQ(json::parse(got[i].body)["event_id"], event_id);
        EXPECT_EQ(got[i].body, got[0].body); // the same raw body, signed afresh
        EXPECT_EQ(orch::outreach::verify_webhook(w["secret"].get<std::string>(), got[i].header("x-service-timestamp"),
                                                 got[i].header("x-service-signature"), got[i].body,
                                                 std::chrono::system_clock::now()),
                  orch::outreach::signature_check::valid);
    }
    // Exponential backoff: about 20 ms, then about 40 ms.
    EXPECT_GE(got[1].at - got[0].at, 18ms);
    EXPECT_GE(got[2].at - got[1].at, 38ms);
}

TEST(SandboxWebhooks, GivesUpAfterMaxAttempts) {
    test_receiver receiver({500});
    sandbox sb({"--webhook-max-attempts", "3", "--webhook-retry-base-ms", "10"});
    std::string account = login_account(sb.api, key, "tok-1");
    sb.create_ok(json{{"account_id", account}, {"url", receiver.url()}});
    std::string event_id = sb.disconnect(account);
    ASSERT_TRUE(receiver.wait_for(3, 3s));
    std::this_thread::sleep_for(400ms);
    auto got = receiver.requests();
    EXPECT_EQ(got.size(), 3u);
    for (const auto& r : got) {
        EXPECT_EQ(r.header("x-service-event-id"), event_id);
    }
    EXPECT_TRUE(sb.process.alive());
}

TEST(SandboxWebhooks, SlowReceiverTimesOutAndIsRetried) {
    test_receiver receiver({200});
    receiver.set_delay(400ms);
    sandbox sb({"--webhook-timeout-ms", "100", "--webhook-max-attempts", "2", "--webhook-retry-base-ms", "10"});
    std::string account = login_account(sb.api, key, "tok-1");
    sb.create_ok(json{{"account_id", account}, {"url", receiver.url()}});
    sb.disconnect(account);
    ASSERT_TRUE(receiver.wait_for(2, 3s));
    auto got = receiver.requests();
    EXPECT_EQ(got[1].header("x-service-delivery-attempt"), "2");
    EXPECT_LT(got[1].at - got[0].at, 350ms); // the first attempt was cut at its deadline
    std::this_thread::sleep_for(600ms);
    EXPECT_EQ(receiver.count(), 2u);
}

TEST(SandboxWebhooks, DeliveriesKeepOrderAcrossRetries) {
    test_receiver receiver({500, 200});
    sandbox sb({"--webhook-retry-base-ms", "30"});
    std::string account = login_account(sb.api, key, "tok-1");
    sb.create_ok(json{{"account_id", account}, {"url", receiver.url()}});
    // A webhook whose receiver refuses connections does not disturb the other one.
    sb.create_ok(json{{"account_id", account}, {"url", "http://127.0.0.1:1/closed"}});
    std::vector<std::string> ids;
    for (int i = 0; i < 4; ++i) {
        ids.push_back(sb.disconnect(account));
    }
    ASSERT_TRUE(receiver.wait_for(5, 3s));
    auto got = receiver.requests();
    ASSERT_EQ(got.size(), 5u);
    // The first event is retried before the second is sent.
    EXPECT_EQ(got[0].header("x-service-event-id"), ids[0]);
    EXPECT_EQ(got[1].header("x-service-event-id"), ids[0]);
    for (std::size_t i = 1; i < ids.size(); ++i) {
        EXPECT_EQ(got[i + 1].header("x-service-event-id"), ids[i]);
        EXPECT_EQ(got[i + 1].header("x-service-delivery-attempt"), "1");
    }
}

TEST(SandboxWebhooks, StoppedOrDeletedWebhooksReceiveNothing) {
    test_receiver live;
    test_receiver stopped;
    test_receiver deleted({500});
    sandbox sb({"--webhook-retry-base-ms", "150", "--webhook-max-attempts", "5"});
    std::string account = login_account(sb.api, key, "tok-1");
    sb.create_ok(json{{"account_id", account}, {"url", live.url()}});
    std::string s = sb.create_ok(json{{"account_id", account}, {"url", stopped.url()}})["webhook_id"];
    std::string d = sb.create_ok(json{{"account_id", account}, {"url", deleted.url()}})["webhook_id"];
    ASSERT_EQ(sb.call("POST", "/v2/webhooks/" + s + "/stop").status, 200);

    sb.disconnect(account);
    ASSERT_TRUE(live.wait_for(1, 3s));
    ASSERT_TRUE(deleted.wait_for(1, 3s));
    // Deleting a webhook stops its pending retries.
    ASSERT_EQ(sb.call("DELETE", "/v2/webhooks/" + d).status, 200);
    std::this_thread::sleep_for(700ms);
    EXPECT_EQ(stopped.count(), 0u);
    EXPECT_EQ(deleted.count(), 1u);

    // Started again, it receives the next event.
    login_account(sb.api, key, "tok-1");
    ASSERT_EQ(sb.call("POST", "/v2/webhooks/" + s + "/start").status, 200);
    std::string next = sb.disconnect(account);
    ASSERT_TRUE(stopped.wait_for(1, 3s));
    EXPECT_EQ(stopped.requests()[0].header("x-service-event-id"), next);
}

TEST(SandboxWebhooks, HttpsTargetsAreAcceptedButNotDelivered) {
    test_receiver plain;
    test_receiver tls_port;
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    // The sandbox has no TLS client: https webhooks are valid but their events are dropped.
    std::string https_url = "https://127.0.0.1:" + std::to_string(tls_port.port()) + "/hook";
    auto w = sb.create_ok(json{{"account_id", account}, {"url", https_url}});
    EXPECT_EQ(w["url"], https_url);
    sb.create_ok(json{{"account_id", account}, {"url", plain.url()}});
    sb.disconnect(account);
    ASSERT_TRUE(plain.wait_for(1, 3s));
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(tls_port.count(), 0u);
}

TEST(SandboxWebhooks, FiltersStillReceiveDisconnections) {
    test_receiver invitations;
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    sb.create_ok(json{{"account_id", account}, {"url", invitations.url()}, {"events", {"accepted_invitation"}}});
    std::string id = sb.disconnect(account);
    ASSERT_TRUE(invitations.wait_for(1, 3s));
    EXPECT_EQ(json::parse(invitations.requests()[0].body)["event"]["type"], "disconnection");
    EXPECT_EQ(invitations.requests()[0].header("x-service-event-id"), id);
}

TEST(SandboxWebhooks, FiltersSelectAcceptedInvitations) {
    test_receiver invitations;
    test_receiver messages;
    sandbox sb({"--accept-probability", "0"});
    std::string account = login_account(sb.api, key, "tok-1");
    sb.create_ok(json{{"account_id", account}, {"url", invitations.url()}, {"events", {"accepted_invitation"}}});
    sb.create_ok(json{{"account_id", account}, {"url", messages.url()}, {"events", {"message_received"}}});
    // Invite someone not yet related to the account, then make them accept.
    auto people = sb.control.get("/control/people?limit=60").body_json()["people"];
    std::string invited;
    for (const auto& p : people) {
        if (sb.api.v2(key, "network", account, "invite", json{{"profile_url", p["profile_url"]}}).status == 200) {
            invited = p["profile_url"];
            break;
        }
    }
    ASSERT_FALSE(invited.empty());
    auto accepted = sb.control.post(
        "/control/events", json{{"type", "accepted_invitation"}, {"account_id", account}, {"profile_url", invited}});
    ASSERT_EQ(accepted.status, 200) << accepted.body;
    ASSERT_TRUE(invitations.wait_for(1, 3s));
    EXPECT_EQ(json::parse(invitations.requests()[0].body)["event"]["type"], "accepted_invitation");
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(messages.count(), 0u);
}

// ---------------------------------------------------------------------------------------------
// Hosted mode: SSE stream

TEST(SandboxWebhooks, StreamAuthAndModeErrors) {
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    std::string hosted = sb.create_ok(json{{"account_id", account}})["webhook_id"];
    std::string custom = sb.create_ok(json{{"account_id", account}, {"url", "http://127.0.0.1:9/x"}})["webhook_id"];

    sse_client missing(sb.process.port(), "/v2/webhooks/" + hosted + "/stream", {{"x-api-key", key}});
    EXPECT_EQ(missing.status(), 403); // headers are not used for streams
    EXPECT_NE(missing.body().find("INVALID_API_KEY"), std::string::npos);
    sse_client wrong(sb.process.port(), stream_target(hosted, "nope"));
    EXPECT_EQ(wrong.status(), 403);
    sse_client mode(sb.process.port(), stream_target(custom));
    EXPECT_EQ(mode.status(), 400);
    EXPECT_NE(mode.body().find("INVALID_PARAMS"), std::string::npos);
    sse_client unknown(sb.process.port(), stream_target("wh_0000000000000000"));
    EXPECT_EQ(unknown.status(), 404);
    sse_client bad_cursor(sb.process.port(), stream_target(hosted), {{"Last-Event-ID", "xyz"}});
    EXPECT_EQ(bad_cursor.status(), 400);
    EXPECT_NE(bad_cursor.body().find("Last-Event-ID"), std::string::npos);
}

TEST(SandboxWebhooks, StreamDeliversEventsToEveryClient) {
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    std::string id = sb.create_ok(json{{"account_id", account}})["webhook_id"];
    sse_client one(sb.process.port(), stream_target(id));
    sse_client two(sb.process.port(), stream_target(id));
    ASSERT_EQ(one.status(), 200) << one.header_text();
    EXPECT_NE(one.header_text().find("text/event-stream"), std::string::npos);
    EXPECT_NE(one.header_text().find("no-cache"), std::string::npos);
    for (auto* c : {&one, &two}) {
        auto hello = c->next_event();
        ASSERT_TRUE(hello);
        EXPECT_EQ(hello->event, "connected");
        auto data = json::parse(hello->data);
        EXPECT_EQ(data["webhook_id"], id);
        EXPECT_EQ(data["account_id"], account);
    }
    std::string event_id = sb.disconnect(account);
    for (auto* c : {&one, &two}) {
        auto m = c->next_event();
        ASSERT_TRUE(m);
        EXPECT_EQ(m->event, "webhook");
        EXPECT_EQ(m->id, event_id);
        auto data = json::parse(m->data);
        EXPECT_EQ(data["account_id"], account);
        EXPECT_EQ(data["event"]["type"], "disconnection");
    }
    // Deleting the webhook ends its streams.
    ASSERT_EQ(sb.call("DELETE", "/v2/webhooks/" + id).status, 200);
    EXPECT_TRUE(one.closed_by_server());
    EXPECT_TRUE(two.closed_by_server());

    // So does turning a hosted webhook into a custom one.
    login_account(sb.api, key, "tok-1"); // reconnect after the disconnection above
    std::string other = sb.create_ok(json{{"account_id", account}})["webhook_id"];
    sse_client three(sb.process.port(), stream_target(other));
    ASSERT_EQ(three.next_event()->event, "connected");
    auto put = sb.call("PUT", "/v2/webhooks/" + other, json{{"url", "http://127.0.0.1:9/x"}}.dump());
    ASSERT_EQ(put.status, 200) << put.body;
    EXPECT_EQ(put.body_json()["data"]["mode"], "custom");
    EXPECT_TRUE(three.closed_by_server());
}

TEST(SandboxWebhooks, StreamKeepaliveAndStoppedWebhook) {
    sandbox sb({"--sse-keepalive-ms", "50"});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string id = sb.create_ok(json{{"account_id", account}})["webhook_id"];
    sse_client c(sb.process.port(), stream_target(id));
    ASSERT_EQ(c.next_event()->event, "connected");
    auto ka = c.next(1s);
    ASSERT_TRUE(ka);
    EXPECT_EQ(ka->comment, "keepalive");
    EXPECT_TRUE(ka->event.empty());

    // A stopped webhook sends no events, but keepalives go on.
    ASSERT_EQ(sb.call("POST", "/v2/webhooks/" + id + "/stop").status, 200);
    sb.disconnect(account);
    auto end = std::chrono::steady_clock::now() + 400ms;
    int keepalives = 0;
    while (std::chrono::steady_clock::now() < end) {
        auto m = c.next(200ms);
        ASSERT_TRUE(m);
        EXPECT_TRUE(m->event.empty()) << "unexpected event " << m->event << " " << m->data;
        keepalives += m->comment == "keepalive" ? 1 : 0;
    }
    EXPECT_GE(keepalives, 2);
}

TEST(SandboxWebhooks, StreamResumesWithLastEventId) {
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    std::string before = sb.disconnect(account); // before the webhook exists: never replayed
    login_account(sb.api, key, "tok-1");
    std::string id = sb.create_ok(json{{"account_id", account}})["webhook_id"];
    std::string e1;
    {
        sse_client c(sb.process.port(), stream_target(id));
        ASSERT_EQ(c.next_event()->event, "connected");
        e1 = sb.disconnect(account);
        auto m = c.next_event();
        ASSERT_TRUE(m);
        EXPECT_EQ(m->id, e1);
    }
    std::string e2 = sb.disconnect(account);
    std::string e3 = sb.disconnect(account);

    sse_client again(sb.process.port(), stream_target(id), {{"Last-Event-ID", e1}});
    ASSERT_EQ(again.next_event()->event, "connected");
    auto r2 = again.next_event();
    auto r3 = again.next_event();
    ASSERT_TRUE(r2 && r3);
    EXPECT_EQ(r2->id, e2);
    EXPECT_EQ(r3->id, e3);
    std::string e4 = sb.disconnect(account);
    auto r4 = again.next_event();
    ASSERT_TRUE(r4);
    EXPECT_EQ(r4->id, e4); // then live, nothing replayed twice

    // The query-parameter form, from before every event: all four, not the earlier one.
    sse_client all(sb.process.port(), stream_target(id) + "&last_event_id=" + before);
    ASSERT_EQ(all.next_event()->event, "connected");
    for (const auto& expected : {e1, e2, e3, e4}) {
        auto m = all.next_event();
        ASSERT_TRUE(m);
        EXPECT_EQ(m->id, expected);
    }
    EXPECT_FALSE(all.next_event(200ms));
}

// ---------------------------------------------------------------------------------------------
// Hosted mode: polling

TEST(SandboxWebhooks, PollingWithSinceAfterAndLimit) {
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    std::string other = login_account(sb.api, key, "tok-2");
    sb.disconnect(account); // before the webhook: not listed
    login_account(sb.api, key, "tok-1");
    std::string id = sb.create_ok(json{{"account_id", account}})["webhook_id"];
    std::string custom = sb.create_ok(json{{"account_id", account}, {"url", "http://127.0.0.1:9/x"}})["webhook_id"];
    std::vector<std::string> ids;
    for (int i = 0; i < 3; ++i) {
        ids.push_back(sb.disconnect(account));
        std::this_thread::sleep_for(5ms);
    }
    sb.disconnect(other); // another account: not listed
    std::string events = "/v2/webhooks/" + id + "/events";

    auto all = sb.call("GET", events);
    ASSERT_EQ(all.status, 200) << all.body;
    auto aj = all.body_json();
    EXPECT_EQ(aj["metadata"]["action"], "poll_webhook_events");
    EXPECT_EQ(aj["metadata"]["credits_consumed"], 0);
    auto items = aj["data"]["items"];
    ASSERT_EQ(items.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(items[i]["event_id"], ids[i]);
        EXPECT_EQ(items[i]["event"]["event"]["type"], "disconnection");
        EXPECT_EQ(items[i]["event"]["account_id"], account);
        std::string created = items[i]["created_at"];
        EXPECT_EQ(created.size(), 24u) << created; // 2026-01-01T00:00:00.000Z
        EXPECT_EQ(created.back(), 'Z');
    }
    EXPECT_EQ(aj["data"]["has_more"], false);
    EXPECT_EQ(aj["data"]["next_after"], ids[2]);

    auto page = sb.call("GET", events + "?limit=2").body_json()["data"];
    ASSERT_EQ(page["items"].size(), 2u);
    EXPECT_EQ(page["has_more"], true);
    EXPECT_EQ(page["next_after"], ids[1]);
    auto rest = sb.call("GET", events + "?limit=2&after=" + ids[1]).body_json()["data"];
    ASSERT_EQ(rest["items"].size(), 1u);
    EXPECT_EQ(rest["items"][0]["event_id"], ids[2]);
    EXPECT_EQ(rest["has_more"], false);
    auto none = sb.call("GET", events + "?after=" + ids[2]).body_json()["data"];
    EXPECT_EQ(none["items"].size(), 0u);
    EXPECT_TRUE(none["next_after"].is_null());

    std::string since = items[0]["created_at"];
    auto after_since = sb.call("GET", events + "?since=" + since).body_json()["data"]["items"];
    ASSERT_EQ(after_since.size(), 2u); // strictly after
    EXPECT_EQ(after_since[0]["event_id"], ids[1]);
    EXPECT_EQ(sb.call("GET", events + "?since=2000-01-01T00:00:00Z").body_json()["data"]["items"].size(), 3u);
    EXPECT_EQ(sb.call("GET", events + "?since=2100-01-01T00:00:00%2B02:00").body_json()["data"]["items"].size(), 0u);

    expect_invalid(sb.call("GET", events + "?since=yesterday"), "since");
    expect_invalid(sb.call("GET", events + "?limit=0"), "limit");
    expect_invalid(sb.call("GET", events + "?limit=201"), "limit");
    expect_invalid(sb.call("GET", events + "?limit=ten"), "limit");
    expect_invalid(sb.call("GET", events + "?after=zz"), "after");
    expect_invalid(sb.call("GET", "/v2/webhooks/" + custom + "/events"), "custom");

    // Events of a stopped hosted webhook are not collected.
    ASSERT_EQ(sb.call("POST", "/v2/webhooks/" + id + "/stop").status, 200);
    sb.disconnect(account);
    EXPECT_EQ(sb.call("GET", events).body_json()["data"]["items"].size(), 3u);
}

} // namespace
