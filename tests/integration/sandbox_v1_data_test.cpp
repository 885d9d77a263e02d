// The V1 data endpoints over HTTP against the real sandbox binary: company info, info by domain,
// company search, funded-company search, profile search and profile enrichment. Fields and
// shapes, filters, exact credit charges (none on errors, on searches that find nothing, or on an
// enrichment that finds nobody), the V1 error envelope, and the outreach client parsing it all.
#include "tests/integration/sandbox_client_common.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>

using namespace orch::test;

namespace {

constexpr const char* key = "test-key";
constexpr const char* poor_key = "poor-key";

std::string lower(std::string s) {
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

struct SandboxV1Data : ::testing::Test {
    // One sandbox for the suite: the world is read-only; credits are compared call by call.
    static void SetUpTestSuite() {
        sb = new sandbox_process({"--api-key", "test-key:1000000", "--api-key", "poor-key:0"});
    }
    static void TearDownTestSuite() {
        delete sb;
        sb = nullptr;
    }
    void SetUp() override {
        c = std::make_unique<http_client>("127.0.0.1", sb->port());
        ctl = std::make_unique<http_client>("127.0.0.1", sb->control_port());
    }

    http_result raw(const std::string& path, const json& body, const std::string& api_key = key) {
        return c->post(path, body, api_key);
    }
    // A V1 call expected to succeed: HTTP 200, status "success", a data object.
    json ok(const std::string& path, const json& body) {
        auto r = raw(path, body);
        EXPECT_EQ(r.status, 200) << path << " " << body.dump() << " -> " << r.body;
        json j = r.body_json();
        EXPECT_EQ(j["status"], "success") << path << " " << body.dump() << " -> " << r.body.substr(0, 400);
        EXPECT_TRUE(j["data"].is_object()) << r.body.substr(0, 400);
        return j;
    }
    std::int64_t credits(const std::string& k = key) {
        return c->get("/v2/credits", k).body_json()["data"]["credits"].get<std::int64_t>();
    }
    // Expects the V1 error envelope {status: error, message, code: INVALID_PARAMS} with HTTP 200,
    // a message naming `field`, and nothing charged.
    void expect_invalid(const std::string& path, const json& body, const std::string& field) {
        auto before = credits();
        auto r = raw(path, body);
        EXPECT_EQ(r.status, 200) << r.body;
        json j = r.body_json();
        EXPECT_EQ(j["status"], "error") << body.dump() << " -> " << r.body;
        EXPECT_EQ(j["code"], "INVALID_PARAMS") << body.dump() << " -> " << r.body;
        EXPECT_FALSE(j.contains("data")) << r.body;
        ASSERT_TRUE(j["message"].is_string()) << r.body;
        EXPECT_NE(j["message"].get<std::string>().find(field), std::string::npos)
            << "message should name " << field << ": " << j["message"];
        EXPECT_EQ(credits(), before) << body.dump();
    }
    // Company page URLs of a keyword search (basic records).
    std::vector<std::string> company_urls(const std::string& keyword, int n) {
        auto j = ok("/v1/data/search/companies", {{"keyword", keyword}, {"total_results", n}});
        std::vector<std::string> out;
        for (const auto& item : j["data"]["companies"]) {
            out.push_back(item["url"]);
        }
        return out;
    }
    json company(const std::string& url) { return ok("/v1/data/company/info", {{"company_url", url}})["data"]; }

    static sandbox_process* sb;
    std::unique_ptr<http_client> c;
    std::unique_ptr<http_client> ctl;
};

sandbox_process* SandboxV1Data::sb = nullptr;

void expect_detailed_company(const json& d) {
    for (const char* k : {"name", "universalName", "description", "websiteUrl", "industry", "logoUrl",
                          "organizationType", "defaultLocale"}) {
        EXPECT_TRUE(d[k].is_string()) << k << " in " << d.dump().substr(0, 300);
    }
    for (const char* k : {"employeeCount", "followersCount"}) {
        EXPECT_TRUE(d[k].is_number_integer()) << k;
    }
    EXPECT_TRUE(d["pageMailbox"].is_boolean());
    EXPECT_TRUE(d["verified"].is_boolean());
    EXPECT_TRUE(d["tagline"].is_string() || d["tagline"].is_null());
    EXPECT_TRUE(d["coverImageUrl"].is_string() || d["coverImageUrl"].is_null());
    EXPECT_TRUE(d["callToAction"].is_object() || d["callToAction"].is_null());
    ASSERT_TRUE(d["employeeCountRange"].is_object());
    EXPECT_TRUE(d["employeeCountRange"]["start"].is_number_integer());
    ASSERT_TRUE(d["headquarter"].is_object());
    for (const char* k : {"country", "geographicArea", "city", "line1", "line2", "postalCode"}) {
        EXPECT_TRUE(d["headquarter"].contains(k)) << k;
    }
    ASSERT_TRUE(d["locations"].is_array());
    ASSERT_FALSE(d["locations"].empty());
    for (const auto& loc : d["locations"]) {
        EXPECT_TRUE(loc["streetAddressOptOut"].is_boolean());
        EXPECT_TRUE(loc["description"].is_string());
        EXPECT_TRUE(loc["address"].is_object());
        EXPECT_TRUE(loc["headquarter"].is_boolean());
    }
    EXPECT_EQ(d["locations"][0]["headquarter"], true);
}

// ---------------------------------------------------------------------------------------------
// Company info, info by domain

TEST_F(SandboxV1Data, CompanyInfoReturnsTheDetailedRecordForOneCredit) {
    auto urls = company_urls("software", 3);
    ASSERT_EQ(urls.size(), 3u);
    auto before = credits();
    auto j = ok("/v1/data/company/info", {{"company_url", urls[0]}});
    EXPECT_EQ(credits(), before - 1);
    const json& d = j["data"];
    expect_detailed_company(d);
    EXPECT_EQ(d["company_url"], urls[0]);
    EXPECT_FALSE(d.contains("network_url"));
    EXPECT_FALSE(d.contains("searched_domain"));
    EXPECT_FALSE(d.contains("funding")) << "funding only appears in enriched searches";
    EXPECT_NE(urls[0].find(d["universalName"].get<std::string>()), std::string::npos);
    // The usual pasted shapes of the URL name the same company.
    EXPECT_EQ(company(urls[0] + "/")["name"], d["name"]);
    EXPECT_EQ(company(" " + urls[0] + "?trk=x ")["name"], d["name"]);
    EXPECT_EQ(company(urls[1])["company_url"], urls[1]);
}

TEST_F(SandboxV1Data, CompanyInfoRejectsBadInputWithoutCharging) {
    const std::string path = "/v1/data/company/info";
    expect_invalid(path, json::object(), "company_url");
    expect_invalid(path, {{"company_url", 42}}, "company_url");
    expect_invalid(path, {{"company_url", "   "}}, "company_url");
    expect_invalid(path, {{"company_url", "https://www.network.example/in/ada-lovelace"}}, "company_url");
    expect_invalid(path, {{"company_url", "https://elsewhere.example/company/acme"}}, "company_url");
    expect_invalid(path, {{"company_url", "https://www.network.example/company/no-such-company-zz"}},
                   "company not found");
}

TEST_F(SandboxV1Data, InfoByDomainFindsTheCompanyOfADomainInAnyShape) {
    auto url = company_urls("software", 1).at(0);
    json info = company(url);
    std::string website = info["websiteUrl"];             // https://www.<domain>
    std::string domain = website.substr(std::string("https://www.").size());
    // searched_domain is the host that was searched, normalized; a subdomain finds its company.
    const std::vector<std::pair<std::string, std::string>> shapes = {
        {domain, domain},
        {website, domain},
        {website + "/about?x=1", domain},
        {"WWW." + lower(domain), domain},
        {"http://" + domain + ":443/", domain},
        {"careers." + domain, "careers." + domain}};
    for (const auto& [given, searched] : shapes) {
        auto before = credits();
        auto j = ok("/v1/data/company/info-by-domain", {{"domain", given}});
        EXPECT_EQ(credits(), before - 1) << given;
        const json& d = j["data"];
        EXPECT_EQ(d["name"], info["name"]) << given;
        EXPECT_EQ(d["network_url"], url) << given;
        EXPECT_EQ(d["searched_domain"], searched) << given;
        expect_detailed_company(d);
    }
    const std::string path = "/v1/data/company/info-by-domain";
    expect_invalid(path, json::object(), "domain");
    expect_invalid(path, {{"domain", json::array({domain})}}, "domain");
    expect_invalid(path, {{"domain", "not a domain"}}, "domain");
    expect_invalid(path, {{"domain", "localhost"}}, "domain");
    expect_invalid(path, {{"domain", "nobody-owns-this.example"}}, "no company found");
}

// ---------------------------------------------------------------------------------------------
// Company search

TEST_F(SandboxV1Data, CompanySearchReturnsBasicRecordsAndChargesPerTenResults) {
    auto before = credits();
    auto j = ok("/v1/data/search/companies", {{"keyword", "software"}});
    const json& d = j["data"];
    ASSERT_EQ(d["companies"].size(), 10u) << "total_results defaults to 10";
    EXPECT_GT(d["total_results"].get<int>(), 10) << "total_results counts every match";
    EXPECT_EQ(d["enriched"], false);
    EXPECT_FALSE(d.contains("funded_only"));
    for (const auto& item : d["companies"]) {
        EXPECT_EQ(item.size(), 3u) << item.dump();
        EXPECT_NE(item["url"].get<std::string>().find("/company/"), std::string::npos);
        EXPECT_TRUE(item["title"].is_string());
        EXPECT_TRUE(item["description"].is_string());
    }
    EXPECT_EQ(credits(), before - 1);
    // The request log names the endpoint and its charge.
    auto log = ctl->get("/control/requests?action=data_search_companies").body_json()["requests"];
    ASSERT_FALSE(log.empty());
    EXPECT_EQ(log.back()["path"], "/v1/data/search/companies");
    EXPECT_EQ(log.back()["credits"], 1);
    EXPECT_EQ(log.back()["status"], 200);

    before = credits();
    auto k = ok("/v1/data/search/companies", {{"keyword", "software"}, {"total_results", 25}});
    ASSERT_EQ(k["data"]["companies"].size(), 25u);
    EXPECT_EQ(credits(), before - 3) << "25 results cost ceil(25/10) = 3";
    EXPECT_EQ(k["data"]["total_results"], d["total_results"]);
    // The order is stable: the first ten are the same.
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(k["data"]["companies"][i]["url"], d["companies"][i]["url"]);
    }
    // Every word of the keyword must occur.
    auto narrow = ok("/v1/data/search/companies", {{"keyword", "software cloud"}, {"total_results", 50000}});
    EXPECT_LT(narrow["data"]["total_results"].get<int>(), d["total_results"].get<int>());
}

TEST_F(SandboxV1Data, CompanySearchThatFindsNothingCostsNothing) {
    auto before = credits();
    auto j = ok("/v1/data/search/companies", {{"keyword", "zzqxnothingmatches"}, {"enrich", true}});
    EXPECT_EQ(j["data"]["total_results"], 0);
    EXPECT_TRUE(j["data"]["companies"].empty());
    EXPECT_EQ(credits(), before);
    auto funded = ok("/v1/data/search/funded-companies", {{"keyword", "zzqxnothingmatches"}});
    EXPECT_EQ(funded["data"]["total_results"], 0);
    EXPECT_EQ(credits(), before);
}

TEST_F(SandboxV1Data, CompanySearchFiltersAsStringOrArray) {
    auto search = [&](json body) {
        body["keyword"] = "the";
        body["total_results"] = 50000;
        body["enrich"] = true;
        return ok("/v1/data/search/companies", body)["data"];
    };
    auto all = search(json::object());
    ASSERT_GT(all["total_results"].get<int>(), 20);
    // industry as a string and as a one-item array give the same answer.
    std::string industry = all["companies"][0]["industry"];
    auto by_string = search({{"industry", industry}});
    auto by_array = search({{"industry", json::array({industry})}});
    EXPECT_EQ(by_string, by_array);
    ASSERT_GT(by_string["total_results"].get<int>(), 0);
    for (const auto& co : by_string["companies"]) {
        EXPECT_EQ(co["industry"], industry);
    }
    // Values of one filter are alternatives; filters combine.
    auto fr = search({{"location", "FR"}});
    auto fr_de = search({{"location", json::array({"FR", "de"})}});
    ASSERT_GT(fr["total_results"].get<int>(), 0);
    EXPECT_GT(fr_de["total_results"].get<int>(), fr["total_results"].get<int>());
    for (const auto& co : fr_de["companies"]) {
        std::string country = co["headquarter"]["country"];
        EXPECT_TRUE(country == "FR" || country == "DE") << country;
    }
    auto small = search({{"employee_range", json::array({"11-50", "51-200"})}, {"location", "FR"}});
    ASSERT_GT(small["total_results"].get<int>(), 0);
    for (const auto& co : small["companies"]) {
        int start = co["employeeCountRange"]["start"];
        EXPECT_TRUE(start == 11 || start == 51) << start;
        EXPECT_EQ(co["headquarter"]["country"], "FR");
    }
    EXPECT_EQ(search({{"employee_range", "10,001+"}}), search({{"employee_range", "10001+"}}));
}

TEST_F(SandboxV1Data, EnrichedSearchAddsFundingAndOneCreditPerCompany) {
    auto before = credits();
    auto j = ok("/v1/data/search/companies", {{"keyword", "the"}, {"total_results", 40}, {"enrich", true}});
    const json& d = j["data"];
    ASSERT_EQ(d["companies"].size(), 40u);
    EXPECT_EQ(d["enriched"], true);
    EXPECT_EQ(credits(), before - (4 + 40)) << "ceil(40/10) + 1 per enriched company";
    const std::regex date(R"(\d{4}-\d{2}-\d{2})");
    int funded = 0;
    for (const auto& co : d["companies"]) {
        expect_detailed_company(co);
        EXPECT_NE(co["company_url"].get<std::string>().find("/company/"), std::string::npos);
        const json& f = co["funding"];
        ASSERT_TRUE(f.is_object()) << co.dump().substr(0, 200);
        ASSERT_TRUE(f["isFunded"].is_boolean());
        ASSERT_TRUE(f["investors"].is_array());
        if (!f["isFunded"].get<bool>()) {
            EXPECT_TRUE(f["totalRounds"].is_null());
            EXPECT_TRUE(f["lastRound"].is_null());
            EXPECT_TRUE(f["investors"].empty());
            continue;
        }
        ++funded;
        EXPECT_GE(f["totalRounds"].get<int>(), 1);
        const json& last = f["lastRound"];
        EXPECT_TRUE(last["type"].is_string());
        EXPECT_TRUE(std::regex_match(last["date"].get<std::string>(), date)) << last["date"];
        EXPECT_TRUE(last["amount"].is_string());
        EXPECT_FALSE(f["investors"].empty());
        for (const auto& inv : f["investors"]) {
            EXPECT_TRUE(inv["name"].is_string());
            EXPECT_TRUE(inv["company_url"].is_string() || inv["company_url"].is_null());
        }
    }
    EXPECT_GT(funded, 0);
    EXPECT_LT(funded, 40);
    // Funding is drawn from the seed: the same company always shows the same rounds.
    auto again = ok("/v1/data/search/companies", {{"keyword", "the"}, {"total_results", 40}, {"enrich", true}});
    EXPECT_EQ(again["data"], d);
}

TEST_F(SandboxV1Data, FundedSearchReturnsOnlyFundedCompanies) {
    auto all = ok("/v1/data/search/companies", {{"keyword", "the"}, {"total_results", 50000}})["data"];
    auto before = credits();
    auto j = ok("/v1/data/search/funded-companies", {{"keyword", "the"}, {"total_results", 15}, {"enrich", true}});
    const json& d = j["data"];
    EXPECT_EQ(d["funded_only"], true);
    EXPECT_EQ(d["enriched"], true);
    ASSERT_EQ(d["companies"].size(), 15u);
    EXPECT_EQ(credits(), before - (2 + 15));
    for (const auto& co : d["companies"]) {
        EXPECT_EQ(co["funding"]["isFunded"], true) << co["name"];
    }
    auto basic = ok("/v1/data/search/funded-companies", {{"keyword", "the"}, {"total_results", 50000}})["data"];
    EXPECT_EQ(basic["funded_only"], true);
    EXPECT_EQ(basic["enriched"], false);
    EXPECT_LT(basic["total_results"].get<int>(), all["total_results"].get<int>());
    std::set<std::string> every;
    for (const auto& co : all["companies"]) {
        every.insert(co["url"].get<std::string>());
    }
    for (const auto& co : basic["companies"]) {
        EXPECT_TRUE(every.contains(co["url"].get<std::string>())) << co["url"];
    }
}

TEST_F(SandboxV1Data, CompanySearchRejectsBadInputWithoutCharging) {
    for (const std::string path : {"/v1/data/search/companies", "/v1/data/search/funded-companies"}) {
        expect_invalid(path, json::object(), "keyword");
        expect_invalid(path, {{"keyword", ""}}, "keyword");
        expect_invalid(path, {{"keyword", json::array({"a"})}}, "keyword");
        expect_invalid(path, {{"keyword", "a"}, {"total_results", 0}}, "total_results must be a positive integer");
        expect_invalid(path, {{"keyword", "a"}, {"total_results", 50001}}, "total_results");
        expect_invalid(path, {{"keyword", "a"}, {"total_results", "10"}}, "total_results");
        expect_invalid(path, {{"keyword", "a"}, {"total_results", 2.5}}, "total_results");
        expect_invalid(path, {{"keyword", "a"}, {"enrich", "yes"}}, "enrich");
        expect_invalid(path, {{"keyword", "a"}, {"industry", 5}}, "industry");
        expect_invalid(path, {{"keyword", "a"}, {"location", json::array({"FR", 3})}}, "location[1]");
        expect_invalid(path, {{"keyword", "a"}, {"employee_range", "huge"}}, "employee_range");
    }
}

// ---------------------------------------------------------------------------------------------
// Profile search

TEST_F(SandboxV1Data, ProfileSearchReturnsSearchResultsAndChargesPerTen) {
    auto before = credits();
    auto j = ok("/v1/data/search/profiles", {{"job_title", "engineer"}, {"total_results", 12}});
    const json& d = j["data"];
    ASSERT_EQ(d["profiles"].size(), 12u);
    EXPECT_GT(d["total_results"].get<int>(), 12);
    EXPECT_EQ(credits(), before - 2);
    for (const auto& p : d["profiles"]) {
        EXPECT_EQ(p.size(), 3u);
        EXPECT_NE(p["url"].get<std::string>().find("https://www.network.example/in/"), std::string::npos);
        EXPECT_NE(lower(p["title"]).find("engineer"), std::string::npos) << p["title"];
        EXPECT_TRUE(p["description"].is_string());
    }
    auto dflt = ok("/v1/data/search/profiles", {{"job_title", "engineer"}});
    EXPECT_EQ(dflt["data"]["profiles"].size(), 10u) << "total_results defaults to 10";
}

TEST_F(SandboxV1Data, ProfileSearchCriteriaCombine) {
    auto total = [&](const json& body) {
        json b = body;
        b["total_results"] = 50000;
        return ok("/v1/data/search/profiles", b)["data"];
    };
    auto engineers = total({{"job_title", "engineer"}});
    auto designers = total({{"job_title", "designer"}});
    auto either = total({{"job_title", json::array({"engineer", "designer"})}});
    int e = engineers["total_results"], d = designers["total_results"], both = either["total_results"];
    ASSERT_GT(e, 0);
    ASSERT_GT(d, 0);
    EXPECT_GE(both, std::max(e, d));
    EXPECT_LE(both, e + d);
    // AND across criteria.
    auto in_france = total({{"job_title", "engineer"}, {"location", "FR"}});
    ASSERT_GT(in_france["total_results"].get<int>(), 0);
    EXPECT_LT(in_france["total_results"].get<int>(), e);
    for (const auto& p : in_france["profiles"]) {
        EXPECT_NE(p["description"].get<std::string>().find("France"), std::string::npos) << p["description"];
    }
    // current_company by page URL and by name.
    // A company big enough to employ people of the world.
    auto big = ok("/v1/data/search/companies",
                  {{"keyword", "the"}, {"employee_range", "1001-5000"}, {"total_results", 1}})["data"]["companies"];
    ASSERT_EQ(big.size(), 1u);
    std::string url = big[0]["url"];
    std::string name = company(url)["name"];
    auto staff = total({{"current_company", url}});
    ASSERT_GT(staff["total_results"].get<int>(), 0);
    for (const auto& p : staff["profiles"]) {
        std::string title = p["title"];
        EXPECT_EQ(title.substr(title.size() - name.size()), name) << title;
    }
    // By name, every company whose name contains it counts (usually just this one).
    EXPECT_GE(total({{"current_company", json::array({name})}})["total_results"].get<int>(),
              staff["total_results"].get<int>());
    // keyword: every word of one value must occur.
    auto kw = total({{"keyword", "engineer"}});
    EXPECT_GE(kw["total_results"].get<int>(), e);
    EXPECT_EQ(total({{"keyword", "zzqx nothing"}})["total_results"], 0);
}

TEST_F(SandboxV1Data, ProfileSearchBySchoolAndIndustry) {
    // A real person's school, read through the enrichment of that person.
    auto people = ctl->get("/control/people?offset=7&limit=1").body_json()["people"];
    ASSERT_EQ(people.size(), 1u);
    std::string url = people[0]["profile_url"];
    auto found = ok("/v1/data/search/profiles", {{"keyword", people[0]["last_name"]}, {"total_results", 50000}});
    bool listed = false;
    for (const auto& p : found["data"]["profiles"]) {
        listed = listed || p["url"] == url;
    }
    ASSERT_TRUE(listed) << "a person is found by their last name";
    std::string title = [&] {
        for (const auto& p : found["data"]["profiles"]) {
            if (p["url"] == url) return p["title"].get<std::string>();
        }
        return std::string();
    }();
    std::string company_name = title.substr(title.rfind(" - ") + 3);
    auto enriched = ok("/v1/data/profile/enrich", {{"first_name", people[0]["first_name"]},
                                                   {"last_name", people[0]["last_name"]},
                                                   {"company_name", company_name}})["data"];
    ASSERT_TRUE(enriched["full_profile_data"].is_object());
    const json& full = enriched["full_profile_data"];
    ASSERT_FALSE(full["education"].empty());
    std::string school = full["education"][0]["school"];
    std::string school_url = full["education"][0]["school_url"];
    for (const json& criterion : {json(school), json(school_url), json::array({school_url})}) {
        auto alumni = ok("/v1/data/search/profiles", {{"school", criterion}, {"total_results", 50000}})["data"];
        bool has = false;
        for (const auto& p : alumni["profiles"]) {
            has = has || p["url"] == full["network_url"];
        }
        EXPECT_TRUE(has) << criterion.dump();
    }
    std::string industry = full["industry"];
    auto same_industry = ok("/v1/data/search/profiles", {{"industry", industry}, {"total_results", 50000}})["data"];
    bool has = false;
    for (const auto& p : same_industry["profiles"]) {
        has = has || p["url"] == full["network_url"];
    }
    EXPECT_TRUE(has);
}

TEST_F(SandboxV1Data, ProfileSearchNeedsACriterionAndValidInput) {
    const std::string path = "/v1/data/search/profiles";
    const std::string need = "at least one of keyword, job_title, industry, school, location, current_company";
    expect_invalid(path, json::object(), need);
    expect_invalid(path, {{"total_results", 5}}, need);
    expect_invalid(path, {{"keyword", "   "}, {"job_title", json::array()}}, need);
    expect_invalid(path, {{"keyword", json::array({"a", 1})}}, "keyword[1]");
    expect_invalid(path, {{"job_title", 3}}, "job_title");
    expect_invalid(path, {{"school", "https://www.network.example/in/someone"}}, "school");
    expect_invalid(path, {{"current_company", "https://elsewhere.example/x"}}, "current_company");
    expect_invalid(path, {{"keyword", "a"}, {"total_results", -1}}, "total_results");
    auto before = credits();
    auto none = ok(path, {{"keyword", "zzqxnobody"}});
    EXPECT_EQ(none["data"]["total_results"], 0);
    EXPECT_TRUE(none["data"]["profiles"].empty());
    EXPECT_EQ(credits(), before) << "a search that finds nobody costs nothing";
}

// ---------------------------------------------------------------------------------------------
// Profile enrichment

TEST_F(SandboxV1Data, EnrichmentFindsThePersonAtTheirCompanyForOneCredit) {
    auto people = ctl->get("/control/people?offset=100&limit=1").body_json()["people"];
    std::string url = people[0]["profile_url"];
    auto hit = ok("/v1/data/search/profiles", {{"keyword", people[0]["last_name"]}, {"total_results", 50000}});
    std::string title;
    for (const auto& p : hit["data"]["profiles"]) {
        if (p["url"] == url) {
            title = p["title"];
        }
    }
    ASSERT_FALSE(title.empty());
    std::string company_name = title.substr(title.rfind(" - ") + 3);
    // Case, accents and spacing do not matter.
    json body = {{"first_name", " " + lower(people[0]["first_name"]) + " "},
                 {"last_name", people[0]["last_name"]},
                 {"company_name", lower(company_name)}};
    auto before = credits();
    auto j = ok("/v1/data/profile/enrich", body);
    EXPECT_EQ(credits(), before - 1);
    const json& d = j["data"];
    EXPECT_EQ(d["person_searched"]["first_name"], lower(people[0]["first_name"]));
    EXPECT_EQ(d["person_searched"]["last_name"], people[0]["last_name"]);
    EXPECT_EQ(d["person_searched"]["company_name"], lower(company_name));
    ASSERT_TRUE(d["network_profile"].is_object());
    const json& np = d["network_profile"];
    EXPECT_TRUE(np["profile_title"].is_string());
    EXPECT_TRUE(np["profile_description"].is_string());
    const json& full = d["full_profile_data"];
    ASSERT_TRUE(full.is_object());
    EXPECT_EQ(full["first_name"], people[0]["first_name"]);
    EXPECT_EQ(full["last_name"], people[0]["last_name"]);
    EXPECT_EQ(np["network_url"], full["network_url"]);
    for (const char* k : {"public_id", "headline", "location", "summary", "industry", "profile_picture_url", "email",
                          "phone", "website"}) {
        EXPECT_TRUE(full[k].is_string()) << k;
    }
    ASSERT_FALSE(full["experience"].empty());
    EXPECT_EQ(full["experience"][0]["company"], company_name);
    EXPECT_EQ(full["experience"][0]["end_date"], "");
    const std::regex month_year(R"(\d{1,2}/\d{4})");
    EXPECT_TRUE(std::regex_match(full["experience"][0]["start_date"].get<std::string>(), month_year));
    EXPECT_TRUE(full["skills"].is_array());
    EXPECT_TRUE(full["education"].is_array());
}

TEST_F(SandboxV1Data, EnrichmentWithoutAMatchIsASuccessWithNullsAndCostsNothing) {
    auto before = credits();
    auto j = ok("/v1/data/profile/enrich",
                {{"first_name", "Zzyzx"}, {"last_name", "Nobody"}, {"company_name", "Nowhere Inc"}});
    EXPECT_TRUE(j["data"]["network_profile"].is_null());
    EXPECT_TRUE(j["data"]["full_profile_data"].is_null());
    EXPECT_EQ(j["data"]["person_searched"]["first_name"], "Zzyzx");
    EXPECT_EQ(credits(), before);
    // A real person at another company is not a match either.
    auto people = ctl->get("/control/people?offset=5&limit=1").body_json()["people"];
    auto other = ok("/v1/data/profile/enrich", {{"first_name", people[0]["first_name"]},
                                                {"last_name", people[0]["last_name"]},
                                                {"company_name", "Zzqx Unknown Employer"}});
    EXPECT_TRUE(other["data"]["full_profile_data"].is_null());
    EXPECT_EQ(credits(), before);
    const std::string path = "/v1/data/profile/enrich";
    expect_invalid(path, {{"last_name", "a"}, {"company_name", "b"}}, "first_name");
    expect_invalid(path, {{"first_name", "a"}, {"company_name", "b"}}, "last_name");
    expect_invalid(path, {{"first_name", "a"}, {"last_name", "b"}}, "company_name");
    expect_invalid(path, {{"first_name", "a"}, {"last_name", "b"}, {"company_name", 7}}, "company_name");
}

// ---------------------------------------------------------------------------------------------
// The V1 envelope: authentication, credits, bodies, methods.

TEST_F(SandboxV1Data, ErrorsUseTheV1Envelope) {
    auto missing = c->post("/v1/data/company/info", {{"company_url", "x"}});
    EXPECT_EQ(missing.status, 200);
    json m = missing.body_json();
    EXPECT_EQ(m["status"], "error");
    EXPECT_EQ(m["code"], "INVALID_API_KEY");
    EXPECT_TRUE(m["message"].is_string());
    EXPECT_FALSE(m.contains("success"));
    EXPECT_EQ(raw("/v1/data/search/companies", {{"keyword", "a"}}, "wrong-key").body_json()["code"],
              "INVALID_API_KEY");
    auto bad_json = c->request("POST", "/v1/data/search/companies", "{not json",
                               {{"x-api-key", key}, {"content-type", "application/json"}});
    EXPECT_EQ(bad_json.status, 200);
    EXPECT_EQ(bad_json.body_json()["status"], "error");
    EXPECT_EQ(bad_json.body_json()["code"], "INVALID_PARAMS");
    auto wrong_method = c->get("/v1/data/search/companies", key);
    EXPECT_EQ(wrong_method.status, 405);
    EXPECT_EQ(wrong_method.body_json()["status"], "error");
}

TEST_F(SandboxV1Data, InsufficientCreditsChargesNothingAndSearchesThatFindNothingStillAnswer) {
    ASSERT_EQ(ctl->post("/control/credits", {{"key", poor_key}, {"credits", 3}}).status, 200);
    auto url = company_urls("software", 1).at(0);
    // 10 enriched companies cost 11: refused whole.
    auto r = raw("/v1/data/search/companies", {{"keyword", "software"}, {"enrich", true}}, poor_key).body_json();
    EXPECT_EQ(r["status"], "error");
    EXPECT_EQ(r["code"], "INSUFFICIENT_CREDITS");
    EXPECT_NE(lower(r["message"]).find("insufficient credits"), std::string::npos) << r["message"];
    EXPECT_EQ(credits(poor_key), 3);
    // A search that finds nothing costs nothing, so it answers even on an empty balance.
    ASSERT_EQ(ctl->post("/control/credits", {{"key", poor_key}, {"credits", 0}}).status, 200);
    auto empty = raw("/v1/data/search/profiles", {{"keyword", "zzqxnobody"}}, poor_key).body_json();
    EXPECT_EQ(empty["status"], "success");
    auto info = raw("/v1/data/company/info", {{"company_url", url}}, poor_key).body_json();
    EXPECT_EQ(info["code"], "INSUFFICIENT_CREDITS");
    EXPECT_EQ(credits(poor_key), 0);
    // The request log shows the refused calls with 0 credits.
    auto log = ctl->get("/control/requests?key=poor-key").body_json()["requests"];
    ASSERT_FALSE(log.empty());
    for (const auto& rec : log) {
        EXPECT_EQ(rec["credits"], 0) << rec.dump();
    }
}

// ---------------------------------------------------------------------------------------------
// The outreach client parses every answer, and its estimate bounds every charge.

TEST(SandboxV1DataClient, ClientParsesTheDataEndpoints) {
    namespace o = orch::outreach;
    client_fixture f;
    auto charged = [&](auto&& call) {
        auto before = f.control.get("/control/credits").body_json()["keys"][0]["credits"].get<std::int64_t>();
        auto r = f.run(std::forward<decltype(call)>(call));
        auto after = f.control.get("/control/credits").body_json()["keys"][0]["credits"].get<std::int64_t>();
        return std::make_pair(std::move(r), before - after);
    };
    o::data_company_search_params sp;
    sp.keyword = "software";
    sp.total_results = 12;
    sp.enrich = true;
    auto [search, search_cost] = charged(f.api->data_search_companies(sp));
    ASSERT_TRUE(search) << o::describe(search.error());
    ASSERT_EQ(search->companies.size(), 12u);
    EXPECT_EQ(search->enriched, true);
    EXPECT_TRUE(search->companies[0].is_funded.has_value());
    EXPECT_FALSE(search->companies[0].company_url.empty());
    EXPECT_EQ(search_cost, o::estimate(sp).credits);

    auto [funded, funded_cost] = charged(f.api->data_search_funded_companies(sp));
    ASSERT_TRUE(funded) << o::describe(funded.error());
    EXPECT_EQ(funded->funded_only, true);
    for (const auto& co : funded->companies) {
        EXPECT_EQ(co.is_funded, true);
    }
    EXPECT_LE(funded_cost, o::estimate(sp, true).credits);

    auto info = f.run(f.api->company_info({search->companies[0].company_url}));
    ASSERT_TRUE(info) << o::describe(info.error());
    EXPECT_EQ(info->company.name, search->companies[0].name);
    std::string website = info->company.website_url;
    auto by_domain = f.run(f.api->company_info_by_domain({website}));
    ASSERT_TRUE(by_domain) << o::describe(by_domain.error());
    EXPECT_EQ(by_domain->company.network_url, search->companies[0].company_url);
    EXPECT_FALSE(by_domain->company.searched_domain.empty());

    o::data_profile_search_params pp;
    pp.job_title = {"engineer"};
    pp.location = {"FR"};
    auto [people, people_cost] = charged(f.api->data_search_profiles(pp));
    ASSERT_TRUE(people) << o::describe(people.error());
    ASSERT_EQ(people->profiles.size(), 10u);
    EXPECT_EQ(people_cost, o::estimate(pp).credits);

    auto nobody = f.run(f.api->enrich_profile({"Zzyzx", "Nobody", "Nowhere"}));
    ASSERT_TRUE(nobody) << o::describe(nobody.error());
    EXPECT_FALSE(nobody->found);
    EXPECT_FALSE(nobody->full_profile);

    o::data_company_search_params bad;
    auto err = f.run(f.api->data_search_companies(bad));
    ASSERT_FALSE(err);
    EXPECT_EQ(err.error().code, "INVALID_PARAMS");
}

} // namespace
