#include "tests/support/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <thread>
#include <chrono>

namespace orch::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

json http_result::body_json() const { return json::parse(body, nullptr, false); }

std::string http_result::header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
}

struct http_client::impl {
    std::string host;
    unsigned short port;
    asio::io_context io;
    std::unique_ptr<beast::tcp_stream> stream;
    beast::flat_buffer buffer;

    void connect() {
        stream = std::make_unique<beast::tcp_stream>(io);
        asio::ip::tcp::resolver resolver(io);
        stream->expires_after(std::chrono::seconds(10));
        stream->connect(resolver.resolve(host, std::to_string(port)));
        buffer.clear();
    }

    http_result once(const std::string& method, const std::string& target, const std::string& body,
                     const std::map<std::string, std::string>& headers) {
        if (!stream) {
            connect();
        }
        http::request<http::string_body> req{http::string_to_verb(method), target, 11};
        req.set(http::field::host, host);
        for (const auto& [k, v] : headers) {
            req.set(k, v);
        }
        if (!body.empty() || method == "POST" || method == "PUT") {
            if (req.find(http::field::content_type) == req.end()) {
                req.set(http::field::content_type, "application/json");
            }
            req.body() = body;
            req.prepare_payload();
        }
        stream->expires_after(std::chrono::seconds(10));
        http::write(*stream, req);
        http::response_parser<http::string_body> parser;
        parser.body_limit(64 * 1024 * 1024);
        parser.skip(method == "HEAD");  // a HEAD's answer has no body, whatever its Content-Length
        http::read(*stream, buffer, parser);
        auto res = parser.release();
        http_result out;
        out.status = static_cast<int>(res.result_int());
        out.body = res.body();
        for (const auto& f : res) {
            std::string name(f.name_string());
            std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
            out.headers[name] = std::string(f.value());
        }
        if (!res.keep_alive()) {
            stream.reset();
        }
        return out;
    }
};

http_client::http_client(std::string host, unsigned short port) : impl_(std::make_unique<impl>()) {
    impl_->host = std::move(host);
    impl_->port = port;
}

http_client::~http_client() = default;

http_result http_client::request(const std::string& method, const std::string& target, const std::string& body,
                                 const std::map<std::string, std::string>& headers) {
    bool fresh = !impl_->stream;
    try {
        return impl_->once(method, target, body, headers);
    } catch (const std::exception& e) {
        impl_->stream.reset();
        if (fresh) {
            throw std::runtime_error(std::string("HTTP ") + method + " " + target + ": " + e.what());
        }
    }
    try {
        return impl_->once(method, target, body, headers);
    } catch (const std::exception& e) {
        impl_->stream.reset();
        throw std::runtime_error(std::string("HTTP ") + method + " " + target + ": " + e.what());
    }
}

http_result http_client::get(const std::string& target, const std::string& api_key) {
    std::map<std::string, std::string> h;
    if (!api_key.empty()) {
        h["x-api-key"] = api_key;
    }
    return request("GET", target, "", h);
}

http_result http_client::post(const std::string& target, const json& body, const std::string& api_key) {
    std::map<std::string, std::string> h;
    if (!api_key.empty()) {
        h["x-api-key"] = api_key;
    }
    return request("POST", target, body.dump(), h);
}

http_result http_client::v2(const std::string& api_key, const std::string& category, const std::string& account_id,
                            const std::string& action, const json& params) {
    return post("/v2/" + category, json{{"account_id", account_id}, {"action", action}, {"params", params}}, api_key);
}

std::string login_account(http_client& client, const std::string& api_key, const std::string& login_token,
                          const std::string& country) {
    auto r = client.post("/v2/login", json{{"platform", "network"}, {"country", country}, {"login_token", login_token}},
                         api_key);
    auto j = r.body_json();
    if (r.status != 200 || !j.is_object() || !j.value("success", false)) {
        throw std::runtime_error("login failed: " + std::to_string(r.status) + " " + r.body);
    }
    return j["data"]["account_id"].get<std::string>();
}

std::string raw_exchange(unsigned short port, const std::string& bytes) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        throw std::runtime_error("connect failed");
    }
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        auto n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) {
            break;  // the server may answer (413, 431) and close before reading everything
        }
        sent += static_cast<std::size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
    std::string out;
    char buf[4096];
    for (;;) {
        auto n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

raw_answer parse_answer(const std::string& text) {
    raw_answer a;
    if (text.rfind("HTTP/1.1 ", 0) == 0 && text.size() >= 12) {
        a.status = std::stoi(text.substr(9, 3));
    }
    auto end = text.find("\r\n\r\n");
    if (end != std::string::npos) {
        a.body = text.substr(end + 4);
    }
    return a;
}

std::unique_ptr<http_client> client_when_up(unsigned short port) {
    for (int i = 0; i < 400; ++i) {
        try {
            if (http_client("127.0.0.1", port).get("/healthz").status == 200) {
                return std::make_unique<http_client>("127.0.0.1", port);
            }
        } catch (const std::exception&) {
            // not listening yet
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return nullptr;
}

} // namespace orch::test
