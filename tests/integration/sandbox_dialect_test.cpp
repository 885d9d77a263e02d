// Dialects of the sandbox (sandbox/README.md "Dialects"): for every dialect setting and every
// non-default value, the real binary is started with it and the wire shape is checked against
// what the setting promises. Also: dialect=random:SEED is deterministic, explicit settings win
// over the draw, and bad values stop the start naming the setting. Events are triggered through
// the control interface; webhooks are hosted (polled or streamed) or custom (a loopback receiver).
#include "tests/support/http_client.hpp"
#include "tests/support/sandbox_process.hpp"
#include "tests/support/sse_client.hpp"
#include "tests/support/test_receiver.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

using namespace orch::test;
using namespace std::chrono_literals;

namespace {

constexpr const char* key = "test-key";

struct sandbox {
    explicit sandbox(std::vector<std::string> args = {})
        : process(std::move(args)), api("127.0.0.1", process.port()), control("127.0.0.1", process.control_port()) {}
    sandbox_process process;
    http_client api;
    http_client control;

    http_result call(const std::string& method, const std::string& target, const std::string& body = "") {
        return api.request(method, target, body, {{"x-api-key", key}});
    }
    // Creates a webhook and returns its data (asserting success).
    json create(const json& body) {
        auto r = api.post("/v2/webhooks", body, key);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.body_json()["data"];
    }
    json poll(const std::string& webhook_id, const std::string& query = "") {
        auto r = call("GET", "/v2/webhooks/" + webhook_id + "/events" + query);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.body_json();
    }
    // Publishes a disconnection of `account` and returns its event id.
    std::string disconnect(const std::string& account, const std::string& reason = "session expired") {
        auto r = control.post("/control/events",
                              json{{"type", "disconnection"}, {"account_id", account}, {"reason", reason}});
        EXPECT_EQ(r.status, 200) << r.body;
        auto events = control.get("/control/events").body_json()["events"];
        return events.empty() ? std::string() : events.back()["event_id"].get<std::string>();
    }
    // Invites a person the account is not related to, makes them accept, returns their profile URL.
    std::string accept_someone(const std::string& account) {
        auto people = control.get("/control/people?limit=80").body_json()["people"];
        for (const auto& p : people) {
            if (api.v2(key, "network", account, "invite", json{{"profile_url", p["profile_url"]}}).status == 200) {
                auto r = control.post("/control/events", json{{"type", "accepted_invitation"},
                                                               {"account_id", account},
                                                               {"profile_url", p["profile_url"]}});
                EXPECT_EQ(r.status, 200) << r.body;
                return p["profile_url"];
            }
        }
        ADD_FAILURE() << "nobody could be invited";
        return {};
    }
    // Makes an existing connection of the account write to it; returns the sender's profile URL.
    std::string receive_message(const std::string& account, const std::string& text) {
        auto conns = api.v2(key, "network", account, "list_connections", json{{"count", 1}}).body_json();
        std::string url = conns["data"]["connections"][0]["profile_url"];
        auto r = control.post("/control/events", json{{"type", "message_received"},
                                                       {"account_id", account},
                                                       {"profile_url", url},
                                                       {"text", text}});
        EXPECT_EQ(r.status, 200) << r.body;
        return url;
    }
    std::int64_t monitoring_charged() {
        json credits = control.get("/control/credits").body_json(); // kept alive for the loop
        for (const auto& k : credits["keys"]) {
            if (k["key"] == key) {
                return k["charged_by_action"].value("monitoring", 0);
            }
        }
        return -1;
    }
    json settings() { return control.get("/control/settings").body_json(); }
};

std::string stream_target(const std::string& id) { return "/v2/webhooks/" + id + "/stream?api_key=" + key; }

// The first polled event of a hosted webhook (after waiting for it).
json first_polled_event(sandbox& sb, const std::string& webhook_id) {
    for (int i = 0; i < 100; ++i) {
        auto items = sb.poll(webhook_id)["data"]["items"];
        if (!items.empty()) {
            return items[0]["event"];
        }
        std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "no event polled";
    return json::object();
}

// ---------------------------------------------------------------------------------------------
// Webhook activation

TEST(SandboxDialect, WebhooksActivateOnStartOnly) {
    test_receiver receiver;
    sandbox sb({"--dialect-webhook-activation", "on_start"});
    std::string account = login_account(sb.api, key, "tok-1");
    json hosted = sb.create(json{{"account_id", account}});
    json custom = sb.create(json{{"account_id", account}, {"url", receiver.url()}});
    EXPECT_EQ(hosted["is_active"], false);
    EXPECT_EQ(custom["is_active"], false);
    std::string hosted_id = hosted["webhook_id"];
    std::string custom_id = custom["webhook_id"];
    EXPECT_EQ(sb.call("GET", "/v2/webhooks/" + hosted_id).body_json()["data"]["is_active"], false);
    EXPECT_EQ(sb.monitoring_charged(), 0);
    auto account_info = sb.call("GET", "/v2/accounts/" + account).body_json()["data"];
    EXPECT_EQ(account_info["monitoring"], false);

    // Nothing is delivered, streamed or stored before /start.
    sse_client stream(sb.process.port(), stream_target(hosted_id));
    ASSERT_EQ(stream.status(), 200);
    ASSERT_EQ(stream.next_event()->event, "connected");
    sb.disconnect(account);
    EXPECT_FALSE(stream.next_event(300ms));
    EXPECT_EQ(sb.poll(hosted_id)["data"]["items"].size(), 0u);
    EXPECT_EQ(receiver.count(), 0u);

    login_account(sb.api, key, "tok-1");
    for (const auto& id : {hosted_id, custom_id}) {
        auto start = sb.call("POST", "/v2/webhooks/" + id + "/start");
        ASSERT_EQ(start.status, 200) << start.body;
        EXPECT_EQ(start.body_json()["data"]["monitoring"], true);
    }
    EXPECT_EQ(sb.monitoring_charged(), 10); // once per account and day
    EXPECT_EQ(sb.call("GET", "/v2/webhooks/" + hosted_id).body_json()["data"]["is_active"], true);
    std::string event_id = sb.disconnect(account);
    auto m = stream.next_event();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->id, event_id);
    auto items = sb.poll(hosted_id)["data"]["items"];
    ASSERT_EQ(items.size(), 1u);
    EXPECT_EQ(items[0]["event_id"], event_id);
    ASSERT_TRUE(receiver.wait_for(1, 3s));
    EXPECT_EQ(receiver.requests()[0].header("x-service-event-id"), event_id);
}

TEST(SandboxDialect, DefaultActivationIsImmediate) {
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    EXPECT_EQ(sb.create(json{{"account_id", account}})["is_active"], true);
    EXPECT_EQ(sb.monitoring_charged(), 10);
}

// ---------------------------------------------------------------------------------------------
// Event envelopes

void check_flat_envelope(const std::string& envelope, const char* type_key) {
    SCOPED_TRACE(envelope);
    test_receiver receiver;
    sandbox sb({"--dialect-event-envelope", envelope});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string hosted = sb.create(json{{"account_id", account}})["webhook_id"];
    sb.create(json{{"account_id", account}, {"url", receiver.url()}});
    std::string event_id = sb.disconnect(account, "token expired");

    json e = first_polled_event(sb, hosted);
    EXPECT_EQ(e[type_key], "disconnection") << e;
    EXPECT_EQ(e["account_id"], account);
    EXPECT_TRUE(e["timestamp"].is_string());
    ASSERT_TRUE(e["data"].is_object()) << e;
    EXPECT_EQ(e["data"]["reason"], "token expired");
    EXPECT_TRUE(e["data"]["timestamp"].is_string());
    EXPECT_FALSE(e["data"].contains("type"));
    EXPECT_FALSE(e.contains("account_name"));
    if (std::string(type_key) == "type") {
        EXPECT_FALSE(e.contains("event"));
    } else {
        EXPECT_FALSE(e.contains("type"));
    }
    EXPECT_EQ(e.size(), 4u) << e; // {type|event, account_id, timestamp, data}

    // The custom POST is the same event plus the top-level event_id.
    ASSERT_TRUE(receiver.wait_for(1, 3s));
    json posted = json::parse(receiver.requests()[0].body);
    EXPECT_EQ(posted["event_id"], event_id);
    posted.erase("event_id");
    EXPECT_EQ(posted, e);

    // The stream carries it too.
    std::string second = sb.disconnect(account, "again");
    sse_client stream(sb.process.port(), stream_target(hosted), {{"Last-Event-ID", event_id}});
    ASSERT_EQ(stream.next_event()->event, "connected");
    auto m = stream.next_event();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->id, second);
    json streamed = json::parse(m->data);
    EXPECT_EQ(streamed[type_key], "disconnection");
    EXPECT_EQ(streamed["data"]["reason"], "again");
}

TEST(SandboxDialect, FlatTypeEnvelope) { check_flat_envelope("flat_type", "type"); }

TEST(SandboxDialect, FlatEventEnvelope) { check_flat_envelope("flat_event", "event"); }

TEST(SandboxDialect, WrapperEnvelopeIsTheDefault) {
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    std::string hosted = sb.create(json{{"account_id", account}})["webhook_id"];
    sb.disconnect(account, "bye");
    json e = first_polled_event(sb, hosted);
    EXPECT_EQ(e["event"]["type"], "disconnection");
    EXPECT_EQ(e["event"]["reason"], "bye");
    EXPECT_TRUE(e["account_name"].is_string());
    EXPECT_FALSE(e.contains("data"));
}

// ---------------------------------------------------------------------------------------------
// accepted_invitation shapes and the message type

TEST(SandboxDialect, AcceptedInvitationAsList) {
    sandbox sb({"--dialect-accepted-shape", "list", "--accept-probability", "0"});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string hosted = sb.create(json{{"account_id", account}, {"events", {"accepted_invitation"}}})["webhook_id"];
    std::string url = sb.accept_someone(account);
    json body = first_polled_event(sb, hosted)["event"];
    EXPECT_EQ(body["type"], "accepted_invitation");
    ASSERT_TRUE(body["new_connections"].is_array()) << body;
    ASSERT_EQ(body["new_connections"].size(), 1u);
    const json& c = body["new_connections"][0];
    EXPECT_EQ(c["profile_url"], url);
    for (const char* k : {"name", "first_name", "last_name"}) {
        EXPECT_TRUE(c[k].is_string() && !c[k].get<std::string>().empty()) << k;
    }
    EXPECT_EQ(c["name"], c["first_name"].get<std::string>() + " " + c["last_name"].get<std::string>());
    EXPECT_FALSE(body.contains("profile_url"));
}

TEST(SandboxDialect, AcceptedInvitationUnderData) {
    sandbox sb({"--dialect-accepted-shape", "data", "--accept-probability", "0"});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string hosted = sb.create(json{{"account_id", account}})["webhook_id"];
    std::string url = sb.accept_someone(account);
    json body = first_polled_event(sb, hosted)["event"];
    EXPECT_EQ(body["type"], "accepted_invitation");
    ASSERT_TRUE(body["data"].is_object()) << body;
    EXPECT_EQ(body["data"]["profile_url"], url);
    EXPECT_TRUE(body["data"]["first_name"].is_string());
    EXPECT_TRUE(body["data"]["last_name"].is_string());
    EXPECT_FALSE(body.contains("profile_url"));
    EXPECT_FALSE(body.contains("new_connections"));
}

TEST(SandboxDialect, AcceptedInvitationSingleIsTheDefault) {
    sandbox sb({"--accept-probability", "0"});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string hosted = sb.create(json{{"account_id", account}})["webhook_id"];
    std::string url = sb.accept_someone(account);
    json body = first_polled_event(sb, hosted)["event"];
    EXPECT_EQ(body["profile_url"], url);
    EXPECT_TRUE(body["invitation_id"].is_string());
}

TEST(SandboxDialect, MessageTypeMessageReceived) {
    sandbox sb({"--dialect-message-type", "message_received", "--dialect-sse-event-name", "type"});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string filtered = sb.create(json{{"account_id", account}, {"events", {"message_received"}}})["webhook_id"];
    std::string other = sb.create(json{{"account_id", account}, {"events", {"accepted_invitation"}}})["webhook_id"];
    sse_client stream(sb.process.port(), stream_target(filtered));
    ASSERT_EQ(stream.next_event()->event, "connected");
    std::string from = sb.receive_message(account, "hello there");
    json body = first_polled_event(sb, filtered)["event"];
    EXPECT_EQ(body["type"], "message_received");
    EXPECT_EQ(body["message_text"], "hello there");
    EXPECT_EQ(body["sender_profile"], from);
    EXPECT_EQ(sb.poll(other)["data"]["items"].size(), 0u);
    auto m = stream.next_event();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->event, "message_received"); // the SSE name follows the type string
}

// Where a message event names its sender (api-facts 1.3: the docs' example, two third-party
// readings, or not at all); the control interface names the person whatever the payload does.
json message_event_with(const std::string& sender_dialect, std::string& from, json& control_record) {
    sandbox sb({"--dialect-message-sender", sender_dialect});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string hosted = sb.create(json{{"account_id", account}})["webhook_id"];
    from = sb.receive_message(account, "hello there");
    json body = first_polled_event(sb, hosted)["event"];
    const json fired = sb.control.get("/control/events").body_json();  // kept alive for the loop
    for (const auto& e : fired["events"]) {
        if (e["type"] == "message") {
            control_record = e;
        }
    }
    EXPECT_EQ(body["message_text"], "hello there");
    EXPECT_TRUE(body["conversation_id"].is_string()) << body.dump();
    return body;
}

TEST(SandboxDialect, MessageSenderAsTheDocsExampleIsTheDefault) {
    std::string from;
    json record;
    json body = message_event_with("sender_profile", from, record);
    EXPECT_EQ(body["sender_profile"], from);
    EXPECT_TRUE(body["sender_name"].is_string());
    EXPECT_EQ(record["profile_url"], from);
}

TEST(SandboxDialect, MessageSenderAsProfileUrl) {
    std::string from;
    json record;
    json body = message_event_with("sender_profile_url", from, record);
    EXPECT_EQ(body["sender_profile_url"], from);
    EXPECT_FALSE(body.contains("sender_profile")) << body.dump();
}

TEST(SandboxDialect, MessageSenderAsAnObject) {
    std::string from;
    json record;
    json body = message_event_with("sender_object", from, record);
    EXPECT_EQ(body["sender"]["profile_url"], from) << body.dump();
    EXPECT_TRUE(body["sender"]["name"].is_string()) << body.dump();
    EXPECT_FALSE(body.contains("sender_profile")) << body.dump();
}

TEST(SandboxDialect, MessageNamingOnlyItsConversation) {
    std::string from;
    json record;
    json body = message_event_with("conversation_only", from, record);
    for (const char* field : {"sender", "sender_name", "sender_profile", "sender_profile_url"}) {
        EXPECT_FALSE(body.contains(field)) << field << ": " << body.dump();
    }
    EXPECT_EQ(record["profile_url"], from) << record.dump();
}

// ---------------------------------------------------------------------------------------------
// Disconnection filtering and SSE

TEST(SandboxDialect, DisconnectionOnlyToSubscribedWebhooks) {
    sandbox sb({"--dialect-disconnection", "subscribed"});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string invitations =
        sb.create(json{{"account_id", account}, {"events", {"accepted_invitation"}}})["webhook_id"];
    std::string messages = sb.create(json{{"account_id", account}, {"events", {"message_received"}}})["webhook_id"];
    std::string subscribed = sb.create(json{{"account_id", account}, {"events", {"disconnection"}}})["webhook_id"];
    std::string all = sb.create(json{{"account_id", account}})["webhook_id"];
    std::string event_id = sb.disconnect(account);
    EXPECT_EQ(sb.poll(invitations)["data"]["items"].size(), 0u);
    EXPECT_EQ(sb.poll(messages)["data"]["items"].size(), 0u);
    for (const auto& id : {subscribed, all}) {
        auto items = sb.poll(id)["data"]["items"];
        ASSERT_EQ(items.size(), 1u) << id;
        EXPECT_EQ(items[0]["event_id"], event_id);
    }
}

TEST(SandboxDialect, SseEventNamedAfterTheType) {
    sandbox sb({"--dialect-sse-event-name", "type"});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string hosted = sb.create(json{{"account_id", account}})["webhook_id"];
    sse_client stream(sb.process.port(), stream_target(hosted));
    ASSERT_EQ(stream.next_event()->event, "connected");
    std::string event_id = sb.disconnect(account);
    auto m = stream.next_event();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->event, "disconnection");
    EXPECT_EQ(m->id, event_id);
    EXPECT_EQ(json::parse(m->data)["event"]["type"], "disconnection");
}

TEST(SandboxDialect, SseWithoutIdsCannotResume) {
    sandbox sb({"--dialect-sse-ids", "false"});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string hosted = sb.create(json{{"account_id", account}})["webhook_id"];
    std::string first;
    {
        sse_client stream(sb.process.port(), stream_target(hosted));
        ASSERT_EQ(stream.next_event()->event, "connected");
        first = sb.disconnect(account);
        auto m = stream.next_event();
        ASSERT_TRUE(m);
        EXPECT_EQ(m->event, "webhook");
        EXPECT_FALSE(m->has_id) << "id: " << m->id;
    }
    sb.disconnect(account); // missed while away
    // Last-Event-ID (even a malformed one) is ignored: no replay, no error.
    sse_client again(sb.process.port(), stream_target(hosted), {{"Last-Event-ID", first}});
    ASSERT_EQ(again.status(), 200);
    ASSERT_EQ(again.next_event()->event, "connected");
    EXPECT_FALSE(again.next_event(300ms));
    sse_client odd(sb.process.port(), stream_target(hosted), {{"Last-Event-ID", "not-an-id"}});
    EXPECT_EQ(odd.status(), 200);
    std::string live = sb.disconnect(account);
    auto m = again.next_event();
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->has_id);
    auto polled = sb.poll(hosted)["data"]["items"];
    ASSERT_EQ(polled.size(), 3u);
    EXPECT_EQ(polled[2]["event_id"], live); // polling still names the events
}

// ---------------------------------------------------------------------------------------------
// Poll cursors: each style pages through every event once, then resumes for new ones.

struct poll_page {
    std::vector<std::string> ids;
    json data;
};

poll_page poll_page_of(sandbox& sb, const std::string& id, const std::string& query) {
    poll_page p;
    p.data = sb.poll(id, query)["data"];
    for (const auto& item : p.data["items"]) {
        EXPECT_TRUE(item["event_id"].is_string());
        EXPECT_TRUE(item["created_at"].is_string());
        EXPECT_TRUE(item["event"].is_object());
        p.ids.push_back(item["event_id"]);
    }
    return p;
}

// Events of `account` as published, oldest first.
std::vector<std::string> published(sandbox& sb, const std::string& account) {
    std::vector<std::string> out;
    json events = sb.control.get("/control/events").body_json(); // kept alive for the loop
    for (const auto& e : events["events"]) {
        if (e["account_id"] == account) {
            out.push_back(e["event_id"]);
        }
    }
    return out;
}

TEST(SandboxDialect, PollBySinceOnly) {
    sandbox sb({"--dialect-poll-cursor", "since"});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string hosted = sb.create(json{{"account_id", account}})["webhook_id"];
    for (int i = 0; i < 7; ++i) {
        sb.disconnect(account); // back to back: several share a millisecond of the clock
    }
    auto expected = published(sb, account);
    ASSERT_EQ(expected.size(), 7u);
    std::vector<std::string> seen;
    std::string since;
    for (int round = 0; round < 10; ++round) {
        auto page = poll_page_of(sb, hosted, "?limit=3" + (since.empty() ? "" : "&since=" + since));
        EXPECT_FALSE(page.data.contains("has_more"));
        EXPECT_FALSE(page.data.contains("next_after"));
        EXPECT_FALSE(page.data.contains("next_cursor"));
        seen.insert(seen.end(), page.ids.begin(), page.ids.end());
        if (page.ids.size() < 3) {
            break;
        }
        since = page.data["items"].back()["created_at"];
    }
    EXPECT_EQ(seen, expected);
    std::set<std::string> created;
    json all = sb.poll(hosted);
    for (const auto& item : all["data"]["items"]) {
        created.insert(item["created_at"].get<std::string>());
    }
    EXPECT_EQ(created.size(), 7u); // distinct, so `since` never splits a millisecond

    // `after` is ignored.
    EXPECT_EQ(poll_page_of(sb, hosted, "?after=" + expected[5]).ids.size(), 7u);
    EXPECT_EQ(poll_page_of(sb, hosted, "?after=garbage").ids.size(), 7u);
    // New events after the last created_at.
    std::string last_since = sb.poll(hosted)["data"]["items"].back()["created_at"];
    std::string e8 = sb.disconnect(account);
    auto rest = poll_page_of(sb, hosted, "?since=" + last_since);
    EXPECT_EQ(rest.ids, std::vector<std::string>{e8});
}

void check_cursor_paging(const std::string& style) {
    SCOPED_TRACE(style);
    sandbox sb({"--dialect-poll-cursor", style});
    std::string account = login_account(sb.api, key, "tok-1");
    std::string other = login_account(sb.api, key, "tok-2");
    std::string hosted = sb.create(json{{"account_id", account}})["webhook_id"];
    for (int i = 0; i < 7; ++i) {
        sb.disconnect(account);
        sb.disconnect(other); // interleaved events of another account are not listed
    }
    auto expected = published(sb, account);
    ASSERT_EQ(expected.size(), 7u);
    std::vector<std::string> seen;
    json cursor;
    for (int round = 0; round < 10; ++round) {
        std::string query = "?limit=3";
        if (!cursor.is_null()) {
            query += "&cursor=" + (cursor.is_string() ? cursor.get<std::string>() : cursor.dump());
        }
        auto page = poll_page_of(sb, hosted, query);
        ASSERT_TRUE(page.data.contains("next_cursor")) << page.data;
        if (style == "opaque") {
            ASSERT_TRUE(page.data["next_cursor"].is_string()) << page.data;
            EXPECT_EQ(std::find(expected.begin(), expected.end(), page.data["next_cursor"].get<std::string>()),
                      expected.end())
                << "an opaque cursor is not an event id";
        } else {
            ASSERT_TRUE(page.data["next_cursor"].is_number_integer()) << page.data;
        }
        EXPECT_FALSE(page.data.contains("next_after"));
        seen.insert(seen.end(), page.ids.begin(), page.ids.end());
        cursor = page.data["next_cursor"];
        if (!page.data["has_more"].get<bool>()) {
            break;
        }
    }
    EXPECT_EQ(seen, expected);
    // Nothing new: no items, the cursor holds its position.
    auto idle = poll_page_of(sb, hosted, "?cursor=" + (cursor.is_string() ? cursor.get<std::string>() : cursor.dump()));
    EXPECT_TRUE(idle.ids.empty());
    EXPECT_EQ(idle.data["next_cursor"], cursor);
    // `after` is ignored.
    EXPECT_EQ(poll_page_of(sb, hosted, "?after=" + expected[5]).ids.size(), 7u);
    // New events come after the last cursor.
    std::string e8 = sb.disconnect(account);
    std::string e9 = sb.disconnect(account);
    auto rest = poll_page_of(sb, hosted, "?cursor=" + (cursor.is_string() ? cursor.get<std::string>() : cursor.dump()));
    EXPECT_EQ(rest.ids, (std::vector<std::string>{e8, e9}));
    // A cursor the endpoint never issued.
    auto bad = sb.call("GET", "/v2/webhooks/" + hosted + "/events?cursor=" + (style == "opaque" ? "pc_nope" : "x1"));
    EXPECT_EQ(bad.status, 400) << bad.body;
    EXPECT_EQ(bad.body_json()["error"]["code"], "INVALID_PARAMS");
    EXPECT_NE(bad.body_json()["error"]["message"].get<std::string>().find("cursor"), std::string::npos);
}

TEST(SandboxDialect, PollByOpaqueCursor) { check_cursor_paging("opaque"); }

TEST(SandboxDialect, PollByNumericCursor) { check_cursor_paging("numeric"); }

// ---------------------------------------------------------------------------------------------
// search_people page cap

void check_page_cap(int cap) {
    SCOPED_TRACE(cap);
    sandbox sb({"--dialect-search-page-cap", std::to_string(cap), "--world-people", "420"});
    std::string account = login_account(sb.api, key, "tok-1");
    std::set<std::string> seen;
    std::int64_t available = -1;
    json params = {{"total_results", 1000}};
    int calls = 0;
    for (; calls < 50; ++calls) {
        auto r = sb.api.v2(key, "profiles", account, "search_people", params);
        ASSERT_EQ(r.status, 200) << r.body;
        json j = r.body_json();
        const json& d = j["data"];
        auto returned = d["results"].size();
        EXPECT_LE(returned, static_cast<std::size_t>(cap));
        EXPECT_EQ(d["total_results"], returned);
        EXPECT_EQ(j["metadata"]["credits_consumed"], std::max<std::size_t>(1, (returned + 9) / 10));
        if (available < 0) {
            available = d["total_available_results"];
            EXPECT_GT(available, cap); // several calls are needed
        }
        EXPECT_EQ(d["total_available_results"], available);
        for (const auto& p : d["results"]) {
            EXPECT_TRUE(seen.insert(p["public_id"].get<std::string>()).second) << "repeated " << p["public_id"];
        }
        const json& pg = d["pagination"];
        EXPECT_EQ(pg["results_per_page"], 50);
        EXPECT_EQ(pg["has_more"], d["has_more"]);
        EXPECT_EQ(pg["end_page"].get<std::int64_t>() - pg["start_page"].get<std::int64_t>() + 1,
                  static_cast<std::int64_t>((returned + 49) / 50));
        if (!d["has_more"].get<bool>()) {
            EXPECT_TRUE(pg["next_start_page"].is_null());
            break;
        }
        EXPECT_EQ(returned, static_cast<std::size_t>(cap));
        std::int64_t next = pg["next_start_page"];
        EXPECT_EQ(next, pg["end_page"].get<std::int64_t>() + 1);
        params = json{{"start_page", next}, {"end_page", next + 19}};
    }
    EXPECT_EQ(static_cast<std::int64_t>(seen.size()), available);
    EXPECT_EQ(calls + 1, static_cast<int>((available + cap - 1) / cap));
}

TEST(SandboxDialect, SearchPageCapOf50) { check_page_cap(50); }

TEST(SandboxDialect, SearchPageCapOf100) { check_page_cap(100); }

TEST(SandboxDialect, SearchWithoutCapReturnsEverythingAskedFor) {
    sandbox sb({"--world-people", "420"});
    std::string account = login_account(sb.api, key, "tok-1");
    auto d = sb.api.v2(key, "profiles", account, "search_people", json{{"total_results", 1000}}).body_json()["data"];
    EXPECT_EQ(d["results"].size(), d["total_available_results"].get<std::size_t>());
    EXPECT_FALSE(d.contains("has_more"));
    EXPECT_FALSE(d.contains("pagination"));
}

// ---------------------------------------------------------------------------------------------
// Timestamps, error metadata, extra fields

TEST(SandboxDialect, NaiveTimestamps) {
    sandbox sb({"--dialect-timestamps", "naive"});
    const std::regex naive(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6})");
    std::string account = login_account(sb.api, key, "tok-1");
    auto created = sb.api.post("/v2/webhooks", json{{"account_id", account}}, key).body_json();
    EXPECT_TRUE(std::regex_match(created["metadata"]["timestamp"].get<std::string>(), naive)) << created;
    std::string hosted = created["data"]["webhook_id"];
    auto credits = sb.api.get("/v2/credits", key).body_json();
    EXPECT_TRUE(std::regex_match(credits["metadata"]["timestamp"].get<std::string>(), naive)) << credits;
    auto error = sb.api.v2(key, "profiles", account, "search_people", json{{"total_results", "x"}}).body_json();
    EXPECT_TRUE(std::regex_match(error["metadata"]["timestamp"].get<std::string>(), naive)) << error;

    sb.disconnect(account);
    auto poll = sb.poll(hosted);
    EXPECT_TRUE(std::regex_match(poll["metadata"]["timestamp"].get<std::string>(), naive));
    const json& item = poll["data"]["items"][0];
    std::string created_at = item["created_at"];
    EXPECT_TRUE(std::regex_match(created_at, naive)) << created_at;
    EXPECT_TRUE(std::regex_match(item["event"]["timestamp"].get<std::string>(), naive)) << item;
    EXPECT_TRUE(std::regex_match(item["event"]["event"]["timestamp"].get<std::string>(), naive)) << item;
    // A naive created_at read back as `since` (UTC) is strictly after its own event.
    EXPECT_EQ(sb.poll(hosted, "?since=" + created_at)["data"]["items"].size(), 0u);
}

TEST(SandboxDialect, ErrorsWithoutAccountId) {
    for (bool with : {true, false}) {
        SCOPED_TRACE(with);
        sandbox sb(with ? std::vector<std::string>{} : std::vector<std::string>{"--dialect-error-account-id", "false"});
        std::string account = login_account(sb.api, key, "tok-1");
        auto error = sb.api.v2(key, "profiles", account, "search_people", json{{"total_results", "x"}});
        ASSERT_EQ(error.status, 400) << error.body;
        EXPECT_EQ(error.body_json()["metadata"].contains("account_id"), with) << error.body;
        auto unknown = sb.api.post("/v2/webhooks/wh_0000000000000000/start", json::object(), key);
        EXPECT_EQ(unknown.status, 404);
        auto ok = sb.api.v2(key, "profiles", account, "get_me");
        EXPECT_EQ(ok.body_json()["metadata"]["account_id"], account); // successes keep it
    }
}

void expect_extra(const json& object, const std::string& where) {
    ASSERT_TRUE(object.is_object()) << where;
    EXPECT_TRUE(object.contains("x_sandbox_extra") && object["x_sandbox_extra"].is_object()) << where << ": " << object;
    EXPECT_TRUE(object.contains("x_sandbox_flag")) << where << ": " << object;
}

TEST(SandboxDialect, ExtraFieldsEverywhere) {
    sandbox sb({"--dialect-extra-fields", "true", "--dialect-search-page-cap", "50"});
    std::string account = login_account(sb.api, key, "tok-1");
    auto search = sb.api.v2(key, "profiles", account, "search_people", json{{"total_results", 20}}).body_json();
    expect_extra(search, "envelope");
    expect_extra(search["data"], "data");
    expect_extra(search["metadata"], "metadata");
    expect_extra(search["data"]["results"][0], "result item");
    expect_extra(search["data"]["pagination"], "pagination");
    auto error = sb.api.v2(key, "profiles", account, "nope").body_json();
    expect_extra(error, "error envelope");
    expect_extra(error["error"], "error");
    expect_extra(error["metadata"], "error metadata");

    std::string hosted = sb.create(json{{"account_id", account}})["webhook_id"];
    auto list = sb.call("GET", "/v2/webhooks").body_json();
    expect_extra(list["data"]["items"][0], "webhook item");
    sse_client stream(sb.process.port(), stream_target(hosted));
    auto hello = stream.next_event();
    ASSERT_TRUE(hello);
    expect_extra(json::parse(hello->data), "SSE connected");
    sb.disconnect(account);
    auto item = sb.poll(hosted)["data"]["items"][0];
    expect_extra(item, "poll item");
    expect_extra(item["event"], "event wrapper");
    expect_extra(item["event"]["event"], "event body");
    auto m = stream.next_event();
    ASSERT_TRUE(m);
    expect_extra(json::parse(m->data), "streamed event");
    // The fields are extra: everything else is as without them.
    EXPECT_EQ(item["event"]["event"]["type"], "disconnection");
    EXPECT_EQ(search["data"]["results"].size(), 20u);
}

TEST(SandboxDialect, NoExtraFieldsByDefault) {
    sandbox sb;
    std::string account = login_account(sb.api, key, "tok-1");
    auto r = sb.api.v2(key, "profiles", account, "get_me");
    EXPECT_EQ(r.body.find("x_sandbox"), std::string::npos);
}

TEST(SandboxDialect, RetryAfterBelongsToTheGroup) {
    sandbox sb({"--retry-after", "false", "--key-rate-per-s", "1", "--key-burst", "1"});
    sb.api.get("/v2/credits", key);
    auto limited = sb.api.get("/v2/credits", key);
    ASSERT_EQ(limited.status, 429) << limited.body;
    EXPECT_EQ(limited.header("retry-after"), "");
    EXPECT_EQ(sb.settings()["retry_after"], "false");
}

// ---------------------------------------------------------------------------------------------
// The group: defaults, random draws, explicit settings, bad values

const std::vector<std::string> dialect_settings = {
    "retry_after",           "dialect_webhook_activation", "dialect_event_envelope",  "dialect_accepted_shape",
    "dialect_message_type",  "dialect_disconnection",      "dialect_sse_event_name",  "dialect_sse_ids",
    "dialect_poll_cursor",   "dialect_search_page_cap",    "dialect_timestamps",      "dialect_error_account_id",
    "dialect_extra_fields",  "dialect_rate_limit_message", "dialect_message_sender"};

json effective_dialect(const std::vector<std::string>& args) {
    sandbox sb(args);
    json all = sb.settings();
    json out = json::object();
    for (const auto& k : dialect_settings) {
        EXPECT_TRUE(all.contains(k)) << k;
        out[k] = all[k];
    }
    out["dialect"] = all["dialect"];
    return out;
}

TEST(SandboxDialect, DefaultsAreListedAndLogged) {
    sandbox sb;
    json s = sb.settings();
    EXPECT_EQ(s["dialect"], "default");
    EXPECT_EQ(s["retry_after"], "true");
    EXPECT_EQ(s["dialect_webhook_activation"], "on_create");
    EXPECT_EQ(s["dialect_event_envelope"], "wrapper");
    EXPECT_EQ(s["dialect_accepted_shape"], "single");
    EXPECT_EQ(s["dialect_message_type"], "message");
    EXPECT_EQ(s["dialect_disconnection"], "always");
    EXPECT_EQ(s["dialect_sse_event_name"], "webhook");
    EXPECT_EQ(s["dialect_sse_ids"], "true");
    EXPECT_EQ(s["dialect_poll_cursor"], "after_id");
    EXPECT_EQ(s["dialect_search_page_cap"], "0");
    EXPECT_EQ(s["dialect_timestamps"], "zoned");
    EXPECT_EQ(s["dialect_error_account_id"], "true");
    EXPECT_EQ(s["dialect_extra_fields"], "false");
    EXPECT_EQ(s["dialect_message_sender"], "sender_profile");
    std::string log = sb.process.log();
    auto line = log.find("dialect: dialect=default");
    ASSERT_NE(line, std::string::npos) << log;
    std::string text = log.substr(line, log.find('\n', line) - line);
    for (const auto& k : dialect_settings) {
        EXPECT_NE(text.find(" " + k + "="), std::string::npos) << k << " missing from: " << text;
    }
    // Startup settings: not changeable at run time.
    auto r = sb.control.post("/control/settings", json{{"dialect_event_envelope", "flat_type"}});
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(sb.settings()["dialect_event_envelope"], "wrapper");
}

TEST(SandboxDialect, RandomDialectIsDeterministicPerSeed) {
    json a = effective_dialect({"--dialect", "random:11"});
    json b = effective_dialect({"--dialect", "random:11"});
    EXPECT_EQ(a, b);
    EXPECT_EQ(a["dialect"], "random:11");
    std::set<std::string> distinct;
    distinct.insert(a.dump());
    for (const char* seed : {"random:12", "random:13", "random:14"}) {
        distinct.insert(effective_dialect({"--dialect", seed}).dump());
    }
    EXPECT_GE(distinct.size(), 2u) << "different seeds should draw different dialects";
    // Every drawn value is one of the setting's values.
    const std::set<std::string> caps = {"0", "50", "100"};
    EXPECT_TRUE(caps.contains(a["dialect_search_page_cap"].get<std::string>()));
}

TEST(SandboxDialect, ExplicitSettingsWinOverTheDraw) {
    json drawn = effective_dialect({"--dialect", "random:11"});
    // Pick, for two settings, a value other than the drawn one.
    std::string envelope = drawn["dialect_event_envelope"] == "flat_event" ? "wrapper" : "flat_event";
    std::string stamps = drawn["dialect_timestamps"] == "naive" ? "zoned" : "naive";
    auto yaml = std::filesystem::temp_directory_path() / ("sandbox-dialect-" + std::to_string(::getpid()) + ".yaml");
    {
        std::ofstream out(yaml);
        out << "dialect: random:11\ndialect_timestamps: " << stamps << "\n";
    }
    json mixed = effective_dialect({"--config", yaml.string(), "--dialect-event-envelope", envelope});
    std::filesystem::remove(yaml);
    json expected = drawn;
    expected["dialect_event_envelope"] = envelope;
    expected["dialect_timestamps"] = stamps;
    EXPECT_EQ(mixed, expected); // the rest is the same draw
}

void expect_start_error(const std::vector<std::string>& args, const std::vector<std::string>& needles) {
    try {
        sandbox_process sb(args);
        ADD_FAILURE() << "the sandbox started with a bad setting";
    } catch (const std::runtime_error& e) {
        std::string what = e.what();
        for (const auto& n : needles) {
            EXPECT_NE(what.find(n), std::string::npos) << "expected '" << n << "' in: " << what;
        }
    }
}

TEST(SandboxDialect, BadValuesStopTheStartNamingTheSetting) {
    expect_start_error({"--dialect-event-envelope", "flat"},
                       {"dialect-event-envelope", "wrapper, flat_type, flat_event"});
    expect_start_error({"--dialect-poll-cursor", "page"}, {"dialect-poll-cursor", "after_id"});
    expect_start_error({"--dialect-sse-ids", "maybe"}, {"dialect-sse-ids", "boolean"});
    expect_start_error({"--dialect-search-page-cap", "30"}, {"dialect_search_page_cap", "multiple of 50"});
    expect_start_error({"--dialect-search-page-cap=-50"}, {"dialect_search_page_cap"});
    expect_start_error({"--dialect", "random:"}, {"dialect", "random:SEED"});
    expect_start_error({"--dialect", "chaos"}, {"dialect", "random:SEED"});
    auto yaml =
        std::filesystem::temp_directory_path() / ("sandbox-dialect-bad-" + std::to_string(::getpid()) + ".yaml");
    {
        std::ofstream out(yaml);
        out << "dialect_timestamps: local\n";
    }
    expect_start_error({"--config", yaml.string()}, {"dialect_timestamps", "zoned, naive", "local"});
    std::filesystem::remove(yaml);
}

} // namespace
