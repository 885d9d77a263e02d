#include "engine/outreach/signature.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>
#include <cstdint>

namespace orch::outreach {

std::string hmac_sha256_hex(std::string_view secret, std::string_view message) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest, &digest_len);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(digest_len * 2);
    for (unsigned int i = 0; i < digest_len; ++i) {
        out.push_back(hex[digest[i] >> 4]);
        out.push_back(hex[digest[i] & 0x0f]);
    }
    return out;
}

std::string sign_webhook(std::string_view secret, std::int64_t timestamp_s, std::string_view raw_body) {
    std::string message = std::to_string(timestamp_s);
    message.push_back('.');
    message.append(raw_body);
    return "v1=" + hmac_sha256_hex(secret, message);
}

std::string_view to_string(signature_check c) {
    switch (c) {
    case signature_check::valid: return "valid";
    case signature_check::missing: return "missing signature or timestamp header";
    case signature_check::malformed: return "malformed signature or timestamp header";
    case signature_check::outside_tolerance: return "timestamp outside the tolerance window";
    case signature_check::mismatch: return "signature does not match";
    }
    return "unknown";
}

signature_check verify_webhook(std::string_view secret, std::string_view timestamp_header,
                               std::string_view signature_header, std::string_view raw_body,
                               std::chrono::system_clock::time_point now, std::chrono::seconds tolerance) {
    if (timestamp_header.empty() || signature_header.empty()) {
        return signature_check::missing;
    }
    std::int64_t ts = 0;
    auto [ptr, ec] = std::from_chars(timestamp_header.data(), timestamp_header.data() + timestamp_header.size(), ts);
    if (ec != std::errc{} || ptr != timestamp_header.data() + timestamp_header.size()) {
        return signature_check::malformed;
    }
    constexpr std::string_view prefix = "v1=";
    if (signature_header.size() != prefix.size() + 64 || signature_header.substr(0, 3) != prefix) {
        return signature_check::malformed;
    }
    std::int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    // In unsigned arithmetic: a hostile timestamp near either end of int64 would overflow the
    // signed difference (undefined behaviour), and its skew is huge either way.
    const auto now_u = static_cast<std::uint64_t>(now_s), ts_u = static_cast<std::uint64_t>(ts);
    const std::uint64_t skew = now_s > ts ? now_u - ts_u : ts_u - now_u;
    if (skew > static_cast<std::uint64_t>(tolerance.count())) {
        return signature_check::outside_tolerance;
    }
    std::string expected = sign_webhook(secret, ts, raw_body);
    // Compare case-insensitively in hex would leak nothing, but the scheme is lower-case hex;
    // CRYPTO_memcmp keeps the comparison constant-time.
    if (CRYPTO_memcmp(expected.data(), signature_header.data(), expected.size()) != 0) {
        return signature_check::mismatch;
    }
    return signature_check::valid;
}

} // namespace orch::outreach
