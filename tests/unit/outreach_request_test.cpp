// Request building (typed params -> JSON bodies) and the SSE parser.
#include "engine/outreach/detail/request.hpp"
#include "engine/outreach/detail/sse.hpp"

#include <gtest/gtest.h>

using namespace orch::outreach;

namespace {

TEST(OutreachRequest, EmptyFieldsAreLeftOutSoTheApiAppliesDefaults) {
    search_people_params p;
    p.keyword = "robotics";
    p.location = {"Paris"};
    p.total_results = 25;
    p.extra = json{{"fetch_invitation_state", true}};
    auto j = detail::to_json(p);
    EXPECT_EQ(j, (json{{"keyword", "robotics"}, {"location", {"Paris"}}, {"total_results", 25},
                       {"fetch_invitation_state", true}}));
    EXPECT_EQ(detail::to_json(list_invitations_params{}), json::object());
}

TEST(OutreachRequest, WithdrawSendsTheIdAsADecimalString) {
    auto j = detail::to_json(withdraw_params{7329176687475109889ULL});
    ASSERT_TRUE(j["invitation_id"].is_string());
    EXPECT_EQ(j["invitation_id"], "7329176687475109889");
}

TEST(OutreachRequest, SendWithMediaAndMessagingQuote) {
    send_message_params s;
    s.profile_url = "https://n/in/ada";
    s.message_text = "hi";
    s.media_file = media_file{"a.png", "aGk="};
    auto j = detail::to_json(s);
    EXPECT_EQ(j["message_text"], "hi");
    EXPECT_EQ(j["media_file"]["filename"], "a.png");
    EXPECT_FALSE(j.contains("message"));

    messaging_send_params m{"wa_1", "33612345678", "hello", messaging_quote{"q1", "earlier", 1736936400000, true}};
    auto mj = detail::to_json(m);
    EXPECT_EQ(mj["to"], "33612345678");
    EXPECT_EQ(mj["quoted_message_id"], "q1");
    EXPECT_EQ(mj["quoted_timestamp"], 1736936400000);
    EXPECT_EQ(mj["quoted_from_me"], true);
    messaging_send_params plain{"wa_1", "336", "x", std::nullopt};
    EXPECT_FALSE(detail::to_json(plain).contains("quoted_text"));
}

TEST(OutreachRequest, CompanyPostFilesAndJobs) {
    create_company_post_params p;
    p.company_url = "https://n/company/acme";
    p.message = "Hello #news";
    p.file = post_file{"https://cdn/x.png", "", "", ""};
    p.files = {post_file{"", "a.pdf", "QQ==", "deck"}};
    auto j = detail::to_json(p);
    EXPECT_EQ(j["file"], "https://cdn/x.png");
    EXPECT_EQ(j["files"][0]["altText"], "deck");
    EXPECT_EQ(j["files"][0]["data"], "QQ==");

    company_jobs_params jobs;
    jobs.company_names = {"Acme"};
    jobs.filter.fetch_description = false;
    jobs.filter.total_results = 30;
    auto jj = detail::to_json(jobs);
    EXPECT_EQ(jj["company_names"], json::array({"Acme"}));
    EXPECT_EQ(jj["fetch_description"], false);
    EXPECT_EQ(jj["total_results"], 30);
}

TEST(OutreachRequest, LoginAndWebhookBodies) {
    login_params l;
    l.country = "FR";
    l.login_token = "tok";
    EXPECT_EQ(detail::to_json(l), (json{{"platform", "network"}, {"country", "FR"}, {"login_token", "tok"}}));
    webhook_create_params hosted{"acc_1", "", {"message_received"}, false};
    EXPECT_EQ(detail::to_json(hosted), (json{{"account_id", "acc_1"}, {"events", {"message_received"}}}));
    webhook_account_create_params wa;
    wa.platform = platform::messaging;
    wa.account_name = "shop";
    wa.webhook_url = "https://r/h";
    wa.phone_number = "33612345678";
    auto wj = detail::to_json(wa);
    EXPECT_EQ(wj["platform"], "messaging");
    EXPECT_FALSE(wj.contains("login_token"));
}

TEST(OutreachRequest, EnvelopeAndEncoding) {
    auto body = json::parse(detail::v2_body("acc_1", "check_invitation", json{{"profile_url", "u"}}));
    EXPECT_EQ(body, (json{{"account_id", "acc_1"}, {"action", "check_invitation"}, {"params", {{"profile_url", "u"}}}}));
    EXPECT_EQ(detail::url_encode("a b/c?d=é"), "a%20b%2Fc%3Fd%3D%C3%A9");
    EXPECT_EQ(detail::url_encode("wh_0123-abc.~"), "wh_0123-abc.~");
}

// A server that never ends a line, or sends data lines without ever ending the event, does not
// grow the parser without bound: the event over the limit comes out with its data dropped and a
// problem, and the stream goes on with the next one.
TEST(OutreachSse, AnEventOverTheLimitIsDroppedAndTheStreamGoesOn) {
    detail::sse_parser p;
    std::deque<stream_event> out;
    const std::string chunk(64 * 1024, 'x');
    p.feed("id: 7\nevent: webhook\ndata: ", out);
    for (std::size_t sent = 0; sent < 3 * detail::sse_parser::max_event_bytes; sent += chunk.size()) {
        p.feed(chunk, out);
    }
    p.feed("\n\n", out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].name, "webhook");
    EXPECT_EQ(out[0].id, "7");
    EXPECT_EQ(out[0].data, "");
    EXPECT_NE(out[0].problem.find("larger than"), std::string::npos) << out[0].problem;
    // Many short data lines that add up past the limit.
    const std::string line = "data: " + std::string(1000, 'y') + "\n";
    for (std::size_t sent = 0; sent < 2 * detail::sse_parser::max_event_bytes; sent += line.size()) {
        p.feed(line, out);
    }
    p.feed("\n", out);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].data, "");
    EXPECT_FALSE(out[1].problem.empty());
    p.feed("data: ok\n\n", out);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[2].data, "ok");
    EXPECT_EQ(out[2].problem, "");
}

TEST(OutreachSse, EventsIdsCommentsAndLineEndings) {
    detail::sse_parser p;
    std::deque<stream_event> out;
    auto comments = p.feed("event: connected\ndata: {\"webhook_id\":\"wh_1\"}\n\n: keepalive\n\n", out);
    EXPECT_EQ(comments, 1u);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].name, "connected");
    EXPECT_EQ(out[0].data, "{\"webhook_id\":\"wh_1\"}");
    EXPECT_EQ(out[0].id, "");
    // Split across feeds, CRLF and CR line endings, multi-line data, id kept for later events.
    p.feed("id: 0001\r\nevent: webhook\r\ndata: line1\r", out);
    p.feed("\ndata: line2\r\r", out);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].name, "webhook");
    EXPECT_EQ(out[1].id, "0001");
    EXPECT_TRUE(out[1].id_sent);
    EXPECT_FALSE(out[0].id_sent);
    EXPECT_EQ(out[1].data, "line1\nline2");
    p.feed("data:x\n\nretry: 1500\n\n", out);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[2].name, "message");
    EXPECT_EQ(out[2].id, "0001");
    EXPECT_FALSE(out[2].id_sent) << "the id is the last one the stream knew, not the event's own";
    EXPECT_EQ(out[2].data, "x");
    EXPECT_EQ(p.retry_ms(), 1500);
    EXPECT_EQ(p.last_event_id(), "0001");
    // An event without data is not dispatched; a partial event is dropped on reset.
    p.feed("event: nothing\n\nid: 0002\ndata: half", out);
    EXPECT_EQ(out.size(), 3u);
    p.reset_partial();
    p.feed("\n\n", out);
    EXPECT_EQ(out.size(), 3u);
    EXPECT_EQ(p.last_event_id(), "0002");
}

} // namespace
