// The dashboard's sessions, CSRF and page gate (engine/admin_ui.hpp) without a server: requests
// built by hand, answers read directly. The browser test (tests/ui) covers the same paths end to
// end; this one covers what it cannot wait for (a session's expiry) and the edge cases of the
// Cookie header.
#include "engine/admin_ui.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <thread>

namespace {

namespace http = boost::beast::http;
using orch::engine::dashboard;

const std::string token = "unit-test-admin-token-0123";

orch::api::request req(http::verb method, const std::string& target, const std::string& body = "",
                       std::map<std::string, std::string> headers = {}) {
    orch::api::request r{method, target, 11};
    r.set(http::field::host, "127.0.0.1:8702");
    for (const auto& [k, v] : headers) {
        r.set(k, v);
    }
    r.body() = body;
    r.prepare_payload();
    return r;
}

struct login_result {
    std::string cookie;  // "orch_ui_session=<hex>"
    std::string csrf;
};

login_result login(dashboard& d) {
    auto res = d.serve(req(http::verb::post, "/ui/login", "{\"token\": \"" + token + "\"}",
                           {{"Content-Type", "application/json"}}));
    EXPECT_TRUE(res.has_value());
    EXPECT_EQ(res->result(), http::status::ok) << res->body();
    std::string set = std::string((*res)[http::field::set_cookie]);
    return {set.substr(0, set.find(';')), nlohmann::json::parse(res->body())["csrf"].get<std::string>()};
}

TEST(AdminUi, OnlyUiPathsAreAnswered) {
    dashboard d(token);
    EXPECT_FALSE(d.serve(req(http::verb::get, "/v1/campaigns")).has_value());
    EXPECT_FALSE(d.serve(req(http::verb::get, "/uix")).has_value());
    EXPECT_FALSE(d.serve(req(http::verb::get, "/healthz")).has_value());
    auto r = d.serve(req(http::verb::get, "/ui"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->result(), http::status::found);
    EXPECT_EQ((*r)[http::field::location], "/ui/");
}

TEST(AdminUi, PagesNeedASessionTheLoginFormDoesNot) {
    dashboard d(token);
    auto page = d.serve(req(http::verb::get, "/ui/campaigns/a%20b?x=1"));
    ASSERT_TRUE(page);
    EXPECT_EQ(page->result(), http::status::found);
    EXPECT_EQ((*page)[http::field::location], "/ui/login?next=/ui/campaigns/a%2520b");
    auto form = d.serve(req(http::verb::get, "/ui/login"));
    EXPECT_EQ(form->result(), http::status::ok);
    EXPECT_NE(form->body().find("<form"), std::string::npos);
    EXPECT_NE(std::string((*form)["Content-Security-Policy"]).find("script-src 'self'"), std::string::npos);
    EXPECT_EQ(d.serve(req(http::verb::get, "/ui/assets/login.js"))->result(), http::status::ok);
    EXPECT_EQ(d.serve(req(http::verb::get, "/ui/assets/app.js"))->result(), http::status::unauthorized);
    EXPECT_EQ(d.serve(req(http::verb::get, "/ui/assets/nope.js"))->result(), http::status::not_found);
    EXPECT_EQ(d.serve(req(http::verb::get, "/ui/assets/../assets/app.js"))->result(), http::status::not_found);
    EXPECT_EQ(d.serve(req(http::verb::get, "/ui/session"))->result(), http::status::unauthorized);
    EXPECT_EQ(d.serve(req(http::verb::delete_, "/ui/"))->result(), http::status::method_not_allowed);

    auto s = login(d);
    auto app = d.serve(req(http::verb::get, "/ui/accounts", "", {{"Cookie", "theme=dark; " + s.cookie + "; x=y"}}));
    EXPECT_EQ(app->result(), http::status::ok);
    EXPECT_NE(app->body().find("/ui/assets/app.js"), std::string::npos);
    auto head = d.serve(req(http::verb::head, "/ui/assets/app.js", "", {{"Cookie", s.cookie}}));
    EXPECT_EQ(head->result(), http::status::ok);
    EXPECT_TRUE(head->body().empty());
    EXPECT_NE((*head)[http::field::content_length], "0");
}

TEST(AdminUi, LoginRefusesWrongTokensFormsAndOtherOrigins) {
    dashboard d(token);
    auto json = std::map<std::string, std::string>{{"Content-Type", "application/json"}};
    auto wrong = d.serve(req(http::verb::post, "/ui/login", R"({"token": "unit-test-admin-token-0124"})", json));
    EXPECT_EQ(wrong->result(), http::status::unauthorized);
    EXPECT_TRUE((*wrong)[http::field::set_cookie].empty());
    auto form = d.serve(req(http::verb::post, "/ui/login", "token=" + token,
                            {{"Content-Type", "application/x-www-form-urlencoded"}}));
    EXPECT_EQ(form->result(), http::status::unsupported_media_type);
    auto other = d.serve(req(http::verb::post, "/ui/login", "{\"token\": \"" + token + "\"}",
                             {{"Content-Type", "application/json"}, {"Origin", "http://evil.example"}}));
    EXPECT_EQ(other->result(), http::status::forbidden);
    auto same = d.serve(req(http::verb::post, "/ui/login", "{\"token\": \"" + token + "\"}",
                            {{"Content-Type", "application/json; charset=utf-8"}, {"Origin", "http://127.0.0.1:8702"}}));
    EXPECT_EQ(same->result(), http::status::ok);
    EXPECT_EQ(std::string((*same)[http::field::set_cookie]).find("Secure"), std::string::npos) << "plain HTTP";
    auto tls = d.serve(req(http::verb::post, "/ui/login", "{\"token\": \"" + token + "\"}",
                           {{"Content-Type", "application/json"}, {"Origin", "https://127.0.0.1:8702"}}));
    EXPECT_EQ(tls->result(), http::status::ok);
    EXPECT_NE(std::string((*tls)[http::field::set_cookie]).find("; Secure"), std::string::npos) << "behind a TLS proxy";
    for (const auto* body : {"", "[]", "{\"token\": 5}", "{\"tok\": \"x\"}", "not json"}) {
        EXPECT_EQ(d.serve(req(http::verb::post, "/ui/login", body, json))->result(), http::status::bad_request) << body;
    }
    EXPECT_EQ(d.session_count(), 2u);
}

TEST(AdminUi, ApiAccessByBearerOrSessionWithCsrfForChanges) {
    dashboard d(token);
    using access = dashboard::access;
    EXPECT_EQ(d.authorize(req(http::verb::get, "/v1/campaigns")), access::unauthenticated);
    EXPECT_EQ(d.authorize(req(http::verb::post, "/v1/campaigns/a/pause", "", {{"Authorization", "Bearer " + token}})),
              access::bearer);
    EXPECT_EQ(d.authorize(req(http::verb::get, "/v1/campaigns", "", {{"Authorization", "Bearer nope"}})), access::bad_token);
    auto s = login(d);
    // A wrong bearer token is refused even beside a valid cookie: no fallback between the two.
    EXPECT_EQ(d.authorize(req(http::verb::get, "/v1/campaigns", "", {{"Authorization", "Bearer nope"}, {"Cookie", s.cookie}})),
              access::bad_token);
    EXPECT_EQ(d.authorize(req(http::verb::get, "/v1/campaigns", "", {{"Cookie", s.cookie}})), access::session);
    EXPECT_EQ(d.authorize(req(http::verb::post, "/v1/campaigns/a/pause", "", {{"Cookie", s.cookie}})), access::csrf_refused);
    EXPECT_EQ(d.authorize(req(http::verb::put, "/v1/campaigns/a/budget", "", {{"Cookie", s.cookie}, {"X-CSRF-Token", ""}})),
              access::csrf_refused);
    EXPECT_EQ(d.authorize(req(http::verb::post, "/v1/campaigns/a/pause", "",
                              {{"Cookie", s.cookie}, {"X-CSRF-Token", std::string(64, '0')}})),
              access::csrf_refused);
    EXPECT_EQ(d.authorize(req(http::verb::post, "/v1/campaigns/a/pause", "", {{"Cookie", s.cookie}, {"X-CSRF-Token", s.csrf}})),
              access::session);
    // Another session's CSRF token does not fit this session.
    auto other = login(d);
    EXPECT_NE(other.csrf, s.csrf);
    EXPECT_EQ(d.authorize(req(http::verb::post, "/v1/x", "", {{"Cookie", s.cookie}, {"X-CSRF-Token", other.csrf}})),
              access::csrf_refused);
    // A cookie that was never issued, or a near miss of one, is nobody.
    auto forged = s.cookie;
    forged.back() = forged.back() == 'a' ? 'b' : 'a';
    EXPECT_EQ(d.authorize(req(http::verb::get, "/v1/campaigns", "", {{"Cookie", forged}})), access::unauthenticated);
    EXPECT_EQ(d.authorize(req(http::verb::get, "/v1/campaigns", "", {{"Cookie", "orch_ui_session="}})), access::unauthenticated);
}

TEST(AdminUi, LogoutNeedsCsrfAndEndsTheSession) {
    dashboard d(token);
    auto s = login(d);
    EXPECT_EQ(d.serve(req(http::verb::post, "/ui/logout", "", {{"Cookie", s.cookie}}))->result(), http::status::forbidden);
    auto out = d.serve(req(http::verb::post, "/ui/logout", "", {{"Cookie", s.cookie}, {"X-CSRF-Token", s.csrf}}));
    EXPECT_EQ(out->result(), http::status::ok);
    EXPECT_NE(std::string((*out)[http::field::set_cookie]).find("Max-Age=0"), std::string::npos);
    EXPECT_EQ(d.session_count(), 0u);
    EXPECT_EQ(d.authorize(req(http::verb::get, "/v1/campaigns", "", {{"Cookie", s.cookie}})),
              dashboard::access::unauthenticated);
    EXPECT_EQ(d.serve(req(http::verb::get, "/ui/", "", {{"Cookie", s.cookie}}))->result(), http::status::found);
}

TEST(AdminUi, WrongTokensCloseTheFormForAMinute) {
    dashboard d(token);
    auto json = std::map<std::string, std::string>{{"Content-Type", "application/json"}};
    for (int i = 0; i < dashboard::failed_login_limit; ++i) {
        EXPECT_EQ(d.serve(req(http::verb::post, "/ui/login", R"({"token": "guess-guess-guess-guess"})", json))->result(),
                  http::status::unauthorized);
    }
    // Now even the right token waits: a guesser cannot tell a hit from the lock.
    auto locked = d.serve(req(http::verb::post, "/ui/login", "{\"token\": \"" + token + "\"}", json));
    EXPECT_EQ(locked->result(), http::status::too_many_requests);
    auto wait = std::stoi(std::string((*locked)[http::field::retry_after]));
    EXPECT_GE(wait, 1);
    EXPECT_LE(wait, 60);
    EXPECT_EQ(d.session_count(), 0u);
    // The bearer token of the API is not locked.
    EXPECT_EQ(d.authorize(req(http::verb::get, "/v1/campaigns", "", {{"Authorization", "Bearer " + token}})),
              dashboard::access::bearer);
}

TEST(AdminUi, SessionsExpire) {
    dashboard d(token, std::chrono::seconds(1));
    auto s = login(d);
    EXPECT_EQ(d.authorize(req(http::verb::get, "/v1/campaigns", "", {{"Cookie", s.cookie}})), dashboard::access::session);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    EXPECT_EQ(d.authorize(req(http::verb::get, "/v1/campaigns", "", {{"Cookie", s.cookie}})),
              dashboard::access::unauthenticated);
    EXPECT_EQ(d.serve(req(http::verb::get, "/ui/", "", {{"Cookie", s.cookie}}))->result(), http::status::found);
    EXPECT_EQ(d.session_count(), 0u) << "an expired session is dropped when seen";
}

TEST(AdminUi, SessionCountIsBounded) {
    dashboard d(token);
    auto first = login(d);
    for (int i = 0; i < 1000; ++i) {
        login(d);
    }
    EXPECT_EQ(d.session_count(), 1000u);
    // The oldest went to make room.
    EXPECT_EQ(d.authorize(req(http::verb::get, "/v1/campaigns", "", {{"Cookie", first.cookie}})),
              dashboard::access::unauthenticated);
}

}  // namespace
