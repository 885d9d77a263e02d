#include "engine/admin_ui.hpp"
#include "engine/secret_box.hpp"

#include "engine/admin.hpp"
#include "web/assets.hpp"

#include <nlohmann/json.hpp>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <stdexcept>

namespace orch::engine {

namespace http = boost::beast::http;
using json = nlohmann::json;

namespace {

constexpr std::string_view cookie_name = "orch_ui_session";
constexpr std::size_t max_sessions = 1000;

// No inline scripts or styles, nothing from elsewhere: the app is its own embedded files. data:
// images are Pico CSS's icons (checkbox, select chevron) inside its stylesheet.
constexpr std::string_view csp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

std::string hex(const unsigned char* p, std::size_t n) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(n * 2);
    for (std::size_t i = 0; i < n; ++i) {
        out += digits[p[i] >> 4];
        out += digits[p[i] & 15];
    }
    return out;
}

std::string random_token() {
    unsigned char b[32];
    if (RAND_bytes(b, sizeof b) != 1) {
        throw std::runtime_error("the system's random generator failed");
    }
    return hex(b, sizeof b);
}


// Constant time over equal-length digests, whatever the inputs' lengths.
bool same_secret(std::string_view a, std::string_view b) {
    auto da = sha256_hex(a);
    auto db = sha256_hex(b);
    return !a.empty() && CRYPTO_memcmp(da.data(), db.data(), da.size()) == 0;
}

std::string iso(std::chrono::system_clock::time_point t) {
    std::time_t tt = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// The value of cookie `name` in the request's Cookie headers ("a=1; b=2"), or "".
std::string cookie(const api::request& req, std::string_view name) {
    auto [first, last] = req.equal_range(http::field::cookie);
    for (auto field = first; field != last; ++field) {
        std::string_view rest = field->value();
        while (!rest.empty()) {
            auto end = rest.find(';');
            auto part = rest.substr(0, end);
            rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
            while (!part.empty() && part.front() == ' ') {
                part.remove_prefix(1);
            }
            auto eq = part.find('=');
            if (eq != std::string_view::npos && part.substr(0, eq) == name) {
                return std::string(part.substr(eq + 1));
            }
        }
    }
    return {};
}

api::response make(const api::request& req, http::status status, std::string_view type, std::string body) {
    api::response res{status, req.version()};
    res.set(http::field::server, "orchestrator-admin");
    res.set(http::field::content_type, type);
    res.set(http::field::cache_control, "no-store");
    dashboard::secure_headers(res);
    res.keep_alive(req.keep_alive());
    res.body() = std::move(body);
    res.prepare_payload();
    if (req.method() == http::verb::head) {
        res.body().clear();  // the length stays that of the GET
    }
    return res;
}

api::response json_error(const api::request& req, http::status status, const std::string& message) {
    json e = {{"error", {{"status", static_cast<int>(status)}, {"message", message}}}};
    return make(req, status, "application/json", e.dump());
}

api::response redirect(const api::request& req, const std::string& location) {
    auto res = make(req, http::status::found, "text/plain; charset=utf-8", "see " + location + "\n");
    res.set(http::field::location, location);
    return res;
}

api::response not_allowed(const api::request& req, std::string_view allow) {
    auto res = json_error(req, http::status::method_not_allowed, "method not allowed here; allowed: " + std::string(allow));
    res.set(http::field::allow, allow);
    return res;
}

// Percent-encodes a path for the `next` query parameter of the login redirect.
std::string encode(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        }
    }
    return out;
}

// The files anyone may fetch: the login form and what it loads.
bool public_asset(std::string_view path) {
    return path == "assets/login.html" || path == "assets/login.js" || path == "assets/style.css" ||
           path == "assets/vendor/pico.min.css";
}

}  // namespace

dashboard::dashboard(std::string admin_token, std::chrono::seconds session_lifetime)
    : token_(std::move(admin_token)), lifetime_(session_lifetime) {}

void dashboard::secure_headers(api::response& res) {
    res.set("Content-Security-Policy", csp);
    res.set("X-Content-Type-Options", "nosniff");
    res.set("Referrer-Policy", "no-referrer");
    res.set("X-Frame-Options", "DENY");
}

std::size_t dashboard::session_count() {
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

std::optional<dashboard::session> dashboard::find_session(const api::request& req) {
    auto value = cookie(req, cookie_name);
    if (value.empty()) {
        return std::nullopt;
    }
    auto key = sha256_hex(value);
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(key);
    if (it == sessions_.end()) {
        return std::nullopt;
    }
    if (it->second.expires <= std::chrono::system_clock::now()) {
        sessions_.erase(it);
        return std::nullopt;
    }
    return it->second;
}

dashboard::access dashboard::authorize(const api::request& req) {
    auto authorization = req[http::field::authorization];
    if (!authorization.empty()) {
        return bearer_matches(authorization, token_) ? access::bearer : access::bad_token;
    }
    auto s = find_session(req);
    if (!s) {
        return access::unauthenticated;
    }
    if (req.method() == http::verb::get || req.method() == http::verb::head) {
        return access::session;
    }
    return same_secret(req["X-CSRF-Token"], s->csrf) ? access::session : access::csrf_refused;
}

api::response dashboard::login(const api::request& req) {
    // A login posted by another site's page would log the browser into this dashboard: only a
    // same-origin script can send it (JSON, and the Origin a browser adds must be ours).
    const std::string origin(req[http::field::origin]);
    const std::string host(req[http::field::host]);
    if (!origin.empty() && origin != "http://" + host && origin != "https://" + host) {
        return json_error(req, http::status::forbidden, "login from another origin (" + origin + ") refused");
    }
    auto type = req[http::field::content_type];
    if (type.substr(0, type.find(';')) != "application/json") {
        return json_error(req, http::status::unsupported_media_type,
                          "send the login as Content-Type: application/json, {\"token\": \"<admin token>\"}");
    }
    auto body = json::parse(req.body(), nullptr, false);
    if (body.is_discarded() || !body.is_object() || !body.contains("token") || !body["token"].is_string()) {
        return json_error(req, http::status::bad_request, "the body must be {\"token\": \"<admin token>\"}");
    }
    {
        std::lock_guard lock(mutex_);
        auto now = std::chrono::steady_clock::now();
        if (now - failures_since_ >= std::chrono::minutes(1)) {
            failures_since_ = now;
            failures_ = 0;
        }
        if (failures_ >= failed_login_limit) {
            auto left = std::chrono::ceil<std::chrono::seconds>(failures_since_ + std::chrono::minutes(1) - now);
            auto res = json_error(req, http::status::too_many_requests,
                                  "too many wrong tokens: the login form is closed for " +
                                      std::to_string(left.count()) + " s (the bearer API is not)");
            res.set(http::field::retry_after, std::to_string(left.count()));
            return res;
        }
        if (!bearer_matches("Bearer " + body["token"].get<std::string>(), token_)) {
            ++failures_;
            spdlog::warn("admin: dashboard login refused (wrong token, {} this minute)", failures_);
            return json_error(req, http::status::unauthorized, "wrong token");
        }
    }
    auto value = random_token();
    session s{random_token(), std::chrono::system_clock::now() + lifetime_};
    {
        std::lock_guard lock(mutex_);
        if (sessions_.size() >= max_sessions) {
            auto now = std::chrono::system_clock::now();
            std::erase_if(sessions_, [now](const auto& kv) { return kv.second.expires <= now; });
        }
        if (sessions_.size() >= max_sessions) {
            auto oldest = std::min_element(sessions_.begin(), sessions_.end(), [](const auto& a, const auto& b) {
                return a.second.expires < b.second.expires;
            });
            sessions_.erase(oldest);
        }
        sessions_[sha256_hex(value)] = s;
    }
    spdlog::info("admin: dashboard login");
    auto res = make(req, http::status::ok, "application/json",
                    json{{"csrf", s.csrf}, {"expires_at", iso(s.expires)}}.dump());
    // Secure when the page was loaded over HTTPS (a TLS proxy in front): the browser's Origin
    // says so. Plain HTTP on loopback, the default listener, cannot take a Secure cookie.
    const bool https = origin.substr(0, 8) == "https://";
    res.set(http::field::set_cookie, std::string(cookie_name) + "=" + value + "; HttpOnly; SameSite=Strict; Path=/; Max-Age=" +
                                         std::to_string(lifetime_.count()) + (https ? "; Secure" : ""));
    return res;
}

api::response dashboard::logout(const api::request& req) {
    auto s = find_session(req);
    if (!s) {
        return json_error(req, http::status::unauthorized, "no session");
    }
    if (!same_secret(req["X-CSRF-Token"], s->csrf)) {
        return json_error(req, http::status::forbidden, "missing or wrong X-CSRF-Token header");
    }
    {
        std::lock_guard lock(mutex_);
        sessions_.erase(sha256_hex(cookie(req, cookie_name)));
    }
    auto res = make(req, http::status::ok, "application/json", json{{"logged_out", true}}.dump());
    res.set(http::field::set_cookie, std::string(cookie_name) + "=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    return res;
}

std::optional<api::response> dashboard::serve(const api::request& req) {
    std::string_view target = req.target();
    auto path = target.substr(0, target.find('?'));
    if (path != "/ui" && path.substr(0, 4) != "/ui/") {
        return std::nullopt;
    }
    const bool get = req.method() == http::verb::get || req.method() == http::verb::head;
    if (path == "/ui/login") {
        if (req.method() == http::verb::post) {
            return login(req);
        }
        if (!get) {
            return not_allowed(req, "GET, POST");
        }
        auto page = web::find("assets/login.html");
        return make(req, http::status::ok, page->content_type, std::string(page->bytes()));
    }
    if (path == "/ui/logout") {
        if (req.method() != http::verb::post) {
            return not_allowed(req, "POST");
        }
        return logout(req);
    }
    if (!get) {
        return not_allowed(req, "GET");
    }
    if (path == "/ui") {
        return redirect(req, "/ui/");
    }
    auto s = find_session(req);
    if (path == "/ui/session") {
        if (!s) {
            return json_error(req, http::status::unauthorized, "no session: log in at /ui/login");
        }
        return make(req, http::status::ok, "application/json",
                    json{{"csrf", s->csrf}, {"expires_at", iso(s->expires)}}.dump());
    }
    if (path.substr(0, 11) == "/ui/assets/") {
        auto file = web::find(path.substr(4));
        if (!file) {
            return json_error(req, http::status::not_found, "no such file: " + std::string(path));
        }
        if (!s && !public_asset(file->path)) {
            return json_error(req, http::status::unauthorized, "no session: log in at /ui/login");
        }
        auto res = make(req, http::status::ok, file->content_type, std::string(file->bytes()));
        res.set(http::field::cache_control, "no-cache");
        return res;
    }
    // Any other path is one of the app's pages (it routes on the path itself).
    if (!s) {
        return redirect(req, "/ui/login?next=" + encode(path));
    }
    auto page = web::find("assets/index.html");
    return make(req, http::status::ok, page->content_type, std::string(page->bytes()));
}

}  // namespace orch::engine
