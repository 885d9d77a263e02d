// The client's error taxonomy: every kind of failure answer becomes a typed error with the
// right disposition, Retry-After and may_have_taken_effect (engine/outreach/errors.hpp table).
#include "engine/outreach/detail/parse.hpp"
#include "engine/outreach/errors.hpp"

#include <gtest/gtest.h>

using namespace orch::outreach;
using detail::http_answer;

namespace {

http_answer answer(int status, std::string body, std::string retry_after = "") {
    return http_answer{status, std::move(body), std::move(retry_after), "application/json"};
}

error v2_error(int status, const std::string& code, bool side_effect, std::string retry_after = "") {
    auto body = R"({"success":false,"error":{"code":")" + code +
                R"(","message":"m"},"metadata":{"action":"invite","credits_consumed":0,"timestamp":"2026-01-01T00:00:00Z"}})";
    call_metadata meta;
    auto r = detail::decode_v2_envelope(answer(status, body, std::move(retry_after)), side_effect, meta);
    EXPECT_FALSE(r.has_value());
    return r.error();
}

TEST(OutreachErrors, EveryDocumentedCodeHasItsDisposition) {
    struct row {
        int status;
        const char* code;
        disposition expected;
    };
    const row rows[] = {
        {429, "RATE_LIMITED", disposition::back_off},
        {403, "ACCOUNT_INACTIVE", disposition::pause_account},
        {404, "INVALID_ACCOUNT", disposition::pause_account},
        {403, "INVALID_API_KEY", disposition::stop_everything},
        {402, "INSUFFICIENT_CREDITS", disposition::pause_budget},
        {400, "INVALID_PARAMS", disposition::give_up},
        {422, "CHANNEL_ERROR", disposition::give_up},
        {403, "FORBIDDEN", disposition::give_up},
        {400, "INVALID_ACTION", disposition::give_up},
        {500, "INTERNAL_ERROR", disposition::retry_later},
    };
    for (const auto& r : rows) {
        error e = v2_error(r.status, r.code, true);
        EXPECT_EQ(e.kind, error_kind::api_error) << r.code;
        EXPECT_EQ(e.code, r.code);
        EXPECT_EQ(e.http_status, r.status);
        EXPECT_EQ(e.what_to_do, r.expected) << r.code << " -> " << to_string(e.what_to_do);
        EXPECT_EQ(e.message, "m");
    }
}

TEST(OutreachErrors, UnknownCodesMapByStatus) {
    EXPECT_EQ(disposition_for("SOMETHING_NEW", 503), disposition::retry_later);
    EXPECT_EQ(disposition_for("SOMETHING_NEW", 500), disposition::retry_later);
    EXPECT_EQ(disposition_for("SOMETHING_NEW", 409), disposition::give_up);
    EXPECT_EQ(disposition_for("SOMETHING_NEW", 429), disposition::back_off);
    EXPECT_EQ(disposition_for("SOMETHING_NEW", 402), disposition::pause_budget);
    EXPECT_EQ(disposition_for("", 408), disposition::retry_later);
    // A known code wins over an odd status (CHANNEL_ERROR's status varies per a migration listing).
    EXPECT_EQ(disposition_for("CHANNEL_ERROR", 500), disposition::give_up);
}

TEST(OutreachErrors, MayHaveTakenEffectOnlyFor5xxOfSideEffectingCalls) {
    EXPECT_TRUE(v2_error(500, "INTERNAL_ERROR", true).may_have_taken_effect);
    EXPECT_FALSE(v2_error(500, "INTERNAL_ERROR", false).may_have_taken_effect);
    EXPECT_FALSE(v2_error(400, "INVALID_PARAMS", true).may_have_taken_effect);
    EXPECT_FALSE(v2_error(429, "RATE_LIMITED", true).may_have_taken_effect);
    for (int status : {500, 502, 503, 504}) {
        auto e = detail::error_from_answer(answer(status, "<html>bad gateway</html>"), nullptr, true);
        EXPECT_EQ(e.kind, error_kind::http_status);
        EXPECT_EQ(e.code, "HTTP_" + std::to_string(status));
        EXPECT_TRUE(e.may_have_taken_effect) << status;
        EXPECT_EQ(e.what_to_do, disposition::retry_later);
    }
    EXPECT_FALSE(detail::error_from_answer(answer(501, ""), nullptr, true).may_have_taken_effect);
}

TEST(OutreachErrors, RetryAfterDeltaSecondsAndHttpDate) {
    using namespace std::chrono;
    auto now = sys_days{year{2026} / 3 / 1} + hours{12};
    EXPECT_EQ(parse_retry_after("7", now), 7);
    EXPECT_EQ(parse_retry_after(" 120 ", now), 120);
    EXPECT_EQ(parse_retry_after("Sun, 01 Mar 2026 12:00:30 GMT", now), 30);
    EXPECT_EQ(parse_retry_after("Sunday, 01-Mar-26 12:01:00 GMT", now), 60);
    EXPECT_EQ(parse_retry_after("Sun Mar  1 12:00:05 2026", now), 5);
    EXPECT_EQ(parse_retry_after("Sun, 01 Mar 2026 11:00:00 GMT", now), 0); // in the past
    EXPECT_FALSE(parse_retry_after("", now));
    EXPECT_FALSE(parse_retry_after("soon", now));
    EXPECT_FALSE(parse_retry_after("-5", now));
    EXPECT_FALSE(parse_retry_after("Sun, 31 Feb 2026 12:00:00 GMT", now));
    // A quota's wait (until midnight, or up to a week for the rolling week's) is believed: read as
    // no header, the calls went on inside it. Beyond a week and a day it is not believable, and is
    // read as no header (the backoff decides).
    EXPECT_EQ(parse_retry_after("3601", now), 3'601);
    EXPECT_EQ(parse_retry_after("68400", now), 68'400);  // a day cap's: until midnight
    EXPECT_EQ(parse_retry_after("604800", now), 604'800);  // a rolling week's
    EXPECT_EQ(parse_retry_after("691200", now), 691'200);
    EXPECT_FALSE(parse_retry_after("691201", now));
    EXPECT_FALSE(parse_retry_after("9300000000000000", now));
    EXPECT_FALSE(parse_retry_after("99999999999999999999999", now));
    EXPECT_EQ(parse_retry_after("Mon, 02 Mar 2026 00:00:00 GMT", now), 43'200);
    EXPECT_FALSE(parse_retry_after("Fri, 01 Mar 2030 12:00:00 GMT", now));
}

TEST(OutreachErrors, RateLimitedCarriesRetryAfterOnlyWhenTheHeaderIsPresent) {
    auto with = v2_error(429, "RATE_LIMITED", true, "3");
    EXPECT_EQ(with.what_to_do, disposition::back_off);
    ASSERT_TRUE(with.retry_after_s);
    EXPECT_EQ(*with.retry_after_s, 3);
    EXPECT_TRUE(with.retryable());
    auto without = v2_error(429, "RATE_LIMITED", true);
    EXPECT_FALSE(without.retry_after_s);
}

// A 429 is the account's limit only when its message names the account the request was for: a
// message that says "account" without naming it may mean the customer's account, the whole key.
TEST(OutreachErrors, A429IsTheAccountsOnlyWhenItsMessageNamesTheAccount) {
    EXPECT_TRUE(limit_names_account("too many 'send' requests for account acc_1; retry later", "acc_1"));
    EXPECT_TRUE(limit_names_account("acc_1: too many requests", "acc_1"));
    EXPECT_TRUE(limit_names_account("daily limit reached for account 'acc-7'", "acc-7"));
    EXPECT_FALSE(limit_names_account("rate limit exceeded for your account; retry later", "acc_1"));
    EXPECT_FALSE(limit_names_account("too many requests for this API key", "acc_1"));
    EXPECT_FALSE(limit_names_account("too many requests", "acc_1"));
    // Inside a longer id or word, it is not named.
    EXPECT_FALSE(limit_names_account("too many requests for account acc_12", "acc_1"));
    EXPECT_FALSE(limit_names_account("too many requests for account xacc_1", "acc_1"));
    EXPECT_TRUE(limit_names_account("limit of 5 for account 1 and 2", "1"));
    EXPECT_FALSE(limit_names_account("too many requests for account", ""));
}

TEST(OutreachErrors, ErrorDetailsAreKept) {
    auto body = R"({"success":false,"error":{"code":"INSUFFICIENT_CREDITS","message":"need 3",
                   "required":3,"remaining":1},"metadata":{"credits_consumed":0}})";
    call_metadata meta;
    auto r = detail::decode_v2_envelope(answer(402, body), false, meta);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().details["required"], 3);
    EXPECT_EQ(r.error().details["remaining"], 1);
    EXPECT_EQ(r.error().what_to_do, disposition::pause_budget);
}

TEST(OutreachErrors, V1ErrorWithHttp200) {
    std::string message;
    auto credits = detail::decode_v1_envelope(answer(200, R"({"status":"error","message":"insufficient credits available"})"),
                                              false, false, message);
    ASSERT_FALSE(credits);
    EXPECT_EQ(credits.error().kind, error_kind::v1_error);
    EXPECT_EQ(credits.error().code, "INSUFFICIENT_CREDITS");
    EXPECT_EQ(credits.error().http_status, 200);
    EXPECT_EQ(credits.error().what_to_do, disposition::pause_budget);

    auto missing = detail::decode_v1_envelope(answer(200, R"({"status":"error","message":"profile_url is required"})"),
                                              true, false, message);
    EXPECT_EQ(missing.error().code, "INVALID_PARAMS");
    EXPECT_EQ(missing.error().what_to_do, disposition::give_up);
    EXPECT_FALSE(missing.error().may_have_taken_effect);

    auto total = detail::decode_v1_envelope(
        answer(200, R"({"status":"error","message":"total_results must be a positive integer"})"), false, false, message);
    EXPECT_EQ(total.error().code, "INVALID_PARAMS");

    auto unavailable = detail::decode_v1_envelope(
        answer(200, R"({"status":"error","message":"service temporarily unavailable"})"), false, false, message);
    EXPECT_EQ(unavailable.error().code, "SERVICE_UNAVAILABLE");
    EXPECT_EQ(unavailable.error().what_to_do, disposition::retry_later);

    auto odd = detail::decode_v1_envelope(answer(200, R"({"status":"error","message":"the moon is full"})"), false,
                                          false, message);
    EXPECT_EQ(odd.error().code, "V1_ERROR");
    EXPECT_EQ(odd.error().what_to_do, disposition::give_up);

    // A V1 error with a real status keeps it.
    auto v1_500 = detail::decode_v1_envelope(answer(500, R"({"status":"error","message":"boom"})"), true, false, message);
    EXPECT_EQ(v1_500.error().kind, error_kind::v1_error);
    EXPECT_TRUE(v1_500.error().may_have_taken_effect);
    EXPECT_EQ(v1_500.error().what_to_do, disposition::retry_later);
}

TEST(OutreachErrors, MalformedSuccessEnvelopes) {
    call_metadata meta;
    auto not_json = detail::decode_v2_envelope(answer(200, "<html>"), true, meta);
    ASSERT_FALSE(not_json);
    EXPECT_EQ(not_json.error().kind, error_kind::malformed_response);
    EXPECT_TRUE(not_json.error().may_have_taken_effect); // the API answered 2xx to a side effect
    EXPECT_EQ(not_json.error().what_to_do, disposition::give_up);

    auto no_data = detail::decode_v2_envelope(answer(200, R"({"success":true,"metadata":{"credits_consumed":1}})"),
                                              false, meta);
    ASSERT_FALSE(no_data);
    EXPECT_EQ(no_data.error().kind, error_kind::malformed_response);
    EXPECT_FALSE(no_data.error().may_have_taken_effect);

    auto bad_credits = detail::decode_v2_envelope(
        answer(200, R"({"success":true,"data":{},"metadata":{"credits_consumed":"1"}})"), false, meta);
    ASSERT_FALSE(bad_credits);
    EXPECT_NE(bad_credits.error().message.find("credits_consumed"), std::string::npos);

    auto float_credits = detail::decode_v2_envelope(
        answer(200, R"({"success":true,"data":{},"metadata":{"credits_consumed":1.5}})"), false, meta);
    EXPECT_FALSE(float_credits);

    auto no_success = detail::decode_v2_envelope(answer(200, R"({"data":{}})"), false, meta);
    EXPECT_FALSE(no_success);

    auto array = detail::decode_v2_envelope(answer(200, "[1]"), false, meta);
    EXPECT_FALSE(array);
}

TEST(OutreachErrors, FailureEnvelopeWith200IsAnApiError) {
    call_metadata meta;
    auto r = detail::decode_v2_envelope(
        answer(200, R"({"success":false,"error":{"code":"CHANNEL_ERROR","message":"restricted"}})"), true, meta);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, error_kind::api_error);
    EXPECT_EQ(r.error().code, "CHANNEL_ERROR");
    EXPECT_EQ(r.error().what_to_do, disposition::give_up);
    EXPECT_FALSE(r.error().may_have_taken_effect);
}

// A 200 whose envelope says INTERNAL_ERROR says nothing of the effect, as a 500 does: a send
// answered so is reconciled, not sent again blindly (a trial's fake API had one message go out
// three times). A code that surely did nothing (INVALID_PARAMS) is still no effect.
TEST(OutreachErrors, A200FailureEnvelopeToRetryLaterMayHaveTakenEffect) {
    call_metadata meta;
    auto r = detail::decode_v2_envelope(
        answer(200, R"({"success":false,"error":{"code":"INTERNAL_ERROR","message":"oops"}})"), true, meta);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().what_to_do, disposition::retry_later);
    EXPECT_TRUE(r.error().may_have_taken_effect);
    auto read_only = detail::decode_v2_envelope(
        answer(200, R"({"success":false,"error":{"code":"INTERNAL_ERROR","message":"oops"}})"), false, meta);
    ASSERT_FALSE(read_only);
    EXPECT_FALSE(read_only.error().may_have_taken_effect);
    auto refused = detail::decode_v2_envelope(
        answer(200, R"({"success":false,"error":{"code":"INVALID_PARAMS","message":"no"}})"), true, meta);
    ASSERT_FALSE(refused);
    EXPECT_FALSE(refused.error().may_have_taken_effect);
}

// An unreadable 2xx answer: a read-only call is tried again later (one such answer to a check
// failed its lead for good at its first try); a side-effecting one gives up and is reconciled.
TEST(OutreachErrors, AnUnreadableAnswerToAReadIsRetriedAndToAWriteReconciled) {
    call_metadata meta;
    auto read = detail::decode_v2_envelope(answer(200, R"({"success":true,"data":{"invitation_sta)"), false, meta);
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().kind, error_kind::malformed_response);
    EXPECT_EQ(read.error().what_to_do, disposition::retry_later);
    EXPECT_FALSE(read.error().may_have_taken_effect);
    auto write = detail::decode_v2_envelope(answer(200, "<html>ok</html>"), true, meta);
    ASSERT_FALSE(write);
    EXPECT_EQ(write.error().what_to_do, disposition::give_up);
    EXPECT_TRUE(write.error().may_have_taken_effect);
}

// A charge no call can cost is not booked: the answer is unreadable (a write is reconciled, a read
// tried again), where one answer's 1,000,000 credits paused a trial's campaign for its budget.
TEST(OutreachErrors, AnUnbelievableChargeMakesTheAnswerUnreadable) {
    auto with_credits = [](const std::string& credits) {
        return answer(200, R"({"success":true,"data":{"x":1},"metadata":{"action":"invite","credits_consumed":)" +
                               credits + "}}");
    };
    call_metadata meta;
    auto big = detail::decode_v2_envelope(with_credits("1000000"), true, meta);
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error().kind, error_kind::malformed_response);
    EXPECT_NE(big.error().message.find("not believable"), std::string::npos) << big.error().message;
    EXPECT_TRUE(big.error().may_have_taken_effect);
    call_metadata fine;
    auto ok = detail::decode_v2_envelope(with_credits("300"), true, fine);
    ASSERT_TRUE(ok);
    EXPECT_EQ(fine.credits_consumed, 300);
}

TEST(OutreachErrors, NonJsonErrorBodiesBecomeHttpStatusErrors) {
    auto e = detail::error_from_answer(answer(429, "slow down", "30"), nullptr, true);
    EXPECT_EQ(e.kind, error_kind::http_status);
    EXPECT_EQ(e.what_to_do, disposition::back_off);
    ASSERT_TRUE(e.retry_after_s);
    EXPECT_EQ(*e.retry_after_s, 30);
    // A date far ahead is not believable: no Retry-After, the backoff decides.
    EXPECT_FALSE(detail::error_from_answer(answer(429, "slow down", "Sun, 01 Mar 2099 12:00:00 GMT"), nullptr, true)
                     .retry_after_s);
    EXPECT_NE(e.message.find("slow down"), std::string::npos);
}

TEST(OutreachErrors, SuccessEnvelopeMetadataIsRead) {
    call_metadata meta;
    auto r = detail::decode_v2_envelope(
        answer(200, R"({"success":true,"data":{"x":1},"metadata":{"action":"check_invitation","account_id":"acc_1",
                      "credits_consumed":1,"timestamp":"2025-01-15T10:35:00.000000"}})"),
        false, meta);
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)["x"], 1);
    EXPECT_EQ(meta.action, "check_invitation");
    EXPECT_EQ(meta.account_id, "acc_1");
    EXPECT_EQ(meta.credits_consumed, 1);
    ASSERT_TRUE(meta.timestamp); // microseconds, no zone
}

TEST(OutreachErrors, TransportErrorsSayWhetherTheRequestWentOut) {
    auto before = make_transport_error(error_kind::timeout, failure_step::connect, "t", false, true);
    EXPECT_FALSE(before.may_have_taken_effect);
    EXPECT_EQ(before.what_to_do, disposition::retry_later);
    EXPECT_EQ(before.code, "TIMEOUT");
    auto after = make_transport_error(error_kind::connection_lost, failure_step::read, "t", true, true);
    EXPECT_TRUE(after.may_have_taken_effect);
    auto read_only = make_transport_error(error_kind::timeout, failure_step::read, "t", true, false);
    EXPECT_FALSE(read_only.may_have_taken_effect);
    EXPECT_NE(describe(after).find("may have taken effect"), std::string::npos);
}

} // namespace
