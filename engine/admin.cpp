#include "engine/admin.hpp"
#include "engine/account_view.hpp"

#include "engine/admin_input.hpp"

#include "api/http_server.hpp"
#include "api/text.hpp"
#include "engine/admin_ui.hpp"
#include "engine/campaign_apply.hpp"
#include "engine/campaign_lifecycle.hpp"
#include "engine/dnc.hpp"
#include "engine/inbox.hpp"
#include "engine/intake.hpp"
#include "engine/lead_ops.hpp"
#include "engine/ledger.hpp"
#include "engine/limits/limits.hpp"
#include "engine/limits_gate.hpp"
#include "engine/outreach/client.hpp"
#include "engine/sql_array.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pqxx/pqxx>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <future>
#include <set>
#include <map>
#include <mutex>
#include <thread>
#include <optional>

namespace orch::engine {

namespace asio = boost::asio;
namespace http = boost::beast::http;

bool bearer_matches(std::string_view authorization, std::string_view token) {
    constexpr std::string_view scheme = "bearer ";
    if (token.empty() || authorization.size() < scheme.size()) {
        return false;
    }
    for (std::size_t i = 0; i < scheme.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(authorization[i])) != scheme[i]) {
            return false;
        }
    }
    auto given = authorization.substr(scheme.size());
    unsigned char a[EVP_MAX_MD_SIZE];
    unsigned char b[EVP_MAX_MD_SIZE];
    unsigned int la = 0;
    unsigned int lb = 0;
    EVP_Digest(given.data(), given.size(), a, &la, EVP_sha256(), nullptr);
    EVP_Digest(token.data(), token.size(), b, &lb, EVP_sha256(), nullptr);
    return la == lb && CRYPTO_memcmp(a, b, la) == 0;
}

namespace {

std::string q(std::string_view name) { return std::string(schema::query(name)); }

// What a route answers; turned into an HTTP response by the handler.
struct reply {
    http::status status = http::status::ok;
    std::string body;
    std::string content_type = "application/json";
    std::string allow;  // 405: the methods the path takes
    std::optional<std::int64_t> retry_after_s;  // 429: Retry-After
};

// Dumps never throw: a string that is not UTF-8 (which input checks keep out) is written with
// U+FFFD in its place rather than turning an answer into a 500.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

reply ok_json(const json& j, http::status status = http::status::ok) { return {status, dump(j), "application/json", {}, {}}; }

// The message spells what a quoted value could hide (a control, an invisible character, a space
// other than U+0020: "got 'live\u{00a0}'", not "got 'live '"), as the CLI prints its errors.
reply error_reply(http::status status, const std::string& message, json details = nullptr) {
    json e = {{"status", static_cast<int>(status)}, {"message", orch::text::terminal_error(message)}};
    if (!details.is_null()) {
        e["details"] = std::move(details);
    }
    return {status, dump(json{{"error", e}}), "application/json", {}, {}};
}

reply not_allowed(const std::string& allow) {
    auto r = error_reply(http::status::method_not_allowed, "method not allowed here; allowed: " + allow);
    r.allow = allow;
    return r;
}

// Client errors found while reading the request (engine/admin_input.hpp): 400, 415, 422.
using admin_input::bad_request;
using admin_input::unprocessable;
using admin_input::unsupported_media;
using admin_input::int_param;
using admin_input::only_params;
using admin_input::object_body;

using orch::text::csv_field;

json parse_or_text(const std::string& text) {
    auto j = json::parse(text, nullptr, false);
    return j.is_discarded() ? json(text) : j;
}

const std::vector<std::string> lead_states = {"live",    "ready",  "calling",  "waiting",
                                              "done",    "replied", "failed",  "cancelled"};
const std::vector<std::string> event_kinds = [] {
    std::vector<std::string> out;
    for (event_kind k : all_event_kinds) {
        out.emplace_back(to_string(k));
    }
    return out;
}();

bool one_of(const std::vector<std::string>& set, const std::string& v) {
    return std::find(set.begin(), set.end(), v) != set.end();
}

std::string joined(const std::vector<std::string>& set) {
    std::string out;
    for (const auto& s : set) {
        out += (out.empty() ? "" : ", ") + s;
    }
    return out;
}

std::string iso(std::chrono::system_clock::time_point t) {
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
    std::time_t tt = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace

struct admin_server::impl {
    settings cfg;
    outreach::client* api = nullptr;
    asio::io_context& io;
    // The admin's queries run on db_pool's threads (blocking libpqxx and hiredis), each thread
    // on a database connection of its own, so slow routes do not queue behind one another.
    asio::thread_pool db_pool;
    std::mutex db_mutex;
    std::map<std::thread::id, std::unique_ptr<store>> db;  // one per db_pool thread
    std::unique_ptr<limits::limiter> limiter;               // thread-safe (a pool of connections)
    std::mutex scrape_mutex;                                 // one scrape at a time (the watermark)
    std::unique_ptr<api::http_server> server;

    // Metrics (prometheus-cpp is thread-safe; the watermark is touched under scrape_mutex).
    std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
    prometheus::Family<prometheus::Counter>* steps = nullptr;
    prometheus::Family<prometheus::Histogram>* latency = nullptr;
    prometheus::Family<prometheus::Counter>* throttled = nullptr;
    prometheus::Family<prometheus::Counter>* unreadable = nullptr;
    prometheus::Family<prometheus::Counter>* credits = nullptr;
    prometheus::Gauge* backlog = nullptr;
    prometheus::Gauge* event_lag = nullptr;
    prometheus::Family<prometheus::Gauge>* ledger_credits = nullptr;
    prometheus::Family<prometheus::Gauge>* intake_events = nullptr;
    prometheus::Family<prometheus::Counter>* events_stored = nullptr;
    prometheus::Family<prometheus::Counter>* webhook_refused = nullptr;
    const intake_stats* intake = nullptr;              // serve's receiver, when the admin runs in serve
    std::array<std::uint64_t, 3> refused_seen{};       // its counts at the last scrape
    prometheus::Family<prometheus::Counter>* secrets_lost = nullptr;
    std::uint64_t secrets_lost_seen = 0;
    prometheus::Family<prometheus::Counter>* conversations_unread = nullptr;
    std::uint64_t conversations_unread_seen = 0;
    prometheus::Family<prometheus::Counter>* full_sweeps = nullptr;
    std::array<std::uint64_t, 2> full_sweeps_seen{};
    std::int64_t watermark = 0;
    // Attempts at or below the watermark that were in flight when read: counted once finished.
    std::set<std::int64_t> open_attempts;
    std::int64_t events_watermark = 0;

    // The dashboard under /ui/ (engine/admin_ui.hpp): its pages, login sessions and CSRF tokens.
    dashboard ui{cfg.admin_token};

    impl(asio::io_context& ctx, settings s, outreach::client* client)
        : cfg(std::move(s)), api(client), io(ctx), db_pool(static_cast<std::size_t>(cfg.admin_db_connections)) {
        using namespace prometheus;
        steps = &BuildCounter().Name("orch_steps_total").Help("Finished step calls by action and outcome").Register(*registry);
        latency = &BuildHistogram()
                       .Name("orch_api_call_seconds")
                       .Help("Intent-to-settle time of step calls by action (an upper bound of the API latency)")
                       .Register(*registry);
        throttled = &BuildCounter().Name("orch_api_rate_limited_total").Help("Step calls answered HTTP 429 by action").Register(*registry);
        unreadable = &BuildCounter()
                          .Name("orch_api_unreadable_answers_total")
                          .Help("Step calls whose answer the client could not read, by action and kind: a body not "
                                "of the documented shape (malformed_response), or an HTTP status without an API "
                                "error body (http_status); the call settles uncertain or transient, and is "
                                "reconciled or retried")
                          .Register(*registry);
        credits = &BuildCounter().Name("orch_credits_spent_total").Help("Credits the step calls cost as the ledger books them (the API's report, or the most a lost call could have cost), by action").Register(*registry);
        backlog = &BuildGauge().Name("orch_due_backlog").Help("Live enrollments due now (counted up to 100000)").Register(*registry).Add({});
        event_lag = &BuildGauge()
                         .Name("orch_event_lag_seconds")
                         .Help("Age of the oldest recent inbox event a live enrollment has not applied")
                         .Register(*registry)
                         .Add({});
        intake_events = &BuildGauge()
                             .Name("orch_intake_events")
                             .Help("Event intake: quarantined events (verified, unreadable), stored events of unknown "
                                   "types, and accounts whose events health is degraded (state)")
                             .Register(*registry);
        events_stored = &BuildCounter()
                             .Name("orch_events_stored_total")
                             .Help("Inbox events stored (webhooks, streams, polls and sweeps; each once) by kind")
                             .Register(*registry);
        webhook_refused = &BuildCounter()
                               .Name("orch_webhook_refused_total")
                               .Help("Requests serve's webhook receiver refused: to a path not its own (unknown_path), "
                                     "for an account with no webhook of its own (unknown_account), or failing the "
                                     "signature check (bad_signature)")
                               .Register(*registry);
        secrets_lost = &BuildCounter()
                            .Name("orch_webhook_secrets_lost_total")
                            .Help("Webhook secrets serve's receiver took for lost: deliveries kept failing the "
                                  "signature check with the stored secret, which the leading replica then rotates")
                            .Register(*registry);
        conversations_unread = &BuildCounter()
                                    .Name("orch_intake_conversations_unread_total")
                                    .Help("Message events naming only their conversation that serve stored with no "
                                          "lead, unread: none of the account's campaigns had credits left for the "
                                          "read (get_conversation) that finds their sender")
                                    .Register(*registry);
        full_sweeps = &BuildCounter()
                           .Name("orch_intake_full_sweeps_total")
                           .Help("serve's periodic catch-up sweeps of an account: made, or skipped because the "
                                 "account's sweeps found nothing the deliveries missed (its interval backing off "
                                 "towards sweep_max_seconds) (outcome)")
                           .Register(*registry);
        ledger_credits = &BuildGauge().Name("orch_ledger_credits").Help("Ledger credits over all campaigns by balance").Register(*registry);
    }

    ~impl() { db_pool.join(); }

    // Runs `f` on a database thread (reconnecting its connection first if it was lost). `f` is
    // a named local of the caller: GCC 12 mishandles temporaries inside a co_await expression.
    template <typename F>
    asio::awaitable<std::invoke_result_t<F>> on_db(const F& f) {
        // `this` outlives the call: the request's coroutine holds the impl (see the handler).
        auto run = [this, &f]() -> asio::awaitable<std::invoke_result_t<F>> {
            ready_store();
            co_return f();
        };
        co_return co_await asio::co_spawn(db_pool, run, asio::use_awaitable);
    }

    // This db_pool thread's store, connected: made when missing, and again when its connection
    // was lost or no longer answers (see alive()).
    store& ready_store() {
        auto& mine = thread_store();
        if (mine && mine->connection().is_open() && !alive(mine->connection())) {
            mine.reset();
        }
        if (!mine || !mine->connection().is_open()) {
            mine = std::make_unique<store>(cfg.database_url);
        }
        return *mine;
    }

    // Runs `f(store)` on a database thread without waiting for it; a failure is logged. For writes
    // whose order does not matter and that nobody waits for (a search's credits in flight).
    template <typename F>
    void post_db(F f) {
        asio::post(db_pool, [this, f = std::move(f)] {
            try {
                f(ready_store());
            } catch (const std::exception& e) {
                spdlog::warn("admin: a database write nobody waits for failed: {}", e.what());
            }
        });
    }

    // Whether a pooled connection idle for over a few seconds still answers (a read-only ping, so
    // nothing is run twice): after a PostgreSQL restart each pooled connection looks open until
    // its next statement fails, and every admin request, /readyz's too, met one such failure per
    // connection in turn ("Could not obtain client encoding: not connected").
    static bool alive(pqxx::connection& c) {
        thread_local auto last_used = std::chrono::steady_clock::time_point{};
        const auto now = std::chrono::steady_clock::now();
        const bool idle = now - last_used > std::chrono::seconds(5);
        last_used = now;
        if (!idle) {
            return true;
        }
        try {
            pqxx::nontransaction(c).exec("SELECT 1");
            return true;
        } catch (const std::exception&) {
            return false;
        }
    }

    // This db_pool thread's store slot (the map's nodes are stable; only the thread uses its own).
    std::unique_ptr<store>& thread_store() {
        std::lock_guard lock(db_mutex);
        return db[std::this_thread::get_id()];
    }
    store& st() { return *thread_store(); }

    asio::awaitable<api::handler_result> handle(api::request& req);
    asio::awaitable<reply> route(const api::request& req);
    asio::awaitable<reply> readyz();
    asio::awaitable<reply> metrics();
    asio::awaitable<reply> campaign_list();
    asio::awaitable<reply> campaign_get(const std::string& name);
    asio::awaitable<reply> campaign_apply(const api::request& req, bool dry_run, bool search_again,
                                          bool move_running);
    asio::awaitable<reply> campaign_state(const std::string& name, const std::string& verb);
    asio::awaitable<reply> campaign_versions(const std::string& name, const std::string* version);
    asio::awaitable<reply> campaign_diff_get(const std::string& name, const std::map<std::string, std::string>& params);
    asio::awaitable<reply> campaign_leads(const std::string& name, const std::map<std::string, std::string>& params);
    asio::awaitable<reply> campaign_lead(const std::string& name, const std::string& lead);
    asio::awaitable<reply> accounts();
    asio::awaitable<reply> account_limits(const std::string& account, const api::request& req, bool put);
    asio::awaitable<reply> budget(const std::map<std::string, std::string>& params);
    asio::awaitable<reply> campaign_budget_put(const std::string& name, const api::request& req);
    asio::awaitable<reply> events(const std::map<std::string, std::string>& params);
    asio::awaitable<reply> events_quarantine(const std::map<std::string, std::string>& params);
    asio::awaitable<reply> campaign_report(const std::string& name);  // the dashboard's (see below)
    // Lead operations and the do-not-contact list (engine/lead_ops.hpp, engine/dnc.hpp).
    asio::awaitable<reply> lead_action(const std::string& name, const std::string* lead, const std::string& verb,
                                       const api::request& req);
    asio::awaitable<reply> dnc_route(const std::vector<std::string>& seg, const std::map<std::string, std::string>& params,
                                     const api::request& req);

    void scrape();  // a db thread, under scrape_mutex
    std::optional<std::int64_t> campaign_id(const std::string& name);  // db thread
};

std::optional<std::int64_t> admin_server::impl::campaign_id(const std::string& name) {
    pqxx::nontransaction tx(st().connection());
    auto r = tx.exec_params(q("admin/campaign_id"), name);
    if (r.empty()) {
        return std::nullopt;
    }
    return r[0][0].as<std::int64_t>();
}

namespace {
// A failure in the engine's taxonomy (engine/result.hpp) as the admin API answers it. What the
// database said (SQL, constraint names) stays in the log; a client's value the database refused
// is still the client's (400), anything else of the database's is an outage (503).
reply failure_reply(const api::request& req, const failure& f) {
    const bool database = dynamic_cast<const store_error*>(&f) != nullptr;
    if (database) {
        spdlog::error("admin: {} {}: database: {}", orch::text::escaped(req.method_string()),
                      orch::text::escaped(req.target()), orch::text::escaped(f.what()));
        if (f.category() == error_category::invalid_input) {
            return error_reply(http::status::bad_request, "a value in the request is not accepted (details are logged)");
        }
        return error_reply(http::status::service_unavailable, "database unavailable (details are logged)");
    }
    switch (f.category()) {
    case error_category::invalid_input:
        return error_reply(http::status::bad_request, f.what());
    case error_category::unsupported_media:
        return error_reply(http::status::unsupported_media_type, f.what());
    case error_category::unprocessable:
        return error_reply(http::status::unprocessable_entity, std::string(f.what()) + "; nothing changed");
    case error_category::not_found:
        return error_reply(http::status::not_found, f.what());
    case error_category::conflict:
        return error_reply(http::status::conflict, std::string(f.what()) + "; nothing changed");
    case error_category::contended:
    case error_category::unavailable:
        spdlog::warn("admin: {} {}: {}", orch::text::escaped(req.method_string()), orch::text::escaped(req.target()),
                     orch::text::escaped(f.what()));
        return error_reply(http::status::service_unavailable, "unavailable, try again (details are logged)");
    case error_category::internal:
        break;
    }
    spdlog::error("admin: {} {}: {}", orch::text::escaped(req.method_string()), orch::text::escaped(req.target()),
                  orch::text::escaped(f.what()));
    return error_reply(http::status::internal_server_error, "internal error (logged)");
}
}  // namespace

asio::awaitable<api::handler_result> admin_server::impl::handle(api::request& req) {
    if (auto page = ui.serve(req)) {
        co_return api::handler_result::reply(std::move(*page));
    }
    reply r;
    try {
        r = co_await route(req);
    } catch (const failure& f) {
        r = failure_reply(req, f);
    } catch (const pqxx::broken_connection& e) {
        spdlog::error("admin: {} {}: database connection lost", orch::text::escaped(req.method_string()),
                      orch::text::escaped(req.target()));
        r = error_reply(http::status::service_unavailable, "database unavailable: connection lost");
    } catch (const std::exception& e) {
        spdlog::error("admin: {} {}: {}", orch::text::escaped(req.method_string()), orch::text::escaped(req.target()),
                      orch::text::escaped(e.what()));
        r = error_reply(http::status::internal_server_error, "internal error (logged)");
    }
    api::response res{r.status, req.version()};
    res.set(http::field::server, "orchestrator-admin");
    res.set(http::field::content_type, r.content_type);
    res.set(http::field::cache_control, "no-store");
    dashboard::secure_headers(res);
    if (!r.allow.empty()) {
        res.set(http::field::allow, r.allow);
    }
    if (r.retry_after_s) {
        res.set(http::field::retry_after, std::to_string(*r.retry_after_s));
    }
    if (r.status == http::status::unauthorized) {
        res.set(http::field::www_authenticate, "Bearer realm=\"orchestrator-admin\"");
    }
    res.keep_alive(req.keep_alive());
    res.body() = std::move(r.body);
    res.prepare_payload();
    co_return api::handler_result::reply(std::move(res));
}

asio::awaitable<reply> admin_server::impl::route(const api::request& req) {
    // Every decoded path segment and query key and value is UTF-8 without NUL (a 400 saying
    // which one), before anything reaches a route, a log line or the database.
    const auto target = admin_input::read_target(req.target());
    const auto& seg = target.segments;
    const auto& params = target.params;
    const std::string_view content_type = req[http::field::content_type];
    auto check_body = [&req, content_type](const std::vector<std::string>& types) {
        admin_input::check_body(content_type, req.body(), types);
    };
    auto check_no_body = [&req] { admin_input::check_no_body(req.body()); };
    const auto method = req.method();
    const bool get = method == http::verb::get || method == http::verb::head;
    const bool post = method == http::verb::post;

    if (seg.size() == 1 && (seg[0] == "healthz" || seg[0] == "readyz")) {
        if (!get) {
            co_return not_allowed("GET");
        }
        check_no_body();
        only_params(params, {});
        if (seg[0] == "healthz") {
            co_return ok_json({{"status", "ok"}});
        }
        co_return co_await readyz();
    }
    // The bearer token, or the dashboard's session cookie (with its CSRF header for a change).
    switch (ui.authorize(req)) {
        case dashboard::access::bearer:
        case dashboard::access::session:
            break;
        case dashboard::access::unauthenticated:
            co_return error_reply(http::status::unauthorized, "missing Authorization: Bearer <token>");
        case dashboard::access::bad_token:
            co_return error_reply(http::status::unauthorized, "invalid token");
        case dashboard::access::csrf_refused:
            co_return error_reply(http::status::forbidden,
                            "a change made with the dashboard's session needs its X-CSRF-Token header; nothing changed");
    }
    if (seg.size() == 1 && seg[0] == "metrics") {
        if (!get) {
            co_return not_allowed("GET");
        }
        check_no_body();
        only_params(params, {});
        co_return co_await metrics();
    }
    if (seg.empty() || seg[0] != "v1" || seg.size() < 2) {
        co_return error_reply(http::status::not_found, "no such path: " + target.path);
    }
    const auto& area = seg[1];
    // Names never hold control or bidirectional characters (the loader refuses them too).
    admin_input::check_path_names(target);
    if (area == "campaigns") {
        if (seg.size() == 2) {
            if (get) {
                check_no_body();
                only_params(params, {});
                co_return co_await campaign_list();
            }
            if (post) {
                check_body({"application/yaml", "application/x-yaml", "text/yaml", "application/json"});
                only_params(params, {"dry_run", "search_again", "move_running"});
                const auto flag = [&params](const std::string& name) {
                    auto it = params.find(name);
                    if (it == params.end() || it->second == "false" || it->second == "0") {
                        return false;
                    }
                    if (it->second == "true" || it->second == "1") {
                        return true;
                    }
                    throw bad_request("query parameter '" + name + "' must be true or false (or 1 or 0), got '" +
                                      it->second + "'");
                };
                const bool dry_run = flag("dry_run");
                const bool search_again = flag("search_again");
                co_return co_await campaign_apply(req, dry_run, search_again, flag("move_running"));
            }
            co_return not_allowed("GET, POST");
        }
        const auto& name = seg[2];
        if (seg.size() == 3) {
            if (!get) {
                co_return not_allowed("GET");
            }
            check_no_body();
            only_params(params, {});
            co_return co_await campaign_get(name);
        }
        const auto& sub = seg[3];
        if (seg.size() == 4 && (sub == "pause" || sub == "resume" || sub == "cancel")) {
            if (!post) {
                co_return not_allowed("POST");
            }
            check_no_body();
            only_params(params, {});
            co_return co_await campaign_state(name, sub);
        }
        if (seg.size() == 4 && sub == "report") {
            if (!get) {
                co_return not_allowed("GET");
            }
            check_no_body();
            only_params(params, {});
            co_return co_await campaign_report(name);
        }
        if (seg.size() == 4 && sub == "budget") {
            if (method != http::verb::put) {
                co_return not_allowed("PUT");
            }
            check_body({"application/json"});
            only_params(params, {});
            co_return co_await campaign_budget_put(name, req);
        }
        if (sub == "versions" && seg.size() <= 5) {
            if (!get) {
                co_return not_allowed("GET");
            }
            check_no_body();
            only_params(params, {});
            co_return co_await campaign_versions(name, seg.size() == 5 ? &seg[4] : nullptr);
        }
        // ---- lifecycle: GET /v1/campaigns/{name}/diff?from=V1&to=V2 ----
        if (seg.size() == 4 && sub == "diff") {
            if (!get) {
                co_return not_allowed("GET");
            }
            only_params(params, {"from", "to"});
            co_return co_await campaign_diff_get(name, params);
        }
        // Lead operations: POST .../leads/{id}/stop|retry|skip|move and POST .../leads:bulk.
        if ((seg.size() == 6 && sub == "leads") || (seg.size() == 4 && sub == "leads:bulk")) {
            if (!post) {
                co_return not_allowed("POST");
            }
            // The body is optional for one lead ({"to"} or {"account"}), required in bulk.
            if (!req.body().empty() || seg.size() == 4) {
                check_body({"application/json"});
            }
            only_params(params, {});
            // Named locals: GCC 12 destroys some temporaries of a co_await expression twice.
            const std::string* lead = seg.size() == 6 ? &seg[4] : nullptr;
            const std::string verb = seg.size() == 6 ? seg[5] : std::string();
            co_return co_await lead_action(name, lead, verb, req);
        }
        if (sub == "leads" && seg.size() <= 5) {
            if (!get) {
                co_return not_allowed("GET");
            }
            check_no_body();
            if (seg.size() == 5) {
                only_params(params, {});
                co_return co_await campaign_lead(name, seg[4]);
            }
            only_params(params, {"state", "format", "limit", "cursor"});
            co_return co_await campaign_leads(name, params);
        }
    } else if (area == "dnc" && seg.size() <= 3) {
        // Other methods get their 405 from dnc_route before any body rule.
        if (post) {
            check_body({"application/json"});
        } else if (get || method == http::verb::delete_) {
            check_no_body();
        }
        co_return co_await dnc_route(seg, params, req);
    } else if ((area == "inbox" && seg.size() <= 4) || (area == "manual-replies" && seg.size() == 3)) {
        // The replies inbox (engine/inbox.hpp): its routes answer their own 404 and 405.
        if (post) {
            check_body({"application/json"});
        } else {
            check_no_body();
        }
        if (area == "manual-replies" || seg.size() == 4) {
            only_params(params, {});  // the list and a reply's page check their own
        }
        const std::string verb(req.method_string());
        const std::string body = req.body();
        const std::string key(req["Idempotency-Key"]);
        auto job = [this, &verb, &seg, &params, &body, &key] {
            return inbox::handle(st().connection(), cfg, verb, seg, params, body, key);
        };
        auto r = co_await on_db(job);
        reply out = ok_json(r.body, static_cast<http::status>(r.status));
        out.allow = r.allow;
        co_return out;
    } else if (area == "accounts" && seg.size() == 4 && seg[3] == "limits") {
        const bool put = method == http::verb::put;
        if (!get && !put) {
            co_return not_allowed("GET, PUT");
        }
        if (put) {
            check_body({"application/json"});
        } else {
            check_no_body();
        }
        only_params(params, {});
        co_return co_await account_limits(seg[2], req, put);
    } else if (seg.size() == 3 && area == "events" && seg[2] == "quarantine") {
        if (!get) {
            co_return not_allowed("GET");
        }
        check_no_body();
        only_params(params, {"limit"});
        co_return co_await events_quarantine(params);
    } else if (seg.size() == 2 && (area == "accounts" || area == "budget" || area == "events")) {
        if (!get) {
            co_return not_allowed("GET");
        }
        check_no_body();
        if (area == "accounts") {
            only_params(params, {});
            co_return co_await accounts();
        }
        if (area == "budget") {
            only_params(params, {"campaign"});
            co_return co_await budget(params);
        }
        only_params(params, {"type", "limit"});
        co_return co_await events(params);
    }
    co_return error_reply(http::status::not_found, "no such path: " + target.path);
}

asio::awaitable<reply> admin_server::impl::readyz() {
    json checks = json::object();
    bool ready = true;
    auto ping = [this] {
        pqxx::nontransaction tx(st().connection());
        tx.exec(q("admin/ping"));
        if (!limiter) {
            return std::string("not configured");
        }
        auto day = limits::day_in_zone(std::chrono::system_clock::now(), "UTC");
        return limiter->status("readyz-probe", *day).has_value() ? std::string("ok") : std::string("unavailable");
    };
    std::string redis;
    try {
        redis = co_await on_db(ping);
        checks["postgres"] = "ok";
    } catch (const std::exception& e) {
        checks["postgres"] = std::string("unavailable: ") + e.what();
        ready = false;
    }
    if (!redis.empty()) {
        checks["redis"] = redis;
        ready = ready && redis != "unavailable";
    } else {
        checks["redis"] = "not checked";
    }
    // Events health (engine/intake.hpp): degraded does not make the replica unready (a load
    // balancer should keep sending it deliveries), it is reported beside the checks.
    auto quiet = [this] {
        pqxx::nontransaction tx(st().connection());
        json out = json::array();
        for (const auto& r : tx.exec_params(q("intake/events_health"), cfg.events_quiet_seconds)) {
            out.push_back({{"account_id", r[0].as<std::string>()}, {"last_event_at", r[1].as<std::string>()},
                           {"pending_invitations", r[2].as<std::int64_t>()}});
        }
        return out;
    };
    bool degraded = false;
    if (checks["postgres"] == "ok") {
        try {
            auto quiet_accounts = co_await on_db(quiet);
            degraded = !quiet_accounts.empty();
            checks["events"] = degraded ? json{{"status", "degraded"}, {"quiet_accounts", quiet_accounts}}
                                        : json("ok");
        } catch (const std::exception& e) {
            checks["events"] = std::string("not checked: ") + e.what();
        }
    }
    // The API probe takes a token of the key's request bucket like every other call, and is
    // skipped while the key is cooling down after a 429.
    bool may_probe = true;
    if (limiter && api != nullptr) {
        auto take = [this] {
            limits::check c;
            c.account_id = "~serve";
            c.what = limits::action::check_invitation;
            c.day = limits::day_in_zone(std::chrono::system_clock::now(), "UTC").value_or(limits::local_day{});
            return limiter->take(c);
        };
        try {
            auto v = co_await on_db(take);
            may_probe = v.allowed;
            if (!may_probe) {
                checks["api"] = std::string("not checked: ") + limits::to_string(v.why);
            }
        } catch (const std::exception&) {
            may_probe = true;
        }
    }
    // What the workers' calls of the last minute met (admin/api_reach), when the probe says nothing.
    auto reach = [this] {
        pqxx::nontransaction tx(st().connection());
        return tx.exec(q("admin/api_reach"))[0];
    };
    if (api == nullptr) {
        checks["api"] = "not configured";
    } else if (!may_probe) {
        // The bucket said no, which is no failure of the API; but the workers, which spend it,
        // know whether the API answers their calls: when it answered none of the last minute's (at
        // least 3), the API is unavailable as surely as a probe would say (it said "ready" through an
        // outage while the workers' calls failed to connect).
        try {
            auto r = co_await on_db(reach);
            const auto calls = r[0].as<std::int64_t>();
            const auto unreached = r[1].as<std::int64_t>();
            if (calls >= 3 && unreached == calls) {
                checks["api"] = "unavailable: none of the workers' last " + std::to_string(calls) +
                                " calls (60 s) got an answer from the API; the last: " + r[2].as<std::string>();
                ready = false;
            } else if (unreached > 0) {
                checks["api"] = checks["api"].get<std::string>() + "; " + std::to_string(unreached) + " of the workers' " +
                                std::to_string(calls) + " calls of the last 60 s got no answer from the API";
            }
        } catch (const std::exception&) {
            // Postgres's own check above says what is wrong with it.
        }
    } else {
        outreach::call_options o;
        o.total_timeout_ms = 2'000;
        auto credits_now = co_await api->get_credits(o);
        const bool ready_but_the_api = ready;
        if (credits_now) {
            checks["api"] = "ok";
        } else {
            checks["api"] = "unavailable: " + outreach::describe(credits_now.error());
            ready = false;
        }
        // The probe's short deadline keeps /readyz prompt; an API slower than it, which answers
        // the workers' calls within api_timeout_ms, is slow, not down: the replica stays ready
        // (degraded), or a load balancer would take every replica, and the webhook deliveries,
        // away whenever the API's latency passed 2 s (a trial: 503 while the calls succeeded).
        if (!credits_now && credits_now.error().code == "TIMEOUT") {
            try {
                auto r = co_await on_db(reach);
                const auto calls = r[0].as<std::int64_t>();
                const auto answered = calls - r[1].as<std::int64_t>();
                if (answered > 0) {
                    checks["api"] = "slow: no answer to the probe within 2 s, but " + std::to_string(answered) +
                                    " of the workers' " + std::to_string(calls) +
                                    " calls of the last 60 s were answered";
                    ready = ready_but_the_api;
                    degraded = true;
                }
            } catch (const std::exception&) {
                // Postgres's own check above says what is wrong with it.
            }
        }
    }
    co_return ok_json({{"status", !ready ? "not ready" : degraded ? "degraded" : "ready"}, {"checks", checks}},
                      ready ? http::status::ok : http::status::service_unavailable);
}

void admin_server::impl::scrape() {
    pqxx::read_transaction tx(st().connection());
    constexpr std::int64_t max_rows = 50'000;
    // One call in flight (a worker killed mid-call holds it for its lease) must not hold back the
    // counts of every later one: those finished are counted, those in flight kept and read again.
    const auto count = [this](const pqxx::row& r) {
        auto action = r[1].as<std::string>();
        auto outcome = r[2].as<std::string>();
        steps->Add({{"action", action}, {"outcome", outcome}}).Increment();
        static const prometheus::Histogram::BucketBoundaries bounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                                       0.5,   1,    2.5,   5,    10,  30};
        latency->Add({{"action", action}}, bounds).Observe(r[4].as<double>());
        if (r[6].as<bool>()) {
            throttled->Add({{"action", action}}).Increment();
        }
        if (auto kind = r[7].as<std::string>(); !kind.empty()) {
            unreadable->Add({{"action", action}, {"kind", std::move(kind)}}).Increment();
        }
        credits->Add({{"action", action}}).Increment(static_cast<double>(r[3].as<std::int64_t>()));
    };
    if (!open_attempts.empty()) {
        std::set<std::int64_t> still;
        for (const auto& r : tx.exec_params(q("admin/metrics_attempts_open"), sql_array::of(open_attempts))) {
            if (r[5].as<bool>()) {
                still.insert(r[0].as<std::int64_t>());
            } else {
                count(r);
            }
        }
        open_attempts = std::move(still);  // one no longer there (none are deleted) is dropped
    }
    for (const auto& r : tx.exec_params(q("admin/metrics_attempts"), watermark, max_rows)) {
        if (r[5].as<bool>()) {
            open_attempts.insert(r[0].as<std::int64_t>());
        } else {
            count(r);
        }
        watermark = r[0].as<std::int64_t>();
    }
    for (const auto& r : tx.exec_params(q("admin/metrics_events"), events_watermark, max_rows)) {
        if (!r[2].as<bool>()) {
            break;  // young: a lower id may not be visible yet
        }
        events_stored->Add({{"kind", r[1].as<std::string>()}}).Increment();
        events_watermark = r[0].as<std::int64_t>();
    }
    auto g = tx.exec(q("admin/metrics_gauges"))[0];
    backlog->Set(g[0].as<double>());
    event_lag->Set(g[1].as<double>());
    ledger_credits->Add({{"balance", "available"}}).Set(g[2].as<double>());
    ledger_credits->Add({{"balance", "reserved"}}).Set(g[3].as<double>());
    ledger_credits->Add({{"balance", "spent"}}).Set(g[4].as<double>());
    auto ev = tx.exec_params(q("admin/metrics_intake"), cfg.events_quiet_seconds)[0];
    intake_events->Add({{"state", "quarantined"}}).Set(ev[0].as<double>());
    intake_events->Add({{"state", "unknown_type"}}).Set(ev[1].as<double>());
    intake_events->Add({{"state", "quiet_accounts"}}).Set(ev[2].as<double>());
    if (intake) {
        const std::array<std::pair<const char*, const std::atomic<std::uint64_t>*>, 3> counts = {
            {{"unknown_path", &intake->refused_path},
             {"unknown_account", &intake->refused_account},
             {"bad_signature", &intake->refused_signature}}};
        for (std::size_t i = 0; i < counts.size(); ++i) {
            const auto now = counts[i].second->load();
            webhook_refused->Add({{"reason", counts[i].first}}).Increment(static_cast<double>(now - refused_seen[i]));
            refused_seen[i] = now;
        }
        const auto lost = intake->secrets_lost.load();
        secrets_lost->Add({}).Increment(static_cast<double>(lost - secrets_lost_seen));
        secrets_lost_seen = lost;
        const auto unread = intake->unread_conversations.load();
        conversations_unread->Add({}).Increment(static_cast<double>(unread - conversations_unread_seen));
        conversations_unread_seen = unread;
        const std::array<std::pair<const char*, std::uint64_t>, 2> sweeps = {
            {{"made", intake->full_sweeps.load()}, {"skipped_quiet", intake->full_sweeps_skipped.load()}}};
        for (std::size_t i = 0; i < sweeps.size(); ++i) {
            full_sweeps->Add({{"outcome", sweeps[i].first}})
                .Increment(static_cast<double>(sweeps[i].second - full_sweeps_seen[i]));
            full_sweeps_seen[i] = sweeps[i].second;
        }
    }
}

asio::awaitable<reply> admin_server::impl::metrics() {
    auto job = [this] {
        std::lock_guard lock(scrape_mutex);
        scrape();
        return prometheus::TextSerializer().Serialize(registry->Collect());
    };
    auto text = co_await on_db(job);
    co_return reply{http::status::ok, std::move(text), "text/plain; version=0.0.4; charset=utf-8", {}, {}};
}

asio::awaitable<reply> admin_server::impl::campaign_list() {
    auto job = [this] {
        json out = json::array();
        for (const auto& c : st().campaigns()) {
            out.push_back({{"name", c.name},
                           {"state", c.state},
                           {"pause_reason", c.pause_reason},
                           {"version", c.version},
                           {"enrollments", c.enrollments},
                           {"live", c.live}});
        }
        return out;
    };
    auto list = co_await on_db(job);
    co_return ok_json({{"campaigns", list}});
}

asio::awaitable<reply> admin_server::impl::campaign_get(const std::string& name) {
    auto job = [this, &name]() -> std::optional<json> {
        pqxx::result r;
        {
            // One transaction at a time on the connection: this one ends before funnel() runs.
            pqxx::nontransaction tx(st().connection());
            r = tx.exec_params(q("admin/campaign"), name);
        }
        if (r.empty()) {
            return std::nullopt;
        }
        const auto& row = r[0];
        json c = {{"name", row[1].as<std::string>()},         {"state", row[2].as<std::string>()},
                  {"pause_reason", row[3].as<std::string>()}, {"version", row[4].as<int>()},
                  {"created_at", row[5].as<std::string>()},   {"updated_at", row[6].as<std::string>()},
                  {"enrollments", row[7].as<std::int64_t>()}, {"live", row[8].as<std::int64_t>()}};
        auto f = st().funnel(name);
        c["funnel"] = {{"found", f.found},       {"skipped", f.skipped}, {"checked", f.checked},
                       {"invited", f.invited},   {"accepted", f.accepted}, {"messaged", f.messaged},
                       {"replied", f.replied},   {"failed", f.failed},   {"live", f.live},
                       {"credits", f.credits}};
        // ---- lifecycle: what `campaign show` shows (dates, budget, steps, counts) ----
        pqxx::read_transaction tx(st().connection());
        if (auto o = campaign_overview(tx, name)) {
            for (const char* key : {"start_at", "end_at", "budget", "steps", "counts"}) {
                c[key] = (*o)[key];
            }
        }
        return c;
    };
    auto c = co_await on_db(job);
    if (!c) {
        co_return error_reply(http::status::not_found, "no campaign named '" + orch::text::escaped_clipped(name, 200) + "'");
    }
    co_return ok_json(*c);
}

asio::awaitable<reply> admin_server::impl::campaign_apply(const api::request& req, bool dry_run, bool search_again,
                                                          bool move_running) {
    const std::string& text = req.body();
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        co_return error_reply(http::status::bad_request, "empty body: send the campaign definition (YAML or JSON)");
    }
    if (admin_input::media_type(req[http::field::content_type]) == "application/json") {
        admin_input::json_body(text);  // labelled JSON: it must be JSON (YAML goes as application/yaml)
    }
    // Everything is checked before the audience search is sent: the definition, its accounts,
    // and the stored campaign's state (a cancelled one is a conflict), so a refused apply bills
    // nothing. An unchanged definition of a search audience is not searched again.
    struct checked {
        campaigns::load_result loaded;
        std::vector<std::string> wanted_files;
        std::vector<std::string> senders;
        apply_plan plan;
        apply_preview preview;  // a dry run's: what the apply would say of the leads already there
        std::string conflict;
        sender_search_limits search_limits;  // the first sender's override, if any, and quota day
    };
    auto check = [this, &text, dry_run, move_running] {
        checked c;
        auto* files = &c.wanted_files;
        c.loaded = check_definition(text, "<request body>", &st(), [files](const std::string& path) {
            files->push_back(path);
            return std::optional<std::string>();
        });
        if (c.loaded.value && c.wanted_files.empty()) {
            c.senders = sender_ids(st(), *c.loaded.value);
            if (!c.senders.empty()) {
                c.search_limits = search_limits_of(st(), c.senders.front(), limiter_settings(cfg).actions);
            }
            try {
                c.plan = plan_apply(st(), *c.loaded.value);
                if (dry_run) {
                    c.preview = preview_apply(st(), *c.loaded.value, c.senders, move_running);
                }
            } catch (const campaign_conflict& e) {
                c.conflict = e.what();
            }
        }
        return c;
    };
    auto c = co_await on_db(check);
    auto diag = [](const std::vector<campaigns::diagnostic>& list) {
        json out = json::array();
        for (const auto& d : list) {
            out.push_back({{"line", d.line}, {"column", d.column}, {"message", d.message}, {"text", d.to_string()}});
        }
        return out;
    };
    if (!c.wanted_files.empty()) {
        co_return error_reply(http::status::unprocessable_entity,
                        "audience.file '" + c.wanted_files.front() +
                            "' cannot be read by the server for a remote request: use an audience search, or "
                            "apply the file with `orchestrator campaign apply FILE`; nothing was stored");
    }
    if (!c.loaded.errors.empty()) {
        co_return error_reply(http::status::unprocessable_entity,
                        "the campaign definition has " + std::to_string(c.loaded.errors.size()) +
                            " error(s); nothing was stored",
                        diag(c.loaded.errors));
    }
    const auto& campaign = *c.loaded.value;
    if (!c.conflict.empty()) {
        co_return error_reply(http::status::conflict, c.conflict + "; nothing was stored or searched");
    }
    if (dry_run) {
        const auto refused = predicted_search_refusal(campaign, c.plan, search_again);
        const auto held = predicted_search_hold(campaign, c.plan, search_again);
        const auto again = refused.empty() ? search_again_note(campaign, c.plan, search_again, "search_again=true")
                                           : std::string();
        co_return ok_json({{"valid", true},
                           {"name", campaign.name},
                           {"steps", campaign.steps.size()},
                           {"warnings", diag(c.loaded.warnings)},
                           {"search_refused", refused.empty() ? json(nullptr) : json(refused)},
                           {"search_again", again.empty() ? json(nullptr) : json(again)},
                           {"search_held", held.empty() ? json(nullptr) : json(held)},
                           {"apply_warnings", c.preview.warnings},
                           {"live_budget", c.preview.live_budget.empty()
                                               ? json(nullptr)
                                               : json{{"kept", c.preview.live_budget_kept},
                                                      {"text", c.preview.live_budget}}}});
    }
    std::vector<lead_input> leads;
    std::optional<apply_charge> charge;   // the search's cost, booked in the campaign's ledger
    const bool unchanged = skips_search(campaign, c.plan, search_again);
    if (unchanged && !move_running) {
        spdlog::info("admin: campaign '{}' re-applied unchanged (version {}): no audience search sent",
                     orch::text::escaped(campaign.name), c.plan.version);
        co_return ok_json({{"name", campaign.name},
                           {"result", "unchanged"},
                           {"version", c.plan.version},
                           {"leads", 0},
                           {"enrolled", 0},
                           {"skipped", 0},
                           {"audience_credits", 0},
                           {"paused", nullptr},
                           {"note", "the definition is unchanged: the audience search was not sent again (nothing "
                                    "billed; search_again=true sends it)"},
                           {"warnings", diag(c.loaded.warnings)}});
    }
    json search = nullptr;                // how the audience search went
    // The search's row of credits in flight, removed once the apply is done, however it ends.
    struct search_row_guard {
        impl* self;
        std::int64_t id = 0;
        explicit search_row_guard(impl* s) : self(s) {}
        search_row_guard(const search_row_guard&) = delete;
        search_row_guard& operator=(const search_row_guard&) = delete;
        ~search_row_guard() {
            if (id != 0) {
                self->post_db([row = id](store& s) { s.end_search_in_flight(row); });
            }
        }
    } search_row{this};
    std::vector<outreach::person_hit> search_hits;  // lifecycle: who is a connection (apply warnings)
    const bool reused = unchanged || reuses_audience(campaign, c.plan, search_again);
    if (reused) {
        // A new version whose audience is the current one's: no search, nothing billed.
    } else if (campaign.who.kind == campaigns::audience::source::search) {
        if (const auto refused = search_refusal(campaign, c.plan); !refused.empty()) {
            co_return error_reply(http::status::conflict, refused + "; nothing was stored or billed");
        }
        if (api == nullptr) {
            co_return error_reply(http::status::service_unavailable, "no API client: the audience search cannot run");
        }
        const auto& sender = c.senders.front();
        // A named local: GCC 12 destroys some temporaries of a co_await expression twice.
        page_gate gate = limiter ? search_gate(*limiter, sender, campaign, c.search_limits) : page_gate{};
        // The search's pages are billed before the apply books them: its row counts them as in
        // flight for serve's balance reads (store::begin_search_in_flight) until the apply is done.
        auto begin = [this] { return st().begin_search_in_flight(); };
        try {
            search_row.id = co_await on_db(begin);
        } catch (const std::exception& e) {
            spdlog::warn("admin: the audience search's credits in flight could not be recorded: {}", e.what());
        }
        gate.billed = [this, id = search_row.id](std::int64_t credits) {
            if (id != 0) {
                post_db([id, credits](store& s) { s.hold_search_in_flight(id, credits); });
            }
        };
        const auto room = search_room(campaign, c.plan);
        auto found = co_await search_audience(*api, sender, campaign, gate, search_wait_max, room);
        if (!found) {
            // Held by a rate limit, ours (the search was not sent) or the API's: 429 with when to
            // try again. Any other failure is the API's: 502.
            // Our rate-limit store down: 503, as the database's.
            const auto& e = found.error();
            const bool limited = e.code == "NOT_SENT" || e.what_to_do == outreach::disposition::back_off;
            auto r = error_reply(e.code == "LIMITS_UNAVAILABLE" ? http::status::service_unavailable
                                 : e.code == "OVER_BUDGET"      ? http::status::conflict
                                 : limited                      ? http::status::too_many_requests
                                                                : http::status::bad_gateway,
                                 search_failure_text(e));
            if (limited) {
                r.retry_after_s = std::max<std::int64_t>(1, e.retry_after_s.value_or(1));
            }
            co_return r;
        }
        leads = leads_from_search(found->people);
        search_hits = found->people;
        charge = audience_charge(*found, sender);
        search = json{{"found", found->people.size()},
                      {"asked", found->asked},
                      {"available", found->available ? json(*found->available) : json(nullptr)},
                      {"calls", found->calls},
                      {"stopped", found->stopped.empty() ? json(nullptr) : json(found->stopped)},
                      {"held", found->held}};
    } else {
        leads = leads_from_file(campaign);
    }
    auto apply = [this, &campaign, &text, &c, &leads, &charge, move_running] {
        return apply_definition(st(), campaign, text, c.senders, leads, charge, std::chrono::system_clock::now(), {},
                                move_running);
    };
    auto r = co_await on_db(apply);
    // What the senders have left today, so that the pacing warning says when the first call may
    // go out (blocking Redis reads: off the network thread, as the database's).
    std::optional<apply_facts::quota_today> today;
    if (limiter && r.enrolled > 0 && uses_quota_today(cfg, campaign)) {
        auto read_today = [this, &campaign, &c] {
            return senders_quota_today(*limiter, cfg, campaign, st().accounts(), c.senders,
                                       std::chrono::system_clock::now());
        };
        today = co_await on_db(read_today);
    }
    // ---- lifecycle: warnings after the apply (engine/campaign_lifecycle.hpp) ----
    json warnings = diag(c.loaded.warnings);
    {
        apply_facts facts{r.leads,
                          r.enrolled,
                          r.skipped,
                          r.state,
                          campaign.who.kind == campaigns::audience::source::search ? &search_hits : nullptr,
                          !reused,
                          &r.own_quotas,
                          r.senders};
        facts.search_charged = r.charged;
        facts.caps = r.caps;
        facts.today = today;
        auto said = apply_warnings(campaign, facts, cfg, std::chrono::system_clock::now());
        for (auto& w : outcome_warnings(r, campaign)) {
            said.push_back(std::move(w));
        }
        for (const auto& w : said) {
            warnings.push_back({{"line", 0}, {"column", 0}, {"message", w}, {"text", w}});
        }
    }
    spdlog::info("admin: campaign '{}' applied: version {} ({}), {} enrolled, audience search {} credits{}",
                 orch::text::escaped(campaign.name), r.version, r.created ? "created" : (r.changed ? "updated" : "unchanged"),
                 r.enrolled, r.charged, r.paused.empty() ? "" : "; paused: " + orch::text::escaped(r.paused));
    json body{{"name", campaign.name},
              {"result", r.created ? "created" : (r.changed ? "updated" : "unchanged")},
              {"version", r.version},
              {"leads", r.leads},
              {"enrolled", r.enrolled},
              {"skipped", r.skipped},
              {"audience_credits", charge ? json(r.charged) : json(nullptr)},
              {"audience_search", search},
              {"paused", r.paused.empty() ? json(nullptr) : json(r.paused)},
              {"state", r.state},
              {"live_budget", nullptr},
              // What this version's `exclude:` did to the leads already there (also in the warnings).
              {"excluded", {{"stopped", r.excluded_stopped},
                            {"in_call", r.excluded_calling},
                            {"without_company", r.excluded_companies_unmatchable}}},
              {"warnings", warnings}};
    if (r.live_budget) {
        body["live_budget"] = {{"kept", r.live_budget_kept}, {"text", live_budget_text(r, campaign)}};
    }
    if (reused) {
        body["audience_credits"] = 0;
        body["note"] = std::string(r.changed ? "the audience is unchanged: its search"
                                             : "the definition is unchanged: the audience search") +
                       " was not sent again (nothing billed; search_again=true sends it)" +
                       (move_running ? "" : "; running leads keep their version's steps (move_running=true moves them); start_at and end_at hold for every lead");
    }
    if (move_running) {
        json kept = json::array();
        for (const auto& k : r.kept) {
            kept.push_back({{"step", k.step}, {"why", k.why}, {"count", k.count}});
        }
        body["moved"] = r.moved;
        body["kept"] = kept;
    }
    co_return ok_json(body, r.created ? http::status::created : http::status::ok);
}

asio::awaitable<reply> admin_server::impl::campaign_state(const std::string& name, const std::string& verb) {
    // The moves the CLI allows too (engine/campaign_apply.hpp change_campaign_state): asking for
    // the state it is in changes nothing (200, "changed": false); a forbidden move is a 409.
    auto job = [this, &name, &verb] { return change_campaign_state(st(), name, verb); };
    auto o = co_await on_db(job);
    if (!o.found) {
        co_return error_reply(http::status::not_found, "no campaign named '" + orch::text::escaped_clipped(name, 200) + "'");
    }
    if (o.conflict) {
        co_return error_reply(http::status::conflict, state_conflict_message(verb, name, o));
    }
    if (o.changed) {
        spdlog::info("admin: campaign '{}' {} -> {}", orch::text::escaped(name), o.from, o.to);
    }
    co_return ok_json({{"name", name},
                       {"state", o.to},
                       {"previous_state", o.from},
                       {"changed", o.changed},
                       {"warning", o.warning.empty() ? json(nullptr) : json(o.warning)}});
}

asio::awaitable<reply> admin_server::impl::campaign_versions(const std::string& name, const std::string* version) {
    int wanted = 0;
    if (version != nullptr) {
        auto [end, ec] = std::from_chars(version->data(), version->data() + version->size(), wanted);
        if (ec != std::errc() || end != version->data() + version->size() || wanted < 1) {
            throw bad_request("version must be a positive integer, got '" + *version + "'");
        }
    }
    auto job = [this, &name, wanted]() -> std::optional<json> {
        auto id = campaign_id(name);
        if (!id) {
            return std::nullopt;
        }
        pqxx::nontransaction tx(st().connection());
        if (wanted > 0) {
            auto r = tx.exec_params(q("admin/version"), *id, wanted);
            if (r.empty()) {
                return json(nullptr);
            }
            return json{{"name", name},
                        {"version", wanted},
                        {"definition", json::parse(r[0][0].as<std::string>())},
                        {"source", r[0][1].as<std::string>()},
                        {"digest", r[0][2].as<std::string>()},
                        {"created_at", r[0][3].as<std::string>()}};
        }
        json list = json::array();
        for (const auto& r : tx.exec_params(q("admin/versions"), *id)) {
            list.push_back({{"version", r[0].as<int>()},
                            {"digest", r[1].as<std::string>()},
                            {"created_at", r[2].as<std::string>()},
                            {"current", r[3].as<bool>()},
                            {"enrollments", r[4].as<std::int64_t>()}});
        }
        return json{{"name", name}, {"versions", list}};
    };
    auto out = co_await on_db(job);
    if (!out) {
        co_return error_reply(http::status::not_found, "no campaign named '" + orch::text::escaped_clipped(name, 200) + "'");
    }
    if (out->is_null()) {
        co_return error_reply(http::status::not_found, "campaign '" + name + "' has no version " + *version);
    }
    co_return ok_json(*out);
}

// ---- lifecycle: GET /v1/campaigns/{name}/diff (engine/campaign_lifecycle.hpp) ----
// A unified diff of two versions' canonical definitions: ?from=&to= (each a positive integer;
// default the version before `to`, and the current one).
asio::awaitable<reply> admin_server::impl::campaign_diff_get(const std::string& name,
                                                            const std::map<std::string, std::string>& params) {
    auto version_param = [&params](const char* key) -> std::optional<int> {
        auto it = params.find(key);
        if (it == params.end()) {
            return std::nullopt;
        }
        int v = 0;
        auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
        if (ec != std::errc() || end != it->second.data() + it->second.size() || v < 1) {
            throw bad_request(std::string("query parameter '") + key + "' must be a positive integer, got '" +
                              it->second + "'");
        }
        return v;
    };
    const auto from = version_param("from");
    const auto to = version_param("to");
    auto job = [this, &name, from, to] {
        pqxx::read_transaction tx(st().connection());
        return campaign_diff(tx, name, from, to);
    };
    auto d = co_await on_db(job);
    if (!d.found) {
        co_return error_reply(http::status::not_found, "no campaign named '" + orch::text::escaped_clipped(name, 200) + "'");
    }
    if (!d.error.empty()) {
        co_return error_reply(http::status::not_found, d.error);
    }
    co_return ok_json({{"name", name}, {"from", d.from}, {"to", d.to}, {"same", d.text.empty()}, {"diff", d.text}});
}

asio::awaitable<reply> admin_server::impl::campaign_leads(const std::string& name,
                                                         const std::map<std::string, std::string>& params) {
    std::string state;
    if (auto it = params.find("state"); it != params.end()) {
        state = it->second;
        if (!one_of(lead_states, state)) {
            throw bad_request("query parameter 'state' must be one of " + joined(lead_states) + ", got '" + state + "'");
        }
    }
    bool csv = false;
    if (auto it = params.find("format"); it != params.end()) {
        if (it->second != "json" && it->second != "csv") {
            throw bad_request("query parameter 'format' must be json or csv, got '" + it->second + "'");
        }
        csv = it->second == "csv";
    }
    const std::int64_t limit = int_param(params, "limit", 100, 1, 1000);
    const std::int64_t cursor = int_param(params, "cursor", 0, 0, std::numeric_limits<std::int64_t>::max());
    constexpr std::int64_t csv_max_rows = 100'000;
    struct page {
        bool found = false;
        json items = json::array();
        std::string csv;
        std::int64_t next = 0;
        bool truncated = false;
    };
    auto job = [this, &name, &state, limit, cursor, csv] {
        page p;
        auto id = campaign_id(name);
        if (!id) {
            return p;
        }
        p.found = true;
        pqxx::read_transaction tx(st().connection());
        if (!csv) {
            auto rows = tx.exec_params(q("admin/leads"), *id, state, cursor, limit + 1);
            for (const auto& r : rows) {
                if (static_cast<std::int64_t>(p.items.size()) == limit) {
                    p.next = p.items.back()["enrollment_id"].get<std::int64_t>();
                    break;
                }
                p.items.push_back(lead_ops::lead_item(r));
            }
            return p;
        }
        p.csv = "enrollment_id,lead_id,profile_url,account_id,step,state,reason,next_run_at,updated_at,finished_at\n";
        std::int64_t after = cursor;
        std::int64_t count = 0;
        while (true) {
            auto rows = tx.exec_params(q("admin/leads"), *id, state, after, std::int64_t{1000});
            for (const auto& r : rows) {
                if (count == csv_max_rows) {
                    p.truncated = true;
                    return p;
                }
                p.csv += r[0].as<std::string>() + "," + r[1].as<std::string>() + "," + csv_field(r[2].as<std::string>()) +
                         "," + csv_field(r[4].as<std::string>()) + "," + csv_field(r[5].as<std::string>()) + "," +
                         r[6].as<std::string>() + "," + csv_field(r[7].as<std::string>()) + "," +
                         (r[12].is_null() || r[12].as<std::string>().empty() ? r[10].as<std::string>() : std::string()) +
                         "," + r[11].as<std::string>() + "," +
                         (r[12].is_null() ? std::string() : r[12].as<std::string>()) + "\n";
                after = r[0].as<std::int64_t>();
                ++count;
            }
            if (rows.size() < 1000) {
                return p;
            }
        }
    };
    auto p = co_await on_db(job);
    if (!p.found) {
        co_return error_reply(http::status::not_found, "no campaign named '" + orch::text::escaped_clipped(name, 200) + "'");
    }
    if (csv) {
        if (p.truncated) {
            co_return error_reply(http::status::bad_request, "more than 100000 leads: export them in parts with cursor=");
        }
        co_return reply{http::status::ok, std::move(p.csv), "text/csv; charset=utf-8", {}, {}};
    }
    co_return ok_json({{"items", p.items}, {"next_cursor", p.next > 0 ? json(std::to_string(p.next)) : json(nullptr)}});
}

asio::awaitable<reply> admin_server::impl::campaign_lead(const std::string& name, const std::string& lead) {
    std::int64_t lead_id = 0;
    auto [end, ec] = std::from_chars(lead.data(), lead.data() + lead.size(), lead_id);
    if (ec != std::errc() || end != lead.data() + lead.size() || lead_id < 1) {
        throw bad_request("lead id must be a positive integer, got '" + lead + "'");
    }
    auto job = [this, &name, lead_id]() -> std::optional<json> {
        auto id = campaign_id(name);
        if (!id) {
            return std::nullopt;
        }
        pqxx::read_transaction tx(st().connection());
        auto l = lead_ops::lead_detail(tx, *id, name, lead_id);
        return l ? *l : json(nullptr);
    };
    auto out = co_await on_db(job);
    if (!out) {
        co_return error_reply(http::status::not_found, "no campaign named '" + orch::text::escaped_clipped(name, 200) + "'");
    }
    if (out->is_null()) {
        co_return error_reply(http::status::not_found, "campaign '" + name + "' has no lead " + lead);
    }
    co_return ok_json(*out);
}

asio::awaitable<reply> admin_server::impl::accounts() {
    auto job = [this] {
        auto rows = st().accounts();
        std::map<std::string, std::pair<std::int64_t, std::int64_t>> load;
        {
            pqxx::nontransaction tx(st().connection());
            for (const auto& r : tx.exec(q("admin/account_load"))) {
                load[r[0].as<std::string>()] = {r[1].as<std::int64_t>(), r[2].as<std::int64_t>()};
            }
        }
        auto now = std::chrono::system_clock::now();
        const auto defaults = limiter_settings(cfg).actions;
        json out = json::array();
        for (const auto& a : rows) {
            json j = account_json(a, defaults);
            j["live_enrollments"] = load[a.account_id].first;
            j["parked_enrollments"] = load[a.account_id].second;
            // The account's quota day, as the workers' gate counts it (UTC when none is chosen).
            const std::string& zone = quota_time_zone(a.time_zone);
            const auto day = limits::day_in_zone(now, zone).value_or(limits::local_day{});
            std::optional<limits::account_status> status;
            if (limiter) {
                status = limiter->status(a.account_id, day, effective(a.quotas, defaults));
            }
            if (!status) {
                j["limits_error"] = limiter ? "Redis unavailable" : "no redis_url configured";
                out.push_back(std::move(j));
                continue;
            }
            j["limits"] = account_limits_json(*status, zone, day);
            out.push_back(std::move(j));
        }
        return out;
    };
    auto list = co_await on_db(job);
    co_return ok_json({{"accounts", list}});
}

// GET or PUT /v1/accounts/{id}/limits: the account's own quotas per action (account_quotas.hpp).
// PUT takes {"invite": {"per_day": 40, "per_week": 150}, "send": null}: each action named is
// replaced (a missing field: the default), null clears it, others stay. The body is checked
// before the database is touched; the change is one transaction with the account's row locked.
asio::awaitable<reply> admin_server::impl::account_limits(const std::string& account, const api::request& req,
                                                          bool put) {
    // The body is checked before the database is touched (admin_input::parse_limits_body): an
    // action absent or null keeps its override, "clear" drops overrides.
    admin_input::limits_body body;
    if (put) {
        body = admin_input::parse_limits_body(req.body());
    }
    const auto defaults = limiter_settings(cfg).actions;
    std::vector<limits::action> changed;
    for (const auto& [name, _] : body.patch.items()) {
        if (auto a = limits::parse_action(name)) {
            changed.push_back(*a);
        }
    }
    auto job = [this, &account, &body, put, &defaults, &changed] {
        return st().change_account_quotas(
            account,
            [&body, put, &defaults, &changed](const quota_overrides& current,
                                              std::string& why) -> std::optional<quota_overrides> {
                if (!put) {
                    return current;
                }
                auto next = admin_input::apply_limits_body(current, body, why);
                if (next) {
                    why = week_below_day(*next, defaults, changed);
                    if (!why.empty()) {
                        return std::nullopt;
                    }
                }
                return next;
            },
            body.time_zone);
    };
    auto r = co_await on_db(job);
    if (!r.found) {
        co_return error_reply(http::status::not_found, "no account '" + orch::text::escaped_clipped(account, 200) + "'");
    }
    if (!r.error.empty()) {
        co_return error_reply(http::status::unprocessable_entity, r.error);
    }
    if (r.changed) {
        spdlog::info("admin: account={} quota overrides set to {}, quota day in {}", orch::text::escaped(r.account_id),
                     dump(to_json(r.quotas)), orch::text::escaped(quota_time_zone(r.time_zone)));
    }
    co_return ok_json({{"account_id", r.account_id},
                       {"changed", r.changed},
                       {"time_zone", r.time_zone.empty() ? json(nullptr) : json(r.time_zone)},
                       {"note", quota_day_move_note(r.previous_time_zone, r.time_zone, std::chrono::system_clock::now())},
                       {"woken", r.woken},
                       {"overrides", to_json(r.quotas)},
                       {"quotas", quotas_view(r.quotas, limiter_settings(cfg).actions)}});
}

asio::awaitable<reply> admin_server::impl::budget(const std::map<std::string, std::string>& params) {
    std::string name;
    if (auto it = params.find("campaign"); it != params.end()) {
        name = it->second;
        if (name.empty()) {
            throw bad_request("query parameter 'campaign' is empty");
        }
    }
    struct rows {
        json campaigns = json::array();
        std::int64_t spent_total = 0;
        std::vector<std::string> problems;
        json polls = nullptr;  // serve's recorded balance reads (migration 0003)
    };
    auto job = [this, &name] {
        rows out;
        pqxx::read_transaction tx(st().connection());
        auto now = std::chrono::system_clock::now();
        for (const auto& c : ledger::campaign_budgets(tx, "")) {
            out.spent_total += c.spent;
            if (!name.empty() && c.campaign != name) {
                continue;
            }
            json caps = cap_use_json(tx, c.campaign_id, c.limits ? c.limits->per_day : std::nullopt,
                                     c.limits ? c.limits->per_account : std::nullopt, now);
            out.campaigns.push_back({{"campaign", c.campaign},
                                     {"today", caps["today"]},
                                     {"accounts", caps["accounts"]},
                                     {"state", c.state},
                                     {"pause_reason", c.pause_reason},
                                     {"budget", c.limits ? json(c.limits->total) : json(nullptr)},
                                     {"per_account", c.limits && c.limits->per_account ? json(*c.limits->per_account) : json(nullptr)},
                                     {"per_day", c.limits && c.limits->per_day ? json(*c.limits->per_day) : json(nullptr)},
                                     {"available", c.available},
                                     {"reserved", c.reserved},
                                     {"spent", c.spent},
                                     {"overrun", c.overrun},
                                     {"shortfall", c.shortfall}});
            if (!name.empty()) {
                // One campaign asked for: its spend per action, sender and day, as `budget show`.
                out.campaigns.back()["spend"] = spend_json(tx, c.campaign_id);
            }
        }
        out.problems = ledger::check(tx);
        auto reads = tx.exec(std::string(schema::query("credits/summary")));
        if (!reads.empty() && !reads[0][0].is_null()) {
            out.polls = {{"reads", reads[0][0].as<std::int64_t>()},
                         {"first_at", reads[0][1].as<std::string>()},
                         {"last_at", reads[0][2].as<std::string>()},
                         {"last_balance", reads[0][3].as<std::int64_t>()},
                         {"drift_total", reads[0][4].as<std::int64_t>()},
                         {"monitoring_total", reads[0][5].as<std::int64_t>()}};
        }
        return out;
    };
    auto r = co_await on_db(job);
    if (!name.empty() && r.campaigns.empty()) {
        co_return error_reply(http::status::not_found, "no campaign named '" + orch::text::escaped_clipped(name, 200) + "'");
    }
    json key = {{"balance", nullptr}};
    if (api != nullptr) {
        outreach::call_options o;
        o.total_timeout_ms = 3'000;
        auto now = co_await api->get_credits(o);
        if (now) {
            key = {{"balance", now->credits}, {"observed_at", iso(std::chrono::system_clock::now())}};
        } else {
            key["error"] = "the API's balance could not be read: " + outreach::describe(now.error());
        }
        // Drift: between serve's scheduled reads, how much more the API balance moved than the
        // ledger posted plus the expected webhook monitoring (audience searches at apply are
        // booked in the ledger; monitoring days are counted apart); migrations 0003 and 0009.
        key["polls"] = r.polls;
        key["drift"] = r.polls.is_null() ? json(nullptr) : r.polls["drift_total"];
    } else {
        key["error"] = "no API client";
    }
    co_return ok_json({{"campaigns", r.campaigns},
                       {"ledger_spent_total", r.spent_total},
                       {"ledger_problems", r.problems},
                       {"key", key}});
}

namespace {

json cap_json(const std::optional<std::int64_t>& cap) { return cap ? json(*cap) : json(nullptr); }

}  // namespace

asio::awaitable<reply> admin_server::impl::campaign_budget_put(const std::string& name, const api::request& req) {
    budget_update u;
    try {
        u = admin_input::parse_budget_body(req.body());
    } catch (const budget_update_error& e) {
        co_return error_reply(http::status::unprocessable_entity, std::string(e.what()) + "; nothing changed");
    }
    struct outcome {
        std::optional<budget_set_outcome> set;
        std::string refused;
    };
    auto job = [this, &name, &u] {
        outcome o;
        try {
            o.set = st().update_campaign_budget(name, u, std::chrono::system_clock::now());
        } catch (const budget_update_error& e) {
            o.refused = e.what();
        }
        return o;
    };
    auto o = co_await on_db(job);
    if (!o.refused.empty()) {
        co_return error_reply(http::status::unprocessable_entity, o.refused + "; nothing changed");
    }
    if (!o.set) {
        co_return error_reply(http::status::not_found, "no campaign named '" + orch::text::escaped_clipped(name, 200) + "'");
    }
    spdlog::info("admin: campaign '{}' budget set: {} credits, per day {}, per account {}{}", orch::text::escaped(name),
                 o.set->total,
                 cap_json(o.set->per_day).dump(), cap_json(o.set->per_account).dump(),
                 o.set->resumed ? " (resumed)" : "");
    co_return ok_json({{"name", name},
                       {"credits", o.set->total},
                       {"per_day", cap_json(o.set->per_day)},
                       {"per_account", cap_json(o.set->per_account)},
                       {"available", o.set->available},
                       {"resumed", o.set->resumed},
                       {"woken", o.set->woken},
                       {"committed", o.set->committed},
                       {"today", o.set->today},
                       {"accounts", o.set->accounts},
                       {"warning", o.set->committed > 0 && o.set->total <= o.set->committed
                                       ? json(budget_below_text("the budget", o.set->committed))
                                       : json(nullptr)},
                       {"note", "the next apply keeps this budget unless its file changes the budget it gives; write it into the file too"}});
}

asio::awaitable<reply> admin_server::impl::events(const std::map<std::string, std::string>& params) {
    std::string type;
    if (auto it = params.find("type"); it != params.end()) {
        type = it->second;
        if (!one_of(event_kinds, type)) {
            throw bad_request("query parameter 'type' must be one of " + joined(event_kinds) + ", got '" + type + "'");
        }
    }
    const std::int64_t limit = int_param(params, "limit", 50, 1, 500);
    auto job = [this, &type, limit] {
        pqxx::nontransaction tx(st().connection());
        json out = json::array();
        for (const auto& r : tx.exec_params(q("admin/events"), type, limit)) {
            out.push_back({{"event_id", r[0].as<std::int64_t>()},
                           {"source_id", r[1].as<std::string>()},
                           {"account_id", r[2].as<std::string>()},
                           {"type", r[3].as<std::string>()},
                           {"profile_url", r[4].as<std::string>()},
                           {"received_at", r[5].as<std::string>()},
                           {"payload", parse_or_text(r[6].as<std::string>())}});
        }
        return out;
    };
    auto list = co_await on_db(job);
    co_return ok_json({{"events", list}});
}

// Events that passed verification but could not be read (engine/intake.hpp), newest first.
asio::awaitable<reply> admin_server::impl::events_quarantine(const std::map<std::string, std::string>& params) {
    const std::int64_t limit = int_param(params, "limit", 50, 1, 500);
    auto job = [this, limit] { return st().quarantined_events(limit); };
    auto list = co_await on_db(job);
    co_return ok_json({{"quarantined", list}});
}

// GET /v1/campaigns/{name}/report: per message variant, messaged, replied and the reply rate, and
// per UTC day the funnel's steps, from the report views (migration 0004) that `orchestrator report
// accounts|timeline` prints. The dashboard's rates per variant and its funnel by day read it: a
// lead's own state cannot tell a reply that came after its last step.
asio::awaitable<reply> admin_server::impl::campaign_report(const std::string& name) {
    auto job = [this, &name]() -> std::optional<json> {
        if (!campaign_id(name)) {
            return std::nullopt;
        }
        pqxx::read_transaction tx(st().connection());
        json variants = json::array();
        for (const auto& r : tx.exec_params(q("reports/rates_by_variant"), name)) {
            variants.push_back({{"variant", r[0].as<std::string>()},
                                {"messaged", r[1].as<std::int64_t>()},
                                {"replied", r[2].as<std::int64_t>()},
                                {"reply_rate", r[3].as<double>()}});
        }
        json days = json::array();
        for (const auto& r : tx.exec_params(q("reports/daily_activity"), name)) {
            days.push_back({{"day", r[0].as<std::string>()},
                            {"invited", r[1].as<std::int64_t>()},
                            {"accepted", r[2].as<std::int64_t>()},
                            {"messaged", r[3].as<std::int64_t>()},
                            {"replied", r[4].as<std::int64_t>()}});
        }
        return json{{"name", name}, {"variants", variants}, {"days", days}};
    };
    auto out = co_await on_db(job);
    if (!out) {
        co_return error_reply(http::status::not_found, "no campaign named '" + orch::text::escaped_clipped(name, 200) + "'");
    }
    co_return ok_json(*out);
}

// ---- lead operations and the do-not-contact list (engine/lead_ops.hpp, engine/dnc.hpp) ----

namespace {


// The string field `key` of `j` ("" when absent); a value of another type is a 422 (returned).
std::optional<std::string> string_field(const json& j, const std::string& key, std::string& text) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        return std::nullopt;
    }
    if (!it->is_string()) {
        return "'" + key + "' must be a string, got " + it->dump();
    }
    text = it->get<std::string>();
    return std::nullopt;
}

}  // namespace

asio::awaitable<reply> admin_server::impl::lead_action(const std::string& name, const std::string* lead,
                                                       const std::string& verb, const api::request& req) {
    lead_ops::request r;
    r.campaign = name;
    json body;
    // Every problem of the body, in one answer (a 422 ending "nothing changed").
    admin_input::problems found;
    if (lead != nullptr) {
        auto v = lead_ops::verb_from_string(verb);
        if (!v) {
            co_return error_reply(http::status::not_found, "no such lead action '" + verb + "' (stop, retry, skip, move)");
        }
        r.what = *v;
        std::int64_t id = 0;
        auto [end, ec] = std::from_chars(lead->data(), lead->data() + lead->size(), id);
        if (ec != std::errc() || end != lead->data() + lead->size() || id < 1) {
            throw bad_request("lead id must be a positive integer, got '" + *lead + "'");
        }
        r.lead_ids.push_back(id);
        body = object_body(req.body(), "{\"to\": STEP} for skip, {\"account\": ACCOUNT} for move, or nothing", &found);
    } else {
        // A bulk operation names its action: an empty body is not an object (as a body that is not
        // one), not an object without its action.
        body = admin_input::required_object_body(req.body(), "{\"action\": \"stop|retry|skip|move\", \"state\": S | \"lead_ids\": [ID, ...], \"to\"?, \"account\"?}", &found);
    }
    const bool bulk = lead == nullptr;
    if (bulk) {
        found.unknown_fields(body, {"action", "state", "lead_ids", "to", "account"});
    } else {
        found.unknown_fields(body, {"to", "account"});
    }
    // The rules of what the fields say together (lead_ops) apply to the fields that were read: a
    // field of the wrong type is said once, not again as missing. The verb's arguments apply once
    // the action is known (a single lead's is its path's).
    bool action_known = !bulk;
    bool selection_read = true;
    if (bulk) {
        std::string action;
        if (auto bad = string_field(body, "action", action)) {
            found.add(*bad);
        } else if (action.empty() && (!body.contains("action") || body["action"].is_null())) {
            found.add("'action' is required: stop, retry, skip or move");
        } else if (auto v = lead_ops::verb_from_string(action)) {
            r.what = *v;
            action_known = true;
        } else {
            found.add("'action' must be one of stop, retry, skip, move, got '" + orch::text::escaped_clipped(action, 100) +
                      "'");
        }
        if (auto bad = string_field(body, "state", r.state)) {
            found.add(*bad);
            selection_read = false;
        } else {
            r.state_given = body.contains("state") && body["state"].is_string();
        }
        if (auto it = body.find("lead_ids"); it != body.end() && !it->is_null()) {
            if (!it->is_array()) {
                found.add("'lead_ids' must be an array of lead ids, got " + std::string(it->type_name()));
                selection_read = false;
            } else {
                r.ids_listed = true;
                // The bad ids, the first few of them with their places: thousands would drown the rest.
                std::string bad;
                std::size_t bad_count = 0;
                for (std::size_t i = 0; i < it->size(); ++i) {
                    const auto& id = (*it)[i];
                    if (id.is_number_integer() && id.get<std::int64_t>() >= 1) {
                        r.lead_ids.push_back(id.get<std::int64_t>());
                    } else if (++bad_count <= 5) {
                        // A whole number beyond 64 bits reads as a float (1e+20): said as too large.
                        const bool too_large = (id.is_number_float() && id.get<double>() >= 9.2e18) ||
                                               (id.is_number_unsigned() && id.get<std::uint64_t>() > 0);
                        bad += (bad.empty() ? "" : ", ") + orch::text::escaped_clipped(id.dump(), 40) + " (at " +
                               std::to_string(i) + (too_large ? ", too large for a lead id" : "") + ")";
                    }
                }
                if (bad_count > 0) {
                    found.add("'lead_ids' must hold positive integers, got " + bad +
                              (bad_count > 5 ? " and " + std::to_string(bad_count - 5) + " more" : std::string()));
                    selection_read = false;
                }
            }
        }
    }
    bool to_read = true, account_read = true;
    if (auto bad = string_field(body, "to", r.to_step)) {
        found.add(*bad);
        to_read = false;
    }
    if (auto bad = string_field(body, "account", r.account)) {
        found.add(*bad);
        account_read = false;
    }
    if (selection_read) {
        if (auto why = lead_ops::check_selection(r); !why.empty()) {
            found.add(why);
        }
    }
    if (action_known) {
        if (auto why = lead_ops::check_arguments(r, !to_read, !account_read); !why.empty()) {
            found.add(why);
        }
    }
    found.check();
    auto job = [this, &r] { return lead_ops::run(st().connection(), r); };
    auto o = co_await on_db(job);
    using kind = lead_ops::outcome::kind;
    switch (o.result) {
    case kind::no_campaign:
    case kind::no_lead:
        co_return error_reply(http::status::not_found, o.message);
    case kind::bad_request:
        co_return error_reply(http::status::unprocessable_entity, o.message);
    case kind::conflict:
        co_return error_reply(http::status::conflict, o.message, lead_ops::to_json(r, o));
    case kind::ok:
        break;
    }
    co_return ok_json(lead_ops::to_json(r, o));
}

asio::awaitable<reply> admin_server::impl::dnc_route(const std::vector<std::string>& seg,
                                                     const std::map<std::string, std::string>& params,
                                                     const api::request& req) {
    const auto method = req.method();
    only_params(params, seg.size() == 2 && (method == http::verb::get || method == http::verb::head)
                            ? std::initializer_list<std::string_view>{"limit", "cursor"}
                            : std::initializer_list<std::string_view>{});
    if (seg.size() == 3) {
        if (method != http::verb::delete_) {
            co_return not_allowed("DELETE");
        }
        std::int64_t id = 0;
        auto [end, ec] = std::from_chars(seg[2].data(), seg[2].data() + seg[2].size(), id);
        if (ec != std::errc() || end != seg[2].data() + seg[2].size() || id < 1) {
            throw bad_request("an entry id must be a positive integer, got '" + seg[2] + "'");
        }
        auto job = [this, id] { return dnc::remove(st().connection(), id); };
        auto removed = co_await on_db(job);
        if (!removed) {
            co_return error_reply(http::status::not_found, "no do-not-contact entry " + seg[2]);
        }
        co_return ok_json({{"removed", dnc::to_json(*removed)},
                           {"note", "leads the entry stopped stay stopped"}});
    }
    if (method == http::verb::get || method == http::verb::head) {
        const std::int64_t limit = int_param(params, "limit", 100, 1, 1000);
        const std::int64_t cursor = int_param(params, "cursor", 0, 0, std::numeric_limits<std::int64_t>::max());
        auto job = [this, cursor, limit] { return dnc::list(st().connection(), cursor, limit + 1); };
        auto rows = co_await on_db(job);
        json entries = json::array();
        json next = nullptr;
        for (const auto& e : rows) {
            if (static_cast<std::int64_t>(entries.size()) == limit) {
                next = std::to_string(entries.back()["id"].get<std::int64_t>());
                break;
            }
            entries.push_back(dnc::to_json(e));
        }
        co_return ok_json({{"entries", entries}, {"next_cursor", next}});
    }
    if (method != http::verb::post) {
        co_return not_allowed("GET, POST");
    }
    const std::string shape =
        "{\"profile_url\": URL | \"company\": NAME, \"reason\"?} or {\"entries\": [...], \"added_by\"?}";
    // Every problem of the body, in one answer: the request's own, then its entries' (each by
    // index in the error's details).
    admin_input::problems found;
    auto body = admin_input::required_object_body(req.body(), shape, &found);
    std::string added_by = "admin api";
    if (auto bad = string_field(body, "added_by", added_by)) {
        found.add(*bad);
    } else if (added_by.size() > 200) {
        found.add("'added_by' is longer than 200 characters");
    }
    json items = json::array();
    if (auto it = body.find("entries"); it != body.end()) {
        // The list form takes entries and added_by only: an entry's field beside the list would
        // otherwise be dropped unsaid (a profile_url the operator believes blocked).
        found.unknown_fields(body, {"entries", "added_by"}, "beside entries, an entry's fields go in its entry");
        if (!it->is_array() || it->empty()) {
            found.add("'entries' must be a non-empty array");
        } else if (it->size() > 10'000) {
            found.add("at most 10000 entries at once");
        } else {
            items = *it;
        }
    } else {
        json one = body;
        one.erase("added_by");
        items.push_back(one);
    }
    std::vector<dnc::input> inputs;
    json problems = json::array();
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto& item = items[i];
        dnc::input in;
        in.line = static_cast<int>(i);
        admin_input::problems its;
        if (!item.is_object()) {
            its.add("must be an object with profile_url or company");
        } else {
            its.unknown_fields(item, {"profile_url", "company", "reason"});
            bool readable = true;
            for (auto [key, slot] : {std::pair{"profile_url", &in.profile_url}, {"company", &in.company}, {"reason", &in.reason}}) {
                if (auto bad = string_field(item, key, *slot)) {
                    its.add(*bad);
                    readable = false;
                }
            }
            // The values' own rules once each is a string (an unknown field beside them does not
            // hide them; a value of the wrong type would make them say something false).
            if (readable) {
                if (auto why = dnc::check(in); !why.empty()) {
                    its.add(why);
                }
            }
        }
        if (!its.empty()) {
            problems.push_back({{"index", i}, {"message", its.joined()}});
            continue;
        }
        inputs.push_back(std::move(in));
    }
    if (!problems.empty()) {
        found.add(std::to_string(problems.size()) + " invalid entr" + (problems.size() == 1 ? "y" : "ies") +
                  " (first: " + problems[0]["message"].get<std::string>() + ")");
    }
    if (!found.empty()) {
        co_return error_reply(http::status::unprocessable_entity, found.joined() + "; nothing changed",
                              problems.empty() ? json(nullptr) : problems);
    }
    auto job = [this, &inputs, &added_by] { return dnc::add(st().connection(), inputs, added_by); };
    auto o = co_await on_db(job);
    json added = json::array();
    for (const auto& e : o.added) {
        added.push_back(dnc::to_json(e));
    }
    json dups = json::array();
    for (const auto& d : o.duplicates) {
        dups.push_back({{"index", d.line}, {"value", d.value},
                        {"existing_id", d.existing_id > 0 ? json(d.existing_id) : json(nullptr)},
                        {"repeats_index", d.existing_id > 0 ? json(nullptr) : json(d.repeats)}});
    }
    co_return ok_json({{"added", added},
                       {"duplicates", dups},
                       {"stopped_leads", o.cancelled},
                       {"in_flight_leads", o.in_flight},
                       {"live_leads_without_company",
                        o.live_without_company >= 0 ? json(o.live_without_company) : json(nullptr)}},
                      o.added.empty() ? http::status::ok : http::status::created);
}

admin_server::admin_server(asio::io_context& io, const settings& s, outreach::client* api,
                           const intake_stats* intake)
    : impl_(std::make_shared<impl>(io, s, api)) {
    auto& m = *impl_;
    m.intake = intake;
    if (m.cfg.admin_token.empty()) {
        throw std::runtime_error("admin endpoint: no admin_token (ORCH_ADMIN_TOKEN)");
    }
    std::promise<std::string> opened;
    asio::post(m.db_pool, [&m, &opened] {
        try {
            auto& first = m.thread_store();
            first = std::make_unique<store>(m.cfg.database_url);
            first->require_current();
            if (!m.cfg.redis_url.empty()) {
                auto ls = limiter_settings(m.cfg);
                if (limits::validate(ls).empty()) {
                    m.limiter = std::make_unique<limits::limiter>(ls);
                    m.limiter->ensure_state();  // a loss later is said as one (engine/intake.cpp)
                }
            }
            opened.set_value("");
        } catch (const std::exception& e) {
            opened.set_value(e.what());
        }
    });
    if (auto problem = opened.get_future().get(); !problem.empty()) {
        throw std::runtime_error("admin endpoint: " + problem);
    }
    api::server_settings ss;
    std::string error_text;
    if (!api::parse_host_port(m.cfg.admin_listen, ss.listen_host, ss.listen_port, error_text)) {
        throw std::runtime_error("admin_listen: " + error_text);
    }
    ss.server_name = "orchestrator-admin";
    // The server's own answers (413, 431, malformed HTTP, a handler that threw) in the Error
    // shape of api/openapi.yaml, like every other error of this endpoint.
    ss.error_body = [](http::status status, std::string_view, std::string_view message) {
        return error_reply(status, std::string(message)).body;
    };
    ss.body_limit_bytes = static_cast<std::size_t>(m.cfg.admin_body_limit_bytes);
    std::weak_ptr<impl> weak = impl_;
    m.server = std::make_unique<api::http_server>(
        io.get_executor(), ss, [weak](api::request& req, boost::beast::tcp_stream&) -> asio::awaitable<api::handler_result> {
            auto self = weak.lock();
            if (!self) {
                co_return api::handler_result::dropped();
            }
            co_return co_await self->handle(req);
        });
}

admin_server::~admin_server() {
    if (impl_ && impl_->server) {
        impl_->server->stop();
    }
}

unsigned short admin_server::port() const { return impl_->server->port(); }
void admin_server::start() { impl_->server->start(); }
void admin_server::stop() { impl_->server->stop(); }

}  // namespace orch::engine
