// V1 endpoints of the messaging platform and of webhook accounts (spec "Messaging send",
// "Webhook accounts (V1)", "Monitoring state of a webhook account", "Messaging account
// authentication", Limits; api-facts 3.6):
//
//   POST   /messages/send                     send from a messaging account (1 credit)
//   POST   /v1/webhooks/accounts              create (network: login_token; messaging:
//                                             phone_number, starts the QR flow)
//   GET    /v1/webhooks/accounts              list
//   GET    /v1/webhooks/accounts/{id}         one
//   PUT    /v1/webhooks/accounts/{id}         update
//   DELETE /v1/webhooks/accounts/{id}         delete (ends QR generation and monitoring)
//   POST   /v1/webhooks/accounts/{id}/start   start monitoring (network; 10 credits per day)
//   POST   /v1/webhooks/accounts/{id}/stop    stop monitoring (network; the day stays charged)
//
// A messaging account pushes a QR code to its qr_webhook_url at creation and a new one every
// qr_refresh_ms (20 s) until the control interface simulates a scan; then it is authenticated
// and active. An active network account receives at its webhook_url the events of the V2
// account that the same key logged in with the same login_token. Deliveries are unsigned (spec,
// Authentication 6), ordered per account and channel (QR codes, events), and retried like V2
// custom deliveries (webhook_max_attempts, webhook_retry_base_ms).
#include "sandbox/webhook_runtime.hpp"

#include "engine/time_format.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>

namespace orch::sandbox {

namespace {

// Bounds (STYLE B7).
constexpr std::size_t accounts_per_key_max = 1'000;
constexpr std::size_t outbox_max = 1'000; // pending deliveries per account and channel
constexpr std::size_t url_length_max = 2'048;
constexpr std::size_t name_length_max = 200;
constexpr std::size_t token_length_max = 4'096;
constexpr std::size_t message_id_length_max = 256;
constexpr std::size_t account_id_length_max = 128;
constexpr int retry_shift_max = 20;
constexpr std::int64_t day_ms = 86'400'000;
constexpr std::uint64_t qr_salt = 0x71722d636f6465ULL;
constexpr const char* default_country = "FR";

std::int64_t unix_ms(time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::size_t utf8_length(const std::string& text) {
    std::size_t n = 0;
    for (unsigned char c : text) {
        n += (c & 0xC0) != 0x80 ? 1 : 0;
    }
    return n;
}

// Caller text inside an error message, cut so that a huge value cannot bloat the answer.
std::string in_quotes(const std::string& text) {
    constexpr std::size_t max_chars = 120;
    return "'" + (text.size() <= max_chars ? text : text.substr(0, max_chars) + "...") + "'";
}

const char* type_name(const json& v) {
    if (v.is_string()) return "a string";
    if (v.is_boolean()) return "a boolean";
    if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
    if (v.is_number()) return "a number";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    return "null";
}

bool all_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// ---------------------------------------------------------------------------------------------
// State

enum class channel { qr, events };

struct delivery_item {
    std::string body;
    std::string what;                 // for log lines: "qr_code #3", "event <id>"
    bool needs_active = true;         // events go out only while the account is monitored
    std::uint64_t qr_sequence = 0;    // a QR code: dropped once scanned or superseded
};

// The ordered deliveries of one channel of an account, drained by one coroutine.
struct outbox {
    std::deque<delivery_item> items;
    bool delivering = false;
    std::shared_ptr<asio::steady_timer> wake; // the deliverer's backoff sleep; delete cancels it
};

struct v1_account {
    std::uint64_t seq = 0;            // creation order, for listing
    std::string id;                   // "wha_<16 hex>"
    std::string key;
    std::string platform;             // network | messaging
    std::string account_name;
    std::string webhook_url;
    std::string qr_webhook_url;       // messaging; empty: follows webhook_url
    std::string country;
    std::string login_token;          // network
    std::string phone_number;         // messaging, "+<digits>"
    bool active = false;              // monitoring (network: start/stop; messaging: after the scan)
    bool authenticated = false;       // messaging: the QR code was scanned
    time_point created_at{};
    time_point updated_at{};
    std::int64_t charged_day = -1;    // (simulated) UTC day whose monitoring fee is paid
    std::uint64_t qr_sequence = 0;    // codes issued so far
    std::string qr_code;              // the current code; empty once authenticated
    time_point qr_expires_at{};
    outbox qr_out;
    outbox events_out;

    bool messaging() const { return platform == "messaging"; }
    const std::string& qr_url() const { return qr_webhook_url.empty() ? webhook_url : qr_webhook_url; }
    outbox& box(channel ch) { return ch == channel::qr ? qr_out : events_out; }
};

struct v1_accounts_area {
    explicit v1_accounts_area(service& s) : svc(s) { schedule_midnight(); }

    service& svc;
    std::map<std::string, v1_account> accounts;
    std::uint64_t created = 0;
    // Days added to the service clock's UTC day (control: advance-day), so tests can cross a
    // day boundary without waiting for midnight.
    std::int64_t day_offset = 0;

    std::int64_t today() const { return unix_ms(svc.now()) / day_ms + day_offset; }
    v1_account* find(const std::string& id) {
        auto it = accounts.find(id);
        return it == accounts.end() ? nullptr : &it->second;
    }
    void schedule_midnight();
};

v1_accounts_area& area_of(service& svc) { return svc.area<v1_accounts_area>(); }

// ---------------------------------------------------------------------------------------------
// Errors and field checks. V1 messages name the bare field ("to must ...").

api_error unknown_webhook_account(const std::string& id) {
    return {"NOT_FOUND", 404, "webhook account '" + id + "' does not exist or does not belong to this API key"};
}
api_error invalid_account(const std::string& id) {
    return {"INVALID_ACCOUNT", 404, "account '" + id + "' does not exist or does not belong to this API key"};
}
api_error account_inactive(std::string message) { return {"ACCOUNT_INACTIVE", 403, std::move(message)}; }

// The field when present and not null.
const json* present(const json& body, const char* name) {
    auto it = body.find(name);
    return it == body.end() || it->is_null() ? nullptr : &*it;
}

// A non-empty string of at most `max_chars` characters; nullopt when absent or null.
std::optional<std::string> text_field(const json& body, const char* name, std::size_t max_chars) {
    const json* v = present(body, name);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_string()) {
        throw invalid_params(std::string(name) + " must be a string, got " + type_name(*v));
    }
    const auto& text = v->get_ref<const std::string&>();
    if (text.empty()) {
        throw invalid_params(std::string(name) + " must not be empty");
    }
    if (utf8_length(text) > max_chars) {
        throw invalid_params(std::string(name) + " must be at most " + std::to_string(max_chars) + " characters");
    }
    return text;
}

std::string required_text(const json& body, const char* name, std::size_t max_chars, const std::string& hint = "") {
    auto v = text_field(body, name, max_chars);
    if (!v) {
        throw invalid_params(std::string(name) + " is required" + hint);
    }
    return *v;
}

// An absolute http(s) URL with a host. The sandbox takes plain http so local receivers work.
std::string checked_url(const std::string& text, const char* name) {
    auto parsed = boost::urls::parse_uri(text);
    if (!parsed) {
        throw invalid_params(std::string(name) + " must be an absolute http or https URL, got " + in_quotes(text));
    }
    std::string scheme(parsed->scheme());
    std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
    if (scheme != "http" && scheme != "https") {
        throw invalid_params(std::string(name) + " must use http or https, got " + in_quotes(text));
    }
    if (!parsed->has_authority() || parsed->encoded_host().empty()) {
        throw invalid_params(std::string(name) + " must name a host, got " + in_quotes(text));
    }
    return text;
}

std::string checked_country(const std::string& text) {
    if (text.size() != 2 || !std::isalpha(static_cast<unsigned char>(text[0])) ||
        !std::isalpha(static_cast<unsigned char>(text[1]))) {
        throw invalid_params("country must be a two-letter country code, got " + in_quotes(text));
    }
    std::string out = text;
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::toupper(c); });
    return out;
}

// International format: "+33612345678" (spaces and dashes between digits are dropped, the plus
// may be left out), 8 to 15 digits starting with the country code. Stored as "+<digits>".
std::string checked_phone(const std::string& text) {
    std::string digits;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if ((i == 0 && c == '+') || c == ' ' || c == '-') {
            continue;
        }
        if (!std::isdigit(static_cast<unsigned char>(c))) {
            throw invalid_params("phone_number must be an international number such as +33612345678, got " +
                                 in_quotes(text));
        }
        digits += c;
    }
    if (digits.size() < 8 || digits.size() > 15 || digits[0] == '0') {
        throw invalid_params("phone_number must have 8 to 15 digits starting with the country code, got " +
                             in_quotes(text));
    }
    return "+" + digits;
}

// /messages/send's `to`: the international number as digits only, without a plus sign.
std::string checked_recipient(const json& body) {
    std::string to = required_text(body, "to", 32, " (international number without '+', e.g. 33612345678)");
    if (to[0] == '+') {
        throw invalid_params("to must be the international number without a plus sign (e.g. 33612345678), got " +
                             in_quotes(to));
    }
    if (!all_digits(to)) {
        throw invalid_params("to must contain digits only (e.g. 33612345678), got " + in_quotes(to));
    }
    if (to.size() < 8 || to.size() > 15) {
        throw invalid_params("to must have 8 to 15 digits (country code and number), got " + in_quotes(to));
    }
    if (to[0] == '0') {
        throw invalid_params("to must start with the country code, not 0, got " + in_quotes(to));
    }
    return to;
}

std::string checked_platform(const json& body) {
    // The newer docs page spells the field `plateforme` (api-facts 5); the spec's `platform` wins
    // and both are accepted.
    auto platform = text_field(body, "platform", 32);
    auto alias = text_field(body, "plateforme", 32);
    if (platform && alias && *platform != *alias) {
        throw invalid_params("platform and plateforme disagree; give one of them");
    }
    auto value = platform ? platform : alias;
    if (!value) {
        throw invalid_params("platform is required ('network' or 'messaging')");
    }
    if (*value != "network" && *value != "messaging") {
        throw invalid_params("platform must be 'network' or 'messaging', got " + in_quotes(*value));
    }
    return *value;
}

struct quote {
    std::string message_id;
    std::string text;
    std::int64_t timestamp_ms = 0;
    bool from_me = false;
};

std::int64_t checked_timestamp(const json& v) {
    if (!v.is_number()) {
        throw invalid_params(std::string("quoted_timestamp must be a number (Unix milliseconds), got ") +
                             type_name(v));
    }
    constexpr auto max = std::numeric_limits<std::int64_t>::max();
    if (v.is_number_unsigned()) {
        if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
            throw invalid_params("quoted_timestamp is too large for Unix milliseconds");
        }
        return static_cast<std::int64_t>(v.get<std::uint64_t>());
    }
    if (v.is_number_integer()) {
        if (v.get<std::int64_t>() < 0) {
            throw invalid_params("quoted_timestamp must not be negative");
        }
        return v.get<std::int64_t>();
    }
    double d = v.get<double>();
    if (!std::isfinite(d) || d < 0 || d >= 9.0e18) {
        throw invalid_params("quoted_timestamp must be a non-negative number of Unix milliseconds");
    }
    return static_cast<std::int64_t>(d);
}

// The four quoted_* fields of a reply: all or none (spec, Messaging send).
std::optional<quote> checked_quote(const json& body) {
    static constexpr const char* names[] = {"quoted_message_id", "quoted_text", "quoted_timestamp", "quoted_from_me"};
    std::string missing;
    int given = 0;
    for (const char* name : names) {
        if (present(body, name) != nullptr) {
            ++given;
        } else {
            missing += (missing.empty() ? "" : ", ") + std::string(name);
        }
    }
    if (given == 0) {
        return std::nullopt;
    }
    if (given < 4) {
        throw invalid_params("quoted_message_id, quoted_text, quoted_timestamp and quoted_from_me must be given "
                             "together when replying; missing: " + missing);
    }
    quote q;
    q.message_id = required_text(body, "quoted_message_id", message_id_length_max);
    const json& text = *present(body, "quoted_text");
    if (!text.is_string()) {
        throw invalid_params(std::string("quoted_text must be a string, got ") + type_name(text));
    }
    q.text = text.get<std::string>(); // may be empty: a quoted media message has no text
    q.timestamp_ms = checked_timestamp(*present(body, "quoted_timestamp"));
    const json& from_me = *present(body, "quoted_from_me");
    if (!from_me.is_boolean()) {
        throw invalid_params(std::string("quoted_from_me must be a boolean, got ") + type_name(from_me));
    }
    q.from_me = from_me.get<bool>();
    return q;
}

// ---------------------------------------------------------------------------------------------
// Records and deliveries

json account_record(const v1_account& a) {
    json r = {{"id", a.id},
              {"platform", a.platform},
              {"account_name", a.account_name},
              {"webhook_url", a.webhook_url},
              {"is_active", a.active},
              {"country", a.country}};
    if (a.messaging()) {
        r["is_authenticated"] = a.authenticated;
        r["needs_qr"] = !a.authenticated;
        r["phone_number"] = a.phone_number;
        r["qr_webhook_url"] = a.qr_url();
    } else {
        r["login_token"] = a.login_token;
    }
    r["created_at"] = iso8601_ms(a.created_at);
    r["updated_at"] = iso8601_ms(a.updated_at);
    return r;
}

// The V2 event wrapper (api-facts 1.2), addressed to the V1 account.
std::string wrapper(const v1_account& a, json event, time_point at) {
    json body = {{"account_id", a.id},
                 {"account_name", a.account_name},
                 {"platform", a.platform},
                 {"event", std::move(event)},
                 {"timestamp", iso8601_s(at)}};
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

void log_coroutine_exception(std::exception_ptr e) {
    if (!e) {
        return;
    }
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        spdlog::error("v1 accounts: delivery coroutine ended by exception: {}", ex.what());
    }
}

// Why `item` must not be (re)tried any more; empty when it may.
std::string stop_reason(v1_account* a, channel ch, const delivery_item& item) {
    if (a == nullptr) {
        return "account deleted";
    }
    if (ch == channel::events && item.needs_active && !a->active) {
        return "monitoring stopped";
    }
    if (item.qr_sequence != 0 && (a->authenticated || a->qr_sequence != item.qr_sequence)) {
        return "QR code scanned or superseded";
    }
    return {};
}

// Delivers one item with retries; the URL is read at every attempt (PUT may change it).
asio::awaitable<void> deliver(service& svc, std::string id, channel ch, delivery_item item,
                              std::shared_ptr<asio::steady_timer> wake) {
    auto& area = area_of(svc);
    const int max_attempts = std::max(1, svc.cfg().webhook_max_attempts);
    std::string last_error;
    for (int attempt = 1; attempt <= max_attempts; ++attempt) {
        v1_account* a = area.find(id);
        if (auto why = stop_reason(a, ch, item); !why.empty()) {
            spdlog::info("v1 accounts: id={} {} not delivered: {}", id, item.what, why);
            co_return;
        }
        std::string url = ch == channel::qr ? a->qr_url() : a->webhook_url;
        post_outcome r = co_await post_json_once(svc, url, item.body);
        if (r.status >= 200 && r.status < 300) {
            co_return;
        }
        last_error = r.status != 0 ? "HTTP " + std::to_string(r.status) : r.error;
        if (r.permanent || attempt == max_attempts) {
            break;
        }
        auto base_ms = std::max<std::int64_t>(1, svc.cfg().webhook_retry_base_ms);
        wake->expires_after(std::chrono::milliseconds(base_ms << std::min(attempt - 1, retry_shift_max)));
        co_await wake->async_wait(asio::as_tuple(asio::use_awaitable));
    }
    spdlog::warn("v1 accounts: id={} {} dropped, last error: {}", id, item.what, last_error);
}

asio::awaitable<void> run_outbox(service& svc, std::string id, channel ch) {
    auto& area = area_of(svc);
    for (;;) {
        v1_account* a = area.find(id);
        if (a == nullptr) {
            co_return;
        }
        outbox& box = a->box(ch);
        if (box.items.empty()) {
            box.delivering = false;
            co_return;
        }
        delivery_item item = std::move(box.items.front());
        box.items.pop_front();
        co_await deliver(svc, id, ch, std::move(item), box.wake);
    }
}

void enqueue(service& svc, v1_account& a, channel ch, delivery_item item) {
    outbox& box = a.box(ch);
    if (box.items.size() >= outbox_max) {
        spdlog::warn("v1 accounts: id={} outbox full; {} dropped", a.id, box.items.front().what);
        box.items.pop_front();
    }
    box.items.push_back(std::move(item));
    if (!box.delivering) {
        box.delivering = true;
        asio::co_spawn(svc.executor(), run_outbox(svc, a.id, ch), log_coroutine_exception);
    }
}

// ---------------------------------------------------------------------------------------------
// QR codes of messaging accounts

std::string make_qr_code(const service& svc, const v1_account& a) {
    auto base = a.id + "#" + std::to_string(a.qr_sequence);
    std::uint64_t seed = svc.cfg().seed ^ qr_salt;
    return "2@" + hex(hash64(base, seed)) + hex(hash64(base + "/a", seed)) + "," + hex(hash64(base + "/b", seed)) +
           ",1";
}

// Issues the next code of an account still waiting for its scan, sends it to qr_webhook_url and
// schedules the one after. The sequence check keeps a single chain per account.
void issue_qr(service& svc, const std::string& id) {
    v1_account* a = area_of(svc).find(id);
    if (a == nullptr || a->authenticated) {
        return;
    }
    auto now = svc.now();
    auto lifetime = std::chrono::milliseconds(svc.cfg().qr_refresh_ms);
    ++a->qr_sequence;
    a->qr_code = make_qr_code(svc, *a);
    a->qr_expires_at = now + lifetime;
    json event = {{"type", "qr_code"},
                  {"qr_code", a->qr_code},
                  {"sequence", a->qr_sequence},
                  {"phone_number", a->phone_number},
                  {"expires_at", iso8601_ms(a->qr_expires_at)},
                  {"expires_in_ms", lifetime.count()},
                  {"timestamp", iso8601_ms(now)}};
    enqueue(svc, *a, channel::qr,
            {wrapper(*a, std::move(event), now), "qr_code #" + std::to_string(a->qr_sequence), false,
             a->qr_sequence});
    svc.schedule_after(lifetime, [&svc, id, sequence = a->qr_sequence] {
        v1_account* current = area_of(svc).find(id);
        if (current != nullptr && !current->authenticated && current->qr_sequence == sequence) {
            issue_qr(svc, id);
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Monitoring charge of network accounts

// Ends monitoring; `reason` non-empty also tells webhook_url with a disconnection event.
void stop_monitoring(service& svc, v1_account& a, const std::string& reason) {
    a.active = false;
    a.updated_at = svc.now();
    a.events_out.items.clear(); // "no webhooks are sent" after a stop
    if (!reason.empty()) {
        json event = {{"type", "disconnection"}, {"reason", reason}, {"timestamp", iso8601_s(svc.now())}};
        enqueue(svc, a, channel::events, {wrapper(a, std::move(event), svc.now()), "disconnection", false, 0});
    }
}

struct day_result {
    int charged = 0;
    int stopped = 0;
};

// Charges the current day for every active network account not yet charged for it; accounts
// whose key cannot pay stop monitoring.
day_result charge_day(service& svc, v1_accounts_area& area) {
    day_result out;
    auto today = area.today();
    auto fee = svc.cfg().monitoring_credits_per_day;
    for (auto& [id, a] : area.accounts) {
        if (a.messaging() || !a.active || a.charged_day == today) {
            continue;
        }
        key_state* key = svc.find_key(a.key);
        if (fee <= 0 || (key != nullptr && key->credits >= fee)) {
            if (fee > 0) {
                svc.record_charge(*key, "v1_monitoring", fee);
            }
            a.charged_day = today;
            ++out.charged;
            continue;
        }
        spdlog::info("v1 accounts: id={} cannot pay monitoring; monitoring stopped", id);
        stop_monitoring(svc, a, "monitoring stopped: insufficient credits for the daily monitoring charge");
        ++out.stopped;
    }
    return out;
}

void v1_accounts_area::schedule_midnight() {
    auto now_ms = unix_ms(svc.now());
    auto next_midnight_ms = (now_ms / day_ms + 1) * day_ms;
    svc.schedule_after(std::chrono::milliseconds(next_midnight_ms - now_ms + 5), [this] {
        charge_day(svc, *this);
        schedule_midnight();
    });
}

// ---------------------------------------------------------------------------------------------
// Handlers

v1_account& owned_account(v1_context& ctx) {
    const std::string& id = ctx.path_params.at("id");
    v1_account* a = area_of(ctx.svc).find(id);
    if (a == nullptr || a->key != ctx.key.key) {
        throw unknown_webhook_account(id);
    }
    return *a;
}

// One webhook account per (key, login_token) and per (key, phone number).
void check_unique(v1_accounts_area& area, const std::string& key, const std::string& platform,
                  const std::string& credential, const std::string& self_id) {
    bool messaging = platform == "messaging";
    for (const auto& [id, a] : area.accounts) {
        if (id == self_id || a.key != key || a.platform != platform ||
            (messaging ? a.phone_number : a.login_token) != credential) {
            continue;
        }
        throw api_error("INVALID_PARAMS", 400,
                        (messaging ? "phone_number " + credential : std::string("login_token")) +
                            " is already used by webhook account '" + id + "'",
                        json{{"existing_id", id}});
    }
}

void refuse_field(const json& body, const char* name, const char* platform) {
    if (present(body, name) != nullptr) {
        throw invalid_params(std::string(name) + " is only for " + platform + " accounts");
    }
}

// The fields of a new account from the create body.
v1_account account_from_body(const json& body) {
    v1_account a;
    a.platform = checked_platform(body);
    a.account_name = required_text(body, "account_name", name_length_max);
    a.webhook_url = checked_url(required_text(body, "webhook_url", url_length_max), "webhook_url");
    auto country = text_field(body, "country", 8);
    a.country = country ? checked_country(*country) : default_country;
    if (!a.messaging()) {
        refuse_field(body, "phone_number", "messaging");
        refuse_field(body, "qr_webhook_url", "messaging");
        a.login_token = required_text(body, "login_token", token_length_max, " for network accounts");
        return a;
    }
    refuse_field(body, "login_token", "network");
    a.phone_number = checked_phone(required_text(body, "phone_number", 32,
                                                 " for messaging accounts (international format, e.g. +33612345678)"));
    if (auto qr = text_field(body, "qr_webhook_url", url_length_max)) {
        a.qr_webhook_url = checked_url(*qr, "qr_webhook_url");
    }
    return a;
}

json create_account(v1_context& ctx) {
    auto& area = area_of(ctx.svc);
    v1_account a = account_from_body(ctx.body);
    check_unique(area, ctx.key.key, a.platform, a.messaging() ? a.phone_number : a.login_token, "");
    auto owned = std::count_if(area.accounts.begin(), area.accounts.end(),
                               [&](const auto& entry) { return entry.second.key == ctx.key.key; });
    if (static_cast<std::size_t>(owned) >= accounts_per_key_max) {
        throw invalid_params("this API key already has " + std::to_string(accounts_per_key_max) +
                             " webhook accounts, the limit; delete one first");
    }
    a.seq = ++area.created;
    a.id = ctx.svc.new_id("wha_");
    a.key = ctx.key.key;
    a.created_at = a.updated_at = ctx.now;
    a.qr_out.wake = std::make_shared<asio::steady_timer>(ctx.svc.executor());
    a.events_out.wake = std::make_shared<asio::steady_timer>(ctx.svc.executor());
    std::string id = a.id;
    v1_account& stored = area.accounts.emplace(id, std::move(a)).first->second;
    ctx.side_effect = true;
    if (stored.messaging()) {
        // Spec: QR generation starts at once for messaging accounts.
        issue_qr(ctx.svc, id);
    }
    return account_record(stored);
}

json list_accounts(v1_context& ctx) {
    std::vector<const v1_account*> mine;
    for (const auto& [id, a] : area_of(ctx.svc).accounts) {
        if (a.key == ctx.key.key) {
            mine.push_back(&a);
        }
    }
    std::sort(mine.begin(), mine.end(), [](const auto* x, const auto* y) { return x->seq < y->seq; });
    json items = json::array();
    for (const auto* a : mine) {
        items.push_back(account_record(*a));
    }
    auto total = items.size();
    return json{{"accounts", std::move(items)}, {"total", total}};
}

json get_account(v1_context& ctx) { return account_record(owned_account(ctx)); }

// A field that cannot change: refused unless it repeats the current value (a client may send
// the whole record back).
void refuse_change(const json& body, const char* name, const json& current, const std::string& how) {
    const json* v = present(body, name);
    if (v != nullptr && *v != current) {
        throw invalid_params(std::string(name) + " cannot be changed; " + how);
    }
}

json update_account(v1_context& ctx) {
    v1_account& a = owned_account(ctx);
    const json& body = ctx.body;
    const std::string recreate = "delete the webhook account and create a new one";
    refuse_change(body, "platform", a.platform, recreate);
    refuse_change(body, "plateforme", a.platform, recreate);
    if (a.messaging()) {
        refuse_change(body, "phone_number", a.phone_number, recreate);
    } else {
        refuse_field(body, "phone_number", "messaging");
    }
    refuse_change(body, "is_active", a.active, "use POST /v1/webhooks/accounts/{id}/start or /stop");
    auto name = text_field(body, "account_name", name_length_max);
    auto url = text_field(body, "webhook_url", url_length_max);
    auto qr = text_field(body, "qr_webhook_url", url_length_max);
    auto token = text_field(body, "login_token", token_length_max);
    auto country = text_field(body, "country", 8);
    if (url) {
        checked_url(*url, "webhook_url");
    }
    if (qr && !a.messaging()) {
        refuse_field(body, "qr_webhook_url", "messaging");
    }
    if (qr) {
        checked_url(*qr, "qr_webhook_url");
    }
    if (token && a.messaging()) {
        refuse_field(body, "login_token", "network");
    }
    auto country_code = country ? std::optional<std::string>(checked_country(*country)) : std::nullopt;
    if (!name && !url && !qr && !token && !country) {
        throw invalid_params("nothing to update: give at least one of account_name, webhook_url, qr_webhook_url "
                             "(messaging), login_token (network), country");
    }
    if (token) {
        check_unique(area_of(ctx.svc), ctx.key.key, a.platform, *token, a.id);
    }
    // Everything is valid: apply.
    a.account_name = name.value_or(a.account_name);
    a.webhook_url = url.value_or(a.webhook_url);
    a.qr_webhook_url = qr.value_or(a.qr_webhook_url);
    a.login_token = token.value_or(a.login_token);
    a.country = country_code.value_or(a.country);
    a.updated_at = ctx.now;
    ctx.side_effect = true;
    return account_record(a);
}

json delete_account(v1_context& ctx) {
    v1_account& a = owned_account(ctx);
    std::string id = a.id;
    // Deliverers notice the account is gone at their next step; wake the sleeping ones now.
    a.qr_out.wake->cancel();
    a.events_out.wake->cancel();
    area_of(ctx.svc).accounts.erase(id);
    ctx.side_effect = true;
    ctx.message = "webhook account deleted";
    return json{{"id", id}, {"deleted", true}};
}

json start_account(v1_context& ctx) {
    auto& area = area_of(ctx.svc);
    v1_account& a = owned_account(ctx);
    if (a.messaging()) {
        throw invalid_params("start is for network accounts; a messaging account is monitored once its QR code is "
                             "scanned");
    }
    std::int64_t charged = 0;
    bool was_active = a.active;
    if (!was_active) {
        auto fee = ctx.svc.cfg().monitoring_credits_per_day;
        if (a.charged_day != area.today() && fee > 0) {
            ctx.charge(fee);
            charged = fee;
        }
        a.charged_day = area.today();
        a.active = true;
        a.updated_at = ctx.now;
        ctx.side_effect = true;
    }
    ctx.message = was_active    ? std::string("monitoring was already active")
                  : charged > 0 ? "monitoring started; " + std::to_string(charged) + " credits charged for today"
                                : std::string("monitoring started; no further charge today");
    ctx.top_level["credits_cost"] = charged;
    return account_record(a);
}

json stop_account(v1_context& ctx) {
    v1_account& a = owned_account(ctx);
    if (a.messaging()) {
        throw invalid_params("messaging accounts are not stopped; delete the account instead");
    }
    std::string message = a.active ? "monitoring stopped; today's monitoring credits stay charged"
                                   : "monitoring was not active";
    if (a.active) {
        stop_monitoring(ctx.svc, a, "");
        ctx.side_effect = true;
    }
    ctx.message = message;
    return json{{"account_id", a.id}, {"is_active", false}, {"message", message}};
}

// The sender of /messages/send: an authenticated V1 messaging account, or a connected V2
// account logged in on the messaging platform.
void check_sender(v1_context& ctx, const std::string& id) {
    const std::string network_refusal =
        "account_id '" + id + "' is a network account; /messages/send needs a messaging account";
    if (v1_account* a = area_of(ctx.svc).find(id); a != nullptr && a->key == ctx.key.key) {
        if (!a->messaging()) {
            throw invalid_params(network_refusal);
        }
        if (!a->authenticated) {
            throw account_inactive("messaging account '" + id +
                                   "' is not authenticated yet: scan the QR code sent to its qr_webhook_url");
        }
        return;
    }
    account_state* account = ctx.svc.find_account(id);
    if (account == nullptr || account->key != ctx.key.key) {
        throw invalid_account(id);
    }
    if (account->platform != "messaging") {
        throw invalid_params(network_refusal);
    }
    if (!account->active || account->status != "connected") {
        throw account_inactive("account '" + id + "' is inactive; log in again to reactivate it");
    }
}

json messaging_send(v1_context& ctx) {
    const json& body = ctx.body;
    std::string account_id = required_text(body, "account_id", account_id_length_max);
    check_sender(ctx, account_id);
    std::string to = checked_recipient(body);
    std::string text = required_text(body, "message", std::numeric_limits<std::size_t>::max());
    auto max_chars = static_cast<std::size_t>(std::max(0, ctx.svc.cfg().message_max_chars));
    if (utf8_length(text) > max_chars) {
        throw invalid_params("message is " + std::to_string(utf8_length(text)) + " characters long; the limit is " +
                             std::to_string(max_chars));
    }
    auto reply_to = checked_quote(body);
    ctx.charge(1);
    ctx.side_effect = true;
    std::string message_id = ctx.svc.new_id("msg_");
    ctx.svc.message_records().push_back(message_record{account_id, "", text, ctx.now, "messaging", to});
    json data = {{"account_id", account_id},
                 {"to", to},
                 {"message", text},
                 {"message_id", message_id},
                 {"status", "sent"},
                 {"timestamp", unix_ms(ctx.now)}};
    if (reply_to) {
        data["quoted_message_id"] = reply_to->message_id;
    }
    ctx.message = "message sent to " + to;
    return data;
}

// ---------------------------------------------------------------------------------------------
// Control interface (/control/v1-accounts...)

using control_answer = std::pair<int, json>;

control_answer control_failure(int status, std::string message) { return {status, json{{"error", message}}}; }

control_answer control_list(v1_accounts_area& area) {
    json out = json::array();
    for (const auto& [id, a] : area.accounts) {
        json r = account_record(a);
        r["key"] = a.key;
        r["qr_code"] = a.qr_code;
        r["qr_sequence"] = a.qr_sequence;
        r["charged_day"] = a.charged_day;
        r["pending_deliveries"] = a.qr_out.items.size() + a.events_out.items.size();
        out.push_back(std::move(r));
    }
    return {200, json{{"accounts", std::move(out)}, {"day", area.today()}, {"day_offset", area.day_offset}}};
}

// A simulated scan of the current QR code (`qr_code` in the body, when given, must be it).
control_answer control_scan(service& svc, v1_account& a, const json& body) {
    if (!a.messaging()) {
        return control_failure(409, "webhook account '" + a.id + "' is a network account; only messaging accounts "
                                                                 "have QR codes");
    }
    if (a.authenticated) {
        return control_failure(409, "webhook account '" + a.id + "' is already authenticated");
    }
    if (auto it = body.find("qr_code"); it != body.end()) {
        if (!it->is_string() || it->get<std::string>() != a.qr_code || svc.now() >= a.qr_expires_at) {
            return control_failure(409, "that QR code is not the current one (expired, superseded or never issued)");
        }
    }
    auto now = svc.now();
    a.authenticated = true;
    a.active = true; // api-facts 3.6: once scanned, the account is authenticated and monitoring begins
    a.qr_code.clear();
    a.updated_at = now;
    json event = {{"type", "authenticated"}, {"phone_number", a.phone_number}, {"timestamp", iso8601_ms(now)}};
    enqueue(svc, a, channel::qr, {wrapper(a, std::move(event), now), "authenticated", false, 0});
    return {200, account_record(a)};
}

// A simulated incoming message on a monitored messaging account, delivered to webhook_url.
control_answer control_inbound(service& svc, v1_account& a, const json& body) {
    if (!a.messaging() || !a.active) {
        return control_failure(409, "webhook account '" + a.id + "' is not a monitored messaging account");
    }
    auto from = body.find("from");
    if (from == body.end() || !from->is_string() || !all_digits(from->get<std::string>())) {
        return control_failure(400, "from (digits of the sender's number) is required");
    }
    std::string text = body.value("text", std::string("Hello!"));
    std::string message_id = svc.new_id("msg_");
    json event = {{"type", "message"},
                  {"message_id", message_id},
                  {"from", from->get<std::string>()},
                  {"message_text", text},
                  {"timestamp", iso8601_ms(svc.now())}};
    enqueue(svc, a, channel::events, {wrapper(a, std::move(event), svc.now()), "message " + message_id, true, 0});
    return {200, json{{"done", true}, {"message_id", message_id}}};
}

} // namespace

void register_v1_accounts_routes(v1_table& table) {
    table.add("POST", "/messages/send", "messaging_send", messaging_send);
    table.add("POST", "/v1/webhooks/accounts", "create_webhook_account", create_account);
    table.add("GET", "/v1/webhooks/accounts", "list_webhook_accounts", list_accounts);
    table.add("GET", "/v1/webhooks/accounts/{id}", "get_webhook_account", get_account);
    table.add("PUT", "/v1/webhooks/accounts/{id}", "update_webhook_account", update_account);
    table.add("DELETE", "/v1/webhooks/accounts/{id}", "delete_webhook_account", delete_account);
    table.add("POST", "/v1/webhooks/accounts/{id}/start", "start_webhook_account", start_account);
    table.add("POST", "/v1/webhooks/accounts/{id}/stop", "stop_webhook_account", stop_account);
}

void fan_out_v1_event(service& svc, const std::shared_ptr<const stored_event>& event) {
    auto& area = area_of(svc);
    if (area.accounts.empty()) {
        return;
    }
    // E-mail logins keep a password hash in login_token: only token logins can match.
    const account_state* source = svc.find_account(event->account_id);
    if (source == nullptr || source->platform != "network" || !source->email.empty() ||
        source->login_token.empty()) {
        return;
    }
    for (auto& [id, a] : area.accounts) {
        if (a.messaging() || !a.active || a.key != source->key || a.login_token != source->login_token) {
            continue;
        }
        json body = event->payload;
        body["account_id"] = a.id;
        body["account_name"] = a.account_name;
        body["platform"] = a.platform;
        body["event_id"] = event->event_id;
        enqueue(svc, a, channel::events,
                {body.dump(-1, ' ', false, json::error_handler_t::replace), "event " + event->event_id, true, 0});
    }
}

std::pair<int, json> v1_accounts_control(service& svc, const std::string& method, const std::string& path,
                                         const std::string& body_text) {
    auto& area = area_of(svc);
    json body = body_text.empty() ? json::object() : json::parse(body_text, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
        return control_failure(400, "request body must be a JSON object");
    }
    std::string rest = path.substr(std::strlen("/control/v1-accounts"));
    if (rest.empty() && method == "GET") {
        return control_list(area);
    }
    if (rest == "/advance-day" && method == "POST") {
        ++area.day_offset;
        day_result r = charge_day(svc, area);
        return {200, json{{"day", area.today()}, {"charged", r.charged}, {"stopped", r.stopped}}};
    }
    auto slash = rest.find('/', 1);
    if (method == "POST" && slash != std::string::npos && slash > 1) {
        std::string id = rest.substr(1, slash - 1);
        std::string what = rest.substr(slash + 1);
        if (what == "scan" || what == "inbound") {
            v1_account* a = area.find(id);
            if (a == nullptr) {
                return control_failure(404, "no webhook account '" + id + "'");
            }
            return what == "scan" ? control_scan(svc, *a, body) : control_inbound(svc, *a, body);
        }
    }
    return control_failure(404, "no control endpoint " + method + " " + path);
}

} // namespace orch::sandbox
