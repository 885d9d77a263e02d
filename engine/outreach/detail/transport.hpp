// HTTP/1.1 transport of the client: keep-alive connection pools per (scheme, host, port), TLS,
// per-step deadlines, cancellation. Single-threaded: every member runs on the client's
// executor (STYLE B3), so nothing is locked.
#pragma once

#include "engine/outreach/client.hpp"
#include "engine/outreach/detail/parse.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace orch::outreach::detail {

namespace beast = boost::beast;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using steady = std::chrono::steady_clock;

struct endpoint {
    bool tls = false;
    std::string host;
    std::string port;
    std::string path_prefix;           // prepended to every target ("" or "/api")
    std::string key() const { return (tls ? "https://" : "http://") + host + ":" + port; }
};

// Parses "http(s)://host[:port][/prefix]"; nullopt with `why` set when malformed.
std::optional<endpoint> parse_base_url(std::string_view url, std::string& why);

struct deadlines {
    steady::time_point total;
    std::chrono::milliseconds connect{0};
    std::chrono::milliseconds read{0};
};

deadlines make_deadlines(const client_settings& s, const call_options& o);

struct outgoing {
    beast::http::verb method = beast::http::verb::post;
    std::string target;                // without the path prefix
    std::string body;                  // empty: no body
    bool side_effect = false;
};

// One connection: plain TCP or TLS over TCP, its read buffer, and when it went idle.
struct connection {
    std::optional<beast::tcp_stream> plain;
    std::optional<ssl::stream<beast::tcp_stream>> secure;
    beast::flat_buffer buffer;
    steady::time_point idle_since{};
    beast::tcp_stream& lowest() { return secure ? secure->next_layer() : *plain; }
};

struct waiter;

struct host_pool {
    endpoint ep;
    std::vector<std::unique_ptr<connection>> idle; // most recently used last
    std::size_t open = 0;                          // idle + in use + connecting
    std::deque<waiter*> waiters;
    std::optional<tcp::resolver::results_type> resolved;
    pool_stats counters;
};

class transport : public std::enable_shared_from_this<transport> {
public:
    transport(asio::any_io_executor executor, client_settings settings, std::shared_ptr<ssl::context> tls);

    // Sends one request on a pooled connection and reads the whole response.
    // Errors: transport_connect, timeout, connection_lost, malformed_response (unreadable
    // HTTP), cancelled; HTTP statuses are returned as answers, not errors.
    asio::awaitable<result<http_answer>> perform(const endpoint& ep, outgoing req, deadlines d);

    // Opens a dedicated (unpooled) connection for a long-lived stream.
    asio::awaitable<result<std::unique_ptr<connection>>> connect_dedicated(const endpoint& ep, deadlines d);

    // Builds a request with the client's standard headers.
    beast::http::request<beast::http::string_body> build(const endpoint& ep, const outgoing& o) const;

    // Returns a checked-out connection: idle for reuse when `reusable`, else closed, freeing its
    // slot. A null `conn` frees a slot that never got a connection. Wakes one waiter.
    void release(host_pool& pool, std::unique_ptr<connection> conn, bool reusable);

    pool_stats stats(const endpoint& ep) const;
    void close_idle();
    const client_settings& settings() const { return settings_; }
    asio::any_io_executor executor() const { return executor_; }

private:
    struct lease {
        std::unique_ptr<connection> conn; // null: a slot to open a new connection
        bool reused = false;
    };

    host_pool& pool_for(const endpoint& ep);
    asio::awaitable<result<lease>> acquire(host_pool& pool, const deadlines& d, bool side_effect);
    bool is_stale(connection& c) const;
    asio::awaitable<result<std::unique_ptr<connection>>> connect(host_pool& pool, const deadlines& d,
                                                                 bool side_effect);
    asio::awaitable<result<http_answer>> exchange(connection& c, const outgoing& o, const endpoint& ep,
                                                  const deadlines& d, bool& written, bool& reusable);

    asio::any_io_executor executor_;
    client_settings settings_;
    std::shared_ptr<ssl::context> tls_; // created on first https use when not given
    std::map<std::string, host_pool> pools_;
};

// The TLS context for the settings: verify_peer, the system store, extra CA certificates.
result<std::shared_ptr<ssl::context>> make_tls_context(const client_settings& s);

// Whether the step deadline or the total deadline is the earlier one (for messages).
steady::time_point step_deadline(const deadlines& d, std::chrono::milliseconds step);

} // namespace orch::outreach::detail
