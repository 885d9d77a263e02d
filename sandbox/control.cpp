// The control interface (separate listener, off unless --control-listen is given): what tests
// and the demo read and steer. Loopback only by intent; it has no authentication.
//
//   GET  /control/side-effects            invitations (with request counts), messages, visits
//   GET  /control/requests?since_ms=N&account_id=A&action=X   the request log
//   GET  /control/credits                  per key: remaining, charged total, charged per action
//   GET  /control/events?since_ms=N        every published event
//   GET  /control/accounts                 every account with its status
//   GET  /control/people?offset=N&limit=M  people of the world (profile URLs for tests)
//   GET  /control/stats?since_ms=N&until_ms=M   requests, applied latency (mean, percentiles) of
//                                          the requests answered in [N, M), injected 429s, Retry-After
//                                          windows and the requests that arrived inside one
//   GET  /control/settings                 current settings
//   POST /control/settings {key: value}    change simulation, rate-limit and fault settings
//   POST /control/events {type, account_id, profile_url, text, reason}
//        type: accepted_invitation | message_received | invitation_received | disconnection
//   POST /control/rate-limit-burst {key, duration_ms, retry_after_s}   429 every request of the key
//   POST /control/credits {key, credits}   set a key's balance
//   GET  /control/v1-accounts, POST /control/v1-accounts/{id}/scan | /inbound, POST
//        /control/v1-accounts/advance-day   V1 webhook accounts (see v1_accounts.cpp)
#include "sandbox/service.hpp"

#include "engine/time_format.hpp"

#include <boost/url/parse.hpp>

namespace orch::sandbox {

namespace http = boost::beast::http;

namespace {

std::int64_t unix_ms(time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

struct control_error {
    int status;
    std::string message;
};

json body_object(const api::request& req) {
    json body = json::parse(req.body(), nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
        throw control_error{400, "request body must be a JSON object"};
    }
    return body;
}

std::string text_of(const json& v) {
    if (v.is_string()) {
        return v.get<std::string>();
    }
    return v.dump();
}

std::int64_t query_ms(const std::map<std::string, std::string>& q, const char* name) {
    auto it = q.find(name);
    if (it == q.end()) {
        return 0;
    }
    try {
        return std::stoll(it->second);
    } catch (...) {
        throw control_error{400, std::string(name) + " must be an integer"};
    }
}

} // namespace

asio::awaitable<api::handler_result> service::handle_control(api::request& req, beast::tcp_stream&) {
    auto parsed = boost::urls::parse_origin_form(req.target());
    std::string path = parsed ? std::string(parsed->path()) : std::string();
    auto q = decoded_query(req.target());
    bool get = req.method() == http::verb::get;
    bool post = req.method() == http::verb::post || req.method() == http::verb::put;
    auto reply = [&](int status, const json& body) { return api::handler_result::reply(json_reply(req, status, body)); };
    try {
        if (path == "/control/health" && get) {
            co_return reply(200, json{{"status", "ok"}});
        }
        if (path == "/control/side-effects" && get) {
            json inv = json::array();
            for (const auto& [k, r] : invitations_) {
                inv.push_back(json{{"account_id", r.account_id},
                                   {"profile_url", r.profile_url},
                                   {"invitation_id", std::to_string(r.invitation_id)},
                                   {"requests", r.requests},
                                   {"sent", r.sent},
                                   {"first_at", iso8601_ms(r.first_at)},
                                   {"last_at", iso8601_ms(r.last_at)},
                                   {"outcome", r.outcome}});
            }
            json msgs = json::array();
            for (const auto& m : messages_) {
                msgs.push_back(json{{"account_id", m.account_id},
                                    {"profile_url", m.profile_url},
                                    {"text", m.text},
                                    {"at", iso8601_ms(m.at)},
                                    {"kind", m.kind}});
                if (!m.to.empty()) {
                    msgs.back()["to"] = m.to;
                }
            }
            co_return reply(200, json{{"invitations", inv}, {"messages", msgs}, {"visits", visits_}});
        }
        if (path == "/control/requests" && get) {
            auto since = query_ms(q, "since_ms");
            json out = json::array();
            for (const auto& r : request_log_) {
                if (r.at_ms < since || (q.contains("account_id") && r.account_id != q["account_id"]) ||
                    (q.contains("action") && r.action != q["action"]) || (q.contains("key") && r.key != q["key"])) {
                    continue;
                }
                out.push_back(json{{"at_ms", r.at_ms},
                                   {"key", r.key},
                                   {"method", r.method},
                                   {"path", r.path},
                                   {"account_id", r.account_id},
                                   {"action", r.action},
                                   {"status", r.status},
                                   {"error_code", r.error_code},
                                   {"credits", r.credits}});
            }
            co_return reply(200, json{{"requests", out}});
        }
        if (path == "/control/credits" && get) {
            json keys = json::array();
            for (const auto& [k, ks] : keys_) {
                keys.push_back(json{{"key", k},
                                    {"credits", ks.credits},
                                    {"charged_total", ks.charged_total},
                                    {"charged_by_action", ks.charged_by_action}});
            }
            co_return reply(200, json{{"keys", keys}});
        }
        if (path == "/control/credits" && post) {
            json body = body_object(req);
            if (!body.contains("key") || !body["key"].is_string() || !body.contains("credits") ||
                !body["credits"].is_number_integer() || body["credits"].get<std::int64_t>() < 0) {
                throw control_error{400, "expected {\"key\": string, \"credits\": non-negative integer}"};
            }
            key_state* ks = find_key(body["key"].get<std::string>());
            if (ks == nullptr) {
                throw control_error{404, "unknown key"};
            }
            ks->credits = body["credits"].get<std::int64_t>();
            co_return reply(200, json{{"key", ks->key}, {"credits", ks->credits}});
        }
        if (path == "/control/events" && get) {
            auto since = query_ms(q, "since_ms");
            json out = json::array();
            for (const auto& e : events_) {
                if (unix_ms(e->created_at) >= since) {
                    out.push_back(json{{"event_id", e->event_id},
                                       {"type", e->type},
                                       {"account_id", e->account_id},
                                       {"created_at", iso8601_ms(e->created_at)},
                                       {"profile_url", e->person},
                                       {"payload", e->payload}});
                }
            }
            co_return reply(200, json{{"events", out}});
        }
        if (path == "/control/accounts" && get) {
            json out = json::array();
            for (const auto& [id, a] : accounts_) {
                out.push_back(json{{"account_id", id},
                                   {"key", a.key},
                                   {"status", a.status},
                                   {"is_active", a.active},
                                   {"profile_url", world::profile_url(a.self)}});
            }
            co_return reply(200, json{{"accounts", out}});
        }
        if (path == "/control/people" && get) {
            // The world's people in id order, for tests that need real profile URLs.
            auto offset = static_cast<std::size_t>(std::max<std::int64_t>(0, query_ms(q, "offset")));
            auto limit = static_cast<std::size_t>(q.contains("limit") ? std::max<std::int64_t>(0, query_ms(q, "limit")) : 100);
            json out = json::array();
            const auto& people = world_.people();
            for (std::size_t i = offset; i < people.size() && i < offset + limit; ++i) {
                const person& p = people[i];
                out.push_back(json{{"id", p.id},
                                   {"public_id", p.public_id},
                                   {"profile_url", world::profile_url(p)},
                                   {"first_name", p.first_name},
                                   {"last_name", p.last_name}});
            }
            co_return reply(200, json{{"people", out}, {"total", people.size()}});
        }
        if (path == "/control/stats" && get) {
            auto since = query_ms(q, "since_ms");
            auto until = query_ms(q, "until_ms");
            if (until != 0 && until < since) {
                throw control_error{400, "until_ms must not be before since_ms"};
            }
            co_return reply(200, traffic().stats(since, until));
        }
        if (path == "/control/settings" && get) {
            json out = json::object();
            for (const auto& [k, v] : describe_settings(cfg_)) {
                out[k] = v;
            }
            co_return reply(200, out);
        }
        if (path == "/control/settings" && post) {
            json body = body_object(req);
            settings candidate = cfg_;
            std::vector<std::string> errors;
            for (const auto& [k, v] : body.items()) {
                if (auto err = apply_setting(candidate, k, text_of(v))) {
                    errors.push_back(k + ": " + *err);
                }
            }
            validate(candidate, errors);
            if (!errors.empty()) {
                co_return reply(400, json{{"errors", errors}});
            }
            cfg_ = candidate;
            co_return reply(200, json{{"updated", body.size()}});
        }
        if (path == "/control/rate-limit-burst" && post) {
            json body = body_object(req);
            if (!body.contains("duration_ms") || !body["duration_ms"].is_number_integer()) {
                throw control_error{400, "duration_ms (integer) is required"};
            }
            std::vector<key_state*> targets;
            if (body.contains("key")) {
                key_state* ks = body["key"].is_string() ? find_key(body["key"].get<std::string>()) : nullptr;
                if (ks == nullptr) {
                    throw control_error{404, "unknown key"};
                }
                targets.push_back(ks);
            } else {
                for (auto& [k, ks] : keys_) {
                    targets.push_back(&ks);
                }
            }
            std::int64_t retry_after = -1;
            if (body.contains("retry_after_s") && body["retry_after_s"].is_number_integer()) {
                retry_after = body["retry_after_s"].get<std::int64_t>();
            }
            auto until = now() + std::chrono::milliseconds(body["duration_ms"].get<std::int64_t>());
            for (auto* ks : targets) {
                ks->burst_until = until;
                ks->burst_retry_after_s = retry_after;
            }
            co_return reply(200, json{{"until_ms", unix_ms(until)}, {"keys", targets.size()}});
        }
        if (path == "/control/events" && post) {
            json body = body_object(req);
            auto str = [&](const char* name) -> std::string {
                if (!body.contains(name) || !body[name].is_string()) {
                    throw control_error{400, std::string(name) + " (string) is required"};
                }
                return body[name].get<std::string>();
            };
            std::string type = str("type");
            account_state* a = find_account(str("account_id"));
            if (a == nullptr) {
                throw control_error{404, "unknown account"};
            }
            if (type == "disconnection") {
                disconnect_account(*a, body.value("reason", std::string("session expired")));
                co_return reply(200, json{{"done", true}});
            }
            const person* p = world_.find_by_profile_url(str("profile_url"));
            if (p == nullptr) {
                throw control_error{404, "profile_url is not a person of the world"};
            }
            std::string why;
            bool done = false;
            if (type == "accepted_invitation") {
                done = simulate_acceptance(*this, *a, p->id, why);
            } else if (type == "message_received") {
                done = simulate_reply(*this, *a, p->id, body.value("text", std::string("Thanks for reaching out!")),
                                      why);
            } else if (type == "invitation_received") {
                done = simulate_received_invitation(*this, *a, p->id, why);
            } else {
                throw control_error{400, "type must be accepted_invitation, message_received, invitation_received or "
                                         "disconnection"};
            }
            if (!done) {
                throw control_error{409, why};
            }
            co_return reply(200, json{{"done", true}});
        }
        if (path == "/control/v1-accounts" || path.starts_with("/control/v1-accounts/")) {
            auto [status, out] = v1_accounts_control(*this, std::string(req.method_string()), path, req.body());
            co_return reply(status, out);
        }
        co_return reply(404, json{{"error", "no control endpoint " + std::string(req.method_string()) + " " + path}});
    } catch (const control_error& e) {
        co_return reply(e.status, json{{"error", e.message}});
    }
}

} // namespace orch::sandbox
