#include "api/http_server.hpp"

#include "api/text.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/version.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <list>
#include <stdexcept>

namespace orch::api {

namespace {

constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);

std::string error_body(std::string_view code, std::string_view message) {
    // Hand-built to avoid a JSON dependency here; code and message are fixed ASCII texts.
    std::string out = R"({"success":false,"error":{"code":")";
    out += code;
    out += R"(","message":")";
    out += message;
    out += R"("}})";
    return out;
}

} // namespace

response json_response(unsigned version, bool keep_alive, http::status status, std::string body) {
    response res{status, version};
    res.set(http::field::content_type, "application/json");
    res.keep_alive(keep_alive);
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
}

bool parse_host_port(std::string_view text, std::string& host, unsigned short& port, std::string& error) {
    std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon + 1 >= text.size()) {
        error = "expected HOST:PORT, got '" + std::string(text) + "'";
        return false;
    }
    std::string_view h = text.substr(0, colon);
    std::string_view p = text.substr(colon + 1);
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
        h = h.substr(1, h.size() - 2);
    }
    if (h.empty()) {
        error = "missing host in '" + std::string(text) + "'";
        return false;
    }
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
    if (ec != std::errc{} || ptr != p.data() + p.size() || value > 65535) {
        error = "bad port '" + std::string(p) + "' in '" + std::string(text) + "'";
        return false;
    }
    host = std::string(h);
    port = static_cast<unsigned short>(value);
    return true;
}

struct http_server::impl : std::enable_shared_from_this<http_server::impl> {
    asio::any_io_executor executor;
    server_settings settings;
    handler on_request;
    asio::ip::tcp::acceptor acceptor;
    std::list<std::weak_ptr<beast::tcp_stream>> connections;
    bool started = false;
    bool stopped = false;

    impl(asio::any_io_executor ex, server_settings s, handler h)
        : executor(ex), settings(std::move(s)), on_request(std::move(h)), acceptor(ex) {}

    // Throws std::runtime_error saying which step failed and why, without the library's source
    // location that a system_error's what() carries (an operator reads it in `serve`'s log).
    void open() {
        boost::system::error_code ec;
        const char* step = "resolve the host";
        asio::ip::tcp::resolver resolver(executor);
        auto results = resolver.resolve(settings.listen_host, std::to_string(settings.listen_port),
                                        asio::ip::resolver_base::passive, ec);
        if (!ec && results.empty()) {
            ec = asio::error::host_not_found;
        }
        if (!ec) {
            const asio::ip::tcp::endpoint endpoint = results.begin()->endpoint();
            step = "open a socket";
            acceptor.open(endpoint.protocol(), ec);
            if (!ec) {
                acceptor.set_option(asio::socket_base::reuse_address(true), ec);
            }
            if (!ec) {
                step = "bind";
                acceptor.bind(endpoint, ec);
            }
            if (!ec) {
                step = "listen";
                acceptor.listen(asio::socket_base::max_listen_connections, ec);
            }
        }
        if (ec) {
            const std::string where = std::string(step) == "resolve the host"
                                          ? settings.listen_host + " (port " + std::to_string(settings.listen_port) + ")"
                                          : settings.listen_host + ":" + std::to_string(settings.listen_port);
            throw std::runtime_error("cannot " + std::string(step) + " " + where + ": " + ec.message());
        }
    }

    asio::awaitable<void> accept_loop() {
        auto self = shared_from_this();
        std::chrono::milliseconds accept_pause{10};
        while (!stopped) {
            auto [ec, socket] = co_await acceptor.async_accept(use_nothrow);
            if (ec) {
                if (stopped || ec == asio::error::operation_aborted) {
                    break;
                }
                // Out of file descriptors (or another lasting failure), accepting again at once
                // would spin and log without end: a short pause first, doubling while it lasts.
                spdlog::warn("{}: accept failed: {}; again in {} ms", settings.server_name, ec.message(),
                             accept_pause.count());
                asio::steady_timer pause(executor, accept_pause);
                (void)co_await pause.async_wait(use_nothrow);
                accept_pause = std::min(accept_pause * 2, std::chrono::milliseconds(1000));
                continue;
            }
            accept_pause = std::chrono::milliseconds(10);
            socket.set_option(asio::ip::tcp::no_delay(true));
            auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
            prune();
            connections.push_back(stream);
            asio::co_spawn(executor, session(stream), [name = settings.server_name](std::exception_ptr e) {
                if (!e) {
                    return;
                }
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& ex) {
                    spdlog::error("{}: connection ended by exception: {}", name, orch::text::escaped(ex.what()));
                }
            });
        }
    }

    void prune() {
        for (auto it = connections.begin(); it != connections.end();) {
            it = it->expired() ? connections.erase(it) : std::next(it);
        }
    }

    asio::awaitable<void> write_error(beast::tcp_stream& stream, unsigned version, http::status status,
                                      std::string_view code, std::string_view message) {
        auto body = settings.error_body ? settings.error_body(status, code, message) : error_body(code, message);
        auto res = json_response(version, false, status, std::move(body));
        res.set(http::field::server, settings.server_name);
        stream.expires_after(settings.idle_timeout_ms);
        co_await http::async_write(stream, res, use_nothrow);
    }

    asio::awaitable<void> session(std::shared_ptr<beast::tcp_stream> stream_ptr) {
        auto self = shared_from_this();
        beast::tcp_stream& stream = *stream_ptr;
        beast::flat_buffer buffer;
        for (;;) {
            http::request_parser<http::string_body> parser;
            parser.body_limit(settings.body_limit_bytes);
            parser.header_limit(64 * 1024);
            stream.expires_after(settings.idle_timeout_ms);
            auto [ec, bytes] = co_await http::async_read(stream, buffer, parser, use_nothrow);
            (void)bytes;
            if (ec == http::error::body_limit) {
                co_await write_error(stream, 11, http::status::payload_too_large, "PAYLOAD_TOO_LARGE",
                                     "request body exceeds the limit of " +
                                         std::to_string(settings.body_limit_bytes) + " bytes");
                break;
            }
            if (ec == http::error::header_limit) {
                co_await write_error(stream, 11, http::status::request_header_fields_too_large,
                                     "HEADERS_TOO_LARGE", "request headers exceed 64 KiB");
                break;
            }
            if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
                ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
                ec == asio::error::eof) {
                break;
            }
            if (ec) {
                // A request that does not parse as HTTP gets one clear 400, then the connection ends.
                co_await write_error(stream, 11, http::status::bad_request, "BAD_REQUEST",
                                     "malformed HTTP request: " + ec.message());
                break;
            }
            request req = parser.release();
            bool keep_alive = req.keep_alive();
            handler_result result;
            bool failed = false;
            try {
                result = co_await on_request(req, stream);
            } catch (const std::exception& ex) {
                // A bug in a handler ends this request with a 500, never the process.
                spdlog::error("{}: handler threw on {} {}: {}", settings.server_name,
                              orch::text::escaped(req.method_string()), orch::text::escaped(req.target()),
                              orch::text::escaped(ex.what()));
                failed = true;
            }
            if (failed) {
                co_await write_error(stream, req.version(), http::status::internal_server_error,
                                     "INTERNAL_ERROR", "unexpected server error");
                break;
            }
            if (result.what == handler_result::kind::taken_over) {
                co_return;
            }
            if (result.what == handler_result::kind::drop) {
                beast::error_code ignored;
                stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
                stream.socket().close(ignored);
                co_return;
            }
            response& res = result.res;
            res.version(req.version());
            if (!res.has_content_length() && !res.chunked()) {
                res.prepare_payload();
            }
            // A HEAD gets the GET's header, its Content-Length included, and no body (RFC 9110
            // 9.3.2): whatever a handler answered, for every server on this class.
            if (req.method() == http::verb::head && !res.chunked()) {
                res.body().clear();
            }
            if (!keep_alive) {
                res.keep_alive(false);
            }
            if (res.find(http::field::server) == res.end()) {
                res.set(http::field::server, settings.server_name);
            }
            stream.expires_after(settings.idle_timeout_ms);
            auto [wec, written] = co_await http::async_write(stream, res, use_nothrow);
            (void)written;
            if (wec || res.need_eof() || stopped) {
                break;
            }
        }
        beast::error_code ignored;
        stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
        stream.socket().close(ignored);
    }
};

http_server::http_server(asio::any_io_executor executor, server_settings settings, handler h)
    : impl_(std::make_shared<impl>(executor, std::move(settings), std::move(h))) {
    impl_->open();
}

http_server::~http_server() { stop(); }

unsigned short http_server::port() const { return impl_->acceptor.local_endpoint().port(); }

void http_server::start() {
    if (impl_->started) {
        return;
    }
    impl_->started = true;
    asio::co_spawn(impl_->executor, impl_->accept_loop(), asio::detached);
}

void http_server::stop() {
    if (!impl_ || impl_->stopped) {
        return;
    }
    impl_->stopped = true;
    // Closing runs on the server's executor so it never races a session on another thread.
    asio::post(impl_->executor, [self = impl_] {
        beast::error_code ignored;
        self->acceptor.close(ignored);
        for (auto& weak : self->connections) {
            if (auto s = weak.lock()) {
                s->socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
                s->socket().close(ignored);
            }
        }
        self->connections.clear();
    });
}

} // namespace orch::api
