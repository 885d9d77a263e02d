// Delivery of webhook events: custom-mode POSTs with signatures and retries, and hosted-mode
// server-sent-event streams.
//
// Custom mode: one deliverer coroutine per webhook drains its outbox in order, so a receiver
// sees the events of one webhook in publication order. Each attempt is one HTTP/1.1 POST on a
// fresh connection with a single deadline (webhook_timeout_ms) over resolve, connect, write and
// reading the response header. A 2xx acknowledges; anything else is retried with exponential
// backoff up to webhook_max_attempts attempts, then the event is dropped with a log line.
// https targets are accepted at creation but not delivered (the sandbox has no TLS client):
// each such event is dropped with a log line.
#include "sandbox/webhook_runtime.hpp"

#include "engine/outreach/signature.hpp"
#include "sandbox/dialect.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/parse.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

namespace orch::sandbox {

namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);
constexpr int retry_shift_max = 20; // backoff doubles at most 20 times (bounded wait)

webhook_state* find_webhook(service& svc, const std::string& id) {
    auto it = svc.webhooks().find(id);
    return it == svc.webhooks().end() ? nullptr : &it->second;
}

std::int64_t unix_s(time_point t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

// Where a delivery goes, from the webhook's URL.
struct delivery_target {
    bool tls = false;
    std::string host; // without IPv6 brackets
    std::string port;
    std::string host_header; // host[:port] as written in the URL
    std::string target;      // path and query
};

bool parse_target(const std::string& url, delivery_target& out) {
    auto parsed = boost::urls::parse_uri(url);
    if (!parsed || !parsed->has_authority()) {
        return false;
    }
    std::string scheme(parsed->scheme());
    std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
    out.tls = scheme == "https";
    out.host = parsed->host_address();
    if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
        out.host = out.host.substr(1, out.host.size() - 2);
    }
    out.port = parsed->has_port() ? std::string(parsed->port()) : (out.tls ? "443" : "80");
    out.host_header = std::string(parsed->encoded_host_and_port());
    out.target = parsed->encoded_path().empty() ? "/" : std::string(parsed->encoded_path());
    if (parsed->has_query()) {
        out.target += "?" + std::string(parsed->encoded_query());
    }
    return !out.host.empty();
}

// The outcome of one attempt: the HTTP status, or 0 with a transport error text.
struct attempt_result {
    int status = 0;
    std::string error;
};

// Resolves `host` within `deadline`. IP literals skip the resolver. The resolver has no
// per-operation cancellation, so a timer cancels the whole (private) resolver on expiry.
asio::awaitable<std::vector<tcp::endpoint>> resolve_with_deadline(asio::any_io_executor executor,
                                                                  const delivery_target& t,
                                                                  asio::steady_timer::time_point deadline,
                                                                  std::string& error) {
    std::vector<tcp::endpoint> out;
    boost::system::error_code ec;
    auto address = asio::ip::make_address(t.host, ec);
    unsigned short port = 0;
    auto [ptr, pec] = std::from_chars(t.port.data(), t.port.data() + t.port.size(), port);
    if (pec != std::errc{} || ptr != t.port.data() + t.port.size()) {
        error = "bad port " + t.port;
        co_return out;
    }
    if (!ec) {
        out.emplace_back(address, port);
        co_return out;
    }
    auto resolver = std::make_shared<tcp::resolver>(executor);
    asio::steady_timer timer(executor, deadline);
    timer.async_wait([weak = std::weak_ptr<tcp::resolver>(resolver)](const boost::system::error_code& wait_ec) {
        if (auto r = weak.lock(); r && !wait_ec) {
            r->cancel();
        }
    });
    auto [rec, results] = co_await resolver->async_resolve(t.host, t.port, use_nothrow);
    timer.cancel();
    if (rec) {
        error = rec == asio::error::operation_aborted ? "timeout resolving " + t.host : rec.message();
        co_return out;
    }
    for (const auto& r : results) {
        out.push_back(r.endpoint());
    }
    co_return out;
}

// One POST with one deadline over every step (STYLE B5).
asio::awaitable<attempt_result> post_once(asio::any_io_executor executor, const delivery_target& t,
                                          http::request<http::string_body> req, std::chrono::milliseconds timeout) {
    attempt_result out;
    auto deadline = asio::steady_timer::clock_type::now() + timeout;
    auto endpoints = co_await resolve_with_deadline(executor, t, deadline, out.error);
    if (endpoints.empty()) {
        if (out.error.empty()) {
            out.error = "no address for " + t.host;
        }
        co_return out;
    }
    beast::tcp_stream stream(executor);
    stream.expires_at(deadline);
    auto [cec, endpoint] = co_await stream.async_connect(endpoints, use_nothrow);
    (void)endpoint;
    if (cec) {
        out.error = "connect: " + cec.message();
        co_return out;
    }
    stream.expires_at(deadline);
    auto [wec, written] = co_await http::async_write(stream, req, use_nothrow);
    (void)written;
    if (wec) {
        out.error = "write: " + wec.message();
        co_return out;
    }
    // Only the status matters; the response body is not read.
    beast::flat_buffer buffer;
    http::response_parser<http::empty_body> parser;
    parser.header_limit(16 * 1024);
    stream.expires_at(deadline);
    auto [rec, read] = co_await http::async_read_header(stream, buffer, parser, use_nothrow);
    (void)read;
    if (rec) {
        out.error = "read: " + (rec == beast::error::timeout ? std::string("timeout") : rec.message());
        co_return out;
    }
    out.status = static_cast<int>(parser.get().result_int());
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.socket().close(ignored);
    co_return out;
}

http::request<http::string_body> build_request(const delivery_target& t, const std::string& body,
                                               const std::string& secret, const stored_event& event, int attempt,
                                               time_point now) {
    http::request<http::string_body> req{http::verb::post, t.target, 11};
    req.set(http::field::host, t.host_header);
    req.set(http::field::user_agent, "outreach-sandbox-webhooks/1");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::connection, "close");
    // Signed fresh at every attempt, so a retry is never outside the receiver's tolerance.
    if (!secret.empty()) {
        auto ts = unix_s(now);
        req.set("X-Service-Timestamp", std::to_string(ts));
        req.set("X-Service-Signature", outreach::sign_webhook(secret, ts, body));
    }
    req.set("X-Service-Event-Id", event.event_id);
    req.set("X-Service-Delivery-Attempt", std::to_string(attempt));
    req.body() = body;
    req.prepare_payload();
    return req;
}

// Why the current event must not be (re)tried any more; empty when it may.
std::string stop_reason(service& svc, const std::string& webhook_id, std::uint64_t generation) {
    webhook_state* wh = find_webhook(svc, webhook_id);
    if (wh == nullptr) {
        return "webhook deleted";
    }
    if (wh->generation != generation || !wh->active) {
        return "webhook stopped";
    }
    if (wh->url.empty()) {
        return "webhook switched to hosted mode";
    }
    return {};
}

// Delivers one event with retries. Returns when it is acknowledged or given up.
asio::awaitable<void> deliver_event(service& svc, std::string webhook_id, std::uint64_t generation,
                                    std::shared_ptr<const stored_event> event, std::shared_ptr<webhook_runtime> rt) {
    const std::string body = delivery_body(*event);
    const int max_attempts = std::max(1, svc.cfg().webhook_max_attempts);
    std::string last_error;
    for (int attempt = 1; attempt <= max_attempts; ++attempt) {
        if (auto why = stop_reason(svc, webhook_id, generation); !why.empty()) {
            spdlog::info("webhooks: webhook_id={} event_id={} not delivered: {}", webhook_id, event->event_id, why);
            co_return;
        }
        // Read at every attempt: PUT may change the URL and rotate-secret the secret meanwhile.
        const webhook_state& wh = svc.webhooks().at(webhook_id);
        delivery_target target;
        if (!parse_target(wh.url, target)) {
            spdlog::warn("webhooks: webhook_id={} event_id={} dropped: bad url {}", webhook_id, event->event_id,
                         wh.url);
            co_return;
        }
        if (target.tls) {
            spdlog::warn("webhooks: webhook_id={} event_id={} dropped: https delivery is not supported by the sandbox",
                         webhook_id, event->event_id);
            co_return;
        }
        auto req = build_request(target, body, wh.secret, *event, attempt, svc.now());
        auto timeout = std::chrono::milliseconds(std::max<std::int64_t>(1, svc.cfg().webhook_timeout_ms));
        attempt_result r = co_await post_once(svc.executor(), target, std::move(req), timeout);
        if (r.status >= 200 && r.status < 300) {
            spdlog::debug("webhooks: webhook_id={} event_id={} delivered attempt={}", webhook_id, event->event_id,
                          attempt);
            co_return;
        }
        last_error = r.status != 0 ? "HTTP " + std::to_string(r.status) : r.error;
        spdlog::info("webhooks: webhook_id={} event_id={} attempt={} failed: {}", webhook_id, event->event_id, attempt,
                     last_error);
        if (attempt == max_attempts) {
            break;
        }
        auto base_ms = std::max<std::int64_t>(1, svc.cfg().webhook_retry_base_ms);
        rt->retry_wake.expires_after(std::chrono::milliseconds(base_ms << std::min(attempt - 1, retry_shift_max)));
        co_await rt->retry_wake.async_wait(use_nothrow);
    }
    spdlog::warn("webhooks: webhook_id={} event_id={} dropped after {} attempts, last error: {}", webhook_id,
                 event->event_id, max_attempts, last_error);
}

asio::awaitable<void> run_deliverer(service& svc, std::string webhook_id, std::shared_ptr<webhook_runtime> rt) {
    for (;;) {
        webhook_state* wh = find_webhook(svc, webhook_id);
        if (wh == nullptr) {
            co_return;
        }
        if (wh->outbox.empty()) {
            wh->delivering = false;
            co_return;
        }
        auto event = wh->outbox.front();
        wh->outbox.pop_front();
        co_await deliver_event(svc, webhook_id, wh->generation, std::move(event), rt);
    }
}

void log_coroutine_exception(std::exception_ptr e) {
    if (!e) {
        return;
    }
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        spdlog::error("webhooks: delivery coroutine ended by exception: {}", ex.what());
    }
}

} // namespace

std::string delivery_body(const stored_event& event) {
    json body = event.payload;
    body["event_id"] = event.event_id;
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

void enqueue_delivery(service& svc, webhook_state& webhook, const std::shared_ptr<const stored_event>& event) {
    if (webhook.outbox.size() >= webhook_outbox_max) {
        spdlog::warn("webhooks: webhook_id={} outbox full ({} events); event_id={} dropped", webhook.id,
                     webhook.outbox.size(), webhook.outbox.front()->event_id);
        webhook.outbox.pop_front();
    }
    webhook.outbox.push_back(event);
    if (!webhook.delivering) {
        webhook.delivering = true;
        asio::co_spawn(svc.executor(), run_deliverer(svc, webhook.id, webhook.runtime), log_coroutine_exception);
    }
}

asio::awaitable<post_outcome> post_json_once(service& svc, std::string url, std::string body) {
    post_outcome out;
    delivery_target target;
    if (!parse_target(url, target)) {
        out.error = "bad url " + url;
        out.permanent = true;
        co_return out;
    }
    if (target.tls) {
        out.error = "https delivery is not supported by the sandbox";
        out.permanent = true;
        co_return out;
    }
    http::request<http::string_body> req{http::verb::post, target.target, 11};
    req.set(http::field::host, target.host_header);
    req.set(http::field::user_agent, "outreach-sandbox-webhooks/1");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::connection, "close");
    req.body() = std::move(body);
    req.prepare_payload();
    auto timeout = std::chrono::milliseconds(std::max<std::int64_t>(1, svc.cfg().webhook_timeout_ms));
    attempt_result r = co_await post_once(svc.executor(), target, std::move(req), timeout);
    out.status = r.status;
    out.error = r.error;
    co_return out;
}

void prune_hosted_events(const service& svc, webhook_state& webhook) {
    // The service drops expired events oldest first, so expired ids sit at the front.
    while (!webhook.hosted_event_ids.empty() && (svc.find_event(webhook.hosted_event_ids.front()) == nullptr ||
                                                 webhook.hosted_event_ids.size() > hosted_events_max)) {
        webhook.hosted_event_ids.pop_front();
    }
}

// ---------------------------------------------------------------------------------------------
// Hosted mode: server-sent events

void sse_subscriber::watch_client(tcp::socket& socket) {
    socket.async_read_some(asio::buffer(read_buffer),
                           [self = shared_from_this(), &socket](const boost::system::error_code& ec, std::size_t) {
                               // `closed` is set before the stream ends, so the socket is never
                               // touched after the stream coroutine let it go.
                               if (self->closed) {
                                   return;
                               }
                               if (ec) {
                                   self->close();
                                   return;
                               }
                               self->watch_client(socket);
                           });
}

namespace {

// One SSE message; its id: line and event name follow dialect_sse_ids and dialect_sse_event_name.
std::string event_frame(const settings& cfg, const stored_event& e) {
    std::string frame = cfg.dialect_sse_ids ? "id: " + e.event_id + "\n" : std::string();
    std::string name = cfg.dialect_sse_event_name == "type" ? wire_event_type(cfg, e.type) : std::string("webhook");
    return frame + "event: " + name + "\ndata: " + e.payload.dump(-1, ' ', false, json::error_handler_t::replace) +
           "\n\n";
}

asio::awaitable<bool> write_text(beast::tcp_stream& stream, const std::string& text,
                                 std::chrono::milliseconds timeout) {
    stream.expires_after(timeout);
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(text), use_nothrow);
    (void)n;
    co_return !ec;
}

// The response header and the first frames: `connected`, then the replayed events.
asio::awaitable<bool> open_stream(const settings& cfg, beast::tcp_stream& stream, const api::request& req,
                                  const std::string& webhook_id, std::string account_id, std::string replay,
                                  std::chrono::milliseconds timeout) {
    http::response<http::empty_body> res{http::status::ok, req.version()};
    res.set(http::field::server, "outreach-sandbox");
    res.set(http::field::content_type, "text/event-stream");
    res.set(http::field::cache_control, "no-cache");
    res.set("X-Accel-Buffering", "no");
    res.keep_alive(false); // the body runs until the connection closes
    http::response_serializer<http::empty_body> serializer{res};
    stream.expires_after(timeout);
    auto [ec, n] = co_await http::async_write_header(stream, serializer, use_nothrow);
    (void)n;
    if (ec) {
        co_return false;
    }
    json hello = {{"webhook_id", webhook_id}, {"account_id", account_id}};
    add_extra_fields(cfg, hello);
    co_return co_await write_text(stream, "event: connected\ndata: " + hello.dump() + "\n\n" + replay, timeout);
}

} // namespace

asio::awaitable<void> serve_event_stream(service& svc, const api::request& req, beast::tcp_stream& stream,
                                         std::string webhook_id, std::string after_event_id) {
    webhook_state& wh = svc.webhooks().at(webhook_id);
    auto sub = std::make_shared<sse_subscriber>(svc.executor());
    // Registering and taking the replay happen without a suspension in between, so every event
    // is either replayed or queued live, never both and never neither.
    auto& subs = wh.runtime->subscribers;
    subs.erase(std::remove_if(subs.begin(), subs.end(), [](const auto& w) { return w.expired(); }), subs.end());
    subs.push_back(sub);
    std::string replay;
    if (!after_event_id.empty()) {
        prune_hosted_events(svc, wh);
        for (const auto& id : wh.hosted_event_ids) {
            const stored_event* e = id > after_event_id ? svc.find_event(id) : nullptr;
            if (e != nullptr) {
                replay += event_frame(svc.cfg(), *e);
            }
        }
    }
    auto write_timeout = std::chrono::milliseconds(std::max<std::int64_t>(1000, svc.cfg().idle_timeout_ms));
    bool ok = co_await open_stream(svc.cfg(), stream, req, webhook_id, wh.account_id, std::move(replay), write_timeout);
    if (ok) {
        sub->watch_client(stream.socket());
    }
    auto keepalive = [&svc] {
        return std::chrono::milliseconds(std::max<std::int64_t>(10, svc.cfg().sse_keepalive_ms));
    };
    auto next_keepalive = asio::steady_timer::clock_type::now() + keepalive();
    while (ok && !sub->closed) {
        if (!sub->queue.empty()) {
            auto event = std::move(sub->queue.front());
            sub->queue.pop_front();
            ok = co_await write_text(stream, event_frame(svc.cfg(), *event), write_timeout);
        } else if (asio::steady_timer::clock_type::now() >= next_keepalive) {
            ok = co_await write_text(stream, ": keepalive\n\n", write_timeout);
            next_keepalive = asio::steady_timer::clock_type::now() + keepalive();
        } else {
            sub->wake.expires_at(next_keepalive);
            co_await sub->wake.async_wait(use_nothrow);
        }
    }
    sub->closed = true;
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.socket().close(ignored);
}

} // namespace orch::sandbox
