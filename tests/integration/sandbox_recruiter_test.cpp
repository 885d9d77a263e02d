// /v2/recruiter over HTTP against the real sandbox binary: the seat rule (CHANNEL_ERROR without
// one), seeded job postings and their candidates, CVs, publishing and closing jobs, pagination,
// exact credit charges and INVALID_PARAMS naming each bad parameter.
#include "tests/support/http_client.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace orch::test;

namespace {

constexpr const char* key = "test-key";

struct SandboxRecruiter : ::testing::Test {
    static void SetUpTestSuite() { sb = new sandbox_process({"--world-people", "2000"}); }
    static void TearDownTestSuite() {
        delete sb;
        sb = nullptr;
    }
    void SetUp() override {
        c = std::make_unique<http_client>("127.0.0.1", sb->port());
        std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        // The sandbox's seat rule: a login token containing "recruiter" has a recruiter seat.
        seat = login_account(*c, key, "Recruiter-" + name);
        no_seat = login_account(*c, key, "plain-" + name);
    }

    json call(const std::string& action, const json& params = json::object(), int want_status = 200) {
        return call_as(seat, action, params, want_status);
    }
    json call_as(const std::string& account, const std::string& action, const json& params, int want_status) {
        auto r = c->v2(key, "recruiter", account, action, params);
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
    json jobs(const json& params = json::object()) { return call("get_posts", params)["data"]; }

    static sandbox_process* sb;
    std::unique_ptr<http_client> c;
    std::string seat;
    std::string no_seat;
};

sandbox_process* SandboxRecruiter::sb = nullptr;

TEST_F(SandboxRecruiter, AccountsWithoutASeatGetChannelError) {
    json job = jobs()["posts"][0];
    std::string applicant = call("get_candidates", {{"job_id", job["job_id"]}})["data"]["candidates"][0]["profile_url"];
    auto wa = c->post("/v2/login", {{"platform", "messaging"}, {"country", "FR"}, {"login_token", "recruiter-wa"}}, key)
                  .body_json()["data"]["account_id"]
                  .get<std::string>();
    std::vector<std::pair<std::string, json>> requests = {
        {"get_posts", json::object()},
        {"get_candidates", {{"job_id", job["job_id"]}}},
        {"get_cv", {{"profile_url", applicant}}},
        {"publish_job", {{"title", "Engineer"}, {"description", "Build things"}}},
        {"close_job", {{"job_id", job["job_id"]}}},
    };
    for (const std::string& account : {no_seat, wa}) {
        for (const auto& [action, params] : requests) {
            auto before = credits();
            auto j = call_as(account, action, params, 422);
            EXPECT_EQ(j["error"]["code"], "CHANNEL_ERROR") << action;
            EXPECT_NE(j["error"]["message"].get<std::string>().find("recruiter seat"), std::string::npos);
            EXPECT_EQ(j["metadata"]["credits_consumed"], 0);
            EXPECT_EQ(credits(), before);
        }
    }
    // Bad params are named before the seat is checked.
    auto j = call_as(no_seat, "get_candidates", json::object(), 400);
    EXPECT_NE(j["error"]["message"].get<std::string>().find("params.job_id"), std::string::npos);
    // The seat holder's job is unchanged by the refused close.
    EXPECT_EQ(jobs()["posts"][0], job);
}

TEST_F(SandboxRecruiter, SeededJobPostingsWithFiltersAndPages) {
    auto before = credits();
    auto j = call("get_posts");
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    const json& d = j["data"];
    ASSERT_EQ(d["posts"].size(), 3u);
    EXPECT_EQ(d["total_available_results"], 3);
    int open = 0;
    std::string my_company = c->v2(key, "profiles", seat, "get_me").body_json()["data"]["experience"][0]["company_url"];
    for (const auto& p : d["posts"]) {
        std::string id = p["job_id"];
        EXPECT_EQ(id.size(), 10u) << id;
        EXPECT_EQ(p["job_url"], "https://www.network.example/jobs/view/" + id);
        EXPECT_EQ(p["company"]["company_url"], my_company);
        for (const char* k : {"title", "location", "workplace_type", "employment_type", "description", "created_at"}) {
            EXPECT_TRUE(p[k].is_string()) << k;
        }
        EXPECT_GT(p["applicants_count"].get<int>(), 0);
        open += p["state"] == "OPEN" ? 1 : 0;
        EXPECT_EQ(p["closed_at"].is_null(), p["state"] == "OPEN");
    }
    EXPECT_EQ(open, 2);
    EXPECT_EQ(jobs({{"state", "open"}})["posts"].size(), 2u);
    EXPECT_EQ(jobs({{"state", "CLOSED"}})["posts"].size(), 1u);
    // The same account always sees the same postings.
    EXPECT_EQ(jobs()["posts"], d["posts"]);
    auto page = jobs({{"count", 2}, {"offset", 1}});
    ASSERT_EQ(page["posts"].size(), 2u);
    EXPECT_EQ(page["posts"][0], d["posts"][1]);
    EXPECT_EQ(page["pagination"]["has_more"], false);
    EXPECT_EQ(jobs({{"count", 1}})["pagination"]["next_offset"], 1);

    expect_invalid("get_posts", {{"state", "DRAFT"}}, "params.state");
    expect_invalid("get_posts", {{"count", 0}}, "params.count");
    expect_invalid("get_posts", {{"offset", -1}}, "params.offset");
}

TEST_F(SandboxRecruiter, CandidatesAndTheirCvs) {
    json job = jobs()["posts"][0];
    std::size_t applicants = job["applicants_count"];
    ASSERT_GE(applicants, 4u);
    auto before = credits();
    auto all = call("get_candidates", {{"job_id", job["job_id"]}, {"count", 100}});
    EXPECT_EQ(all["metadata"]["credits_consumed"], (applicants + 9) / 10);
    EXPECT_EQ(credits(), before - static_cast<std::int64_t>((applicants + 9) / 10));
    const json& list = all["data"]["candidates"];
    ASSERT_EQ(list.size(), applicants);
    std::set<std::string> urls;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& cd = list[i];
        for (const char* k : {"candidate_id", "profile_url", "public_id", "first_name", "last_name", "headline",
                              "applied_at", "status"}) {
            EXPECT_TRUE(cd[k].is_string()) << k;
        }
        EXPECT_TRUE(urls.insert(cd["profile_url"].get<std::string>()).second);
        if (i > 0) {
            EXPECT_LE(cd["applied_at"].get<std::string>(), list[i - 1]["applied_at"].get<std::string>());
        }
    }
    // The job id may be given as an integer too.
    auto numeric = call("get_candidates", {{"job_id", std::stoull(job["job_id"].get<std::string>())}, {"count", 2},
                                           {"offset", 2}});
    ASSERT_EQ(numeric["data"]["candidates"].size(), 2u);
    EXPECT_EQ(numeric["data"]["candidates"][0], list[2]);

    before = credits();
    auto cv = call("get_cv", {{"profile_url", list[0]["profile_url"]}});
    EXPECT_EQ(cv["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    EXPECT_EQ(cv["data"]["job_id"], job["job_id"]);
    EXPECT_EQ(cv["data"]["cv"]["content_type"], "application/pdf");
    EXPECT_TRUE(cv["data"]["cv"]["url"].is_string());
    EXPECT_EQ(cv["data"]["resume"]["first_name"], list[0]["first_name"]);
    EXPECT_FALSE(cv["data"]["resume"]["experience"].empty());
    EXPECT_EQ(call("get_cv", {{"profile_url", list[1]["profile_url"]}, {"job_id", job["job_id"]}})["data"]["job_id"],
              job["job_id"]);

    // Someone who did not apply has no CV here.
    std::string stranger;
    auto found = c->v2(key, "profiles", seat, "search_people", {{"total_results", 100}}).body_json();
    for (const auto& p : found["data"]["results"]) {
        if (stranger.empty() && !urls.contains(p["network_url"].get<std::string>())) {
            stranger = p["network_url"];
        }
    }
    ASSERT_FALSE(stranger.empty());
    expect_invalid("get_cv", {{"profile_url", stranger}, {"job_id", job["job_id"]}}, "no application");
    expect_invalid("get_cv", json::object(), "params.profile_url");
    expect_invalid("get_cv", {{"profile_url", "not-a-url"}}, "params.profile_url");
    expect_invalid("get_cv", {{"profile_url", list[0]["profile_url"]}, {"job_id", "1"}}, "job not found");
    expect_invalid("get_candidates", json::object(), "params.job_id");
    expect_invalid("get_candidates", {{"job_id", "12ab"}}, "params.job_id");
    expect_invalid("get_candidates", {{"job_id", json::object()}}, "params.job_id");
    expect_invalid("get_candidates", {{"job_id", "1234567890"}}, "job not found");
    expect_invalid("get_candidates", {{"job_id", job["job_id"]}, {"count", 101}}, "params.count");
}

TEST_F(SandboxRecruiter, PublishAndCloseJobs) {
    auto before = credits();
    auto j = call("publish_job", {{"title", "Staff Engineer"},
                                  {"description", "Design and build our platform."},
                                  {"location", "Lyon, France"},
                                  {"workplace_type", "hybrid"},
                                  {"employment_type", "CONTRACT"}});
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    const json& job = j["data"];
    EXPECT_EQ(job["state"], "OPEN");
    EXPECT_EQ(job["title"], "Staff Engineer");
    EXPECT_EQ(job["location"], "Lyon, France");
    EXPECT_EQ(job["workplace_type"], "HYBRID");
    EXPECT_EQ(job["employment_type"], "CONTRACT");
    EXPECT_EQ(job["applicants_count"], 0);
    std::string my_company = c->v2(key, "profiles", seat, "get_me").body_json()["data"]["experience"][0]["company_url"];
    EXPECT_EQ(job["company"]["company_url"], my_company) << "the owner's company by default";
    auto listed = jobs({{"state", "OPEN"}})["posts"];
    ASSERT_EQ(listed.size(), 3u);
    EXPECT_EQ(listed[0], job) << "newest first";
    EXPECT_EQ(call("get_candidates", {{"job_id", job["job_id"]}})["data"]["candidates"].size(), 0u);

    auto other = c->v2(key, "profiles", seat, "search_companies", {{"total_results", 1}}).body_json();
    std::string company_url = other["data"]["results"][0]["company_url"];
    auto by_url = call("publish_job", {{"title", "Analyst"}, {"description", "Numbers."}, {"company", company_url}});
    EXPECT_EQ(by_url["data"]["company"]["company_url"], company_url);
    auto by_name =
        call("publish_job", {{"title", "Analyst"}, {"description", "Numbers."}, {"company", "Tiny Startup"}});
    EXPECT_EQ(by_name["data"]["company"]["name"], "Tiny Startup");
    EXPECT_TRUE(by_name["data"]["company"]["company_url"].is_null());

    before = credits();
    auto closed = call("close_job", {{"job_id", job["job_id"]}});
    EXPECT_EQ(closed["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(closed["data"]["state"], "CLOSED");
    EXPECT_EQ(closed["data"]["was_open"], true);
    EXPECT_TRUE(closed["data"]["closed_at"].is_string());
    auto again = call("close_job", {{"job_id", job["job_id"]}});
    EXPECT_EQ(again["data"]["was_open"], false) << "closing is idempotent";
    EXPECT_EQ(again["data"]["closed_at"], closed["data"]["closed_at"]);
    EXPECT_EQ(credits(), before - 2);
    EXPECT_EQ(jobs({{"state", "CLOSED"}})["posts"].size(), 2u);

    expect_invalid("publish_job", {{"description", "x"}}, "params.title");
    expect_invalid("publish_job", {{"title", "x"}}, "params.description");
    expect_invalid("publish_job", {{"title", std::string(101, 't')}, {"description", "x"}}, "params.title");
    expect_invalid("publish_job", {{"title", "x"}, {"description", std::string(10'001, 'd')}}, "params.description");
    expect_invalid("publish_job", {{"title", "x"}, {"description", "x"}, {"workplace_type", "MOON"}},
                   "params.workplace_type");
    expect_invalid("publish_job", {{"title", "x"}, {"description", "x"}, {"employment_type", 3}},
                   "params.employment_type");
    expect_invalid(
        "publish_job",
        {{"title", "x"}, {"description", "x"}, {"company", "https://www.network.example/company/no-such-zz"}},
        "company not found");
    expect_invalid("publish_job", {{"title", "x"}, {"description", "x"}, {"company", "https://elsewhere.example/a"}},
                   "params.company");
    expect_invalid("close_job", json::object(), "params.job_id");
    expect_invalid("close_job", {{"job_id", "999"}}, "job not found");
    // Another seat holder's job is not this account's.
    std::string rival = login_account(*c, key, "recruiter-rival");
    auto foreign = c->v2(key, "recruiter", rival, "close_job", {{"job_id", job["job_id"]}});
    EXPECT_EQ(foreign.status, 400);
}

} // namespace
