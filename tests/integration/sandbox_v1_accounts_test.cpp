// Conformance of the V1 messaging send (POST /messages/send) and the V1 webhook accounts
// (/v1/webhooks/accounts...): the V1 envelope, every validation error, QR codes pushed to a
// real loopback receiver and renewed until a simulated scan, start/stop, the daily monitoring
// charge across (simulated) day boundaries, and events delivered to webhook_url. Runs the real
// binary over HTTP; scans, incoming messages and day boundaries go through the control
// interface.
#include "tests/support/http_client.hpp"
#include "tests/support/sandbox_process.hpp"
#include "tests/support/test_receiver.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

using namespace orch::test;
using namespace std::chrono_literals;

namespace {

constexpr const char* key = "test-key";
constexpr const char* other_key = "other-key";
constexpr auto qr_period = 200ms; // --qr-refresh-ms below

std::vector<std::string> with_defaults(std::vector<std::string> args, const std::string& credits) {
    std::vector<std::string> out = {"--api-key", std::string(key) + ":" + credits, "--api-key",
                                    std::string(other_key) + ":1000", "--qr-refresh-ms", "200"};
    out.insert(out.end(), args.begin(), args.end());
    return out;
}

// A sandbox with its API and control clients and V1 helpers.
struct sandbox {
    explicit sandbox(std::vector<std::string> args = {}, const std::string& credits = "1000000")
        : process(with_defaults(std::move(args), credits)), api("127.0.0.1", process.port()),
          control("127.0.0.1", process.control_port()) {}
    sandbox_process process;
    http_client api;
    http_client control;

    http_result call(const std::string& method, const std::string& target, const json& body = nullptr,
                     const std::string& api_key = key) {
        std::map<std::string, std::string> headers = {{"x-api-key", api_key}};
        if (!body.is_null()) {
            headers["content-type"] = "application/json";
        }
        return api.request(method, target, body.is_null() ? std::string() : body.dump(), headers);
    }
    // A V1 call that must succeed; returns the whole answer.
    json ok(const std::string& method, const std::string& target, const json& body = nullptr,
            const std::string& api_key = key) {
        auto r = call(method, target, body, api_key);
        EXPECT_EQ(r.status, 200) << r.body;
        json j = r.body_json();
        EXPECT_EQ(j.value("status", ""), "success") << method << " " << target << ": " << r.body;
        return j;
    }
    json create(const json& body, const std::string& api_key = key) {
        return ok("POST", "/v1/webhooks/accounts", body, api_key)["data"];
    }
    json create_network(const std::string& token, const std::string& url = "http://127.0.0.1:9/hook") {
        return create(json{{"platform", "network"},
                           {"account_name", "network " + token},
                           {"webhook_url", url},
                           {"login_token", token}});
    }
    json create_messaging(const std::string& phone, const std::string& url = "http://127.0.0.1:9/hook",
                          const std::string& qr_url = "") {
        json body = {{"platform", "messaging"}, {"account_name", "messaging " + phone}, {"webhook_url", url},
                     {"phone_number", phone}};
        if (!qr_url.empty()) {
            body["qr_webhook_url"] = qr_url;
        }
        return create(body);
    }
    std::string path(const std::string& id, const std::string& tail = "") {
        return "/v1/webhooks/accounts/" + id + tail;
    }
    http_result scan(const std::string& id, const json& body = json::object()) {
        return control.post("/control/v1-accounts/" + id + "/scan", body);
    }
    json control_account(const std::string& id) {
        json all = control.get("/control/v1-accounts").body_json();
        for (const auto& a : all["accounts"]) {
            if (a["id"] == id) {
                return a;
            }
        }
        return nullptr;
    }
    json key_credits(const std::string& api_key = key) {
        json credits = control.get("/control/credits").body_json();
        for (const auto& k : credits["keys"]) {
            if (k["key"] == api_key) {
                return k;
            }
        }
        return nullptr;
    }
    std::int64_t balance(const std::string& api_key = key) { return key_credits(api_key)["credits"]; }
    std::int64_t charged_by(const std::string& action) {
        return key_credits()["charged_by_action"].value(action, std::int64_t{0});
    }
    json advance_day() {
        auto r = control.post("/control/v1-accounts/advance-day", json::object());
        EXPECT_EQ(r.status, 200) << r.body;
        return r.body_json();
    }
    json send(const json& body) { return call("POST", "/messages/send", body).body_json(); }
    json messaging_records() {
        json out = json::array();
        json effects = control.get("/control/side-effects").body_json();
        for (const auto& m : effects["messages"]) {
            if (m.value("kind", "") == "messaging") {
                out.push_back(m);
            }
        }
        return out;
    }
};

// A V1 error: HTTP 200, {status: "error", message, code}, with `needle` in the message.
void expect_error(const http_result& r, const std::string& code, const std::string& needle) {
    EXPECT_EQ(r.status, 200) << r.body;
    json j = r.body_json();
    EXPECT_EQ(j.value("status", ""), "error") << r.body;
    EXPECT_EQ(j.value("code", ""), code) << r.body;
    EXPECT_NE(j.value("message", "").find(needle), std::string::npos)
        << "message should contain '" << needle << "': " << r.body;
    EXPECT_FALSE(j.contains("data")) << r.body;
}

// The JSON bodies a receiver got on `target`.
std::vector<json> bodies_at(const test_receiver& rx, const std::string& target) {
    std::vector<json> out;
    for (const auto& r : rx.requests()) {
        if (r.target == target) {
            out.push_back(json::parse(r.body));
        }
    }
    return out;
}

// Waits until `rx` got at least `n` requests on `target`.
bool wait_at(const test_receiver& rx, const std::string& target, std::size_t n, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (bodies_at(rx, target).size() >= n) {
            return true;
        }
        std::this_thread::sleep_for(10ms);
    }
    return bodies_at(rx, target).size() >= n;
}

std::vector<std::string> people(sandbox& sb, int offset, int n) {
    auto j = sb.control.get("/control/people?offset=" + std::to_string(offset) + "&limit=" + std::to_string(n))
                 .body_json();
    std::vector<std::string> out;
    for (const auto& p : j["people"]) {
        out.push_back(p["profile_url"].get<std::string>());
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Webhook accounts: create, read, validation

TEST(SandboxV1Accounts, CreateANetworkAccountAndReadItBack) {
    sandbox sb;
    json a = sb.create_network("tok-1", "http://127.0.0.1:9/in");
    const std::string id = a["id"];
    EXPECT_EQ(id.rfind("wha_", 0), 0u) << a;
    EXPECT_EQ(a["platform"], "network");
    EXPECT_EQ(a["account_name"], "network tok-1");
    EXPECT_EQ(a["webhook_url"], "http://127.0.0.1:9/in");
    EXPECT_EQ(a["is_active"], false);
    EXPECT_EQ(a["login_token"], "tok-1");
    EXPECT_EQ(a["country"], "FR");
    for (const char* messaging_only : {"is_authenticated", "needs_qr", "phone_number", "qr_webhook_url"}) {
        EXPECT_FALSE(a.contains(messaging_only)) << messaging_only << " is messaging only: " << a;
    }
    EXPECT_TRUE(a["created_at"].is_string());
    EXPECT_EQ(a["created_at"], a["updated_at"]);

    json list = sb.ok("GET", "/v1/webhooks/accounts")["data"];
    ASSERT_EQ(list["accounts"].size(), 1u) << list;
    EXPECT_EQ(list["total"], 1);
    EXPECT_EQ(list["accounts"][0], a);
    EXPECT_EQ(sb.ok("GET", sb.path(id))["data"], a);

    // Another key sees nothing of it.
    EXPECT_TRUE(sb.ok("GET", "/v1/webhooks/accounts", nullptr, other_key)["data"]["accounts"].empty());
    expect_error(sb.call("GET", sb.path(id), nullptr, other_key), "NOT_FOUND", id);

    // `plateforme` (the newer docs' spelling) is accepted; the country is upper-cased; the
    // list keeps creation order.
    json b = sb.create(json{{"plateforme", "network"},
                            {"account_name", "second"},
                            {"webhook_url", "https://hooks.example/x"},
                            {"login_token", "tok-2"},
                            {"country", "us"}});
    EXPECT_EQ(b["platform"], "network");
    EXPECT_EQ(b["country"], "US");
    list = sb.ok("GET", "/v1/webhooks/accounts")["data"];
    ASSERT_EQ(list["accounts"].size(), 2u);
    EXPECT_EQ(list["accounts"][0]["id"], id);
    EXPECT_EQ(list["accounts"][1]["id"], b["id"]);
    // Managing webhook accounts is free.
    EXPECT_EQ(sb.balance(), 1000000);
}

TEST(SandboxV1Accounts, CreateValidatesEveryField) {
    sandbox sb;
    const json network = {{"platform", "network"},
                          {"account_name", "n"},
                          {"webhook_url", "http://127.0.0.1:9/h"},
                          {"login_token", "tok"}};
    const json messaging = {{"platform", "messaging"},
                            {"account_name", "m"},
                            {"webhook_url", "http://127.0.0.1:9/h"},
                            {"phone_number", "+33612345678"}};
    auto with = [](json base, const std::string& field, const json& value) {
        if (value.is_null()) {
            base.erase(field);
        } else {
            base[field] = value;
        }
        return base;
    };
    struct bad_case {
        json body;
        std::string needle;
    };
    std::vector<bad_case> cases = {
        {json::object(), "platform is required"},
        {with(network, "platform", 5), "platform must be a string"},
        {with(network, "platform", "email"), "platform must be 'network' or 'messaging'"},
        {with(network, "plateforme", "messaging"), "plateforme disagree"},
        {with(network, "account_name", nullptr), "account_name is required"},
        {with(network, "account_name", 42), "account_name must be a string"},
        {with(network, "account_name", ""), "account_name must not be empty"},
        {with(network, "account_name", std::string(201, 'x')), "account_name must be at most 200"},
        {with(network, "webhook_url", nullptr), "webhook_url is required"},
        {with(network, "webhook_url", "not a url"), "webhook_url must be an absolute http or https URL"},
        {with(network, "webhook_url", "ftp://files.example/x"), "webhook_url must use http or https"},
        {with(network, "webhook_url", true), "webhook_url must be a string"},
        {with(network, "login_token", nullptr), "login_token is required for network accounts"},
        {with(network, "login_token", json::array()), "login_token must be a string"},
        {with(network, "phone_number", "+33612345678"), "phone_number is only for messaging accounts"},
        {with(network, "qr_webhook_url", "http://127.0.0.1:9/q"), "qr_webhook_url is only for messaging accounts"},
        {with(network, "country", "FRA"), "country must be a two-letter country code"},
        {with(network, "country", 33), "country must be a string"},
        {with(messaging, "phone_number", nullptr), "phone_number is required for messaging accounts"},
        {with(messaging, "phone_number", "call me"), "phone_number must be an international number"},
        {with(messaging, "phone_number", "+0612345678"), "phone_number must have 8 to 15 digits"},
        {with(messaging, "phone_number", "+1234"), "phone_number must have 8 to 15 digits"},
        {with(messaging, "phone_number", 33612345678LL), "phone_number must be a string"},
        {with(messaging, "login_token", "tok"), "login_token is only for network accounts"},
        {with(messaging, "qr_webhook_url", "nope"), "qr_webhook_url must be an absolute http or https URL"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.body.dump());
        expect_error(sb.call("POST", "/v1/webhooks/accounts", c.body), "INVALID_PARAMS", c.needle);
    }
    expect_error(sb.api.request("POST", "/v1/webhooks/accounts", "[1]", {{"x-api-key", key}}), "INVALID_PARAMS",
                 "JSON object");
    expect_error(sb.api.request("POST", "/v1/webhooks/accounts", "{oops", {{"x-api-key", key}}), "INVALID_PARAMS",
                 "not valid JSON");
    EXPECT_TRUE(sb.ok("GET", "/v1/webhooks/accounts")["data"]["accounts"].empty());

    // One account per login token and per phone number (in any spelling), per key.
    json first = sb.create(network);
    auto dup = sb.call("POST", "/v1/webhooks/accounts", with(network, "account_name", "again"));
    expect_error(dup, "INVALID_PARAMS", "login_token");
    EXPECT_EQ(dup.body_json()["existing_id"], first["id"]);
    json phone = sb.create(messaging);
    EXPECT_EQ(phone["phone_number"], "+33612345678");
    auto dup_phone = sb.call("POST", "/v1/webhooks/accounts", with(messaging, "phone_number", "33 6 12-34-56-78"));
    expect_error(dup_phone, "INVALID_PARAMS", "phone_number +33612345678");
    EXPECT_EQ(dup_phone.body_json()["existing_id"], phone["id"]);
    // Another key may use the same token.
    EXPECT_EQ(sb.create(network, other_key)["login_token"], "tok");
    EXPECT_EQ(sb.balance(), 1000000);
}

// ---------------------------------------------------------------------------------------------
// QR codes of messaging accounts

TEST(SandboxV1Accounts, AMessagingAccountPushesANewQrCodeUntilScanned) {
    sandbox sb;
    test_receiver rx;
    json a = sb.create_messaging("+33612345678", rx.url("/events"), rx.url("/qr"));
    const std::string id = a["id"];
    EXPECT_EQ(a["platform"], "messaging");
    EXPECT_EQ(a["is_authenticated"], false);
    EXPECT_EQ(a["needs_qr"], true);
    EXPECT_EQ(a["is_active"], false);
    EXPECT_EQ(a["phone_number"], "+33612345678");
    EXPECT_EQ(a["qr_webhook_url"], rx.url("/qr"));
    EXPECT_FALSE(a.contains("login_token"));

    ASSERT_TRUE(wait_at(rx, "/qr", 3, 3s)) << rx.count();
    auto codes = bodies_at(rx, "/qr");
    std::set<std::string> distinct;
    for (std::size_t i = 0; i < 3; ++i) {
        const json& b = codes[i];
        EXPECT_EQ(b["account_id"], id);
        EXPECT_EQ(b["event"]["type"], "qr_code");
        EXPECT_EQ(b["event"]["sequence"], i + 1);
        EXPECT_EQ(b["event"]["expires_in_ms"], 200);
        EXPECT_TRUE(b["event"]["expires_at"].is_string());
        distinct.insert(b["event"]["qr_code"].get<std::string>());
    }
    EXPECT_EQ(distinct.size(), 3u) << "every renewal is a new code";
    // Renewed every qr_refresh_ms, not faster (two renewals take 400 ms; delivery jitter aside).
    auto requests = rx.requests();
    EXPECT_GE(requests[2].at - requests[0].at, qr_period);
    // V1 deliveries are never signed.
    EXPECT_FALSE(requests[0].has_header("x-service-signature"));
    EXPECT_TRUE(bodies_at(rx, "/events").empty());

    // Scanning needs the current code.
    auto stale = sb.scan(id, json{{"qr_code", codes[0]["event"]["qr_code"]}});
    EXPECT_EQ(stale.status, 409) << stale.body;
    EXPECT_EQ(sb.scan("wha_nobody").status, 404);
    // The current code may be renewed between reading and scanning it: retry a few times.
    http_result scanned;
    for (int attempt = 0; attempt < 5 && scanned.status != 200; ++attempt) {
        std::string current = sb.control_account(id)["qr_code"];
        scanned = sb.scan(id, json{{"qr_code", current}});
    }
    ASSERT_EQ(scanned.status, 200) << scanned.body;
    EXPECT_EQ(scanned.body_json()["is_authenticated"], true);
    json got = sb.ok("GET", sb.path(id))["data"];
    EXPECT_EQ(got["is_authenticated"], true);
    EXPECT_EQ(got["needs_qr"], false);
    EXPECT_EQ(got["is_active"], true) << "monitoring begins once scanned";

    // An `authenticated` notice follows on the QR channel (ordered), then no more codes.
    auto authenticated = [&] {
        auto all = bodies_at(rx, "/qr");
        return std::count_if(all.begin(), all.end(), [](const json& b) { return b["event"]["type"] == "authenticated"; });
    };
    for (int i = 0; i < 200 && authenticated() == 0; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_EQ(authenticated(), 1);
    auto count_after_scan = bodies_at(rx, "/qr").size();
    EXPECT_EQ(bodies_at(rx, "/qr").back()["event"]["phone_number"], "+33612345678");
    std::this_thread::sleep_for(3 * qr_period);
    EXPECT_EQ(bodies_at(rx, "/qr").size(), count_after_scan) << "no QR code after the scan";
    EXPECT_EQ(sb.scan(id).status, 409) << "already authenticated";
}

TEST(SandboxV1Accounts, QrCodesGoToWebhookUrlByDefaultFollowUpdatesAndStopAtDelete) {
    sandbox sb;
    test_receiver rx;
    json a = sb.create_messaging("+4915112345678", rx.url("/main"));
    const std::string id = a["id"];
    EXPECT_EQ(a["qr_webhook_url"], rx.url("/main")) << "qr_webhook_url defaults to webhook_url";
    ASSERT_TRUE(wait_at(rx, "/main", 1, 2s));
    EXPECT_EQ(bodies_at(rx, "/main")[0]["event"]["type"], "qr_code");

    json updated = sb.ok("PUT", sb.path(id), json{{"qr_webhook_url", rx.url("/qr2")}})["data"];
    EXPECT_EQ(updated["qr_webhook_url"], rx.url("/qr2"));
    EXPECT_EQ(updated["webhook_url"], rx.url("/main"));
    ASSERT_TRUE(wait_at(rx, "/qr2", 1, 2s)) << "later codes go to the new qr_webhook_url";

    json deleted = sb.ok("DELETE", sb.path(id));
    EXPECT_EQ(deleted["data"]["id"], id);
    EXPECT_EQ(deleted["data"]["deleted"], true);
    std::this_thread::sleep_for(qr_period); // a delivery in flight at the delete may still land
    auto after_delete = rx.count();
    std::this_thread::sleep_for(3 * qr_period);
    EXPECT_EQ(rx.count(), after_delete) << "deleting ends QR generation";
    expect_error(sb.call("GET", sb.path(id)), "NOT_FOUND", id);
}

// ---------------------------------------------------------------------------------------------
// Monitoring

TEST(SandboxV1Accounts, StartStopAndTheDailyMonitoringCharge) {
    sandbox sb;
    const std::string id = sb.create_network("monitor-tok")["id"];
    auto start = sb.ok("POST", sb.path(id, "/start"));
    EXPECT_EQ(start["data"]["is_active"], true);
    EXPECT_EQ(start["credits_cost"], 10);
    EXPECT_NE(start.value("message", "").find("10 credits"), std::string::npos) << start;
    EXPECT_EQ(sb.balance(), 1000000 - 10);
    EXPECT_EQ(sb.charged_by("start_webhook_account"), 10);
    auto log = sb.control.get("/control/requests?action=start_webhook_account").body_json()["requests"];
    ASSERT_EQ(log.size(), 1u);
    EXPECT_EQ(log[0]["credits"], 10);

    // Starting an active account changes nothing.
    auto again = sb.ok("POST", sb.path(id, "/start"));
    EXPECT_EQ(again["credits_cost"], 0);
    EXPECT_EQ(sb.balance(), 1000000 - 10);

    // Stop: the documented result; the day stays charged (no refund).
    auto stop = sb.ok("POST", sb.path(id, "/stop"));
    EXPECT_EQ(stop["data"]["account_id"], id);
    EXPECT_EQ(stop["data"]["is_active"], false);
    EXPECT_TRUE(stop["data"]["message"].is_string());
    EXPECT_EQ(sb.ok("GET", sb.path(id))["data"]["is_active"], false);
    EXPECT_EQ(sb.balance(), 1000000 - 10);
    // Restarting the same day is not charged again.
    EXPECT_EQ(sb.ok("POST", sb.path(id, "/start"))["credits_cost"], 0);
    EXPECT_EQ(sb.balance(), 1000000 - 10);

    // Each new day is charged for every active network account.
    json day = sb.advance_day();
    EXPECT_EQ(day["charged"], 1);
    EXPECT_EQ(sb.balance(), 1000000 - 20);
    EXPECT_EQ(sb.charged_by("v1_monitoring"), 10);
    // Stopped accounts are not.
    sb.ok("POST", sb.path(id, "/stop"));
    EXPECT_EQ(sb.advance_day()["charged"], 0);
    EXPECT_EQ(sb.balance(), 1000000 - 20);
    // A start on a day not yet paid pays it.
    EXPECT_EQ(sb.ok("POST", sb.path(id, "/start"))["credits_cost"], 10);
    EXPECT_EQ(sb.balance(), 1000000 - 30);

    // Messaging accounts are neither started nor stopped, and never charged.
    const std::string m = sb.create_messaging("+33600000001")["id"];
    expect_error(sb.call("POST", sb.path(m, "/stop")), "INVALID_PARAMS", "delete the account instead");
    expect_error(sb.call("POST", sb.path(m, "/start")), "INVALID_PARAMS", "start is for network accounts");
    ASSERT_EQ(sb.scan(m).status, 200);
    EXPECT_EQ(sb.advance_day()["charged"], 1) << "only the network account";
    EXPECT_EQ(sb.balance(), 1000000 - 40);
}

TEST(SandboxV1Accounts, MonitoringNeedsCreditsAndStopsWhenADayCannotBePaid) {
    sandbox sb({}, "15");
    test_receiver rx;
    const std::string first = sb.create_network("tok-a", rx.url("/a"))["id"];
    const std::string second = sb.create_network("tok-b")["id"];
    EXPECT_EQ(sb.ok("POST", sb.path(first, "/start"))["credits_cost"], 10);
    auto refused = sb.call("POST", sb.path(second, "/start"));
    expect_error(refused, "INSUFFICIENT_CREDITS", "insufficient credits");
    EXPECT_EQ(refused.body_json()["required"], 10);
    EXPECT_EQ(refused.body_json()["remaining"], 5);
    EXPECT_EQ(sb.ok("GET", sb.path(second))["data"]["is_active"], false);
    EXPECT_EQ(sb.balance(), 5);

    ASSERT_EQ(sb.control.post("/control/credits", json{{"key", key}, {"credits", 12}}).status, 200);
    json day = sb.advance_day();
    EXPECT_EQ(day["charged"], 1);
    EXPECT_EQ(day["stopped"], 0);
    EXPECT_EQ(sb.balance(), 2);
    day = sb.advance_day();
    EXPECT_EQ(day["stopped"], 1);
    EXPECT_EQ(sb.balance(), 2);
    EXPECT_EQ(sb.ok("GET", sb.path(first))["data"]["is_active"], false);
    ASSERT_TRUE(wait_at(rx, "/a", 1, 2s));
    json notice = bodies_at(rx, "/a")[0];
    EXPECT_EQ(notice["account_id"], first);
    EXPECT_EQ(notice["event"]["type"], "disconnection");
    EXPECT_NE(notice["event"].value("reason", "").find("insufficient credits"), std::string::npos) << notice;
}

TEST(SandboxV1Accounts, AnActiveNetworkAccountReceivesTheEventsOfItsAccount) {
    sandbox sb({"--accept-probability", "0"});
    test_receiver rx;
    const std::string acc = login_account(sb.api, key, "events-tok");
    const std::string id = sb.create_network("events-tok", rx.url("/events"))["id"];
    // Invites the next person who can be invited (some are already connections of the
    // account) and makes them accept at once; returns their profile URL.
    auto candidates = people(sb, 900, 30);
    std::size_t next = 0;
    auto accept = [&]() -> std::string {
        while (next < candidates.size()) {
            const std::string url = candidates[next++];
            if (sb.api.v2(key, "network", acc, "invite", json{{"profile_url", url}}).status != 200) {
                continue;
            }
            auto r = sb.control.post("/control/events",
                                     json{{"type", "accepted_invitation"}, {"account_id", acc}, {"profile_url", url}});
            EXPECT_EQ(r.status, 200) << r.body;
            return url;
        }
        ADD_FAILURE() << "nobody left to invite";
        return "";
    };

    accept(); // not monitored yet
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(rx.count(), 0u);

    sb.ok("POST", sb.path(id, "/start"));
    const std::string accepted = accept();
    ASSERT_TRUE(wait_at(rx, "/events", 1, 2s));
    auto delivered = rx.requests()[0];
    json body = json::parse(delivered.body);
    EXPECT_EQ(body["account_id"], id);
    EXPECT_EQ(body["account_name"], "network events-tok");
    EXPECT_EQ(body["event"]["type"], "accepted_invitation");
    EXPECT_EQ(body["event"]["profile_url"], accepted);
    EXPECT_TRUE(body["event_id"].is_string());
    EXPECT_FALSE(delivered.has_header("x-service-signature")) << "V1 deliveries are not signed";

    sb.ok("POST", sb.path(id, "/stop"));
    accept();
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(rx.count(), 1u) << "no webhooks after stop";
}

TEST(SandboxV1Accounts, UpdateChangesOnlyWhatItMayChange) {
    sandbox sb;
    json a = sb.create_network("upd-tok");
    const std::string id = a["id"];
    sb.create_network("taken-tok");
    std::this_thread::sleep_for(5ms);
    json u = sb.ok("PUT", sb.path(id),
                   json{{"account_name", "renamed"}, {"webhook_url", "http://127.0.0.1:9/new"}, {"country", "de"}})["data"];
    EXPECT_EQ(u["account_name"], "renamed");
    EXPECT_EQ(u["webhook_url"], "http://127.0.0.1:9/new");
    EXPECT_EQ(u["country"], "DE");
    EXPECT_EQ(u["login_token"], "upd-tok");
    EXPECT_EQ(u["created_at"], a["created_at"]);
    EXPECT_GT(u["updated_at"].get<std::string>(), a["updated_at"].get<std::string>());
    // Repeating the current platform is fine (a client may send the record back).
    EXPECT_EQ(sb.ok("PUT", sb.path(id), json{{"platform", "network"}, {"login_token", "upd-tok-2"}})["data"]["login_token"],
              "upd-tok-2");

    expect_error(sb.call("PUT", sb.path(id), json::object()), "INVALID_PARAMS", "nothing to update");
    expect_error(sb.call("PUT", sb.path(id), json{{"platform", "messaging"}}), "INVALID_PARAMS",
                 "platform cannot be changed");
    expect_error(sb.call("PUT", sb.path(id), json{{"is_active", true}}), "INVALID_PARAMS", "is_active cannot be changed");
    expect_error(sb.call("PUT", sb.path(id), json{{"qr_webhook_url", "http://127.0.0.1:9/q"}}), "INVALID_PARAMS",
                 "qr_webhook_url is only for messaging");
    expect_error(sb.call("PUT", sb.path(id), json{{"phone_number", "+33612345678"}}), "INVALID_PARAMS",
                 "phone_number is only for messaging");
    expect_error(sb.call("PUT", sb.path(id), json{{"account_name", 7}}), "INVALID_PARAMS",
                 "account_name must be a string");
    // A bad field leaves everything unchanged, even the valid ones.
    expect_error(sb.call("PUT", sb.path(id), json{{"account_name", "x"}, {"webhook_url", "nope"}}), "INVALID_PARAMS",
                 "webhook_url");
    EXPECT_EQ(sb.ok("GET", sb.path(id))["data"]["account_name"], "renamed");
    auto dup = sb.call("PUT", sb.path(id), json{{"login_token", "taken-tok"}});
    expect_error(dup, "INVALID_PARAMS", "login_token");
    EXPECT_TRUE(dup.body_json()["existing_id"].is_string());

    const std::string m = sb.create_messaging("+33611111111")["id"];
    expect_error(sb.call("PUT", sb.path(m), json{{"login_token", "t"}}), "INVALID_PARAMS",
                 "login_token is only for network");
    expect_error(sb.call("PUT", sb.path(m), json{{"phone_number", "+33622222222"}}), "INVALID_PARAMS",
                 "phone_number cannot be changed");
    EXPECT_EQ(sb.ok("PUT", sb.path(m), json{{"phone_number", "+33611111111"}, {"account_name", "m2"}})["data"]["account_name"],
              "m2");
}

TEST(SandboxV1Accounts, UnknownIdsOtherKeysMethodsAndMissingKeys) {
    sandbox sb;
    for (const auto& [method, tail] : std::vector<std::pair<std::string, std::string>>{
             {"GET", ""}, {"PUT", ""}, {"DELETE", ""}, {"POST", "/start"}, {"POST", "/stop"}}) {
        SCOPED_TRACE(method + tail);
        json body = method == "PUT" ? json{{"account_name", "x"}} : json(nullptr);
        expect_error(sb.call(method, sb.path("wha_nobody", tail), body), "NOT_FOUND", "wha_nobody");
    }
    const std::string id = sb.create_network("mine")["id"];
    expect_error(sb.call("DELETE", sb.path(id), nullptr, other_key), "NOT_FOUND", id);
    expect_error(sb.call("POST", sb.path(id, "/start"), nullptr, other_key), "NOT_FOUND", id);
    EXPECT_EQ(sb.ok("GET", sb.path(id))["data"]["is_active"], false) << "another key changed nothing";
    EXPECT_EQ(sb.ok("DELETE", sb.path(id))["data"]["deleted"], true);
    expect_error(sb.call("DELETE", sb.path(id)), "NOT_FOUND", id);

    auto patch = sb.call("PATCH", "/v1/webhooks/accounts", json::object());
    EXPECT_EQ(patch.status, 405);
    EXPECT_EQ(patch.header("allow"), "POST, GET");
    auto no_key = sb.api.request("GET", "/v1/webhooks/accounts");
    expect_error(no_key, "INVALID_API_KEY", "x-api-key");
    expect_error(sb.call("GET", "/v1/webhooks/accounts", nullptr, "wrong"), "INVALID_API_KEY", "invalid");
}

// ---------------------------------------------------------------------------------------------
// POST /messages/send

TEST(SandboxV1Messaging, SendFromAnAuthenticatedMessagingAccount) {
    sandbox sb;
    const std::string id = sb.create_messaging("+33612345678")["id"];
    ASSERT_EQ(sb.scan(id).status, 200);
    json r = sb.send(json{{"account_id", id}, {"to", "33698765432"}, {"message", "Hello from the sandbox"}});
    ASSERT_EQ(r.value("status", ""), "success") << r;
    EXPECT_NE(r.value("message", "").find("33698765432"), std::string::npos) << r;
    EXPECT_EQ(r["data"]["status"], "sent");
    EXPECT_EQ(r["data"]["account_id"], id);
    EXPECT_EQ(r["data"]["to"], "33698765432");
    EXPECT_EQ(r["data"]["message"], "Hello from the sandbox");
    EXPECT_TRUE(r["data"]["message_id"].is_string());
    EXPECT_TRUE(r["data"]["timestamp"].is_number_integer());
    EXPECT_EQ(sb.balance(), 1000000 - 1);
    auto log = sb.control.get("/control/requests?action=messaging_send").body_json()["requests"];
    ASSERT_EQ(log.size(), 1u);
    EXPECT_EQ(log[0]["credits"], 1);
    EXPECT_EQ(log[0]["account_id"], id);
    json records = sb.messaging_records();
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0]["account_id"], id);
    EXPECT_EQ(records[0]["to"], "33698765432");
    EXPECT_EQ(records[0]["text"], "Hello from the sandbox");

    // A reply quoting a message: the four quoted_* fields together.
    json reply = sb.send(json{{"account_id", id},
                              {"to", "33698765432"},
                              {"message", "Yes, tomorrow works"},
                              {"quoted_message_id", r["data"]["message_id"]},
                              {"quoted_text", "Hello from the sandbox"},
                              {"quoted_timestamp", r["data"]["timestamp"]},
                              {"quoted_from_me", true}});
    ASSERT_EQ(reply.value("status", ""), "success") << reply;
    EXPECT_EQ(reply["data"]["quoted_message_id"], r["data"]["message_id"]);
    EXPECT_EQ(sb.balance(), 1000000 - 2);

    // A V2 login on the messaging platform is a messaging account too.
    auto login = sb.api.post("/v2/login", json{{"platform", "messaging"}, {"country", "FR"}, {"login_token", "wa-tok"}},
                             key);
    ASSERT_EQ(login.status, 200) << login.body;
    std::string v2 = login.body_json()["data"]["account_id"];
    json from_v2 = sb.send(json{{"account_id", v2}, {"to", "4915112345678"}, {"message", "Hallo"}});
    EXPECT_EQ(from_v2.value("status", ""), "success") << from_v2;
    EXPECT_EQ(sb.messaging_records().size(), 3u);
    EXPECT_EQ(sb.balance(), 1000000 - 3);
}

TEST(SandboxV1Messaging, SendRefusesTheWrongSender) {
    sandbox sb;
    const json send = {{"to", "33698765432"}, {"message", "hi"}};
    auto from = [&](const std::string& id) {
        json body = send;
        body["account_id"] = id;
        return sb.call("POST", "/messages/send", body);
    };
    expect_error(from("acc_nobody"), "INVALID_ACCOUNT", "acc_nobody");
    const std::string v2_network = login_account(sb.api, key, "net-tok");
    expect_error(from(v2_network), "INVALID_PARAMS", "is a network account");
    const std::string v1_network = sb.create_network("net-tok")["id"];
    expect_error(from(v1_network), "INVALID_PARAMS", "is a network account");
    const std::string waiting = sb.create_messaging("+33612345678")["id"];
    expect_error(from(waiting), "ACCOUNT_INACTIVE", "not authenticated");
    const std::string others = sb.create(json{{"platform", "messaging"},
                                              {"account_name", "theirs"},
                                              {"webhook_url", "http://127.0.0.1:9/h"},
                                              {"phone_number", "+33699999999"}},
                                         other_key)["id"];
    ASSERT_EQ(sb.scan(others).status, 200);
    expect_error(from(others), "INVALID_ACCOUNT", others);
    // A disconnected V2 messaging account is inactive until it logs in again.
    auto login = sb.api.post("/v2/login", json{{"platform", "messaging"}, {"country", "FR"}, {"login_token", "wa"}}, key);
    std::string v2 = login.body_json()["data"]["account_id"];
    ASSERT_EQ(sb.control.post("/control/events", json{{"type", "disconnection"}, {"account_id", v2}}).status, 200);
    expect_error(from(v2), "ACCOUNT_INACTIVE", "inactive");

    EXPECT_EQ(sb.balance(), 1000000);
    EXPECT_TRUE(sb.messaging_records().empty());
}

TEST(SandboxV1Messaging, SendValidatesEveryField) {
    sandbox sb({"--message-max-chars", "20"});
    const std::string id = sb.create_messaging("+33612345678")["id"];
    ASSERT_EQ(sb.scan(id).status, 200);
    const json good = {{"account_id", id}, {"to", "33698765432"}, {"message", "hi"}};
    const json quote = {{"quoted_message_id", "msg_1"},
                        {"quoted_text", "earlier"},
                        {"quoted_timestamp", 1700000000000LL},
                        {"quoted_from_me", false}};
    auto with = [](json base, const json& changes) {
        for (const auto& [k, v] : changes.items()) {
            if (v.is_null()) {
                base.erase(k);
            } else {
                base[k] = v;
            }
        }
        return base;
    };
    json quoted = with(good, quote);
    struct bad_case {
        json body;
        std::string needle;
    };
    std::vector<bad_case> cases = {
        {with(good, {{"account_id", nullptr}}), "account_id is required"},
        {with(good, {{"account_id", 5}}), "account_id must be a string"},
        {with(good, {{"to", nullptr}}), "to is required"},
        {with(good, {{"to", "+33698765432"}}), "without a plus sign"},
        {with(good, {{"to", "33 698 765"}}), "to must contain digits only"},
        {with(good, {{"to", "1234567"}}), "to must have 8 to 15 digits"},
        {with(good, {{"to", "1234567890123456"}}), "to must have 8 to 15 digits"},
        {with(good, {{"to", "0698765432"}}), "to must start with the country code"},
        {with(good, {{"to", 33698765432LL}}), "to must be a string"},
        {with(good, {{"message", nullptr}}), "message is required"},
        {with(good, {{"message", ""}}), "message must not be empty"},
        {with(good, {{"message", 7}}), "message must be a string"},
        {with(good, {{"message", std::string(21, 'a')}}), "message is 21 characters long; the limit is 20"},
        {with(good, {{"quoted_message_id", "m"}}), "missing: quoted_text, quoted_timestamp, quoted_from_me"},
        {with(quoted, {{"quoted_from_me", nullptr}}), "missing: quoted_from_me"},
        {with(quoted, {{"quoted_message_id", ""}}), "quoted_message_id must not be empty"},
        {with(quoted, {{"quoted_text", 5}}), "quoted_text must be a string"},
        {with(quoted, {{"quoted_timestamp", "yesterday"}}), "quoted_timestamp must be a number"},
        {with(quoted, {{"quoted_timestamp", -5}}), "quoted_timestamp must not be negative"},
        {with(quoted, {{"quoted_from_me", "yes"}}), "quoted_from_me must be a boolean"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.body.dump());
        expect_error(sb.call("POST", "/messages/send", c.body), "INVALID_PARAMS", c.needle);
    }
    expect_error(sb.api.request("POST", "/messages/send", "", {{"x-api-key", key}}), "INVALID_PARAMS",
                 "account_id is required");
    expect_error(sb.api.request("POST", "/messages/send", "[]", {{"x-api-key", key}}), "INVALID_PARAMS",
                 "JSON object");
    // Errors cost nothing and send nothing.
    EXPECT_EQ(sb.balance(), 1000000);
    EXPECT_TRUE(sb.messaging_records().empty());
    json log = sb.control.get("/control/requests?action=messaging_send").body_json();
    for (const auto& r : log["requests"]) {
        EXPECT_EQ(r["credits"], 0) << r;
    }
    // Exactly at the limit, with a reply: accepted.
    EXPECT_EQ(sb.send(with(quoted, {{"message", std::string(20, 'a')}})).value("status", ""), "success");

    // Without credits: INSUFFICIENT_CREDITS and nothing sent.
    ASSERT_EQ(sb.control.post("/control/credits", json{{"key", key}, {"credits", 0}}).status, 200);
    auto broke = sb.call("POST", "/messages/send", good);
    expect_error(broke, "INSUFFICIENT_CREDITS", "insufficient credits");
    EXPECT_EQ(sb.messaging_records().size(), 1u);
}

TEST(SandboxV1Messaging, IncomingMessagesReachWebhookUrlOnceAuthenticated) {
    sandbox sb;
    test_receiver rx;
    const std::string id = sb.create_messaging("+33612345678", rx.url("/events"), rx.url("/qr"))["id"];
    auto inbound = [&] {
        return sb.control.post("/control/v1-accounts/" + id + "/inbound",
                               json{{"from", "33698765432"}, {"text", "Is it still available?"}});
    };
    EXPECT_EQ(inbound().status, 409) << "not monitored before the scan";
    ASSERT_EQ(sb.scan(id).status, 200);
    ASSERT_EQ(inbound().status, 200);
    ASSERT_TRUE(wait_at(rx, "/events", 1, 2s));
    json body = bodies_at(rx, "/events")[0];
    EXPECT_EQ(body["account_id"], id);
    EXPECT_EQ(body["platform"], "messaging");
    EXPECT_EQ(body["event"]["type"], "message");
    EXPECT_EQ(body["event"]["from"], "33698765432");
    EXPECT_EQ(body["event"]["message_text"], "Is it still available?");
}

} // namespace
