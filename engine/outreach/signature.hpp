// Webhook signatures of the Outreach API (spec, Authentication 5):
//   X-Service-Timestamp: <unix seconds>
//   X-Service-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace orch::outreach {

// Lower-case hex HMAC-SHA256 of `message` keyed with `secret`.
std::string hmac_sha256_hex(std::string_view secret, std::string_view message);

// The header value "v1=<hex>" for a delivery at `timestamp_s` with body `raw_body`.
std::string sign_webhook(std::string_view secret, std::int64_t timestamp_s, std::string_view raw_body);

enum class signature_check {
    valid,
    missing,            // a header is absent or empty
    malformed,          // timestamp not an integer, or signature not "v1=<64 hex>"
    outside_tolerance,  // timestamp too far from now (replay or skewed clock)
    mismatch            // the HMAC does not match
};

std::string_view to_string(signature_check c);

// Verifies a delivery. Compares in constant time. `tolerance` applies both ways.
signature_check verify_webhook(std::string_view secret, std::string_view timestamp_header,
                               std::string_view signature_header, std::string_view raw_body,
                               std::chrono::system_clock::time_point now,
                               std::chrono::seconds tolerance = std::chrono::seconds{300});

} // namespace orch::outreach
