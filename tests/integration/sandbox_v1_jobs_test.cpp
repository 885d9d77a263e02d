// Source hiring companies and company jobs over HTTP against the real sandbox binary: record
// shapes, every filter, pagination, the top-level counters, exact credit charges (none on errors
// or searches that find nothing), the 2,000-jobs cap, markdown vs HTML descriptions, and the
// outreach client parsing both answers.
#include "tests/integration/sandbox_client_common.hpp"

#include "engine/time_format.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>

using namespace orch::test;

namespace {

constexpr const char* key = "test-key";
constexpr const char* hiring_path = "/v1/data/jobs/hiring-companies";
constexpr const char* jobs_path = "/v1/data/jobs/company-jobs";

std::string lower(std::string s) {
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

bool has(const std::string& text, const std::string& part) {
    return lower(text).find(lower(part)) != std::string::npos;
}

std::int64_t per_ten(std::size_t n) { return static_cast<std::int64_t>((n + 9) / 10); }

struct SandboxV1Jobs : ::testing::Test {
    static void SetUpTestSuite() { sb = new sandbox_process(); }
    static void TearDownTestSuite() {
        delete sb;
        sb = nullptr;
    }
    void SetUp() override {
        c = std::make_unique<http_client>("127.0.0.1", sb->port());
        ctl = std::make_unique<http_client>("127.0.0.1", sb->control_port());
    }

    std::int64_t credits() { return c->get("/v2/credits", key).body_json()["data"]["credits"].get<std::int64_t>(); }
    // A call expected to succeed; checks the envelope and the counters against the balance.
    json ok(const std::string& path, const json& body) {
        auto before = credits();
        auto r = c->post(path, body, key);
        EXPECT_EQ(r.status, 200) << r.body.substr(0, 400);
        json j = r.body_json();
        EXPECT_EQ(j["status"], "success") << body.dump() << " -> " << r.body.substr(0, 400);
        auto after = credits();
        EXPECT_EQ(j["credits_cost"], before - after) << body.dump();
        EXPECT_EQ(j["credits_remaining"], after);
        const json& companies = j["data"]["companies"];
        EXPECT_TRUE(companies.is_array());
        EXPECT_EQ(j["nb_companies"], companies.size());
        std::size_t jobs = 0;
        for (const auto& co : companies) {
            jobs += co["jobs"].size();
        }
        EXPECT_EQ(j["nb_jobs"], jobs);
        EXPECT_TRUE(j["pagination"].is_object());
        EXPECT_EQ(j["pagination"]["results_per_page"], 10);
        return j;
    }
    void expect_invalid(const std::string& path, const json& body, const std::string& field) {
        auto before = credits();
        auto r = c->post(path, body, key);
        EXPECT_EQ(r.status, 200);
        json j = r.body_json();
        EXPECT_EQ(j["status"], "error") << body.dump() << " -> " << r.body.substr(0, 300);
        EXPECT_EQ(j["code"], "INVALID_PARAMS") << body.dump();
        ASSERT_TRUE(j["message"].is_string()) << r.body;
        EXPECT_NE(j["message"].get<std::string>().find(field), std::string::npos)
            << "message should name " << field << ": " << j["message"];
        EXPECT_EQ(credits(), before);
    }
    // Every job of an answer.
    static std::vector<json> jobs_of(const json& answer) {
        std::vector<json> out;
        for (const auto& co : answer["data"]["companies"]) {
            for (const auto& j : co["jobs"]) {
                out.push_back(j);
            }
        }
        return out;
    }
    // Names of the biggest companies (10001+ employees).
    std::vector<std::string> giants() {
        auto r = c->post("/v1/data/search/companies",
                         {{"keyword", "the"}, {"employee_range", "10001+"}, {"total_results", 100}}, key);
        json answer = r.body_json();
        std::vector<std::string> out;
        for (const auto& co : answer["data"]["companies"]) {
            out.push_back(co["title"]);
        }
        return out;
    }

    // The names of the giants, the ones with the most jobs first.
    std::vector<std::string> busiest_giants() {
        json all = json::array();
        for (const auto& n : giants()) {
            all.push_back(n);
        }
        auto r = c->post(jobs_path, {{"company_names", all}, {"total_results", 1}, {"fetch_description", false}}, key);
        json answer = r.body_json();
        std::vector<std::pair<int, std::string>> counted;
        for (const auto& co : answer["data"]["companies"]) {
            counted.emplace_back(co["jobs_count"].get<int>(), co["name"].get<std::string>());
        }
        std::sort(counted.rbegin(), counted.rend());
        std::vector<std::string> out;
        for (const auto& [n, name] : counted) {
            out.push_back(name);
        }
        return out;
    }

    static sandbox_process* sb;
    std::unique_ptr<http_client> c;
    std::unique_ptr<http_client> ctl;
};

sandbox_process* SandboxV1Jobs::sb = nullptr;

void expect_job_shape(const json& j) {
    static const std::regex date(R"(\d{4}-\d{2}-\d{2})");
    static const std::set<std::string> kinds = {"fulltime", "parttime", "internship", "contract"};
    for (const char* k : {"job_title", "location", "job_seniority", "job_board", "job_board_url", "date_posted"}) {
        EXPECT_TRUE(j[k].is_string()) << k << " in " << j.dump().substr(0, 300);
    }
    EXPECT_TRUE(std::regex_match(j["date_posted"].get<std::string>(), date)) << j["date_posted"];
    EXPECT_TRUE(j["job_type"].is_null() || kinds.contains(j["job_type"].get<std::string>())) << j["job_type"];
    EXPECT_TRUE(j["is_remote"].is_boolean());
    EXPECT_TRUE(j["sectors"].is_array());
    if (!j["salary"].is_null()) {
        EXPECT_TRUE(j["salary"]["min"].is_number());
        EXPECT_GE(j["salary"]["max"].get<double>(), j["salary"]["min"].get<double>());
        EXPECT_TRUE(j["salary"]["currency"].is_string());
        EXPECT_TRUE(j["salary"]["type"].is_string());
    }
}

void expect_company_shape(const json& co, bool enriched) {
    for (const char* k : {"name", "website", "network_url", "description", "logo", "industry", "organization_type"}) {
        EXPECT_TRUE(co[k].is_string()) << k;
    }
    EXPECT_TRUE(co["indeed_url"].is_string() || co["indeed_url"].is_null());
    EXPECT_TRUE(co["cover_image"].is_string() || co["cover_image"].is_null());
    EXPECT_TRUE(co["employee_count"].is_number_integer());
    EXPECT_TRUE(co["employee_count_range"]["start"].is_number_integer());
    EXPECT_TRUE(co["jobs_count"].is_number_integer());
    EXPECT_GE(co["jobs_count"].get<std::size_t>(), co["jobs"].size());
    if (enriched) {
        EXPECT_TRUE(co["headquarter"]["country"].is_string());
        EXPECT_TRUE(co["headquarter"]["city"].is_string());
        ASSERT_TRUE(co["locations"].is_array());
        ASSERT_FALSE(co["locations"].empty());
        EXPECT_TRUE(co["locations"][0]["address"]["line1"].is_string());
        EXPECT_EQ(co["locations"][0]["headquarter"], true);
        EXPECT_TRUE(co["followers_count"].is_number_integer());
        EXPECT_TRUE(co["tagline"].is_string() || co["tagline"].is_null());
    } else {
        for (const char* k : {"tagline", "headquarter", "locations", "followers_count"}) {
            EXPECT_TRUE(co[k].is_null()) << k << " is enrichment-dependent";
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Source hiring companies

TEST_F(SandboxV1Jobs, HiringCompaniesDefaultsToFranceBothBoardsMarkdownDescriptions) {
    auto j = ok(hiring_path, {{"job_title", json::array({"engineer"})}});
    const json& companies = j["data"]["companies"];
    ASSERT_FALSE(companies.empty());
    EXPECT_LE(companies.size(), 100u) << "total_results defaults to 100 companies";
    auto n = companies.size();
    EXPECT_EQ(j["credits_cost"], 2 * per_ten(n)) << "1 per 10 companies + 1 per 10 with fetch_description";
    EXPECT_EQ(j["pagination"]["start_page"], 1);
    EXPECT_EQ(j["pagination"]["end_page"], 10);
    EXPECT_EQ(j["pagination"]["pages_fetched"], per_ten(n));
    std::set<std::string> boards;
    for (const auto& co : companies) {
        expect_company_shape(co, false);
        ASSERT_FALSE(co["jobs"].empty());
        for (const auto& job : co["jobs"]) {
            expect_job_shape(job);
            EXPECT_TRUE(has(job["job_title"], "engineer")) << job["job_title"];
            EXPECT_TRUE(has(job["location"], "France")) << job["location"];
            boards.insert(job["job_board"].get<std::string>());
            std::string d = job["description"];
            EXPECT_NE(d.find("### "), std::string::npos) << "markdown headings";
            EXPECT_NE(d.find("\n- "), std::string::npos) << "markdown bullets";
            EXPECT_EQ(d.find("<h3>"), std::string::npos) << "no HTML on this endpoint";
            EXPECT_FALSE(job["sectors"].empty());
        }
    }
    EXPECT_EQ(boards, (std::set<std::string>{"board_network", "board_general"}));
    // Companies are ordered by their most recent matching job.
    for (std::size_t i = 1; i < companies.size(); ++i) {
        EXPECT_GE(companies[i - 1]["jobs"][0]["posted_at"].get<std::string>(),
                  companies[i]["jobs"][0]["posted_at"].get<std::string>());
    }
}

TEST_F(SandboxV1Jobs, HiringCompaniesDescriptionAndEnrichmentSurcharges) {
    json base = {{"job_title", json::array({"manager"})}, {"total_results", 15}};
    json plain = base;
    plain["fetch_description"] = false;
    auto p = ok(hiring_path, plain);
    auto n = p["data"]["companies"].size();
    ASSERT_EQ(n, 15u);
    EXPECT_EQ(p["credits_cost"], 2) << "ceil(15/10), no description surcharge";
    for (const auto& job : jobs_of(p)) {
        EXPECT_TRUE(job["description"].is_null());
        EXPECT_TRUE(job["sectors"].empty());
    }
    json rich = base;
    rich["enrich_company"] = true;
    auto r = ok(hiring_path, rich);
    ASSERT_EQ(r["data"]["companies"].size(), 15u);
    EXPECT_EQ(r["credits_cost"], 2 + 2 + 15) << "companies + descriptions + 1 per enriched company";
    for (const auto& co : r["data"]["companies"]) {
        expect_company_shape(co, true);
    }
    // Same companies either way.
    for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(p["data"]["companies"][i]["name"], r["data"]["companies"][i]["name"]);
    }
}

TEST_F(SandboxV1Jobs, HiringCompaniesTitleKeywordsAllAnyAndExcluded) {
    auto any = ok(hiring_path, {{"job_title", json::array({"designer", "accountant"})}, {"total_results", 1000}});
    bool saw_designer = false, saw_accountant = false;
    for (const auto& job : jobs_of(any)) {
        bool d = has(job["job_title"], "designer"), a = has(job["job_title"], "accountant");
        EXPECT_TRUE(d || a) << job["job_title"];
        saw_designer = saw_designer || d;
        saw_accountant = saw_accountant || a;
    }
    EXPECT_TRUE(saw_designer && saw_accountant) << "OR by default";
    auto all = ok(hiring_path, {{"job_title", json::array({"senior", "engineer"})},
                                {"job_title_include_all", true},
                                {"total_results", 1000}});
    ASSERT_FALSE(jobs_of(all).empty());
    for (const auto& job : jobs_of(all)) {
        EXPECT_TRUE(has(job["job_title"], "senior") && has(job["job_title"], "engineer")) << job["job_title"];
    }
    auto excluded = ok(hiring_path, {{"job_title", json::array({"engineer"})},
                                     {"job_title_excluded", json::array({"senior"})},
                                     {"total_results", 1000}});
    ASSERT_FALSE(jobs_of(excluded).empty());
    for (const auto& job : jobs_of(excluded)) {
        EXPECT_FALSE(has(job["job_title"], "senior")) << job["job_title"];
    }
}

TEST_F(SandboxV1Jobs, HiringCompaniesCountryLocationRemoteTypeBoardsAndDescriptionKeywords) {
    auto usa = ok(hiring_path, {{"location", "new york"}, {"country", "USA"}, {"total_results", 1000}});
    ASSERT_FALSE(jobs_of(usa).empty()) << "country is case-insensitive";
    for (const auto& job : jobs_of(usa)) {
        EXPECT_TRUE(has(job["location"], "New York, ") && has(job["location"], "United States")) << job["location"];
    }
    auto remote = ok(hiring_path, {{"job_title", "engineer"}, {"is_remote", true}, {"total_results", 1000}});
    ASSERT_FALSE(jobs_of(remote).empty());
    for (const auto& job : jobs_of(remote)) {
        EXPECT_EQ(job["is_remote"], true);
    }
    auto interns = ok(hiring_path, {{"job_title", "intern"}, {"job_type", "internship"}, {"total_results", 1000}});
    ASSERT_FALSE(jobs_of(interns).empty());
    for (const auto& job : jobs_of(interns)) {
        EXPECT_EQ(job["job_type"], "internship");
        EXPECT_EQ(job["job_seniority"], "Internship");
    }
    auto general = ok(hiring_path, {{"job_title", "engineer"}, {"site_names", json::array({"board_general"})},
                                    {"total_results", 1000}});
    ASSERT_FALSE(jobs_of(general).empty());
    for (const auto& job : jobs_of(general)) {
        EXPECT_EQ(job["job_board"], "board_general");
        EXPECT_TRUE(has(job["job_board_url"], "board-general.example")) << job["job_board_url"];
    }
    auto python = ok(hiring_path, {{"job_description", "python"}, {"total_results", 1000}});
    ASSERT_FALSE(jobs_of(python).empty());
    for (const auto& job : jobs_of(python)) {
        EXPECT_TRUE(has(job["description"], "python")) << job["job_title"];
    }
}

TEST_F(SandboxV1Jobs, HiringCompaniesHoursOldCountsBackFromNow) {
    auto day = ok(hiring_path, {{"job_title", json::array({"a", "e"})}, {"hours_old", 24}, {"total_results", 1000}});
    auto month = ok(hiring_path, {{"job_title", json::array({"a", "e"})}, {"hours_old", 720}, {"total_results", 1000}});
    ASSERT_GT(day["nb_jobs"].get<int>(), 0);
    EXPECT_LT(day["nb_jobs"].get<int>(), month["nb_jobs"].get<int>());
    auto now = std::chrono::system_clock::now();
    for (const auto& job : jobs_of(day)) {
        auto at = orch::parse_iso8601(job["posted_at"].get<std::string>());
        ASSERT_TRUE(at);
        EXPECT_LE(now - *at, std::chrono::hours(24) + std::chrono::minutes(1)) << job["posted_at"];
        EXPECT_EQ(job["date_posted"], job["posted_at"].get<std::string>().substr(0, 10));
    }
}

TEST_F(SandboxV1Jobs, HiringCompaniesPagesAreWindowsOfTenCompanies) {
    json q = {{"job_title", json::array({"engineer", "manager"})}, {"fetch_description", false}};
    json first30 = q;
    first30["total_results"] = 30;
    auto whole = ok(hiring_path, first30);
    ASSERT_EQ(whole["data"]["companies"].size(), 30u);
    EXPECT_EQ(whole["pagination"]["has_more"], true);
    json paged = q;
    paged["start_page"] = 2;
    paged["end_page"] = 3;
    paged["total_results"] = 5; // ignored in page mode
    auto pages = ok(hiring_path, paged);
    ASSERT_EQ(pages["data"]["companies"].size(), 20u);
    EXPECT_EQ(pages["credits_cost"], 2);
    EXPECT_EQ(pages["pagination"]["start_page"], 2);
    EXPECT_EQ(pages["pagination"]["end_page"], 3);
    EXPECT_EQ(pages["pagination"]["pages_fetched"], 2);
    for (std::size_t i = 0; i < 20; ++i) {
        EXPECT_EQ(pages["data"]["companies"][i]["name"], whole["data"]["companies"][i + 10]["name"]);
    }
    json one = q;
    one["start_page"] = 3;
    auto single = ok(hiring_path, one);
    ASSERT_EQ(single["data"]["companies"].size(), 10u) << "end_page defaults to start_page";
    EXPECT_EQ(single["data"]["companies"][0]["name"], whole["data"]["companies"][20]["name"]);
}

TEST_F(SandboxV1Jobs, HiringCompaniesThatFindNothingCostNothing) {
    auto before = credits();
    auto j = ok(hiring_path, {{"job_title", json::array({"zzqx nothing"})}, {"enrich_company", true}});
    EXPECT_TRUE(j["data"]["companies"].empty());
    EXPECT_EQ(j["credits_cost"], 0);
    EXPECT_EQ(j["nb_companies"], 0);
    EXPECT_EQ(j["nb_jobs"], 0);
    EXPECT_EQ(j["pagination"]["pages_fetched"], 0);
    EXPECT_EQ(j["pagination"]["has_more"], false);
    EXPECT_EQ(credits(), before);
}

TEST_F(SandboxV1Jobs, HiringCompaniesRejectsBadInputWithoutCharging) {
    const std::string need = "at least one of job_title, job_description, location";
    expect_invalid(hiring_path, json::object(), need);
    expect_invalid(hiring_path, {{"job_title", json::array()}, {"location", " "}, {"country", "usa"}}, need);
    expect_invalid(hiring_path, {{"job_title", 5}}, "job_title");
    expect_invalid(hiring_path, {{"job_title", json::array({"a", json::object()})}}, "job_title[1]");
    expect_invalid(hiring_path, {{"job_description", true}}, "job_description");
    expect_invalid(hiring_path, {{"location", json::array({"Paris"})}}, "location");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"country", "mars"}}, "country");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"job_type", "freelance"}}, "job_type");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"hours_old", 0}}, "hours_old");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"is_remote", "yes"}}, "is_remote");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"job_title_include_all", 1}}, "job_title_include_all");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"site_names", json::array({"board_x"})}}, "site_names");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"site_names", json::array()}}, "site_names");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"total_results", 0}}, "total_results");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"total_results", 1001}}, "total_results");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"start_page", 3}, {"end_page", 2}}, "end_page");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"fetch_description", "no"}}, "fetch_description");
    expect_invalid(hiring_path, {{"location", "Paris"}, {"enrich_company", 0}}, "enrich_company");
}

// ---------------------------------------------------------------------------------------------
// Company jobs

TEST_F(SandboxV1Jobs, CompanyJobsListsTheNetworkBoardWithHtmlDescriptions) {
    auto names = busiest_giants();
    ASSERT_GE(names.size(), 2u);
    auto j = ok(jobs_path, {{"company_names", json::array({names[0], lower(names[1])})}});
    const json& companies = j["data"]["companies"];
    ASSERT_EQ(companies.size(), 2u);
    EXPECT_EQ(companies[0]["name"], names[0]);
    EXPECT_EQ(companies[1]["name"], names[1]) << "names match whatever the case";
    std::size_t jobs = 0;
    for (const auto& co : companies) {
        expect_company_shape(co, false);
        EXPECT_LE(co["jobs"].size(), 100u) << "total_results defaults to 100 jobs per company";
        jobs += co["jobs"].size();
        std::string previous = "9999";
        for (const auto& job : co["jobs"]) {
            expect_job_shape(job);
            EXPECT_EQ(job["job_board"], "board_network");
            EXPECT_TRUE(has(job["job_board_url"], "network.example/jobs/view/")) << job["job_board_url"];
            std::string d = job["description"];
            EXPECT_NE(d.find("<h3>"), std::string::npos);
            EXPECT_NE(d.find("<ul><li>"), std::string::npos);
            EXPECT_EQ(d.find("### "), std::string::npos) << "no markdown on this endpoint";
            EXPECT_LE(job["posted_at"].get<std::string>(), previous) << "newest first";
            previous = job["posted_at"];
        }
    }
    ASSERT_GT(jobs, 0u);
    EXPECT_EQ(j["credits_cost"], per_ten(jobs) + 1) << "ceil(jobs/10) + ceil(2 companies/10) for descriptions";
}

TEST_F(SandboxV1Jobs, CompanyJobsStopsAtTwoThousandPerCompany) {
    // jobs_count of every giant (one job each shown) never passes the cap.
    auto names = busiest_giants();
    ASSERT_GE(names.size(), 2u);
    json all = json::array();
    for (const auto& n : names) {
        all.push_back(n);
    }
    auto counts = ok(jobs_path, {{"company_names", all}, {"total_results", 1}, {"fetch_description", false}});
    for (const auto& co : counts["data"]["companies"]) {
        EXPECT_LE(co["jobs_count"].get<int>(), 2000) << co["name"];
    }
    // The two busiest post more than a scrape returns: exactly 2000 each.
    auto j = ok(jobs_path, {{"company_names", json::array({names[0], names[1]})},
                            {"total_results", 2000},
                            {"fetch_description", false}});
    std::size_t jobs = 0;
    std::set<std::string> urls;
    for (const auto& co : j["data"]["companies"]) {
        EXPECT_EQ(co["jobs"].size(), 2000u) << co["name"];
        EXPECT_EQ(co["jobs_count"], 2000);
        jobs += co["jobs"].size();
        for (const auto& job : co["jobs"]) {
            EXPECT_TRUE(job["description"].is_null());
            urls.insert(job["job_board_url"].get<std::string>());
        }
    }
    EXPECT_EQ(urls.size(), jobs) << "every job is listed once";
    EXPECT_EQ(j["credits_cost"], per_ten(jobs)) << "4000 jobs, no description or enrichment surcharge";
    EXPECT_EQ(j["pagination"]["pages_fetched"], 200);
    expect_invalid(jobs_path, {{"company_names", all}, {"total_results", 2001}}, "total_results");
}

TEST_F(SandboxV1Jobs, CompanyJobsPagesAndFilters) {
    auto name = busiest_giants().at(0);
    auto whole = ok(jobs_path, {{"company_names", json::array({name})}, {"total_results", 40}});
    const json& all = whole["data"]["companies"][0]["jobs"];
    ASSERT_EQ(all.size(), 40u);
    auto pages = ok(jobs_path, {{"company_names", json::array({name})}, {"start_page", 3}, {"end_page", 4}});
    const json& window = pages["data"]["companies"][0]["jobs"];
    ASSERT_EQ(window.size(), 20u);
    for (std::size_t i = 0; i < 20; ++i) {
        EXPECT_EQ(window[i]["job_board_url"], all[i + 20]["job_board_url"]);
    }
    EXPECT_EQ(pages["pagination"]["start_page"], 3);
    EXPECT_EQ(pages["pagination"]["end_page"], 4);
    EXPECT_EQ(pages["pagination"]["pages_fetched"], 2);
    EXPECT_EQ(pages["credits_cost"], 2 + 1);

    auto engineers = ok(jobs_path, {{"company_names", json::array({name})},
                                    {"job_title", json::array({"engineer"})},
                                    {"job_title_excluded", json::array({"senior"})},
                                    {"hours_old", 168},
                                    {"total_results", 2000},
                                    {"fetch_description", false}});
    auto now = std::chrono::system_clock::now();
    for (const auto& job : engineers["data"]["companies"][0]["jobs"]) {
        EXPECT_TRUE(has(job["job_title"], "engineer") && !has(job["job_title"], "senior")) << job["job_title"];
        auto at = orch::parse_iso8601(job["posted_at"].get<std::string>());
        ASSERT_TRUE(at);
        EXPECT_LE(now - *at, std::chrono::hours(168) + std::chrono::minutes(1));
    }
    EXPECT_EQ(engineers["data"]["companies"][0]["jobs_count"], engineers["data"]["companies"][0]["jobs"].size());
}

TEST_F(SandboxV1Jobs, CompanyJobsEnrichmentUnknownNamesAndDeterminism) {
    auto names = busiest_giants();
    json body = {{"company_names", json::array({"Zzqx No Such Company", names[0]})},
                 {"enrich_company", true},
                 {"total_results", 10}};
    auto j = ok(jobs_path, body);
    ASSERT_EQ(j["data"]["companies"].size(), 1u);
    expect_company_shape(j["data"]["companies"][0], true);
    EXPECT_NE(j["message"].get<std::string>().find("Zzqx No Such Company"), std::string::npos) << j["message"];
    EXPECT_EQ(j["credits_cost"], 1 + 1 + 1) << "10 jobs, descriptions for 1 company, 1 enriched company";
    auto again = ok(jobs_path, body);
    EXPECT_EQ(again["data"], j["data"]) << "the same request gives the same jobs";
    auto before = credits();
    auto none = ok(jobs_path, {{"company_names", json::array({"Zzqx No Such Company"})}});
    EXPECT_TRUE(none["data"]["companies"].empty());
    EXPECT_EQ(none["credits_cost"], 0);
    EXPECT_EQ(credits(), before);
}

TEST_F(SandboxV1Jobs, CompanyJobsRejectsBadInputWithoutCharging) {
    expect_invalid(jobs_path, json::object(), "company_names");
    expect_invalid(jobs_path, {{"company_names", json::array()}}, "company_names");
    expect_invalid(jobs_path, {{"company_names", 3}}, "company_names");
    expect_invalid(jobs_path, {{"company_names", json::array({"Acme", 4})}}, "company_names[1]");
    json many = json::array();
    for (int i = 0; i < 101; ++i) {
        many.push_back("c" + std::to_string(i));
    }
    expect_invalid(jobs_path, {{"company_names", many}}, "company_names");
    json one = json::array({"Acme"});
    expect_invalid(jobs_path, {{"company_names", one}, {"job_type", "gig"}}, "job_type");
    expect_invalid(jobs_path, {{"company_names", one}, {"hours_old", -3}}, "hours_old");
    expect_invalid(jobs_path, {{"company_names", one}, {"start_page", 0}}, "start_page");
    expect_invalid(jobs_path, {{"company_names", one}, {"end_page", 201}}, "end_page");
    expect_invalid(jobs_path, {{"company_names", one}, {"job_title_excluded", 1}}, "job_title_excluded");
}

// ---------------------------------------------------------------------------------------------
// The outreach client parses both answers, and its estimate bounds each charge.

TEST(SandboxV1JobsClient, ClientParsesHiringCompaniesAndCompanyJobs) {
    namespace o = orch::outreach;
    client_fixture f;
    o::hiring_companies_params hp;
    hp.filter.job_title = {"engineer"};
    hp.filter.total_results = 12;
    hp.filter.enrich_company = true;
    hp.country = "france";
    hp.site_names = {"board_network", "board_general"};
    auto hiring = f.run(f.api->hiring_companies(hp));
    ASSERT_TRUE(hiring) << o::describe(hiring.error());
    ASSERT_EQ(hiring->companies.size(), 12u);
    ASSERT_TRUE(hiring->credits_cost);
    EXPECT_EQ(*hiring->credits_cost, o::estimate(hp).credits) << "12 companies: 2 + 2 + 12";
    EXPECT_EQ(hiring->nb_companies, 12);
    EXPECT_TRUE(hiring->credits_remaining);
    EXPECT_EQ(hiring->pagination.results_per_page, 10);
    const auto& first = hiring->companies[0];
    EXPECT_FALSE(first.network_url.empty());
    ASSERT_FALSE(first.jobs.empty());
    EXPECT_TRUE(first.jobs[0].description.has_value());
    EXPECT_FALSE(first.jobs[0].job_board_url.empty());

    o::company_jobs_params cp;
    cp.company_names = {first.name};
    cp.filter.total_results = 15;
    cp.filter.fetch_description = false;
    auto jobs = f.run(f.api->company_jobs(cp));
    ASSERT_TRUE(jobs) << o::describe(jobs.error());
    ASSERT_EQ(jobs->companies.size(), 1u);
    EXPECT_EQ(jobs->companies[0].name, first.name);
    ASSERT_TRUE(jobs->credits_cost);
    EXPECT_LE(*jobs->credits_cost, o::estimate(cp).credits);
    for (const auto& job : jobs->companies[0].jobs) {
        EXPECT_EQ(job.job_board, "board_network");
        EXPECT_FALSE(job.description.has_value());
    }
}

} // namespace
