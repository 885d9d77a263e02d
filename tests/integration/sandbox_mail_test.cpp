// /v2/mail and its alias /v2/enrich over HTTP against the real sandbox binary: finding a work
// address by profile, by name and domain or company name; reverse lookup; validation (syntax,
// mailbox, catch-all, disposable and unknown domains); 1 credit per request found or not, and
// INVALID_PARAMS naming each bad parameter.
#include "tests/support/http_client.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <cctype>

using namespace orch::test;

namespace {

constexpr const char* key = "test-key";

struct SandboxMail : ::testing::Test {
    static void SetUpTestSuite() { sb = new sandbox_process({"--world-people", "2000"}); }
    static void TearDownTestSuite() {
        delete sb;
        sb = nullptr;
    }
    void SetUp() override {
        c = std::make_unique<http_client>("127.0.0.1", sb->port());
        ctl = std::make_unique<http_client>("127.0.0.1", sb->control_port());
        account = login_account(*c, key, ::testing::UnitTest::GetInstance()->current_test_info()->name());
    }

    json call(const std::string& action, const json& params, int want_status = 200,
              const std::string& category = "mail") {
        auto r = c->v2(key, category, account, action, params);
        EXPECT_EQ(r.status, want_status) << action << " " << params.dump() << " -> " << r.body.substr(0, 600);
        return r.body_json();
    }
    std::int64_t credits() { return c->get("/v2/credits", key).body_json()["data"]["credits"].get<std::int64_t>(); }
    void expect_invalid(const std::string& action, const json& params, const std::string& param) {
        auto before = credits();
        auto j = call(action, params, 400);
        EXPECT_EQ(j["error"]["code"], "INVALID_PARAMS") << params.dump();
        EXPECT_NE(j["error"]["message"].get<std::string>().find(param), std::string::npos)
            << "message should name " << param << ": " << j["error"]["message"];
        EXPECT_EQ(j["metadata"]["credits_consumed"], 0);
        EXPECT_EQ(credits(), before);
    }
    // Expects a success costing exactly one credit and returns its data.
    json one_credit(const std::string& action, const json& params, const std::string& category = "mail") {
        auto before = credits();
        auto j = call(action, params, 200, category);
        EXPECT_EQ(j["metadata"]["credits_consumed"], 1) << action;
        EXPECT_EQ(credits(), before - 1) << action;
        return j["data"];
    }
    // Found addresses of the first people of the world, with their catch-all status.
    std::vector<json> found(int n) {
        std::vector<json> out;
        json list = ctl->get("/control/people?offset=0&limit=" + std::to_string(n)).body_json()["people"];
        for (const auto& p : list) {
            out.push_back(call("find_email", {{"profile_url", p["profile_url"]}})["data"]);
        }
        return out;
    }

    static sandbox_process* sb;
    std::unique_ptr<http_client> c;
    std::unique_ptr<http_client> ctl;
    std::string account;
};

sandbox_process* SandboxMail::sb = nullptr;

TEST_F(SandboxMail, FindByProfileNameAndDomainOrCompanyName) {
    json p = ctl->get("/control/people?offset=3&limit=1").body_json()["people"][0];
    json by_profile = one_credit("find_email", {{"profile_url", p["profile_url"]}});
    ASSERT_EQ(by_profile["found"], true);
    std::string email = by_profile["email"];
    std::string domain = by_profile["domain"];
    EXPECT_EQ(email.substr(email.find('@') + 1), domain);
    EXPECT_EQ(domain.substr(domain.size() - 8), ".example");
    EXPECT_EQ(by_profile["profile_url"], p["profile_url"]);
    EXPECT_EQ(by_profile["first_name"], p["first_name"]);
    std::string status = by_profile["status"];
    EXPECT_TRUE(status == "valid" || status == "catch_all") << status;
    EXPECT_GT(by_profile["confidence"].get<int>(), 50);
    std::string company = by_profile["company"]["name"];

    json by_domain = one_credit("find_email", {{"first_name", p["first_name"]}, {"last_name", p["last_name"]},
                                               {"domain", "https://www." + domain + "/careers"}});
    EXPECT_EQ(by_domain["email"], email);
    EXPECT_EQ(by_domain["domain"], domain);
    EXPECT_EQ(by_domain["profile_url"], p["profile_url"]);
    json by_company = one_credit("find_email", {{"first_name", p["first_name"]}, {"last_name", p["last_name"]},
                                                {"company_name", company}});
    EXPECT_EQ(by_company["email"], email);
    // Case and accents do not matter in names.
    std::string upper_last = p["last_name"];
    for (char& ch : upper_last) {
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    EXPECT_EQ(call("find_email", {{"first_name", p["first_name"]}, {"last_name", upper_last}, {"domain", domain}})
                  ["data"]["email"],
              email);

    // Not found still costs the request's credit.
    json nobody = one_credit("find_email", {{"first_name", "Nobody"}, {"last_name", "Nowhere"}, {"domain", domain}});
    EXPECT_EQ(nobody["found"], false);
    EXPECT_TRUE(nobody["email"].is_null());
    EXPECT_EQ(nobody["status"], "not_found");
    json elsewhere =
        one_credit("find_email", {{"first_name", "Ada"}, {"last_name", "Lovelace"}, {"domain", "example.org"}});
    EXPECT_EQ(elsewhere["found"], false);
    EXPECT_EQ(elsewhere["domain"], "example.org");
    EXPECT_TRUE(elsewhere["company"].is_null());
    json no_company = one_credit("find_email", {{"first_name", "Ada"}, {"last_name", "Lovelace"},
                                                {"company_name", "Zzz No Such Company"}});
    EXPECT_EQ(no_company["found"], false);
    EXPECT_TRUE(no_company["domain"].is_null());

    expect_invalid("find_email", json::object(), "params.first_name");
    expect_invalid("find_email", {{"first_name", "Ada"}}, "params.last_name");
    expect_invalid("find_email", {{"first_name", "Ada"}, {"last_name", "L"}}, "params.domain");
    expect_invalid("find_email", {{"first_name", "Ada"}, {"last_name", "L"}, {"domain", "not a domain"}},
                   "params.domain");
    expect_invalid("find_email", {{"first_name", "Ada"}, {"last_name", "L"}, {"domain", 42}}, "params.domain");
    expect_invalid("find_email", {{"first_name", 1}, {"last_name", "L"}, {"domain", domain}}, "params.first_name");
    expect_invalid("find_email", {{"profile_url", "https://www.network.example/company/x"}}, "params.profile_url");
    expect_invalid("find_email", {{"profile_url", "https://www.network.example/in/nobody-000000"}},
                   "profile not found");
}

TEST_F(SandboxMail, ReverseLookupFindsThePerson) {
    auto list = found(5);
    for (const auto& f : list) {
        ASSERT_EQ(f["found"], true);
        json r = one_credit("reverse_email", {{"email", f["email"]}});
        EXPECT_EQ(r["found"], true);
        EXPECT_EQ(r["email"], f["email"]);
        EXPECT_EQ(r["profile_url"], f["profile_url"]);
        EXPECT_EQ(r["person"]["first_name"], f["first_name"]);
        EXPECT_EQ(r["company"]["name"], f["company"]["name"]);
    }
    // Addresses are case-insensitive.
    std::string upper = list[0]["email"];
    for (char& ch : upper) {
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    EXPECT_EQ(call("reverse_email", {{"email", upper}})["data"]["profile_url"], list[0]["profile_url"]);
    json unknown = one_credit("reverse_email", {{"email", "someone@example.org"}});
    EXPECT_EQ(unknown["found"], false);
    EXPECT_TRUE(unknown["profile_url"].is_null());
    expect_invalid("reverse_email", json::object(), "params.email");
    expect_invalid("reverse_email", {{"email", "not-an-address"}}, "params.email");
    expect_invalid("reverse_email", {{"email", json::array()}}, "params.email");
}

TEST_F(SandboxMail, ValidateKnowsMailboxesCatchAllsAndBadAddresses) {
    auto list = found(40);
    json valid_one;
    json catch_all_one;
    for (const auto& f : list) {
        if (f["status"] == "valid" && valid_one.is_null()) valid_one = f;
        if (f["status"] == "catch_all" && catch_all_one.is_null()) catch_all_one = f;
    }
    ASSERT_TRUE(valid_one.is_object()) << "some companies are not catch-all";
    json v = one_credit("validate_email", {{"email", valid_one["email"]}});
    EXPECT_EQ(v["valid"], true);
    EXPECT_EQ(v["status"], "valid");
    EXPECT_EQ(v["mx_found"], true);
    EXPECT_EQ(v["catch_all"], false);
    std::string email = valid_one["email"];
    std::string domain = email.substr(email.find('@') + 1);
    json missing = one_credit("validate_email", {{"email", "no.such.person@" + domain}});
    EXPECT_EQ(missing["valid"], false);
    EXPECT_EQ(missing["status"], "invalid");
    EXPECT_EQ(missing["reason"], "mailbox not found");
    if (catch_all_one.is_object()) {
        std::string ca = catch_all_one["email"];
        json any = one_credit("validate_email", {{"email", "anything@" + ca.substr(ca.find('@') + 1)}});
        EXPECT_EQ(any["status"], "catch_all");
        EXPECT_EQ(any["catch_all"], true);
        EXPECT_EQ(any["valid"], false);
    }
    json syntax = one_credit("validate_email", {{"email", "not an address"}});
    EXPECT_EQ(syntax["valid"], false);
    EXPECT_EQ(syntax["reason"], "syntax");
    for (const char* bad : {"a..b@acme.example", ".a@acme.example", "a@acme", "a@-acme.example", "@acme.example"}) {
        EXPECT_EQ(call("validate_email", {{"email", bad}})["data"]["reason"], "syntax") << bad;
    }
    json disposable = one_credit("validate_email", {{"email", "x@mailinator.com"}});
    EXPECT_EQ(disposable["disposable"], true);
    EXPECT_EQ(disposable["valid"], false);
    json outside = one_credit("validate_email", {{"email", "jane@gmail.com"}});
    EXPECT_EQ(outside["status"], "unknown");
    EXPECT_EQ(outside["free_provider"], true);
    expect_invalid("validate_email", json::object(), "params.email");
    expect_invalid("validate_email", {{"email", ""}}, "params.email");
    expect_invalid("validate_email", {{"email", 7}}, "params.email");
}

TEST_F(SandboxMail, EnrichIsTheSameService) {
    json p = ctl->get("/control/people?offset=9&limit=1").body_json()["people"][0];
    json mail = one_credit("find_email", {{"profile_url", p["profile_url"]}});
    json enrich = one_credit("find_email", {{"profile_url", p["profile_url"]}}, "enrich");
    EXPECT_EQ(enrich, mail);
    json reverse = one_credit("reverse_email", {{"email", mail["email"]}}, "enrich");
    EXPECT_EQ(reverse["profile_url"], p["profile_url"]);
    EXPECT_EQ(one_credit("validate_email", {{"email", mail["email"]}}, "enrich")["email"], mail["email"]);
    auto wrong = c->v2(key, "enrich", account, "find", {{"email", "x@y.example"}});
    EXPECT_EQ(wrong.status, 400);
    EXPECT_EQ(wrong.body_json()["error"]["code"], "INVALID_ACTION");
}

} // namespace
