// HTTPS: the client verifies the server certificate by default (system store), checks the host
// name, and sends SNI. The server here is in-process with a self-signed certificate generated at
// test time through the OpenSSL API (nothing checked in).
#include "engine/outreach/client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <gtest/gtest.h>

#include <memory>

using namespace orch::outreach;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

namespace {

struct pem_pair {
    std::string cert;
    std::string key;
};

std::string bio_text(BIO* bio) {
    BUF_MEM* mem = nullptr;
    BIO_get_mem_ptr(bio, &mem);
    return std::string(mem->data, mem->length);
}

// A self-signed certificate for `san` ("DNS:localhost,IP:127.0.0.1"), valid for an hour.
pem_pair make_self_signed(const char* common_name, const char* san) {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, key);
    X509_NAME* name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name), -1, -1,
                               0);
    X509_set_issuer_name(x, name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
    for (auto [nid, value] : {std::pair{NID_subject_alt_name, san}, std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
        X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
        X509_add_ext(x, ext, -1);
        X509_EXTENSION_free(ext);
    }
    X509_sign(x, key, EVP_sha256());
    BIO* cert_bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(cert_bio, x);
    BIO* key_bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(key_bio, key, nullptr, nullptr, 0, nullptr, nullptr);
    pem_pair out{bio_text(cert_bio), bio_text(key_bio)};
    BIO_free(cert_bio);
    BIO_free(key_bio);
    X509_free(x);
    EVP_PKEY_free(key);
    return out;
}

// A TLS server answering every request with a credits envelope, recording the SNI names seen.
class tls_server {
public:
    tls_server(boost::asio::io_context& io, const pem_pair& pem)
        : ctx_(ssl::context::tls_server), acceptor_(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)) {
        ctx_.use_certificate_chain(boost::asio::buffer(pem.cert));
        ctx_.use_private_key(boost::asio::buffer(pem.key), ssl::context::pem);
        SSL_CTX_set_tlsext_servername_callback(ctx_.native_handle(), &tls_server::on_sni);
        SSL_CTX_set_tlsext_servername_arg(ctx_.native_handle(), this);
        boost::asio::co_spawn(io, accept_loop(), boost::asio::detached);
    }
    unsigned short port() const { return acceptor_.local_endpoint().port(); }
    std::vector<std::string> sni_names;
    int handshakes = 0;

private:
    static int on_sni(SSL* s, int*, void* arg) {
        const char* name = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
        static_cast<tls_server*>(arg)->sni_names.push_back(name == nullptr ? "" : name);
        return SSL_TLSEXT_ERR_OK;
    }

    boost::asio::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor_.async_accept(boost::asio::as_tuple(boost::asio::use_awaitable));
            if (ec) {
                co_return;
            }
            boost::asio::co_spawn(acceptor_.get_executor(), serve(std::move(socket)), boost::asio::detached);
        }
    }

    boost::asio::awaitable<void> serve(tcp::socket socket) {
        auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
        ssl::stream<tcp::socket> stream(std::move(socket), ctx_);
        auto [hec] = co_await stream.async_handshake(ssl::stream_base::server, tuple);
        if (hec) {
            co_return;
        }
        ++handshakes;
        beast::flat_buffer buffer;
        for (;;) {
            http::request<http::string_body> req;
            auto [rec, n] = co_await http::async_read(stream, buffer, req, tuple);
            if (rec) {
                co_return;
            }
            http::response<http::string_body> res{http::status::ok, 11};
            res.set(http::field::content_type, "application/json");
            res.body() = R"({"success":true,"data":{"credits":42},"metadata":{"action":"get_credits","credits_consumed":0}})";
            res.keep_alive(true);
            res.prepare_payload();
            auto [wec, wn] = co_await http::async_write(stream, res, tuple);
            if (wec) {
                co_return;
            }
        }
    }

    ssl::context ctx_;
    tcp::acceptor acceptor_;
};

template <typename T>
T run(boost::asio::io_context& io, boost::asio::awaitable<T> aw) {
    std::optional<T> out;
    boost::asio::co_spawn(io, std::move(aw), [&](std::exception_ptr e, T v) {
        if (e) {
            std::rethrow_exception(e);
        }
        out.emplace(std::move(v));
    });
    io.restart();
    while (!out && io.run_one() > 0) {
    }
    return std::move(*out);
}

client make(boost::asio::io_context& io, unsigned short port, std::string extra_ca, bool verify = true) {
    client_settings s;
    s.base_url = "https://localhost:" + std::to_string(port);
    s.api_key = "k";
    s.extra_ca_pem = std::move(extra_ca);
    s.verify_peer = verify;
    s.total_timeout_ms = 5'000;
    auto c = client::make(io.get_executor(), s);
    EXPECT_TRUE(c) << describe(c.error());
    return std::move(c).value();
}

TEST(OutreachTls, RejectsASelfSignedCertificateByDefault) {
    boost::asio::io_context io;
    auto pem = make_self_signed("localhost", "DNS:localhost,IP:127.0.0.1");
    tls_server server(io, pem);
    auto c = make(io, server.port(), "");
    auto r = run(io, c.get_credits());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, error_kind::transport_connect);
    EXPECT_EQ(r.error().code, "TLS_VERIFY_FAILED");
    EXPECT_EQ(r.error().step, failure_step::tls_handshake);
    EXPECT_EQ(r.error().what_to_do, disposition::stop_everything);
    EXPECT_FALSE(r.error().may_have_taken_effect);
    EXPECT_EQ(server.handshakes, 0);
}

TEST(OutreachTls, AcceptsItWhenTrustedAsACaAndSendsSni) {
    boost::asio::io_context io;
    auto pem = make_self_signed("localhost", "DNS:localhost,IP:127.0.0.1");
    tls_server server(io, pem);
    auto c = make(io, server.port(), pem.cert);
    auto first = run(io, c.get_credits());
    ASSERT_TRUE(first) << describe(first.error());
    EXPECT_EQ(first->credits, 42);
    auto second = run(io, c.get_credits());
    ASSERT_TRUE(second);
    ASSERT_FALSE(server.sni_names.empty());
    EXPECT_EQ(server.sni_names.front(), "localhost");
    // Keep-alive: one handshake, the second call reused the connection.
    EXPECT_EQ(server.handshakes, 1);
    EXPECT_EQ(c.stats().connects, 1u);
    EXPECT_EQ(c.stats().reuses, 1u);
}

TEST(OutreachTls, RejectsATrustedCertificateForAnotherHost) {
    boost::asio::io_context io;
    auto pem = make_self_signed("other.example", "DNS:other.example");
    tls_server server(io, pem);
    auto c = make(io, server.port(), pem.cert);
    auto r = run(io, c.get_credits());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, "TLS_VERIFY_FAILED");
}

TEST(OutreachTls, VerificationCanBeTurnedOff) {
    boost::asio::io_context io;
    auto pem = make_self_signed("other.example", "DNS:other.example");
    tls_server server(io, pem);
    auto c = make(io, server.port(), "", false);
    auto r = run(io, c.get_credits());
    ASSERT_TRUE(r) << describe(r.error());
    EXPECT_EQ(r->credits, 42);
}

TEST(OutreachTls, BadExtraCaIsASettingsError) {
    boost::asio::io_context io;
    client_settings s;
    s.base_url = "https://localhost:1";
    s.api_key = "k";
    s.extra_ca_pem = "not a certificate";
    auto c = client::make(io.get_executor(), s);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, "INVALID_SETTINGS");
    client_settings bad;
    bad.base_url = "ftp://x";
    bad.pool_size = 0;
    auto problems = validate(bad);
    EXPECT_EQ(problems.size(), 3u); // scheme, api_key, pool_size
}

} // namespace
