#include "sandbox/service.hpp"

#include "engine/time_format.hpp"
#include "sandbox/dialect.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>

#include <spdlog/spdlog.h>

#include <charconv>
#include <cmath>
#include <limits>

namespace orch::sandbox {

namespace http = boost::beast::http;

// ---------------------------------------------------------------------------------------------
// Errors and envelopes

api_error invalid_params(std::string message) { return {"INVALID_PARAMS", 400, std::move(message)}; }
api_error channel_error(std::string message) { return {"CHANNEL_ERROR", 422, std::move(message)}; }
api_error forbidden(std::string message) { return {"FORBIDDEN", 403, std::move(message)}; }
api_error insufficient_credits(std::int64_t required, std::int64_t remaining) {
    return {"INSUFFICIENT_CREDITS", 402,
            "insufficient credits: required " + std::to_string(required) + ", remaining " + std::to_string(remaining),
            json{{"required", required}, {"remaining", remaining}}};
}

namespace {

api_error invalid_api_key(std::string message) { return {"INVALID_API_KEY", 403, std::move(message)}; }
api_error invalid_account(const std::string& id) {
    return {"INVALID_ACCOUNT", 404, "account '" + id + "' does not exist or does not belong to this API key"};
}
api_error account_inactive(const std::string& id) {
    return {"ACCOUNT_INACTIVE", 403, "account '" + id + "' is inactive; log in again to reactivate it"};
}
api_error not_found(std::string message) { return {"NOT_FOUND", 404, std::move(message)}; }

std::int64_t unix_ms(time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::int64_t utc_day(time_point t) { return unix_ms(t) / 86'400'000; }

const char* json_type_name(const json& v) {
    if (v.is_string()) return "a string";
    if (v.is_boolean()) return "a boolean";
    if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
    if (v.is_number()) return "a number";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    return "null";
}

} // namespace

json success_envelope(const settings& cfg, json data, const std::string& action, const std::string& account_id,
                      std::int64_t credits, time_point now) {
    json meta = {{"action", action}, {"credits_consumed", credits}, {"timestamp", wire_time(cfg, now)}};
    if (!account_id.empty()) {
        meta["account_id"] = account_id;
    }
    json out = {{"success", true}, {"data", std::move(data)}, {"metadata", std::move(meta)}};
    add_extra_fields(cfg, out);
    return out;
}

json error_envelope(const settings& cfg, const api_error& e, const std::string& action, const std::string& account_id,
                    time_point now) {
    json err = {{"code", e.code()}, {"message", e.what()}};
    for (const auto& [k, v] : e.extra().items()) {
        err[k] = v;
    }
    json meta = {{"action", action}, {"credits_consumed", 0}, {"timestamp", wire_time(cfg, now)}};
    if (!account_id.empty() && cfg.dialect_error_account_id) {
        meta["account_id"] = account_id;
    }
    json out = {{"success", false}, {"error", std::move(err)}, {"metadata", std::move(meta)}};
    add_extra_fields(cfg, out);
    return out;
}

std::map<std::string, std::string> decoded_query(std::string_view target) {
    std::map<std::string, std::string> out;
    auto parsed = boost::urls::parse_origin_form(target);
    if (!parsed) {
        return out;
    }
    for (auto p : parsed->params()) {
        out[std::string(p.key)] = std::string(p.value);
    }
    return out;
}

api::response json_reply(const api::request& req, int status, const json& body) {
    return api::json_response(req.version(), req.keep_alive(), static_cast<http::status>(status),
                              body.dump(-1, ' ', false, json::error_handler_t::replace));
}

// ---------------------------------------------------------------------------------------------
// Parameter helpers

const std::string& require_string(const json& params, const char* name) {
    auto it = params.find(name);
    if (it == params.end() || it->is_null()) {
        throw invalid_params(std::string("params.") + name + " is required");
    }
    if (!it->is_string()) {
        throw invalid_params(std::string("params.") + name + " must be a string, got " + json_type_name(*it));
    }
    if (it->get_ref<const std::string&>().empty()) {
        throw invalid_params(std::string("params.") + name + " must not be empty");
    }
    return it->get_ref<const std::string&>();
}

std::optional<std::string> optional_string(const json& params, const char* name) {
    auto it = params.find(name);
    if (it == params.end() || it->is_null()) {
        return std::nullopt;
    }
    if (!it->is_string()) {
        throw invalid_params(std::string("params.") + name + " must be a string, got " + json_type_name(*it));
    }
    return it->get<std::string>();
}

std::optional<std::int64_t> optional_int(const json& params, const char* name, std::int64_t min, std::int64_t max) {
    auto it = params.find(name);
    if (it == params.end() || it->is_null()) {
        return std::nullopt;
    }
    if (!it->is_number_integer() && !it->is_number_unsigned()) {
        throw invalid_params(std::string("params.") + name + " must be an integer, got " + json_type_name(*it));
    }
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
        throw invalid_params(std::string("params.") + name + " must be between " + std::to_string(min) + " and " +
                             std::to_string(max));
    }
    auto v = it->get<std::int64_t>();
    if (v < min || v > max) {
        throw invalid_params(std::string("params.") + name + " must be between " + std::to_string(min) + " and " +
                             std::to_string(max) + ", got " + std::to_string(v));
    }
    return v;
}

std::optional<bool> optional_bool(const json& params, const char* name) {
    auto it = params.find(name);
    if (it == params.end() || it->is_null()) {
        return std::nullopt;
    }
    if (!it->is_boolean()) {
        throw invalid_params(std::string("params.") + name + " must be a boolean, got " + json_type_name(*it));
    }
    return it->get<bool>();
}

std::vector<std::string> string_or_array(const json& params, const char* name) {
    auto it = params.find(name);
    if (it == params.end() || it->is_null()) {
        return {};
    }
    if (it->is_string()) {
        return {it->get<std::string>()};
    }
    if (!it->is_array()) {
        throw invalid_params(std::string("params.") + name + " must be a string or an array of strings, got " +
                             json_type_name(*it));
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < it->size(); ++i) {
        const json& v = (*it)[i];
        if (!v.is_string()) {
            throw invalid_params(std::string("params.") + name + "[" + std::to_string(i) + "] must be a string, got " +
                                 json_type_name(v));
        }
        out.push_back(v.get<std::string>());
    }
    return out;
}

std::int64_t list_cost(std::size_t results) {
    return std::max<std::int64_t>(1, static_cast<std::int64_t>((results + 9) / 10));
}

void v1_context::charge(std::int64_t credits) {
    if (credits <= 0) {
        return;
    }
    if (key.credits < credits) {
        throw insufficient_credits(credits, key.credits);
    }
    svc.record_charge(key, endpoint, credits);
    charged += credits;
}

void action_context::charge(std::int64_t credits) {
    if (credits <= 0) {
        return;
    }
    if (key.credits < credits) {
        throw insufficient_credits(credits, key.credits);
    }
    svc.record_charge(key, action, credits);
    charged += credits;
}

// ---------------------------------------------------------------------------------------------
// Service

service::service(asio::any_io_executor executor, settings cfg)
    : executor_(executor),
      cfg_(std::move(cfg)),
      world_(cfg_.seed, cfg_.world_people, cfg_.world_companies),
      rng_(splitmix64(cfg_.seed ^ 0x5eed)) {
    for (const auto& k : cfg_.api_keys) {
        key_state& ks = keys_[k.key];
        ks.key = k.key;
        ks.credits = k.credits;
    }
    register_profiles_actions(actions_);
    register_network_actions(actions_);
    register_messages_actions(actions_);
    register_content_actions(actions_);
    register_recruiter_actions(actions_);
    register_mail_actions(actions_);
    // The spec's two listings disagree on the e-mail path: serve the same actions on both.
    if (actions_.categories.contains("mail")) {
        actions_.categories["enrich"] = actions_.categories["mail"];
    }
    register_v1_data_routes(v1_routes_);
    register_v1_jobs_routes(v1_routes_);
    register_v1_accounts_routes(v1_routes_);
    register_v1_reaction_routes(v1_routes_);
}

void service::start() {
    if (started_) {
        return;
    }
    started_ = true;
    schedule_monitoring_tick();
}

key_state* service::find_key(std::string_view key) {
    auto it = keys_.find(key);
    return it == keys_.end() ? nullptr : &it->second;
}

account_state* service::find_account(std::string_view account_id) {
    auto it = accounts_.find(std::string(account_id));
    return it == accounts_.end() ? nullptr : &it->second;
}

void service::record_charge(key_state& key, const std::string& action, std::int64_t credits) {
    key.credits -= credits;
    key.charged_total += credits;
    key.charged_by_action[action] += credits;
}

bool service::ensure_monitoring_charged(account_state& account) {
    std::int64_t today = utc_day(now());
    if (account.monitoring_charged_day == today || cfg_.monitoring_credits_per_day <= 0) {
        return true;
    }
    key_state* key = find_key(account.key);
    if (key == nullptr || key->credits < cfg_.monitoring_credits_per_day) {
        return false;
    }
    record_charge(*key, "monitoring", cfg_.monitoring_credits_per_day);
    account.monitoring_charged_day = today;
    return true;
}

void service::schedule_monitoring_tick() {
    // At each UTC midnight, charge the new day for every account that still has an active
    // webhook; accounts whose key cannot pay have their webhooks stopped.
    auto now_ms = unix_ms(now());
    auto next_midnight_ms = (now_ms / 86'400'000 + 1) * 86'400'000;
    schedule_after(std::chrono::milliseconds(next_midnight_ms - now_ms + 5), [this] {
        for (auto& [id, account] : accounts_) {
            bool monitored = false;
            for (const auto& [wid, wh] : webhooks_) {
                monitored = monitored || (wh.account_id == id && wh.active);
            }
            if (monitored && !ensure_monitoring_charged(account)) {
                spdlog::info("sandbox: account {} cannot pay monitoring; its webhooks are stopped", id);
                deactivate_webhooks_of(*this, id);
            }
        }
        schedule_monitoring_tick();
    });
}

std::uint64_t service::next_invitation_id() {
    // 7,0xx,xxx,xxx,xxx,xxx,xxx: 19 digits like the real ids, always above 2^53.
    ++invitation_counter_;
    return 7'000'000'000'000'000'000ULL + (splitmix64(cfg_.seed) % 1'000'000'000'000ULL) * 1'000'000ULL +
           invitation_counter_;
}

std::string service::new_id(std::string_view prefix) {
    ++id_counter_;
    return std::string(prefix) + hex(splitmix64(cfg_.seed * 31 + id_counter_));
}

std::string service::next_event_id() {
    // 8 hex digits of seconds then 16 of a counter: sortable, 24 hex like the documented ids.
    ++event_counter_;
    auto secs = static_cast<std::uint64_t>(unix_ms(now()) / 1000);
    return hex(secs, 8) + hex(event_counter_, 16);
}

void service::schedule_after(std::chrono::milliseconds delay, std::function<void()> fn) {
    auto timer = std::make_shared<asio::steady_timer>(executor_, delay);
    timer->async_wait([timer, fn = std::move(fn)](const boost::system::error_code& ec) {
        if (!ec) {
            fn();
        }
    });
}

std::shared_ptr<const stored_event> service::publish_event(account_state& account, const std::string& type,
                                                            json body, std::string person) {
    auto at = now();
    if (cfg_.dialect_poll_cursor == "since" && unix_ms(at) <= unix_ms(last_event_at_)) {
        // Polling by `since` alone (millisecond created_at) pages without loss only when no two
        // events share a millisecond; this dialect keeps them apart.
        at = std::chrono::floor<std::chrono::milliseconds>(last_event_at_) + std::chrono::milliseconds(1);
    }
    last_event_at_ = at;
    auto ev = std::make_shared<stored_event>();
    ev->event_id = next_event_id();
    ev->sequence = event_counter_;
    ev->account_id = account.id;
    ev->type = type;
    ev->person = std::move(person);
    ev->created_at = at;
    ev->payload = render_event(cfg_, account.id, account.name, type, std::move(body), at);
    // Retention: hosted events are kept event_retention_s; older ones are dropped here.
    auto horizon = at - std::chrono::seconds(cfg_.event_retention_s);
    while (!events_.empty() && events_.front()->created_at < horizon) {
        events_by_id_.erase(events_.front()->event_id);
        events_.pop_front();
    }
    std::shared_ptr<const stored_event> stored = ev;
    events_.push_back(stored);
    events_by_id_[stored->event_id] = stored;
    fan_out_event(*this, stored);
    fan_out_v1_event(*this, stored);
    return stored;
}

const stored_event* service::find_event(std::string_view event_id) const {
    auto it = events_by_id_.find(std::string(event_id));
    return it == events_by_id_.end() ? nullptr : it->second.get();
}

void service::disconnect_account(account_state& account, const std::string& reason) {
    account.active = false;
    account.status = "disconnected";
    account.updated_at = now();
    publish_event(account, "disconnection", json{{"reason", reason}});
}

void service::log_request(request_record rec) {
    if (cfg_.request_log_max == 0) {
        return;
    }
    while (request_log_.size() >= cfg_.request_log_max) {
        request_log_.pop_front();
    }
    request_log_.push_back(std::move(rec));
}

void service::check_key_rate(key_state& key, time_point now) {
    if (now < key.burst_until) {
        json extra = json::object();
        if (key.burst_retry_after_s >= 0) {
            extra["retry_after_s"] = key.burst_retry_after_s;
        }
        throw api_error("RATE_LIMITED", 429, rate_limit_message(cfg_, "too many requests; retry later with backoff"), extra);
    }
    if (cfg_.key_rate_per_s <= 0) {
        return;
    }
    double burst = cfg_.key_burst > 0 ? cfg_.key_burst : cfg_.key_rate_per_s;
    if (key.tokens_at == time_point{}) {
        key.tokens = burst;
        key.tokens_at = now;
    }
    double elapsed_s = std::chrono::duration<double>(now - key.tokens_at).count();
    key.tokens = std::min(burst, key.tokens + elapsed_s * cfg_.key_rate_per_s);
    key.tokens_at = now;
    if (key.tokens < 1.0) {
        auto wait_s = static_cast<std::int64_t>(std::ceil((1.0 - key.tokens) / cfg_.key_rate_per_s));
        json extra = json::object();
        if (cfg_.retry_after) {
            extra["retry_after_s"] = std::max(cfg_.retry_after_s, wait_s);
        }
        throw api_error("RATE_LIMITED", 429,
                        rate_limit_message(cfg_, "too many requests for this API key; retry later with backoff"), extra);
    }
    key.tokens -= 1.0;
}

void service::check_account_cap(account_state& account, const std::string& action, time_point now) {
    auto cap = cfg_.account_daily_caps.find(action);
    if (cap == cfg_.account_daily_caps.end()) {
        return;
    }
    std::int64_t today = utc_day(now);
    if (account.requests_day != today) {
        account.requests_today.clear();
        account.requests_day = today;
    }
    int& used = account.requests_today[action];
    if (used >= cap->second) {
        json extra = json::object();
        if (cfg_.retry_after) {
            auto to_midnight_s = ((today + 1) * 86'400'000 - unix_ms(now) + 999) / 1000;
            extra["retry_after_s"] = std::max<std::int64_t>(1, to_midnight_s);
        }
        throw api_error("RATE_LIMITED", 429,
                        rate_limit_message(cfg_, "daily limit of " + std::to_string(cap->second) + " '" + action +
                                                     "' requests reached for account " + account.id),
                        extra);
    }
    ++used;
}

namespace {

// Marks (in api_error::extra, never sent) the 429s whose window the sandbox itself enforces.
constexpr const char* enforced_window_marker = "enforced_window";

std::string account_scope_id(const std::string& account_id, const std::string& action) {
    return account_id + "\n" + action;
}

} // namespace

void service::note_key_arrival(const request_record& rec) {
    if (const auto* w = traffic_.inside(limit_scope::key, rec.key, rec.arrived)) {
        if (rec.arrived < w->start + std::chrono::milliseconds(cfg_.retry_after_grace_ms)) {
            traffic_.in_flight(limit_scope::key);
            return;
        }
        traffic_.violation(limit_scope::key, json{{"scope", "key"},
                                                  {"key", rec.key},
                                                  {"path", rec.path},
                                                  {"arrived_ms", unix_ms(rec.arrived)},
                                                  {"window_start_ms", unix_ms(w->start)},
                                                  {"window_end_ms", unix_ms(w->end)}});
    }
}

void service::check_account_window(const account_state& account, const request_record& rec) {
    if (const auto* w = traffic_.inside(limit_scope::account_action, account_scope_id(account.id, rec.action),
                                        rec.arrived)) {
        if (rec.arrived < w->start + std::chrono::milliseconds(cfg_.retry_after_grace_ms)) {
            traffic_.in_flight(limit_scope::account_action);
        } else {
            traffic_.violation(limit_scope::account_action, json{{"scope", "account_action"},
                                                                 {"key", rec.key},
                                                                 {"account_id", account.id},
                                                                 {"action", rec.action},
                                                                 {"arrived_ms", unix_ms(rec.arrived)},
                                                                 {"window_start_ms", unix_ms(w->start)},
                                                                 {"window_end_ms", unix_ms(w->end)}});
        }
        if (rec.arrived < w->enforced_end) {
            // An injected 429's scope is still limited for a request that arrived inside it.
            json extra = {{enforced_window_marker, true}};
            if (cfg_.retry_after) {
                auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(w->enforced_end - now()).count();
                extra["retry_after_s"] = std::max<std::int64_t>(1, (left_ms + 999) / 1000);
            }
            throw api_error("RATE_LIMITED", 429,
                            rate_limit_message(cfg_, "too many '" + rec.action + "' requests for account " +
                                                         account.id + "; the Retry-After of an earlier answer has not passed"),
                            extra);
        }
    }
    if (cfg_.rate_limited_rate > 0 && rng_.chance(cfg_.rate_limited_rate)) {
        traffic_.injected_rate_limited();
        json extra = {{enforced_window_marker, true}};
        if (cfg_.retry_after) {
            extra["retry_after_s"] = cfg_.rate_limited_retry_after_s;
        }
        throw api_error("RATE_LIMITED", 429,
                        rate_limit_message(cfg_, "too many '" + rec.action + "' requests for account " + account.id +
                                                     "; retry later with backoff"),
                        extra);
    }
}

void service::note_rate_limited(const api_error& e, const request_record& rec, limit_scope scope) {
    if (e.code() != "RATE_LIMITED") {
        return;
    }
    auto it = e.extra().find("retry_after_s");
    if (it == e.extra().end() || !it->is_number_integer()) {
        return; // no Retry-After: no window was announced
    }
    std::string id;
    if (scope == limit_scope::key) {
        id = rec.key;
    } else if (!rec.account_id.empty() && !rec.action.empty()) {
        id = account_scope_id(rec.account_id, rec.action);
    }
    if (id.empty()) {
        return;
    }
    auto start = now();
    traffic_.opened(scope, id, start, start + std::chrono::seconds(it->get<std::int64_t>()),
                    e.extra().contains(enforced_window_marker));
}

void service::note_finished(const request_record& rec, bool answered) {
    traffic_.request();
    if (answered) {
        traffic_.answered(now(), rec.latency_ms, cfg_.request_log_max);
    }
}

namespace {

// Turns an api_error into the HTTP answer (with Retry-After where the error carries one).
api::response error_reply(const settings& cfg, const api::request& req, const api_error& e, const std::string& action,
                          const std::string& account_id, time_point now) {
    json body = error_envelope(cfg, e, action, account_id, now);
    body["error"].erase(enforced_window_marker);
    std::optional<std::int64_t> retry_after;
    if (auto it = body["error"].find("retry_after_s"); it != body["error"].end()) {
        retry_after = it->get<std::int64_t>();
        body["error"].erase(it);
    }
    auto res = json_reply(req, e.http_status(), body);
    if (retry_after) {
        res.set(http::field::retry_after, std::to_string(*retry_after));
    }
    return res;
}

// "/v1/x/{id}/start" against "/v1/x/42/start" -> true with {id: "42"}.
bool match_pattern(std::string_view pattern, std::string_view path, std::map<std::string, std::string>& captured) {
    while (!pattern.empty() && !path.empty()) {
        auto pe = pattern.find('/', 1);
        auto te = path.find('/', 1);
        std::string_view ps = pattern.substr(0, pe);
        std::string_view ts = path.substr(0, te);
        if (ps.size() > 3 && ps[1] == '{' && ps.back() == '}') {
            if (ts.size() < 2) {
                return false;
            }
            captured[std::string(ps.substr(2, ps.size() - 3))] = std::string(ts.substr(1));
        } else if (ps != ts) {
            return false;
        }
        pattern = pe == std::string_view::npos ? std::string_view{} : pattern.substr(pe);
        path = te == std::string_view::npos ? std::string_view{} : path.substr(te);
    }
    return pattern.empty() && path.empty();
}

json parse_body(const api::request& req) {
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

} // namespace

asio::awaitable<api::handler_result> service::handle_api(api::request& req, beast::tcp_stream& stream) {
    auto parsed = boost::urls::parse_origin_form(req.target());
    if (!parsed) {
        co_return api::handler_result::reply(
            json_reply(req, 400, error_envelope(cfg_, invalid_params("malformed request target"), "", "", now())));
    }
    std::string path = parsed->path();
    auto query = decoded_query(req.target());
    while (path.size() > 1 && path.back() == '/') {
        path.pop_back();
    }
    auto method = req.method();
    if (path == "/healthz") {
        co_return api::handler_result::reply(json_reply(req, 200, json{{"status", "ok"}}));
    }
    if (path == "/v2/webhooks" || path.starts_with("/v2/webhooks/")) {
        co_return co_await handle_webhooks_request(*this, req, stream);
    }

    // Route table of the account endpoints and the V2 categories.
    enum class route { none, login, checkpoint, accounts, account, credits, action };
    route r = route::none;
    http::verb allowed = http::verb::post;
    std::string category;
    std::string account_path_id;
    if (path == "/v2/login") {
        r = route::login;
    } else if (path == "/v2/checkpoint") {
        r = route::checkpoint;
    } else if (path == "/v2/accounts") {
        r = route::accounts;
        allowed = http::verb::get;
    } else if (path.starts_with("/v2/accounts/") && path.find('/', 13) == std::string::npos) {
        r = route::account;
        allowed = http::verb::get;
        account_path_id = path.substr(13);
    } else if (path == "/v2/credits") {
        r = route::credits;
        allowed = http::verb::get;
    } else if (path.starts_with("/v2/") && actions_.categories.contains(path.substr(4))) {
        r = route::action;
        category = path.substr(4);
    }
    if (r == route::none) {
        // V1 routes: match the pattern segment by segment; {name} segments capture.
        const v1_route* method_mismatch = nullptr;
        for (const auto& v1 : v1_routes_.routes) {
            std::map<std::string, std::string> captured;
            if (!match_pattern(v1.pattern, path, captured)) {
                continue;
            }
            if (v1.method != std::string(req.method_string())) {
                method_mismatch = &v1;
                continue;
            }
            request_record rec;
            rec.method = std::string(req.method_string());
            rec.path = path;
            rec.action = v1.name;
            co_return co_await handle_v1(req, v1, std::move(captured), query, rec);
        }
        if (method_mismatch != nullptr) {
            std::string allow;
            for (const auto& v1 : v1_routes_.routes) {
                std::map<std::string, std::string> ignored;
                if (match_pattern(v1.pattern, path, ignored)) {
                    allow += allow.empty() ? v1.method : ", " + v1.method;
                }
            }
            auto res = json_reply(req, 405,
                                  json{{"status", "error"},
                                       {"code", "METHOD_NOT_ALLOWED"},
                                       {"message", "method " + std::string(req.method_string()) +
                                                       " is not allowed on " + path + "; use " + allow}});
            res.set(http::field::allow, allow);
            co_return api::handler_result::reply(std::move(res));
        }
        co_return api::handler_result::reply(json_reply(
            req, 404,
            error_envelope(cfg_, not_found("no endpoint " + std::string(req.method_string()) + " " + path), "", "",
                           now())));
    }
    if (method != allowed) {
        auto res = json_reply(req, 405,
                              error_envelope(cfg_, api_error("METHOD_NOT_ALLOWED", 405,
                                                       "method " + std::string(req.method_string()) +
                                                           " is not allowed on " + path + "; use " +
                                                           std::string(http::to_string(allowed))),
                                             "", "", now()));
        res.set(http::field::allow, http::to_string(allowed));
        co_return api::handler_result::reply(std::move(res));
    }

    request_record rec;
    rec.arrived = now();
    rec.method = std::string(req.method_string());
    rec.path = path;
    auto finish = [&](api::handler_result result) {
        rec.at_ms = unix_ms(now());
        bool answered = result.what == api::handler_result::kind::respond;
        if (answered) {
            rec.status = static_cast<int>(result.res.result_int());
        }
        note_finished(rec, answered);
        log_request(rec);
        return result;
    };
    bool past_key_rate = false; // a 429 before it is the key's; after it, the account's
    try {
        auto key_header = req["x-api-key"];
        if (key_header.empty()) {
            throw invalid_api_key("missing x-api-key header");
        }
        key_state* key = find_key(key_header);
        if (key == nullptr) {
            throw invalid_api_key("the API key is invalid or expired");
        }
        rec.key = key->key;
        note_key_arrival(rec);
        check_key_rate(*key, now());
        past_key_rate = true;
        rec.latency_ms = draw_latency_ms(cfg_, rng_);
        if (rec.latency_ms > 0) {
            asio::steady_timer t(executor_, std::chrono::milliseconds(rec.latency_ms));
            co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
        }
        switch (r) {
        case route::login: co_return finish(handle_login(req, *key, rec));
        case route::checkpoint: co_return finish(handle_checkpoint(req, *key, rec));
        case route::accounts: co_return finish(handle_list_accounts(req, query, *key, rec));
        case route::account: co_return finish(handle_get_account(req, account_path_id, *key, rec));
        case route::credits: co_return finish(handle_credits(req, *key, rec));
        case route::action: co_return finish(co_await handle_action(req, category, *key, rec));
        case route::none: break;
        }
    } catch (const api_error& e) {
        rec.error_code = e.code();
        note_rate_limited(e, rec, past_key_rate ? limit_scope::account_action : limit_scope::key);
        co_return finish(api::handler_result::reply(error_reply(cfg_, req, e, rec.action, rec.account_id, now())));
    }
    co_return finish(api::handler_result::reply(json_reply(req, 500, json{{"success", false}})));
}

asio::awaitable<api::handler_result> service::handle_action(api::request& req, const std::string& category,
                                                            key_state& key, request_record& rec) {
    json body = parse_body(req);
    auto account_it = body.find("account_id");
    auto action_it = body.find("action");
    if (action_it != body.end() && action_it->is_string()) {
        rec.action = action_it->get<std::string>();
    }
    if (account_it == body.end() || account_it->is_null()) {
        throw invalid_params("account_id is required");
    }
    if (!account_it->is_string()) {
        throw invalid_params(std::string("account_id must be a string, got ") + json_type_name(*account_it));
    }
    rec.account_id = account_it->get<std::string>();
    if (action_it == body.end() || action_it->is_null()) {
        throw invalid_params("action is required");
    }
    if (!action_it->is_string()) {
        throw invalid_params(std::string("action must be a string, got ") + json_type_name(*action_it));
    }
    json empty = json::object();
    auto params_it = body.find("params");
    if (params_it != body.end() && !params_it->is_null() && !params_it->is_object()) {
        throw invalid_params(std::string("params must be an object, got ") + json_type_name(*params_it));
    }
    const json& params = (params_it == body.end() || params_it->is_null()) ? empty : *params_it;

    account_state* account = find_account(rec.account_id);
    if (account == nullptr || account->key != key.key) {
        throw invalid_account(rec.account_id);
    }
    if (!account->active || account->status != "connected") {
        throw account_inactive(rec.account_id);
    }
    const auto& actions = actions_.categories.at(category);
    auto fn = actions.find(rec.action);
    if (fn == actions.end()) {
        std::string known;
        for (const auto& [name, f] : actions) {
            known += known.empty() ? name : ", " + name;
        }
        throw api_error("INVALID_ACTION", 400,
                        "action '" + rec.action + "' is not supported on /v2/" + category + " (supported: " + known + ")");
    }
    check_account_window(*account, rec);
    check_account_cap(*account, rec.action, now());

    // Faults, drawn before the handler so that they never leave a half-done effect.
    if (cfg_.drop_connection_rate > 0 && rng_.chance(cfg_.drop_connection_rate)) {
        rec.error_code = "DROPPED";
        co_return api::handler_result::dropped();
    }
    if (cfg_.internal_error_rate > 0 && rng_.chance(cfg_.internal_error_rate)) {
        throw api_error("INTERNAL_ERROR", 500, "unexpected server error (injected)");
    }
    if (cfg_.channel_error_rate > 0 && rng_.chance(cfg_.channel_error_rate)) {
        throw channel_error("the platform refused the request (injected upstream failure)");
    }

    action_context ctx{*this, key, *account, params, category, rec.action, now()};
    json data;
    try {
        data = fn->second(ctx);
    } catch (const api_error&) {
        // A handler must charge only once it cannot fail any more; undo a charge if it did.
        if (ctx.charged > 0) {
            key.credits += ctx.charged;
            key.charged_total -= ctx.charged;
            key.charged_by_action[rec.action] -= ctx.charged;
        }
        throw;
    }
    rec.credits = ctx.charged;
    if (ctx.side_effect && cfg_.lost_response_rate > 0 && (rec.action == "invite" || rec.action == "send") &&
        rng_.chance(cfg_.lost_response_rate)) {
        rec.error_code = "RESPONSE_LOST";
        co_return api::handler_result::dropped();
    }
    auto answer = success_envelope(cfg_, std::move(data), rec.action, account->id, ctx.charged, ctx.now);
    if (cfg_.garbled_response_rate > 0 && rng_.chance(cfg_.garbled_response_rate)) {
        // An answer no client can read (an API whose proxy cut it, or a bug): the effect and the
        // charge stand, as with a lost response, but the client gets a 200 to make sense of.
        rec.error_code = "GARBLED";
        const std::string whole = answer.dump(-1, ' ', false, json::error_handler_t::replace);
        co_return api::handler_result::reply(api::json_response(req.version(), req.keep_alive(), http::status::ok,
                                                                whole.substr(0, whole.size() / 2)));
    }
    co_return api::handler_result::reply(json_reply(req, 200, answer));
}

asio::awaitable<api::handler_result> service::handle_v1(api::request& req, const v1_route& route,
                                                        std::map<std::string, std::string> path_params,
                                                        const std::map<std::string, std::string>& query,
                                                        request_record& rec) {
    rec.arrived = now();
    auto finish = [&](api::handler_result result) {
        rec.at_ms = unix_ms(now());
        bool answered = result.what == api::handler_result::kind::respond;
        if (answered) {
            rec.status = static_cast<int>(result.res.result_int());
        }
        note_finished(rec, answered);
        log_request(rec);
        return result;
    };
    key_state* key = nullptr;
    std::int64_t charged = 0;
    bool past_key_rate = false;
    try {
        auto key_header = req["x-api-key"];
        if (key_header.empty()) {
            throw invalid_api_key("missing x-api-key header");
        }
        key = find_key(key_header);
        if (key == nullptr) {
            throw invalid_api_key("the API key is invalid or expired");
        }
        rec.key = key->key;
        note_key_arrival(rec);
        check_key_rate(*key, now());
        past_key_rate = true;
        rec.latency_ms = draw_latency_ms(cfg_, rng_);
        if (rec.latency_ms > 0) {
            asio::steady_timer t(executor_, std::chrono::milliseconds(rec.latency_ms));
            co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
        }
        json empty = json::object();
        json body = (req.method() == http::verb::get || req.method() == http::verb::delete_ || req.body().empty())
                        ? json::object()
                        : parse_body(req);
        if (auto it = body.find("account_id"); it != body.end() && it->is_string()) {
            rec.account_id = it->get<std::string>();
        }
        if (cfg_.drop_connection_rate > 0 && rng_.chance(cfg_.drop_connection_rate)) {
            rec.error_code = "DROPPED";
            co_return finish(api::handler_result::dropped());
        }
        if (cfg_.internal_error_rate > 0 && rng_.chance(cfg_.internal_error_rate)) {
            throw api_error("INTERNAL_ERROR", 500, "service temporarily unavailable (injected)");
        }
        v1_context ctx{*this, *key, body, path_params, query, rec.method, route.name, now(), 0, false, json::object(),
                       std::nullopt};
        json data;
        try {
            data = route.fn(ctx);
        } catch (const api_error&) {
            charged = ctx.charged;
            throw;
        }
        rec.credits = ctx.charged;
        if (ctx.side_effect && cfg_.lost_response_rate > 0 && route.name == "messaging_send" &&
            rng_.chance(cfg_.lost_response_rate)) {
            rec.error_code = "RESPONSE_LOST";
            co_return finish(api::handler_result::dropped());
        }
        json out = {{"status", "success"}, {"data", std::move(data)}};
        if (ctx.message) {
            out["message"] = *ctx.message;
        }
        for (auto& [k, v] : ctx.top_level.items()) {
            out[k] = v;
        }
        add_extra_fields(cfg_, out);
        co_return finish(api::handler_result::reply(json_reply(req, 200, out)));
    } catch (const api_error& e) {
        if (key != nullptr && charged > 0) {
            key->credits += charged;
            key->charged_total -= charged;
            key->charged_by_action[route.name] -= charged;
        }
        rec.error_code = e.code();
        if (!past_key_rate) {
            note_rate_limited(e, rec, limit_scope::key); // V1 has no per-account limits
        }
        int status = (e.code() == "RATE_LIMITED" || e.code() == "INTERNAL_ERROR") ? e.http_status() : 200;
        json out = {{"status", "error"}, {"message", e.what()}, {"code", e.code()}};
        for (const auto& [k, v] : e.extra().items()) {
            if (k != "retry_after_s") {
                out[k] = v;
            }
        }
        add_extra_fields(cfg_, out);
        auto res = json_reply(req, status, out);
        if (auto it = e.extra().find("retry_after_s"); it != e.extra().end()) {
            res.set(http::field::retry_after, std::to_string(it->get<std::int64_t>()));
        }
        co_return finish(api::handler_result::reply(std::move(res)));
    }
}

// ---------------------------------------------------------------------------------------------
// Accounts, login, checkpoint, credits

account_state& service::create_account(key_state& key, const std::string& id, const std::string& seed_text) {
    account_state& a = accounts_[id];
    a.id = id;
    a.key = key.key;
    a.created_at = a.updated_at = now();
    a.self = world_.make_account_owner(seed_text);
    a.name = a.self.first_name + " " + a.self.last_name;
    seed_account_network(*this, a);
    return a;
}

api::handler_result service::handle_login(api::request& req, key_state& key, request_record& rec) {
    rec.action = "login";
    json body = parse_body(req);
    const std::string& platform = require_string(body, "platform");
    if (platform != "network" && platform != "messaging") {
        throw invalid_params("platform must be 'network' or 'messaging', got '" + platform + "'");
    }
    const std::string& country = require_string(body, "country");
    if (country.size() != 2 || !std::isalpha(static_cast<unsigned char>(country[0])) ||
        !std::isalpha(static_cast<unsigned char>(country[1]))) {
        throw invalid_params("country must be a two-letter country code, got '" + country + "'");
    }
    auto token = optional_string(body, "login_token");
    auto email = optional_string(body, "email");
    auto password = optional_string(body, "password");
    if (token && (email || password)) {
        throw invalid_params("give either login_token or email and password, not both");
    }
    std::string seed_text;
    if (token) {
        if (token->empty()) {
            throw invalid_params("login_token must not be empty");
        }
        seed_text = "token:" + *token;
    } else if (email || password) {
        if (!email || email->find('@') == std::string::npos) {
            throw invalid_params("email is required with password and must be an e-mail address");
        }
        if (!password || password->empty()) {
            throw invalid_params("password is required with email");
        }
        seed_text = "email:" + *email;
    } else {
        throw invalid_params("login_token, or email and password, is required");
    }
    std::string id = "acc_" + hex(hash64(key.key + "\n" + seed_text, cfg_.seed));
    rec.account_id = id;
    account_state* existing = find_account(id);
    if (existing != nullptr) {
        // E-mail accounts keep a hash of the password in login_token (never the password).
        if (email && existing->login_token != hex(hash64(*password, cfg_.seed))) {
            throw invalid_params("email or password is wrong");
        }
        // Idempotent and free for a known account; a login reactivates an inactive account.
        if (existing->status != "checkpoint_required") {
            existing->active = true;
            existing->status = "connected";
        }
        existing->country = country;
        existing->updated_at = now();
        json data = {{"account_id", id}, {"status", existing->status}};
        if (existing->status == "checkpoint_required") {
            data["challenge_type"] = existing->challenge_type;
        }
        return api::handler_result::reply(json_reply(req, 200, success_envelope(cfg_, data, "login", id, 0, now())));
    }
    account_state& a = create_account(key, id, seed_text);
    a.platform = platform;
    a.country = country;
    if (token) {
        a.login_token = *token;
    } else {
        a.email = *email;
        a.login_token = hex(hash64(*password, cfg_.seed));
    }
    json data = {{"account_id", id}};
    if (unit_from_hash(hash64(seed_text, cfg_.seed ^ 0xc0de)) < cfg_.checkpoint_rate) {
        a.status = "checkpoint_required";
        a.active = false;
        a.challenge_type = "code_challenge";
        data["challenge_type"] = a.challenge_type;
    }
    data["status"] = a.status;
    return api::handler_result::reply(json_reply(req, 200, success_envelope(cfg_, data, "login", id, 0, now())));
}

api::handler_result service::handle_checkpoint(api::request& req, key_state& key, request_record& rec) {
    rec.action = "checkpoint";
    json body = parse_body(req);
    const std::string& id = require_string(body, "account_id");
    rec.account_id = id;
    account_state* a = find_account(id);
    if (a == nullptr || a->key != key.key) {
        throw invalid_account(id);
    }
    if (a->status != "checkpoint_required") {
        throw invalid_params("account '" + id + "' has no pending checkpoint");
    }
    auto code = optional_string(body, "code");
    if (!code) {
        throw invalid_params("code is required for a code_challenge");
    }
    if (*code != cfg_.checkpoint_code) {
        throw invalid_params("code is wrong");
    }
    if (key.credits < 1) {
        throw insufficient_credits(1, key.credits);
    }
    record_charge(key, "checkpoint", 1);
    rec.credits = 1;
    a->status = "connected";
    a->active = true;
    a->challenge_type.clear();
    a->updated_at = now();
    json data = {{"account_id", id}, {"status", "connected"}};
    return api::handler_result::reply(
        json_reply(req, 200, success_envelope(cfg_, std::move(data), "checkpoint", id, 1, now())));
}

namespace {

json account_item(const account_state& a) {
    return json{{"account_id", a.id},
                {"platform", a.platform},
                {"account_name", a.name},
                {"is_active", a.active},
                {"status", a.active ? "active" : "inactive"},
                {"country", a.country},
                {"created_at", iso8601_s(a.created_at)},
                {"updated_at", iso8601_s(a.updated_at)}};
}

std::int64_t query_int(const std::map<std::string, std::string>& query, const std::string& name, std::int64_t def,
                       std::int64_t min, std::int64_t max) {
    auto it = query.find(name);
    if (it == query.end()) {
        return def;
    }
    const std::string* v = &it->second;
    std::int64_t out = 0;
    auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (ec != std::errc{} || ptr != v->data() + v->size() || out < min || out > max) {
        throw invalid_params(name + " must be an integer between " + std::to_string(min) + " and " +
                             std::to_string(max) + ", got '" + *v + "'");
    }
    return out;
}

} // namespace

api::handler_result service::handle_list_accounts(api::request& req,
                                                  const std::map<std::string, std::string>& query, key_state& key,
                                                  request_record& rec) {
    rec.action = "list_accounts";
    auto limit = query_int(query, "limit", 50, 1, 500);
    auto offset = query_int(query, "offset", 0, 0, std::numeric_limits<std::int32_t>::max());
    json items = json::array();
    std::int64_t total = 0;
    for (const auto& [id, a] : accounts_) {
        if (a.key != key.key) {
            continue;
        }
        if (total >= offset && total < offset + limit) {
            items.push_back(account_item(a));
        }
        ++total;
    }
    json data = {{"items", items}, {"total", total}, {"limit", limit}, {"offset", offset}};
    return api::handler_result::reply(
        json_reply(req, 200, success_envelope(cfg_, data, "list_accounts", "", 0, now())));
}

api::handler_result service::handle_get_account(api::request& req, const std::string& id, key_state& key,
                                                request_record& rec) {
    rec.action = "get_account";
    rec.account_id = id;
    account_state* a = find_account(id);
    if (a == nullptr || a->key != key.key) {
        throw invalid_account(id);
    }
    json data = account_item(*a);
    data["connection_status"] = a->status;
    bool monitored = false;
    for (const auto& [wid, wh] : webhooks_) {
        monitored = monitored || (wh.account_id == id && wh.active);
    }
    data["monitoring"] = monitored;
    std::size_t connections = 0;
    for (const auto& [pid, rel] : a->relations) {
        connections += rel.state == relation_state::connected ? 1 : 0;
    }
    data["activity"] = json{{"connections", connections},
                            {"invitations_sent_last_7_days", [&] {
                                 auto horizon = now() - std::chrono::hours(24 * 7);
                                 std::size_t n = 0;
                                 for (auto t : a->invitations_sent_at) {
                                     n += t >= horizon ? 1 : 0;
                                 }
                                 return n;
                             }()},
                            {"conversations", a->conversations.size()}};
    return api::handler_result::reply(json_reply(req, 200, success_envelope(cfg_, data, "get_account", id, 0, now())));
}

api::handler_result service::handle_credits(api::request& req, key_state& key, request_record& rec) {
    rec.action = "get_credits";
    json data = {{"credits", key.credits}};
    return api::handler_result::reply(json_reply(req, 200, success_envelope(cfg_, data, "get_credits", "", 0, now())));
}

} // namespace orch::sandbox
