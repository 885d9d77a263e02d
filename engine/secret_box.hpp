// orch::engine secret_box: authenticated encryption of small secrets at rest (webhook signing
// secrets in Postgres). AES-256-GCM with a random 96-bit nonce per seal; the key is SHA-256 of
// ORCH_SECRET_KEY's text, so any long random string is a usable key. A sealed value is
// nonce (12 bytes) | tag (16 bytes) | ciphertext.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace orch::engine {

class secret_box {
public:
    explicit secret_box(std::string_view key_text);
    std::string seal(std::string_view plain) const;
    // nullopt when the value was sealed under another key, or was altered.
    std::optional<std::string> open(std::string_view sealed) const;

private:
    unsigned char key_[32];
};

// The SHA-256 digest of `text` in lower-case hex (64 characters).
std::string sha256_hex(std::string_view text);

}  // namespace orch::engine
