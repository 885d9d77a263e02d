// The sandbox service: the request pipeline of the Outreach API (auth, envelope, rate limits,
// faults, credits, records) and the state every area module works on.
//
// Area modules (profiles.cpp, network.cpp, messages.cpp, webhooks.cpp) register their actions
// in an action_table and signal API errors by throwing api_error, which the pipeline turns into
// the spec's error envelope with credits_consumed 0. Exceptions never leave the pipeline.
#pragma once

#include "api/http_server.hpp"
#include "sandbox/settings.hpp"
#include "sandbox/state.hpp"
#include "sandbox/traffic.hpp"
#include "sandbox/util.hpp"
#include "sandbox/world.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <typeindex>
#include <unordered_map>

namespace orch::sandbox {

namespace asio = boost::asio;
namespace beast = boost::beast;

// An error answer of the API (spec, Errors). `extra` is merged into the `error` object.
class api_error : public std::runtime_error {
public:
    api_error(std::string code, int http_status, std::string message, json extra = json::object())
        : std::runtime_error(message), code_(std::move(code)), status_(http_status), extra_(std::move(extra)) {}
    const std::string& code() const { return code_; }
    int http_status() const { return status_; }
    const json& extra() const { return extra_; }

private:
    std::string code_;
    int status_;
    json extra_;
};

api_error invalid_params(std::string message);
api_error channel_error(std::string message);
api_error forbidden(std::string message);
api_error insufficient_credits(std::int64_t required, std::int64_t remaining);

class service;

// Everything an action handler may use. `params` is always an object (empty when absent).
struct action_context {
    service& svc;
    key_state& key;
    account_state& account;
    const json& params;
    std::string category;
    std::string action;
    time_point now;
    std::int64_t charged = 0;
    bool side_effect = false; // set by handlers that changed the world (invite, send, ...)

    // Charges credits to the key. Call it once the answer is known and before any side effect:
    // it throws INSUFFICIENT_CREDITS (changing nothing) when the balance is too low.
    void charge(std::int64_t credits);
};

// Returns the `data` object of the success envelope.
using action_fn = std::function<json(action_context&)>;

struct action_table {
    // category ("profiles", "network", ...) -> action -> handler
    std::map<std::string, std::map<std::string, action_fn>> categories;
    void add(const std::string& category, const std::string& action, action_fn fn) {
        categories[category][action] = std::move(fn);
    }
};

// ---- V1 endpoints (/v1/... and /messages/send): one URL per operation, the V1 envelope
// {status: "success", data} / {status: "error", message}. V1 errors answer HTTP 200 (the spec:
// "V1 returned 200 for most errors"), except RATE_LIMITED (429, with Retry-After) and
// INTERNAL_ERROR (500); the V2 code is added as `code` so clients can classify. Credits are
// charged only on success, like V2 (spec: "credits are deducted only on successful searches").
struct v1_context {
    service& svc;
    key_state& key;
    const json& body;                                     // {} for bodiless requests
    const std::map<std::string, std::string>& path_params; // {id} segments of the pattern
    const std::map<std::string, std::string>& query;
    std::string method;
    std::string endpoint;                                 // the route's name, for records
    time_point now;
    std::int64_t charged = 0;
    bool side_effect = false;
    json top_level = json::object();                      // extra top-level fields of the answer
    std::optional<std::string> message;                   // optional top-level message on success

    void charge(std::int64_t credits); // as action_context::charge
};

// Returns the `data` of the success answer.
using v1_fn = std::function<json(v1_context&)>;

struct v1_route {
    std::string method;  // GET, POST, PUT, DELETE
    std::string pattern; // "/v1/webhooks/accounts/{id}/start"
    std::string name;    // "start_webhook_account"
    v1_fn fn;
};

struct v1_table {
    std::vector<v1_route> routes;
    void add(std::string method, std::string pattern, std::string name, v1_fn fn) {
        routes.push_back({std::move(method), std::move(pattern), std::move(name), std::move(fn)});
    }
};

// ---- Parameter helpers for handlers: each throws INVALID_PARAMS naming the parameter. ----
const std::string& require_string(const json& params, const char* name);
std::optional<std::string> optional_string(const json& params, const char* name);
std::optional<std::int64_t> optional_int(const json& params, const char* name, std::int64_t min, std::int64_t max);
std::optional<bool> optional_bool(const json& params, const char* name);
// A filter that may be a string or an array of strings; empty when absent.
std::vector<std::string> string_or_array(const json& params, const char* name);
// Credits for list-returning actions: 1 per 10 results, rounded up, at least 1 (spec, Credits 1-2).
std::int64_t list_cost(std::size_t results);

// ---- Area modules (each in its own .cpp). ----
void register_profiles_actions(action_table& table);  // profiles.cpp
void register_network_actions(action_table& table);   // network.cpp
void register_messages_actions(action_table& table);  // messages.cpp
void register_content_actions(action_table& table);   // content.cpp: /v2/content
void register_recruiter_actions(action_table& table); // recruiter.cpp: /v2/recruiter
void register_mail_actions(action_table& table);      // mail.cpp: /v2/mail and /v2/enrich
void register_v1_data_routes(v1_table& table);        // v1_data.cpp: /v1/data/...
void register_v1_jobs_routes(v1_table& table);        // v1_jobs.cpp: hiring companies, company jobs
void register_v1_accounts_routes(v1_table& table);    // v1_accounts.cpp: /messages/send, /v1/webhooks/accounts
void register_v1_reaction_routes(v1_table& table);    // content.cpp: profile reactions, post reactions
// Gives a new account its existing connections and received invitations (network.cpp).
void seed_account_network(service& svc, account_state& account);
// Simulation triggers, also used by the control interface. Each returns false (and does
// nothing) when the situation does not allow it, with a reason in `why`.
bool simulate_acceptance(service& svc, account_state& account, person_id who, std::string& why); // network.cpp
bool simulate_received_invitation(service& svc, account_state& account, person_id who, std::string& why);
bool simulate_reply(service& svc, account_state& account, person_id who, const std::string& text,
                    std::string& why); // messages.cpp
// V2 webhooks: every request under /v2/webhooks (webhooks.cpp).
asio::awaitable<api::handler_result> handle_webhooks_request(service& svc, api::request& req,
                                                             beast::tcp_stream& stream);
// Hands a published event to the webhooks of its account (webhooks.cpp).
void fan_out_event(service& svc, const std::shared_ptr<const stored_event>& event);
// Stops the webhooks of an account's key when its credits run out for monitoring (webhooks.cpp).
void deactivate_webhooks_of(service& svc, const std::string& account_id);
// Hands a published event to the active V1 network webhook accounts that monitor its account
// (v1_accounts.cpp).
void fan_out_v1_event(service& svc, const std::shared_ptr<const stored_event>& event);
// The control endpoints under /control/v1-accounts (v1_accounts.cpp): returns (status, body).
std::pair<int, json> v1_accounts_control(service& svc, const std::string& method, const std::string& path,
                                         const std::string& body);

class service {
public:
    service(asio::any_io_executor executor, settings cfg);

    // The API listener's handler and the control listener's handler.
    asio::awaitable<api::handler_result> handle_api(api::request& req, beast::tcp_stream& stream);
    asio::awaitable<api::handler_result> handle_control(api::request& req, beast::tcp_stream& stream);

    // Starts background timers (daily monitoring charge). Idempotent.
    void start();

    const settings& cfg() const { return cfg_; }
    settings& mutable_cfg() { return cfg_; }
    const sandbox::world& world() const { return world_; }
    asio::any_io_executor executor() const { return executor_; }
    time_point now() const { return sys_clock::now(); }
    rng64& rng() { return rng_; }

    key_state* find_key(std::string_view key);
    account_state* find_account(std::string_view account_id);
    std::map<std::string, account_state>& accounts() { return accounts_; }
    std::map<std::string, webhook_state>& webhooks() { return webhooks_; }

    // Charges `credits` to `key` under `action` (no balance check: callers check first).
    void record_charge(key_state& key, const std::string& action, std::int64_t credits);
    // Charges today's monitoring fee for `account` once per UTC day. Returns false when the key
    // cannot pay it (nothing charged).
    bool ensure_monitoring_charged(account_state& account);

    // A fresh 19-digit invitation id (always above 2^53, so a double would corrupt it).
    std::uint64_t next_invitation_id();
    // A fresh id "<prefix><16 hex>".
    std::string new_id(std::string_view prefix);
    // A fresh 24-hex event id, increasing.
    std::string next_event_id();

    // Runs `fn` on the service's thread after `delay`.
    void schedule_after(std::chrono::milliseconds delay, std::function<void()> fn);

    // Publishes an event of `account`: stores it, records it and hands it to its webhooks.
    // `body` is the inner `event` object; its `type` and `timestamp` are filled in.
    // `person`: whom the event is about, kept for the control interface whatever the payload says
    // of them (a dialect may name nobody).
    std::shared_ptr<const stored_event> publish_event(account_state& account, const std::string& type, json body,
                                                      std::string person = {});
    const std::deque<std::shared_ptr<const stored_event>>& events() const { return events_; }
    const stored_event* find_event(std::string_view event_id) const;

    // Records for the control interface.
    std::map<std::pair<std::string, person_id>, invitation_record>& invitation_records() { return invitations_; }
    std::vector<message_record>& message_records() { return messages_; }
    std::vector<json>& visit_records() { return visits_; }

    // State of an area module that needs more than state.hpp holds (posts, jobs, V1 webhook
    // accounts...), created on first use. T must be constructible from service&.
    template <typename T>
    T& area() {
        auto& slot = areas_[std::type_index(typeid(T))];
        if (!slot) {
            slot = std::make_shared<T>(*this);
        }
        return *static_cast<T*>(slot.get());
    }

    // Latency applied and Retry-After windows announced (GET /control/stats).
    const traffic_monitor& traffic() const { return traffic_; }

    // Disconnects an account (control interface): disconnection event, then ACCOUNT_INACTIVE
    // until the next login.
    void disconnect_account(account_state& account, const std::string& reason);

private:
    struct route_match;
    asio::awaitable<api::handler_result> handle_v1(api::request& req, const v1_route& route,
                                                   std::map<std::string, std::string> path_params,
                                                   const std::map<std::string, std::string>& query,
                                                   request_record& rec);
    asio::awaitable<api::handler_result> handle_action(api::request& req, const std::string& category,
                                                       key_state& key, request_record& rec);
    api::handler_result handle_login(api::request& req, key_state& key, request_record& rec);
    api::handler_result handle_checkpoint(api::request& req, key_state& key, request_record& rec);
    api::handler_result handle_list_accounts(api::request& req, const std::map<std::string, std::string>& query,
                                             key_state& key, request_record& rec);
    api::handler_result handle_get_account(api::request& req, const std::string& id, key_state& key,
                                           request_record& rec);
    api::handler_result handle_credits(api::request& req, key_state& key, request_record& rec);

    // Applies the per-key rate limit and forced bursts; throws RATE_LIMITED.
    void check_key_rate(key_state& key, time_point now);
    void check_account_cap(account_state& account, const std::string& action, time_point now);
    // Retry-After windows: counts a request of `key` that arrived inside the key's window.
    void note_key_arrival(const request_record& rec);
    // Answers 429 (and counts a violation) for a request that arrived inside the window of its
    // account and action; then draws the injected RATE_LIMITED answers (rate_limited_rate).
    void check_account_window(const account_state& account, const request_record& rec);
    // Remembers the window a 429 with Retry-After announces for its scope.
    void note_rate_limited(const api_error& e, const request_record& rec, limit_scope scope);
    // Counts a finished request, and its applied latency when it was answered.
    void note_finished(const request_record& rec, bool answered);
    void log_request(request_record rec);
    account_state& create_account(key_state& key, const std::string& id, const std::string& seed_text);
    void schedule_monitoring_tick();

    asio::any_io_executor executor_;
    settings cfg_;
    sandbox::world world_;
    rng64 rng_;
    action_table actions_;
    std::map<std::string, key_state, std::less<>> keys_;
    std::map<std::string, account_state> accounts_;
    std::map<std::string, webhook_state> webhooks_;
    std::deque<std::shared_ptr<const stored_event>> events_;
    std::unordered_map<std::string, std::shared_ptr<const stored_event>> events_by_id_;
    std::map<std::pair<std::string, person_id>, invitation_record> invitations_;
    std::vector<message_record> messages_;
    std::vector<json> visits_;
    std::deque<request_record> request_log_;
    traffic_monitor traffic_;
    std::uint64_t id_counter_ = 0;
    std::uint64_t event_counter_ = 0;
    time_point last_event_at_{};
    std::uint64_t invitation_counter_ = 0;
    bool started_ = false;
    v1_table v1_routes_;
    std::unordered_map<std::type_index, std::shared_ptr<void>> areas_;
};

// The decoded query parameters of a request target ("/x?a=1&b=%20" -> {a: "1", b: " "}).
std::map<std::string, std::string> decoded_query(std::string_view target);

// Builds a V2 success or error envelope (metadata.timestamp, metadata.account_id on errors and
// extra fields follow the dialect of `cfg`).
json success_envelope(const settings& cfg, json data, const std::string& action, const std::string& account_id,
                      std::int64_t credits, time_point now);
json error_envelope(const settings& cfg, const api_error& e, const std::string& action, const std::string& account_id,
                    time_point now);
api::response json_reply(const api::request& req, int status, const json& body);

} // namespace orch::sandbox
