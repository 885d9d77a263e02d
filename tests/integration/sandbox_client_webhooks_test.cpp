// The outreach client against the real sandbox: V2 webhooks (management, polling, the SSE
// stream with reconnect and Last-Event-ID resume).
#include "tests/integration/sandbox_client_common.hpp"

using namespace orch::test;
using namespace orch::outreach;

namespace {

// Invites `url` and makes the person accept at once (an accepted_invitation event).
void accepted(client_fixture& f, const std::string& acc, const std::string& url) {
    auto inv = f.run(f.api->invite(acc, {url, "", ""}));
    ASSERT_TRUE(inv) << describe(inv.error());
    auto r = f.control.post("/control/events", json{{"type", "accepted_invitation"}, {"account_id", acc}, {"profile_url", url}});
    ASSERT_EQ(r.status, 200) << r.body;
}

TEST(SandboxClientWebhooks, ManageAHostedWebhook) {
    client_fixture f({"--accept-probability", "0"});
    std::string acc = f.login("wh-token");
    auto created = f.run(f.api->create_webhook({acc, "", {"accepted_invitation"}, false}));
    ASSERT_TRUE(created) << describe(created.error());
    const std::string id = created->webhook.webhook_id;
    EXPECT_FALSE(created->webhook.stream_url.empty());
    EXPECT_EQ(created->meta.credits_consumed, 0);
    auto list = f.run(f.api->list_webhooks());
    ASSERT_TRUE(list) << describe(list.error());
    ASSERT_EQ(list->webhooks.size(), 1u);
    EXPECT_EQ(list->webhooks[0].webhook_id, id);
    EXPECT_EQ(list->webhooks[0].signature_enabled, false);
    auto stopped = f.run(f.api->stop_webhook(id));
    ASSERT_TRUE(stopped) << describe(stopped.error());
    EXPECT_EQ(stopped->monitoring, false);
    auto got = f.run(f.api->get_webhook(id));
    ASSERT_TRUE(got);
    EXPECT_EQ(got->webhook.is_active, false);
    auto started = f.run(f.api->start_webhook(id));
    ASSERT_TRUE(started) << describe(started.error());
    EXPECT_EQ(started->monitoring, true);
    webhook_update_params up;
    up.events = std::vector<std::string>{"all"};
    auto updated = f.run(f.api->update_webhook(id, up));
    ASSERT_TRUE(updated) << describe(updated.error());
    EXPECT_EQ(updated->webhook.events, std::vector<std::string>{"all"});
    auto deleted = f.run(f.api->delete_webhook(id));
    ASSERT_TRUE(deleted) << describe(deleted.error());
    auto gone = f.run(f.api->get_webhook(id));
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().http_status, 404);
    EXPECT_EQ(gone.error().what_to_do, disposition::give_up);
}

TEST(SandboxClientWebhooks, SignedCustomWebhookSecretRotation) {
    client_fixture f;
    std::string acc = f.login("sig-token");
    auto created = f.run(f.api->create_webhook({acc, "http://127.0.0.1:9/hook", {}, true}));
    ASSERT_TRUE(created) << describe(created.error());
    EXPECT_FALSE(created->secret.empty());
    auto rotated = f.run(f.api->rotate_webhook_secret(created->webhook.webhook_id));
    ASSERT_TRUE(rotated) << describe(rotated.error());
    EXPECT_FALSE(rotated->secret.empty());
    EXPECT_NE(rotated->secret, created->secret);
    EXPECT_FALSE(rotated->signature_scheme.empty());
    auto cleared = f.run(f.api->delete_webhook_secret(created->webhook.webhook_id));
    ASSERT_TRUE(cleared) << describe(cleared.error());
    auto got = f.run(f.api->get_webhook(created->webhook.webhook_id));
    ASSERT_TRUE(got);
    EXPECT_EQ(got->webhook.signature_enabled, false);
}

TEST(SandboxClientWebhooks, PollingReturnsTypedEvents) {
    client_fixture f({"--accept-probability", "0"});
    std::string acc = f.login("poll-token");
    auto created = f.run(f.api->create_webhook({acc, "", {}, false}));
    ASSERT_TRUE(created) << describe(created.error());
    auto people = f.people(900, 2);
    accepted(f, acc, people[0]);
    accepted(f, acc, people[1]);
    auto page = f.run(f.api->poll_webhook_events(created->webhook.webhook_id, {}));
    ASSERT_TRUE(page) << describe(page.error());
    ASSERT_EQ(page->items.size(), 2u);
    const auto& first = page->items[0].event;
    EXPECT_EQ(first.type, event_type::accepted_invitation);
    EXPECT_EQ(first.account_id, acc);
    ASSERT_EQ(first.connections.size(), 1u);
    EXPECT_EQ(first.connections[0].profile_url, people[0]);
    EXPECT_TRUE(first.connections[0].invitation_id);
    EXPECT_TRUE(first.timestamp);
    // Resuming after the first event returns only the second.
    poll_events_params after;
    after.after = page->items[0].event_id;
    auto rest = f.run(f.api->poll_webhook_events(created->webhook.webhook_id, after));
    ASSERT_TRUE(rest) << describe(rest.error());
    ASSERT_EQ(rest->items.size(), 1u);
    EXPECT_EQ(rest->items[0].event.connections[0].profile_url, people[1]);
}

TEST(SandboxClientWebhooks, TheStreamDeliversAndResumesAfterADrop) {
    client_fixture f({"--accept-probability", "0"}, [](client_settings& s) { s.stream_reconnect_delay_ms = 20; });
    std::string acc = f.login("sse-token");
    auto created = f.run(f.api->create_webhook({acc, "", {}, false}));
    ASSERT_TRUE(created) << describe(created.error());
    auto stream = f.api->open_event_stream(created->webhook.webhook_id);
    auto hello = f.run(stream.next());
    ASSERT_TRUE(hello) << describe(hello.error());
    EXPECT_EQ(hello->name, "connected");
    auto people = f.people(950, 3);
    accepted(f, acc, people[0]);
    auto first = f.run(stream.next());
    ASSERT_TRUE(first) << describe(first.error());
    EXPECT_EQ(first->name, "webhook");
    ASSERT_TRUE(first->event);
    EXPECT_EQ(first->event->type, event_type::accepted_invitation);
    EXPECT_EQ(first->event->connections.at(0).profile_url, people[0]);
    EXPECT_FALSE(first->id.empty());
    EXPECT_EQ(stream.last_event_id(), first->id);

    // The connection drops; two events happen meanwhile; the stream reconnects with
    // Last-Event-ID and gets both, in order, without the first again.
    stream.close();
    accepted(f, acc, people[1]);
    accepted(f, acc, people[2]);
    std::vector<std::string> urls;
    while (urls.size() < 2) {
        auto ev = f.run(stream.next());
        ASSERT_TRUE(ev) << describe(ev.error());
        if (ev->name == "webhook") {
            ASSERT_TRUE(ev->event);
            urls.push_back(ev->event->connections.at(0).profile_url);
        }
    }
    EXPECT_EQ(urls, (std::vector<std::string>{people[1], people[2]}));
    EXPECT_EQ(stream.reconnects(), 1u);
}

TEST(SandboxClientWebhooks, AStreamOfAnUnknownWebhookFailsAtOnce) {
    client_fixture f;
    auto stream = f.api->open_event_stream("wh_does_not_exist");
    auto r = f.run(stream.next());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().http_status, 404);
    EXPECT_EQ(r.error().what_to_do, disposition::give_up);
}

TEST(SandboxClientWebhooks, CancellingAWaitingStream) {
    client_fixture f;
    std::string acc = f.login("cancel-sse");
    auto created = f.run(f.api->create_webhook({acc, "", {}, false}));
    ASSERT_TRUE(created);
    auto stream = f.api->open_event_stream(created->webhook.webhook_id);
    ASSERT_TRUE(f.run(stream.next())); // connected
    boost::asio::cancellation_signal signal;
    std::optional<result<stream_event>> out;
    boost::asio::co_spawn(f.io, stream.next(),
                          boost::asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr, result<stream_event> r) {
                              out.emplace(std::move(r));
                          }));
    f.io.restart();
    f.io.run_for(std::chrono::milliseconds(100));
    ASSERT_FALSE(out);
    signal.emit(boost::asio::cancellation_type::terminal);
    f.io.restart();
    while (!out && f.io.run_one() > 0) {
    }
    ASSERT_TRUE(out);
    ASSERT_FALSE(*out);
    EXPECT_EQ(out->error().kind, error_kind::cancelled);
}

} // namespace
