#include "engine/intake.hpp"

#include "api/http_server.hpp"
#include "engine/admin.hpp"
#include "engine/outreach/client.hpp"
#include "engine/outreach/signature.hpp"
#include "engine/store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <future>
#include <map>
#include <set>

namespace orch::engine {

namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

std::string digest_hex(std::string_view text) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr);
    static const char* hex = "0123456789abcdef";
    std::string out = "sha256:";
    for (unsigned i = 0; i < len; ++i) {
        out.push_back(hex[md[i] >> 4]);
        out.push_back(hex[md[i] & 15]);
    }
    return out;
}

api::response error_response(const api::request& req, http::status status, const std::string& message) {
    return api::json_response(req.version(), req.keep_alive(), status,
                              json{{"error", {{"status", static_cast<int>(status)}, {"message", message}}}}.dump());
}

asio::awaitable<void> sleep_for(std::chrono::milliseconds d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);
}

}  // namespace

struct intake::impl {
    settings cfg;
    intake_stats stats;
    asio::io_context io{1};
    asio::thread_pool db_pool{1};          // the store is blocking: it lives on its own thread
    std::unique_ptr<store> db;             // touched only from db_pool
    std::optional<outreach::client> api;
    std::unique_ptr<api::http_server> server;
    std::string receiver_path;             // path prefix of webhook_public_url
    std::map<std::string, std::string> secrets;  // account -> signing secret (io thread only)
    std::set<std::string> ensured;               // accounts with a webhook from this process (io thread only)
    // A webhook is being created (the API bills its monitoring at once) and its monitoring day
    // not yet recorded, or a credit read is under way: each waits for the other, or a read could
    // see the charge without its day (or the day without its charge) and report it as drift.
    bool ensuring = false;                       // io thread only
    bool reading = false;                        // io thread only
    std::atomic<unsigned short> port{0};
    std::atomic<bool> stopping{false};
    std::unique_ptr<admin_server> admin;   // the admin REST endpoint (engine/admin.hpp); after api

    explicit impl(settings s) : cfg(std::move(s)) {}

    // Runs `f` on the database thread. `f` is a named local of the caller (it outlives the
    // suspension); GCC 12 destroys some temporaries of a co_await expression twice, so no
    // closure with non-trivial captures is ever a temporary there.
    template <typename F>
    asio::awaitable<std::invoke_result_t<F>> on_db(const F& f) {
        co_return co_await asio::co_spawn(
            db_pool, [&f]() -> asio::awaitable<std::invoke_result_t<F>> { co_return f(); }, asio::use_awaitable);
    }

    // Stores one parsed event in the inbox (db thread). Returns how many rows were new.
    int store_event(const outreach::webhook_event& ev, const std::string& source_id, const std::string& account) {
        int added = 0;
        auto put = [&](const std::string& id, const char* kind, const std::string& url) {
            added += db->insert_event(id, account, kind, url, ev.raw).has_value() ? 1 : 0;
        };
        switch (ev.type) {
        case outreach::event_type::accepted_invitation:
            for (std::size_t i = 0; i < ev.connections.size(); ++i) {
                put(source_id + "#" + std::to_string(i), "accepted_invitation", ev.connections[i].profile_url);
            }
            break;
        case outreach::event_type::message:
            put(source_id, "message", ev.sender_profile_url);
            break;
        case outreach::event_type::disconnection:
            put(source_id, "disconnection", "");
            db->set_account_connected(account, false, "DISCONNECTED");
            spdlog::warn("serve: account={} disconnected ({}); its leads wait for a new login", account, ev.reason);
            break;
        case outreach::event_type::unknown:
            put(source_id, "other", "");
            break;
        }
        return added;
    }

    asio::awaitable<void> take(const outreach::webhook_event& ev, const std::string& source_id,
                               const std::string& account) {
        ++stats.received;
        auto job = [this, &ev, &source_id, &account] { return store_event(ev, source_id, account); };
        int added = co_await on_db(job);
        if (added > 0) {
            stats.stored += static_cast<std::uint64_t>(added);
        } else {
            ++stats.duplicates;
        }
    }

    asio::awaitable<api::handler_result> receive(api::request& req);
    asio::awaitable<void> ensure_webhooks();
    asio::awaitable<void> credits_loop();
    asio::awaitable<bool> ensure_one(const account_row& a);
    asio::awaitable<void> hosted_loop(std::string account, std::string webhook_id, std::string last);
    asio::awaitable<std::string> poll_round(const std::string& account, const std::string& webhook_id,
                                            const std::string& after);
};

asio::awaitable<api::handler_result> intake::impl::receive(api::request& req) {
    auto target = std::string(req.target());
    if (target == "/healthz") {
        co_return api::handler_result::reply(api::json_response(req.version(), req.keep_alive(), http::status::ok,
                                                                R"({"status":"ok"})"));
    }
    if (target.rfind(receiver_path + "/", 0) != 0) {
        co_return api::handler_result::reply(error_response(req, http::status::not_found, "no such path"));
    }
    if (req.method() != http::verb::post) {
        co_return api::handler_result::reply(error_response(req, http::status::method_not_allowed, "POST only"));
    }
    std::string account = target.substr(receiver_path.size() + 1);
    auto secret = secrets.find(account);
    if (secret == secrets.end()) {
        ++stats.rejected;
        co_return api::handler_result::reply(error_response(req, http::status::not_found, "unknown account"));
    }
    auto check = outreach::verify_webhook(secret->second, req["X-Service-Timestamp"], req["X-Service-Signature"],
                                          req.body(), std::chrono::system_clock::now());
    if (check != outreach::signature_check::valid) {
        ++stats.rejected;
        spdlog::warn("serve: rejected delivery for account={}: signature {}", account, outreach::to_string(check));
        co_return api::handler_result::reply(
            error_response(req, http::status::unauthorized, std::string("signature ") +
                                                                 std::string(outreach::to_string(check))));
    }
    auto ev = outreach::parse_webhook_event(std::string_view(req.body()));
    if (!ev) {
        ++stats.rejected;
        co_return api::handler_result::reply(
            error_response(req, http::status::bad_request, "not an event: " + ev.error().message));
    }
    if (!ev->account_id.empty() && ev->account_id != account) {
        ++stats.rejected;
        co_return api::handler_result::reply(error_response(
            req, http::status::bad_request, "event for account " + ev->account_id + " posted to " + account));
    }
    std::string source = std::string(req["X-Service-Event-Id"]);
    if (source.empty()) {
        source = digest_hex(req.body());
    }
    try {
        co_await take(*ev, source, account);
    } catch (const std::exception& e) {
        // Not stored: answer 503 so the API delivers it again.
        spdlog::error("serve: could not store event for account={}: {}", account, e.what());
        co_return api::handler_result::reply(
            error_response(req, http::status::service_unavailable, "event not stored, retry"));
    }
    co_return api::handler_result::reply(
        api::json_response(req.version(), req.keep_alive(), http::status::ok, R"({"status":"ok"})"));
}

asio::awaitable<bool> intake::impl::ensure_one(const account_row& a) {
    if (!a.webhook_id.empty()) {
        (void)co_await api->delete_webhook(a.webhook_id);  // a stale one from an earlier run
    }
    outreach::webhook_create_params p;
    p.account_id = a.account_id;
    p.events = {"message_received", "accepted_invitation"};
    bool custom = !cfg.webhook_public_url.empty();
    if (custom) {
        p.url = cfg.webhook_public_url + "/" + a.account_id;
        p.enable_signature = true;
    }
    auto made = co_await api->create_webhook(p);
    if (!made) {
        spdlog::error("serve: account={} webhook not created: {}", a.account_id, outreach::describe(made.error()));
        co_return false;
    }
    auto id = made->webhook.webhook_id;
    auto account = a.account_id;
    auto job = [this, &account, &id] {
        db->set_account_webhook(account, id);
        db->record_monitoring_day({account});  // the API bills today's monitoring of the account
        return 0;
    };
    co_await on_db(job);
    if (custom) {
        secrets[a.account_id] = made->secret;
    } else {
        asio::co_spawn(io, hosted_loop(a.account_id, id, a.last_event), asio::detached);
    }
    spdlog::info("serve: account={} webhook={} ({} mode)", a.account_id, id, custom ? "custom, signed" : "hosted");
    co_return true;
}

// Reads the key's balance every credits_poll_seconds: records it with the ledger's drift, warns
// on drift, and resumes campaigns paused for the key's credits once it has some again. Before
// each read, the accounts this process keeps monitored are recorded for today (UTC), so that a
// new day's monitoring charge is expected rather than reported as drift.
asio::awaitable<void> intake::impl::credits_loop() {
    while (!stopping) {
        while (ensuring && !stopping) {
            co_await sleep_for(std::chrono::milliseconds(20));
        }
        reading = true;
        std::vector<std::string> monitored(ensured.begin(), ensured.end());
        if (!monitored.empty()) {
            auto days = [this, &monitored] {
                db->record_monitoring_day(monitored);
                return 0;
            };
            try {
                co_await on_db(days);
            } catch (const std::exception& e) {
                spdlog::error("serve: recording monitored days failed: {}", e.what());
            }
        }
        auto r = co_await api->get_credits();
        if (!r) {
            spdlog::warn("serve: reading the key's credits failed: {}", outreach::describe(r.error()));
        } else {
            std::int64_t balance = r->credits;
            const std::int64_t price = cfg.monitoring_credits_per_day;
            auto job = [this, balance, price] { return db->record_credit_read(balance, price); };
            try {
                auto read = co_await on_db(job);
                if (read.drift != 0) {
                    spdlog::warn("serve: credit drift {} since the last read: the API balance moved by that much "
                                 "more than the ledger posted and the expected webhook monitoring ({}) (balance now {})",
                                 read.drift, read.monitoring, balance);
                }
                if (read.resumed > 0) {
                    spdlog::info("serve: the key has {} credits again: {} campaigns resumed", balance, read.resumed);
                }
            } catch (const std::exception& e) {
                spdlog::error("serve: recording the key's credits failed: {}", e.what());
            }
        }
        reading = false;
        co_await sleep_for(std::chrono::seconds(cfg.credits_poll_seconds));
    }
}

asio::awaitable<void> intake::impl::ensure_webhooks() {
    while (!stopping) {
        try {
            auto list = [this] { return db->accounts(); };
            auto accounts = co_await on_db(list);
            for (const auto& a : accounts) {
                if (ensured.count(a.account_id) == 0 && a.platform == "network") {
                    while (reading && !stopping) {
                        co_await sleep_for(std::chrono::milliseconds(20));
                    }
                    ensuring = true;
                    bool made = co_await ensure_one(a);
                    ensuring = false;
                    if (made) {
                        ensured.insert(a.account_id);
                    }
                }
            }
        } catch (const std::exception& e) {
            ensuring = false;
            spdlog::error("serve: listing accounts failed: {}", e.what());
        }
        co_await sleep_for(std::chrono::seconds(2));  // accounts connected later get theirs too
    }
}

asio::awaitable<std::string> intake::impl::poll_round(const std::string& account, const std::string& webhook_id,
                                                      const std::string& after) {
    std::string last = after;
    outreach::poll_events_params p;
    p.after = last;
    p.limit = 200;
    auto page = co_await api->poll_webhook_events(webhook_id, p);
    if (!page) {
        spdlog::warn("serve: account={} polling failed: {}", account, outreach::describe(page.error()));
        co_return last;
    }
    for (const auto& item : page->items) {
        co_await take(item.event, item.event_id, account);
        last = item.event_id;
    }
    if (!page->items.empty()) {
        auto job = [this, &account, &last] {
            db->set_account_last_event(account, last);
            return 0;
        };
        co_await on_db(job);
    }
    co_return last;
}

asio::awaitable<void> intake::impl::hosted_loop(std::string account, std::string webhook_id, std::string last) {
    while (!stopping) {
        try {
            // Catch up by polling (events while serve was down), then follow the stream.
            last = co_await poll_round(account, webhook_id, last);
            auto stream = api->open_event_stream(webhook_id, last);
            while (!stopping) {
                auto next = co_await stream.next();
                if (!next) {
                    spdlog::warn("serve: account={} stream ended: {}; polling", account,
                                 outreach::describe(next.error()));
                    break;
                }
                if (!next->event) {
                    continue;
                }
                auto source = next->id.empty() ? digest_hex(next->data) : next->id;
                co_await take(*next->event, source, account);
                if (!next->id.empty()) {
                    last = next->id;
                    auto job = [this, &account, &last] {
                        db->set_account_last_event(account, last);
                        return 0;
                    };
                    co_await on_db(job);
                }
            }
        } catch (const std::exception& e) {
            spdlog::error("serve: account={} event intake failed: {}", account, e.what());
        }
        co_await sleep_for(std::chrono::seconds(1));
    }
}

intake::intake(settings s) : impl_(std::make_unique<impl>(std::move(s))) {}
intake::~intake() = default;

void intake::request_stop() {
    impl_->stopping = true;
    asio::post(impl_->io, [m = impl_.get()] {
        if (m->server) {
            m->server->stop();
        }
        if (m->admin) {
            m->admin->stop();
        }
        m->io.stop();
    });
}

unsigned short intake::receiver_port() const { return impl_->port; }
const intake_stats& intake::stats() const { return impl_->stats; }

int intake::run() {
    auto& m = *impl_;
    std::promise<std::string> opened;
    asio::post(m.db_pool, [&m, &opened] {
        try {
            m.db = std::make_unique<store>(m.cfg.database_url);
            m.db->require_current();
            opened.set_value("");
        } catch (const std::exception& e) {
            opened.set_value(e.what());
        }
    });
    if (auto problem = opened.get_future().get(); !problem.empty()) {
        spdlog::critical("serve: {}", problem);
        m.db_pool.join();
        return 2;
    }
    outreach::client_settings cs;
    cs.base_url = m.cfg.api_url;
    cs.api_key = m.cfg.api_key;
    cs.pool_size = static_cast<std::size_t>(m.cfg.api_pool_size);
    auto made = outreach::client::make(m.io.get_executor(), cs);
    if (!made) {
        spdlog::critical("serve: bad API settings: {}", outreach::describe(made.error()));
        m.db_pool.join();
        return 2;
    }
    m.api.emplace(std::move(*made));

    api::server_settings ss;
    std::string error;
    if (!api::parse_host_port(m.cfg.webhook_listen, ss.listen_host, ss.listen_port, error)) {
        spdlog::critical("serve: webhook_listen: {}", error);
        m.db_pool.join();
        return 2;
    }
    ss.server_name = "orchestrator-webhooks";
    m.receiver_path = "/webhooks";
    if (!m.cfg.webhook_public_url.empty()) {
        auto u = boost::urls::parse_absolute_uri(m.cfg.webhook_public_url);
        m.receiver_path = u ? std::string(u->path()) : std::string();
        while (!m.receiver_path.empty() && m.receiver_path.back() == '/') {
            m.receiver_path.pop_back();
        }
    }
    try {
        m.server = std::make_unique<api::http_server>(
            m.io.get_executor(), ss,
            [&m](api::request& req, boost::beast::tcp_stream&) { return m.receive(req); });
    } catch (const std::exception& e) {
        spdlog::critical("serve: cannot listen on {}: {}", m.cfg.webhook_listen, e.what());
        m.db_pool.join();
        return 2;
    }
    m.port = m.server->port();
    m.server->start();
    spdlog::info("serve: webhook receiver on {}:{} path {}/<account_id>; API {}", ss.listen_host, m.port.load(),
                 m.receiver_path, m.cfg.api_url);
    // The admin endpoint: only with a token (nothing is served unauthenticated but /healthz and
    // /readyz, and those only beside the authenticated API).
    if (m.cfg.admin_listen == "off") {
        spdlog::info("serve: admin endpoint off (admin_listen: off)");
    } else if (m.cfg.admin_token.empty()) {
        spdlog::warn("serve: admin endpoint off: set ORCH_ADMIN_TOKEN to serve it on {}", m.cfg.admin_listen);
    } else {
        try {
            m.admin = std::make_unique<admin_server>(m.io, m.cfg, &*m.api);
        } catch (const std::exception& e) {
            spdlog::critical("serve: cannot start the admin endpoint on {}: {}", m.cfg.admin_listen, e.what());
            m.server->stop();
            m.db_pool.join();
            return 2;
        }
        m.admin->start();
        spdlog::info("serve: admin endpoint on {} (port {})", m.cfg.admin_listen, m.admin->port());
    }
    asio::co_spawn(m.io, m.ensure_webhooks(), asio::detached);
    asio::co_spawn(m.io, m.credits_loop(), asio::detached);
    m.io.run();
    m.db_pool.join();
    return 0;
}

}  // namespace orch::engine
