// orch::engine dashboard: the web UI of `orchestrator serve`, under /ui/ on the admin listener
// (engine/admin.hpp). A static single-page app (web/, embedded into the binary) over the same
// admin REST API the CLI and scripts use; this file adds only what a browser needs on top:
//
//   GET  /ui/login                 the login form (public, with its script and styles)
//   POST /ui/login                 {"token": "<admin token>"} as JSON -> a session cookie
//                                  (orch_ui_session; HttpOnly; SameSite=Strict; Path=/; Secure
//                                  when the page came over HTTPS) and
//                                  {"csrf": "..."}; 401 for a wrong token; 429 after 10 wrong
//                                  tokens in a minute (for the rest of that minute)
//   GET  /ui/session               {"csrf", "expires_at"} of the caller's session (401 without)
//   POST /ui/logout                ends the session (needs the CSRF header)
//   GET  /ui/assets/<file>         the app's files (login's own are public, the rest need a session)
//   GET  /ui/ and /ui/<page>       the app (index.html); without a session a 302 to /ui/login
//
// Sessions are random 256-bit tokens kept in memory (a restart of serve logs everyone out), each
// with its own random CSRF token, for at most 12 hours; the map holds their SHA-256 digests only.
// The API paths (/v1/..., /metrics) take either the bearer token as before or a session cookie;
// with the cookie, a request that is not GET or HEAD must carry "X-CSRF-Token: <the session's
// token>", else 403 (a cross-site page can send the cookie-less form posts only: SameSite=Strict
// and the custom header it cannot set both stand in its way). Every admin response carries a
// Content-Security-Policy without inline scripts, plus nosniff, no-referrer and frame denial.
#pragma once

#include "api/http_server.hpp"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace orch::engine {

class dashboard {
public:
    static constexpr int failed_login_limit = 10;  // wrong tokens a minute, then 429

    explicit dashboard(std::string admin_token, std::chrono::seconds session_lifetime = std::chrono::hours(12));

    // Answers the /ui paths (pages, assets, login, logout, session); nullopt for any other path.
    std::optional<api::response> serve(const api::request& req);

    // Who asks for an API path: the bearer token, a session cookie (with its CSRF token when the
    // request changes state), or nobody allowed.
    enum class access { bearer, session, unauthenticated, bad_token, csrf_refused };
    access authorize(const api::request& req);

    // Adds the Content-Security-Policy and the other browser hardening headers to `res`.
    static void secure_headers(api::response& res);

    std::size_t session_count();

private:
    struct session {
        std::string csrf;
        std::chrono::system_clock::time_point expires;
    };
    // The live session of the request's cookie (expired ones are erased on sight).
    std::optional<session> find_session(const api::request& req);
    api::response login(const api::request& req);
    api::response logout(const api::request& req);

    std::string token_;
    std::chrono::seconds lifetime_;
    std::mutex mutex_;
    std::map<std::string, session> sessions_;  // by the SHA-256 (hex) of the cookie's token
    // Guessing the token through the form: at most failed_login_limit wrong tokens a minute (all
    // clients together), then 429 until the minute is over. The bearer API is not affected.
    std::chrono::steady_clock::time_point failures_since_{};
    int failures_ = 0;
};

}  // namespace orch::engine
