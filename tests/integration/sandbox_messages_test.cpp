// /v2/messages of the sandbox over HTTP: sending to connections only, media and their cost,
// simulated replies and their `message` events, the inbox and conversations with cursors,
// control triggers, the lost-response fault and bad input.
#include "tests/support/http_client.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

using namespace orch::test;
using namespace std::chrono_literals;

namespace {

constexpr const char* key = "test-key";

std::vector<std::string> base_args(const std::vector<std::string>& overrides = {}) {
    std::vector<std::string> args = {
        "--world-people", "2000", "--connections-per-account", "6", "--received-invitations-per-account", "0",
        "--reply-probability", "0", "--reply-delay-ms-min", "50", "--reply-delay-ms-max", "100"};
    // Each flag may be given once: an override replaces the default value.
    for (std::size_t i = 0; i + 1 < overrides.size(); i += 2) {
        auto it = std::find(args.begin(), args.end(), overrides[i]);
        if (it != args.end()) {
            *(it + 1) = overrides[i + 1];
        } else {
            args.push_back(overrides[i]);
            args.push_back(overrides[i + 1]);
        }
    }
    return args;
}

template <typename Pred> bool eventually(Pred pred, std::chrono::milliseconds limit = 3000ms) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(20ms);
    }
    return pred();
}

json events_of(http_client& ctl, const std::string& type) {
    json out = json::array();
    json all = ctl.get("/control/events").body_json()["events"];
    for (const auto& e : all) {
        if (e["type"] == type) {
            out.push_back(e);
        }
    }
    return out;
}

json sent_messages(http_client& ctl) { return ctl.get("/control/side-effects").body_json()["messages"]; }
std::int64_t credits_left(http_client& c) { return c.get("/v2/credits", key).body_json()["data"]["credits"]; }
std::string error_code(const http_result& r) { return r.body_json()["error"].value("code", ""); }
bool mentions(const http_result& r, const std::string& text) {
    return r.body_json()["error"].value("message", "").find(text) != std::string::npos;
}

struct fixture {
    sandbox_process sb;
    http_client c;
    http_client ctl;
    std::string account;
    std::vector<std::string> connections; // profile URLs, oldest connection first
    explicit fixture(std::vector<std::string> args)
        : sb(std::move(args)), c("127.0.0.1", sb.port()), ctl("127.0.0.1", sb.control_port()),
          account(login_account(c, key, "msg-token")) {
        auto list = c.v2(key, "network", account, "list_connections", {{"count", 100}}).body_json();
        for (const auto& x : list["data"]["connections"]) {
            connections.push_back(x["profile_url"]);
        }
    }
    http_result msg(const std::string& action, const json& params) {
        return c.v2(key, "messages", account, action, params);
    }
    // A world person who is not a connection of the account.
    std::string stranger() {
        std::set<std::string> known(connections.begin(), connections.end());
        json people = ctl.get("/control/people?offset=0&limit=50").body_json()["people"];
        for (const auto& p : people) {
            if (!known.contains(p["profile_url"])) {
                return p["profile_url"];
            }
        }
        throw std::runtime_error("no stranger in the first 50 people");
    }
    http_result trigger_reply(const std::string& url, const std::string& text) {
        return ctl.post(
            "/control/events",
            json{{"type", "message_received"}, {"account_id", account}, {"profile_url", url}, {"text", text}});
    }
};

TEST(SandboxMessages, SendIsRefusedToNonConnections) {
    fixture f(base_args());
    auto before = credits_left(f.c);
    auto r = f.msg("send", {{"profile_url", f.stranger()}, {"message_text", "hi"}});
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(error_code(r), "CHANNEL_ERROR");
    EXPECT_TRUE(mentions(r, "recipient is not a connection")) << r.body;
    EXPECT_EQ(r.body_json()["metadata"]["credits_consumed"], 0);
    EXPECT_EQ(credits_left(f.c), before);
    EXPECT_EQ(sent_messages(f.ctl).size(), 0u);
}

TEST(SandboxMessages, SendToAConnectionAppendsToOneConversation) {
    fixture f(base_args());
    ASSERT_EQ(f.connections.size(), 6u);
    auto r = f.msg("send", {{"profile_url", f.connections[0]}, {"message_text", "Hello!"}});
    ASSERT_EQ(r.status, 200) << r.body;
    auto j = r.body_json();
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    const auto& d = j["data"];
    EXPECT_TRUE(d["entityUrn"].is_string());
    EXPECT_TRUE(d["deliveredAt"].is_string());
    EXPECT_EQ(d["deliveredAt"].get<std::string>().back(), 'Z');
    std::string conversation_id = d["conversation_id"];

    auto second = f.msg("send", {{"conversation_id", conversation_id}, {"message_text", "Are you there?"}});
    ASSERT_EQ(second.status, 200) << second.body;
    EXPECT_EQ(second.body_json()["data"]["conversation_id"], conversation_id);
    EXPECT_NE(second.body_json()["data"]["entityUrn"], d["entityUrn"]);
    auto third = f.msg("send", {{"network_url", f.connections[0]}, {"message_text", "Third"}});
    EXPECT_EQ(third.body_json()["data"]["conversation_id"], conversation_id);

    auto records = sent_messages(f.ctl);
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records[0]["account_id"], f.account);
    EXPECT_EQ(records[0]["profile_url"], f.connections[0]);
    EXPECT_EQ(records[0]["text"], "Hello!");
    auto conv = f.msg("get_conversation", {{"conversation_id", conversation_id}}).body_json()["data"];
    EXPECT_EQ(conv["total_message_count"], 3);
}

TEST(SandboxMessages, MediaCostsTwoCredits) {
    fixture f(base_args());
    const auto& to = f.connections[1];
    auto cost = [&](const json& params) {
        auto before = credits_left(f.c);
        auto r = f.msg("send", params);
        EXPECT_EQ(r.status, 200) << params.dump() << " " << r.body;
        EXPECT_EQ(before - credits_left(f.c), r.body_json()["metadata"]["credits_consumed"].get<std::int64_t>());
        return r.body_json()["metadata"]["credits_consumed"].get<int>();
    };
    EXPECT_EQ(cost({{"profile_url", to}, {"message_text", "text only"}}), 1);
    EXPECT_EQ(cost({{"profile_url", to}, {"message_text", "see"}, {"media_link", "https://x.example/a.png"}}), 2);
    EXPECT_EQ(cost({{"profile_url", to}, {"media_file", {{"data", "aGVsbG8="}, {"filename", "hello.txt"}}}}), 2);
    EXPECT_EQ(cost({{"profile_url", to}, {"media_path", "/srv/files/deck.pdf"}}), 2);
    auto messages = f.msg("get_conversation", {{"profile_url", to}}).body_json()["data"]["messages"];
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_EQ(messages[0]["media"], "path:/srv/files/deck.pdf");
    EXPECT_EQ(messages[1]["media"], "file:hello.txt");
    EXPECT_EQ(messages[2]["media"], "https://x.example/a.png");
    EXPECT_TRUE(messages[3]["media"].is_null());
}

TEST(SandboxMessages, SendBadInputNamesTheParameter) {
    fixture f(base_args({"--message-max-chars", "20"}));
    const auto& to = f.connections[0];
    auto bad = [&](const json& params, const std::string& name) {
        auto r = f.msg("send", params);
        EXPECT_EQ(r.status, 400) << params.dump();
        EXPECT_EQ(error_code(r), "INVALID_PARAMS");
        EXPECT_TRUE(mentions(r, name)) << params.dump() << " -> " << r.body;
        EXPECT_EQ(r.body_json()["metadata"]["credits_consumed"], 0);
    };
    bad({{"message_text", "hi"}}, "params.profile_url");
    bad({{"profile_url", to}}, "params.message_text");
    bad({{"profile_url", to}, {"message_text", ""}}, "params.message_text");
    bad({{"profile_url", to}, {"message_text", std::string(21, 'a')}}, "params.message_text");
    bad({{"profile_url", to}, {"message_text", 5}}, "params.message_text");
    bad({{"profile_url", 5}, {"message_text", "hi"}}, "params.profile_url");
    bad({{"network_url", false}, {"message_text", "hi"}}, "params.network_url");
    bad({{"profile_url", "https://www.network.example/in/nobody-here-000"}, {"message_text", "hi"}},
        "profile not found");
    bad({{"conversation_id", 5}, {"message_text", "hi"}}, "params.conversation_id");
    bad({{"conversation_id", "urn:li:conversation:nope"}, {"message_text", "hi"}}, "params.conversation_id");
    bad({{"profile_url", to}, {"message_text", "hi"}, {"media_link", 5}}, "params.media_link");
    bad({{"profile_url", to}, {"message_text", "hi"}, {"media_link", "ftp://x.example/a"}}, "params.media_link");
    bad({{"profile_url", to}, {"media_file", "aGVsbG8="}}, "params.media_file");
    bad({{"profile_url", to}, {"media_file", {{"data", "!!!"}, {"filename", "a.png"}}}}, "params.media_file.data");
    bad({{"profile_url", to}, {"media_file", {{"data", "aGVsbG8="}}}}, "params.media_file.filename");
    bad({{"profile_url", to}, {"media_file", {{"data", 3}, {"filename", "a"}}}}, "params.media_file.data");
    bad({{"profile_url", to}, {"media_path", 5}}, "params.media_path");
    // Twenty characters, multi-byte, still fit.
    EXPECT_EQ(f.msg("send", {{"profile_url", to}, {"message_text", "éééééééééééééééééééé"}}).status, 200);
    // Conversation and profile naming two different people.
    std::string conv =
        f.msg("send", {{"profile_url", to}, {"message_text", "x"}}).body_json()["data"]["conversation_id"];
    bad({{"conversation_id", conv}, {"profile_url", f.connections[1]}, {"message_text", "hi"}},
        "params.conversation_id");
    EXPECT_EQ(sent_messages(f.ctl).size(), 2u);
    EXPECT_TRUE(f.sb.alive());
}

TEST(SandboxMessages, AConnectionRepliesWithAMessageEvent) {
    fixture f(base_args({"--reply-probability", "1"}));
    const auto& to = f.connections[2];
    auto r = f.msg("send", {{"profile_url", to}, {"message_text", "Quick question"}});
    ASSERT_EQ(r.status, 200);
    std::string conversation_id = r.body_json()["data"]["conversation_id"];
    // Two more messages while the reply is pending: still at most one reply.
    ASSERT_EQ(f.msg("send", {{"profile_url", to}, {"message_text", "Second"}}).status, 200);
    ASSERT_EQ(f.msg("send", {{"profile_url", to}, {"message_text", "Third"}}).status, 200);
    ASSERT_TRUE(eventually([&] { return events_of(f.ctl, "message").size() == 1; }));
    std::this_thread::sleep_for(300ms);
    auto events = events_of(f.ctl, "message");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events_of(f.ctl, "message_received").size(), 0u);
    const auto& ev = events[0]["payload"]["event"];
    EXPECT_EQ(ev["type"], "message");
    EXPECT_EQ(ev["sender_profile"], to);
    EXPECT_EQ(ev["conversation_id"], conversation_id);
    EXPECT_TRUE(ev["message_text"].is_string());
    EXPECT_FALSE(ev["message_text"].get<std::string>().empty());
    EXPECT_TRUE(ev["sender_name"].is_string());
    EXPECT_TRUE(ev["message_id"].is_string());
    EXPECT_EQ(events[0]["payload"]["account_id"], f.account);

    auto conv = f.msg("get_conversation", {{"conversation_id", conversation_id}}).body_json()["data"];
    ASSERT_EQ(conv["messages"].size(), 4u);
    EXPECT_EQ(conv["unread_count"], 1);
    const auto& newest = conv["messages"][0];
    EXPECT_EQ(newest["is_me"], false);
    EXPECT_EQ(newest["text"], ev["message_text"]);
    EXPECT_EQ(newest["entity_urn"], ev["message_id"]);
    EXPECT_EQ(newest["sender_info"]["profile_url"], to);

    // After the reply, the next message may draw a new one.
    ASSERT_EQ(f.msg("send", {{"profile_url", to}, {"message_text", "Thanks"}}).status, 200);
    EXPECT_TRUE(eventually([&] { return events_of(f.ctl, "message").size() == 2; }));
}

TEST(SandboxMessages, NobodyRepliesWithProbabilityZero) {
    fixture f(base_args());
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(
            f.msg("send", {{"profile_url", f.connections[static_cast<std::size_t>(i)]}, {"message_text", "hi"}}).status,
            200);
    }
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(events_of(f.ctl, "message").size(), 0u);
}

TEST(SandboxMessages, InboxIsNewestFirstWithCursors) {
    fixture f(base_args());
    std::vector<std::string> conversation_ids;
    for (std::size_t i = 0; i < 5; ++i) {
        auto r = f.msg("send", {{"profile_url", f.connections[i]}, {"message_text", "msg " + std::to_string(i)}});
        ASSERT_EQ(r.status, 200);
        conversation_ids.push_back(r.body_json()["data"]["conversation_id"]);
        std::this_thread::sleep_for(5ms); // distinct millisecond times
    }
    std::vector<std::string> seen;
    json cursor = nullptr;
    std::vector<std::size_t> page_sizes;
    for (int page = 0; page < 5; ++page) {
        json params = {{"count", 2}};
        if (!cursor.is_null()) {
            params["cursor"] = cursor;
        }
        auto r = f.msg("list_inbox", params);
        ASSERT_EQ(r.status, 200) << r.body;
        EXPECT_EQ(r.body_json()["metadata"]["credits_consumed"], 1);
        auto d = r.body_json()["data"];
        page_sizes.push_back(d["conversations"].size());
        EXPECT_EQ(d["total_results"], d["conversations"].size());
        for (const auto& c : d["conversations"]) {
            seen.push_back(c["conversation_id"]);
            EXPECT_EQ(c["type"], "normal");
            EXPECT_EQ(c["unread"], 0);
            EXPECT_TRUE(c["participant"]["profile_url"].is_string());
            EXPECT_TRUE(c["participant"]["name"].is_string());
            EXPECT_TRUE(c["last_message"]["time"].is_number_integer());
            EXPECT_GT(c["last_message"]["time"].get<std::int64_t>(), 1'600'000'000'000);
            EXPECT_EQ(c["last_message"]["sender"]["is_me"], true);
        }
        cursor = d["next_cursor"];
        if (cursor.is_null()) {
            break;
        }
        EXPECT_TRUE(cursor.is_string());
    }
    EXPECT_EQ(page_sizes, (std::vector<std::size_t>{2, 2, 1}));
    EXPECT_EQ(seen, (std::vector<std::string>(conversation_ids.rbegin(), conversation_ids.rend())));

    // New activity moves a conversation to the top.
    ASSERT_EQ(f.trigger_reply(f.connections[0], "Hi back").status, 200);
    auto top = f.msg("list_inbox", json::object()).body_json()["data"]["conversations"][0];
    EXPECT_EQ(top["conversation_id"], conversation_ids[0]);
    EXPECT_EQ(top["unread"], 1);
    EXPECT_EQ(top["last_message"]["text"], "Hi back");
    EXPECT_EQ(top["last_message"]["sender"]["is_me"], false);
    EXPECT_EQ(top["last_message"]["sender"]["profile_url"], f.connections[0]);
    auto unread = f.msg("list_inbox", {{"category", "unread"}}).body_json()["data"]["conversations"];
    ASSERT_EQ(unread.size(), 1u);
    EXPECT_EQ(unread[0]["conversation_id"], conversation_ids[0]);
    EXPECT_EQ(f.msg("list_inbox", {{"category", "ARCHIVE"}}).body_json()["data"]["conversations"].size(), 0u);
}

TEST(SandboxMessages, InboxBadInputNamesTheParameter) {
    fixture f(base_args());
    for (std::size_t i = 0; i < 3; ++i) {
        ASSERT_EQ(f.msg("send", {{"profile_url", f.connections[i]}, {"message_text", "x"}}).status, 200);
    }
    std::string cursor = f.msg("list_inbox", {{"count", 1}}).body_json()["data"]["next_cursor"];
    std::string tampered = cursor;
    tampered[20] = tampered[20] == '0' ? '1' : '0';
    for (const auto& [params, name] :
         std::vector<std::pair<json, std::string>>{{{{"cursor", "xyz"}}, "params.cursor"},
                                                   {{{"cursor", tampered}}, "params.cursor"},
                                                   {{{"cursor", 5}}, "params.cursor"},
                                                   {{{"count", 0}}, "params.count"},
                                                   {{{"count", 101}}, "params.count"},
                                                   {{{"count", "5"}}, "params.count"},
                                                   {{{"category", "SPAMMY"}}, "params.category"},
                                                   {{{"category", 1}}, "params.category"}}) {
        auto r = f.msg("list_inbox", params);
        EXPECT_EQ(r.status, 400) << params.dump();
        EXPECT_EQ(error_code(r), "INVALID_PARAMS");
        EXPECT_TRUE(mentions(r, name)) << params.dump() << " -> " << r.body;
    }
    // A cursor of another account is refused too.
    std::string other = login_account(f.c, key, "other-token");
    auto foreign = f.c.v2(key, "messages", other, "list_inbox", {{"cursor", cursor}});
    EXPECT_EQ(foreign.status, 400);
    EXPECT_EQ(f.msg("list_inbox", {{"cursor", cursor}, {"count", 5}}).body_json()["data"]["conversations"].size(), 2u);
}

TEST(SandboxMessages, GetConversationPagesNewestFirstAndMarksRead) {
    fixture f(base_args());
    const auto& to = f.connections[3];
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(f.msg("send", {{"profile_url", to}, {"message_text", "out " + std::to_string(i)}}).status, 200);
    }
    ASSERT_EQ(f.trigger_reply(to, "in 0").status, 200);
    ASSERT_EQ(f.trigger_reply(to, "in 1").status, 200);
    EXPECT_EQ(f.msg("list_inbox", json::object()).body_json()["data"]["conversations"][0]["unread"], 2);

    std::vector<std::string> texts;
    json cursor = nullptr;
    int calls = 0;
    json first_page;
    do {
        json params = {{"profile_url", to}, {"count", 2}};
        if (!cursor.is_null()) {
            params["cursor"] = cursor;
        }
        auto r = f.msg("get_conversation", params);
        ASSERT_EQ(r.status, 200) << r.body;
        EXPECT_EQ(r.body_json()["metadata"]["credits_consumed"], 1);
        auto d = r.body_json()["data"];
        if (calls == 0) {
            first_page = d;
        }
        for (const auto& m : d["messages"]) {
            texts.push_back(m["text"]);
            EXPECT_EQ(m["message_type"], "TEXT");
            EXPECT_TRUE(m["timestamp"].is_number_integer());
            EXPECT_TRUE(m["sender"].is_string());
            EXPECT_TRUE(m["entity_urn"].is_string());
        }
        cursor = d["next_cursor"];
        if (!cursor.is_null()) {
            EXPECT_EQ(cursor.get<std::string>().find_first_not_of("0123456789"), std::string::npos);
        }
    } while (!cursor.is_null() && ++calls < 10);
    EXPECT_EQ(texts, (std::vector<std::string>{"in 1", "in 0", "out 2", "out 1", "out 0"}));
    EXPECT_EQ(first_page["total_message_count"], 5);
    EXPECT_EQ(first_page["unread_count"], 2);
    EXPECT_EQ(first_page["last_seen_message"], false);
    EXPECT_TRUE(first_page["last_seen_at"].is_null());
    EXPECT_EQ(first_page["messages"][0]["is_me"], false);
    EXPECT_EQ(first_page["messages"][0]["sender_info"]["profile_url"], to);
    // Reading marked the conversation read.
    EXPECT_EQ(f.msg("list_inbox", json::object()).body_json()["data"]["conversations"][0]["unread"], 0);
    auto again = f.msg("get_conversation", {{"profile_url", to}, {"count", 1}}).body_json()["data"];
    EXPECT_EQ(again["unread_count"], 0);
    EXPECT_EQ(again["last_seen_message"], true);
    EXPECT_TRUE(again["last_seen_at"].is_number_integer());
}

TEST(SandboxMessages, GetConversationBadInputNamesTheParameter) {
    fixture f(base_args());
    std::string conv = f.msg("send", {{"profile_url", f.connections[0]}, {"message_text", "x"}})
                           .body_json()["data"]["conversation_id"];
    for (const auto& [params, name] : std::vector<std::pair<json, std::string>>{
             {json::object(), "params.profile_url"},
             {{{"conversation_id", "urn:li:conversation:unknown"}}, "params.conversation_id"},
             {{{"conversation_id", 7}}, "params.conversation_id"},
             {{{"profile_url", f.connections[1]}}, "no conversation"},
             {{{"profile_url", "nope"}}, "params.profile_url"},
             {{{"conversation_id", conv}, {"cursor", "abc"}}, "params.cursor"},
             {{{"conversation_id", conv}, {"cursor", "99"}}, "params.cursor"},
             {{{"conversation_id", conv}, {"cursor", 1}}, "params.cursor"},
             {{{"conversation_id", conv}, {"count", 0}}, "params.count"},
             {{{"conversation_id", conv}, {"count", true}}, "params.count"}}) {
        auto r = f.msg("get_conversation", params);
        EXPECT_EQ(r.status, 400) << params.dump();
        EXPECT_EQ(error_code(r), "INVALID_PARAMS");
        EXPECT_TRUE(mentions(r, name)) << params.dump() << " -> " << r.body;
        EXPECT_EQ(r.body_json()["metadata"]["credits_consumed"], 0);
    }
}

TEST(SandboxMessages, ControlMessageReceived) {
    fixture f(base_args());
    auto r = f.trigger_reply(f.connections[4], "Hello from the other side");
    ASSERT_EQ(r.status, 200) << r.body;
    auto events = events_of(f.ctl, "message");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0]["payload"]["event"]["message_text"], "Hello from the other side");
    EXPECT_EQ(events[0]["payload"]["event"]["sender_profile"], f.connections[4]);
    // The conversation exists now, unread, and the account can answer in it.
    auto inbox = f.msg("list_inbox", json::object()).body_json()["data"]["conversations"];
    ASSERT_EQ(inbox.size(), 1u);
    EXPECT_EQ(inbox[0]["unread"], 1);
    EXPECT_EQ(inbox[0]["conversation_id"], events[0]["payload"]["event"]["conversation_id"]);
    EXPECT_EQ(f.msg("send", {{"conversation_id", inbox[0]["conversation_id"]}, {"message_text", "Hi!"}}).status, 200);

    auto refused = f.trigger_reply(f.stranger(), "hi");
    EXPECT_EQ(refused.status, 409);
    EXPECT_NE(refused.body_json()["error"].get<std::string>().find("not a connection"), std::string::npos);
    // Without text the control interface supplies a default one.
    EXPECT_EQ(
        f.ctl
            .post("/control/events",
                  json{{"type", "message_received"}, {"account_id", f.account}, {"profile_url", f.connections[4]}})
            .status,
        200);
    EXPECT_EQ(events_of(f.ctl, "message").size(), 2u);
}

TEST(SandboxMessages, LostResponseStillSendsTheMessageOnce) {
    fixture f(base_args({"--lost-response-rate", "1"}));
    {
        http_client once("127.0.0.1", f.sb.port());
        EXPECT_THROW(once.v2(key, "messages", f.account, "send",
                             {{"profile_url", f.connections[0]}, {"message_text", "lost answer"}}),
                     std::runtime_error);
    }
    auto records = sent_messages(f.ctl);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0]["text"], "lost answer");
    // Refusals are answered normally: no effect, nothing lost.
    http_client c2("127.0.0.1", f.sb.port());
    auto refused = c2.v2(key, "messages", f.account, "send", {{"profile_url", f.stranger()}, {"message_text", "x"}});
    EXPECT_EQ(refused.status, 422);
}

} // namespace
