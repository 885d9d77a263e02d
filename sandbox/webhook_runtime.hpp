// Private to the webhooks module (webhooks.cpp, webhook_delivery.cpp): the live machinery of a
// webhook and the two delivery paths, custom-mode POSTs and hosted-mode server-sent events.
//
// Everything here runs on the service's single thread (STYLE B3). Coroutines never keep a
// webhook_state pointer across a suspension: the webhook may be deleted meanwhile, so they look
// it up again by id and compare its generation.
#pragma once

#include "sandbox/service.hpp"

#include <boost/asio/steady_timer.hpp>

#include <array>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace orch::sandbox {

// Bounds (STYLE B7).
inline constexpr std::size_t webhook_outbox_max = 10'000; // pending custom deliveries per webhook
inline constexpr std::size_t sse_queue_max = 10'000;      // unsent events per stream; a slower client is cut
inline constexpr std::size_t hosted_events_max = 100'000; // retained event ids per hosted webhook

// One connected SSE client. The stream coroutine sleeps on `wake` until the next keepalive is
// due; fan-out and close() cancel the timer to wake it at once (a timer used as a condition
// variable, so an idle stream costs no CPU).
struct sse_subscriber : std::enable_shared_from_this<sse_subscriber> {
    explicit sse_subscriber(asio::any_io_executor executor) : wake(executor) {}

    std::deque<std::shared_ptr<const stored_event>> queue;
    asio::steady_timer wake;
    bool closed = false; // webhook deleted or turned custom, client gone, or too slow
    std::array<char, 256> read_buffer{};

    void push(const std::shared_ptr<const stored_event>& event) {
        if (closed) {
            return;
        }
        if (queue.size() >= sse_queue_max) {
            close();
            return;
        }
        queue.push_back(event);
        wake.cancel();
    }
    void close() {
        closed = true;
        wake.cancel();
    }
    // Keeps one read pending on the client's socket so that a disconnect is noticed at once,
    // not only at the next keepalive write. Whatever the client sends is discarded.
    void watch_client(asio::ip::tcp::socket& socket);
};

struct webhook_runtime {
    explicit webhook_runtime(asio::any_io_executor executor) : retry_wake(executor) {}

    // Connected streams; a stream that ended simply expires.
    std::vector<std::weak_ptr<sse_subscriber>> subscribers;
    // The deliverer sleeps on it between attempts; stop and delete cancel it so it notices.
    asio::steady_timer retry_wake;

    void close_streams() {
        for (auto& weak : subscribers) {
            if (auto s = weak.lock()) {
                s->close();
            }
        }
        subscribers.clear();
    }
};

// The body of a custom-mode delivery: the event wrapper plus `event_id` at the top level.
std::string delivery_body(const stored_event& event);

// Custom mode: queues `event` for `webhook` and starts its deliverer if none runs.
void enqueue_delivery(service& svc, webhook_state& webhook, const std::shared_ptr<const stored_event>& event);

// Hosted mode: serves the SSE stream of `webhook_id` on `stream` until the client leaves or the
// webhook is deleted. The caller has authenticated the request; `after_event_id` (may be
// empty) selects the retained events replayed first.
asio::awaitable<void> serve_event_stream(service& svc, const api::request& req, beast::tcp_stream& stream,
                                         std::string webhook_id, std::string after_event_id);

// Hosted mode: drops retained ids whose events the service no longer keeps (retention).
void prune_hosted_events(const service& svc, webhook_state& webhook);

// One unsigned JSON POST (V1 webhook accounts: QR codes and events, which are never signed),
// bounded by webhook_timeout_ms. `status` is the HTTP status, or 0 with the reason in `error`;
// `permanent` means retrying cannot help (a malformed URL, or https, which the sandbox cannot
// deliver).
struct post_outcome {
    int status = 0;
    std::string error;
    bool permanent = false;
};
asio::awaitable<post_outcome> post_json_once(service& svc, std::string url, std::string body);

} // namespace orch::sandbox
