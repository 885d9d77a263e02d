// orch::engine admin: the admin REST endpoint of `orchestrator serve` (issue 7), on its own
// listener (admin_listen, default 127.0.0.1:8702), separate from the webhook receiver. JSON in
// and out; the contract is api/openapi.yaml (OpenAPI 3.1, linted in the tests).
//
//   GET  /healthz                      liveness (no token)
//   GET  /readyz                       Postgres, Redis and the API reachable (no token; 503 if not)
//   GET  /metrics                      Prometheus text format (prometheus-cpp)
//   GET  /v1/campaigns                 list
//   POST /v1/campaigns[?dry_run=true]  validate, and unless dry_run apply, a definition (YAML/JSON)
//   GET  /v1/campaigns/{name}          one campaign with its funnel
//   POST /v1/campaigns/{name}/pause|resume|cancel
//   GET  /v1/campaigns/{name}/versions[/{version}]
//   GET  /v1/campaigns/{name}/report   replies per message variant, the funnel per UTC day
//   GET  /v1/campaigns/{name}/leads?state=&cursor=&limit=&format=csv
//   GET  /v1/campaigns/{name}/leads/{lead_id}   the lead's timeline and why it waits
//   GET  /v1/accounts                  status, quotas used and left, cooldowns (Redis buckets),
//                                      each account's effective quotas and own overrides
//   GET|PUT /v1/accounts/{id}/limits   an account's own quotas per action (account_quotas.hpp)
//   GET  /v1/budget[?campaign=]        budgets, reserved, spent; the key's balance and drift
//   GET  /v1/events?type=&limit=       recent inbox events
//   GET  /v1/inbox[/{id}], POST /v1/inbox/{id}/reply|mark, GET /v1/manual-replies/{id}
//                                      the replies inbox (engine/inbox.hpp)
//
// Auth: every path but /healthz and /readyz needs "Authorization: Bearer <admin_token>"
// (ORCH_ADMIN_TOKEN), compared in constant time; 401 otherwise. Without a token, `serve` does
// not open the admin listener at all (it logs why) rather than serve anything unauthenticated.
// The web dashboard under /ui/ and its session cookie (with a CSRF header for changes) are
// engine/admin_ui.hpp.
//
// Errors: every bad request gets {"error": {"status", "message", "details"?}}, the HTTP layer's
// own answers too (api::server_settings::error_body), with 400 (bad query parameter, empty body, a
// body that is not JSON, a path segment, query value or body that is not UTF-8 or holds a NUL, a
// name in the path with control or bidirectional characters, a body on a route that takes none,
// malformed HTTP; the message says where), 401, 404 (no such path, campaign, version, lead or
// account), 405 (with Allow), 409 (a state change the campaign's state forbids; applying a
// cancelled campaign, found before any audience search), 413 (body over admin_body_limit_bytes),
// 415 (a body in a media type the route does not take), 422 (an invalid definition, with
// line:column details; an audience `file:`, which the server cannot read for a remote user; a
// quota value or action that is not one, the message naming the field), 431 (headers over 64
// KiB). Requests are read by engine/admin_input.hpp before any route touches the database. A
// change is one transaction: a refused request changes nothing. A database failure answers 503
// (its text is logged, never answered); anything unexpected 500, logged once (user text escaped);
// the server keeps running.
//
// /metrics: steps run in `worker` processes, so the figures are derived from Postgres at scrape
// time with bounded queries (schema/queries/admin/metrics_*.sql): counters advance over the step
// attempts past a watermark (at most 50,000 new rows per scrape, never past one still in flight),
// gauges are read fresh. Counters start at 0 when serve starts (a Prometheus counter reset).
//
// Threading: handlers run on the caller's io_context thread; the store (blocking libpqxx) and
// the limiter (blocking hiredis) run on the admin's own one-thread pool.
#pragma once

#include "engine/config.hpp"

#include <boost/asio/io_context.hpp>

#include <memory>
#include <string_view>

namespace orch::outreach {
class client;
}

namespace orch::engine {

struct intake_stats;

class admin_server {
public:
    // Connects to the database (require_current) and binds admin_listen at once. Throws
    // std::runtime_error (bad listen address, database behind or unreachable) or
    // boost::system::system_error (address in use). Preconditions: s.admin_token is not empty.
    // `api` (may be null: /readyz then says the API is not configured) is used on `io`'s thread
    // only and must outlive the server.
    // `intake` (may be null): serve's receiver counts, exported as orch_webhook_refused_total.
    admin_server(boost::asio::io_context& io, const settings& s, outreach::client* api,
                 const intake_stats* intake = nullptr);
    ~admin_server();
    admin_server(const admin_server&) = delete;
    admin_server& operator=(const admin_server&) = delete;

    unsigned short port() const;
    void start();  // idempotent
    void stop();   // idempotent; call on the io thread

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

// True when `authorization` is "Bearer <token>" for exactly `token` (scheme case-insensitive).
// Compares SHA-256 digests with CRYPTO_memcmp, so the time taken reveals neither the token's
// length nor how much of it matched.
bool bearer_matches(std::string_view authorization, std::string_view token);

}  // namespace orch::engine
