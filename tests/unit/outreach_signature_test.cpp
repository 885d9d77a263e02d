// Webhook signatures (spec, Authentication 5): HMAC-SHA256 over "<ts>.<raw body>" as v1=<hex>,
// constant-time comparison, about five minutes of tolerance either way.
#include "engine/outreach/signature.hpp"
#include "engine/outreach/types.hpp"

#include <gtest/gtest.h>

using namespace orch::outreach;
using namespace std::chrono;

namespace {

TEST(OutreachSignature, HmacMatchesTheRfc4231Vector) {
    EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(OutreachSignature, SignIsOverTimestampDotRawBody) {
    std::string body = R"({"account_id":"acc_1","event":{"type":"message"}})";
    EXPECT_EQ(sign_webhook("s3cr3t", 1736936460, body), "v1=" + hmac_sha256_hex("s3cr3t", "1736936460." + body));
}

TEST(OutreachSignature, VerifyAcceptsWithinToleranceBothWays) {
    std::string body = R"({"event":{"type":"disconnection"}})";
    auto now = system_clock::time_point{seconds{1'736'936'460}};
    auto sig = sign_webhook("k", 1'736'936'460, body);
    EXPECT_EQ(verify_webhook("k", "1736936460", sig, body, now), signature_check::valid);
    EXPECT_EQ(verify_webhook("k", "1736936460", sig, body, now + seconds{299}), signature_check::valid);
    EXPECT_EQ(verify_webhook("k", "1736936460", sig, body, now - seconds{299}), signature_check::valid);
    EXPECT_EQ(verify_webhook("k", "1736936460", sig, body, now + seconds{301}), signature_check::outside_tolerance);
    EXPECT_EQ(verify_webhook("k", "1736936460", sig, body, now - seconds{301}), signature_check::outside_tolerance);
    // A timestamp at either end of int64 is outside the tolerance; its skew does not overflow
    // (the signed difference would be undefined, and wrap to a small number).
    EXPECT_EQ(verify_webhook("k", "-9223372036854775808", sig, body, now), signature_check::outside_tolerance);
    EXPECT_EQ(verify_webhook("k", "9223372036854775807", sig, body, now), signature_check::outside_tolerance);
    EXPECT_EQ(verify_webhook("k", "9223372036854775807", sig, body, system_clock::time_point{seconds{-1'000}}),
              signature_check::outside_tolerance);
}

TEST(OutreachSignature, VerifyRejectsTamperingAndBadHeaders) {
    std::string body = R"({"event":{"type":"message","message_text":"hi"}})";
    auto now = system_clock::time_point{seconds{1'000'000}};
    auto sig = sign_webhook("k", 1'000'000, body);
    EXPECT_EQ(verify_webhook("k", "1000000", sig, body + " ", now), signature_check::mismatch);
    EXPECT_EQ(verify_webhook("other", "1000000", sig, body, now), signature_check::mismatch);
    EXPECT_EQ(verify_webhook("k", "1000001", sig, body, now), signature_check::mismatch); // timestamp is signed
    EXPECT_EQ(verify_webhook("k", "", sig, body, now), signature_check::missing);
    EXPECT_EQ(verify_webhook("k", "1000000", "", body, now), signature_check::missing);
    EXPECT_EQ(verify_webhook("k", "10e5", sig, body, now), signature_check::malformed);
    EXPECT_EQ(verify_webhook("k", "1000000", "v2=" + sig.substr(3), body, now), signature_check::malformed);
    EXPECT_EQ(verify_webhook("k", "1000000", sig.substr(0, 40), body, now), signature_check::malformed);
    // A verified body parses into a typed event.
    ASSERT_EQ(verify_webhook("k", "1000000", sig, body, now), signature_check::valid);
    auto ev = parse_webhook_event(std::string_view(body));
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->message_text, "hi");
}

} // namespace
