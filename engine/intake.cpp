#include "engine/intake.hpp"

#include <algorithm>
#include <limits>
#include "engine/executor.hpp"

#include "api/http_server.hpp"
#include "engine/admin.hpp"
#include "engine/inbox.hpp"
#include "engine/inbox_sender.hpp"
#include "engine/ledger.hpp"
#include "engine/limits/limits.hpp"
#include "engine/limits_gate.hpp"
#include "engine/outreach/client.hpp"
#include "engine/outreach/signature.hpp"
#include "engine/reply_pattern.hpp"
#include "engine/secret_box.hpp"
#include "engine/store.hpp"
#include "engine/sweep_schedule.hpp"
#include "api/text.hpp"
#include "engine/time_format.hpp"
#include "schema/schema.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/pct_string_view.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <boost/url/url.hpp>
#include <openssl/evp.h>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include <future>
#include <map>
#include <set>

namespace orch::engine {

namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

// Called in a catch handler: the SQLSTATE of a database error that no retry can get past, because
// the data itself is refused (class 22, a data exception: a NUL in a text, a bad byte sequence;
// class 54, a program limit: JSON nested deeper than the server's stack), or "".
std::string unstorable_sqlstate() {
    std::string state;
    try {
        throw;
    } catch (const store_error& e) {
        state = e.sqlstate;
    } catch (const pqxx::sql_error& e) {
        state = e.sqlstate();
    } catch (...) {
    }
    return state.rfind("22", 0) == 0 || state.rfind("54", 0) == 0 ? state : std::string();
}


std::string q(std::string_view name) { return std::string(schema::query(name)); }

constexpr std::int64_t leader_lock_key = intake_leader_lock_key;
constexpr auto leader_check = std::chrono::seconds(2);
// How often serve looks for campaigns paused for the key's credits between balance reads (credits_loop).
constexpr auto credits_paused_poll = std::chrono::seconds(5);
// The event filter of every webhook: what the engine acts on (api-facts 1.1). Servers that only
// take the documented filter names refuse `disconnection` in the list; they get `all`.
const std::vector<std::string> wanted_events = {"message_received", "accepted_invitation", "disconnection"};
constexpr int poll_pages_max = 50;
constexpr std::int64_t poll_limit = 200;
// A sweep reads list_sent (1 credit per 10 invitations) instead of one check_invitation per lead
// (1 credit each) when the account has more pending leads than this.
constexpr std::size_t list_sent_above = 10;
constexpr std::int64_t list_page = 100;
// Two times of one message, as two channels give them (the inbox's, a delivery's event.timestamp,
// one with milliseconds and one without), differ by less than this; two messages of one person
// closer than this are taken for one by the catch-up sweep.
constexpr auto same_message_within = std::chrono::seconds(2);
// A stored message whose payload carries no time is compared by when serve stored it (this
// machine's clock, not the API's): a later message counts as later only this long after it.
constexpr auto stored_without_time_margin = std::chrono::seconds(60);

bool within(std::chrono::system_clock::time_point a, std::chrono::system_clock::time_point b,
            std::chrono::system_clock::duration d) {
    return a > b ? a - b <= d : b - a <= d;
}

// The newest stored messages of a lead on an account, from the rows of intake/sweep_replied or
// intake/lead_messages (payload as text, stored at in epoch ms): the newest time the events give
// (the API's clock), the newest storing time of those that give none (serve's clock), and their
// texts.
struct newest_stored {
    std::optional<std::chrono::system_clock::time_point> api;
    std::optional<std::chrono::system_clock::time_point> untimed_stored;
    std::set<std::string> texts;
    void add(const std::string& payload, std::int64_t stored_ms) {
        std::optional<std::chrono::system_clock::time_point> at;
        auto parsed = json::parse(payload, nullptr, false);
        if (!parsed.is_discarded()) {
            if (auto ev = outreach::parse_webhook_event(parsed)) {
                at = ev->happened_at();
                if (!ev->message_text.empty()) {
                    texts.insert(ev->message_text);
                }
            }
        }
        auto& slot = at ? api : untimed_stored;
        const auto t = at ? *at : std::chrono::system_clock::time_point(std::chrono::milliseconds(stored_ms));
        if (!slot || t > *slot) {
            slot = t;
        }
    }
    bool empty() const { return !api && !untimed_stored; }
    // Whether the inbox's last message (its time and text) is none of these: later than each by
    // its clock's margin, and of another text. The text guards against a clock read wrong (a
    // delivery's time without a zone, taken as UTC, that was another zone's): the same words are
    // the same message, whatever the times say.
    bool lack(std::chrono::system_clock::time_point at, const std::string& text) const {
        return (api || untimed_stored) && (!api || at > *api + same_message_within) &&
               (!untimed_stored || at > *untimed_stored + stored_without_time_margin) &&
               (text.empty() || texts.count(text) == 0);
    }
};

// A disconnection's reason for the log: " (reason)", or nothing when the event gave none.
std::string said_reason(const std::string& reason) {
    return reason.empty() ? std::string() : " (" + orch::text::escaped(reason) + ")";
}

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

// The dedupe key of an event that carries no id of its own in its body, on a channel that gives
// none either: its content, so the same event seen on the stream and then by polling is stored
// once whatever bytes each channel used.
std::string content_key(const outreach::webhook_event& ev, const std::string& account) {
    std::string key = account + "|" + ev.type_name + "|" + ev.sender_profile_url + "|" + ev.message_text + "|" +
                      ev.conversation_id + "|" + ev.message_id + "|" + ev.reason;
    for (const auto& c : ev.connections) {
        key += "|" + c.profile_url + "|" + c.public_identifier;
    }
    auto when = ev.happened_at();
    if (when) {
        key += "|" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        when->time_since_epoch()).count());
    }
    return digest_hex(key);
}

api::response json_reply(const api::request& req, http::status status, const json& body) {
    return api::json_response(req.version(), req.keep_alive(), status, body.dump());
}

api::response error_response(const api::request& req, http::status status, const std::string& message) {
    return json_reply(req, status, json{{"error", {{"status", static_cast<int>(status)}, {"message", message}}}});
}

asio::awaitable<void> sleep_for(std::chrono::milliseconds d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);
}


// The person an event names, as the inbox resolves it: the profile URL, else "/in/<public id>".
std::string person_key(const std::string& url, const std::string& public_id) {
    if (!url.empty()) {
        return url;
    }
    return public_id.empty() ? std::string() : "/in/" + public_id;
}

// Why a readable event is of no use to the engine, or "" when it is: a message that names
// neither its sender's profile nor a conversation cannot be matched to any lead.
std::string unusable(const outreach::webhook_event& ev) {
    if (ev.type == outreach::event_type::message && ev.sender_profile_url.empty() && ev.conversation_id.empty()) {
        return "message event names neither its sender's profile nor a conversation";
    }
    return {};
}

}  // namespace

struct intake::impl {
    settings cfg;
    intake_stats stats;
    std::set<std::string> unknown_types_seen;  // event types logged at info once (io thread)
    asio::io_context io{1};
    asio::thread_pool db_pool{1};          // the store is blocking: it lives on its own thread
    asio::thread_pool lock_pool{1};        // the leader lock's connection (its checks never queue behind queries)
    asio::thread_pool gate_pool{1};        // the Redis buckets (blocking hiredis)
    std::unique_ptr<store> db;             // touched only from db_pool
    std::unique_ptr<pqxx::connection> lock_conn;  // lock_pool only
    bool lock_held = false;                // lock_pool only
    std::unique_ptr<limits::limiter> limiter;     // gate_pool only
    std::optional<outreach::client> api;
    std::unique_ptr<api::http_server> server;
    std::string receiver_path;             // path prefix of webhook_public_url
    std::optional<secret_box> box;
    // Receivers: account -> signing secret, as the leader stored it, and as stored (sealed) (io
    // thread only).
    std::map<std::string, std::string> secrets;
    std::map<std::string, std::string> sealed_secrets;
    // Receivers (io thread): deliveries in a row whose signature did not match the account's
    // secret, since when, and when the secret was last handed back as lost.
    struct bad_streak {
        int count = 0;
        std::chrono::steady_clock::time_point first{};
        std::chrono::steady_clock::time_point handed_back{};
    };
    std::map<std::string, bad_streak> bad_signatures;
    std::chrono::steady_clock::time_point secrets_read{};
    // Leader only (io thread): accounts whose webhook is confirmed, and their hosted loops.
    std::set<std::string> ensured;
    // Any replica (io thread): accounts with a verified delivery answered 503 (not stored, the
    // database failing). The API may give up on it before the database is back, so each is marked
    // as having a gap, which the next sweep covers, as soon as the database answers.
    std::set<std::string> unstored;
    // Leader (io thread): accounts whose replied leads' later messages a gap's sweep could not
    // look for (no campaign of theirs had credits left): each sweep looks, gap or not, until one
    // has.
    std::set<std::string> later_owed;
    // Each full sweep starts one account further on: under a tight budget or cap the first
    // accounts' reads take what is left, and the same accounts must not always be first.
    std::size_t sweep_start = 0;
    std::set<std::int64_t> sweep_told_capped;  // campaigns logged as having no credits, this full sweep
    // Leader (io thread): accounts whose last sweep a failed read ended, and when their gap is
    // swept again. Each try is billed (a read that timed out was most likely answered, and
    // charged), so a gap is not tried again at every turn of the loop while the API fails or is
    // slower than api_timeout_ms (a trial: a read every ~5 s per account for as long as that
    // lasted): 30 s after the first failure, twice as long after each next one, up to the full
    // sweep's interval. A sweep that completes ends it.
    struct sweep_retry {
        std::chrono::steady_clock::time_point at{};
        int failures = 0;
    };
    std::map<std::string, sweep_retry> sweep_retries;
    void sweep_failed(const std::string& account) {
        auto& r = sweep_retries[account];
        ++r.failures;
        const std::chrono::seconds ceiling{std::max<std::int64_t>(30, cfg.sweep_seconds)};
        std::chrono::seconds delay{30};
        for (int i = 1; i < r.failures && delay < ceiling; ++i) {
            delay *= 2;
        }
        delay = std::min(delay, ceiling);
        r.at = std::chrono::steady_clock::now() + delay;
        spdlog::info("serve: sweep of account={}: its gap is swept again in {} s ({})", orch::text::escaped(account),
                     delay.count(),
                     r.failures == 1 ? std::string("its first failed sweep")
                                     : std::to_string(r.failures) + " failed sweeps in a row");
    }
    std::map<std::string, std::shared_ptr<std::atomic<bool>>> hosted;
    std::uint64_t term = 0;                // increments each time this replica takes the lead
    // A webhook is being created (the API bills its monitoring at once) and its monitoring day
    // not yet recorded, or a credit read is under way: each waits for the other, or a read could
    // see the charge without its day (or the day without its charge) and report it as drift.
    bool ensuring = false;                       // io thread only
    bool reading = false;                        // io thread only
    std::atomic<unsigned short> port{0};
    std::atomic<bool> stopping{false};
    std::unique_ptr<admin_server> admin;   // the admin REST endpoint (engine/admin.hpp); after api
    std::unique_ptr<inbox_sender> replies; // sends the inbox's manual replies (engine/inbox_sender.hpp)
    // A lost PostgreSQL, as the leader check (caller 0, every 2 s) and the inbox sender (1) meet
    // it: told once, summarised, and its end (engine/outage_log.hpp).
    std::shared_ptr<outage_log> database_outage = std::make_shared<outage_log>("serve", "database");
    std::optional<reply_pattern> not_interested;  // inbox_not_interested_pattern, when set

    explicit impl(settings s) : cfg(std::move(s)) {
        if (!cfg.secret_key.empty()) {
            box.emplace(cfg.secret_key);
        }
    }

    bool custom_mode() const { return !cfg.webhook_public_url.empty(); }

    // The URL the API posts an account's deliveries to: webhook_public_url's path, without the
    // slashes it may end with, then /<account_id>; its query, if any, kept after the path (a proxy's
    // token). Appending to the whole URL registered ".../x//acc" for a trailing slash and
    // "...?q=1/acc" for a query: every delivery was refused.
    std::string receiver_url(const std::string& account) const {
        // The account is one path segment: percent-encoded as the client encodes it in the API's
        // own paths, so that the receiver finds it whatever characters the API's ids hold.
        const std::string segment = boost::urls::encode(account, boost::urls::unreserved_chars);
        auto parsed = boost::urls::parse_absolute_uri(cfg.webhook_public_url);  // checked by the settings
        if (!parsed) {
            return cfg.webhook_public_url + "/" + segment;
        }
        boost::urls::url u(*parsed);
        u.set_encoded_path(receiver_path + "/" + segment);
        return std::string(u.buffer());
    }

    // The account a delivery's path is for: receiver_path, then one segment (receiver_url encodes
    // it). Slashes after the receiver's path are taken as one, so that a webhook registered with a
    // doubled slash (a public URL given with a trailing one) still delivers. nullopt: a path not
    // the receiver's (another prefix, more segments, an empty or badly encoded one), which is how
    // any wrong path reads with a root public URL.
    std::optional<std::string> account_in(const std::string& path) const {
        if (path.rfind(receiver_path + "/", 0) != 0) {
            return std::nullopt;
        }
        std::string segment = path.substr(receiver_path.size() + 1);
        segment.erase(0, segment.find_first_not_of('/'));
        if (segment.empty() || segment.find('/') != std::string::npos) {
            return std::nullopt;
        }
        auto pct = boost::urls::make_pct_string_view(segment);
        if (!pct) {
            return std::nullopt;
        }
        return pct->decode();
    }

    // A delivery refused (404 or 401) is logged, at most once a minute for each kind of refusal,
    // with how many more were refused since the last line: a misdirected webhook is heard of
    // without a line per request (io thread only).
    struct refusals {
        std::chrono::steady_clock::time_point told{};
        std::uint64_t since = 0;
    };
    std::map<std::string, refusals> refusals_told;
    void tell_refusal(const std::string& kind, const std::string& line) {
        auto& r = refusals_told[kind];
        const auto now = std::chrono::steady_clock::now();
        if (r.told != std::chrono::steady_clock::time_point{} && now - r.told < std::chrono::minutes(1)) {
            ++r.since;
            return;
        }
        if (r.since > 0) {
            spdlog::warn("{} ({} more like it since the last such line)", line, r.since);
        } else {
            spdlog::warn("{}", line);
        }
        r = {now, 0};
    }
    bool leading() const { return stats.leader.load(); }

    // Runs `f` on `pool`. `f` is a named local of the caller (it outlives the suspension); GCC 12
    // destroys some temporaries of a co_await expression twice, so no closure with non-trivial
    // captures is ever a temporary there.
    template <typename F>
    asio::awaitable<std::invoke_result_t<F>> on(asio::thread_pool& pool, const F& f) {
        co_return co_await asio::co_spawn(
            pool, [&f]() -> asio::awaitable<std::invoke_result_t<F>> { co_return f(); }, asio::use_awaitable);
    }
    template <typename F>
    asio::awaitable<std::invoke_result_t<F>> on_db(const F& f) {
        co_return co_await on(db_pool, f);
    }

    // ---- the shared gate: serve's calls take the key's request bucket and honour cooldowns ----

    limits::check gate_check(const std::string& account, limits::action what) const {
        limits::check c;
        c.account_id = account.empty() ? std::string("~serve") : account;
        c.what = what;
        c.day = limits::day_in_zone(std::chrono::system_clock::now(), "UTC").value_or(limits::local_day{});
        return c;
    }

    // Waits until the buckets allow a call of `what` on `account` (bounded: after 10 minutes
    // of refusals it goes ahead refused, logged, rather than stall intake forever).
    asio::awaitable<limits::verdict> pass_gate(const limits::check& c) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
        while (!stopping) {
            auto take = [this, &c] { return limiter->take(c); };
            limits::verdict v = co_await on(gate_pool, take);
            if (v.allowed || v.why == limits::reason::bad_input) {
                co_return v;
            }
            if (std::chrono::steady_clock::now() > deadline) {
                spdlog::warn("serve: the gate refused a call on account={} for 10 minutes ({}); going ahead",
                             orch::text::escaped(c.account_id), limits::to_string(v.why));
                co_return v;
            }
            auto wait = std::clamp(v.retry_after, std::chrono::milliseconds(50), std::chrono::milliseconds(30'000));
            co_await sleep_for(wait);
        }
        co_return limits::verdict{};
    }

    // After a gated call: a 429 closes the key's bucket for everyone (Retry-After when given).
    template <typename R>
    asio::awaitable<void> after_gate(const limits::check& c, const limits::verdict& v, const R& r) {
        if (!r && r.error().code == "RATE_LIMITED") {
            std::optional<std::chrono::milliseconds> ra;
            if (r.error().retry_after_s) {
                ra = std::chrono::seconds(*r.error().retry_after_s);
            }
            // As the workers' gate reads it: an answer naming the account is the account's
            // limit for the action, any other the key's request rate.
            auto scope = c.account_id != "~serve" && outreach::limit_names_account(r.error().message, c.account_id)
                             ? limits::scope::account_action
                             : limits::scope::key;
            auto job = [this, &c, scope, ra] { return limiter->rate_limited(c, scope, ra); };
            auto until = co_await on(gate_pool, job);
            spdlog::warn("serve: RATE_LIMITED on {}: {} cooldown {} ms written for every process",
                         c.account_id == "~serve" ? std::string("a request of the key's (no account)")
                                                  : "a request of account=" + orch::text::escaped(c.account_id),
                         scope == limits::scope::key ? "the API key's" : "the account's " + std::string(limits::to_string(c.what)),
                         until ? until->count() : -1);
        } else if (r && (v.key_streak || v.account_streak)) {
            auto job = [this, &c, &v] {
                limiter->succeeded(c, v);
                return 0;
            };
            co_await on(gate_pool, job);
        }
    }

    // Runs `call` (a callable returning an awaitable result) through the gate.
    template <typename Call>
    auto gated(const std::string& account, limits::action what, Call call)
        -> asio::awaitable<typename std::invoke_result_t<Call>::value_type> {
        auto c = gate_check(account, what);
        auto v = co_await pass_gate(c);
        auto r = co_await call();
        co_await after_gate(c, v, r);
        co_return r;
    }

    // ---- the inbox ----

    // Stores one parsed event in the inbox (db thread). Returns how many rows were new.
    int store_event(const outreach::webhook_event& ev, const std::string& source_id, const std::string& account) {
        int added = 0;
        // The event's content key too, when it carries its time (migration 0035): the same event
        // under two ids (an id-less stream's content key, then the poll's id) is stored once.
        const std::string key = ev.happened_at() ? content_key(ev, account) : std::string();
        auto put = [&](const std::string& id, event_kind kind, const std::string& person, const std::string& k) {
            added += db->insert_event(id, account, kind, person, ev.raw, k).has_value() ? 1 : 0;
        };
        switch (ev.type) {
        case outreach::event_type::accepted_invitation:
            for (std::size_t i = 0; i < ev.connections.size(); ++i) {
                const auto& c = ev.connections[i];
                const std::string n = "#" + std::to_string(i);
                put(source_id + n, event_kind::accepted_invitation, person_key(c.profile_url, c.public_identifier),
                    key.empty() ? key : key + n);
            }
            break;
        case outreach::event_type::message: {
            // Compared with the messages stored before it under the person's lock, in the insert's
            // transaction: a delivery and the sweep's copy of one message stored at the same
            // moment cannot both miss the other.
            auto already = [this, &ev, &source_id, &account](pqxx::work& tx) {
                return stored_already(tx, ev, source_id, account);
            };
            if (auto id = db->insert_event(source_id, account, event_kind::message, ev.sender_profile_url, ev.raw, key,
                                           already)) {
                ++added;
                auto_mark(*id, ev.message_text);
            }
            break;
        }
        case outreach::event_type::disconnection:
            put(source_id, event_kind::disconnection, "", key);
            // An event delivered late (a retry, a resumed stream) may be older than a re-login.
            if (db->account_disconnected(account, "DISCONNECTED", ev.happened_at())) {
                spdlog::warn("serve: account={} disconnected{}; its leads wait for a new login",
                             orch::text::escaped(account), said_reason(ev.reason));
            } else {
                spdlog::info("serve: account={}: a disconnection{} older than its last login is not applied",
                             orch::text::escaped(account), said_reason(ev.reason));
            }
            break;
        case outreach::event_type::unknown:
            put(source_id, event_kind::other, "", "");  // its fields are not read: no content key
            break;
        }
        return added;
    }

    // Whether this message is in the inbox already (db thread, in the insert's transaction, under
    // the person's lock). A delivery (webhook, stream, poll): when the catch-up sweep stored it
    // under its own id: the same person on the account, the inbox's time of it within
    // same_message_within of the event's, and the same text (or the sweep had none); a delivery
    // that comes late (the API's retry once serve is back, a stream or a poll catching up) is then
    // a duplicate, not a second copy. An event without a time, or naming nobody, is never taken
    // for one. The sweep's own copy: a first reply when any message of the person is stored, a
    // later message when one of the person's newest stored is it (by time or by text): a delivery
    // may have stored it since the sweep looked.
    bool stored_already(pqxx::work& tx, const outreach::webhook_event& ev, const std::string& source_id,
                        const std::string& account) {
        const auto at = ev.happened_at();
        if (ev.sender_profile_url.empty()) {
            return false;
        }
        const auto& url = ev.sender_profile_url;
        const std::string canonical = url.rfind("/in/", 0) == 0 ? url : canonical_profile_url(url);
        // The sweep's own copy: its id and the mark its payload carries (an id of the API's own that
        // happened to start so is a delivery, compared as one).
        const auto inner = ev.raw.find("event");
        const bool swept = source_id.rfind("sweep:message:", 0) == 0 && inner != ev.raw.end() && inner->is_object() &&
                           inner->contains("swept_by");
        if (swept) {
            newest_stored newest;
            for (const auto& r : tx.exec_params(q("events/person_messages"), account, canonical)) {
                newest.add(r[0].as<std::string>(), r[1].as<std::int64_t>());
            }
            const bool first_reply = source_id == "sweep:message:" + account + ":" + canonical;
            const bool known = first_reply ? !newest.empty()
                                           : !newest.empty() && (!at || !newest.lack(*at, ev.message_text));
            if (known) {
                spdlog::info("serve: account={} the catch-up sweep's copy {} of a message of {} was stored meanwhile "
                             "by a delivery: not stored twice",
                             orch::text::escaped(account), orch::text::escaped(source_id), orch::text::escaped(url));
            }
            return known;
        }
        if (!at) {
            return false;
        }
        for (const auto& r : tx.exec_params(q("events/swept_copies"), account, canonical)) {
            const auto swept_at = parse_iso8601(r[0].as<std::string>());
            const auto text = r[1].as<std::string>();
            if (swept_at && within(*swept_at, *at, same_message_within) && (text.empty() || text == ev.message_text)) {
                spdlog::info("serve: account={} message {} of {} is the one the catch-up sweep stored: not stored twice",
                             orch::text::escaped(account), orch::text::escaped(source_id), orch::text::escaped(url));
                return true;
            }
        }
        return false;
    }

    // A new reply matching inbox_not_interested_pattern is marked not interested (db thread). A
    // failure is logged: the event is stored either way.
    void auto_mark(std::int64_t event_id, const std::string& text) {
        if (!not_interested) {
            return;
        }
        std::string why;
        const auto matched = not_interested->search(text, why);
        if (!matched) {
            spdlog::warn("serve: reply {} left unmarked: inbox_not_interested_pattern could not be matched against "
                         "its {} bytes ({}); mark it by hand if it says not interested",
                         event_id, text.size(), orch::text::escaped(why));
            return;
        }
        if (!*matched) {
            return;
        }
        try {
            auto o = inbox::mark_not_interested(db->connection(), event_id, "serve: inbox_not_interested_pattern");
            if (o.found && o.message.empty()) {
                spdlog::info("serve: reply {} matches inbox_not_interested_pattern: do-not-contact entry {} ({} live leads "
                             "stopped)", event_id, o.entry_id, o.stopped);
            } else {
                spdlog::warn("serve: reply {} matches inbox_not_interested_pattern but was not marked: {}", event_id,
                             orch::text::escaped(o.message));
            }
        } catch (const std::exception& e) {
            spdlog::error("serve: reply {}: marking it not interested failed: {}", event_id, orch::text::escaped(e.what()));
        }
    }

    // A billed read about to leave (db thread): its row in flight (migration 0047), in this
    // session, at `most` credits; its id, for its charge (intake/read_end in the same transaction).
    std::int64_t read_begin(std::int64_t campaign, const std::string& account, const std::string& action,
                            std::int64_t most) {
        pqxx::work tx(db->connection());
        const auto id = tx.exec_params1(q("intake/read_begin"), campaign, account, action, std::max<std::int64_t>(0, most))[0]
                            .as<std::int64_t>();
        tx.commit();
        return id;
    }

    // The reads whose serve's session is gone while they were out (killed, or its connection
    // cut), booked at their most, as a lost answer's read (db thread; the leader, before each
    // sweep). The number booked.
    std::size_t book_orphaned_reads() {
        pqxx::work tx(db->connection());
        std::size_t n = 0;
        std::int64_t credits = 0;
        for (const auto& r : tx.exec(q("intake/reads_orphaned"))) {
            const auto campaign = r[0].as<std::int64_t>();
            const auto account = r[1].as<std::string>();
            const auto action = r[2].as<std::string>();
            const auto most = r[3].as<std::int64_t>();
            if (most > 0) {
                auto s = ledger::charge(tx, {campaign, account, action, most}, std::chrono::system_clock::now());
                if (s.shortfall > 0) {
                    spdlog::warn("serve: campaign {} paused: a read left in flight ({}) went {} credits past its budget",
                                 campaign, orch::text::escaped(action), s.shortfall);
                }
            }
            ++n;
            credits += most;
        }
        tx.commit();
        if (n > 0) {
            spdlog::warn("serve: {} billed read(s) were left in flight by a serve that stopped or lost its database "
                         "session: booked at their most, {} credit(s)",
                         n, credits);
        }
        return n;
    }

    // The campaign that pays for a read on the account before it is known whom the read serves
    // (db thread): the first of the account's campaigns, those with live leads there first, that
    // has credits left (ledger::read_allowance). 0 when the account has campaigns and none has credits; -1
    // when it has none, so that no read can find a lead of it.
    std::int64_t account_payer(const std::string& account) {
        pqxx::read_transaction tx(db->connection());
        std::int64_t payer = -1;
        for (const auto& r : tx.exec_params(q("intake/account_payers"), account)) {
            payer = 0;
            const auto campaign = r[0].as<std::int64_t>();
            if (ledger::read_allowance(tx, campaign, account, std::chrono::system_clock::now()) > 0) {
                payer = campaign;
                break;
            }
        }
        tx.commit();
        return payer;
    }

    // A message event that names its conversation but not its sender (a reading the spec leaves
    // open: it shows no message event's fields for certain): one read of the conversation
    // (get_conversation, through the gate, 1 credit) finds who wrote it, the message of the same
    // text that is not ours, else the newest that is not ours, so that the reply reaches its lead.
    // Our own message echoed back names nobody (a reply from us is no reply). Returns the sender's
    // profile URL, or "" (logged) when the read fails or finds nobody: the event is then stored in
    // the inbox with no lead.
    struct conversation_sender {
        std::string profile_url;  // "" when not found
        std::int64_t credits = 0; // what the read cost; when its answer was lost, the most it could have
    };
    asio::awaitable<conversation_sender> sender_of_conversation(const outreach::webhook_event& ev,
                                                                const std::string& account) {
        outreach::get_conversation_params p;
        p.conversation_id = ev.conversation_id;
        p.count = 10;
        auto read = [this, &account, &p] { return api->get_conversation(account, p); };
        auto r = co_await gated(account, limits::action::check_invitation, read);
        if (!r) {
            // A lost answer: the read most likely reached the API and was billed.
            const bool lost = r.error().may_have_been_charged;
            conversation_sender failed;
            if (lost) {
                failed.credits =
                    outreach::estimate_v2("messages", "get_conversation", json{{"count", p.count.value_or(10)}}).credits;
            }
            spdlog::warn("serve: account={} message event names only its conversation {}, whose read failed ({}{}): "
                         "stored with no lead",
                         orch::text::escaped(account), orch::text::escaped(ev.conversation_id),
                         orch::text::escaped(outreach::describe(r.error())),
                         lost ? "; its answer was lost: booked at its most" : "");
            co_return failed;
        }
        const std::int64_t credits = r->meta.credits_consumed.value_or(0);
        const outreach::conversation_message* found = nullptr;
        for (const auto& m : r->messages) {
            if (!ev.message_text.empty() && m.text == ev.message_text) {
                found = &m;
                break;
            }
        }
        if (found != nullptr && found->from_me.value_or(false)) {
            spdlog::info("serve: account={} message event of conversation {} is our own message: no reply",
                         orch::text::escaped(account), orch::text::escaped(ev.conversation_id));
            co_return conversation_sender{"", credits};
        }
        if (found == nullptr) {
            for (const auto& m : r->messages) {
                if (!m.from_me.value_or(false) && !m.sender_profile_url.empty()) {
                    found = &m;
                    break;
                }
            }
        }
        if (found == nullptr || found->sender_profile_url.empty()) {
            spdlog::warn("serve: account={} message event names only its conversation {}, and its read names no "
                         "sender: stored with no lead",
                         orch::text::escaped(account), orch::text::escaped(ev.conversation_id));
            co_return conversation_sender{"", credits};
        }
        co_return conversation_sender{found->sender_profile_url, credits};
    }

    // The same message stored twice: unread, with no lead (a message event naming only its
    // conversation while no campaign of the account had credits for the read that finds its
    // sender), and as the catch-up sweep's copy under its lead. Each is stored with the
    // conversation the API named, and after either store the unread ones whose words are the
    // sweep's copy's are marked its copies: the inbox lists the one that reached the lead (db
    // thread). Words that differ are other messages (ours echoed back, an earlier one of theirs),
    // and stay.
    void mark_copies(const std::string& source_id, const std::string& account, const std::string& conversation) {
        if (conversation.empty()) {
            return;
        }
        pqxx::work tx(db->connection());
        tx.exec_params(q("events/set_conversation"), source_id, conversation);
        struct stored {
            std::int64_t id;
            std::int64_t lead;
            bool swept;
            std::string text;
        };
        std::vector<stored> rows;
        for (const auto& r : tx.exec_params(q("events/conversation_messages"), account, conversation)) {
            const auto ev = outreach::parse_webhook_event(json::parse(r[3].as<std::string>(), nullptr, false));
            rows.push_back({r[0].as<std::int64_t>(), r[1].as<std::int64_t>(), r[2].as<bool>(),
                            ev ? ev->message_text : std::string()});
        }
        for (const auto& unread : rows) {
            if (unread.lead != 0 || unread.text.empty()) {
                continue;
            }
            for (const auto& copy : rows) {
                if (copy.swept && copy.lead != 0 && copy.text == unread.text) {
                    tx.exec_params(q("events/set_copy"), unread.id, copy.id);
                    spdlog::info("serve: account={} message event {} (conversation {}, stored with no lead, unread) "
                                 "is the catch-up sweep's {} under its lead: the inbox lists that one",
                                 orch::text::escaped(account), unread.id, orch::text::escaped(conversation), copy.id);
                    break;
                }
            }
        }
        tx.commit();
    }

    // A campaign as serve's log names it: 'name' (id N), the id alone when it is gone (db thread,
    // with no transaction of its own open on the connection).
    std::string campaign_named(std::int64_t id) {
        pqxx::nontransaction tx(db->connection());
        auto r = tx.exec_params(q("campaigns/name"), id);
        return r.empty() ? std::to_string(id)
                         : "'" + orch::text::escaped_name(r[0][0].as<std::string>()) + "' (id " + std::to_string(id) + ")";
    }

    // Returns how many events it stored (0: a duplicate).
    asio::awaitable<int> take(const outreach::webhook_event& ev, const std::string& source_id,
                              const std::string& account) {
        ++stats.received;
        if (ev.type == outreach::event_type::unknown) {
            ++stats.unknown_types;
            // The first of each type at info (what the operator needs to know), the rest at debug.
            const bool first = unknown_types_seen.size() < 64 && unknown_types_seen.insert(ev.type_name).second;
            spdlog::log(first ? spdlog::level::info : spdlog::level::debug,
                        "serve: account={} event {} of a type the engine does not use ('{}'): stored as other{}",
                        orch::text::escaped(account), orch::text::escaped(source_id),
                        orch::text::escaped(ev.type_name), first ? " (its later events of this type at debug)" : "");
        }
        if (ev.type == outreach::event_type::message && ev.sender_profile_url.empty() && !ev.conversation_id.empty()) {
            // A redelivery is not read again (the read costs a credit).
            auto known = [this, &source_id] {
                pqxx::nontransaction tx(db->connection());
                return tx.exec_params1(q("events/known"), source_id)[0].as<bool>();
            };
            if (co_await on_db(known)) {
                ++stats.duplicates;
                co_return 0;
            }
            outreach::webhook_event named = ev;
            // The read is billed before it is known whom it serves: it is made only while one of
            // the account's campaigns has credits left to pay for it, as the sweep's reads are,
            // so that messages naming only their conversation (anyone may write to the account)
            // cannot spend past every budget. Without one the event is stored with no lead; a
            // follow-up's reply check still reads the conversation itself.
            auto pick = [this, &account] { return account_payer(account); };
            const std::int64_t payer = co_await on_db(pick);
            conversation_sender sender;
            std::int64_t read = 0;  // its row in flight (migration 0047)
            if (payer > 0) {
                auto begin = [this, &account, payer] {
                    return read_begin(payer, account, "get_conversation",
                                      outreach::estimate_v2("messages", "get_conversation", json{{"count", 10}}).credits);
                };
                read = co_await on_db(begin);
                sender = co_await sender_of_conversation(ev, account);
            } else {
                ++stats.unread_conversations;
                // An account with no campaign is not ours to read for (info); one whose campaigns
                // are out of credits loses replies' attribution (warning).
                spdlog::log(payer == 0 ? spdlog::level::warn : spdlog::level::info,
                            "serve: account={} message event names only its conversation {}, and {}: not read "
                            "(get_conversation), stored with no lead",
                            orch::text::escaped(account), orch::text::escaped(ev.conversation_id),
                            payer == 0 ? "none of the account's campaigns has credits left to pay for its read"
                                       : "the account has no campaign whose lead could have written it");
            }
            named.sender_profile_url = sender.profile_url;
            auto job = [this, &named, &source_id, &account] {
                const int stored = store_event(named, source_id, account);
                if (stored > 0 && named.sender_profile_url.empty()) {
                    mark_copies(source_id, account, named.conversation_id);
                }
                return stored;
            };
            const int added = co_await on_db(job);
            // The read is charged to the campaign of the person's enrollment on the account, as
            // the sweep's reads are, while it has credits left; a read that names no lead (our
            // own message echoed back, nobody, a person who is no lead there), whose lead's
            // campaign has nothing left, or whose answer was lost, to the campaign that paid.
            auto book = [this, &sender, &account, payer, read] {
                if (sender.credits <= 0 && read <= 0) {
                    return std::int64_t{0};
                }
                pqxx::work tx(db->connection());
                // Its row goes with its charge; gone already, another serve booked it.
                if ((read > 0 && tx.exec_params(q("intake/read_end"), read).empty()) || sender.credits <= 0) {
                    tx.commit();
                    return std::int64_t{0};
                }
                std::int64_t campaign = payer;
                if (!sender.profile_url.empty()) {
                    auto c = tx.exec_params(q("intake/lead_campaign"), canonical_profile_url(sender.profile_url),
                                            account);
                    const auto lead_campaign = c.empty() ? 0 : c[0][0].as<std::int64_t>();
                    if (lead_campaign > 0 &&
                        ledger::read_allowance(tx, lead_campaign, account, std::chrono::system_clock::now()) > 0) {
                        campaign = lead_campaign;
                    }
                }
                auto s = ledger::charge(tx, {campaign, account, "get_conversation", sender.credits},
                                        std::chrono::system_clock::now());
                tx.commit();
                if (s.shortfall > 0) {
                    spdlog::warn("serve: campaign {} paused: the read of a conversation to find a message's sender "
                                 "went {} credits past its budget", campaign_named(campaign), s.shortfall);
                }
                return campaign;
            };
            try {
                co_await on_db(book);
            } catch (const std::exception& e) {
                spdlog::error("serve: account={} charging the read of conversation {} failed: {}",
                              orch::text::escaped(account), orch::text::escaped(ev.conversation_id),
                              orch::text::escaped(e.what()));
            }
            (added > 0 ? stats.stored : stats.duplicates) += static_cast<std::uint64_t>(added > 0 ? added : 1);
            co_return added;
        }
        auto job = [this, &ev, &source_id, &account] { return store_event(ev, source_id, account); };
        int added = co_await on_db(job);
        if (added > 0) {
            stats.stored += static_cast<std::uint64_t>(added);
        } else {
            ++stats.duplicates;
        }
        co_return added;
    }

    // Keeps a verified event that could not be read (db thread via on_db). Logged once: only when
    // it is new.
    asio::awaitable<void> quarantine(const std::string& source_id, const std::string& account, const char* channel,
                                     const std::string& reason, const std::string& body) {
        ++stats.received;
        // What it is kept under is text: a reason quoting the body, an id from a header or an
        // account from the path need not be UTF-8, and a refused insert would answer 503 to a
        // delivery that can never be stored (redelivered for good).
        auto job = [this, &source_id, &account, channel, &reason, &body] {
            pqxx::work tx(db->connection());
            auto r = tx.exec_params(q("intake/quarantine"), orch::text::escaped(source_id), orch::text::escaped(account),
                                    channel, orch::text::escaped(reason), pqxx::binarystring(body));
            tx.commit();
            return !r.empty();
        };
        bool fresh = co_await on_db(job);
        if (fresh) {
            ++stats.quarantined;
            spdlog::error("serve: account={} {} event {} quarantined: {} (see `orchestrator events quarantine`)",
                          orch::text::escaped(account), channel, orch::text::escaped(source_id), orch::text::escaped(reason));
        }
    }

    // ---- receivers ----

    // The account's secret as the leader stored it; re-read from Postgres at most once a second
    // (a webhook another replica just created, or a secret it rotated).
    asio::awaitable<void> refresh_secrets(bool force) {
        // At most once a second, or every 200 ms when forced (a delivery for an account or
        // with a signature the cache does not know): forged deliveries cannot turn into a query each.
        auto now = std::chrono::steady_clock::now();
        if (now - secrets_read < (force ? std::chrono::milliseconds(200) : std::chrono::milliseconds(1000))) {
            co_return;
        }
        secrets_read = now;
        if (!box) {
            co_return;
        }
        auto job = [this] {
            std::pair<std::map<std::string, std::string>, std::map<std::string, std::string>> out;
            pqxx::nontransaction tx(db->connection());
            for (const auto& row : tx.exec(q("intake/secrets"))) {
                pqxx::binarystring sealed(row[1]);
                if (auto plain = box->open(sealed.str())) {
                    out.first[row[0].as<std::string>()] = std::move(*plain);
                    out.second[row[0].as<std::string>()] = sealed.str();
                }
            }
            return out;
        };
        try {
            std::tie(secrets, sealed_secrets) = co_await on_db(job);
        } catch (const std::exception& e) {
            spdlog::error("serve: reading webhook secrets failed: {}", e.what());
        }
    }

    asio::awaitable<api::handler_result> receive(api::request& req);

    // A delivery for `account` whose signature did not match the stored secret, though fresh. The
    // secret may have been rotated outside the orchestrator (the API's rotate-secret), and then
    // every delivery fails until it is replaced; only the catch-up sweep would bring events. After
    // bad_streak_min such deliveries in a row over bad_streak_span (one forged request, or a
    // rotation by another replica of ours, does not), the stored secret is marked lost (an empty
    // value, compared with the one this receiver holds, so a secret the leader just stored is
    // kept), at most once per bad_streak_rest: the leader's ensure_webhooks rotates it (ensure_one,
    // as for a secret it cannot open), and the API's retries of the refused deliveries then verify.
    static constexpr int bad_streak_min = 3;
    static constexpr std::chrono::seconds bad_streak_span{5};
    static constexpr std::chrono::minutes bad_streak_rest{10};
    asio::awaitable<void> note_bad_signature(const std::string& account) {
        const auto now = std::chrono::steady_clock::now();
        auto& s = bad_signatures[account];
        if (s.count++ == 0) {
            s.first = now;
        }
        const auto held = sealed_secrets.find(account);
        if (s.count < bad_streak_min || now - s.first < bad_streak_span || held == sealed_secrets.end() ||
            (s.handed_back != std::chrono::steady_clock::time_point{} && now - s.handed_back < bad_streak_rest)) {
            co_return;
        }
        s.handed_back = now;
        const std::string sealed = held->second;
        auto mark = [this, &account, &sealed] {
            pqxx::work tx(db->connection());
            auto r = tx.exec_params(q("intake/secret_lost"), account, pqxx::binarystring(sealed));
            tx.commit();
            return r.affected_rows();
        };
        try {
            if (co_await on_db(mark) > 0) {
                ++stats.secrets_lost;
                spdlog::warn("serve: account={}: {} deliveries in a row over {} s failed the signature check with the "
                             "stored secret: it is taken for lost (rotated outside the orchestrator?), and the "
                             "leading replica rotates it",
                             orch::text::escaped(account), s.count,
                             std::chrono::duration_cast<std::chrono::seconds>(now - s.first).count());
                s.count = 0;
            }
        } catch (const std::exception& e) {
            spdlog::error("serve: account={}: marking its webhook secret lost failed: {}", orch::text::escaped(account),
                          e.what());
        }
    }

    // ---- leader ----
    asio::awaitable<void> leader_loop();
    bool hold_lock();  // lock_pool
    asio::awaitable<void> ensure_webhooks();
    asio::awaitable<bool> ensure_one(const account_row& a);
    asio::awaitable<bool> confirm_active(const std::string& account, const std::string& id, bool active_now);
    asio::awaitable<void> credits_loop();
    asio::awaitable<void> hosted_loop(std::string account, std::string webhook_id,
                                      std::shared_ptr<std::atomic<bool>> stop);
    // One round of polling the webhook's events: false when a page failed, and `gone` set when
    // the API says the webhook does not exist (404).
    asio::awaitable<bool> poll_round(const std::string& account, const std::string& webhook_id, bool& gone);
    asio::awaitable<void> sweep_loop();
    // Every webhook_check_seconds and with each full sweep: one list of the key's webhooks. A
    // webhook of ours listed inactive (stopped on the API's side: no event is delivered) or gone
    // is set up again, and its account's intake is marked as having a gap, which the sweep covers
    // once it is back.
    asio::awaitable<void> verify_webhooks();
    // Whether the sweep made every read it meant to (none failed), and how many events it stored
    // that no delivery had.
    struct sweep_result {
        bool completed = false;
        std::size_t found = 0;
    };
    asio::awaitable<sweep_result> sweep_account(const std::string& account, const std::string& gap);
    asio::awaitable<void> health_loop();
    void stop_hosted();
};

// ---- receiving custom-mode deliveries (any replica) ----

asio::awaitable<api::handler_result> intake::impl::receive(api::request& req) {
    auto target = std::string(req.target());
    if (target == "/healthz") {
        co_return api::handler_result::reply(json_reply(req, http::status::ok, {{"status", "ok"}}));
    }
    // The path alone: a public URL's query comes back with each delivery (receiver_url).
    const auto found = account_in(target.substr(0, target.find('?')));
    if (!found) {
        ++stats.refused_path;
        tell_refusal("path", "serve: webhook receiver: a request to " + orch::text::escaped_clipped(target, 200) +
                                 " answered 404: deliveries are taken at " + receiver_path + "/<account_id>");
        co_return api::handler_result::reply(error_response(req, http::status::not_found, "no such path"));
    }
    if (req.method() != http::verb::post) {
        co_return api::handler_result::reply(error_response(req, http::status::method_not_allowed, "POST only"));
    }
    const std::string& account = *found;
    co_await refresh_secrets(false);
    auto verify = [&] {
        auto secret = secrets.find(account);
        if (secret == secrets.end()) {
            return std::optional<outreach::signature_check>();
        }
        return std::optional(outreach::verify_webhook(secret->second, req["X-Service-Timestamp"],
                                                      req["X-Service-Signature"], req.body(),
                                                      std::chrono::system_clock::now()));
    };
    auto check = verify();
    if (!check || *check == outreach::signature_check::mismatch) {
        // A webhook created, or a secret rotated, by the leader since the last read.
        co_await refresh_secrets(true);
        check = verify();
    }
    if (!check) {
        ++stats.refused_account;
        tell_refusal("account", "serve: webhook receiver: a delivery for account '" +
                                    orch::text::escaped_clipped(account, 200) +
                                    "' answered 404: no webhook of this receiver is registered for it");
        // No signing secret of ours for this account: no webhook of this receiver delivers for it
        // (in hosted mode none does: events come by the stream and polling).
        co_return api::handler_result::reply(error_response(
            req, http::status::not_found,
            "no webhook of this receiver is registered for account '" + orch::text::escaped_clipped(account, 200) + "'" +
                (custom_mode() ? std::string()
                               : " (hosted mode: webhook_public_url is not set, and events come by the stream and "
                                 "polling)")));
    }
    if (*check == outreach::signature_check::mismatch) {
        co_await note_bad_signature(account);
    } else if (*check == outreach::signature_check::valid) {
        bad_signatures.erase(account);
    }
    if (*check != outreach::signature_check::valid) {
        ++stats.refused_signature;
        tell_refusal("signature", "serve: webhook receiver: a delivery for account=" + orch::text::escaped(account) +
                                      " answered 401: " + std::string(outreach::to_string(*check)));
        co_return api::handler_result::reply(
            error_response(req, http::status::unauthorized, std::string(outreach::to_string(*check))));
    }
    // Verified. From here on, nothing is refused: what cannot be read is quarantined.
    std::string header_id = std::string(req["X-Service-Event-Id"]);
    std::string refused_by_database;  // the SQLSTATE of a store that can never succeed
    std::string refused_reason;
    auto ev = outreach::parse_webhook_event(std::string_view(req.body()));
    std::string problem;
    if (!ev) {
        problem = ev.error().message;
    } else if (!ev->account_id.empty() && ev->account_id != account) {
        problem = "event for account " + ev->account_id + " posted to " + account;
    } else {
        problem = unusable(*ev);
    }
    try {
        if (!problem.empty()) {
            // The body's id when it is JSON with one, so a redelivery is quarantined once.
            json body = json::parse(req.body(), nullptr, false);
            std::string id = body.is_object() && body.contains("event_id") && body["event_id"].is_string()
                                 ? body["event_id"].get<std::string>()
                                 : (header_id.empty() ? digest_hex(req.body()) : header_id);
            co_await quarantine(id, account, "webhook", problem, req.body());
            co_return api::handler_result::reply(json_reply(req, http::status::ok, {{"status", "quarantined"}}));
        }
        std::string source = !ev->event_id.empty() ? ev->event_id
                             : !header_id.empty()  ? header_id
                                                   : digest_hex(req.body());
        co_await take(*ev, source, account);
    } catch (const std::exception& e) {
        refused_by_database = unstorable_sqlstate();
        if (refused_by_database.empty()) {
            // Not stored: answer 503 so the API delivers it again, and mark a gap (below).
            spdlog::error("serve: could not store event for account={}: {}", orch::text::escaped(account), e.what());
            unstored.insert(account);
            co_return api::handler_result::reply(
                error_response(req, http::status::service_unavailable, "event not stored, retry"));
        }
        refused_reason = e.what();
    }
    if (!refused_by_database.empty()) {
        // PostgreSQL refused what the event holds (a \u0000 in a text, JSON nested past its stack):
        // a delivery again would be refused again, so it is quarantined, raw, as an unreadable one
        // (answered 503, it was never stored nor quarantined, and lost once the API gave up).
        std::string id = ev && !ev->event_id.empty() ? ev->event_id
                         : !header_id.empty()       ? header_id
                                                    : digest_hex(req.body());
        try {
            co_await quarantine(id, account, "webhook",
                                "the database cannot store it (SQLSTATE " + refused_by_database + "): " +
                                    refused_reason,
                                req.body());
        } catch (const std::exception& e) {
            spdlog::error("serve: could not quarantine event for account={}: {}", orch::text::escaped(account),
                          e.what());
            co_return api::handler_result::reply(
                error_response(req, http::status::service_unavailable, "event not stored, retry"));
        }
        co_return api::handler_result::reply(json_reply(req, http::status::ok, {{"status", "quarantined"}}));
    }
    co_return api::handler_result::reply(json_reply(req, http::status::ok, {{"status", "ok"}}));
}

// ---- leadership ----

bool intake::impl::hold_lock() {
    try {
        if (!lock_conn || !lock_conn->is_open()) {
            lock_conn.reset();
            lock_held = false;
            lock_conn = std::make_unique<pqxx::connection>(cfg.database_url);
        }
        pqxx::nontransaction tx(*lock_conn);
        if (!lock_held) {
            lock_held = tx.exec_params1("SELECT pg_try_advisory_lock($1)", leader_lock_key)[0].as<bool>();
        } else {
            tx.exec("SELECT 1");  // the session (and with it the lock) is still alive
        }
        database_outage->succeeded(0);
        return lock_held;
    } catch (const std::exception& e) {
        if (const error err = error_of_current_exception(); err.category == error_category::unavailable) {
            database_outage->failed(0, "the leader check: " + err.message);
        } else {
            spdlog::error("serve: the leader check failed: {}", e.what());
        }
        lock_conn.reset();
        lock_held = false;
        return false;
    }
}

void intake::impl::stop_hosted() {
    for (auto& [account, flag] : hosted) {
        *flag = true;
    }
    hosted.clear();
    ensured.clear();
}

asio::awaitable<void> intake::impl::leader_loop() {
    while (!stopping) {
        auto job = [this] { return hold_lock(); };
        bool held = co_await on(lock_pool, job);
        if (held && !leading()) {
            ++term;
            stats.leader = true;
            spdlog::info("serve: this replica leads (webhooks, streams, credits, sweeps)");
            // Intake may have missed events while no replica led: every account gets a sweep.
            auto gap = [this] {
                pqxx::work tx(db->connection());
                tx.exec_params(q("intake/gap"), "");
                tx.commit();
                return 0;
            };
            try {
                co_await on_db(gap);
            } catch (const std::exception& e) {
                spdlog::error("serve: marking the intake gap failed: {}", e.what());
            }
        } else if (!held && leading()) {
            stats.leader = false;
            stop_hosted();
            spdlog::warn("serve: this replica lost the lead; it stops managing webhooks and sweeping");
        }
        co_await sleep_for(leader_check);
    }
}

// ---- webhook lifecycle (leader) ----

// Reads the webhook back, starts it when it is not active, and confirms with the list.
asio::awaitable<bool> intake::impl::confirm_active(const std::string& account, const std::string& id,
                                                   bool active_now) {
    if (!active_now) {
        auto start = [this, &id] { return api->start_webhook(id); };
        auto started = co_await gated(account, limits::action::check_invitation, start);
        if (!started) {
            spdlog::error("serve: account={} webhook={} not started: {}", orch::text::escaped(account), orch::text::escaped(id),
                          outreach::describe(started.error()));
            co_return false;
        }
    }
    auto list = [this] { return api->list_webhooks(); };
    auto listed = co_await gated(account, limits::action::check_invitation, list);
    if (!listed) {
        spdlog::warn("serve: account={} webhook={}: the list could not confirm it: {}", orch::text::escaped(account),
                     orch::text::escaped(id), outreach::describe(listed.error()));
        co_return active_now;  // the create/start reply is all we know
    }
    for (const auto& w : listed->webhooks) {
        if (w.webhook_id == id) {
            if (w.is_active.value_or(true)) {
                co_return true;
            }
            spdlog::error("serve: account={} webhook={} is listed inactive after /start", orch::text::escaped(account),
                          orch::text::escaped(id));
            co_return false;
        }
    }
    // A list that pages or lags: the create, read or start reply is all there is to go on.
    spdlog::warn("serve: account={} webhook={} is not in the list; trusting the reply that it is active",
                 orch::text::escaped(account), orch::text::escaped(id));
    co_return true;
}

asio::awaitable<bool> intake::impl::ensure_one(const account_row& a) {
    const bool custom = custom_mode();
    const std::string mode = custom ? "custom" : "hosted";
    const std::string url = custom ? receiver_url(a.account_id) : std::string();
    const std::string account = a.account_id;
    struct stored_webhook {
        std::string id, mode, url;
        std::optional<std::string> sealed;
    };
    auto read = [this, &account] {
        stored_webhook w;
        pqxx::nontransaction tx(db->connection());
        auto r = tx.exec_params(q("intake/webhook_get"), account);
        if (!r.empty()) {
            w.id = r[0][0].as<std::string>();
            w.mode = r[0][1].as<std::string>();
            w.url = r[0][2].as<std::string>();
            if (!r[0][3].is_null()) {
                w.sealed = std::string(pqxx::binarystring(r[0][3]).str());
            }
        }
        return w;
    };
    stored_webhook old = co_await on_db(read);
    std::string id;
    std::string secret;
    bool active = false;

    // Reuse what an earlier run (or another replica) set up, when it is still there as wanted.
    if (!old.id.empty() && old.mode == mode && old.url == url) {
        auto get = [this, &old] { return api->get_webhook(old.id); };
        auto got = co_await gated(account, limits::action::check_invitation, get);
        if (got) {
            id = old.id;
            active = got->webhook.is_active.value_or(false);
            if (custom) {
                std::optional<std::string> plain = old.sealed && box ? box->open(*old.sealed) : std::nullopt;
                if (plain && got->webhook.signature_enabled.value_or(true)) {
                    secret = *plain;
                } else {
                    // The stored secret is lost (another key, altered, never stored) or signing
                    // is off: a new secret, shown once, replaces it.
                    auto rotate = [this, &id] { return api->rotate_webhook_secret(id); };
                    auto rotated = co_await gated(account, limits::action::check_invitation, rotate);
                    if (!rotated) {
                        spdlog::error("serve: account={} webhook={}: its secret could not be recovered by rotation: {}",
                                      orch::text::escaped(account), orch::text::escaped(id), outreach::describe(rotated.error()));
                        co_return false;
                    }
                    secret = rotated->secret;
                    spdlog::warn("serve: account={} webhook={}: stored secret unusable; rotated", orch::text::escaped(account),
                                 orch::text::escaped(id));
                }
            }
        } else if (got.error().http_status == 404) {
            spdlog::warn("serve: account={} webhook={} is gone; creating another", orch::text::escaped(account),
                         orch::text::escaped(old.id));
        } else {
            spdlog::error("serve: account={} webhook={} could not be read: {}", orch::text::escaped(account), orch::text::escaped(old.id),
                          outreach::describe(got.error()));
            co_return false;
        }
    } else if (!old.id.empty()) {
        // Another mode or URL than this configuration wants: replace it.
        auto del = [this, &old] { return api->delete_webhook(old.id); };
        (void)co_await gated(account, limits::action::check_invitation, del);
    }

    bool created = false;
    if (id.empty()) {
        outreach::webhook_create_params p;
        p.account_id = account;
        p.events = wanted_events;
        if (custom) {
            p.url = url;
            p.enable_signature = true;
        }
        auto create = [this, &p] { return api->create_webhook(p); };
        auto made = co_await gated(account, limits::action::check_invitation, create);
        if (!made && made.error().http_status == 400) {
            // A server that takes only the documented filter names (api-facts 1.1).
            spdlog::info("serve: account={}: the events filter was refused ({}); subscribing to all",
                         orch::text::escaped(account), orch::text::escaped(made.error().message));
            p.events = {"all"};
            made = co_await gated(account, limits::action::check_invitation, create);
        }
        if (!made) {
            spdlog::error("serve: account={} webhook not created: {}", orch::text::escaped(account),
                          outreach::describe(made.error()));
            co_return false;
        }
        id = made->webhook.webhook_id;
        active = made->webhook.is_active.value_or(false);
        secret = made->secret;
        created = true;
        if (custom && secret.empty()) {
            spdlog::error("serve: account={} webhook={}: the create reply carried no signing secret",
                          orch::text::escaped(account), orch::text::escaped(id));
        }
    }
    std::optional<std::string> sealed;
    if (custom && !secret.empty()) {
        sealed = box->seal(secret);
    }
    auto save = [this, &account, &id, &mode, &url, &sealed, created] {
        pqxx::work tx(db->connection());
        if (sealed) {
            tx.exec_params(q("intake/webhook_set"), account, id, mode, url, pqxx::binarystring(*sealed));
        } else {
            tx.exec_params(q("intake/webhook_set"), account, id, mode, url, nullptr);
        }
        tx.commit();
        if (created) {
            db->record_monitoring_day({account});  // the API bills today's monitoring of the account
        }
        return 0;
    };
    co_await on_db(save);
    if (!co_await confirm_active(account, id, active)) {
        co_return false;
    }
    co_await refresh_secrets(true);
    if (!custom) {
        auto stop = std::make_shared<std::atomic<bool>>(false);
        hosted[account] = stop;
        asio::co_spawn(io, hosted_loop(account, id, stop), asio::detached);
    }
    spdlog::info("serve: account={} webhook={} ({} mode, {})", orch::text::escaped(account), orch::text::escaped(id),
                 custom ? "custom, signed" : "hosted", created ? "created" : "reused");
    co_return true;
}

asio::awaitable<void> intake::impl::ensure_webhooks() {
    // An account whose webhook could not be set up (one not connected: the API answers
    // ACCOUNT_INACTIVE) is tried again after a delay that doubles from 2 s to 5 minutes, or at the
    // next round once its stored row changes (a login, a sync, a status): each try is a request in
    // the key's rate. Before, every such account was tried every 2 s for as long as serve ran.
    struct setup_retry {
        std::chrono::steady_clock::time_point next;
        std::chrono::seconds delay;
        std::string row;  // the account's updated_at when it failed
    };
    constexpr std::chrono::seconds first_delay{2};
    constexpr std::chrono::seconds max_delay{300};
    std::map<std::string, setup_retry> retries;
    while (!stopping) {
        if (leading()) {
            try {
                auto list = [this] { return db->accounts(); };
                auto accounts = co_await on_db(list);
                if (custom_mode()) {
                    // Secrets a receiver took for lost (note_bad_signature): set up again, which
                    // rotates them.
                    auto lost = [this] {
                        std::vector<std::string> out;
                        pqxx::nontransaction tx(db->connection());
                        for (const auto& row : tx.exec(q("intake/secrets_lost"))) {
                            out.push_back(row[0].as<std::string>());
                        }
                        return out;
                    };
                    for (const auto& account : co_await on_db(lost)) {
                        ensured.erase(account);
                    }
                }
                for (const auto& a : accounts) {
                    if (!leading() || stopping) {
                        break;
                    }
                    if (ensured.count(a.account_id) == 0 && a.platform == "network") {
                        const auto now = std::chrono::steady_clock::now();
                        if (auto r = retries.find(a.account_id);
                            r != retries.end() && r->second.row == a.updated_at && now < r->second.next) {
                            continue;
                        }
                        while (reading && !stopping) {
                            co_await sleep_for(std::chrono::milliseconds(20));
                        }
                        ensuring = true;
                        bool made = false;
                        try {
                            made = co_await ensure_one(a);
                        } catch (const std::exception& e) {
                            spdlog::error("serve: account={} webhook setup failed: {}", orch::text::escaped(a.account_id),
                                          e.what());
                        }
                        ensuring = false;
                        if (made) {
                            ensured.insert(a.account_id);
                            retries.erase(a.account_id);
                        } else {
                            auto [r, first] = retries.try_emplace(a.account_id);
                            r->second.delay = first || r->second.row != a.updated_at
                                                  ? first_delay
                                                  : std::min(2 * r->second.delay, max_delay);
                            r->second.row = a.updated_at;
                            r->second.next = std::chrono::steady_clock::now() + r->second.delay;
                            spdlog::info("serve: account={}: its webhook setup is tried again in {} s, or once the "
                                         "account is connected again or synced",
                                         orch::text::escaped(a.account_id), r->second.delay.count());
                        }
                    }
                }
            } catch (const std::exception& e) {
                ensuring = false;
                spdlog::error("serve: listing accounts failed: {}", e.what());
            }
        }
        co_await sleep_for(std::chrono::seconds(2));  // accounts connected later get theirs too
    }
}

// Reads the key's balance every credits_poll_seconds: records it with the ledger's drift, warns
// on drift, and resumes campaigns paused for the key's credits once it has some again. Before
// each read, the accounts this process keeps monitored are recorded for today (UTC), so that a
// new day's monitoring charge is expected rather than reported as drift.
asio::awaitable<void> intake::impl::credits_loop() {
    while (!stopping) {
        if (!leading()) {
            co_await sleep_for(leader_check);
            continue;
        }
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
        auto credits = [this] { return api->get_credits(); };
        auto r = co_await gated("", limits::action::check_invitation, credits);
        if (!r) {
            spdlog::warn("serve: reading the key's credits failed: {}", outreach::describe(r.error()));
        } else {
            std::int64_t balance = r->credits;
            const std::int64_t price = cfg.monitoring_credits_per_day;
            auto job = [this, balance, price] { return db->record_credit_read(balance, price); };
            try {
                auto read = co_await on_db(job);
                if (read.added > 0) {
                    spdlog::info("serve: the key was given at least {} credits since the last read (a top-up or "
                                 "a refund: its balance rose to {}); this read counts no drift, so a spend the ledger "
                                 "did not post in the same interval goes unseen",
                                 read.added, balance);
                } else if (read.unexplained != 0) {
                    // The sign says which side is ahead: a positive drift is spending the ledger did
                    // not post; a negative one, posts above what the API charged (a call whose
                    // charge was unknown is booked at its whole reservation).
                    const std::int64_t beyond = read.unexplained < 0 ? -read.unexplained : read.unexplained;
                    if (read.drift > 0) {
                        spdlog::warn("serve: credit drift {:+} since the last read: the API balance fell by {} more "
                                     "than the ledger posted and the expected webhook monitoring ({}); {} of it "
                                     "beyond what the calls in flight may explain (balance now {})",
                                     read.drift, read.drift, read.monitoring, beyond, balance);
                    } else {
                        spdlog::warn("serve: credit drift {:+} since the last read: the ledger posted {} more than "
                                     "the API balance fell, less the expected webhook monitoring ({}); {} of it "
                                     "beyond what the calls in flight may explain (balance now {})",
                                     read.drift, -read.drift, read.monitoring, beyond, balance);
                    }
                } else if (read.drift != 0) {
                    spdlog::info("serve: credit drift {} since the last read, within what the calls in flight may "
                                 "have cost: a later read takes it back once they are posted (balance now {})",
                                 read.drift, balance);
                }
                if (read.resumed > 0) {
                    spdlog::info("serve: the key has {} credits again: {} campaigns resumed", balance, read.resumed);
                }
            } catch (const std::exception& e) {
                spdlog::error("serve: recording the key's credits failed: {}", e.what());
            }
        }
        reading = false;
        // Until the next read; but while campaigns wait for the key's credits (a worker paused them
        // on INSUFFICIENT_CREDITS), every credits_paused_poll, so that a top-up resumes them within
        // seconds, not up to credits_poll_seconds later (a trial: 4 minutes paused after one).
        const auto next_read = std::chrono::steady_clock::now() + std::chrono::seconds(cfg.credits_poll_seconds);
        while (!stopping && std::chrono::steady_clock::now() < next_read) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(next_read - std::chrono::steady_clock::now());
            co_await sleep_for(std::min<std::chrono::milliseconds>(credits_paused_poll, left));
            // Campaigns past their end_at stop now, not at their next lead's claim.
            auto ended = [this] { return db->pause_ended_campaigns(); };
            auto paused = [this] { return db->campaigns_paused_for_credits(); };
            try {
                for (const auto& name : co_await on_db(ended)) {
                    spdlog::info("serve: campaign '{}' ended: its end_at passed; paused, its leads parked",
                                 orch::text::escaped(name));
                }
                if (!stopping && co_await on_db(paused) > 0) {
                    break;
                }
            } catch (const std::exception&) {
                // The read's own loop says what is wrong with the database.
            }
        }
    }
}

// ---- hosted mode: polling and the stream (leader) ----

// One catch-up: pages through the events after the stored position. The request carries every
// position form (`after` the last id, the server's `cursor`, `since` the last event's time less a
// millisecond): a server honours the one it implements and ignores the others, and the inbox's
// dedupe absorbs what an inclusive `since` gives again. False when polling failed.
namespace {

// The API no longer knows the webhook (deleted on its side, expired): polling and the stream
// cannot succeed until it is set up again.
bool webhook_gone(const outreach::error& e) { return e.http_status == 404 || e.code == "NOT_FOUND"; }

}  // namespace

asio::awaitable<bool> intake::impl::poll_round(const std::string& account, const std::string& webhook_id, bool& gone) {
    struct position {
        std::string last, cursor, since;
    };
    auto read = [this, &account] {
        position p;
        pqxx::nontransaction tx(db->connection());
        auto r = tx.exec_params(q("intake/webhook_get"), account);
        if (!r.empty()) {
            p.last = r[0][4].as<std::string>();
            p.cursor = r[0][5].as<std::string>();
            p.since = r[0][6].as<std::string>();
        }
        return p;
    };
    position pos = co_await on_db(read);
    for (int page_no = 0; page_no < poll_pages_max && !stopping; ++page_no) {
        outreach::poll_events_params p;
        p.after = pos.last;
        p.cursor = pos.cursor;
        p.since = pos.since;
        p.limit = poll_limit;
        auto poll = [this, &webhook_id, &p] { return api->poll_webhook_events(webhook_id, p); };
        auto page = co_await gated(account, limits::action::check_invitation, poll);
        if (!page) {
            gone = webhook_gone(page.error());
            spdlog::warn("serve: account={} polling failed: {}", orch::text::escaped(account), outreach::describe(page.error()));
            co_return false;
        }
        bool progressed = false;
        std::optional<std::chrono::system_clock::time_point> newest;
        for (const auto& bad : page->unreadable_items) {
            co_await quarantine(bad.event_id, account, "poll", bad.reason, bad.raw.dump());
            progressed = progressed || bad.event_id != pos.last;
        }
        for (const auto& item : page->items) {
            std::string source = !item.event.event_id.empty() ? item.event.event_id : item.event_id;
            if (auto why = unusable(item.event); !why.empty()) {
                co_await quarantine(source, account, "poll", why, item.event.raw.dump());
            } else {
                co_await take(item.event, source, account);
            }
            progressed = progressed || item.event_id != pos.last;
            pos.last = item.event_id;
            auto at = item.created_at ? item.created_at : item.event.timestamp;
            if (at && (!newest || *at > *newest)) {
                newest = at;
            }
        }
        if (!page->unreadable_items.empty() && page->items.empty()) {
            pos.last = page->unreadable_items.back().event_id;
        }
        bool cursor_moved = !page->next_cursor.empty() && page->next_cursor != pos.cursor;
        if (cursor_moved) {
            pos.cursor = page->next_cursor;
        }
        if (newest) {
            pos.since = iso8601_ms(*newest - std::chrono::milliseconds(1));
        }
        auto save = [this, &account, &pos] {
            pqxx::work tx(db->connection());
            tx.exec_params(q("intake/poll_position"), account, pos.last, pos.cursor, pos.since);
            tx.commit();
            return 0;
        };
        co_await on_db(save);
        std::size_t n = page->items.size() + page->unreadable_items.size();
        bool more = page->has_more.value_or(n >= static_cast<std::size_t>(poll_limit));
        // A server that ignores every position form would hand the same page forever.
        if (!more || n == 0 || !(progressed || cursor_moved)) {
            break;
        }
    }
    co_return true;
}

asio::awaitable<void> intake::impl::hosted_loop(std::string account, std::string webhook_id,
                                                std::shared_ptr<std::atomic<bool>> stop) {
    auto mark_gap = [this, &account] {
        pqxx::work tx(db->connection());
        tx.exec_params(q("intake/gap"), account);
        tx.commit();
        return 0;
    };
    bool first = true;
    int failed_rounds = 0;  // in a row: the pause between rounds doubles with them, up to a minute
    while (!stopping && !*stop) {
        bool gone = false;
        bool polled = false;
        try {
            // Catch up by polling (hosted events are kept 24 h), then follow the stream. Only when
            // polling fails after a broken stream may events be missed: that gap is swept.
            polled = co_await poll_round(account, webhook_id, gone);
            if (!polled && !first) {
                co_await on_db(mark_gap);
            }
            first = false;
            if (!gone) {
                std::string last_id;
                auto read_last = [this, &account] {
                    pqxx::nontransaction tx(db->connection());
                    auto r = tx.exec_params(q("intake/webhook_get"), account);
                    return r.empty() ? std::string() : r[0][4].as<std::string>();
                };
                last_id = co_await on_db(read_last);
                auto stream = api->open_event_stream(webhook_id, last_id);
                while (!stopping && !*stop) {
                    auto next = co_await stream.next();
                    if (!next) {
                        spdlog::warn("serve: account={} stream ended: {}; polling", orch::text::escaped(account),
                                     outreach::describe(next.error()));
                        gone = webhook_gone(next.error());
                        break;
                    }
                    if (next->name == "connected") {
                        continue;
                    }
                    // An event's own id only: an inherited one (a stream without ids repeats the
                    // position it resumed from) would key every event alike, each a "replay".
                    const std::string own_id = next->id_sent ? next->id : std::string();
                    if (!next->event) {
                        std::string id = own_id.empty() ? digest_hex(next->data) : own_id;
                        co_await quarantine(id, account, "stream", next->problem, next->data);
                        continue;
                    }
                    std::string source = !next->event->event_id.empty() ? next->event->event_id
                                         : !own_id.empty()              ? own_id
                                                                        : content_key(*next->event, account);
                    if (auto why = unusable(*next->event); !why.empty()) {
                        co_await quarantine(source, account, "stream", why, next->data);
                        continue;
                    }
                    co_await take(*next->event, source, account);
                    if (!own_id.empty()) {
                        auto job = [this, &account, id = own_id] {
                            db->set_account_last_event(account, id);
                            return 0;
                        };
                        co_await on_db(job);
                    }
                }
                stream.close();
            }
        } catch (const std::exception& e) {
            spdlog::error("serve: account={} event intake failed: {}", orch::text::escaped(account), e.what());
        }
        if (gone && !stopping && !*stop) {
            // Polling it again every second would spend the key's rate, and each failed round
            // would mark a gap that sends the catch-up sweep (billed reads) after it: the account
            // is handed back to ensure_webhooks, which creates a webhook again (ensure_one).
            spdlog::warn("serve: account={} webhook={} no longer exists: setting up another", orch::text::escaped(account),
                         orch::text::escaped(webhook_id));
            if (auto it = hosted.find(account); it != hosted.end() && it->second == stop) {
                hosted.erase(it);
            }
            ensured.erase(account);
            co_return;
        }
        failed_rounds = polled ? 0 : std::min(failed_rounds + 1, 6);
        co_await sleep_for(std::chrono::seconds(1 << failed_rounds));
    }
}

// ---- the catch-up sweep (leader) ----

// Feeds what the sweep learned into the inbox as an event of its own (the same path as a webhook
// event: it wakes the lead's enrollments and sets the funnel's milestone).
namespace {
// A message found in the inbox carries the conversation's last message as the inbox gave it:
// its text and its time (event.timestamp, the API's clock), which a later sweep and a late
// delivery of the same message are compared with.
struct inbox_message {
    std::string text;
    std::optional<std::chrono::system_clock::time_point> at;
    std::string sender_name;
};

json swept_event(const std::string& account, const char* type, const std::string& profile_url, const char* how,
                 const inbox_message& message, const std::string& conversation) {
    json ev = {{"type", type}, {"profile_url", profile_url}, {"swept_by", how}};
    if (std::string_view(type) == "message") {
        ev["sender_profile"] = profile_url;
        if (!conversation.empty()) {
            ev["conversation_id"] = conversation;
        }
        if (!message.text.empty()) {
            ev["message_text"] = message.text;
        }
        if (!message.sender_name.empty()) {
            ev["sender_name"] = message.sender_name;
        }
        if (message.at) {
            ev["timestamp"] = iso8601_ms(*message.at);
        }
    }
    return {{"account_id", account}, {"event", ev},
            {"timestamp", iso8601_ms(std::chrono::system_clock::now())}};
}

}  // namespace

asio::awaitable<intake::impl::sweep_result> intake::impl::sweep_account(const std::string& account,
                                                                        const std::string& gap) {
    sweep_result result;
    struct lead {
        std::int64_t id;
        std::string url;
        std::int64_t campaign;
    };
    auto read = [this, &account](const char* query) {
        std::vector<lead> out;
        pqxx::nontransaction tx(db->connection());
        for (const auto& r : tx.exec_params(q(query), account)) {
            out.push_back({r[0].as<std::int64_t>(), r[1].as<std::string>(), r[2].as<std::int64_t>()});
        }
        return out;
    };
    auto read_pending = [&read] { return read("intake/sweep_pending"); };
    auto read_replies = [&read] { return read("intake/sweep_replies"); };
    auto pending = co_await on_db(read_pending);
    auto messaged = co_await on_db(read_replies);
    // After a gap (and only then: the reads are billed), the leads whose reply is known too: a
    // later message of theirs (an e-mail address, say) lost while no serve ran is found by
    // comparing the inbox's last message with the newest one stored. Hosted mode's polling
    // recovers such a message by itself; a webhook of our own (custom mode) does not.
    std::vector<lead> replied;
    std::map<std::int64_t, newest_stored> replied_newest;
    const bool look_later = !gap.empty() || later_owed.count(account) != 0;
    bool later_skipped = false;  // a replied lead's read had no credits
    if (look_later) {
        auto read_replied = [this, &account, &replied, &replied_newest] {
            pqxx::nontransaction tx(db->connection());
            for (const auto& r : tx.exec_params(q("intake/sweep_replied"), account)) {
                const auto id = r[0].as<std::int64_t>();
                if (replied.empty() || replied.back().id != id) {
                    replied.push_back({id, r[1].as<std::string>(), r[2].as<std::int64_t>()});
                }
                replied_newest[id].add(r[3].as<std::string>(), r[4].as<std::int64_t>());
            }
            return 0;
        };
        co_await on_db(read_replied);
    }
    // Credits go to the campaign each read served (a list read's payer: see below). A campaign
    // gets reads of its own in this sweep only while it has credits left: in its budget, in
    // today's day cap (the whole UTC day's spend counted) and in its cap for this account. They
    // are charged as they come, without a reservation, so what is left is read once per sweep and
    // counted down by each charge: the sweep stops at the cap, or one read past it. Its leads then
    // wait for their wait's own check, once the budget or the cap allows.
    std::set<std::int64_t> spent_out;
    std::map<std::int64_t, std::int64_t> left;   // campaign -> credits it may still spend in this sweep
    // `read`: the read's row in flight (migration 0047), removed in the charge's transaction; when
    // another serve removed it first (this one's session looked gone), that one booked the read.
    auto charge = [this, &account, &spent_out, &left](std::int64_t campaign, const char* action, std::int64_t credits,
                                                      std::int64_t read) {
        return [this, &account, &spent_out, &left, campaign, action, credits, read] {
            if (campaign <= 0 || (credits <= 0 && read <= 0)) {
                return 0;
            }
            pqxx::work tx(db->connection());
            if (read > 0 && tx.exec_params(q("intake/read_end"), read).empty()) {
                tx.commit();
                return 0;
            }
            if (credits <= 0) {
                tx.commit();
                return 0;
            }
            auto s = ledger::charge(tx, {campaign, account, action, credits}, std::chrono::system_clock::now());
            tx.commit();
            if (auto it = left.find(campaign); it != left.end()) {
                it->second -= credits;
            }
            if (s.shortfall > 0 && spent_out.insert(campaign).second) {
                spdlog::warn("serve: campaign {} paused: the catch-up sweep's reads ({}) went {} credits past its budget",
                             campaign_named(campaign), action, s.shortfall);
            }
            return 0;
        };
    };
    auto has_credits = [this, &account, &left, &spent_out](std::int64_t campaign) {
        return [this, &account, &left, &spent_out, campaign] {
            if (spent_out.count(campaign) != 0) {
                return false;
            }
            if (auto it = left.find(campaign); it != left.end()) {
                return it->second > 0;
            }
            pqxx::read_transaction tx(db->connection());
            const std::int64_t have = ledger::read_allowance(tx, campaign, account, std::chrono::system_clock::now());
            tx.commit();
            left[campaign] = have;
            if (have <= 0 && sweep_told_capped.insert(campaign).second) {
                spdlog::info("serve: catch-up sweep: campaign {} has no credits left in its budget, today's day cap "
                             "or its cap on account={}: no reads for it (said once a full sweep); its live leads wait "
                             "for their own checks, and the later messages of those who replied are looked for by "
                             "a sweep once it has credits",
                             campaign_named(campaign), orch::text::escaped(account));
            }
            return have > 0;
        };
    };
    // A read whose answer was lost after it reached the API (a timeout, a dropped connection) was
    // most likely billed: it is charged to the campaign it served at the most it could have cost
    // (the cost model), as a worker's lost call is, so that the budget and the caps count it and
    // the sweep stops at them. Before, only answered reads were charged, and a slow API's billed
    // timeouts went past the budget unseen (a trial).
    auto lost_text = [](const outreach::error& e) {
        return e.may_have_been_charged ? std::string(" (its answer was lost: booked at its most)") : std::string();
    };
    auto book_lost = [this, &charge](std::int64_t campaign, const char* category, const char* action, const json& params,
                               const outreach::error& e, std::int64_t read) -> asio::awaitable<void> {
        if (campaign <= 0) {
            co_return;
        }
        // Not billed (refused before it left, or answered with an error): its row goes, uncharged.
        auto bill = charge(campaign, action,
                           e.may_have_been_charged ? outreach::estimate_v2(category, action, params).credits : 0, read);
        co_await on_db(bill);
    };
    // A billed read about to leave: its row in flight, at the most it can cost (the cost model's
    // price of a lost answer), so that a serve killed while it is out leaves it to be booked.
    auto begin_read = [this, &account](std::int64_t campaign, const char* category, const char* action,
                                       const json& params) {
        return [this, &account, campaign, category, action, &params] {
            return read_begin(campaign, account, action, outreach::estimate_v2(category, action, params).credits);
        };
    };
    // Called with named objects only: GCC 12 destroys a class-type temporary argument of a
    // coroutine twice (a crash in serve's first sweep when this took `inbox_message{}`).
    auto found = [this, &account, &result](const char* type, const std::string& url, const char* how,
                                           const inbox_message& message, const std::string& id_suffix,
                                           const std::string& conversation) -> asio::awaitable<void> {
        auto ev = outreach::parse_webhook_event(swept_event(account, type, url, how, message, conversation));
        if (ev) {
            ++stats.swept;
            const std::string source = std::string("sweep:") + type + ":" + account + ":" + canonical_profile_url(url) + id_suffix;
            const int added = co_await take(*ev, source, account);
            result.found += added > 0 ? 1 : 0;
            if (added > 0 && !conversation.empty()) {
                auto copies = [this, &source, &account, &conversation] {
                    mark_copies(source, account, conversation);
                    return 0;
                };
                co_await on_db(copies);
            }
        }
    };
    const inbox_message no_message;
    const std::string no_suffix;
    const std::string no_conversation;

    // A list read serves every campaign on the account: it is charged to the first of them
    // that has credits available, and not made when none has.
    auto payer = [&](const std::vector<lead>& leads) -> asio::awaitable<std::int64_t> {
        std::set<std::int64_t> asked;
        for (const auto& l : leads) {
            if (!asked.insert(l.campaign).second) {
                continue;
            }
            const bool some = co_await on_db(has_credits(l.campaign));
            if (some) {
                co_return l.campaign;
            }
        }
        co_return 0;
    };

    // Pending invitations: list_sent when it costs fewer credits than a check per lead.
    std::vector<const lead*> to_check;
    std::int64_t list_payer = 0;
    if (pending.size() > list_sent_above) {
        list_payer = co_await payer(pending);
    }
    if (list_payer != 0) {
        std::set<std::string> still_pending;
        bool listed = true;
        for (std::int64_t offset = 0; listed && !stopping; offset += list_page) {
            outreach::list_invitations_params p;
            p.count = list_page;
            p.offset = offset;
            const json params = {{"count", list_page}};
            auto begin = begin_read(list_payer, "network", "list_sent", params);
            const std::int64_t read = co_await on_db(begin);
            auto call = [this, &account, &p] { return api->list_sent(account, p); };
            auto page = co_await gated(account, limits::action::check_invitation, call);
            if (!page) {
                spdlog::warn("serve: sweep of account={}: list_sent failed: {}{}", orch::text::escaped(account),
                             outreach::describe(page.error()), lost_text(page.error()));
                co_await book_lost(list_payer, "network", "list_sent", params, page.error(), read);
                listed = false;
                break;
            }
            auto bill = charge(list_payer, "list_sent", page->meta.credits_consumed.value_or(0), read);
            co_await on_db(bill);
            std::size_t fresh = 0;
            for (const auto& inv : page->invitations) {
                fresh += still_pending.insert(canonical_profile_url(inv.person.profile_url)).second ? 1 : 0;
            }
            bool more = page->pagination.has_more.value_or(
                static_cast<std::int64_t>(page->invitations.size()) >= list_page);
            if (!more || page->invitations.empty()) {
                break;
            }
            // An API that ignores the offset (or pages without end) would be read, and billed,
            // forever: a page that lists nobody new ends the listing, and the leads it did not
            // list are checked one by one below.
            if (fresh == 0) {
                spdlog::warn("serve: sweep of account={}: list_sent's page at offset {} listed nobody the earlier "
                             "pages had not (an API that ignores the offset?): listing stopped",
                             orch::text::escaped(account), offset);
                break;
            }
        }
        for (const auto& l : pending) {
            if (!listed || still_pending.count(canonical_profile_url(l.url)) == 0) {
                to_check.push_back(&l);
            }
        }
    } else {
        for (const auto& l : pending) {
            to_check.push_back(&l);
        }
    }
    // An acceptance the webhook or the stream stored while the sweep ran (its list of pending
    // leads was read at its start) is neither checked again nor stored a second time under the
    // sweep's own id and time.
    auto accepted_known = [this, &account](std::int64_t lead_id) {
        return [this, &account, lead_id] {
            pqxx::nontransaction tx(db->connection());
            return tx.exec_params1(q("intake/accepted_known"), account, lead_id)[0].as<bool>();
        };
    };
    // The same for a reply (the inbox showed one twice, the webhook's and the sweep's).
    auto reply_known = [this, &account](std::int64_t lead_id) {
        return [this, &account, lead_id] {
            pqxx::nontransaction tx(db->connection());
            return tx.exec_params1(q("intake/reply_known"), account, lead_id)[0].as<bool>();
        };
    };
    for (const lead* l : to_check) {
        if (stopping || !leading()) {
            co_return result;
        }
        if (co_await on_db(accepted_known(l->id))) {
            continue;
        }
        if (!co_await on_db(has_credits(l->campaign))) {
            continue;
        }
        outreach::profile_url_params p{l->url};
        const json params = json::object();
        auto begin = begin_read(l->campaign, "network", "check_invitation", params);
        const std::int64_t read = co_await on_db(begin);
        auto call = [this, &account, &p] { return api->check_invitation(account, p); };
        auto st = co_await gated(account, limits::action::check_invitation, call);
        if (!st) {
            spdlog::warn("serve: sweep of account={}: check_invitation failed: {}{}", orch::text::escaped(account),
                         outreach::describe(st.error()), lost_text(st.error()));
            co_await book_lost(l->campaign, "network", "check_invitation", params, st.error(), read);
            sweep_failed(account);
            co_return result;  // the gap stays open: a later sweep tries again
        }
        auto bill = charge(l->campaign, "check_invitation", st->meta.credits_consumed.value_or(0), read);
        co_await on_db(bill);
        if (st->state == outreach::invitation_state::accepted && !co_await on_db(accepted_known(l->id))) {
            co_await found("accepted_invitation", l->url, "check_invitation", no_message, no_suffix, no_conversation);
        }
    }

    // The newest stored message of a replied lead, read again just before the sweep stores a
    // later one: the webhook or the stream may have stored it while the inbox was read.
    auto lead_newest = [this, &account](std::int64_t lead_id) {
        return [this, &account, lead_id] {
            newest_stored n;
            pqxx::nontransaction tx(db->connection());
            for (const auto& r : tx.exec_params(q("intake/lead_messages"), account, lead_id)) {
                n.add(r[0].as<std::string>(), r[1].as<std::int64_t>());
            }
            return n;
        };
    };

    // Up to which last message of ours (epoch ms) a gap's sweep read a replied lead's
    // conversation; the lowest value when never. Marked once its messages are stored.
    auto read_through = [this, &account](std::int64_t lead_id) {
        return [this, &account, lead_id] {
            pqxx::nontransaction tx(db->connection());
            auto r = tx.exec_params(q("intake/conversation_read"), account, lead_id);
            return r.empty() ? std::numeric_limits<std::int64_t>::min() : r[0][0].as<std::int64_t>();
        };
    };
    auto read_done = [this, &account](std::int64_t lead_id, std::int64_t through) {
        return [this, &account, lead_id, through] {
            pqxx::work tx(db->connection());
            tx.exec_params(q("intake/conversation_read_done"), account, lead_id, through);
            tx.commit();
            return 0;
        };
    };

    // Replies: the inbox's conversations whose last message is not ours (a first reply); after a
    // gap, those of the leads who replied already whose last message is newer than any stored.
    std::int64_t inbox_payer = 0;
    if (!messaged.empty()) {
        inbox_payer = co_await payer(messaged);
    }
    if (inbox_payer == 0 && !replied.empty()) {
        inbox_payer = co_await payer(replied);
    }
    if (inbox_payer != 0) {
        std::map<std::string, const lead*> by_url;
        for (const auto& l : messaged) {
            by_url[canonical_profile_url(l.url)] = &l;
        }
        std::map<std::string, const lead*> replied_by_url;
        for (const auto& l : replied) {
            replied_by_url.emplace(canonical_profile_url(l.url), &l);
        }
        std::size_t untimed = 0;  // messages of replied leads the inbox or the conversation gives no time of
        std::size_t spared = 0;   // conversations not read again: read through ours at an earlier sweep
        std::string cursor;
        for (int page_no = 0; page_no < 20 && !stopping; ++page_no) {
            outreach::list_inbox_params p;
            p.count = list_page;
            p.cursor = cursor;
            const json params = {{"count", list_page}};
            auto begin = begin_read(inbox_payer, "messages", "list_inbox", params);
            const std::int64_t read = co_await on_db(begin);
            auto call = [this, &account, &p] { return api->list_inbox(account, p); };
            auto page = co_await gated(account, limits::action::get_conversation, call);
            if (!page) {
                spdlog::warn("serve: sweep of account={}: list_inbox failed: {}{}", orch::text::escaped(account),
                             outreach::describe(page.error()), lost_text(page.error()));
                co_await book_lost(inbox_payer, "messages", "list_inbox", params, page.error(), read);
                sweep_failed(account);
                co_return result;
            }
            auto bill = charge(inbox_payer, "list_inbox", page->meta.credits_consumed.value_or(0), read);
            co_await on_db(bill);
            for (const auto& c : page->conversations) {
                const auto canonical = canonical_profile_url(c.participant.profile_url);
                const inbox_message last{c.last_message_text, c.last_message_at, c.last_message_sender_name};
                if (auto it = by_url.find(canonical); it != by_url.end()) {
                    if (c.last_message_from_me == false && !co_await on_db(reply_known(it->second->id))) {
                        co_await found("message", it->second->url, "list_inbox", last, no_suffix, c.conversation_id);
                    }
                    continue;
                }
                auto it = replied_by_url.find(canonical);
                if (it == replied_by_url.end() || !c.last_message_from_me) {
                    continue;
                }
                if (!c.last_message_at) {
                    ++untimed;
                    continue;
                }
                const lead& l = *it->second;
                // Theirs: stored unless it is the newest stored. Ours (an operator's reply or a
                // follow-up sent during the gap), later than their newest stored: what they wrote
                // before it is not in the list; the conversation is read (1 credit) for it,
                // once per last message of ours (marked in conversation_reads).
                const bool ours = *c.last_message_from_me;
                const std::string& words = ours ? no_suffix : c.last_message_text;
                if (!replied_newest[l.id].lack(*c.last_message_at, words)) {
                    if (!ours && replied_newest[l.id].lack(*c.last_message_at, no_suffix)) {
                        spdlog::info("serve: sweep of account={}: lead {}'s last message, later than those stored, "
                                     "has the words of one of them: taken for it, not stored",
                                     orch::text::escaped(account), l.id);
                    }
                    continue;
                }
                auto newest = co_await on_db(lead_newest(l.id));
                if (!newest.lack(*c.last_message_at, words)) {
                    continue;
                }
                std::vector<inbox_message> missing;
                const char* how = "list_inbox";
                if (!ours) {
                    missing.push_back(last);
                } else {
                    // Read at an earlier sweep through this last message of ours (or a later
                    // one): the conversation has nothing more to give.
                    const auto through = std::chrono::duration_cast<std::chrono::milliseconds>(
                                             c.last_message_at->time_since_epoch()).count();
                    if (co_await on_db(read_through(l.id)) >= through) {
                        ++spared;
                        continue;
                    }
                    if (!co_await on_db(has_credits(l.campaign))) {
                        later_skipped = true;
                        continue;
                    }
                    outreach::get_conversation_params p;
                    p.conversation_id = c.conversation_id;
                    p.profile_url = c.conversation_id.empty() ? l.url : std::string();
                    p.count = 10;
                    const json params = {{"count", 10}};
                    auto begin = begin_read(l.campaign, "messages", "get_conversation", params);
                    const std::int64_t in_flight = co_await on_db(begin);
                    auto call = [this, &account, &p] { return api->get_conversation(account, p); };
                    auto read = co_await gated(account, limits::action::get_conversation, call);
                    if (!read) {
                        spdlog::warn("serve: sweep of account={}: get_conversation of lead {} failed: {}{}",
                                     orch::text::escaped(account), l.id, outreach::describe(read.error()),
                                     lost_text(read.error()));
                        co_await book_lost(l.campaign, "messages", "get_conversation", params, read.error(), in_flight);
                        sweep_failed(account);
                        co_return result;  // the gap stays open: a later sweep tries again
                    }
                    auto bill = charge(l.campaign, "get_conversation", read->meta.credits_consumed.value_or(0),
                                       in_flight);
                    co_await on_db(bill);
                    how = "get_conversation";
                    for (const auto& msg : read->messages) {  // newest first
                        const bool theirs = msg.from_me ? !*msg.from_me
                                                        : !msg.sender_profile_url.empty() &&
                                                              canonical_profile_url(msg.sender_profile_url) == canonical;
                        if (!theirs) {
                            continue;
                        }
                        if (!msg.at) {
                            ++untimed;
                            continue;
                        }
                        if (!newest.lack(*msg.at, msg.text)) {
                            break;  // this one is stored, and so are those before it
                        }
                        missing.push_back({msg.text, msg.at, msg.sender_name});
                    }
                    std::reverse(missing.begin(), missing.end());  // oldest first
                }
                for (const auto& message : missing) {
                    spdlog::info("serve: sweep of account={}: a later message of lead {} ({}) is missing from the inbox "
                                 "(lost while intake had a gap): stored, from {}",
                                 orch::text::escaped(account), l.id, orch::text::escaped(l.url), how);
                    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                        message.at->time_since_epoch()).count();
                    const std::string suffix = ":" + std::to_string(ms);
                    co_await found("message", l.url, how, message, suffix, c.conversation_id);
                }
                if (ours) {
                    // Only once what it held of theirs is stored: a store that failed (thrown)
                    // leaves the gap open and the conversation to be read again.
                    const auto through = std::chrono::duration_cast<std::chrono::milliseconds>(
                                             c.last_message_at->time_since_epoch()).count();
                    co_await on_db(read_done(l.id, through));
                }
            }
            if (page->next_cursor.empty() || page->next_cursor == cursor || page->conversations.empty()) {
                break;
            }
            cursor = page->next_cursor;
        }
        if (spared > 0) {
            spdlog::info("serve: sweep of account={}: {} whose last message is ours read through it at an "
                         "earlier sweep: not read again",
                         orch::text::escaped(account), orch::text::counted(spared, "conversation", "conversations"));
        }
        if (untimed > 0) {
            spdlog::info("serve: sweep of account={}: the inbox gives no time of {} messages of leads who replied "
                         "already: a later message of theirs lost during the gap cannot be told from the ones "
                         "stored, and is not looked for",
                         orch::text::escaped(account), untimed);
        }
    }
    if (look_later) {
        if (!replied.empty() && (inbox_payer == 0 || later_skipped)) {
            if (later_owed.insert(account).second) {
                spdlog::info("serve: sweep of account={}: no credits left to look for later messages of the leads "
                             "who replied: each sweep looks again until their campaign has credits",
                             orch::text::escaped(account));
            }
        } else {
            later_owed.erase(account);
        }
    }
    auto done = [this, &account, &gap] {
        pqxx::work tx(db->connection());
        tx.exec_params(q("intake/sweep_done"), account, gap.empty() ? std::optional<std::string>() : gap);
        tx.commit();
        return 0;
    };
    co_await on_db(done);
    sweep_retries.erase(account);
    // A campaign that had nothing left for a read it needed leaves what the read would have found
    // unknown: such a sweep is no proof the deliveries missed nothing.
    result.completed = spent_out.empty() && std::none_of(left.begin(), left.end(), [](const auto& c) {
        return c.second <= 0;
    });
    co_return result;
}

asio::awaitable<void> intake::impl::verify_webhooks() {
    if (ensured.empty()) {
        co_return;
    }
    auto read = [this] {
        std::vector<std::pair<std::string, std::string>> out;  // (account, its webhook)
        for (const auto& a : db->accounts()) {
            if (ensured.count(a.account_id) != 0 && !a.webhook_id.empty()) {
                out.emplace_back(a.account_id, a.webhook_id);
            }
        }
        return out;
    };
    auto ours = co_await on_db(read);
    if (ours.empty()) {
        co_return;
    }
    auto list = [this] { return api->list_webhooks(); };
    auto listed = co_await gated(ours.front().first, limits::action::check_invitation, list);
    if (!listed) {
        spdlog::warn("serve: the webhooks could not be listed to check that they are active: {}",
                     outreach::describe(listed.error()));
        co_return;
    }
    for (const auto& [account, id] : ours) {
        const auto w = std::find_if(listed->webhooks.begin(), listed->webhooks.end(),
                                    [&id](const outreach::webhook_info& x) { return x.webhook_id == id; });
        if (w == listed->webhooks.end()) {
            // A list that pages or lags proves nothing: a hosted webhook that is gone is found
            // by its polling (404), a custom one by reading it.
            auto get = [this, &id] { return api->get_webhook(id); };
            auto got = co_await gated(account, limits::action::check_invitation, get);
            if (got || got.error().http_status != 404) {
                continue;
            }
            // Said by the set-up, which finds it gone again ("is gone; creating another").
            spdlog::debug("serve: account={} webhook={} no longer exists", orch::text::escaped(account),
                          orch::text::escaped(id));
        } else if (!w->is_active.value_or(true)) {
            spdlog::warn("serve: account={} webhook={} is stopped on the API's side (no event is delivered): starting "
                         "it again, and sweeping what it missed",
                         orch::text::escaped(account), orch::text::escaped(id));
        } else {
            continue;
        }
        auto mark_gap = [this, &account] {
            pqxx::work tx(db->connection());
            tx.exec_params(q("intake/gap"), account);
            tx.commit();
            return 0;
        };
        co_await on_db(mark_gap);
        if (auto it = hosted.find(account); it != hosted.end()) {
            *it->second = true;
            hosted.erase(it);
        }
        ensured.erase(account);  // ensure_webhooks sets it up again (ensure_one: reused and started, or created)
    }
}

asio::awaitable<void> intake::impl::sweep_loop() {
    sweep_schedule schedule(std::chrono::seconds(cfg.sweep_seconds), std::chrono::seconds(cfg.sweep_max_seconds));
    auto last_full = std::chrono::steady_clock::now();
    auto last_check = last_full;
    while (!stopping) {
        co_await sleep_for(std::chrono::seconds(1));
        if (!unstored.empty()) {
            const std::vector<std::string> accounts(unstored.begin(), unstored.end());
            auto mark = [this, &accounts] {
                pqxx::work tx(db->connection());
                for (const auto& a : accounts) {
                    tx.exec_params(q("intake/gap"), a);
                }
                tx.commit();
                return 0;
            };
            try {
                co_await on_db(mark);
                for (const auto& a : accounts) {
                    unstored.erase(a);
                    spdlog::warn("serve: account={}: a delivery was answered 503 (not stored); should the API give "
                                 "up on it, the catch-up sweep of its gap finds what it held",
                                 orch::text::escaped(a));
                }
            } catch (const std::exception& e) {
                spdlog::debug("serve: marking the gaps of unstored deliveries waits for the database: {}", e.what());
            }
        }
        if (!leading()) {
            continue;
        }
        bool full = std::chrono::steady_clock::now() - last_full >= std::chrono::seconds(cfg.sweep_seconds);
        // A webhook stopped on the API's side delivers nothing: its list is checked more often
        // than the full sweep, which is what finds the events it missed.
        const bool check = full || std::chrono::steady_clock::now() - last_check >=
                                       std::chrono::seconds(cfg.webhook_check_seconds);
        auto list = [this, full] {
            std::vector<std::pair<std::string, std::string>> out;
            if (full) {
                // db->accounts() runs its own statement on the connection: no transaction of
                // ours may be open on it (one was, and every full sweep failed from the first on).
                for (const auto& a : db->accounts()) {
                    if (a.platform == "network" && a.connected) {
                        out.emplace_back(a.account_id, "");
                    }
                }
            } else {
                pqxx::nontransaction tx(db->connection());
                for (const auto& r : tx.exec(q("intake/gaps"))) {
                    out.emplace_back(r[0].as<std::string>(), r[1].as<std::string>());
                }
            }
            return out;
        };
        try {
            if (check) {
                last_check = std::chrono::steady_clock::now();
                co_await verify_webhooks();
            }
            if (check) {
                // With the webhooks' check (at least every webhook_check_seconds): the reads a
                // stopped serve left in flight are booked within about that long of the lead.
                auto orphaned = [this] { return book_orphaned_reads(); };
                co_await on_db(orphaned);
            }
            auto accounts = co_await on_db(list);
            if (full) {
                last_full = std::chrono::steady_clock::now();
                sweep_told_capped.clear();
                if (!accounts.empty()) {
                    std::rotate(accounts.begin(), accounts.begin() + static_cast<std::ptrdiff_t>(sweep_start % accounts.size()),
                                accounts.end());
                    ++sweep_start;
                }
            }
            for (const auto& [account, gap] : accounts) {
                if (stopping || !leading()) {
                    break;
                }
                // An account's webhook must be in place first, or events could fall between the
                // sweep and the webhook.
                if (ensured.count(account) == 0) {
                    continue;
                }
                // A gap whose last sweep failed waits for its retry (the full sweep goes on).
                if (auto r = sweep_retries.find(account);
                    !full && r != sweep_retries.end() && std::chrono::steady_clock::now() < r->second.at) {
                    continue;
                }
                if (!full) {
                    co_await sweep_account(account, gap);
                    continue;
                }
                // A full sweep (the listing gives no gap: an account with one is swept for it
                // at the next turn whatever its schedule).
                const auto started = std::chrono::steady_clock::now();
                if (!schedule.due(account, started)) {
                    ++stats.full_sweeps_skipped;
                    spdlog::debug("serve: sweep of account={}: skipped, its sweeps found nothing missed (every {} s now)",
                                  orch::text::escaped(account), schedule.interval(account).count());
                    continue;
                }
                ++stats.full_sweeps;
                const auto r = co_await sweep_account(account, gap);
                if (const auto every = schedule.done(account, started, r.completed, r.found)) {
                    if (r.found > 0) {
                        spdlog::info("serve: sweep of account={} found {} the deliveries missed: it is swept every {} s "
                                     "again (sweep_seconds)",
                                     orch::text::escaped(account), orch::text::counted(r.found, "event", "events"),
                                     every->count());
                    } else {
                        spdlog::info("serve: sweep of account={} found nothing the deliveries missed: its next full "
                                     "sweep in {} s (doubling up to sweep_max_seconds, {} s, while they find nothing)",
                                     orch::text::escaped(account), every->count(), schedule.ceiling().count());
                    }
                }
            }
        } catch (const std::exception& e) {
            spdlog::error("serve: catch-up sweep failed: {}", e.what());
        }
    }
}

asio::awaitable<void> intake::impl::health_loop() {
    std::set<std::string> quiet_before;
    while (!stopping) {
        co_await sleep_for(std::chrono::seconds(30));
        if (!leading()) {
            continue;
        }
        auto job = [this] {
            std::vector<std::pair<std::string, std::int64_t>> out;
            pqxx::nontransaction tx(db->connection());
            for (const auto& r : tx.exec_params(q("intake/events_health"), cfg.events_quiet_seconds)) {
                out.emplace_back(r[0].as<std::string>(), r[2].as<std::int64_t>());
            }
            return out;
        };
        try {
            auto quiet = co_await on_db(job);
            std::set<std::string> now_quiet;
            for (const auto& [account, pending] : quiet) {
                now_quiet.insert(account);
                if (quiet_before.count(account) == 0) {
                    spdlog::warn("serve: events health degraded: account={} has {} pending invitations and no event "
                                 "for over {} s; the catch-up sweep covers it, but check its webhook",
                                 orch::text::escaped(account), pending, cfg.events_quiet_seconds);
                }
            }
            quiet_before = std::move(now_quiet);
        } catch (const std::exception& e) {
            spdlog::error("serve: events health check failed: {}", e.what());
        }
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
    auto fail = [&m](const std::string& why) {
        spdlog::critical("serve: {}", why);
        m.db_pool.join();
        return 2;
    };
    if (m.custom_mode() && !m.box) {
        return fail("webhook_public_url is set but ORCH_SECRET_KEY is not: signing secrets are stored encrypted "
                    "with it (at least 32 characters)");
    }
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
        return fail(problem);
    }
    try {
        m.limiter = std::make_unique<limits::limiter>(limiter_settings(m.cfg));
        // A first look at the limits' state: one lost later is then said as lost when a take
        // finds it gone, not as a first start.
        m.limiter->ensure_state();
    } catch (const std::exception& e) {
        return fail(std::string("rate-limit buckets: ") + e.what());
    }
    auto made = outreach::client::make(m.io.get_executor(),
                                       api_client_settings(m.cfg, static_cast<std::size_t>(m.cfg.api_pool_size)));
    if (!made) {
        return fail("bad API settings: " + outreach::describe(made.error()));
    }
    m.api.emplace(std::move(*made));

    api::server_settings ss;
    std::string error;
    if (!api::parse_host_port(m.cfg.webhook_listen, ss.listen_host, ss.listen_port, error)) {
        return fail("webhook_listen: " + error);
    }
    ss.server_name = "orchestrator-webhooks";
    // The server's own answers (413, 431, malformed HTTP) in the receiver's error shape.
    ss.error_body = [](http::status status, std::string_view, std::string_view message) {
        return json{{"error", {{"status", static_cast<int>(status)}, {"message", std::string(message)}}}}.dump();
    };
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
        return fail("cannot start the webhook receiver on " + m.cfg.webhook_listen + " (webhook_listen): " + e.what());
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
            m.admin = std::make_unique<admin_server>(m.io, m.cfg, &*m.api, &m.stats);
        } catch (const std::exception& e) {
            m.server->stop();
            return fail("cannot start the admin endpoint on " + m.cfg.admin_listen + " (admin_listen): " + e.what());
        }
        m.admin->start();
        spdlog::info("serve: admin endpoint on {} (port {})", m.cfg.admin_listen, m.admin->port());
    }
    if (!m.cfg.inbox_not_interested_pattern.empty()) {
        // Checked when the settings were read; a regex_error here would be a bug, not input.
        m.not_interested.emplace(m.cfg.inbox_not_interested_pattern);
    }
    m.replies = std::make_unique<inbox_sender>(
        m.cfg, m.cfg.worker_id.empty() ? std::string("serve") : "serve:" + m.cfg.worker_id, m.database_outage);
    m.replies->start();
    asio::co_spawn(m.io, m.leader_loop(), asio::detached);
    asio::co_spawn(m.io, m.ensure_webhooks(), asio::detached);
    asio::co_spawn(m.io, m.credits_loop(), asio::detached);
    asio::co_spawn(m.io, m.sweep_loop(), asio::detached);
    asio::co_spawn(m.io, m.health_loop(), asio::detached);
    m.io.run();
    m.replies->stop();
    m.db_pool.join();
    m.lock_pool.join();
    m.gate_pool.join();
    return 0;
}

}  // namespace orch::engine
