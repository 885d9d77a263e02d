// /v2/network of the sandbox over HTTP: the invitation state machine with every refusal, the
// simulated acceptances and their events, withdraw races, the weekly cap, the lost-response
// fault, received invitations, lists and their pagination, credits and bad input.
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

// Small delays and few seeded relations keep every test fast and its people predictable.
std::vector<std::string> base_args(const std::vector<std::string>& overrides = {}) {
    // A small world starts faster; the first 50 people are still mostly strangers.
    std::vector<std::string> args = {
        "--world-people", "2000", "--connections-per-account", "3", "--received-invitations-per-account", "2",
        "--accept-probability", "0", "--accept-delay-ms-min", "50", "--accept-delay-ms-max", "100"};
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

// Polls `pred` every 20 ms until it holds or `limit` passes.
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

json invitation_record(http_client& ctl, const std::string& account, const std::string& url) {
    json all = ctl.get("/control/side-effects").body_json()["invitations"];
    for (const auto& r : all) {
        if (r["account_id"] == account && r["profile_url"] == url) {
            return r;
        }
    }
    return nullptr;
}

std::int64_t credits_left(http_client& c) { return c.get("/v2/credits", key).body_json()["data"]["credits"]; }

// A text field of a result; pictures may be null for people without one.
bool text_field(const json& obj, const std::string& field) {
    auto it = obj.find(field);
    return it != obj.end() && (it->is_string() || (field.find("picture") != std::string::npos && it->is_null()));
}

std::string error_code(const http_result& r) { return r.body_json()["error"].value("code", ""); }
std::string error_message(const http_result& r) { return r.body_json()["error"].value("message", ""); }
bool mentions(const http_result& r, const std::string& text) {
    return error_message(r).find(text) != std::string::npos;
}

// Profile URLs of world people the account has no relation with yet.
std::vector<std::string> strangers(http_client& c, http_client& ctl, const std::string& account, std::size_t n) {
    std::set<std::string> related;
    json connections = c.v2(key, "network", account, "list_connections", {{"count", 100}}).body_json();
    for (const auto& x : connections["data"]["connections"]) {
        related.insert(x["profile_url"]);
    }
    json invitations = c.v2(key, "network", account, "list_invitations", {{"count", 100}}).body_json();
    for (const auto& x : invitations["data"]["invitations"]) {
        related.insert(x["sender"]["network_url"]);
    }
    std::vector<std::string> out;
    json people = ctl.get("/control/people?offset=0&limit=50").body_json()["people"];
    for (const auto& p : people) {
        if (out.size() < n && !related.contains(p["profile_url"])) {
            out.push_back(p["profile_url"]);
        }
    }
    if (out.size() < n) {
        throw std::runtime_error("not enough strangers in the first 50 people");
    }
    return out;
}

// The digits of `"invitation_id":<digits>` in a raw JSON body (empty when absent or quoted).
std::string raw_invitation_id(const std::string& body) {
    const std::string field = "\"invitation_id\":";
    auto pos = body.find(field);
    if (pos == std::string::npos) {
        return "";
    }
    pos += field.size();
    auto end = body.find_first_not_of("0123456789", pos);
    return body.substr(pos, end - pos);
}

struct fixture {
    sandbox_process sb;
    http_client c;
    http_client ctl;
    std::string account;
    explicit fixture(std::vector<std::string> args)
        : sb(std::move(args)), c("127.0.0.1", sb.port()), ctl("127.0.0.1", sb.control_port()),
          account(login_account(c, key, "net-token")) {}
    http_result net(const std::string& action, const json& params = json::object()) {
        return c.v2(key, "network", account, action, params);
    }
};

TEST(SandboxNetwork, InviteCreatesAPendingInvitationWithAnExactId) {
    fixture f(base_args());
    auto url = strangers(f.c, f.ctl, f.account, 1)[0];
    auto before = credits_left(f.c);
    auto r = f.net("invite", {{"profile_url", url}, {"message", "Hello there"}});
    ASSERT_EQ(r.status, 200) << r.body;
    auto j = r.body_json();
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits_left(f.c), before - 1);
    const auto& d = j["data"];
    std::string id = d["invitation_id"];
    ASSERT_EQ(id.size(), 19u);
    EXPECT_GT(std::stoull(id), 1ULL << 53);
    EXPECT_TRUE(d["invitation_urn"].get<std::string>().ends_with(id));
    EXPECT_EQ(url.substr(url.rfind('/') + 1), d["public_identifier"]);
    for (const char* field : {"profile_urn", "first_name", "last_name", "headline", "profile_picture_url"}) {
        EXPECT_TRUE(text_field(d, field)) << field;
    }

    // check_invitation carries the id as a bare JSON integer, digit for digit.
    auto check = f.net("check_invitation", {{"profile_url", url}});
    ASSERT_EQ(check.status, 200);
    EXPECT_EQ(raw_invitation_id(check.body), id);
    auto cj = check.body_json()["data"];
    EXPECT_EQ(cj["invitation_state"], "PENDING");
    EXPECT_EQ(cj["invitation_type"], "SENT");
    EXPECT_TRUE(cj["invitation_id"].is_number_unsigned());
    EXPECT_EQ(cj["invitation_id"].get<std::uint64_t>(), std::stoull(id));
    EXPECT_TRUE(cj["member_distance"] == 2 || cj["member_distance"] == 3);
    EXPECT_TRUE(cj["message"].is_string());
    EXPECT_EQ(check.body_json()["metadata"]["credits_consumed"], 1);

    // list_sent shows the same id as a string, and the urn ends with it.
    auto sent = f.net("list_sent").body_json()["data"];
    ASSERT_EQ(sent["invitations"].size(), 1u);
    EXPECT_EQ(sent["invitations"][0]["invitation_id"], id);
    EXPECT_TRUE(sent["invitations"][0]["entity_urn"].get<std::string>().ends_with(id));
    EXPECT_EQ(sent["invitations"][0]["recipient"]["network_url"], url);
    EXPECT_EQ(sent["invitations"][0]["invitation_type"], "CONNECTION");
    EXPECT_EQ(sent["invitation_type"], "CONNECTION");

    auto rec = invitation_record(f.ctl, f.account, url);
    EXPECT_EQ(rec["requests"], 1);
    EXPECT_EQ(rec["sent"], 1);
    EXPECT_EQ(rec["outcome"], "pending");
    EXPECT_EQ(rec["invitation_id"], id);
}

TEST(SandboxNetwork, InviteAcceptsIdentifierAndNetworkUrlAlias) {
    fixture f(base_args());
    auto urls = strangers(f.c, f.ctl, f.account, 2);
    auto by_alias = f.net("invite", {{"network_url", urls[0]}});
    ASSERT_EQ(by_alias.status, 200) << by_alias.body;
    std::string public_id = urls[1].substr(urls[1].rfind('/') + 1);
    auto by_id = f.net("invite", {{"identifier", public_id}});
    ASSERT_EQ(by_id.status, 200) << by_id.body;
    EXPECT_EQ(by_id.body_json()["data"]["public_identifier"], public_id);
    EXPECT_EQ(f.net("check_invitation", {{"network_url", urls[1]}}).body_json()["data"]["invitation_state"], "PENDING");
}

TEST(SandboxNetwork, InviteRefusalsCostNothingAndAreCounted) {
    fixture f(base_args({"--invitation-note-max-chars", "10"}));
    auto url = strangers(f.c, f.ctl, f.account, 1)[0];
    ASSERT_EQ(f.net("invite", {{"profile_url", url}}).status, 200);
    auto before = credits_left(f.c);

    auto again = f.net("invite", {{"profile_url", url}});
    EXPECT_EQ(again.status, 422);
    EXPECT_EQ(error_code(again), "CHANNEL_ERROR");
    EXPECT_TRUE(mentions(again, "an invitation to this person is already pending")) << again.body;
    EXPECT_EQ(again.body_json()["metadata"]["credits_consumed"], 0);

    auto connection = f.net("list_connections").body_json()["data"]["connections"][0]["profile_url"];
    auto connected = f.net("invite", {{"profile_url", connection}});
    EXPECT_EQ(connected.status, 422);
    EXPECT_EQ(error_code(connected), "CHANNEL_ERROR");
    EXPECT_TRUE(mentions(connected, "already connected")) << connected.body;

    auto sender = f.net("list_invitations").body_json()["data"]["invitations"][0]["sender"]["network_url"];
    auto received = f.net("invite", {{"profile_url", sender}});
    EXPECT_EQ(received.status, 422);
    EXPECT_EQ(error_code(received), "CHANNEL_ERROR");
    EXPECT_TRUE(mentions(received, "accept")) << received.body;

    // list_connections and list_invitations above cost 1 each; the refusals cost nothing.
    EXPECT_EQ(credits_left(f.c), before - 2);
    auto rec = invitation_record(f.ctl, f.account, url);
    EXPECT_EQ(rec["requests"], 2);
    EXPECT_EQ(rec["sent"], 1);
    EXPECT_EQ(rec["outcome"], "pending");
    auto refused = invitation_record(f.ctl, f.account, connection);
    EXPECT_EQ(refused["sent"], 0);
    EXPECT_EQ(refused["outcome"], "refused: already connected");

    auto stranger = strangers(f.c, f.ctl, f.account, 2)[1];
    auto long_note = f.net("invite", {{"profile_url", stranger}, {"message", "eleven char"}});
    EXPECT_EQ(long_note.status, 400);
    EXPECT_EQ(error_code(long_note), "INVALID_PARAMS");
    EXPECT_TRUE(mentions(long_note, "params.message")) << long_note.body;
    // Ten characters in UTF-8 multi-byte letters still fit.
    EXPECT_EQ(f.net("invite", {{"profile_url", stranger}, {"message", "éééééééééé"}}).status, 200);
}

TEST(SandboxNetwork, InviteBadInputNamesTheParameter) {
    fixture f(base_args());
    auto bad = [&](const json& params, const std::string& name) {
        auto r = f.net("invite", params);
        EXPECT_EQ(r.status, 400) << params.dump();
        EXPECT_EQ(error_code(r), "INVALID_PARAMS");
        EXPECT_TRUE(mentions(r, name)) << params.dump() << " -> " << r.body;
    };
    bad(json::object(), "params.profile_url");
    bad({{"profile_url", 5}}, "params.profile_url");
    bad({{"profile_url", ""}}, "params.profile_url");
    bad({{"network_url", json::array()}}, "params.network_url");
    bad({{"identifier", true}}, "params.identifier");
    bad({{"identifier", "nobody-here-000"}}, "profile not found");
    bad({{"profile_url", "https://elsewhere.example/x"}}, "params.profile_url");
    bad({{"profile_url", "https://www.network.example/in/nobody-here-000"}}, "profile not found");
    auto url = strangers(f.c, f.ctl, f.account, 1)[0];
    bad({{"profile_url", url}, {"message", 5}}, "params.message");
    EXPECT_TRUE(f.sb.alive());
    EXPECT_EQ(f.net("list_sent").body_json()["data"]["invitations"].size(), 0u);
}

TEST(SandboxNetwork, AcceptanceIsPublishedExactlyOnce) {
    fixture f(base_args({"--accept-probability", "1"}));
    auto url = strangers(f.c, f.ctl, f.account, 1)[0];
    auto r = f.net("invite", {{"profile_url", url}});
    ASSERT_EQ(r.status, 200);
    std::string id = r.body_json()["data"]["invitation_id"];
    ASSERT_TRUE(eventually([&] { return events_of(f.ctl, "accepted_invitation").size() == 1; }));
    std::this_thread::sleep_for(300ms);
    auto events = events_of(f.ctl, "accepted_invitation");
    ASSERT_EQ(events.size(), 1u);
    const auto& payload = events[0]["payload"];
    EXPECT_EQ(payload["account_id"], f.account);
    const auto& ev = payload["event"];
    EXPECT_EQ(ev["type"], "accepted_invitation");
    EXPECT_EQ(ev["profile_url"], url);
    EXPECT_EQ(ev["invitation_id"], id);
    EXPECT_EQ(ev["public_identifier"], url.substr(url.rfind('/') + 1));
    EXPECT_EQ(ev["name"], ev["first_name"].get<std::string>() + " " + ev["last_name"].get<std::string>());

    auto check = f.net("check_invitation", {{"profile_url", url}}).body_json()["data"];
    EXPECT_EQ(check["invitation_state"], "ACCEPTED");
    EXPECT_EQ(check["invitation_type"], "CONNECTED");
    EXPECT_EQ(check["member_distance"], 1);
    EXPECT_EQ(invitation_record(f.ctl, f.account, url)["outcome"], "accepted");
    EXPECT_EQ(f.net("list_sent").body_json()["data"]["invitations"].size(), 0u);
    auto connections = f.net("list_connections").body_json()["data"];
    EXPECT_EQ(connections["total_available_results"], 4);
    // Newest connection last (oldest first).
    EXPECT_EQ(connections["connections"][3]["profile_url"], url);
    // A connection cannot be withdrawn.
    auto w = f.net("withdraw", {{"invitation_id", id}});
    EXPECT_EQ(w.status, 400);
}

TEST(SandboxNetwork, NobodyAcceptsWithProbabilityZero) {
    fixture f(base_args());
    auto urls = strangers(f.c, f.ctl, f.account, 3);
    for (const auto& url : urls) {
        ASSERT_EQ(f.net("invite", {{"profile_url", url}}).status, 200);
    }
    std::this_thread::sleep_for(400ms);
    EXPECT_EQ(events_of(f.ctl, "accepted_invitation").size(), 0u);
    for (const auto& url : urls) {
        EXPECT_EQ(f.net("check_invitation", {{"profile_url", url}}).body_json()["data"]["invitation_state"], "PENDING");
    }
}

TEST(SandboxNetwork, WithdrawEndsTheInvitationAndAllowsAnotherLater) {
    fixture f(base_args());
    auto url = strangers(f.c, f.ctl, f.account, 1)[0];
    std::string id = f.net("invite", {{"profile_url", url}}).body_json()["data"]["invitation_id"];
    auto w = f.net("withdraw", {{"invitation_id", id}});
    ASSERT_EQ(w.status, 200) << w.body;
    EXPECT_EQ(w.body_json()["data"]["withdrawn"], true);
    EXPECT_EQ(w.body_json()["data"]["invitation_id"], id);
    EXPECT_EQ(w.body_json()["metadata"]["credits_consumed"], 1);
    auto check = f.net("check_invitation", {{"profile_url", url}}).body_json()["data"];
    EXPECT_EQ(check["invitation_state"], "NO_INVITATION");
    EXPECT_TRUE(check["invitation_type"].is_null());
    EXPECT_TRUE(check["invitation_id"].is_null());
    EXPECT_EQ(invitation_record(f.ctl, f.account, url)["outcome"], "withdrawn");

    auto twice = f.net("withdraw", {{"invitation_id", id}});
    EXPECT_EQ(twice.status, 400);
    EXPECT_EQ(error_code(twice), "INVALID_PARAMS");
    EXPECT_TRUE(mentions(twice, "params.invitation_id"));

    // Re-inviting is allowed at once; the new invitation has a new id, withdrawable as an integer.
    auto again = f.net("invite", {{"profile_url", url}});
    ASSERT_EQ(again.status, 200);
    std::string id2 = again.body_json()["data"]["invitation_id"];
    EXPECT_NE(id2, id);
    auto by_number = f.c.request("POST", "/v2/network",
                                 "{\"account_id\":\"" + f.account +
                                     "\",\"action\":\"withdraw\",\"params\":{\"invitation_id\":" + id2 + "}}",
                                 {{"x-api-key", key}});
    EXPECT_EQ(by_number.status, 200) << by_number.body;
    auto rec = invitation_record(f.ctl, f.account, url);
    EXPECT_EQ(rec["requests"], 2);
    EXPECT_EQ(rec["sent"], 2);
}

TEST(SandboxNetwork, WithdrawBadInputNamesInvitationId) {
    fixture f(base_args());
    for (const json& params :
         {json::object(), json{{"invitation_id", 1.5}}, json{{"invitation_id", true}}, json{{"invitation_id", "abc"}},
          json{{"invitation_id", ""}}, json{{"invitation_id", -4}}, json{{"invitation_id", "7000000000000000001"}}}) {
        auto r = f.net("withdraw", params);
        EXPECT_EQ(r.status, 400) << params.dump();
        EXPECT_EQ(error_code(r), "INVALID_PARAMS");
        EXPECT_TRUE(mentions(r, "params.invitation_id")) << r.body;
    }
    // A received invitation's id is not withdrawable.
    auto sender = f.net("list_invitations").body_json()["data"]["invitations"][0];
    auto r = f.net("withdraw", {{"invitation_id", sender["invitation_id"]}});
    EXPECT_EQ(r.status, 400);
    EXPECT_TRUE(mentions(r, "decline")) << r.body;
}

TEST(SandboxNetwork, WithdrawBeforeTheTimerFiresPreventsTheAcceptance) {
    fixture f(base_args({"--accept-probability", "1", "--accept-delay-ms-min", "250", "--accept-delay-ms-max", "300"}));
    auto urls = strangers(f.c, f.ctl, f.account, 2);
    std::string id = f.net("invite", {{"profile_url", urls[0]}}).body_json()["data"]["invitation_id"];
    ASSERT_EQ(f.net("withdraw", {{"invitation_id", id}}).status, 200);

    // Same person: withdraw then invite again before the first timer fires. The old timer must
    // not accept the new invitation; the new one is accepted once, by its own timer.
    std::string first = f.net("invite", {{"profile_url", urls[1]}}).body_json()["data"]["invitation_id"];
    ASSERT_EQ(f.net("withdraw", {{"invitation_id", first}}).status, 200);
    std::string second = f.net("invite", {{"profile_url", urls[1]}}).body_json()["data"]["invitation_id"];
    ASSERT_TRUE(eventually([&] { return events_of(f.ctl, "accepted_invitation").size() == 1; }));
    std::this_thread::sleep_for(400ms);
    auto events = events_of(f.ctl, "accepted_invitation");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0]["payload"]["event"]["profile_url"], urls[1]);
    EXPECT_EQ(events[0]["payload"]["event"]["invitation_id"], second);
    EXPECT_EQ(f.net("check_invitation", {{"profile_url", urls[0]}}).body_json()["data"]["invitation_state"],
              "NO_INVITATION");
}

TEST(SandboxNetwork, WeeklyCapAnswers429WithRetryAfter) {
    fixture f(base_args({"--weekly-invitation-cap", "3"}));
    auto urls = strangers(f.c, f.ctl, f.account, 5);
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(f.net("invite", {{"profile_url", urls[static_cast<std::size_t>(i)]}}).status, 200);
    }
    auto before = credits_left(f.c);
    auto capped = f.net("invite", {{"profile_url", urls[3]}});
    EXPECT_EQ(capped.status, 429);
    EXPECT_EQ(error_code(capped), "RATE_LIMITED");
    EXPECT_EQ(error_message(capped), "weekly invitation limit of 3 reached for account " + f.account);
    EXPECT_EQ(capped.body_json()["metadata"]["credits_consumed"], 0);
    auto retry_after = std::stoll(capped.header("retry-after"));
    EXPECT_GT(retry_after, 7 * 24 * 3600 - 60);
    EXPECT_LE(retry_after, 7 * 24 * 3600);
    EXPECT_EQ(credits_left(f.c), before);
    EXPECT_EQ(invitation_record(f.ctl, f.account, urls[3])["sent"], 0);

    // Withdrawn invitations still count against the week.
    std::string id = f.net("list_sent").body_json()["data"]["invitations"][0]["invitation_id"];
    ASSERT_EQ(f.net("withdraw", {{"invitation_id", id}}).status, 200);
    EXPECT_EQ(f.net("invite", {{"profile_url", urls[4]}}).status, 429);

    // Without Retry-After when the setting is off.
    ASSERT_EQ(f.ctl.post("/control/settings", json{{"retry_after", false}}).status, 200);
    auto plain = f.net("invite", {{"profile_url", urls[4]}});
    EXPECT_EQ(plain.status, 429);
    EXPECT_EQ(plain.header("retry-after"), "");
}

TEST(SandboxNetwork, LostResponseCreatesTheInvitationOnce) {
    fixture f(base_args({"--lost-response-rate", "1"}));
    auto url = strangers(f.c, f.ctl, f.account, 1)[0];
    {
        // A fresh connection: the client sees the drop instead of retrying on its own.
        http_client once("127.0.0.1", f.sb.port());
        EXPECT_THROW(once.v2(key, "network", f.account, "invite", {{"profile_url", url}}), std::runtime_error);
    }
    auto rec = invitation_record(f.ctl, f.account, url);
    EXPECT_EQ(rec["requests"], 1);
    EXPECT_EQ(rec["sent"], 1);
    EXPECT_EQ(rec["outcome"], "pending");

    http_client retry("127.0.0.1", f.sb.port());
    auto again = retry.v2(key, "network", f.account, "invite", {{"profile_url", url}});
    EXPECT_EQ(again.status, 422);
    EXPECT_TRUE(mentions(again, "already pending"));
    rec = invitation_record(f.ctl, f.account, url);
    EXPECT_EQ(rec["requests"], 2);
    EXPECT_EQ(rec["sent"], 1);
    // The lost answer was still charged: the invitation exists.
    auto keys = f.ctl.get("/control/credits").body_json()["keys"];
    EXPECT_EQ(keys[0]["charged_by_action"]["invite"], 1);
}

TEST(SandboxNetwork, InsufficientCreditsCreateNothing) {
    fixture f(base_args());
    auto url = strangers(f.c, f.ctl, f.account, 1)[0];
    ASSERT_EQ(f.ctl.post("/control/credits", json{{"key", key}, {"credits", 0}}).status, 200);
    auto r = f.net("invite", {{"profile_url", url}});
    EXPECT_EQ(r.status, 402);
    EXPECT_EQ(error_code(r), "INSUFFICIENT_CREDITS");
    auto rec = invitation_record(f.ctl, f.account, url);
    EXPECT_EQ(rec["requests"], 1);
    EXPECT_EQ(rec["sent"], 0);
    EXPECT_EQ(rec["outcome"], "refused: insufficient credits");
    ASSERT_EQ(f.ctl.post("/control/credits", json{{"key", key}, {"credits", 10}}).status, 200);
    EXPECT_EQ(f.net("check_invitation", {{"profile_url", url}}).body_json()["data"]["invitation_state"],
              "NO_INVITATION");
}

TEST(SandboxNetwork, CreditsPerAction) {
    fixture f(base_args({"--connections-per-account", "25"}));
    auto cost = [&](const std::string& action, const json& params) {
        auto before = credits_left(f.c);
        auto r = f.net(action, params);
        EXPECT_EQ(r.status, 200) << action << " " << r.body;
        std::int64_t reported = r.body_json()["metadata"]["credits_consumed"];
        EXPECT_EQ(before - credits_left(f.c), reported) << action;
        return reported;
    };
    auto url = strangers(f.c, f.ctl, f.account, 1)[0];
    EXPECT_EQ(cost("invite", {{"profile_url", url}}), 1);
    EXPECT_EQ(cost("check_invitation", {{"profile_url", url}}), 1);
    EXPECT_EQ(cost("list_sent", {{"count", 10}}), 1);
    EXPECT_EQ(cost("list_connections", {{"count", 25}}), 3);
    EXPECT_EQ(cost("list_connections", {{"count", 10}}), 1);
    EXPECT_EQ(cost("list_connections", {{"count", 11}}), 2);
    EXPECT_EQ(cost("recommendations", {{"count", 21}}), 3);
    EXPECT_EQ(cost("list_invitations", {{"invitation_type", "ORGANIZATION"}}), 1);
    auto invitations = f.net("list_invitations").body_json()["data"]["invitations"];
    EXPECT_EQ(cost("accept",
                   {{"shared_secret", invitations[0]["shared_secret"]}, {"entity_urn", invitations[0]["entity_urn"]}}),
              1);
    EXPECT_EQ(cost("decline",
                   {{"shared_secret", invitations[1]["shared_secret"]}, {"entity_urn", invitations[1]["entity_urn"]}}),
              1);
    std::string id = f.net("list_sent").body_json()["data"]["invitations"][0]["invitation_id"];
    EXPECT_EQ(cost("withdraw", {{"invitation_id", id}}), 1);
}

TEST(SandboxNetwork, AcceptAndDeclineReceivedInvitations) {
    fixture f(base_args({"--received-invitations-per-account", "4"}));
    auto list = f.net("list_invitations").body_json()["data"];
    ASSERT_EQ(list["invitations"].size(), 4u);
    EXPECT_EQ(list["total_available_results"], 4);
    for (const auto& inv : list["invitations"]) {
        EXPECT_TRUE(inv["shared_secret"].is_string());
        EXPECT_TRUE(inv["entity_urn"].is_string());
        EXPECT_EQ(inv["invitation_type"], "CONNECTION");
        EXPECT_TRUE(inv["sent_time"].is_string());
        EXPECT_GE(inv["sent_time_days"].get<int>(), 0);
        for (const char* field : {"first_name", "last_name", "headline", "network_url", "profile_picture_url"}) {
            EXPECT_TRUE(text_field(inv["sender"], field)) << field;
        }
    }
    const auto& a = list["invitations"][0];
    const auto& d = list["invitations"][1];
    auto check_a = f.net("check_invitation", {{"profile_url", a["sender"]["network_url"]}});
    EXPECT_EQ(check_a.body_json()["data"]["invitation_type"], "RECEIVED");
    EXPECT_EQ(raw_invitation_id(check_a.body), a["invitation_id"].get<std::string>());

    auto wrong_secret = f.net("accept", {{"shared_secret", "nope"}, {"entity_urn", a["entity_urn"]}});
    EXPECT_EQ(wrong_secret.status, 400);
    EXPECT_TRUE(mentions(wrong_secret, "params.shared_secret"));
    auto unknown = f.net("accept", {{"shared_secret", a["shared_secret"]}, {"entity_urn", "urn:li:invitation:1"}});
    EXPECT_EQ(unknown.status, 400);
    EXPECT_TRUE(mentions(unknown, "params.entity_urn"));
    for (const json& params : {json::object(), json{{"shared_secret", 1}, {"entity_urn", a["entity_urn"]}},
                               json{{"shared_secret", a["shared_secret"]}, {"entity_urn", json::array()}}}) {
        auto r = f.net("decline", params);
        EXPECT_EQ(r.status, 400) << params.dump();
        EXPECT_TRUE(mentions(r, "params.")) << r.body;
    }

    auto ok = f.net("accept", {{"shared_secret", a["shared_secret"]}, {"entity_urn", a["entity_urn"]}});
    ASSERT_EQ(ok.status, 200) << ok.body;
    EXPECT_EQ(ok.body_json()["data"], json::object());
    EXPECT_EQ(f.net("check_invitation", {{"profile_url", a["sender"]["network_url"]}})
                  .body_json()["data"]["invitation_state"],
              "ACCEPTED");
    auto again = f.net("accept", {{"shared_secret", a["shared_secret"]}, {"entity_urn", a["entity_urn"]}});
    EXPECT_EQ(again.status, 400);
    EXPECT_TRUE(mentions(again, "already accepted"));

    auto no = f.net("decline", {{"shared_secret", d["shared_secret"]}, {"entity_urn", d["entity_urn"]}});
    ASSERT_EQ(no.status, 200) << no.body;
    EXPECT_EQ(no.body_json()["data"]["status"], "declined");
    EXPECT_TRUE(no.body_json()["data"]["message"].is_string());
    auto no_again = f.net("decline", {{"shared_secret", d["shared_secret"]}, {"entity_urn", d["entity_urn"]}});
    EXPECT_EQ(no_again.status, 400);
    EXPECT_EQ(f.net("check_invitation", {{"profile_url", d["sender"]["network_url"]}})
                  .body_json()["data"]["invitation_state"],
              "NO_INVITATION");

    EXPECT_EQ(f.net("list_invitations").body_json()["data"]["invitations"].size(), 2u);
    EXPECT_EQ(f.net("list_connections").body_json()["data"]["total_available_results"], 4);
    // No event: accepted_invitation is about invitations the account sent.
    EXPECT_EQ(events_of(f.ctl, "accepted_invitation").size(), 0u);
}

TEST(SandboxNetwork, ListConnectionsPaginatesInAStableOrder) {
    fixture f(base_args({"--connections-per-account", "25", "--received-invitations-per-account", "0"}));
    std::vector<std::string> seen;
    std::string last_connected_at;
    std::size_t offset = 0;
    for (int page = 0; page < 3; ++page) {
        auto r = f.net("list_connections", {{"count", 10}, {"offset", offset}}).body_json();
        const auto& d = r["data"];
        std::size_t expected = page < 2 ? 10 : 5;
        ASSERT_EQ(d["connections"].size(), expected);
        EXPECT_EQ(d["total_results"], expected);
        EXPECT_EQ(d["total_available_results"], 25);
        EXPECT_EQ(d["pagination"]["offset"], offset);
        EXPECT_EQ(d["pagination"]["has_more"], page < 2);
        EXPECT_EQ(d["pagination"]["next_offset"], offset + expected);
        EXPECT_EQ(d["pagination"]["results_per_page"], 10);
        EXPECT_EQ(d["pagination"]["pages_fetched"], 1);
        for (const auto& x : d["connections"]) {
            for (const char* field : {"name", "job_title", "profile_url", "profile_picture", "connected_at"}) {
                EXPECT_TRUE(text_field(x, field)) << field;
            }
            EXPECT_GE(x["connected_at"].get<std::string>(), last_connected_at);
            last_connected_at = x["connected_at"];
            seen.push_back(x["profile_url"]);
        }
        offset = d["pagination"]["next_offset"];
    }
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 25u);
    auto past_end = f.net("list_connections", {{"offset", 100}}).body_json()["data"];
    EXPECT_EQ(past_end["connections"].size(), 0u);
    EXPECT_EQ(past_end["pagination"]["has_more"], false);
    EXPECT_EQ(f.net("list_connections", {{"count", 10}}).body_json()["data"]["connections"][0]["profile_url"], seen[0]);
}

TEST(SandboxNetwork, ListBadInputNamesTheParameter) {
    fixture f(base_args());
    for (const char* action : {"list_connections", "list_invitations", "list_sent"}) {
        for (const auto& [params, name] :
             std::vector<std::pair<json, std::string>>{{{{"count", 0}}, "params.count"},
                                                       {{{"count", 101}}, "params.count"},
                                                       {{{"count", "10"}}, "params.count"},
                                                       {{{"offset", -1}}, "params.offset"},
                                                       {{{"offset", 1.5}}, "params.offset"}}) {
            auto r = f.net(action, params);
            EXPECT_EQ(r.status, 400) << action << " " << params.dump();
            EXPECT_TRUE(mentions(r, name)) << action << " " << r.body;
        }
    }
    for (const char* action : {"list_invitations", "list_sent"}) {
        EXPECT_TRUE(mentions(f.net(action, {{"invitation_type", "PEOPLE"}}), "params.invitation_type"));
        EXPECT_TRUE(mentions(f.net(action, {{"invitation_type", 3}}), "params.invitation_type"));
        auto other = f.net(action, {{"invitation_type", "CONTENT_SERIES"}}).body_json()["data"];
        EXPECT_EQ(other["invitations"].size(), 0u);
        EXPECT_EQ(other["total_available_results"], 0);
    }
    EXPECT_TRUE(mentions(f.net("recommendations", {{"count", 0}}), "params.count"));
    EXPECT_TRUE(mentions(f.net("recommendations", {{"count", "a"}}), "params.count"));
}

TEST(SandboxNetwork, ListSentPaginates) {
    fixture f(base_args());
    auto urls = strangers(f.c, f.ctl, f.account, 12);
    for (const auto& url : urls) {
        ASSERT_EQ(f.net("invite", {{"profile_url", url}}).status, 200);
    }
    auto first = f.net("list_sent", {{"count", 5}}).body_json()["data"];
    EXPECT_EQ(first["invitations"].size(), 5u);
    EXPECT_EQ(first["total_available_results"], 12);
    EXPECT_EQ(first["pagination"]["has_more"], true);
    EXPECT_EQ(first["pagination"]["next_offset"], 5);
    auto last = f.net("list_sent", {{"count", 5}, {"offset", 10}}).body_json()["data"];
    EXPECT_EQ(last["invitations"].size(), 2u);
    EXPECT_EQ(last["pagination"]["has_more"], false);
    std::set<std::string> ids;
    for (int offset : {0, 5, 10}) {
        json page = f.net("list_sent", {{"count", 5}, {"offset", offset}}).body_json()["data"]["invitations"];
        for (const auto& inv : page) {
            ids.insert(inv["invitation_id"].get<std::string>());
        }
    }
    EXPECT_EQ(ids.size(), 12u);
}

TEST(SandboxNetwork, RecommendationsSkipRelatedPeopleAndAreStable) {
    fixture f(base_args());
    auto first = f.net("recommendations", {{"count", 5}});
    ASSERT_EQ(first.status, 200) << first.body;
    auto results = first.body_json()["data"]["results"];
    ASSERT_EQ(results.size(), 5u);
    EXPECT_EQ(f.net("recommendations", {{"count", 5}}).body_json()["data"]["results"], results);
    for (const auto& p : results) {
        for (const char* field : {"public_id", "first_name", "last_name", "network_url", "profile_picture_url"}) {
            EXPECT_TRUE(text_field(p, field)) << field;
        }
        auto check = f.net("check_invitation", {{"profile_url", p["network_url"]}}).body_json()["data"];
        EXPECT_EQ(check["invitation_state"], "NO_INVITATION");
    }
    ASSERT_EQ(f.net("invite", {{"profile_url", results[0]["network_url"]}}).status, 200);
    auto after = f.net("recommendations", {{"count", 5}}).body_json()["data"]["results"];
    for (const auto& p : after) {
        EXPECT_NE(p["network_url"], results[0]["network_url"]);
    }
    EXPECT_EQ(after[0], results[1]);
}

TEST(SandboxNetwork, CheckInvitationInputs) {
    fixture f(base_args());
    auto bad = [&](const json& params, const std::string& text) {
        auto r = f.net("check_invitation", params);
        EXPECT_EQ(r.status, 400) << params.dump();
        EXPECT_EQ(error_code(r), "INVALID_PARAMS");
        EXPECT_TRUE(mentions(r, text)) << r.body;
        EXPECT_EQ(r.body_json()["metadata"]["credits_consumed"], 0);
    };
    bad(json::object(), "params.profile_url");
    bad({{"profile_url", 12}}, "params.profile_url");
    bad({{"network_url", json::object()}}, "params.network_url");
    bad({{"profile_url", "not a url"}}, "params.profile_url");
    bad({{"profile_url", "https://www.network.example/in/nobody-here-000"}}, "profile not found");
    auto url = strangers(f.c, f.ctl, f.account, 1)[0];
    auto r = f.net("check_invitation", {{"profile_url", url}});
    ASSERT_EQ(r.status, 200);
    auto d = r.body_json()["data"];
    EXPECT_EQ(d["invitation_state"], "NO_INVITATION");
    EXPECT_TRUE(d["invitation_id"].is_null());
    // member_distance is deterministic.
    EXPECT_EQ(f.net("check_invitation", {{"profile_url", url}}).body_json()["data"]["member_distance"],
              d["member_distance"]);
}

TEST(SandboxNetwork, ControlTriggers) {
    fixture f(base_args({"--accept-probability", "1", "--accept-delay-ms-min", "250", "--accept-delay-ms-max", "300"}));
    auto urls = strangers(f.c, f.ctl, f.account, 3);
    auto trigger = [&](const std::string& type, const std::string& url) {
        return f.ctl.post("/control/events", json{{"type", type}, {"account_id", f.account}, {"profile_url", url}});
    };
    // Nothing pending: no acceptance possible.
    auto none = trigger("accepted_invitation", urls[0]);
    EXPECT_EQ(none.status, 409);
    EXPECT_NE(none.body_json()["error"].get<std::string>().find("no pending invitation"), std::string::npos);

    // Accepted through the control interface before the timer: one event, not two.
    ASSERT_EQ(f.net("invite", {{"profile_url", urls[0]}}).status, 200);
    EXPECT_EQ(trigger("accepted_invitation", urls[0]).status, 200);
    EXPECT_EQ(trigger("accepted_invitation", urls[0]).status, 409);
    std::this_thread::sleep_for(450ms);
    EXPECT_EQ(events_of(f.ctl, "accepted_invitation").size(), 1u);
    EXPECT_EQ(f.net("check_invitation", {{"profile_url", urls[0]}}).body_json()["data"]["invitation_state"],
              "ACCEPTED");

    // A received invitation appears in list_invitations and can be accepted.
    EXPECT_EQ(trigger("invitation_received", urls[1]).status, 200);
    EXPECT_EQ(trigger("invitation_received", urls[1]).status, 409);
    EXPECT_EQ(trigger("invitation_received", urls[0]).status, 409); // already connected
    ASSERT_EQ(f.net("invite", {{"profile_url", urls[2]}}).status, 200);
    EXPECT_EQ(trigger("invitation_received", urls[2]).status, 409); // the account invited them
    auto check = f.net("check_invitation", {{"profile_url", urls[1]}}).body_json()["data"];
    EXPECT_EQ(check["invitation_state"], "PENDING");
    EXPECT_EQ(check["invitation_type"], "RECEIVED");
    auto list = f.net("list_invitations").body_json()["data"]["invitations"];
    ASSERT_EQ(list.size(), 3u);
    // Newest first.
    EXPECT_EQ(list[0]["sender"]["network_url"], urls[1]);
    auto ok = f.net("accept", {{"shared_secret", list[0]["shared_secret"]}, {"entity_urn", list[0]["entity_urn"]}});
    EXPECT_EQ(ok.status, 200);
    EXPECT_EQ(trigger("accepted_invitation", "https://www.network.example/in/nobody-here-000").status, 404);
}

TEST(SandboxNetwork, SeedingIsDeterministic) {
    auto args = base_args({"--connections-per-account", "7", "--received-invitations-per-account", "3"});
    json first;
    for (int run = 0; run < 2; ++run) {
        fixture f(args);
        auto connections = f.net("list_connections", {{"count", 100}}).body_json()["data"];
        auto received = f.net("list_invitations", {{"count", 100}}).body_json()["data"];
        EXPECT_EQ(connections["total_available_results"], 7);
        EXPECT_EQ(received["total_available_results"], 3);
        json urls = json::array();
        for (const auto& x : connections["connections"]) {
            urls.push_back(x["profile_url"]);
            EXPECT_LT(x["connected_at"].get<std::string>(),
                      f.c.get("/v2/accounts/" + f.account, key).body_json()["data"]["created_at"].get<std::string>());
        }
        if (run == 0) {
            first = urls;
        } else {
            EXPECT_EQ(urls, first);
        }
    }
}

} // namespace
