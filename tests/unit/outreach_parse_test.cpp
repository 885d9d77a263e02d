// Parsing of API answers: tolerant where the real service is inconsistent (api-facts 7),
// strict where a wrong value would mislead. Samples follow the shapes in api-facts.
#include "engine/outreach/detail/parse.hpp"

#include <gtest/gtest.h>

using namespace orch::outreach;
using detail::http_answer;

namespace {

std::string ok(const std::string& data, const std::string& timestamp = "2026-03-24T12:00:00Z") {
    return R"({"success":true,"data":)" + data + R"(,"metadata":{"action":"a","account_id":"acc_1",)" +
           R"("credits_consumed":1,"timestamp":")" + timestamp + R"("}})";
}

template <typename T>
result<T> v2(const std::string& data, detail::parser_fn<T> parse, bool side_effect = false) {
    return detail::decode_v2<T>(http_answer{200, ok(data), "", ""}, side_effect, parse);
}

template <typename T>
result<T> v1(const std::string& body, detail::parser_fn<T> parse, bool bare_ok = false) {
    return detail::decode_v1<T>(http_answer{200, body, "", ""}, false, bare_ok, parse);
}

TEST(OutreachParse, InvitationIdAbove2To53IsExactAsNumberOrString) {
    auto as_number = v2<invitation_status>(
        R"({"invitation_state":"PENDING","invitation_type":"SENT","invitation_id":7329176687475109888,
            "member_distance":2,"message":"pending"})",
        detail::parse_invitation_status);
    ASSERT_TRUE(as_number) << describe(as_number.error());
    EXPECT_EQ(as_number->invitation_id, 7329176687475109888ULL);
    EXPECT_EQ(as_number->state, invitation_state::pending);
    EXPECT_EQ(as_number->type, invitation_type::sent);
    EXPECT_EQ(as_number->member_distance, 2);
    EXPECT_EQ(as_number->meta.credits_consumed, 1);
    // 7329176687475109889 is not representable as a double: a double round trip would change it.
    auto odd = v2<invitation_status>(R"({"invitation_state":"PENDING","invitation_type":"RECEIVED",
                                         "invitation_id":7329176687475109889})",
                                     detail::parse_invitation_status);
    ASSERT_TRUE(odd);
    EXPECT_EQ(odd->invitation_id, 7329176687475109889ULL);
    auto as_string = v2<invitation_status>(
        R"({"invitation_state":"PENDING","invitation_type":"SENT","invitation_id":"7453486530700017665"})",
        detail::parse_invitation_status);
    ASSERT_TRUE(as_string);
    EXPECT_EQ(as_string->invitation_id, 7453486530700017665ULL);
    auto none = v2<invitation_status>(
        R"({"invitation_state":"NO_INVITATION","invitation_type":null,"invitation_id":null,"member_distance":null})",
        detail::parse_invitation_status);
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->invitation_id);
    EXPECT_FALSE(none->member_distance);
    EXPECT_EQ(none->type, invitation_type::none);
}

// An answer that is not JSON says what the parser found and where, and what the body began with.
TEST(OutreachParse, AnAnswerThatIsNotJsonSaysWhereItBroke) {
    auto broken = detail::decode_v2<invitation_status>(
        http_answer{200, "{\"success\": true,\n \"data\": {\"invitation_state\": PENDING}}", "", ""}, false,
        detail::parse_invitation_status);
    ASSERT_FALSE(broken);
    EXPECT_EQ(broken.error().kind, error_kind::malformed_response);
    EXPECT_NE(broken.error().message.find("at line 2, column"), std::string::npos) << broken.error().message;
    EXPECT_NE(broken.error().message.find("the answer is not JSON"), std::string::npos) << broken.error().message;
}

TEST(OutreachParse, InvitationStatusIsStrict) {
    auto bad_state = v2<invitation_status>(R"({"invitation_state":"MAYBE","invitation_type":null})",
                                           detail::parse_invitation_status);
    ASSERT_FALSE(bad_state);
    EXPECT_EQ(bad_state.error().kind, error_kind::malformed_response);
    EXPECT_NE(bad_state.error().message.find("MAYBE"), std::string::npos);
    EXPECT_FALSE(v2<invitation_status>(R"({"invitation_type":null})", detail::parse_invitation_status));
    EXPECT_FALSE(v2<invitation_status>(R"({"invitation_state":"PENDING","invitation_type":"LOST"})",
                                       detail::parse_invitation_status));
    EXPECT_FALSE(v2<invitation_status>(R"({"invitation_state":"PENDING","invitation_type":null})",
                                       detail::parse_invitation_status));
    // A float id may already have lost digits: refused rather than trusted.
    EXPECT_FALSE(v2<invitation_status>(
        R"({"invitation_state":"PENDING","invitation_type":"SENT","invitation_id":7.329176687475109e18})",
        detail::parse_invitation_status));
    EXPECT_FALSE(v2<invitation_status>(R"({"invitation_state":"PENDING","invitation_type":"SENT","invitation_id":-4})",
                                       detail::parse_invitation_status));
    EXPECT_FALSE(v2<invitation_status>(
        R"({"invitation_state":"PENDING","invitation_type":"SENT","invitation_id":"12a"})",
        detail::parse_invitation_status));
    EXPECT_FALSE(v2<invitation_status>(
        R"({"invitation_state":"PENDING","invitation_type":"SENT","invitation_id":"99999999999999999999"})",
        detail::parse_invitation_status)); // above 2^64
}

TEST(OutreachParse, SendResultCamelCaseAndBothDeliveredAtForms) {
    auto iso = v2<send_message_result>(
        R"({"entityUrn":"urn:x:msg:1","conversation_id":"urn:x:conv:2","deliveredAt":"2026-03-24T12:00:01.250Z"})",
        detail::parse_send_message, true);
    ASSERT_TRUE(iso);
    EXPECT_EQ(iso->entity_urn, "urn:x:msg:1");
    EXPECT_EQ(iso->conversation_id, "urn:x:conv:2");
    ASSERT_TRUE(iso->delivered_at);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(iso->delivered_at->time_since_epoch()).count();
    auto epoch = v2<send_message_result>(R"({"entity_urn":"urn:x:msg:1","deliveredAt":)" + std::to_string(ms) + "}",
                                         detail::parse_send_message);
    ASSERT_TRUE(epoch);
    EXPECT_EQ(epoch->entity_urn, "urn:x:msg:1");
    EXPECT_EQ(epoch->delivered_at, iso->delivered_at);
    auto missing = v2<send_message_result>(R"({"conversation_id":"c"})", detail::parse_send_message);
    ASSERT_TRUE(missing);
    EXPECT_FALSE(missing->delivered_at);
}

TEST(OutreachParse, MetadataTimestampWithAndWithoutZone) {
    auto with_z = v2<credits_result>(R"({"credits":4825})", detail::parse_credits);
    auto no_zone = detail::decode_v2<credits_result>(
        http_answer{200, ok(R"({"credits":4825})", "2026-03-24T12:00:00.000000"), "", ""}, false,
        detail::parse_credits);
    ASSERT_TRUE(with_z);
    ASSERT_TRUE(no_zone);
    EXPECT_EQ(with_z->credits, 4825);
    ASSERT_TRUE(with_z->meta.timestamp);
    EXPECT_EQ(with_z->meta.timestamp, no_zone->meta.timestamp);
    EXPECT_FALSE(v2<credits_result>(R"({"credits":"4825"})", detail::parse_credits));
    EXPECT_FALSE(v2<credits_result>(R"({})", detail::parse_credits));
}

TEST(OutreachParse, LoginAndAccounts) {
    auto login = v2<login_result>(R"({"account_id":"acc_1","status":"checkpoint_required",
                                      "challenge_type":"code_challenge"})",
                                  detail::parse_login);
    ASSERT_TRUE(login);
    EXPECT_TRUE(login->checkpoint_required());
    EXPECT_EQ(login->challenge_type, "code_challenge");
    EXPECT_FALSE(v2<login_result>(R"({"status":"connected"})", detail::parse_login));
    auto page = v2<accounts_page>(R"({"items":[{"account_id":"acc_1","platform":"network","account_name":"A B",
        "is_active":true,"status":"active","country":"FR","created_at":"2025-01-15T10:00:00Z",
        "updated_at":"2025-01-15T10:00:00.123456"}],"total":1,"limit":50,"offset":0})",
                                  detail::parse_accounts_page);
    ASSERT_TRUE(page);
    ASSERT_EQ(page->items.size(), 1u);
    EXPECT_EQ(page->items[0].is_active, true);
    EXPECT_TRUE(page->items[0].created_at);
    EXPECT_TRUE(page->items[0].updated_at);
    EXPECT_EQ(page->total, 1);
    EXPECT_FALSE(v2<accounts_page>(R"({"items":{"account_id":"x"}})", detail::parse_accounts_page));
    EXPECT_FALSE(v2<accounts_page>(R"({"items":[{"account_id":"x","is_active":"yes"}]})", detail::parse_accounts_page));
}

TEST(OutreachParse, ListSentTakesTheIdFromTheUrnWhenAbsent) {
    auto page = v2<invitations_page>(R"({"invitations":[
        {"entity_urn":"urn:li:invitation:7329176687475109888","recipient":{"first_name":"Ada","last_name":"L",
         "headline":"h","network_url":"https://n/in/ada","profile_picture":"p"},"invitation_type":"CONNECTION",
         "sent_time":"5d","sent_time_days":5},
        {"entity_urn":"urn:li:invitation:1","invitation_id":"7453486530700017665","recipient":{}}],
        "total_results":2,"total_available_results":9,"invitation_type":"CONNECTION",
        "pagination":{"offset":0,"count":2,"next_offset":2,"has_more":true,"results_per_page":10,"pages_fetched":1}})",
                                     detail::parse_invitations_page);
    ASSERT_TRUE(page) << describe(page.error());
    ASSERT_EQ(page->invitations.size(), 2u);
    EXPECT_EQ(page->invitations[0].invitation_id, 7329176687475109888ULL);
    EXPECT_EQ(page->invitations[0].person.profile_url, "https://n/in/ada");
    EXPECT_EQ(page->invitations[0].person.name, "Ada L");
    EXPECT_EQ(page->invitations[0].person.profile_picture_url, "p");
    EXPECT_EQ(page->invitations[0].sent_time_days, 5);
    EXPECT_EQ(page->invitations[1].invitation_id, 7453486530700017665ULL); // the field wins over the urn
    EXPECT_EQ(page->pagination.has_more, true);
    EXPECT_EQ(page->pagination.next_offset, 2);
    EXPECT_EQ(page->total_available_results, 9);
}

TEST(OutreachParse, WithdrawIsStrictAboutItsFlag) {
    auto ok_result = v2<withdraw_result>(R"({"withdrawn":true,"invitation_id":"7453486530700017665"})",
                                         detail::parse_withdraw, true);
    ASSERT_TRUE(ok_result);
    EXPECT_TRUE(ok_result->withdrawn);
    EXPECT_EQ(ok_result->invitation_id, 7453486530700017665ULL);
    auto refused = v2<withdraw_result>(R"({"withdrawn":false})", detail::parse_withdraw, true);
    ASSERT_TRUE(refused);
    EXPECT_FALSE(refused->withdrawn);
    auto wrong = v2<withdraw_result>(R"({"withdrawn":"yes"})", detail::parse_withdraw, true);
    ASSERT_FALSE(wrong);
    EXPECT_TRUE(wrong.error().may_have_taken_effect); // 200 to a side effect whose answer is unreadable
}

TEST(OutreachParse, ConversationAndInbox) {
    auto conv = v2<conversation_page>(R"({"total_message_count":2,"unread_count":1,"last_seen_message":true,
        "last_seen_at":1736936400000,"messages":[
          {"text":"hi","timestamp":1736936460000,"sender":"Ada L","sender_info":{"first_name":"Ada","last_name":"L",
           "profile_url":"https://n/in/ada"},"message_type":"TEXT","entity_urn":"urn:m:1"},
          {"text":"yo","timestamp":"2025-01-15T10:20:00Z","sender":"Me","message_type":"TEXT","is_me":true}],
        "next_cursor":"1736936400000"})",
                                      detail::parse_conversation_page);
    ASSERT_TRUE(conv);
    ASSERT_EQ(conv->messages.size(), 2u);
    EXPECT_EQ(conv->messages[0].sender_name, "Ada L");
    EXPECT_EQ(conv->messages[0].sender_profile_url, "https://n/in/ada");
    EXPECT_TRUE(conv->messages[0].at);
    EXPECT_TRUE(conv->messages[1].at);
    EXPECT_EQ(conv->messages[1].from_me, true);
    EXPECT_EQ(conv->next_cursor, "1736936400000");
    EXPECT_TRUE(conv->last_seen_at);

    auto inbox = v2<inbox_page>(R"({"conversations":[{"conversation_id":"urn:c:1","participant":{"name":"Ada",
        "headline":"h","profile_url":"u","profile_picture":"p"},"last_message":{"text":"t","time":1736936400000,
        "sender":{"name":"Ada","is_me":false}},"unread":1,"type":"normal"}],"total_results":1,"next_cursor":"abc"})",
                                detail::parse_inbox_page);
    ASSERT_TRUE(inbox);
    ASSERT_EQ(inbox->conversations.size(), 1u);
    EXPECT_EQ(inbox->conversations[0].participant.name, "Ada");
    EXPECT_EQ(inbox->conversations[0].last_message_from_me, false);
    EXPECT_TRUE(inbox->conversations[0].last_message_at);
    EXPECT_EQ(inbox->next_cursor, "abc");
}

// Epoch numbers: milliseconds, or seconds when small; one before 1970 or past the year 9999 is
// no event's time (multiplying it would overflow int64 or the clock's nanoseconds) and is left
// unread, the event still read.
TEST(OutreachParse, AnEventTimeOutOfAnyRangeIsLeftUnread) {
    const auto at = [](const std::string& ts) {
        return parse_webhook_event(std::string_view(R"({"account_id":"acc_1","event":{"type":"message",
            "message_text":"Hi","sender_profile":"https://n/in/ada","timestamp":)" + ts + "}}"));
    };
    ASSERT_TRUE(at("1736936460000"));
    EXPECT_EQ(at("1736936460000")->occurred_at, std::chrono::system_clock::time_point{std::chrono::milliseconds{1'736'936'460'000}});
    EXPECT_EQ(at("1736936460")->occurred_at, std::chrono::system_clock::time_point{std::chrono::milliseconds{1'736'936'460'000}});
    for (const char* odd : {"-9223372036854775808", "-9223372036854775000", "-1", "9223372036854775807",
                            "253402300800000", "\"-9223372036854775808\""}) {
        auto e = at(odd);
        ASSERT_TRUE(e) << odd;
        EXPECT_FALSE(e->occurred_at) << odd;
        EXPECT_EQ(e->message_text, "Hi") << odd;
    }
}

TEST(OutreachParse, WebhookMessageEventInItsThreeShapes) {
    auto documented = parse_webhook_event(std::string_view(R"({"account_id":"acc_1","account_name":"Me",
        "event":{"type":"message","message_text":"Hello","sender_name":"Ada L","sender_profile":"https://n/in/ada",
                 "timestamp":"2025-01-15T10:30:59Z"},"timestamp":"2025-01-15T10:31:00Z"})"));
    ASSERT_TRUE(documented);
    EXPECT_EQ(documented->type, event_type::message);
    EXPECT_EQ(documented->message_text, "Hello");
    EXPECT_EQ(documented->sender_name, "Ada L");
    EXPECT_EQ(documented->sender_profile_url, "https://n/in/ada");
    ASSERT_TRUE(documented->timestamp);
    ASSERT_TRUE(documented->occurred_at);
    EXPECT_LT(*documented->occurred_at, *documented->timestamp);

    auto data_shape = parse_webhook_event(std::string_view(R"({"account_id":"acc_1","event":{"type":"message",
        "data":{"conversation_id":"urn:c:9","sender_profile_url":"https://n/in/bob","message_text":"Hi"}}})"));
    ASSERT_TRUE(data_shape);
    EXPECT_EQ(data_shape->message_text, "Hi");
    EXPECT_EQ(data_shape->conversation_id, "urn:c:9");
    EXPECT_EQ(data_shape->sender_profile_url, "https://n/in/bob");

    auto sender_shape = parse_webhook_event(std::string_view(R"({"account_id":"acc_1","event":{"type":"message",
        "text":"Yo","sender":{"name":"Cy","profile_url":"https://n/in/cy"},
        "metadata":{"delivered_at":1736936400000}}})"));
    ASSERT_TRUE(sender_shape);
    EXPECT_EQ(sender_shape->message_text, "Yo");
    EXPECT_EQ(sender_shape->sender_name, "Cy");
    EXPECT_EQ(sender_shape->sender_profile_url, "https://n/in/cy");
    EXPECT_TRUE(sender_shape->delivered_at);
}

TEST(OutreachParse, AcceptedInvitationInEveryShape) {
    // The sandbox's flat shape.
    auto flat = parse_webhook_event(std::string_view(R"({"account_id":"acc_1","event":{"type":"accepted_invitation",
        "profile_url":"https://n/in/ada","public_identifier":"ada","first_name":"Ada","last_name":"L","name":"Ada L",
        "invitation_id":"7329176687475109888"}})"));
    ASSERT_TRUE(flat);
    EXPECT_EQ(flat->type, event_type::accepted_invitation);
    ASSERT_EQ(flat->connections.size(), 1u);
    EXPECT_EQ(flat->connections[0].profile_url, "https://n/in/ada");
    EXPECT_EQ(flat->connections[0].public_identifier, "ada");
    EXPECT_EQ(flat->connections[0].invitation_id, 7329176687475109888ULL);

    auto data = parse_webhook_event(std::string_view(R"({"event":{"type":"accepted_invitation",
        "data":{"profile_url":"https://n/in/bob","first_name":"Bob","last_name":"M"}}})"));
    ASSERT_TRUE(data);
    ASSERT_EQ(data->connections.size(), 1u);
    EXPECT_EQ(data->connections[0].name, "Bob M");

    auto list = parse_webhook_event(std::string_view(R"({"event":{"type":"accepted_invitation",
        "new_connections":[{"profile_url":"https://n/in/a","name":"A"},{"profile_url":"https://n/in/b","name":"B"}]}})"));
    ASSERT_TRUE(list);
    ASSERT_EQ(list->connections.size(), 2u);
    EXPECT_EQ(list->connections[1].profile_url, "https://n/in/b");

    auto nobody = parse_webhook_event(std::string_view(R"({"event":{"type":"accepted_invitation"}})"));
    EXPECT_FALSE(nobody);
}

TEST(OutreachParse, DisconnectionUnknownAndBrokenEvents) {
    auto disc = parse_webhook_event(std::string_view(R"({"account_id":"a","event":{"type":"disconnection",
        "reason":"session expired"}})"));
    ASSERT_TRUE(disc);
    EXPECT_EQ(disc->type, event_type::disconnection);
    EXPECT_EQ(disc->reason, "session expired");
    auto future = parse_webhook_event(std::string_view(R"({"event":{"type":"message_read","x":1}})"));
    ASSERT_TRUE(future);
    EXPECT_EQ(future->type, event_type::unknown);
    EXPECT_EQ(future->type_name, "message_read");
    EXPECT_EQ(future->raw["event"]["x"], 1);
    auto not_json = parse_webhook_event(std::string_view("{\"event\": {\"type\": \"message\",\n  \"n\": 1e999}}"));
    ASSERT_FALSE(not_json);
    // What and where, for the quarantine's reader.
    EXPECT_NE(not_json.error().message.find("number overflow parsing '1e999' at line 2, column 12"), std::string::npos)
        << not_json.error().message;
    // The bytes it quotes come back spelled out: the message is fit for a text column.
    auto not_utf8 = parse_webhook_event(std::string_view("{\"a\": \xff}"));
    ASSERT_FALSE(not_utf8);
    EXPECT_NE(not_utf8.error().message.find("\\xff"), std::string::npos) << not_utf8.error().message;
    EXPECT_EQ(not_utf8.error().message.find('\xff'), std::string::npos) << not_utf8.error().message;
    auto not_json_either = parse_webhook_event(std::string_view("not json"));
    ASSERT_FALSE(not_json_either);
    EXPECT_NE(not_json_either.error().message.find("at line 1, column 2"), std::string::npos)
        << not_json_either.error().message;
    // A flat envelope with a type and nothing else reads as an anonymous message (the intake
    // quarantines it: nobody to match).
    auto bare = parse_webhook_event(std::string_view(R"({"event":"message"})"));
    ASSERT_TRUE(bare);
    EXPECT_EQ(bare->type, event_type::message);
    EXPECT_TRUE(bare->sender_profile_url.empty());
    EXPECT_FALSE(parse_webhook_event(std::string_view(R"({"event":{"type":7}})")));
}

TEST(OutreachParse, PostReactionsInEitherShape) {
    auto page = v2<post_reactions_page>(R"({"total_results":2,"total_available_results":40,"reactions":[
        {"reaction_type":"LIKE","created_time":"2d","actor":{"name":"Ada","profile_url":"u1","profile_picture":null,
         "title":"CTO","connection_degree":"2nd"}},
        {"type":"CELEBRATE","name":"Bob","subtitle":"Engineer","profile_url":"u2","actor_urn":"urn:a:2"}],
        "pagination":{"start_page":1,"end_page":1,"results_per_page":50,"pages_fetched":1}})",
                                        detail::parse_post_reactions_page);
    ASSERT_TRUE(page);
    ASSERT_EQ(page->reactions.size(), 2u);
    EXPECT_EQ(page->reactions[0].reaction_type, "LIKE");
    EXPECT_EQ(page->reactions[0].name, "Ada");
    EXPECT_EQ(page->reactions[0].title, "CTO");
    EXPECT_EQ(page->reactions[0].profile_picture, "");
    EXPECT_EQ(page->reactions[0].connection_degree, "2nd");
    EXPECT_EQ(page->reactions[1].reaction_type, "CELEBRATE");
    EXPECT_EQ(page->reactions[1].name, "Bob");
    EXPECT_EQ(page->reactions[1].title, "Engineer");
    EXPECT_EQ(page->reactions[1].actor_urn, "urn:a:2");
    EXPECT_EQ(page->pagination.results_per_page, 50);
    EXPECT_EQ(page->total_available_results, 40);
}

TEST(OutreachParse, PolledEventsAndWebhooks) {
    auto page = v2<events_page>(R"({"items":[{"event_id":"65a7b2c3d4e5f6a7b8c9d0e1","created_at":"2025-01-15T10:31:00.123Z",
        "event":{"account_id":"acc_1","event":{"type":"message","message_text":"x","sender_profile":"https://n/in/s"},
        "timestamp":"2025-01-15T10:31:00Z"}}],
        "has_more":false,"next_after":"65a7b2c3d4e5f6a7b8c9d0e1"})",
                                detail::parse_events_page);
    ASSERT_TRUE(page);
    ASSERT_EQ(page->items.size(), 1u);
    EXPECT_EQ(page->items[0].event.message_text, "x");
    EXPECT_TRUE(page->items[0].created_at);
    EXPECT_EQ(page->next_after, "65a7b2c3d4e5f6a7b8c9d0e1");
    EXPECT_FALSE(v2<events_page>(R"({"items":[{"created_at":"x","event":{}}]})", detail::parse_events_page));

    auto created = v2<webhook_created>(R"({"webhook_id":"wh_1","account_id":"acc_1","url":"https://r/h",
        "events":["all"],"is_active":true,"signature_enabled":true,"secret":"s3cr3t"})",
                                       detail::parse_webhook_created, true);
    ASSERT_TRUE(created);
    EXPECT_EQ(created->webhook.webhook_id, "wh_1");
    EXPECT_EQ(created->secret, "s3cr3t");
    EXPECT_EQ(created->webhook.signature_enabled, true);
    EXPECT_FALSE(v2<webhook_created>(R"({"account_id":"acc_1"})", detail::parse_webhook_created, true));
    EXPECT_FALSE(v2<rotated_secret>(R"({"webhook_id":"wh_1"})", detail::parse_rotated_secret, true));
}

TEST(OutreachParse, CompanyRecordsAndV1Envelope) {
    auto search = v1<data_company_search_result>(R"({"status":"success","data":{"total_results":120,"enriched":true,
        "companies":[{"name":"Acme","universalName":"acme","employeeCount":50,"employeeCountRange":{"start":11,"end":null},
        "headquarter":{"country":"FR","city":"Paris","geographicArea":null},"funding":{"isFunded":true,"totalRounds":2,
        "lastRound":null,"investors":[]},"company_url":"https://n/company/acme","followersCount":10}]}})",
                                                 detail::parse_data_company_search);
    ASSERT_TRUE(search);
    EXPECT_EQ(search->total_results, 120);
    ASSERT_EQ(search->companies.size(), 1u);
    const auto& c = search->companies[0];
    EXPECT_EQ(c.universal_name, "acme");
    EXPECT_EQ(c.employee_range_start, 11);
    EXPECT_FALSE(c.employee_range_end);
    EXPECT_EQ(c.headquarter_city, "Paris");
    EXPECT_EQ(c.is_funded, true);
    EXPECT_EQ(c.company_url, "https://n/company/acme");
    auto basic = v1<data_company_search_result>(R"({"status":"success","data":{"total_results":1,"enriched":false,
        "companies":[{"url":"https://n/company/b","title":"B Corp","description":"d"}]}})",
                                                detail::parse_data_company_search);
    ASSERT_TRUE(basic);
    EXPECT_EQ(basic->companies[0].name, "B Corp");
    EXPECT_EQ(basic->companies[0].company_url, "https://n/company/b");
    EXPECT_FALSE(v1<data_company_search_result>(R"({"status":"success"})", detail::parse_data_company_search));
    EXPECT_FALSE(v1<data_company_search_result>(R"({"status":"maybe","data":{}})", detail::parse_data_company_search));
}

TEST(OutreachParse, HiringCompaniesTopLevelPaginationIsLifted) {
    auto r = v1<hiring_companies_result>(R"({"status":"success","data":{"companies":[{"name":"Acme","jobs_count":1,
        "indeed_url":null,"jobs":[{"job_title":"Dev","job_type":"fulltime","job_board":"board_network",
        "description":null,"is_remote":true,"salary":{"min":50000,"max":70000,"currency":"EUR","type":"yearly"},
        "sectors":["IT"]}]}]},"pagination":{"start_page":1,"end_page":2,"results_per_page":10,"pages_fetched":2},
        "credits_cost":4,"credits_remaining":96,"nb_companies":1,"nb_jobs":1})",
                                         detail::parse_hiring_companies);
    ASSERT_TRUE(r) << describe(r.error());
    ASSERT_EQ(r->companies.size(), 1u);
    ASSERT_EQ(r->companies[0].jobs.size(), 1u);
    EXPECT_FALSE(r->companies[0].jobs[0].description);
    EXPECT_EQ(r->companies[0].jobs[0].salary_max, 70000);
    EXPECT_EQ(r->pagination.pages_fetched, 2);
    EXPECT_EQ(r->credits_cost, 4);
    EXPECT_EQ(r->nb_jobs, 1);
}

TEST(OutreachParse, EnrichmentNotFoundIsSuccess) {
    auto r = v1<profile_enrichment>(R"({"status":"success","data":{"person_searched":{"first_name":"A","last_name":"B",
        "company_name":"C"},"network_profile":null,"full_profile_data":null}})",
                                    detail::parse_profile_enrichment);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->found);
    EXPECT_FALSE(r->full_profile);
    EXPECT_EQ(r->searched_company_name, "C");
}

TEST(OutreachParse, V1WebhookAccountsBareOrEnveloped) {
    auto bare = v1<webhook_account_reply>(R"({"id":"wa_1","plateforme":"network","account_name":"n","webhook_url":"u",
        "is_active":false,"country":"FR","created_at":"2025-01-15T10:00:00Z"})",
                                          detail::parse_webhook_account_reply, true);
    ASSERT_TRUE(bare);
    EXPECT_EQ(bare->account.platform, "network");
    EXPECT_EQ(bare->account.is_active, false);
    auto enveloped = v1<webhook_account_reply>(R"({"status":"success","data":{"id":"wa_2","platform":"messaging",
        "is_authenticated":false,"needs_qr":true}})",
                                               detail::parse_webhook_account_reply, true);
    ASSERT_TRUE(enveloped);
    EXPECT_EQ(enveloped->account.needs_qr, true);
    EXPECT_FALSE(v1<webhook_account_reply>(R"({"status":"success","data":{"platform":"network"}})",
                                           detail::parse_webhook_account_reply, true));
}

TEST(OutreachParse, SearchPeopleResults) {
    auto r = v2<people_page>(R"({"results":[{"public_id":"ada","first_name":"Ada","last_name":"L","headline":"h",
        "location":"Paris","profile_picture_url":"p","network_url":"https://n/in/ada","invitation_state":"CAN_INVITE"}],
        "total_results":1,"total_available_results":300})",
                             detail::parse_people_page);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->results.size(), 1u);
    EXPECT_EQ(r->results[0].profile_url, "https://n/in/ada");
    EXPECT_EQ(r->results[0].invitation_state, "CAN_INVITE");
    EXPECT_EQ(r->total_available_results, 300);
    EXPECT_FALSE(v2<people_page>(R"({"results":"none"})", detail::parse_people_page));
    EXPECT_FALSE(v2<people_page>(R"({"results":[],"total_results":1.5})", detail::parse_people_page));
}

} // namespace

// Every envelope a faithful reading of the spec may use (api-facts 1.2-1.5, 7.7) gives the same
// event: the type from event.type, a `type`/`event`/`event_type` string, or data.type; the fields
// from the event object, a top-level data object, or both.
TEST(OutreachParse, EventEnvelopesOfEveryReadingGiveTheSameEvent) {
    const char* shapes[] = {
        R"({"account_id":"a1","event":{"type":"accepted_invitation","profile_url":"https://n/in/x"}})",
        R"({"account_id":"a1","type":"accepted_invitation","data":{"profile_url":"https://n/in/x"}})",
        R"({"account_id":"a1","event":"accepted_invitation","data":{"profile_url":"https://n/in/x"}})",
        R"({"account_id":"a1","event_type":"invitation_accepted","data":{"profile_url":"https://n/in/x"}})",
        R"({"account_id":"a1","data":{"type":"accepted_invitation","profile_url":"https://n/in/x"}})",
        R"({"account_id":"a1","event":{"type":"accepted_invitation"},"data":{"profile_url":"https://n/in/x"}})",
        R"({"account_id":"a1","type":"accepted_invitation","data":{"new_connections":[{"profile_url":"https://n/in/x"}]}})",
        R"({"account_id":"a1","event":{"type":"accepted_invitation","person":{"profile_url":"https://n/in/x"}}})",
    };
    for (const char* body : shapes) {
        auto ev = parse_webhook_event(std::string_view(body));
        ASSERT_TRUE(ev) << body << ": " << ev.error().message;
        EXPECT_EQ(ev->type, event_type::accepted_invitation) << body;
        EXPECT_EQ(ev->account_id, "a1") << body;
        ASSERT_EQ(ev->connections.size(), 1u) << body;
        EXPECT_EQ(ev->connections[0].profile_url, "https://n/in/x") << body;
    }
    auto flat_message = parse_webhook_event(std::string_view(
        R"({"event":"message_received","account_id":"a1","event_id":"ev-9","timestamp":"2025-01-15T10:31:00.000000",
            "data":{"sender_profile":"https://n/in/y","message_text":"hi"},"x_extra":{"z":1}})"));
    ASSERT_TRUE(flat_message);
    EXPECT_EQ(flat_message->type, event_type::message);
    EXPECT_EQ(flat_message->sender_profile_url, "https://n/in/y");
    EXPECT_EQ(flat_message->message_text, "hi");
    EXPECT_EQ(flat_message->event_id, "ev-9");
    ASSERT_TRUE(flat_message->timestamp);  // no zone: read as UTC
    // A person named by public identifier only is still someone.
    auto by_id = parse_webhook_event(std::string_view(
        R"({"type":"accepted_invitation","data":{"public_identifier":"jane-doe"}})"));
    ASSERT_TRUE(by_id);
    EXPECT_EQ(by_id->connections[0].public_identifier, "jane-doe");
    // Malformed: no type anywhere, an acceptance of nobody. A message without a profile is read
    // (the messaging platform names senders by phone); the intake decides what it can use.
    EXPECT_FALSE(parse_webhook_event(std::string_view(R"({"data":{"profile_url":"u"}})")));
    auto anonymous = parse_webhook_event(std::string_view(R"({"type":"message","data":{"message_text":"x"}})"));
    ASSERT_TRUE(anonymous);
    EXPECT_TRUE(anonymous->sender_profile_url.empty());
    EXPECT_FALSE(parse_webhook_event(std::string_view(R"({"type":"accepted_invitation","data":{"name":"X"}})")));
    EXPECT_FALSE(parse_webhook_event(std::string_view(R"({"type":"accepted_invitation","new_connections":[]})")));
}

// A polled page keeps its readable items and sets the unreadable ones aside, raw; the next
// position is whichever form the server gives (next_cursor as a string or a number).
TEST(OutreachParse, PolledPageKeepsUnreadableItemsAndEveryCursorForm) {
    auto page = v2<events_page>(R"({"items":[
        {"event_id":"e1","created_at":"2025-01-15T10:31:00.123","event":{"type":"accepted_invitation","data":{"profile_url":"u"}}},
        {"event_id":"e2","event":{"event":{"no":"type"}}}],
        "next_cursor":42,"has_more":true})",
                                detail::parse_events_page);
    ASSERT_TRUE(page) << page.error().message;
    ASSERT_EQ(page->items.size(), 1u);
    EXPECT_EQ(page->items[0].event_id, "e1");
    ASSERT_EQ(page->unreadable_items.size(), 1u);
    EXPECT_EQ(page->unreadable_items[0].event_id, "e2");
    EXPECT_FALSE(page->unreadable_items[0].reason.empty());
    EXPECT_EQ(page->next_cursor, "42");
    EXPECT_EQ(page->has_more, true);
    auto opaque = v2<events_page>(R"({"items":[],"pagination":{"next_cursor":"abc","has_more":false}})",
                                  detail::parse_events_page);
    ASSERT_TRUE(opaque);
    EXPECT_EQ(opaque->next_cursor, "abc");
    EXPECT_EQ(opaque->has_more, false);
}

// A capped search says where to continue: next_start_page, or the page after end_page.
TEST(OutreachParse, SearchPeoplePaginationForms) {
    auto capped = v2<people_page>(R"({"results":[{"public_id":"a","network_url":"u"}],"total_results":1,
        "total_available_results":300,"has_more":true,
        "pagination":{"start_page":1,"end_page":2,"results_per_page":50,"has_more":true,"next_start_page":3}})",
                                  detail::parse_people_page);
    ASSERT_TRUE(capped);
    EXPECT_EQ(capped->has_more, true);
    EXPECT_EQ(capped->next_start_page, 3);
    auto derived = v2<people_page>(R"({"results":[],"total_results":0,
        "pagination":{"start_page":1,"end_page":2,"has_more":true}})",
                                   detail::parse_people_page);
    ASSERT_TRUE(derived);
    EXPECT_EQ(derived->next_start_page, 3);
    auto all = v2<people_page>(R"({"results":[],"total_results":0})", detail::parse_people_page);
    ASSERT_TRUE(all);
    EXPECT_FALSE(all->has_more);
    EXPECT_FALSE(all->next_start_page);
}
