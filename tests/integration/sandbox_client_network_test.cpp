// The outreach client against the real sandbox: /v2/network end to end, and the error taxonomy
// and fault handling on the campaign path (lost responses, dropped connections, latency,
// internal errors), with reconciliation through check_invitation and the side-effect record.
#include "tests/integration/sandbox_client_common.hpp"

using namespace orch::test;
using namespace orch::outreach;

namespace {

TEST(SandboxClientNetwork, InviteCheckListWithdraw) {
    client_fixture f({"--accept-probability", "0"});
    std::string acc = f.login("net-token");
    auto people = f.people(100, 3);
    auto inv = f.run(f.api->invite(acc, {people[0], "", "Hello there"}));
    ASSERT_TRUE(inv) << describe(inv.error());
    EXPECT_EQ(inv->meta.credits_consumed, 1);
    ASSERT_TRUE(inv->invitation_id);
    EXPECT_GT(*inv->invitation_id, 1ULL << 53); // kept exact end to end

    auto status = f.run(f.api->check_invitation(acc, {people[0]}));
    ASSERT_TRUE(status) << describe(status.error());
    EXPECT_EQ(status->state, invitation_state::pending);
    EXPECT_EQ(status->type, invitation_type::sent);
    EXPECT_EQ(status->invitation_id, inv->invitation_id);
    EXPECT_EQ(status->meta.action, "check_invitation");

    auto sent = f.run(f.api->list_sent(acc, {}));
    ASSERT_TRUE(sent) << describe(sent.error());
    ASSERT_EQ(sent->invitations.size(), 1u);
    EXPECT_EQ(sent->invitations[0].invitation_id, inv->invitation_id);
    EXPECT_EQ(sent->invitations[0].person.profile_url, people[0]);

    auto withdrawn = f.run(f.api->withdraw(acc, {*inv->invitation_id}));
    ASSERT_TRUE(withdrawn) << describe(withdrawn.error());
    EXPECT_TRUE(withdrawn->withdrawn);
    auto after = f.run(f.api->check_invitation(acc, {people[0]}));
    ASSERT_TRUE(after);
    EXPECT_EQ(after->state, invitation_state::no_invitation);
    EXPECT_FALSE(after->invitation_id);
}

TEST(SandboxClientNetwork, AcceptanceShowsAsConnected) {
    client_fixture f({"--accept-probability", "0"});
    std::string acc = f.login("acc-token");
    auto url = f.people(200, 1)[0];
    ASSERT_TRUE(f.run(f.api->invite(acc, {url, "", ""})));
    auto r = f.control.post("/control/events", json{{"type", "accepted_invitation"}, {"account_id", acc}, {"profile_url", url}});
    ASSERT_EQ(r.status, 200) << r.body;
    auto status = f.run(f.api->check_invitation(acc, {url}));
    ASSERT_TRUE(status);
    EXPECT_EQ(status->state, invitation_state::accepted);
    EXPECT_EQ(status->type, invitation_type::connected);
    EXPECT_EQ(status->member_distance, 1);
    auto connections = f.run(f.api->list_connections(acc, {100, 0}));
    ASSERT_TRUE(connections) << describe(connections.error());
    bool found = false;
    for (const auto& c : connections->connections) {
        found = found || c.person.profile_url == url;
    }
    EXPECT_TRUE(found);
    EXPECT_EQ(connections->meta.credits_consumed, cost::per_ten(static_cast<std::int64_t>(connections->connections.size())));
}

TEST(SandboxClientNetwork, ReceivedInvitationsAcceptAndDecline) {
    client_fixture f;
    std::string acc = f.login("recv-token");
    auto received = f.run(f.api->list_invitations(acc, {}));
    ASSERT_TRUE(received) << describe(received.error());
    ASSERT_GE(received->invitations.size(), 2u);
    const auto& first = received->invitations[0];
    EXPECT_FALSE(first.shared_secret.empty());
    EXPECT_FALSE(first.person.profile_url.empty());
    auto accepted = f.run(f.api->accept(acc, {first.shared_secret, first.entity_urn}));
    ASSERT_TRUE(accepted) << describe(accepted.error());
    const auto& second = received->invitations[1];
    auto declined = f.run(f.api->decline(acc, {second.shared_secret, second.entity_urn}));
    ASSERT_TRUE(declined) << describe(declined.error());
    EXPECT_EQ(declined->status, "declined");
    auto check = f.run(f.api->check_invitation(acc, {first.person.profile_url}));
    ASSERT_TRUE(check);
    EXPECT_EQ(check->state, invitation_state::accepted);
    // Accepting the same invitation again is refused and not worth retrying.
    auto again = f.run(f.api->accept(acc, {first.shared_secret, first.entity_urn}));
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().what_to_do, disposition::give_up);
    EXPECT_FALSE(again.error().may_have_taken_effect);
    auto recs = f.run(f.api->recommendations(acc, {5}));
    ASSERT_TRUE(recs) << describe(recs.error());
    EXPECT_EQ(recs->results.size(), 5u);
}

TEST(SandboxClientNetwork, ApiErrorsCarryTheirDisposition) {
    client_fixture f({"--accept-probability", "0"});
    std::string acc = f.login("err-token");
    auto url = f.people(300, 1)[0];
    ASSERT_TRUE(f.run(f.api->invite(acc, {url, "", ""})));
    auto twice = f.run(f.api->invite(acc, {url, "", ""}));
    ASSERT_FALSE(twice);
    EXPECT_EQ(twice.error().code, "CHANNEL_ERROR");
    EXPECT_EQ(twice.error().what_to_do, disposition::give_up);
    EXPECT_FALSE(twice.error().may_have_taken_effect);

    auto bad_url = f.run(f.api->check_invitation(acc, {"not a url"}));
    ASSERT_FALSE(bad_url);
    EXPECT_EQ(bad_url.error().code, "INVALID_PARAMS");
    EXPECT_EQ(bad_url.error().http_status, 400);
    EXPECT_EQ(bad_url.error().what_to_do, disposition::give_up);

    auto unknown = f.run(f.api->check_invitation("acc_nope", {url}));
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().code, "INVALID_ACCOUNT");
    EXPECT_EQ(unknown.error().what_to_do, disposition::pause_account);

    auto action = f.run(f.api->call_action("network", acc, "teleport", json::object(), true));
    ASSERT_FALSE(action);
    EXPECT_EQ(action.error().code, "INVALID_ACTION");
    EXPECT_EQ(action.error().what_to_do, disposition::give_up);

    ASSERT_EQ(f.control.post("/control/events", json{{"type", "disconnection"}, {"account_id", acc}}).status, 200);
    auto inactive = f.run(f.api->check_invitation(acc, {url}));
    ASSERT_FALSE(inactive);
    EXPECT_EQ(inactive.error().code, "ACCOUNT_INACTIVE");
    EXPECT_EQ(inactive.error().what_to_do, disposition::pause_account);
}

TEST(SandboxClientNetwork, InsufficientCreditsPausesTheBudget) {
    client_fixture f;
    std::string acc = f.login("broke-token");
    ASSERT_EQ(f.control.post("/control/credits", json{{"key", "test-key"}, {"credits", 0}}).status, 200);
    auto r = f.run(f.api->check_invitation(acc, {f.people(5, 1)[0]}));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, "INSUFFICIENT_CREDITS");
    EXPECT_EQ(r.error().http_status, 402);
    EXPECT_EQ(r.error().what_to_do, disposition::pause_budget);
    EXPECT_EQ(r.error().details["required"], 1);
    auto credits = f.run(f.api->get_credits());
    ASSERT_TRUE(credits);
    EXPECT_EQ(credits->credits, 0);
}

TEST(SandboxClientNetwork, RateLimitedWithAndWithoutRetryAfter) {
    client_fixture f;
    std::string acc = f.login("rl-token");
    auto url = f.people(7, 1)[0];
    ASSERT_EQ(f.control.post("/control/rate-limit-burst", json{{"key", "test-key"}, {"duration_ms", 60000}, {"retry_after_s", 7}}).status, 200);
    auto with = f.run(f.api->check_invitation(acc, {url}));
    ASSERT_FALSE(with);
    EXPECT_EQ(with.error().code, "RATE_LIMITED");
    EXPECT_EQ(with.error().http_status, 429);
    EXPECT_EQ(with.error().what_to_do, disposition::back_off);
    EXPECT_EQ(with.error().retry_after_s, 7);
    ASSERT_EQ(f.control.post("/control/rate-limit-burst", json{{"key", "test-key"}, {"duration_ms", 60000}}).status, 200);
    auto without = f.run(f.api->invite(acc, {url, "", ""}));
    ASSERT_FALSE(without);
    EXPECT_EQ(without.error().what_to_do, disposition::back_off);
    EXPECT_FALSE(without.error().retry_after_s);
    EXPECT_FALSE(without.error().may_have_taken_effect);
    ASSERT_EQ(f.control.post("/control/rate-limit-burst", json{{"key", "test-key"}, {"duration_ms", 0}}).status, 200);
    EXPECT_TRUE(f.run(f.api->check_invitation(acc, {url})));
}

TEST(SandboxClientNetwork, ALostResponseIsReconciledNotResent) {
    client_fixture f({"--accept-probability", "0"});
    std::string acc = f.login("lost-token");
    auto url = f.people(400, 1)[0];
    f.settings(json{{"lost_response_rate", 1}});
    auto inv = f.run(f.api->invite(acc, {url, "", ""}));
    ASSERT_FALSE(inv);
    EXPECT_EQ(inv.error().kind, error_kind::connection_lost);
    EXPECT_TRUE(inv.error().may_have_taken_effect);
    EXPECT_EQ(inv.error().what_to_do, disposition::retry_later);
    f.settings(json{{"lost_response_rate", 0}});
    // The caller reconciles: the invitation exists, so it must not invite again.
    auto status = f.run(f.api->check_invitation(acc, {url}));
    ASSERT_TRUE(status) << describe(status.error());
    EXPECT_EQ(status->state, invitation_state::pending);
    auto invites = f.requests_of(acc, "invite");
    ASSERT_EQ(invites.size(), 1u) << invites.dump(); // the client sent it once, and did not resend
    EXPECT_EQ(invites[0]["error_code"], "RESPONSE_LOST");
}

TEST(SandboxClientNetwork, ADroppedConnectionBeforeTheEffect) {
    client_fixture f({"--accept-probability", "0"});
    std::string acc = f.login("drop-token");
    auto url = f.people(500, 1)[0];
    f.settings(json{{"drop_connection_rate", 1}});
    auto inv = f.run(f.api->invite(acc, {url, "", ""}));
    ASSERT_FALSE(inv);
    EXPECT_EQ(inv.error().kind, error_kind::connection_lost);
    // The client cannot tell a drop before the effect from one after it.
    EXPECT_TRUE(inv.error().may_have_taken_effect);
    auto read = f.run(f.api->check_invitation(acc, {url}));
    ASSERT_FALSE(read);
    EXPECT_FALSE(read.error().may_have_taken_effect);
    f.settings(json{{"drop_connection_rate", 0}});
    auto status = f.run(f.api->check_invitation(acc, {url}));
    ASSERT_TRUE(status);
    EXPECT_EQ(status->state, invitation_state::no_invitation); // here it had not
    auto invites = f.requests_of(acc, "invite");
    ASSERT_EQ(invites.size(), 1u) << invites.dump();
    EXPECT_EQ(invites[0]["error_code"], "DROPPED");
}

TEST(SandboxClientNetwork, LatencyBeyondTheReadDeadlineTimesOut) {
    client_fixture f({"--accept-probability", "0"});
    std::string acc = f.login("slow-token");
    auto url = f.people(600, 1)[0];
    f.settings(json{{"latency_ms_min", 300}, {"latency_ms_max", 300}});
    call_options fast;
    fast.read_timeout_ms = 100;
    auto inv = f.run(f.api->invite(acc, {url, "", ""}, fast));
    ASSERT_FALSE(inv);
    EXPECT_EQ(inv.error().kind, error_kind::timeout);
    EXPECT_EQ(inv.error().step, failure_step::read);
    EXPECT_TRUE(inv.error().may_have_taken_effect);
    // Within a generous deadline the same latency is fine.
    auto status = f.run(f.api->check_invitation(acc, {url}));
    ASSERT_TRUE(status) << describe(status.error());
    // The sandbox went on with the invite after the client gave up: reconciliation finds it.
    EXPECT_EQ(status->state, invitation_state::pending);
}

TEST(SandboxClientNetwork, InternalErrorsAreRetryLaterAndMayHaveTakenEffect) {
    client_fixture f;
    std::string acc = f.login("ie-token");
    f.settings(json{{"internal_error_rate", 1}});
    auto inv = f.run(f.api->invite(acc, {f.people(700, 1)[0], "", ""}));
    ASSERT_FALSE(inv);
    EXPECT_EQ(inv.error().code, "INTERNAL_ERROR");
    EXPECT_EQ(inv.error().http_status, 500);
    EXPECT_EQ(inv.error().what_to_do, disposition::retry_later);
    EXPECT_TRUE(inv.error().may_have_taken_effect);
}

TEST(SandboxClientNetwork, ManyCallsInFlightShareThePool) {
    client_fixture f({}, [](client_settings& s) { s.pool_size = 3; });
    std::string acc = f.login("pool-token");
    auto people = f.people(800, 12);
    f.settings(json{{"latency_ms_min", 20}, {"latency_ms_max", 20}});
    int done = 0;
    int ok = 0;
    for (const auto& url : people) {
        boost::asio::co_spawn(f.io, f.api->check_invitation(acc, {url}), [&](std::exception_ptr, result<invitation_status> r) {
            ++done;
            ok += r ? 1 : 0;
        });
    }
    f.io.restart();
    while (done < static_cast<int>(people.size()) && f.io.run_one() > 0) {
    }
    EXPECT_EQ(ok, 12);
    EXPECT_LE(f.api->stats().open, 3u);
    EXPECT_LE(f.api->stats().connects, 3u);
}

} // namespace
