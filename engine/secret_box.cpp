#include "engine/secret_box.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>
#include <stdexcept>

namespace orch::engine {

namespace {

constexpr int nonce_size = 12;
constexpr int tag_size = 16;

using ctx_ptr = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

ctx_ptr new_ctx() {
    ctx_ptr c(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
    if (!c) {
        throw std::runtime_error("secret_box: out of memory");
    }
    return c;
}

const unsigned char* bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

}  // namespace

secret_box::secret_box(std::string_view key_text) {
    unsigned int len = 0;
    EVP_Digest(key_text.data(), key_text.size(), key_, &len, EVP_sha256(), nullptr);
}

std::string secret_box::seal(std::string_view plain) const {
    std::string out(nonce_size + tag_size + plain.size(), '\0');
    auto* o = reinterpret_cast<unsigned char*>(out.data());
    if (RAND_bytes(o, nonce_size) != 1) {
        throw std::runtime_error("secret_box: no randomness for a nonce");
    }
    auto c = new_ctx();
    int n = 0;
    if (EVP_EncryptInit_ex(c.get(), EVP_aes_256_gcm(), nullptr, key_, o) != 1 ||
        EVP_EncryptUpdate(c.get(), o + nonce_size + tag_size, &n, bytes(plain), static_cast<int>(plain.size())) != 1 ||
        EVP_EncryptFinal_ex(c.get(), o + nonce_size + tag_size + n, &n) != 1 ||
        EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_GET_TAG, tag_size, o + nonce_size) != 1) {
        throw std::runtime_error("secret_box: encryption failed");
    }
    return out;
}

std::optional<std::string> secret_box::open(std::string_view sealed) const {
    if (sealed.size() < static_cast<std::size_t>(nonce_size + tag_size)) {
        return std::nullopt;
    }
    const unsigned char* s = bytes(sealed);
    std::string plain(sealed.size() - nonce_size - tag_size, '\0');
    auto* p = reinterpret_cast<unsigned char*>(plain.data());
    auto c = new_ctx();
    int n = 0;
    unsigned char tag[tag_size];
    std::copy(s + nonce_size, s + nonce_size + tag_size, tag);
    if (EVP_DecryptInit_ex(c.get(), EVP_aes_256_gcm(), nullptr, key_, s) != 1 ||
        EVP_DecryptUpdate(c.get(), p, &n, s + nonce_size + tag_size, static_cast<int>(plain.size())) != 1 ||
        EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_SET_TAG, tag_size, tag) != 1 ||
        EVP_DecryptFinal_ex(c.get(), p + n, &n) != 1) {
        return std::nullopt;
    }
    return plain;
}

std::string sha256_hex(std::string_view text) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr);
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
        out.push_back(hex[md[i] >> 4]);
        out.push_back(hex[md[i] & 15]);
    }
    return out;
}

}  // namespace orch::engine
