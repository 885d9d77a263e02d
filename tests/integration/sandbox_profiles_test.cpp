// /v2/profiles over HTTP against the real sandbox binary: every action, filters, pagination,
// exact credit charges, INVALID_PARAMS naming each bad parameter, INSUFFICIENT_CREDITS.
#include "tests/support/http_client.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace orch::test;

namespace {

constexpr const char* key = "test-key";

struct SandboxProfiles : ::testing::Test {
    // One sandbox for the whole suite: the world is read-only and each test uses its own account.
    static void SetUpTestSuite() { sb = new sandbox_process({"--connections-per-account", "25"}); }
    static void TearDownTestSuite() {
        delete sb;
        sb = nullptr;
    }
    void SetUp() override {
        c = std::make_unique<http_client>("127.0.0.1", sb->port());
        ctl = std::make_unique<http_client>("127.0.0.1", sb->control_port());
        account = login_account(*c, key, ::testing::UnitTest::GetInstance()->current_test_info()->name());
    }

    json call(const std::string& action, const json& params = json::object(), int want_status = 200) {
        auto r = c->v2(key, "profiles", account, action, params);
        EXPECT_EQ(r.status, want_status) << action << " " << params.dump() << " -> " << r.body;
        return r.body_json();
    }
    std::int64_t credits() { return c->get("/v2/credits", key).body_json()["data"]["credits"].get<std::int64_t>(); }
    json people(int offset, int limit) {
        return ctl->get("/control/people?offset=" + std::to_string(offset) + "&limit=" + std::to_string(limit))
            .body_json()["people"];
    }
    // Expects INVALID_PARAMS whose message names `param`, with nothing charged.
    void expect_invalid(const std::string& action, const json& params, const std::string& param) {
        auto before = credits();
        auto j = call(action, params, 400);
        EXPECT_EQ(j["error"]["code"], "INVALID_PARAMS") << params.dump();
        EXPECT_NE(j["error"]["message"].get<std::string>().find(param), std::string::npos)
            << "message should name " << param << ": " << j["error"]["message"];
        EXPECT_EQ(j["metadata"]["credits_consumed"], 0);
        EXPECT_EQ(credits(), before);
    }

    static sandbox_process* sb;
    std::unique_ptr<http_client> c;
    std::unique_ptr<http_client> ctl;
    std::string account;
};

sandbox_process* SandboxProfiles::sb = nullptr;

// ---------------------------------------------------------------------------------------------
// get_me, get, get_contact, visit

TEST_F(SandboxProfiles, GetMeReturnsTheOwnerForOneCredit) {
    auto before = credits();
    auto j = call("get_me");
    EXPECT_EQ(j["metadata"]["action"], "get_me");
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    const json& d = j["data"];
    for (const char* k : {"public_id", "first_name", "last_name", "headline", "location", "summary", "industry",
                          "profile_picture_url", "network_url", "entity_urn"}) {
        EXPECT_TRUE(d[k].is_string()) << k;
    }
    EXPECT_FALSE(d["experience"].empty());
    // The same account always gets the same owner, and the owner is not a person of the world.
    EXPECT_EQ(call("get_me")["data"], d);
    auto world_get = call("get", {{"identifier", d["public_id"]}});
    EXPECT_EQ(world_get["data"]["public_id"], d["public_id"]) << "get of the owner's own id returns the owner";
    EXPECT_EQ(world_get["data"]["member_distance"], 0);
}

TEST_F(SandboxProfiles, GetByEveryKindOfIdentifier) {
    json p = people(42, 1)[0];
    std::string url = p["profile_url"];
    std::string id = p["public_id"];
    auto before = credits();
    auto j = call("get", {{"profile_url", url}});
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    const json& d = j["data"];
    EXPECT_EQ(d["public_id"], id);
    EXPECT_EQ(d["network_url"], url);
    for (const char* k : {"first_name", "last_name", "headline", "location", "summary", "industry",
                          "profile_picture_url", "entity_urn"}) {
        EXPECT_TRUE(d[k].is_string()) << k;
    }
    ASSERT_FALSE(d["experience"].empty());
    const json& current = d["experience"][0];
    EXPECT_EQ(current["end_date"], "");
    for (const char* k : {"company", "company_url", "title", "description", "start_date"}) {
        EXPECT_TRUE(current[k].is_string()) << k;
    }
    ASSERT_FALSE(d["education"].empty());
    for (const char* k : {"school", "degree", "field_of_study", "start_date", "end_date"}) {
        EXPECT_TRUE(d["education"][0][k].is_string()) << k;
    }
    EXPECT_TRUE(d["skills"].is_array());
    int distance = d["member_distance"].get<int>();
    EXPECT_TRUE(distance == 1 || distance == 2 || distance == 3);

    EXPECT_EQ(call("get", {{"network_url", url}})["data"], d);
    EXPECT_EQ(call("get", {{"identifier", id}})["data"], d);
    EXPECT_EQ(call("get", {{"profile_urn", d["entity_urn"]}})["data"], d);
    // The shapes people paste.
    std::string path = "/in/" + id;
    for (const std::string& variant :
         {"http://www.network.example" + path, "https://network.example" + path,
          "https://www.network.example" + path + "/", "https://WWW.NETWORK.EXAMPLE" + path + "?trk=feed#top",
          " https://www.network.example" + path + "/ "}) {
        EXPECT_EQ(call("get", {{"profile_url", variant}})["data"]["public_id"], id) << variant;
    }
}

TEST_F(SandboxProfiles, MemberDistanceIsOneForConnections) {
    auto first = call("search_people", {{"network", "F"}, {"total_results", 50}})["data"];
    ASSERT_EQ(first["total_available_results"], 25) << "the account was seeded with 25 connections";
    for (const auto& r : first["results"]) {
        EXPECT_EQ(r["member_distance"], 1);
    }
    auto got = call("get", {{"profile_url", first["results"][0]["network_url"]}});
    EXPECT_EQ(got["data"]["member_distance"], 1);
}

TEST_F(SandboxProfiles, GetRejectsBadTargets) {
    json p = people(7, 1)[0];
    expect_invalid("get", json::object(), "params.profile_url");
    expect_invalid("get", {{"profile_url", p["profile_url"]}, {"identifier", p["public_id"]}}, "exactly one");
    expect_invalid("get", {{"profile_url", "not a url"}}, "params.profile_url");
    expect_invalid("get", {{"profile_url", "https://www.network.example/company/acme-labs"}}, "params.profile_url");
    expect_invalid("get", {{"profile_url", "https://other.example/in/" + p["public_id"].get<std::string>()}},
                   "params.profile_url");
    expect_invalid("get", {{"profile_url", "https://www.network.example/in/"}}, "params.profile_url");
    expect_invalid("get", {{"network_url", ""}}, "params.network_url");
    expect_invalid("get", {{"profile_url", 17}}, "params.profile_url");
    expect_invalid("get", {{"identifier", json::array()}}, "params.identifier");
    expect_invalid("get", {{"profile_urn", json::object()}}, "params.profile_urn");
    expect_invalid("get", {{"profile_urn", "member-12"}}, "params.profile_urn");
    // Well-formed but nobody: the spec's "target that no longer exists" is INVALID_PARAMS.
    auto j = call("get", {{"profile_url", "https://www.network.example/in/nobody-here-000000"}}, 400);
    EXPECT_EQ(j["error"]["code"], "INVALID_PARAMS");
    EXPECT_NE(j["error"]["message"].get<std::string>().find("profile not found"), std::string::npos);
    expect_invalid("get", {{"identifier", "nobody-here-000000"}}, "profile not found");
    expect_invalid("get", {{"profile_urn", "urn:li:member:1"}}, "profile not found");
}

TEST_F(SandboxProfiles, GetContactGivesStringsForOneCredit) {
    auto list = people(0, 60);
    std::size_t with_email = 0;
    auto before = credits();
    for (const auto& p : list) {
        auto j = call("get_contact", {{"profile_url", p["profile_url"]}});
        EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
        const json& d = j["data"];
        EXPECT_EQ(d["profile_url"], p["profile_url"]);
        for (const char* k : {"email", "phone", "website"}) {
            ASSERT_TRUE(d[k].is_string()) << k;
        }
        with_email += d["email"].get<std::string>().empty() ? 0 : 1;
    }
    EXPECT_EQ(credits(), before - static_cast<std::int64_t>(list.size()));
    // A minority of people show an e-mail address, deterministically.
    EXPECT_GT(with_email, 5u);
    EXPECT_LT(with_email, 40u);
    expect_invalid("get_contact", {{"identifier", 5}}, "params.identifier");
}

TEST_F(SandboxProfiles, VisitIsRecordedAfterTheCharge) {
    json p = people(11, 1)[0];
    auto before = credits();
    auto j = call("visit", {{"profile_url", p["profile_url"]}});
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    EXPECT_EQ(j["data"]["visited"], true);
    EXPECT_EQ(j["data"]["profile_url"], p["profile_url"]);
    EXPECT_EQ(j["data"]["public_id"], p["public_id"]);
    auto visits = ctl->get("/control/side-effects").body_json()["visits"];
    std::size_t mine = 0;
    for (const auto& v : visits) {
        if (v["account_id"] == account) {
            ++mine;
            EXPECT_EQ(v["profile_url"], p["profile_url"]);
            EXPECT_TRUE(v["at"].is_string());
        }
    }
    EXPECT_EQ(mine, 1u);
    // A refused visit records nothing.
    expect_invalid("visit", {{"profile_url", "https://www.network.example/in/nobody-000000"}}, "profile not found");
    auto me = call("get_me")["data"];
    expect_invalid("visit", {{"profile_url", me["network_url"]}}, "own profile");
    std::size_t after = 0;
    json visits_after = ctl->get("/control/side-effects").body_json()["visits"];
    for (const auto& v : visits_after) {
        after += v["account_id"] == account ? 1 : 0;
    }
    EXPECT_EQ(after, 1u);
}

// ---------------------------------------------------------------------------------------------
// search_people

TEST_F(SandboxProfiles, SearchPeopleDefaultsToTenForOneCredit) {
    auto before = credits();
    auto j = call("search_people");
    const json& d = j["data"];
    EXPECT_EQ(d["results"].size(), 10u);
    EXPECT_EQ(d["total_results"], 10);
    EXPECT_EQ(d["total_available_results"], 10'000);
    EXPECT_FALSE(d.contains("pagination"));
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    for (const auto& r : d["results"]) {
        for (const char* k : {"public_id", "first_name", "last_name", "headline", "location", "profile_picture_url",
                              "network_url"}) {
            EXPECT_TRUE(r[k].is_string()) << k;
        }
        EXPECT_TRUE(r["member_distance"].is_number_integer());
        EXPECT_FALSE(r.contains("invitation_state"));
    }
    // Deterministic order.
    EXPECT_EQ(call("search_people")["data"]["results"], d["results"]);
}

TEST_F(SandboxProfiles, TwentyFiveResultsCostThreeCredits) {
    auto before = credits();
    auto j = call("search_people", {{"total_results", 25}});
    EXPECT_EQ(j["data"]["results"].size(), 25u);
    EXPECT_EQ(j["data"]["total_results"], 25);
    EXPECT_EQ(j["metadata"]["credits_consumed"], 3);
    EXPECT_EQ(credits(), before - 3);
    // Fewer matches than asked: charged for what is returned (at least 1).
    before = credits();
    auto few = call("search_people", {{"keyword", "zzzz-no-such-word"}, {"total_results", 500}});
    EXPECT_EQ(few["data"]["total_results"], 0);
    EXPECT_EQ(few["data"]["total_available_results"], 0);
    EXPECT_EQ(few["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
}

TEST_F(SandboxProfiles, SearchFiltersNarrowTheResults) {
    auto fr = call("search_people", {{"location", "FR"}, {"total_results", 100}})["data"];
    EXPECT_GT(fr["total_available_results"].get<int>(), 500);
    for (const auto& r : fr["results"]) {
        std::string loc = r["location"];
        EXPECT_EQ(loc.substr(loc.size() - 6), "France") << loc;
    }
    auto two = call("search_people", {{"location", json::array({"Berlin", "Munich"})}, {"total_results", 200}})["data"];
    for (const auto& r : two["results"]) {
        std::string loc = r["location"];
        EXPECT_TRUE(loc.rfind("Berlin", 0) == 0 || loc.rfind("Munich", 0) == 0) << loc;
    }
    auto both = call("search_people", {{"location", "FR"}, {"keyword", "engineer"}, {"total_results", 100}})["data"];
    EXPECT_LT(both["total_available_results"].get<int>(), fr["total_available_results"].get<int>());
    EXPECT_GT(both["total_available_results"].get<int>(), 0);

    // A person found by name, title and company; case and accents do not matter.
    json target = call("get", {{"profile_url", people(321, 1)[0]["profile_url"]}})["data"];
    std::string company = target["experience"][0]["company"];
    std::string company_url = target["experience"][0]["company_url"];
    auto by_name = call("search_people", {{"first_name", target["first_name"]},
                                          {"last_name", target["last_name"]},
                                          {"company_name", company},
                                          {"total_results", 50}})["data"];
    std::set<std::string> ids;
    for (const auto& r : by_name["results"]) {
        ids.insert(r["public_id"]);
    }
    EXPECT_TRUE(ids.contains(target["public_id"]));
    auto at_company =
        call("search_people", {{"company_url", json::array({company_url})}, {"total_results", 1000}})["data"];
    ASSERT_GT(at_company["total_results"].get<int>(), 0);
    // One full check over HTTP; the unit tests cover the filter exhaustively.
    auto colleague = call("get", {{"identifier", at_company["results"].back()["public_id"]}})["data"];
    EXPECT_EQ(colleague["experience"][0]["company_url"], company_url);
    auto school =
        call("search_people", {{"school_url", target["education"][0]["school_url"]}, {"total_results", 1000}});
    std::set<std::string> alumni;
    for (const auto& r : school["data"]["results"]) {
        alumni.insert(r["public_id"]);
    }
    EXPECT_TRUE(alumni.contains(target["public_id"]));
    auto industry = call("search_people", {{"industry", json::array({target["industry"]})}, {"total_results", 20}});
    EXPECT_GT(industry["data"]["total_available_results"].get<int>(), 0);
    // Unknown companies and schools simply match nobody.
    auto none = call("search_people", {{"company_url", "https://www.network.example/company/no-such-company"}});
    EXPECT_EQ(none["data"]["total_available_results"], 0);
}

TEST_F(SandboxProfiles, NetworkLettersAndInvitationState) {
    auto s = call("search_people", {{"network", json::array({"S"})}, {"total_results", 30}})["data"];
    for (const auto& r : s["results"]) {
        EXPECT_EQ(r["member_distance"], 2);
    }
    auto o = call("search_people", {{"network", "O"}, {"total_results", 30}})["data"];
    for (const auto& r : o["results"]) {
        EXPECT_EQ(r["member_distance"], 3);
    }
    auto fs = call("search_people", {{"network", json::array({"F", "S"})}, {"total_results", 1}})["data"];
    EXPECT_EQ(fs["total_available_results"].get<int>(),
              s["total_available_results"].get<int>() + 25);
    EXPECT_EQ(s["total_available_results"].get<int>() + o["total_available_results"].get<int>() + 25, 10'000);
    auto states = call("search_people", {{"network", "F"}, {"fetch_invitation_state", true}, {"total_results", 25}});
    for (const auto& r : states["data"]["results"]) {
        EXPECT_EQ(r["invitation_state"], "CONNECTED");
    }
    auto others = call("search_people", {{"network", "O"}, {"fetch_invitation_state", true}});
    for (const auto& r : others["data"]["results"]) {
        EXPECT_TRUE(r["invitation_state"] == "CAN_INVITE" || r["invitation_state"] == "PENDING");
    }
}

TEST_F(SandboxProfiles, ConnectionOfAndFollowerOf) {
    json x = people(500, 1)[0];
    auto conn = call("search_people", {{"connection_of", x["profile_url"]}, {"total_results", 1000}})["data"];
    auto fol = call("search_people", {{"follower_of", x["profile_url"]}, {"total_results", 1000}})["data"];
    EXPECT_GT(conn["total_available_results"].get<int>(), 0);
    EXPECT_GT(fol["total_available_results"].get<int>(), conn["total_available_results"].get<int>());
    // Deterministic subsets: the same answer every time.
    EXPECT_EQ(call("search_people", {{"connection_of", x["profile_url"]}, {"total_results", 1000}})["data"], conn);
    // connection_of the account owner is the account's own network.
    auto me = call("get_me")["data"];
    auto mine = call("search_people", {{"connection_of", me["network_url"]}, {"total_results", 100}})["data"];
    EXPECT_EQ(mine["total_available_results"], 25);
    expect_invalid("search_people", {{"connection_of", "garbage"}}, "params.connection_of");
    expect_invalid("search_people", {{"follower_of", "https://www.network.example/in/nobody-000000"}},
                   "params.follower_of");
}

TEST_F(SandboxProfiles, PageModeReturnsPagesOfTen) {
    auto all = call("search_people", {{"location", "US"}, {"total_results", 30}})["data"]["results"];
    auto before = credits();
    auto j = call("search_people", {{"location", "US"}, {"start_page", 2}, {"end_page", 3}, {"total_results", 1}});
    const json& d = j["data"];
    ASSERT_EQ(d["results"].size(), 20u) << "total_results is ignored in page mode";
    for (std::size_t i = 0; i < 20; ++i) {
        EXPECT_EQ(d["results"][i]["public_id"], all[i + 10]["public_id"]);
    }
    EXPECT_EQ(d["total_results"], 20);
    EXPECT_EQ(d["pagination"]["start_page"], 2);
    EXPECT_EQ(d["pagination"]["end_page"], 3);
    EXPECT_EQ(d["pagination"]["results_per_page"], 10);
    EXPECT_EQ(d["pagination"]["pages_fetched"], 2);
    EXPECT_EQ(d["pagination"]["has_more"], true);
    EXPECT_EQ(j["metadata"]["credits_consumed"], 2);
    EXPECT_EQ(credits(), before - 2);
    // start_page alone fetches one page; the last page says there is no more.
    auto alone = call("search_people", {{"location", "US"}, {"start_page", 1}})["data"];
    EXPECT_EQ(alone["results"].size(), 10u);
    EXPECT_EQ(alone["pagination"]["end_page"], 1);
    int available = d["total_available_results"];
    int last_page = (available + 9) / 10;
    auto last = call("search_people", {{"location", "US"}, {"start_page", last_page}, {"end_page", last_page + 2}});
    EXPECT_EQ(last["data"]["total_results"].get<int>(), available - (last_page - 1) * 10);
    EXPECT_EQ(last["data"]["pagination"]["pages_fetched"], 1);
    EXPECT_EQ(last["data"]["pagination"]["has_more"], false);
}

TEST_F(SandboxProfiles, SearchPeopleRejectsBadParams) {
    expect_invalid("search_people", {{"keyword", 5}}, "params.keyword");
    expect_invalid("search_people", {{"first_name", true}}, "params.first_name");
    expect_invalid("search_people", {{"last_name", json::array()}}, "params.last_name");
    expect_invalid("search_people", {{"title", 1.5}}, "params.title");
    expect_invalid("search_people", {{"company_name", json::object()}}, "params.company_name");
    expect_invalid("search_people", {{"location", 5}}, "params.location");
    expect_invalid("search_people", {{"location", json::array({"Paris", 3})}}, "params.location[1]");
    expect_invalid("search_people", {{"industry", json::object()}}, "params.industry");
    expect_invalid("search_people", {{"network", "X"}}, "params.network");
    expect_invalid("search_people", {{"network", json::array({"F", "2"})}}, "params.network[1]");
    expect_invalid("search_people", {{"company_url", "garbage"}}, "params.company_url");
    expect_invalid("search_people", {{"company_url", json::array({"https://www.network.example/in/x"})}},
                   "params.company_url[0]");
    expect_invalid("search_people", {{"past_company", json::array({7})}}, "params.past_company[0]");
    expect_invalid("search_people", {{"past_company", "https://other.example/company/x"}}, "params.past_company");
    expect_invalid("search_people", {{"school_url", "University of Paris"}}, "params.school_url");
    expect_invalid("search_people", {{"connection_of", 12}}, "params.connection_of");
    expect_invalid("search_people", {{"fetch_invitation_state", "yes"}}, "params.fetch_invitation_state");
    expect_invalid("search_people", {{"total_results", "10"}}, "params.total_results");
    expect_invalid("search_people", {{"total_results", 0}}, "params.total_results");
    expect_invalid("search_people", {{"total_results", 50'001}}, "params.total_results");
    expect_invalid("search_people", {{"start_page", 0}}, "params.start_page");
    expect_invalid("search_people", {{"start_page", "1"}}, "params.start_page");
    expect_invalid("search_people", {{"end_page", -1}}, "params.end_page");
    expect_invalid("search_people", {{"start_page", 3}, {"end_page", 2}}, "params.end_page");
    // Unknown extra params are ignored.
    auto ok = call("search_people", {{"nonsense", json::array({1, 2})}, {"total_results", 2}});
    EXPECT_EQ(ok["data"]["total_results"], 2);
}

TEST_F(SandboxProfiles, PastCompanyAcceptsUrlsAndNames) {
    // Find someone with a past position, then search by that company both ways.
    json past;
    for (const auto& p : people(0, 40)) {
        auto d = call("get", {{"identifier", p["public_id"]}})["data"];
        if (d["experience"].size() > 1) {
            past = d;
            break;
        }
    }
    ASSERT_FALSE(past.is_null());
    const json& job = past["experience"][1];
    for (const json& value : {job["company_url"], job["company"]}) {
        auto r = call("search_people", {{"past_company", value}, {"total_results", 1000}})["data"];
        std::set<std::string> ids;
        for (const auto& item : r["results"]) {
            ids.insert(item["public_id"]);
        }
        EXPECT_TRUE(ids.contains(past["public_id"])) << value;
    }
}

// ---------------------------------------------------------------------------------------------
// search_companies, get_company

TEST_F(SandboxProfiles, SearchCompanies) {
    auto before = credits();
    auto j = call("search_companies", {{"company_size", json::array({"11-50", "51-200"})}, {"total_results", 15}});
    EXPECT_EQ(j["metadata"]["credits_consumed"], 2);
    EXPECT_EQ(credits(), before - 2);
    const json& d = j["data"];
    EXPECT_EQ(d["results"].size(), 15u);
    for (const auto& r : d["results"]) {
        for (const char* k : {"name", "universal_name", "company_url", "industry", "employee_count_range", "location",
                              "description"}) {
            EXPECT_TRUE(r[k].is_string()) << k;
        }
        EXPECT_TRUE(r["employee_count_range"] == "11-50" || r["employee_count_range"] == "51-200");
    }
    auto de = call("search_companies", {{"location", "DE"}, {"sector", "Technology"}, {"total_results", 50}})["data"];
    for (const auto& r : de["results"]) {
        std::string loc = r["location"];
        EXPECT_EQ(loc.substr(loc.size() - 7), "Germany");
    }
    auto kw = call("search_companies", {{"keyword", d["results"][0]["name"]}, {"total_results", 50}})["data"];
    std::set<std::string> names;
    for (const auto& r : kw["results"]) {
        names.insert(r["name"]);
    }
    EXPECT_TRUE(names.contains(d["results"][0]["name"]));
    auto pages = call("search_companies", {{"start_page", 1}, {"end_page", 2}})["data"];
    EXPECT_EQ(pages["results"].size(), 20u);
    EXPECT_EQ(pages["total_available_results"], 600);
    EXPECT_EQ(pages["pagination"]["has_more"], true);
    auto big = call("search_companies", {{"industry", "software"}, {"company_size", "10,001+"}})["data"];
    for (const auto& r : big["results"]) {
        EXPECT_EQ(r["employee_count_range"], "10001+");
    }
    expect_invalid("search_companies", {{"company_size", "12-40"}}, "params.company_size");
    expect_invalid("search_companies", {{"company_size", json::array({"11-50", 5})}}, "params.company_size[1]");
    expect_invalid("search_companies", {{"sector", 5}}, "params.sector");
    expect_invalid("search_companies", {{"keyword", json::array()}}, "params.keyword");
    expect_invalid("search_companies", {{"total_results", 0}}, "params.total_results");
}

TEST_F(SandboxProfiles, GetCompanyReturnsTheDetailedRecord) {
    auto found = call("search_companies", {{"total_results", 1}})["data"]["results"][0];
    auto before = credits();
    auto j = call("get_company", {{"company_url", found["company_url"]}});
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    const json& d = j["data"];
    EXPECT_EQ(d["name"], found["name"]);
    EXPECT_EQ(d["universalName"], found["universal_name"]);
    for (const char* k : {"description", "websiteUrl", "industry", "logoUrl", "organizationType", "defaultLocale"}) {
        EXPECT_TRUE(d[k].is_string()) << k;
    }
    EXPECT_TRUE(d["tagline"].is_string() || d["tagline"].is_null());
    EXPECT_TRUE(d["employeeCount"].is_number_integer());
    EXPECT_TRUE(d["employeeCountRange"]["start"].is_number_integer());
    for (const char* k : {"country", "geographicArea", "city", "line1", "postalCode"}) {
        EXPECT_TRUE(d["headquarter"][k].is_string()) << k;
    }
    EXPECT_TRUE(d["locations"].is_array());
    EXPECT_EQ(d["locations"][0]["headquarter"], true);
    EXPECT_TRUE(d["followersCount"].is_number_integer());
    EXPECT_TRUE(d["pageMailbox"].is_boolean());
    EXPECT_TRUE(d["verified"].is_boolean());
    EXPECT_TRUE(d.contains("callToAction"));
    EXPECT_TRUE(d.contains("coverImageUrl"));
    EXPECT_EQ(call("get_company", {{"universal_name", found["universal_name"]}})["data"], d);
    std::string upper = "HTTP://NETWORK.EXAMPLE/company/" + found["universal_name"].get<std::string>() + "/?x=1";
    EXPECT_EQ(call("get_company", {{"company_url", upper}})["data"], d);
    expect_invalid("get_company", json::object(), "params.company_url");
    expect_invalid("get_company", {{"company_url", "acme"}}, "params.company_url");
    expect_invalid("get_company", {{"company_url", "https://www.network.example/in/someone"}}, "params.company_url");
    expect_invalid("get_company", {{"company_url", 3}}, "params.company_url");
    expect_invalid("get_company", {{"company_url", found["company_url"]}, {"universal_name", "x"}}, "not both");
    expect_invalid("get_company", {{"company_url", "https://www.network.example/company/no-such-company"}},
                   "company not found");
    expect_invalid("get_company", {{"universal_name", "no-such-company"}}, "company not found");
}

// ---------------------------------------------------------------------------------------------
// Credits

TEST(SandboxProfilesCredits, InsufficientCreditsChangesNothing) {
    sandbox_process sb({"--api-key", "k:2"});
    http_client c("127.0.0.1", sb.port());
    std::string account = login_account(c, "k", "poor");
    auto r = c.v2("k", "profiles", account, "search_people", {{"total_results", 30}});
    EXPECT_EQ(r.status, 402);
    auto j = r.body_json();
    EXPECT_EQ(j["error"]["code"], "INSUFFICIENT_CREDITS");
    EXPECT_EQ(j["error"]["required"], 3);
    EXPECT_EQ(j["error"]["remaining"], 2);
    EXPECT_EQ(j["metadata"]["credits_consumed"], 0);
    EXPECT_EQ(c.get("/v2/credits", "k").body_json()["data"]["credits"], 2);
    // 20 results cost exactly the 2 left; then even a 1-credit get_me is refused.
    auto ok = c.v2("k", "profiles", account, "search_people", {{"total_results", 20}});
    EXPECT_EQ(ok.status, 200);
    EXPECT_EQ(ok.body_json()["metadata"]["credits_consumed"], 2);
    EXPECT_EQ(c.get("/v2/credits", "k").body_json()["data"]["credits"], 0);
    auto me = c.v2("k", "profiles", account, "get_me");
    EXPECT_EQ(me.status, 402);
    EXPECT_EQ(me.body_json()["error"]["required"], 1);
    // A refused visit leaves no trace.
    http_client ctl("127.0.0.1", sb.control_port());
    auto person = ctl.get("/control/people?limit=1").body_json()["people"][0];
    EXPECT_EQ(c.v2("k", "profiles", account, "visit", {{"profile_url", person["profile_url"]}}).status, 402);
    EXPECT_TRUE(ctl.get("/control/side-effects").body_json()["visits"].empty());
}

} // namespace
