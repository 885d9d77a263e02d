// The outreach client against the real sandbox: POST /messages/send and the V1 webhook-account
// calls, with their typed results, the parsing of what V1 accounts deliver (QR codes, events),
// and the mapping of V1 errors ({status: "error", code} with HTTP 200) to dispositions.
#include "tests/integration/sandbox_client_common.hpp"
#include "tests/support/test_receiver.hpp"

using namespace orch::test;
using namespace orch::outreach;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> fast_qr = {"--qr-refresh-ms", "200"};

webhook_account_create_params network_params(const std::string& token) {
    webhook_account_create_params p;
    p.platform = platform::network;
    p.account_name = "client " + token;
    p.webhook_url = "http://127.0.0.1:9/hook";
    p.login_token = token;
    return p;
}

webhook_account_create_params messaging_params(const std::string& phone) {
    webhook_account_create_params p;
    p.platform = platform::messaging;
    p.account_name = "client " + phone;
    p.webhook_url = "http://127.0.0.1:9/hook";
    p.phone_number = phone;
    return p;
}

void scan(client_fixture& f, const std::string& id) {
    auto r = f.control.post("/control/v1-accounts/" + id + "/scan", json::object());
    ASSERT_EQ(r.status, 200) << r.body;
}

// A V1 error as the client reports it: kind v1_error, the API's code, HTTP 200, nothing done.
void expect_v1_error(const error& e, const std::string& code, disposition what_to_do) {
    EXPECT_EQ(e.kind, error_kind::v1_error) << describe(e);
    EXPECT_EQ(e.code, code) << describe(e);
    EXPECT_EQ(e.http_status, 200) << describe(e);
    EXPECT_EQ(e.what_to_do, what_to_do) << describe(e);
    EXPECT_FALSE(e.may_have_taken_effect) << describe(e);
}

std::int64_t credits(client_fixture& f) {
    auto c = f.run(f.api->get_credits());
    EXPECT_TRUE(c) << describe(c.error());
    return c ? c->credits : -1;
}

TEST(SandboxClientV1, NetworkWebhookAccountLifecycle) {
    client_fixture f(fast_qr);
    auto created = f.run(f.api->create_webhook_account(network_params("cli-tok")));
    ASSERT_TRUE(created) << describe(created.error());
    const webhook_account a = created->account;
    EXPECT_FALSE(a.id.empty());
    EXPECT_EQ(a.platform, "network");
    EXPECT_EQ(a.account_name, "client cli-tok");
    EXPECT_EQ(a.webhook_url, "http://127.0.0.1:9/hook");
    EXPECT_EQ(a.login_token, "cli-tok");
    EXPECT_EQ(a.country, "FR");
    EXPECT_EQ(a.is_active, false);
    EXPECT_FALSE(a.is_authenticated) << "messaging only";
    EXPECT_FALSE(a.needs_qr) << "messaging only";
    ASSERT_TRUE(a.created_at);
    ASSERT_TRUE(a.updated_at);

    auto list = f.run(f.api->list_webhook_accounts());
    ASSERT_TRUE(list) << describe(list.error());
    ASSERT_EQ(list->accounts.size(), 1u);
    EXPECT_EQ(list->accounts[0].id, a.id);
    auto got = f.run(f.api->get_webhook_account(a.id));
    ASSERT_TRUE(got) << describe(got.error());
    EXPECT_EQ(got->account.login_token, "cli-tok");

    webhook_account_update_params up;
    up.account_name = "renamed";
    up.country = "de";
    auto updated = f.run(f.api->update_webhook_account(a.id, up));
    ASSERT_TRUE(updated) << describe(updated.error());
    EXPECT_EQ(updated->account.account_name, "renamed");
    EXPECT_EQ(updated->account.country, "DE");
    EXPECT_EQ(updated->account.login_token, "cli-tok");
    ASSERT_TRUE(updated->account.updated_at);
    EXPECT_GE(*updated->account.updated_at, *a.created_at);

    auto before = credits(f);
    auto started = f.run(f.api->start_webhook_account(a.id));
    ASSERT_TRUE(started) << describe(started.error());
    EXPECT_FALSE(started->status_message.empty());
    EXPECT_EQ(started->raw.value("is_active", false), true);
    EXPECT_EQ(started->raw.value("credits_cost", -1), 10) << "top-level fields are kept next to data";
    EXPECT_EQ(credits(f), before - 10);

    auto stopped = f.run(f.api->stop_webhook_account(a.id));
    ASSERT_TRUE(stopped) << describe(stopped.error());
    EXPECT_EQ(stopped->account_id, a.id);
    EXPECT_EQ(stopped->is_active, false);
    EXPECT_FALSE(stopped->status_message.empty());
    EXPECT_EQ(credits(f), before - 10) << "the day stays charged";

    auto deleted = f.run(f.api->delete_webhook_account(a.id));
    ASSERT_TRUE(deleted) << describe(deleted.error());
    EXPECT_EQ(deleted->raw.value("deleted", false), true);
    auto gone = f.run(f.api->get_webhook_account(a.id));
    ASSERT_FALSE(gone);
    expect_v1_error(gone.error(), "NOT_FOUND", disposition::give_up);
}

TEST(SandboxClientV1, MessagingAccountQrCodesScanAndSend) {
    client_fixture f(fast_qr);
    test_receiver rx;
    auto p = messaging_params("+33612345678");
    p.webhook_url = rx.url("/events");
    p.qr_webhook_url = rx.url("/qr");
    auto created = f.run(f.api->create_webhook_account(p));
    ASSERT_TRUE(created) << describe(created.error());
    const webhook_account a = created->account;
    EXPECT_EQ(a.platform, "messaging");
    EXPECT_EQ(a.is_authenticated, false);
    EXPECT_EQ(a.needs_qr, true);
    EXPECT_EQ(a.is_active, false);
    EXPECT_EQ(a.phone_number, "+33612345678");
    EXPECT_EQ(a.qr_webhook_url, rx.url("/qr"));
    EXPECT_TRUE(a.login_token.empty());

    // A QR notification parses as an event of a type the client does not know, kept raw.
    ASSERT_TRUE(rx.wait_for(1, 2s));
    auto qr = parse_webhook_event(std::string_view(rx.requests()[0].body));
    ASSERT_TRUE(qr) << describe(qr.error());
    EXPECT_EQ(qr->type, event_type::unknown);
    EXPECT_EQ(qr->type_name, "qr_code");
    EXPECT_EQ(qr->account_id, a.id);
    EXPECT_TRUE(qr->raw["event"]["qr_code"].is_string());

    // Not scanned yet: the account cannot send.
    auto early = f.run(f.api->messaging_send({a.id, "33698765432", "too early", std::nullopt}));
    ASSERT_FALSE(early);
    expect_v1_error(early.error(), "ACCOUNT_INACTIVE", disposition::pause_account);

    scan(f, a.id);
    auto got = f.run(f.api->get_webhook_account(a.id));
    ASSERT_TRUE(got) << describe(got.error());
    EXPECT_EQ(got->account.is_authenticated, true);
    EXPECT_EQ(got->account.needs_qr, false);
    EXPECT_EQ(got->account.is_active, true);

    auto before = credits(f);
    auto sent = f.run(f.api->messaging_send({a.id, "33698765432", "Hello", std::nullopt}));
    ASSERT_TRUE(sent) << describe(sent.error());
    EXPECT_EQ(sent->status, "sent");
    EXPECT_NE(sent->status_message.find("33698765432"), std::string::npos) << sent->status_message;
    ASSERT_TRUE(sent->raw["message_id"].is_string());
    const std::string message_id = sent->raw["message_id"];
    auto reply = f.run(f.api->messaging_send(
        {a.id, "33698765432", "Following up", messaging_quote{message_id, "Hello", sent->raw["timestamp"].get<std::int64_t>(), true}}));
    ASSERT_TRUE(reply) << describe(reply.error());
    EXPECT_EQ(reply->raw["quoted_message_id"], message_id);
    EXPECT_EQ(credits(f), before - 2) << "1 credit per message";

    // An incoming message reaches webhook_url and parses as a message event.
    auto inbound = f.control.post("/control/v1-accounts/" + a.id + "/inbound",
                                  json{{"from", "33698765432"}, {"text", "Thanks!"}});
    ASSERT_EQ(inbound.status, 200) << inbound.body;
    std::optional<webhook_event> message;
    for (int i = 0; i < 200 && !message; ++i) {
        for (const auto& r : rx.requests()) {
            if (r.target == "/events") {
                auto ev = parse_webhook_event(std::string_view(r.body));
                ASSERT_TRUE(ev) << describe(ev.error());
                message = *ev;
            }
        }
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_TRUE(message);
    EXPECT_EQ(message->type, event_type::message);
    EXPECT_EQ(message->message_text, "Thanks!");

    // Messaging accounts are deleted, not stopped.
    auto stop = f.run(f.api->stop_webhook_account(a.id));
    ASSERT_FALSE(stop);
    expect_v1_error(stop.error(), "INVALID_PARAMS", disposition::give_up);
    auto start = f.run(f.api->start_webhook_account(a.id));
    ASSERT_FALSE(start);
    expect_v1_error(start.error(), "INVALID_PARAMS", disposition::give_up);
    ASSERT_TRUE(f.run(f.api->delete_webhook_account(a.id)));
}

TEST(SandboxClientV1, ErrorsMapToDispositions) {
    client_fixture f(fast_qr);
    auto unknown = f.run(f.api->messaging_send({"acc_nobody", "33698765432", "hi", std::nullopt}));
    ASSERT_FALSE(unknown);
    expect_v1_error(unknown.error(), "INVALID_ACCOUNT", disposition::pause_account);

    std::string network = f.login("network-tok");
    auto wrong_platform = f.run(f.api->messaging_send({network, "33698765432", "hi", std::nullopt}));
    ASSERT_FALSE(wrong_platform);
    expect_v1_error(wrong_platform.error(), "INVALID_PARAMS", disposition::give_up);

    auto created = f.run(f.api->create_webhook_account(messaging_params("+33612345678")));
    ASSERT_TRUE(created) << describe(created.error());
    scan(f, created->account.id);
    auto plus = f.run(f.api->messaging_send({created->account.id, "+33698765432", "hi", std::nullopt}));
    ASSERT_FALSE(plus);
    expect_v1_error(plus.error(), "INVALID_PARAMS", disposition::give_up);
    EXPECT_NE(plus.error().message.find("plus sign"), std::string::npos) << plus.error().message;

    // The client leaves empty fields out: a network account without a token is refused.
    auto no_token = f.run(f.api->create_webhook_account(network_params("")));
    ASSERT_FALSE(no_token);
    expect_v1_error(no_token.error(), "INVALID_PARAMS", disposition::give_up);
    EXPECT_NE(no_token.error().message.find("login_token"), std::string::npos);
    auto duplicate = f.run(f.api->create_webhook_account(messaging_params("+33612345678")));
    ASSERT_FALSE(duplicate);
    expect_v1_error(duplicate.error(), "INVALID_PARAMS", disposition::give_up);

    webhook_account_update_params nothing;
    auto empty_update = f.run(f.api->update_webhook_account(created->account.id, nothing));
    ASSERT_FALSE(empty_update);
    expect_v1_error(empty_update.error(), "INVALID_PARAMS", disposition::give_up);

    // Out of credits: the send is refused, pause the budget.
    ASSERT_EQ(f.control.post("/control/credits", json{{"key", "test-key"}, {"credits", 0}}).status, 200);
    auto broke = f.run(f.api->messaging_send({created->account.id, "33698765432", "hi", std::nullopt}));
    ASSERT_FALSE(broke);
    expect_v1_error(broke.error(), "INSUFFICIENT_CREDITS", disposition::pause_budget);
    EXPECT_TRUE(f.requests_of(created->account.id, "messaging_send").size() >= 2u);
}

TEST(SandboxClientV1, StartingMonitoringWithoutCreditsPausesTheBudget) {
    client_fixture f({"--api-key", "test-key:5"});
    auto created = f.run(f.api->create_webhook_account(network_params("poor-tok")));
    ASSERT_TRUE(created) << describe(created.error());
    auto started = f.run(f.api->start_webhook_account(created->account.id));
    ASSERT_FALSE(started);
    expect_v1_error(started.error(), "INSUFFICIENT_CREDITS", disposition::pause_budget);
    auto got = f.run(f.api->get_webhook_account(created->account.id));
    ASSERT_TRUE(got) << describe(got.error());
    EXPECT_EQ(got->account.is_active, false);
    EXPECT_EQ(credits(f), 5);
}

} // namespace
