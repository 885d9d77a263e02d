// Generic HTTP/1.1 server over Boost.Beast with C++20 coroutines.
//
// One accept loop, one coroutine per connection, keep-alive, a request body limit (413), an idle
// deadline on every read and write, and a handler that may answer, close the connection without
// answering (fault injection), or take the socket over (server-sent events).
//
// Threading: everything runs on the executor passed in; with a single-threaded io_context the
// handler may touch shared state without locks (STYLE B3).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace orch::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

using request = http::request<http::string_body>;
using response = http::response<http::string_body>;

// What a handler wants done with the connection after it ran.
struct handler_result {
    enum class kind {
        respond,   // write `res`, then keep the connection alive unless the request said close
        drop,      // close the socket at once without writing anything
        taken_over // the handler owns the stream now (it wrote and closed it itself)
    };
    kind what = kind::respond;
    response res;

    static handler_result reply(response r) { return {kind::respond, std::move(r)}; }
    static handler_result dropped() { return {kind::drop, {}}; }
    static handler_result taken() { return {kind::taken_over, {}}; }
};

// A connection's stream, handed to the handler so it can take it over (SSE).
using handler = std::function<asio::awaitable<handler_result>(request&, beast::tcp_stream&)>;

struct server_settings {
    std::string listen_host = "127.0.0.1";
    unsigned short listen_port = 0; // 0: the OS picks a free port
    std::size_t body_limit_bytes = 1024 * 1024;
    std::chrono::milliseconds idle_timeout_ms{60'000};
    std::string server_name = "orch";
    // The body of the errors the server answers itself (413 body too large, 431 headers too large,
    // 400 malformed HTTP, 500 a handler threw), so they have the shape of the handler's own
    // errors. `code` is a fixed upper-case word (PAYLOAD_TOO_LARGE), `message` plain ASCII. Unset:
    // {"success":false,"error":{"code":...,"message":...}}, the Outreach API's shape.
    std::function<std::string(http::status status, std::string_view code, std::string_view message)> error_body;
};

// Builds a JSON response with the usual headers.
response json_response(unsigned version, bool keep_alive, http::status status, std::string body);

// Parses "host:port" (IPv4, [IPv6] or a name). Returns false with `error` set when malformed.
bool parse_host_port(std::string_view text, std::string& host, unsigned short& port, std::string& error);

class http_server {
public:
    // Binds and listens at once, so the bound port is known before start(). Throws
    // std::runtime_error ("cannot bind HOST:PORT: Address already in use") when the address
    // cannot be resolved or bound.
    http_server(asio::any_io_executor executor, server_settings settings, handler h);
    ~http_server();
    http_server(const http_server&) = delete;
    http_server& operator=(const http_server&) = delete;

    unsigned short port() const;
    // Starts the accept loop (idempotent).
    void start();
    // Stops accepting and closes every open connection (idempotent).
    void stop();

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

} // namespace orch::api
