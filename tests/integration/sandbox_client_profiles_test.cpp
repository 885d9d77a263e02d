// The outreach client against the real sandbox: /v2/profiles and /v2/messages.
#include "tests/integration/sandbox_client_common.hpp"

using namespace orch::test;
using namespace orch::outreach;

namespace {

TEST(SandboxClientProfiles, MeProfileContactVisit) {
    client_fixture f;
    std::string acc = f.login("prof-token");
    auto me = f.run(f.api->get_me(acc));
    ASSERT_TRUE(me) << describe(me.error());
    EXPECT_FALSE(me->profile.first_name.empty());
    EXPECT_FALSE(me->profile.public_id.empty());
    auto url = f.people(42, 1)[0];
    auto prof = f.run(f.api->get_profile(acc, {url, "", ""}));
    ASSERT_TRUE(prof) << describe(prof.error());
    EXPECT_EQ(prof->profile.profile_url, url);
    EXPECT_FALSE(prof->profile.experience.empty());
    EXPECT_TRUE(prof->profile.member_distance);
    auto by_id = f.run(f.api->get_profile(acc, {"", prof->profile.public_id, ""}));
    ASSERT_TRUE(by_id) << describe(by_id.error());
    EXPECT_EQ(by_id->profile.profile_url, url);
    auto contact = f.run(f.api->get_contact(acc, {url}));
    ASSERT_TRUE(contact) << describe(contact.error());
    auto visit = f.run(f.api->visit(acc, {url}));
    ASSERT_TRUE(visit) << describe(visit.error());
    EXPECT_EQ(visit->visited, true);
    EXPECT_EQ(visit->profile_url, url);
    auto visits = f.control.get("/control/side-effects").body_json()["visits"];
    ASSERT_EQ(visits.size(), 1u);
    EXPECT_EQ(visits[0]["profile_url"], url);
}

TEST(SandboxClientProfiles, SearchPeopleChargesPerTenResults) {
    client_fixture f;
    std::string acc = f.login("search-token");
    search_people_params p;
    p.total_results = 25;
    auto r = f.run(f.api->search_people(acc, p));
    ASSERT_TRUE(r) << describe(r.error());
    ASSERT_TRUE(r->total_results);
    EXPECT_LE(*r->total_results, 25);
    EXPECT_EQ(static_cast<std::int64_t>(r->results.size()), *r->total_results);
    ASSERT_FALSE(r->results.empty());
    EXPECT_FALSE(r->results[0].profile_url.empty());
    // The estimate is an upper bound of the charge.
    ASSERT_TRUE(r->meta.credits_consumed);
    EXPECT_LE(*r->meta.credits_consumed, estimate(p).credits);
    EXPECT_EQ(*r->meta.credits_consumed, cost::per_ten(*r->total_results));
}

TEST(SandboxClientProfiles, CompaniesSearchAndGet) {
    client_fixture f;
    std::string acc = f.login("company-token");
    search_companies_params p;
    p.total_results = 5;
    auto r = f.run(f.api->search_companies(acc, p));
    ASSERT_TRUE(r) << describe(r.error());
    ASSERT_FALSE(r->results.empty());
    const auto& first = r->results[0];
    std::string url = !first.company_url.empty() ? first.company_url : first.raw.value("url", "");
    ASSERT_FALSE(url.empty()) << first.raw.dump();
    auto company = f.run(f.api->get_company(acc, {url}));
    ASSERT_TRUE(company) << describe(company.error());
    EXPECT_FALSE(company->company.name.empty());
}

TEST(SandboxClientMessages, SendInboxConversationAndReply) {
    client_fixture f;
    std::string acc = f.login("msg-token");
    auto connections = f.run(f.api->list_connections(acc, {1, 0}));
    ASSERT_TRUE(connections) << describe(connections.error());
    ASSERT_FALSE(connections->connections.empty());
    std::string url = connections->connections[0].person.profile_url;
    send_message_params p;
    p.profile_url = url;
    p.message_text = "Hello from the client";
    auto sent = f.run(f.api->send_message(acc, p));
    ASSERT_TRUE(sent) << describe(sent.error());
    EXPECT_FALSE(sent->entity_urn.empty());   // entityUrn (camelCase) on the wire
    EXPECT_FALSE(sent->conversation_id.empty());
    EXPECT_TRUE(sent->delivered_at);
    EXPECT_EQ(sent->meta.credits_consumed, estimate(p).credits);

    ASSERT_EQ(f.control.post("/control/events", json{{"type", "message_received"}, {"account_id", acc},
                                                     {"profile_url", url}, {"text", "Thanks!"}})
                  .status,
              200);
    auto inbox = f.run(f.api->list_inbox(acc, {}));
    ASSERT_TRUE(inbox) << describe(inbox.error());
    ASSERT_FALSE(inbox->conversations.empty());
    EXPECT_EQ(inbox->conversations[0].conversation_id, sent->conversation_id);
    EXPECT_EQ(inbox->conversations[0].last_message_text, "Thanks!");
    EXPECT_EQ(inbox->conversations[0].last_message_from_me, false);

    get_conversation_params q;
    q.conversation_id = sent->conversation_id;
    auto conv = f.run(f.api->get_conversation(acc, q));
    ASSERT_TRUE(conv) << describe(conv.error());
    ASSERT_EQ(conv->messages.size(), 2u);
    bool mine = false;
    bool theirs = false;
    for (const auto& m : conv->messages) {
        EXPECT_TRUE(m.at);
        mine = mine || (m.from_me == true && m.text == "Hello from the client");
        theirs = theirs || (m.from_me == false && m.text == "Thanks!" && m.sender_profile_url == url);
    }
    EXPECT_TRUE(mine);
    EXPECT_TRUE(theirs);
}

TEST(SandboxClientMessages, ALostSendIsFoundInTheConversation) {
    client_fixture f;
    std::string acc = f.login("lost-send");
    auto connections = f.run(f.api->list_connections(acc, {1, 0}));
    ASSERT_TRUE(connections && !connections->connections.empty());
    std::string url = connections->connections[0].person.profile_url;
    f.settings(json{{"lost_response_rate", 1}});
    send_message_params p;
    p.profile_url = url;
    p.message_text = "Did this arrive?";
    auto sent = f.run(f.api->send_message(acc, p));
    ASSERT_FALSE(sent);
    EXPECT_TRUE(sent.error().may_have_taken_effect);
    f.settings(json{{"lost_response_rate", 0}});
    get_conversation_params q;
    q.profile_url = url;
    auto conv = f.run(f.api->get_conversation(acc, q));
    ASSERT_TRUE(conv) << describe(conv.error());
    ASSERT_EQ(conv->messages.size(), 1u);
    EXPECT_EQ(conv->messages[0].text, "Did this arrive?");
}

} // namespace
