#include "engine/outreach/detail/transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/parse.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace orch::outreach::detail {

namespace http = beast::http;
using boost::system::error_code;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// ---------------------------------------------------------------------------------------------
// Settings helpers

std::optional<endpoint> parse_base_url(std::string_view url, std::string& why) {
    auto parsed = boost::urls::parse_absolute_uri(url);
    if (!parsed) {
        why = "base_url is not an absolute URL: '" + std::string(url) + "'";
        return std::nullopt;
    }
    endpoint ep;
    std::string scheme(parsed->scheme());
    if (scheme != "http" && scheme != "https") {
        why = "base_url scheme must be http or https, got '" + scheme + "'";
        return std::nullopt;
    }
    ep.tls = scheme == "https";
    ep.host = std::string(parsed->host_address());
    if (ep.host.empty()) {
        why = "base_url has no host";
        return std::nullopt;
    }
    ep.port = parsed->has_port() ? std::string(parsed->port()) : (ep.tls ? "443" : "80");
    ep.path_prefix = std::string(parsed->encoded_path());
    while (!ep.path_prefix.empty() && ep.path_prefix.back() == '/') {
        ep.path_prefix.pop_back();
    }
    return ep;
}

deadlines make_deadlines(const client_settings& s, const call_options& o) {
    deadlines d;
    d.connect = std::chrono::milliseconds(o.connect_timeout_ms.value_or(s.connect_timeout_ms));
    d.read = std::chrono::milliseconds(o.read_timeout_ms.value_or(s.read_timeout_ms));
    d.total = steady::now() + std::chrono::milliseconds(o.total_timeout_ms.value_or(s.total_timeout_ms));
    return d;
}

steady::time_point step_deadline(const deadlines& d, std::chrono::milliseconds step) {
    return std::min(d.total, steady::now() + step);
}

result<std::shared_ptr<ssl::context>> make_tls_context(const client_settings& s) {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                     ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    error_code ec;
    if (s.verify_peer) {
        ctx->set_default_verify_paths(ec);
        ctx->set_verify_mode(ssl::verify_peer, ec);
    } else {
        ctx->set_verify_mode(ssl::verify_none, ec);
    }
    if (!s.extra_ca_pem.empty()) {
        ctx->add_certificate_authority(asio::buffer(s.extra_ca_pem), ec);
        if (ec) {
            error e = make_transport_error(error_kind::transport_connect, failure_step::none,
                                           "extra_ca_pem is not a PEM certificate: " + ec.message(), false, false);
            e.code = "INVALID_SETTINGS";
            e.what_to_do = disposition::stop_everything;
            return e;
        }
    }
    return ctx;
}

// ---------------------------------------------------------------------------------------------
// Error classification

namespace {

bool is_cancelled(const asio::cancellation_state& cs) { return cs.cancelled() != asio::cancellation_type::none; }

bool is_http_parse_error(const error_code& ec) {
    return ec.category() == http::make_error_code(http::error::bad_version).category() &&
           ec != http::error::end_of_stream && ec != http::error::partial_message;
}

bool is_tls_verify_failure(const error_code& ec) {
    return ec.category() == asio::error::get_ssl_category() &&
           ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_CERTIFICATE_VERIFY_FAILED;
}

error classify(const error_code& ec, failure_step step, bool cancelled, bool written, bool side_effect,
               bool total_expired, const std::string& where) {
    if (cancelled) {
        return make_transport_error(error_kind::cancelled, step, "the call was cancelled", written, side_effect);
    }
    if (ec == beast::error::timeout || ec == asio::error::timed_out) {
        std::string which = total_expired ? "total" : (step == failure_step::read || step == failure_step::write)
                                                          ? "read"
                                                          : "connect";
        return make_transport_error(error_kind::timeout, step,
                                    "the " + which + " deadline passed during " + std::string(to_string(step)) +
                                        " (" + where + ")",
                                    written, side_effect);
    }
    if (step == failure_step::resolve || step == failure_step::connect || step == failure_step::tls_handshake) {
        error e = make_transport_error(error_kind::transport_connect, step,
                                       std::string(to_string(step)) + " to " + where + " failed: " + ec.message(),
                                       false, side_effect);
        if (is_tls_verify_failure(ec)) {
            // Every call will fail the same way until the trust configuration changes.
            e.code = "TLS_VERIFY_FAILED";
            e.what_to_do = disposition::stop_everything;
        }
        return e;
    }
    if (is_http_parse_error(ec)) {
        error e = make_malformed("unreadable HTTP response from " + where + ": " + ec.message(), 0, side_effect);
        e.step = step;
        e.what_to_do = disposition::retry_later;
        e.may_have_taken_effect = side_effect && written;
        e.may_have_been_charged = written;
        return e;
    }
    return make_transport_error(error_kind::connection_lost, step,
                                "the connection to " + where + " broke during " + std::string(to_string(step)) +
                                    ": " + ec.message(),
                                written, side_effect);
}

template <typename Stream>
asio::awaitable<error_code> write_and_read(Stream& s, beast::flat_buffer& buffer,
                                           const http::request<http::string_body>& req, std::size_t body_limit,
                                           bool& written, bool& keep_alive, http_answer& out) {
    auto [wec, wn] = co_await http::async_write(s, req, use_tuple);
    if (wec) {
        co_return wec;
    }
    written = true;
    http::response_parser<http::string_body> parser;
    parser.body_limit(body_limit);
    auto [rec, rn] = co_await http::async_read(s, buffer, parser, use_tuple);
    if (rec) {
        co_return rec;
    }
    auto& res = parser.get();
    keep_alive = res.keep_alive();
    out.status = static_cast<int>(res.result_int());
    out.retry_after = std::string(res[http::field::retry_after]);
    out.content_type = std::string(res[http::field::content_type]);
    out.body = std::move(res.body());
    co_return error_code{};
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Pool

// A caller waiting for a connection of a full pool. Registered in the pool's queue while it
// waits; whatever it was handed is given back if it leaves without using it (cancellation).
struct waiter {
    waiter(asio::any_io_executor ex, host_pool& p, transport& t) : timer(ex), pool(p), owner(t) {}
    ~waiter() {
        if (queued) {
            pool.waiters.erase(std::find(pool.waiters.begin(), pool.waiters.end(), this));
        }
        if (handed) {
            owner.release(pool, std::move(handed), true);
        } else if (slot) {
            owner.release(pool, nullptr, false);
        }
    }
    asio::steady_timer timer;
    host_pool& pool;
    transport& owner;
    std::unique_ptr<connection> handed;
    bool slot = false;   // allowed to open a new connection (already counted in pool.open)
    bool queued = false;
};

namespace {

// A connection (or a slot to open one) checked out of a pool; returned as dead unless the
// exchange hands it back as reusable. Exceptions (cancellation throws at the next co_await)
// therefore never leak a slot.
struct checkout {
    transport& owner;
    host_pool& pool;
    std::unique_ptr<connection> conn;
    bool held = true;
    ~checkout() {
        if (held) {
            owner.release(pool, std::move(conn), false);
        }
    }
};

} // namespace

transport::transport(asio::any_io_executor executor, client_settings settings, std::shared_ptr<ssl::context> tls)
    : executor_(std::move(executor)), settings_(std::move(settings)), tls_(std::move(tls)) {}

host_pool& transport::pool_for(const endpoint& ep) {
    auto key = ep.key();
    auto it = pools_.find(key);
    if (it == pools_.end()) {
        it = pools_.emplace(key, host_pool{}).first;
        it->second.ep = ep;
    }
    return it->second;
}

pool_stats transport::stats(const endpoint& ep) const {
    auto it = pools_.find(ep.key());
    if (it == pools_.end()) {
        return {};
    }
    pool_stats s = it->second.counters;
    s.open = it->second.open;
    s.idle = it->second.idle.size();
    s.waiting = it->second.waiters.size();
    return s;
}

void transport::close_idle() {
    for (auto& [key, pool] : pools_) {
        pool.open -= pool.idle.size();
        pool.idle.clear();
    }
}

bool transport::is_stale(connection& c) const {
    auto& socket = c.lowest().socket();
    if (!socket.is_open()) {
        return true;
    }
    if (steady::now() - c.idle_since > std::chrono::milliseconds(settings_.idle_timeout_ms)) {
        return true;
    }
    // An idle HTTP/1.1 connection has nothing to read: a readable byte is a TLS close_notify or
    // garbage, and a 0-byte read is the server's FIN (it closed the idle connection).
    char probe = 0;
    ssize_t n = ::recv(socket.native_handle(), &probe, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n >= 0) {
        return true;
    }
    return errno != EAGAIN && errno != EWOULDBLOCK;
}

void transport::release(host_pool& pool, std::unique_ptr<connection> conn, bool reusable) {
    if (reusable && conn) {
        conn->idle_since = steady::now();
        if (!pool.waiters.empty()) {
            waiter* w = pool.waiters.front();
            pool.waiters.pop_front();
            w->queued = false;
            w->handed = std::move(conn);
            w->timer.cancel();
            return;
        }
        pool.idle.push_back(std::move(conn));
        return;
    }
    conn.reset();
    --pool.open;
    if (!pool.waiters.empty()) {
        waiter* w = pool.waiters.front();
        pool.waiters.pop_front();
        w->queued = false;
        ++pool.open;
        w->slot = true;
        w->timer.cancel();
    }
}

asio::awaitable<result<transport::lease>> transport::acquire(host_pool& pool, const deadlines& d, bool side_effect) {
    for (;;) {
        while (!pool.idle.empty()) {
            auto c = std::move(pool.idle.back());
            pool.idle.pop_back();
            if (is_stale(*c)) {
                --pool.open;
                continue;
            }
            co_return lease{std::move(c), true};
        }
        if (pool.open < settings_.pool_size) {
            ++pool.open;
            co_return lease{nullptr, false};
        }
        waiter w(executor_, pool, *this);
        w.timer.expires_at(d.total);
        pool.waiters.push_back(&w);
        w.queued = true;
        auto [ec] = co_await w.timer.async_wait(use_tuple);
        asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
        if (is_cancelled(cs)) {
            co_return classify(ec, failure_step::pool_wait, true, false, side_effect, false, pool.ep.key());
        }
        if (w.handed) {
            lease l{std::move(w.handed), true};
            co_return l;
        }
        if (w.slot) {
            w.slot = false;
            co_return lease{nullptr, false};
        }
        if (!ec) {
            co_return make_transport_error(error_kind::timeout, failure_step::pool_wait,
                                           "the total deadline passed while waiting for a connection to " +
                                               pool.ep.key() + " (pool_size " + std::to_string(settings_.pool_size) +
                                               ")",
                                           false, side_effect);
        }
    }
}

asio::awaitable<result<std::unique_ptr<connection>>> transport::connect(host_pool& pool, const deadlines& d,
                                                                        bool side_effect) {
    using namespace asio::experimental::awaitable_operators;
    const endpoint& ep = pool.ep;
    auto deadline = step_deadline(d, d.connect);
    bool total_first = deadline == d.total;
    if (!pool.resolved) {
        error_code aec;
        auto address = asio::ip::make_address(ep.host, aec);
        if (!aec) {
            auto port = static_cast<unsigned short>(std::stoi(ep.port));
            pool.resolved = tcp::resolver::results_type::create(tcp::endpoint(address, port), ep.host, ep.port);
        } else {
            tcp::resolver resolver(executor_);
            asio::steady_timer timer(executor_, deadline);
            auto outcome = co_await (resolver.async_resolve(ep.host, ep.port, use_tuple) || timer.async_wait(use_tuple));
            asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
            if (outcome.index() == 1 || is_cancelled(cs)) {
                co_return classify(beast::error::timeout, failure_step::resolve, is_cancelled(cs), false, side_effect,
                                   total_first, ep.key());
            }
            auto [ec, results] = std::get<0>(outcome);
            if (ec) {
                co_return classify(ec, failure_step::resolve, false, false, side_effect, total_first, ep.key());
            }
            pool.resolved = std::move(results);
        }
    }
    if (ep.tls && !tls_) {
        auto made = make_tls_context(settings_);
        if (!made) {
            co_return std::move(made).error();
        }
        tls_ = std::move(*made);
    }
    auto conn = std::make_unique<connection>();
    if (ep.tls) {
        conn->secure.emplace(executor_, *tls_);
    } else {
        conn->plain.emplace(executor_);
    }
    auto& stream = conn->lowest();
    stream.expires_at(deadline);
    auto [cec, connected_to] = co_await stream.async_connect(*pool.resolved, use_tuple);
    if (cec) {
        asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
        pool.resolved.reset(); // resolve again next time: the address may have moved
        co_return classify(cec, failure_step::connect, is_cancelled(cs), false, side_effect, total_first, ep.key());
    }
    error_code ignored;
    stream.socket().set_option(tcp::no_delay(true), ignored);
    if (ep.tls) {
        error_code aec;
        asio::ip::make_address(ep.host, aec);
        if (aec) {
            // SNI is for names only (RFC 6066 3).
            SSL_set_tlsext_host_name(conn->secure->native_handle(), ep.host.c_str());
        }
        if (settings_.verify_peer) {
            conn->secure->set_verify_mode(ssl::verify_peer);
            conn->secure->set_verify_callback(ssl::host_name_verification(ep.host));
        }
        auto [hec] = co_await conn->secure->async_handshake(ssl::stream_base::client, use_tuple);
        if (hec) {
            asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
            co_return classify(hec, failure_step::tls_handshake, is_cancelled(cs), false, side_effect, total_first,
                               ep.key());
        }
    }
    ++pool.counters.connects;
    co_return std::move(conn);
}

asio::awaitable<result<std::unique_ptr<connection>>> transport::connect_dedicated(const endpoint& ep, deadlines d) {
    auto self = shared_from_this();
    // A throwaway pool entry keeps the resolver cache per endpoint; the stream's connection is
    // never counted in it.
    host_pool& pool = pool_for(ep);
    co_return co_await connect(pool, d, false);
}

http::request<http::string_body> transport::build(const endpoint& ep, const outgoing& o) const {
    http::request<http::string_body> req{o.method, ep.path_prefix + o.target, 11};
    bool default_port = ep.port == (ep.tls ? "443" : "80");
    bool v6 = ep.host.find(':') != std::string::npos;
    std::string host = v6 ? "[" + ep.host + "]" : ep.host;
    req.set(http::field::host, default_port ? host : host + ":" + ep.port);
    req.set(http::field::user_agent, settings_.user_agent);
    req.set("x-api-key", settings_.api_key);
    req.set(http::field::accept, "application/json");
    if (!o.body.empty()) {
        req.set(http::field::content_type, "application/json");
        req.body() = o.body;
    }
    req.keep_alive(true);
    req.prepare_payload();
    return req;
}

asio::awaitable<result<http_answer>> transport::exchange(connection& c, const outgoing& o, const endpoint& ep,
                                                         const deadlines& d, bool& written, bool& reusable) {
    auto deadline = step_deadline(d, d.read);
    bool total_first = deadline == d.total;
    c.lowest().expires_at(deadline);
    auto req = build(ep, o);
    http_answer answer;
    bool keep_alive = false;
    error_code ec;
    if (c.secure) {
        ec = co_await write_and_read(*c.secure, c.buffer, req, settings_.response_body_limit_bytes, written,
                                     keep_alive, answer);
    } else {
        ec = co_await write_and_read(*c.plain, c.buffer, req, settings_.response_body_limit_bytes, written,
                                     keep_alive, answer);
    }
    if (ec) {
        asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
        co_return classify(ec, written ? failure_step::read : failure_step::write, is_cancelled(cs), written,
                           o.side_effect, total_first, ep.key());
    }
    c.lowest().expires_never();
    reusable = keep_alive;
    co_return answer;
}

asio::awaitable<result<http_answer>> transport::perform(const endpoint& ep, outgoing req, deadlines d) {
    auto self = shared_from_this(); // the pools outlive this call even if the client goes away
    host_pool& pool = pool_for(ep);
    for (int attempt = 0;; ++attempt) {
        auto l = co_await acquire(pool, d, req.side_effect);
        if (!l) {
            co_return std::move(l).error();
        }
        checkout out{*this, pool, std::move(l->conn)};
        bool reused = l->reused;
        if (!out.conn) {
            auto c = co_await connect(pool, d, req.side_effect);
            if (!c) {
                co_return std::move(c).error();
            }
            out.conn = std::move(*c);
        } else {
            ++pool.counters.reuses;
        }
        bool written = false;
        bool reusable = false;
        auto answer = co_await exchange(*out.conn, req, ep, d, written, reusable);
        // A reused connection that died before the request went out: the API never saw it, so
        // one retry on a fresh connection is safe even for side-effecting calls.
        if (!answer && !written && reused && attempt == 0 && answer.error().kind == error_kind::connection_lost) {
            ++pool.counters.stale_retries;
            continue;
        }
        if (answer && reusable) {
            out.held = false;
            release(pool, std::move(out.conn), true);
        }
        co_return answer;
    }
}

} // namespace orch::outreach::detail
