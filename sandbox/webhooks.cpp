// V2 webhooks (spec "Webhooks (V2)", api-facts 1): management, event fan-out and hosted-mode
// polling. Delivery itself (custom POSTs, SSE streams) is in webhook_delivery.cpp.
//
//   POST   /v2/webhooks                        create (custom with `url`, hosted without)
//   GET    /v2/webhooks[?account_id=]          list
//   GET    /v2/webhooks/{id}                   one
//   PUT    /v2/webhooks/{id}                   update {url, events, is_active}
//   DELETE /v2/webhooks/{id}                   delete
//   POST   /v2/webhooks/{id}/start | /stop     resume / pause monitoring
//   POST   /v2/webhooks/{id}/rotate-secret     new signing secret (custom mode)
//   DELETE /v2/webhooks/{id}/secret            stop signing
//   GET    /v2/webhooks/{id}/stream?api_key=   SSE stream (hosted mode)
//   GET    /v2/webhooks/{id}/events            polling (hosted mode)
//
// Every call is free (credits_consumed 0); an active webhook makes its account pay the daily
// monitoring charge, once per account and UTC day however many webhooks it has.
#include "sandbox/webhook_runtime.hpp"

#include "engine/time_format.hpp"
#include "sandbox/dialect.hpp"

#include <boost/url/parse.hpp>

#include <algorithm>
#include <charconv>

namespace orch::sandbox {

namespace http = boost::beast::http;

namespace {

constexpr std::size_t url_length_max = 2048;
constexpr std::size_t events_filter_max = 16;
constexpr std::int64_t poll_limit_default = 50;
constexpr std::int64_t poll_limit_max = 200;
constexpr const char* signature_scheme = "v1=hmac-sha256(<timestamp>.<raw_body>)";
constexpr const char* stream_key_placeholder = "<API_KEY>";

// ---- Errors of this module (the V2 codes of spec "Errors"). ----

api_error not_found(std::string message) { return {"NOT_FOUND", 404, std::move(message)}; }
api_error invalid_api_key(std::string message) { return {"INVALID_API_KEY", 403, std::move(message)}; }
api_error invalid_account(const std::string& id) {
    return {"INVALID_ACCOUNT", 404, "account '" + id + "' does not exist or does not belong to this API key"};
}
api_error account_inactive(const std::string& id) {
    return {"ACCOUNT_INACTIVE", 403, "account '" + id + "' is not connected; log in again before monitoring it"};
}
api_error unknown_webhook(const std::string& id) {
    return not_found("webhook '" + id + "' does not exist or does not belong to this API key");
}

const char* json_type_name(const json& v) {
    if (v.is_string()) return "a string";
    if (v.is_boolean()) return "a boolean";
    if (v.is_number()) return "a number";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    return "null";
}

// ---- Routing ----

enum class route_kind { none, collection, item, start, stop, rotate_secret, secret, stream, events };

struct route {
    route_kind kind = route_kind::none;
    std::string webhook_id;
};

route match_route(const std::string& path) {
    if (path == "/v2/webhooks") {
        return {route_kind::collection, {}};
    }
    std::string rest = path.substr(std::string("/v2/webhooks/").size());
    auto slash = rest.find('/');
    std::string id = rest.substr(0, slash);
    if (id.empty()) {
        return {};
    }
    if (slash == std::string::npos) {
        return {route_kind::item, id};
    }
    static const std::map<std::string, route_kind, std::less<>> subs = {
        {"start", route_kind::start},   {"stop", route_kind::stop},     {"rotate-secret", route_kind::rotate_secret},
        {"secret", route_kind::secret}, {"stream", route_kind::stream}, {"events", route_kind::events}};
    auto it = subs.find(rest.substr(slash + 1));
    return it == subs.end() ? route{} : route{it->second, id};
}

// The methods a route answers, as for the Allow header.
std::vector<http::verb> allowed_methods(route_kind kind) {
    switch (kind) {
    case route_kind::collection: return {http::verb::get, http::verb::post};
    case route_kind::item: return {http::verb::get, http::verb::put, http::verb::delete_};
    case route_kind::start:
    case route_kind::stop:
    case route_kind::rotate_secret: return {http::verb::post};
    case route_kind::secret: return {http::verb::delete_};
    case route_kind::stream:
    case route_kind::events: return {http::verb::get};
    case route_kind::none: break;
    }
    return {};
}

// metadata.action of each call (also on its errors).
std::string action_name(route_kind kind, http::verb method) {
    switch (kind) {
    case route_kind::collection: return method == http::verb::post ? "create_webhook" : "list_webhooks";
    case route_kind::item:
        return method == http::verb::put       ? "update_webhook"
               : method == http::verb::delete_ ? "delete_webhook"
                                               : "get_webhook";
    case route_kind::start: return "start_webhook";
    case route_kind::stop: return "stop_webhook";
    case route_kind::rotate_secret: return "rotate_webhook_secret";
    case route_kind::secret: return "delete_webhook_secret";
    case route_kind::stream: return "stream_webhook_events";
    case route_kind::events: return "poll_webhook_events";
    case route_kind::none: break;
    }
    return "";
}

// ---- Request pieces ----

json parse_object_body(const api::request& req) {
    if (req.body().empty()) {
        throw invalid_params("request body is empty; expected a JSON object");
    }
    json body = json::parse(req.body(), nullptr, false);
    if (body.is_discarded()) {
        throw invalid_params("request body is not valid JSON");
    }
    if (!body.is_object()) {
        throw invalid_params(std::string("request body must be a JSON object, got ") + json_type_name(body));
    }
    return body;
}

// Present and not null.
const json* field(const json& body, const char* name) {
    auto it = body.find(name);
    return it == body.end() || it->is_null() ? nullptr : &*it;
}

// An absolute http(s) URL. The real service wants a public HTTPS endpoint; the sandbox also
// takes plain http so that local receivers work.
std::string validate_url(const json& v) {
    if (!v.is_string()) {
        throw invalid_params(std::string("url must be a string, got ") + json_type_name(v));
    }
    const auto& text = v.get_ref<const std::string&>();
    if (text.size() > url_length_max) {
        throw invalid_params("url must be at most " + std::to_string(url_length_max) + " characters");
    }
    auto parsed = boost::urls::parse_uri(text);
    if (!parsed) {
        throw invalid_params("url must be an absolute http or https URL, got '" + text + "'");
    }
    std::string scheme(parsed->scheme());
    std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
    if (scheme != "http" && scheme != "https") {
        throw invalid_params("url must use http or https, got '" + scheme + "'");
    }
    if (!parsed->has_authority() || parsed->encoded_host().empty()) {
        throw invalid_params("url must name a host, got '" + text + "'");
    }
    if (parsed->has_port()) {
        auto port = parsed->port();
        unsigned value = 0;
        auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (port.empty() || ec != std::errc{} || ptr != port.data() + port.size() || value == 0 || value > 65535) {
            throw invalid_params("url has an invalid port '" + std::string(port) + "'");
        }
    }
    if (parsed->has_fragment()) {
        throw invalid_params("url must not have a fragment");
    }
    return text;
}

// The `events` filter: a non-empty array of known names, duplicates removed, order kept.
std::vector<std::string> validate_events(const json& v) {
    if (!v.is_array()) {
        throw invalid_params(std::string("events must be an array of event names, got ") + json_type_name(v));
    }
    if (v.empty()) {
        throw invalid_params("events must not be empty; omit it to receive all events");
    }
    if (v.size() > events_filter_max) {
        throw invalid_params("events must have at most " + std::to_string(events_filter_max) + " names");
    }
    static const std::vector<std::string> known = {"message_received", "accepted_invitation", "disconnection", "all"};
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const json& e = v[i];
        if (!e.is_string() || std::find(known.begin(), known.end(), e.get<std::string>()) == known.end()) {
            throw invalid_params("events[" + std::to_string(i) + "] must be one of message_received, " +
                                 "accepted_invitation, disconnection, all; got " + e.dump());
        }
        if (std::find(out.begin(), out.end(), e.get<std::string>()) == out.end()) {
            out.push_back(e.get<std::string>());
        }
    }
    return out;
}

std::optional<bool> bool_field(const json& body, const char* name) {
    const json* v = field(body, name);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_boolean()) {
        throw invalid_params(std::string(name) + " must be a boolean, got " + json_type_name(*v));
    }
    return v->get<bool>();
}

std::string new_secret(service& svc) {
    std::string out;
    for (int i = 0; i < 4; ++i) {
        out += hex(svc.rng().next());
    }
    return out;
}

bool is_event_id(std::string_view s) {
    return s.size() == 24 &&
           std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// "http://<Host>" of the request, so hosted URLs point back at this listener.
std::string base_url(const api::request& req) {
    auto host = req[http::field::host];
    return host.empty() ? std::string() : "http://" + std::string(host);
}

json webhook_item(const webhook_state& wh, const std::string& base) {
    json item = {{"webhook_id", wh.id}, {"account_id", wh.account_id}};
    if (wh.url.empty()) {
        item["mode"] = "hosted";
        item["stream_url"] = base + "/v2/webhooks/" + wh.id + "/stream?api_key=" + stream_key_placeholder;
        item["events_url"] = base + "/v2/webhooks/" + wh.id + "/events";
    } else {
        item["mode"] = "custom";
        item["url"] = wh.url;
    }
    item["events"] = wh.events;
    item["is_active"] = wh.active;
    item["signature_enabled"] = !wh.secret.empty();
    item["created_at"] = iso8601_s(wh.created_at);
    item["updated_at"] = iso8601_s(wh.updated_at);
    return item;
}

// ---- State changes shared by several calls ----

// Monitoring needs a connected account and today's charge paid (or payable now).
void begin_monitoring(service& svc, key_state& key, account_state& account) {
    if (!account.active || account.status != "connected") {
        throw account_inactive(account.id);
    }
    if (!svc.ensure_monitoring_charged(account)) {
        throw insufficient_credits(svc.cfg().monitoring_credits_per_day, key.credits);
    }
}

// Stops custom deliveries in flight or pending (stop, delete, switch to hosted).
void halt_deliveries(webhook_state& wh) {
    ++wh.generation;
    wh.outbox.clear();
    wh.runtime->retry_wake.cancel();
}

void deactivate(webhook_state& wh, time_point now) {
    if (wh.active) {
        wh.active = false;
        wh.updated_at = now;
    }
    halt_deliveries(wh);
}

// ---- Handlers. Each returns the `data` object; errors are thrown. ----

struct call {
    service& svc;
    const api::request& req;
    key_state& key;
    std::string& account_id; // metadata.account_id, filled in as soon as it is known
};

webhook_state& owned_webhook(call& c, const std::string& id) {
    auto it = c.svc.webhooks().find(id);
    if (it == c.svc.webhooks().end() || it->second.key != c.key.key) {
        throw unknown_webhook(id);
    }
    c.account_id = it->second.account_id;
    return it->second;
}

account_state& owned_account(call& c, const std::string& id) {
    account_state* account = c.svc.find_account(id);
    if (account == nullptr || account->key != c.key.key) {
        throw invalid_account(id);
    }
    return *account;
}

json create_webhook(call& c) {
    json body = parse_object_body(c.req);
    const json* account_field = field(body, "account_id");
    if (account_field == nullptr) {
        throw invalid_params("account_id is required");
    }
    if (!account_field->is_string()) {
        throw invalid_params(std::string("account_id must be a string, got ") + json_type_name(*account_field));
    }
    c.account_id = account_field->get<std::string>();
    account_state& account = owned_account(c, c.account_id);
    const json* url_field = field(body, "url");
    std::string url = url_field == nullptr ? std::string() : validate_url(*url_field);
    const json* events_field = field(body, "events");
    auto events = events_field == nullptr ? std::vector<std::string>{"all"} : validate_events(*events_field);
    bool sign = bool_field(body, "enable_signature").value_or(false);
    if (sign && url.empty()) {
        throw invalid_params("enable_signature is only for custom mode (with url); hosted deliveries are not signed");
    }
    // dialect_webhook_activation on_start (api-facts 1.6, the stream page's reading): created
    // inactive, monitored and charged only from POST /v2/webhooks/{id}/start.
    bool active_now = c.svc.cfg().dialect_webhook_activation == "on_create";
    if (active_now) {
        begin_monitoring(c.svc, c.key, account);
    }

    std::string id = c.svc.new_id("wh_");
    webhook_state& wh = c.svc.webhooks()[id];
    wh.id = id;
    wh.account_id = account.id;
    wh.key = c.key.key;
    wh.url = url;
    wh.events = events;
    wh.active = active_now;
    wh.secret = sign ? new_secret(c.svc) : std::string();
    wh.created_at = wh.updated_at = c.svc.now();
    wh.runtime = std::make_shared<webhook_runtime>(c.svc.executor());
    json data = webhook_item(wh, base_url(c.req));
    if (sign) {
        data["secret"] = wh.secret;
        data["signature_scheme"] = signature_scheme;
    }
    return data;
}

json list_webhooks(call& c) {
    auto query = decoded_query(c.req.target());
    std::string only_account;
    if (auto it = query.find("account_id"); it != query.end()) {
        c.account_id = it->second;
        only_account = owned_account(c, it->second).id;
    }
    json items = json::array();
    for (const auto& [id, wh] : c.svc.webhooks()) {
        if (wh.key == c.key.key && (only_account.empty() || wh.account_id == only_account)) {
            items.push_back(webhook_item(wh, base_url(c.req)));
        }
    }
    auto total = items.size();
    return json{{"items", std::move(items)}, {"total", total}};
}

// Switches a webhook between custom (non-empty url) and hosted (empty url) mode.
void change_url(webhook_state& wh, const std::string& url) {
    bool was_hosted = wh.url.empty();
    if (url.empty() && !was_hosted) {
        halt_deliveries(wh);
        wh.secret.clear(); // hosted deliveries are never signed
    } else if (!url.empty() && was_hosted) {
        wh.runtime->close_streams();
        wh.hosted_event_ids.clear();
    }
    wh.url = url;
}

json update_webhook(call& c, webhook_state& wh) {
    json body = parse_object_body(c.req);
    if (field(body, "enable_signature") != nullptr) {
        throw invalid_params("enable_signature cannot be updated; use POST /v2/webhooks/{id}/rotate-secret to sign "
                             "or DELETE /v2/webhooks/{id}/secret to stop signing");
    }
    std::optional<std::string> url;
    if (auto it = body.find("url"); it != body.end()) {
        // null or "" turns the webhook into a hosted one.
        url = it->is_null() || (it->is_string() && it->get_ref<const std::string&>().empty()) ? std::string()
                                                                                              : validate_url(*it);
    }
    const json* events_field = field(body, "events");
    std::optional<std::vector<std::string>> events;
    if (events_field != nullptr) {
        events = validate_events(*events_field);
    }
    auto active = bool_field(body, "is_active");
    if (active == true && !wh.active) {
        account_state* account = c.svc.find_account(wh.account_id);
        if (account == nullptr) {
            throw invalid_account(wh.account_id);
        }
        begin_monitoring(c.svc, c.key, *account);
    }
    // Everything is valid: apply.
    if (url) {
        change_url(wh, *url);
    }
    if (events) {
        wh.events = *events;
    }
    if (active == false) {
        deactivate(wh, c.svc.now());
    } else if (active == true) {
        wh.active = true;
    }
    wh.updated_at = c.svc.now();
    return webhook_item(wh, base_url(c.req));
}

json delete_webhook(call& c, webhook_state& wh) {
    std::string id = wh.id;
    halt_deliveries(wh);
    wh.runtime->close_streams();
    c.svc.webhooks().erase(id);
    return json{{"webhook_id", id}, {"deleted", true}};
}

json start_webhook(call& c, webhook_state& wh) {
    account_state* account = c.svc.find_account(wh.account_id);
    if (account == nullptr) {
        throw invalid_account(wh.account_id);
    }
    begin_monitoring(c.svc, c.key, *account);
    if (!wh.active) {
        wh.active = true;
        wh.updated_at = c.svc.now();
    }
    return json{{"webhook_id", wh.id}, {"account_id", wh.account_id}, {"monitoring", true}};
}

json stop_webhook(call& c, webhook_state& wh) {
    deactivate(wh, c.svc.now());
    return json{{"webhook_id", wh.id}, {"account_id", wh.account_id}, {"monitoring", false}};
}

json rotate_secret(call& c, webhook_state& wh) {
    if (wh.url.empty()) {
        throw invalid_params("webhook '" + wh.id + "' is in hosted mode; hosted deliveries are not signed");
    }
    wh.secret = new_secret(c.svc);
    wh.updated_at = c.svc.now();
    return json{{"webhook_id", wh.id}, {"secret", wh.secret}, {"signature_scheme", signature_scheme}};
}

json delete_secret(call& c, webhook_state& wh) {
    if (wh.url.empty()) {
        throw invalid_params("webhook '" + wh.id + "' is in hosted mode; hosted deliveries are not signed");
    }
    wh.secret.clear();
    wh.updated_at = c.svc.now();
    return json{{"webhook_id", wh.id}, {"signature_enabled", false}};
}

std::int64_t unix_ms(time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// dialect_poll_cursor opaque: "pc_" + the masked sequence number + a check, so that a client
// can only hand back what it was given.
std::string opaque_cursor(const service& svc, std::uint64_t sequence) {
    std::string body = hex(sequence ^ splitmix64(svc.cfg().seed ^ 0xc0c0));
    return "pc_" + body + hex(hash64(body, svc.cfg().seed) & 0xffff, 4);
}

std::optional<std::uint64_t> parse_opaque_cursor(const service& svc, const std::string& text) {
    if (text.size() != 23 || !text.starts_with("pc_")) {
        return std::nullopt;
    }
    std::uint64_t masked = 0;
    auto [ptr, ec] = std::from_chars(text.data() + 3, text.data() + 19, masked, 16);
    if (ec != std::errc{} || ptr != text.data() + 19) {
        return std::nullopt;
    }
    auto sequence = masked ^ splitmix64(svc.cfg().seed ^ 0xc0c0);
    if (opaque_cursor(svc, sequence) != text) {
        return std::nullopt;
    }
    return sequence;
}

std::optional<std::uint64_t> parse_numeric_cursor(const std::string& text) {
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) {
        return std::nullopt;
    }
    return v;
}

// Hosted polling: retained events, oldest first, strictly after `since` (millisecond precision,
// the precision of created_at) and after the position the dialect's cursor names:
//   after_id: `after` (an event_id)            -> {items, has_more, next_after (event_id or null)}
//   since:    none (`after` is ignored)        -> {items}
//   opaque:   `cursor` (a next_cursor string)  -> {items, has_more, next_cursor (string)}
//   numeric:  `cursor` (a next_cursor integer) -> {items, has_more, next_cursor (integer)}
json poll_events(call& c, webhook_state& wh) {
    if (!wh.url.empty()) {
        throw invalid_params("webhook '" + wh.id + "' is in custom mode; only hosted webhooks keep events to poll");
    }
    const settings& cfg = c.svc.cfg();
    const std::string& style = cfg.dialect_poll_cursor;
    auto query = decoded_query(c.req.target());
    std::int64_t limit = poll_limit_default;
    if (auto it = query.find("limit"); it != query.end()) {
        const auto& v = it->second;
        auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), limit);
        if (v.empty() || ec != std::errc{} || ptr != v.data() + v.size() || limit < 1 || limit > poll_limit_max) {
            throw invalid_params("limit must be an integer between 1 and " + std::to_string(poll_limit_max) +
                                 ", got '" + v + "'");
        }
    }
    std::optional<std::int64_t> since_ms;
    if (auto it = query.find("since"); it != query.end()) {
        // A '+' offset sent unencoded arrives as a space.
        std::string text = it->second;
        std::replace(text.begin(), text.end(), ' ', '+');
        auto t = parse_iso8601(text);
        if (!t) {
            throw invalid_params("since must be an ISO 8601 date-time, got '" + it->second + "'");
        }
        since_ms = unix_ms(*t);
    }
    std::string after;
    std::uint64_t after_sequence = 0;
    if (auto it = query.find("after"); it != query.end() && style == "after_id") {
        if (!is_event_id(it->second)) {
            throw invalid_params("after must be an event_id (24 lower-case hex characters), got '" + it->second + "'");
        }
        after = it->second;
    }
    if (auto it = query.find("cursor"); it != query.end() && (style == "opaque" || style == "numeric")) {
        auto position = style == "opaque" ? parse_opaque_cursor(c.svc, it->second) : parse_numeric_cursor(it->second);
        if (!position) {
            throw invalid_params("cursor must be a next_cursor returned by this endpoint, got '" + it->second + "'");
        }
        after_sequence = *position;
    }
    prune_hosted_events(c.svc, wh);
    auto horizon_ms = unix_ms(c.svc.now()) - cfg.event_retention_s * 1000;
    json items = json::array();
    bool has_more = false;
    std::uint64_t last_sequence = after_sequence;
    for (const auto& id : wh.hosted_event_ids) {
        const stored_event* e = c.svc.find_event(id);
        if (e == nullptr || id <= after || e->sequence <= after_sequence || unix_ms(e->created_at) < horizon_ms ||
            (since_ms && unix_ms(e->created_at) <= *since_ms)) {
            continue;
        }
        if (static_cast<std::int64_t>(items.size()) == limit) {
            has_more = true;
            break;
        }
        last_sequence = e->sequence;
        items.push_back(json{{"event_id", e->event_id},
                             {"event", e->payload},
                             {"created_at", wire_time(cfg, e->created_at, time_precision::millis)}});
    }
    if (style == "since") {
        return json{{"items", std::move(items)}};
    }
    if (style == "opaque" || style == "numeric") {
        json next = style == "opaque" ? json(opaque_cursor(c.svc, last_sequence)) : json(last_sequence);
        return json{{"items", std::move(items)}, {"has_more", has_more}, {"next_cursor", std::move(next)}};
    }
    json next_after = items.empty() ? json(nullptr) : items.back()["event_id"];
    return json{{"items", std::move(items)}, {"has_more", has_more}, {"next_after", std::move(next_after)}};
}

json dispatch(call& c, const route& r) {
    auto method = c.req.method();
    if (r.kind == route_kind::collection) {
        return method == http::verb::post ? create_webhook(c) : list_webhooks(c);
    }
    webhook_state& wh = owned_webhook(c, r.webhook_id);
    switch (r.kind) {
    case route_kind::item:
        return method == http::verb::put       ? update_webhook(c, wh)
               : method == http::verb::delete_ ? delete_webhook(c, wh)
                                               : webhook_item(wh, base_url(c.req));
    case route_kind::start: return start_webhook(c, wh);
    case route_kind::stop: return stop_webhook(c, wh);
    case route_kind::rotate_secret: return rotate_secret(c, wh);
    case route_kind::secret: return delete_secret(c, wh);
    case route_kind::events: return poll_events(c, wh);
    case route_kind::stream:
    case route_kind::collection:
    case route_kind::none: break;
    }
    throw not_found("no endpoint");
}

api::response method_not_allowed(service& svc, const api::request& req, const std::string& path,
                                 const std::vector<http::verb>& allowed) {
    std::string allow;
    for (auto v : allowed) {
        allow += (allow.empty() ? "" : ", ") + std::string(http::to_string(v));
    }
    api_error e("METHOD_NOT_ALLOWED", 405,
                "method " + std::string(req.method_string()) + " is not allowed on " + path + "; use " + allow);
    auto res = json_reply(req, 405, error_envelope(svc.cfg(), e, "", "", svc.now()));
    res.set(http::field::allow, allow);
    return res;
}

key_state& authenticate(service& svc, std::string_view key_text, const char* where) {
    if (key_text.empty()) {
        throw invalid_api_key(std::string("missing ") + where);
    }
    key_state* key = svc.find_key(key_text);
    if (key == nullptr) {
        throw invalid_api_key("the API key is invalid or expired");
    }
    return *key;
}

// The stream's checks; returns the replay cursor. Throws like the other calls.
std::string check_stream_request(service& svc, const api::request& req, const route& r, std::string& account_id) {
    auto query = decoded_query(req.target());
    auto key_it = query.find("api_key");
    key_state& key = authenticate(svc, key_it == query.end() ? std::string_view() : key_it->second,
                                  "api_key query parameter (event streams are authenticated by the URL)");
    call c{svc, req, key, account_id};
    webhook_state& wh = owned_webhook(c, r.webhook_id);
    if (!wh.url.empty()) {
        throw invalid_params("webhook '" + wh.id + "' is in custom mode; only hosted webhooks have a stream");
    }
    if (!svc.cfg().dialect_sse_ids) {
        return {}; // no id: lines were sent, so there is nothing to resume from
    }
    std::string cursor(req["Last-Event-ID"]);
    const char* cursor_name = "Last-Event-ID";
    if (cursor.empty()) {
        auto it = query.find("last_event_id");
        cursor = it == query.end() ? std::string() : it->second;
        cursor_name = "last_event_id";
    }
    if (!cursor.empty() && !is_event_id(cursor)) {
        throw invalid_params(std::string(cursor_name) + " must be an event_id (24 lower-case hex characters), got '" +
                             cursor + "'");
    }
    return cursor;
}

} // namespace

asio::awaitable<api::handler_result> handle_webhooks_request(service& svc, api::request& req,
                                                             beast::tcp_stream& stream) {
    auto parsed = boost::urls::parse_origin_form(req.target());
    std::string path = parsed ? std::string(parsed->path()) : std::string();
    while (path.size() > 1 && path.back() == '/') {
        path.pop_back();
    }
    route r = match_route(path);
    if (r.kind == route_kind::none) {
        co_return api::handler_result::reply(
            json_reply(req, 404,
                       error_envelope(svc.cfg(),
                                      not_found("no endpoint " + std::string(req.method_string()) + " " + path), "",
                                      "", svc.now())));
    }
    auto allowed = allowed_methods(r.kind);
    if (std::find(allowed.begin(), allowed.end(), req.method()) == allowed.end()) {
        co_return api::handler_result::reply(method_not_allowed(svc, req, path, allowed));
    }
    std::string action = action_name(r.kind, req.method());
    std::string account_id;
    try {
        if (r.kind == route_kind::stream) {
            std::string cursor = check_stream_request(svc, req, r, account_id);
            co_await serve_event_stream(svc, req, stream, r.webhook_id, std::move(cursor));
            co_return api::handler_result::taken();
        }
        key_state& key = authenticate(svc, req["x-api-key"], "x-api-key header");
        call c{svc, req, key, account_id};
        json data = dispatch(c, r);
        co_return api::handler_result::reply(
            json_reply(req, 200, success_envelope(svc.cfg(), std::move(data), action, account_id, 0, svc.now())));
    } catch (const api_error& e) {
        co_return api::handler_result::reply(
            json_reply(req, e.http_status(), error_envelope(svc.cfg(), e, action, account_id, svc.now())));
    }
}

void fan_out_event(service& svc, const std::shared_ptr<const stored_event>& event) {
    for (auto& [id, wh] : svc.webhooks()) {
        if (wh.account_id != event->account_id || !wh.active || !webhook_wants(svc.cfg(), wh.events, event->type)) {
            continue;
        }
        if (!wh.url.empty()) {
            enqueue_delivery(svc, wh, event);
            continue;
        }
        prune_hosted_events(svc, wh);
        wh.hosted_event_ids.push_back(event->event_id);
        for (const auto& weak : wh.runtime->subscribers) {
            if (auto sub = weak.lock()) {
                sub->push(event);
            }
        }
    }
}

void deactivate_webhooks_of(service& svc, const std::string& account_id) {
    for (auto& [id, wh] : svc.webhooks()) {
        if (wh.account_id == account_id) {
            deactivate(wh, svc.now());
        }
    }
}

} // namespace orch::sandbox
