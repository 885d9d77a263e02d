// /v2/content and the V1 reaction endpoints over HTTP against the real sandbox binary: posts
// (create, create_company with its admin rule, files, mentions), search and feed with their
// windows, reactions, comments and threads, reposts, time spent, exact credit charges,
// INVALID_PARAMS naming each bad parameter, FORBIDDEN, CHANNEL_ERROR, INSUFFICIENT_CREDITS,
// and the V1 envelope of profile reactions (page and cursor pagination) and post reactions
// (total-results mode, page mode at 1 credit per page, both item shapes).
#include "tests/support/http_client.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <set>

using namespace orch::test;

namespace {

constexpr const char* key = "test-key";
constexpr const char* png_base64 =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

struct SandboxContent : ::testing::Test {
    // One sandbox for the whole suite: each test uses its own account.
    static void SetUpTestSuite() { sb = new sandbox_process({"--world-people", "3000"}); }
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
        auto r = c->v2(key, "content", account, action, params);
        EXPECT_EQ(r.status, want_status) << action << " " << params.dump() << " -> " << r.body.substr(0, 600);
        return r.body_json();
    }
    json v1(const std::string& path, const json& body) {
        auto r = c->post(path, body, key);
        EXPECT_EQ(r.status, 200) << path << " " << body.dump() << " -> " << r.body.substr(0, 600);
        return r.body_json();
    }
    std::int64_t credits() { return c->get("/v2/credits", key).body_json()["data"]["credits"].get<std::int64_t>(); }
    json people(int offset, int limit) {
        return ctl->get("/control/people?offset=" + std::to_string(offset) + "&limit=" + std::to_string(limit))
            .body_json()["people"];
    }
    json me() { return c->v2(key, "profiles", account, "get_me").body_json()["data"]; }
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
    // Same for a V1 endpoint: {status: "error", message, code}, HTTP 200, nothing charged.
    void expect_v1_invalid(const std::string& path, const json& body, const std::string& text) {
        auto before = credits();
        auto j = v1(path, body);
        EXPECT_EQ(j["status"], "error") << body.dump();
        EXPECT_EQ(j["code"], "INVALID_PARAMS") << body.dump();
        EXPECT_NE(j["message"].get<std::string>().find(text), std::string::npos)
            << "message should contain " << text << ": " << j["message"];
        EXPECT_FALSE(j.contains("data"));
        EXPECT_EQ(credits(), before);
    }
    // The single post whose text contains `marker` (a unique word), as search shows it.
    json find_post(const std::string& marker) {
        auto d = call("search", {{"keyword", marker}})["data"];
        EXPECT_EQ(d["total_available_results"], 1) << marker;
        return d["posts"].empty() ? json::object() : d["posts"][0];
    }
    // The most engaged seeded posts (relevance order), for reactions and comments.
    json top_posts(int n) { return call("search", {{"keyword", "#"}, {"total_results", n}})["data"]["posts"]; }
    json post_with(std::size_t min_reactions, std::size_t min_comments) {
        for (const auto& p : top_posts(40)) {
            if (p["num_reactions"].get<std::size_t>() >= min_reactions &&
                p["num_comments"].get<std::size_t>() >= min_comments) {
                return p;
            }
        }
        ADD_FAILURE() << "no post with " << min_reactions << " reactions and " << min_comments << " comments";
        return json::object();
    }
    std::string unique_word() {
        return "zq" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
               std::to_string(++n);
    }

    static sandbox_process* sb;
    std::unique_ptr<http_client> c;
    std::unique_ptr<http_client> ctl;
    std::string account;
    int n = 0;
};

sandbox_process* SandboxContent::sb = nullptr;

// ---------------------------------------------------------------------------------------------
// create, create_company

TEST_F(SandboxContent, CreateRendersMentionsAndHashtagsForOneCredit) {
    json person = people(5, 1)[0];
    std::string company_url = me()["experience"][0]["company_url"];
    std::string slug = company_url.substr(company_url.rfind('/') + 1);
    std::string word = unique_word();
    std::string message = "Hello " + word + "!\nThanks mention_user(" + person["public_id"].get<std::string>() +
                          ", Dear Friend) and mention_company(" + slug + ", The Team). #Launch #Day1";
    auto before = credits();
    auto j = call("create", {{"message", message}});
    EXPECT_EQ(j["metadata"]["action"], "create");
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    std::string urn = j["data"]["post_urn"];
    std::string url = j["data"]["post_url"];
    EXPECT_EQ(urn.rfind("urn:li:activity:", 0), 0u) << urn;
    EXPECT_EQ(urn.size(), 16u + 19u) << "19-digit activity ids";
    EXPECT_EQ(url, "https://www.network.example/feed/update/" + urn + "/");

    json p = find_post(word);
    EXPECT_EQ(p["post_urn"], urn);
    EXPECT_EQ(p["text"], "Hello " + word + "!\nThanks Dear Friend and The Team. #Launch #Day1");
    EXPECT_EQ(p["hashtags"], json::array({"Launch", "Day1"}));
    ASSERT_EQ(p["mentions"].size(), 2u);
    EXPECT_EQ(p["mentions"][0]["type"], "person");
    EXPECT_EQ(p["mentions"][0]["profile_url"], person["profile_url"]);
    EXPECT_EQ(p["mentions"][0]["display_text"], "Dear Friend");
    EXPECT_EQ(p["mentions"][1]["type"], "company");
    EXPECT_EQ(p["mentions"][1]["company_url"], company_url);
    EXPECT_EQ(p["author"]["type"], "person");
    EXPECT_EQ(p["author"]["profile_url"], me()["network_url"]);
    EXPECT_EQ(p["num_reactions"], 0);
    EXPECT_EQ(p["my_reaction"], nullptr);
    // The newest post of the account's home feed.
    auto feed = call("get_feed", {{"count", 1}})["data"]["posts"];
    ASSERT_EQ(feed.size(), 1u);
    EXPECT_EQ(feed[0]["post_urn"], urn);
}

TEST_F(SandboxContent, CreateValidatesMessageMentionsAndFiles) {
    json file = {{"filename", "a.png"}, {"data", png_base64}};
    json video = {{"filename", "clip.mp4"}, {"data", "AAAAGGZ0eXBtcDQy"}};
    expect_invalid("create", json::object(), "params.message");
    expect_invalid("create", {{"message", 12}}, "params.message");
    expect_invalid("create", {{"message", "   "}}, "params.message");
    expect_invalid("create", {{"message", std::string(3001, 'a')}}, "params.message");
    expect_invalid("create", {{"message", "hi mention_user(nobody-here-000000, X)"}}, "params.message");
    expect_invalid("create", {{"message", "hi mention_user(nobody-here-000000, X)"}}, "profile not found");
    expect_invalid("create", {{"message", "hi mention_company(no-such-company-zz, X)"}}, "company not found");
    expect_invalid("create", {{"message", "hi mention_user(abc"}}, "not closed");
    expect_invalid("create", {{"message", "hi mention_company(foo)"}}, "two arguments");
    expect_invalid("create", {{"file", 5}}, "params.file");
    expect_invalid("create", {{"file", "ftp://cdn.example/a.jpg"}}, "params.file");
    expect_invalid("create", {{"file", "https://cdn.example/a.exe"}}, "params.file");
    expect_invalid("create", {{"file", "https://cdn.example/a.jpeg"}}, "allowed extension");
    expect_invalid("create", {{"file", {{"filename", "a.bmp"}, {"data", png_base64}}}}, "params.file.filename");
    expect_invalid("create", {{"file", {{"filename", "a.png"}, {"data", "!!not base64!!"}}}}, "params.file.data");
    expect_invalid("create", {{"file", {{"filename", "a.png"}}}}, "params.file.data");
    expect_invalid("create", {{"file", {{"data", png_base64}}}}, "params.file.filename");
    expect_invalid("create", {{"file", file}, {"files", json::array({file})}}, "params.files");
    expect_invalid("create", {{"files", json::array()}}, "params.files");
    expect_invalid("create", {{"files", "https://cdn.example/a.png"}}, "params.files");
    expect_invalid("create", {{"files", json::array({"https://cdn.example/a.png"})}}, "params.files[0]");
    expect_invalid("create", {{"files", json::array({file, video})}}, "params.files[1]");
    expect_invalid("create", {{"files", json::array({{{"filename", "a.png"}, {"data", png_base64}, {"altText", 5}}})}},
                   "params.files[0].altText");
    expect_invalid("create", {{"message", "x"}, {"thumbnail", file}}, "params.thumbnail");
    expect_invalid("create", {{"file", file}, {"thumbnail", file}}, "params.thumbnail");
    expect_invalid("create", {{"files", json::array({file})}, {"thumbnail", file}}, "params.thumbnail");
    expect_invalid("create", {{"file", video}, {"thumbnail", video}}, "params.thumbnail");
}

TEST_F(SandboxContent, CreateAcceptsEveryAllowedKindOfFile) {
    struct case_t {
        json params;
        std::vector<std::string> types;
    };
    std::string w1 = unique_word(), w2 = unique_word(), w3 = unique_word(), w4 = unique_word(), w5 = unique_word();
    std::vector<case_t> cases = {
        {{{"message", w1}, {"file", "https://cdn.example/photos/team.webp?size=large"}}, {"image"}},
        {{{"message", w2},
          {"file", {{"filename", "clip.MOV"}, {"data", "AAAAGGZ0eXBtcDQy"}}},
          {"thumbnail", {{"filename", "cover.jpg"}, {"data", png_base64}}}},
         {"video"}},
        {{{"message", w3}, {"file", {{"filename", "deck.pptx"}, {"data", "UEsDBBQ="}}}}, {"document"}},
        {{{"message", w4},
          {"files", json::array({{{"filename", "a.png"}, {"data", png_base64}, {"altText", "A chart"}},
                                 {{"filename", "b.gif"}, {"data", png_base64}}})}},
         {"image", "image"}},
        {{{"message", w5}, {"file", "https://cdn.example/v.webm"}, {"thumbnail", "https://cdn.example/v.png"}},
         {"video"}},
    };
    for (const auto& cs : cases) {
        auto j = call("create", cs.params);
        ASSERT_EQ(j["metadata"]["credits_consumed"], 1) << cs.params.dump();
        json p = find_post(cs.params["message"]);
        ASSERT_EQ(p["media"].size(), cs.types.size()) << p.dump();
        for (std::size_t i = 0; i < cs.types.size(); ++i) {
            EXPECT_EQ(p["media"][i]["type"], cs.types[i]);
            EXPECT_EQ(p["media"][i]["url"].get<std::string>().rfind("https://", 0), 0u);
        }
    }
    EXPECT_EQ(find_post(w1)["media"][0]["url"], "https://cdn.example/photos/team.webp?size=large");
    EXPECT_TRUE(find_post(w2)["media"][0]["thumbnail_url"].is_string());
    EXPECT_EQ(find_post(w3)["media"][0]["format"], "carousel") << "documents are published as carousels";
    EXPECT_EQ(find_post(w4)["media"][0]["alt_text"], "A chart");
    EXPECT_EQ(find_post(w5)["media"][0]["thumbnail_url"], "https://cdn.example/v.png");
    // A file alone is a post.
    EXPECT_EQ(call("create", {{"file", "https://cdn.example/only.gif"}})["metadata"]["credits_consumed"], 1);
}

TEST_F(SandboxContent, CreateCompanyNeedsAnAdminOfThePage) {
    std::string own = me()["experience"][0]["company_url"];
    std::string word = unique_word();
    auto before = credits();
    auto j = call("create_company", {{"company_url", own}, {"message", "News " + word}});
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    json p = find_post(word);
    EXPECT_EQ(p["post_urn"], j["data"]["post_urn"]);
    EXPECT_EQ(p["author"]["type"], "company");
    EXPECT_EQ(p["author"]["company_url"], own);

    // Most other pages are not administered by the account: FORBIDDEN, nothing charged.
    auto companies = c->v2(key, "profiles", account, "search_companies", {{"total_results", 30}}).body_json();
    std::string forbidden_url;
    for (const auto& co : companies["data"]["results"]) {
        if (co["company_url"] == own) {
            continue;
        }
        before = credits();
        auto r =
            c->v2(key, "content", account, "create_company", {{"company_url", co["company_url"]}, {"message", "x"}});
        if (r.status == 403) {
            auto e = r.body_json();
            EXPECT_EQ(e["error"]["code"], "FORBIDDEN");
            EXPECT_EQ(e["metadata"]["credits_consumed"], 0);
            EXPECT_EQ(credits(), before);
            forbidden_url = co["company_url"];
            break;
        }
        EXPECT_EQ(r.status, 200) << r.body;
    }
    ASSERT_FALSE(forbidden_url.empty()) << "no page refused among 30";
    // Bad params are reported before the permission check.
    expect_invalid("create_company", {{"company_url", forbidden_url}}, "params.message");
    expect_invalid("create_company", {{"message", "x"}}, "params.company_url");
    expect_invalid("create_company", {{"company_url", 7}, {"message", "x"}}, "params.company_url");
    expect_invalid("create_company", {{"company_url", "https://www.network.example/in/someone"}, {"message", "x"}},
                   "params.company_url");
    expect_invalid("create_company",
                   {{"company_url", "https://www.network.example/company/no-such-company-zz"}, {"message", "x"}},
                   "company not found");
}

TEST_F(SandboxContent, MessagingAccountsGetChannelError) {
    auto r = c->post("/v2/login", {{"platform", "messaging"}, {"country", "FR"}, {"login_token", "wa-content"}}, key);
    std::string wa = r.body_json()["data"]["account_id"];
    auto before = credits();
    auto j = c->v2(key, "content", wa, "create", {{"message", "hello"}});
    EXPECT_EQ(j.status, 422);
    EXPECT_EQ(j.body_json()["error"]["code"], "CHANNEL_ERROR");
    EXPECT_EQ(credits(), before);
}

TEST_F(SandboxContent, InsufficientCreditsCreatesNothing) {
    auto balance = credits();
    ASSERT_EQ(ctl->post("/control/credits", {{"key", key}, {"credits", 0}}).status, 200);
    std::string word = unique_word();
    auto j = call("create", {{"message", word}}, 402);
    EXPECT_EQ(j["error"]["code"], "INSUFFICIENT_CREDITS");
    ASSERT_EQ(ctl->post("/control/credits", {{"key", key}, {"credits", balance}}).status, 200);
    EXPECT_EQ(call("search", {{"keyword", word}})["data"]["total_available_results"], 0);
}

// ---------------------------------------------------------------------------------------------
// search, get_feed

TEST_F(SandboxContent, SearchWindowsAndCredits) {
    auto before = credits();
    auto j = call("search", {{"keyword", "hiring"}});
    const json& d = j["data"];
    EXPECT_EQ(d["posts"].size(), 10u);
    EXPECT_EQ(d["total_results"], 10);
    EXPECT_GT(d["total_available_results"].get<int>(), 40);
    EXPECT_FALSE(d.contains("pagination"));
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    for (const auto& p : d["posts"]) {
        std::string text = p["text"];
        std::string lowered;
        for (char ch : text) {
            lowered.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
        }
        EXPECT_NE(lowered.find("hiring"), std::string::npos) << text;
        for (const char* k : {"post_urn", "post_url", "share_url", "text", "created_at", "posted_ago"}) {
            EXPECT_TRUE(p[k].is_string()) << k;
        }
    }
    // Relevance: most reactions and comments first.
    auto engagement = [](const json& p) { return p["num_reactions"].get<int>() + p["num_comments"].get<int>(); };
    for (std::size_t i = 1; i < d["posts"].size(); ++i) {
        EXPECT_GE(engagement(d["posts"][i - 1]), engagement(d["posts"][i]));
    }
    auto all = call("search", {{"keyword", "hiring"}, {"total_results", 30}});
    EXPECT_EQ(all["data"]["posts"].size(), 30u);
    EXPECT_EQ(all["metadata"]["credits_consumed"], 3);
    auto pages = call("search", {{"keyword", "hiring"}, {"start_page", 2}, {"end_page", 3}, {"total_results", 1}});
    ASSERT_EQ(pages["data"]["posts"].size(), 20u) << "total_results is ignored in page mode";
    EXPECT_EQ(pages["metadata"]["credits_consumed"], 2);
    for (std::size_t i = 0; i < 20; ++i) {
        EXPECT_EQ(pages["data"]["posts"][i]["post_urn"], all["data"]["posts"][i + 10]["post_urn"]);
    }
    const json& pg = pages["data"]["pagination"];
    EXPECT_EQ(pg["start_page"], 2);
    EXPECT_EQ(pg["end_page"], 3);
    EXPECT_EQ(pg["results_per_page"], 10);
    EXPECT_EQ(pg["pages_fetched"], 2);
    EXPECT_EQ(pg["has_more"], true);
    auto recent = call("search", {{"keyword", "hiring"}, {"sort_by", "date_posted"}, {"total_results", 20}});
    for (std::size_t i = 1; i < recent["data"]["posts"].size(); ++i) {
        EXPECT_GE(recent["data"]["posts"][i - 1]["created_at"].get<std::string>(),
                  recent["data"]["posts"][i]["created_at"].get<std::string>());
    }
    auto week = call("search", {{"keyword", "hiring"}, {"date_posted", "past-week"}})["data"];
    EXPECT_LT(week["total_available_results"].get<int>(), d["total_available_results"].get<int>());
    auto none = call("search", {{"keyword", "zzzz-no-such-word"}});
    EXPECT_EQ(none["data"]["total_results"], 0);
    EXPECT_EQ(none["metadata"]["credits_consumed"], 1) << "a request costs at least 1 credit";

    expect_invalid("search", json::object(), "params.keyword");
    expect_invalid("search", {{"keyword", json::array()}}, "params.keyword");
    expect_invalid("search", {{"keyword", "x"}, {"sort_by", "random"}}, "params.sort_by");
    expect_invalid("search", {{"keyword", "x"}, {"date_posted", "yesterday"}}, "params.date_posted");
    expect_invalid("search", {{"keyword", "x"}, {"total_results", 0}}, "params.total_results");
    expect_invalid("search", {{"keyword", "x"}, {"total_results", 1001}}, "params.total_results");
    expect_invalid("search", {{"keyword", "x"}, {"total_results", "10"}}, "params.total_results");
    expect_invalid("search", {{"keyword", "x"}, {"start_page", 3}, {"end_page", 2}}, "params.end_page");
}

TEST_F(SandboxContent, FeedShowsConnectionsAndPagesNewestFirstWithCursor) {
    std::set<std::string> connections;
    auto list = c->v2(key, "network", account, "list_connections", {{"count", 100}}).body_json();
    for (const auto& x : list["data"]["connections"]) {
        connections.insert(x["profile_url"].get<std::string>());
    }
    ASSERT_FALSE(connections.empty());
    auto before = credits();
    auto first = call("get_feed", {{"count", 15}});
    EXPECT_EQ(first["metadata"]["credits_consumed"], 2);
    EXPECT_EQ(credits(), before - 2);
    const json& d1 = first["data"];
    ASSERT_EQ(d1["posts"].size(), 15u);
    EXPECT_EQ(d1["total_results"], 15);
    ASSERT_EQ(d1["has_more"], true);
    ASSERT_TRUE(d1["next_cursor"].is_string());
    auto second = call("get_feed", {{"count", 15}, {"cursor", d1["next_cursor"]}})["data"];
    std::vector<json> all;
    for (const auto& p : d1["posts"]) all.push_back(p);
    for (const auto& p : second["posts"]) all.push_back(p);
    std::set<std::string> seen;
    for (std::size_t i = 0; i < all.size(); ++i) {
        EXPECT_TRUE(seen.insert(all[i]["post_urn"].get<std::string>()).second) << "no post twice";
        if (i > 0) {
            EXPECT_GE(all[i - 1]["created_at"].get<std::string>(), all[i]["created_at"].get<std::string>());
        }
        const json& a = all[i]["author"];
        if (a["type"] == "person") {
            EXPECT_TRUE(connections.contains(a["profile_url"].get<std::string>())) << a.dump();
        }
    }
    // The whole feed, page by page, ends with a null cursor.
    json cursor = second["next_cursor"];
    int guard = 0;
    while (cursor.is_string() && ++guard < 50) {
        auto page = call("get_feed", {{"count", 100}, {"cursor", cursor}})["data"];
        cursor = page["next_cursor"];
    }
    EXPECT_TRUE(cursor.is_null());
    expect_invalid("get_feed", {{"cursor", "not-a-cursor"}}, "params.cursor");
    expect_invalid("get_feed", {{"count", 0}}, "params.count");
    expect_invalid("get_feed", {{"count", 101}}, "params.count");
    // Another account's cursor is refused.
    std::string other = login_account(*c, key, "feed-other");
    auto foreign = c->v2(key, "content", other, "get_feed", {{"cursor", d1["next_cursor"]}});
    EXPECT_EQ(foreign.status, 400);
}

// ---------------------------------------------------------------------------------------------
// like, react, get_reactions

TEST_F(SandboxContent, LikeAndReactShowInCountsAndReactions) {
    json p = post_with(60, 0);
    std::string url = p["post_url"];
    int count = p["num_reactions"];
    auto before = credits();
    auto liked = call("like", {{"post_url", url}});
    EXPECT_EQ(liked["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(credits(), before - 1);
    EXPECT_EQ(liked["data"]["reaction_type"], "LIKE");
    EXPECT_EQ(liked["data"]["reaction_target"], "POST");
    auto seen = call("search", {{"keyword", p["text"].get<std::string>().substr(0, 40)}, {"total_results", 50}});
    json mine;
    for (const auto& q : seen["data"]["posts"]) {
        if (q["post_urn"] == p["post_urn"]) mine = q;
    }
    ASSERT_TRUE(mine.is_object());
    EXPECT_EQ(mine["num_reactions"], count + 1);
    EXPECT_EQ(mine["my_reaction"], "LIKE");
    // Reacting again changes the reaction; it is still one reaction.
    auto reacted = call("react", {{"post_url", p["share_url"]}, {"reaction_type", "celebrate"}});
    EXPECT_EQ(reacted["data"]["reaction_type"], "CELEBRATE");
    auto r = call("get_reactions", {{"post_url", p["post_urn"]}, {"total_results", 1}});
    EXPECT_EQ(r["data"]["total_available_results"], count + 1);
    ASSERT_EQ(r["data"]["reactions"].size(), 1u);
    const json& newest = r["data"]["reactions"][0];
    EXPECT_EQ(newest["reaction_type"], "CELEBRATE");
    EXPECT_EQ(newest["actor"]["profile_url"], me()["network_url"]);
    EXPECT_TRUE(newest["actor"]["connection_degree"].is_null()) << "the viewer's own reaction";
    // Every accepted shape of a post URL names the same post.
    std::string id = p["post_urn"].get<std::string>().substr(16);
    for (const std::string& variant :
         {"http://network.example/feed/update/urn:li:activity:" + id,
          "https://WWW.NETWORK.EXAMPLE/feed/update/urn%3Ali%3Aactivity%3A" + id + "/?utm=x", "urn:li:activity:" + id}) {
        EXPECT_EQ(call("like", {{"post_url", variant}})["data"]["post_urn"], p["post_urn"]) << variant;
    }
    expect_invalid("like", json::object(), "params.post_url");
    expect_invalid("like", {{"post_url", "https://www.network.example/in/someone"}}, "params.post_url");
    expect_invalid("like", {{"post_url", "https://other.example/feed/update/urn:li:activity:" + id}},
                   "params.post_url");
    expect_invalid("like", {{"post_url", "urn:li:activity:7000000000000000001"}}, "post not found");
    expect_invalid("react", {{"post_url", url}, {"reaction_type", "ANGRY"}}, "params.reaction_type");
    expect_invalid("react", {{"post_url", url}, {"reaction_type", 3}}, "params.reaction_type");
    expect_invalid("react", {{"post_url", url}, {"comment_urn", "urn:li:comment:(activity:1,2)"}},
                   "params.comment_urn");
}

TEST_F(SandboxContent, GetReactionsTotalModeAndPageModeCredits) {
    json p = post_with(160, 0);
    std::string url = p["post_url"];
    auto before = credits();
    auto d = call("get_reactions", {{"post_url", url}});
    EXPECT_EQ(d["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(d["data"]["total_results"], 10);
    EXPECT_EQ(d["data"]["total_available_results"], p["num_reactions"]);
    EXPECT_EQ(d["data"]["pagination"]["results_per_page"], 50);
    for (const auto& r : d["data"]["reactions"]) {
        EXPECT_TRUE(r["reaction_type"].is_string());
        EXPECT_TRUE(r["created_time"].is_string());
        for (const char* k : {"name", "profile_url", "title", "connection_degree"}) {
            EXPECT_TRUE(r["actor"][k].is_string()) << k;
        }
        EXPECT_TRUE(r["actor"].contains("profile_picture"));
        std::string degree = r["actor"]["connection_degree"];
        EXPECT_TRUE(degree == "1st" || degree == "2nd" || degree == "3rd") << degree;
    }
    auto total = call("get_reactions", {{"post_url", url}, {"total_results", 150}});
    EXPECT_EQ(total["data"]["reactions"].size(), 150u);
    EXPECT_EQ(total["metadata"]["credits_consumed"], 15) << "1 credit per 10 results in total-results mode";
    auto pages = call("get_reactions", {{"post_url", url}, {"start_page", 2}, {"end_page", 3}, {"total_results", 5}});
    ASSERT_EQ(pages["data"]["reactions"].size(), 100u) << "page mode ignores total_results";
    EXPECT_EQ(pages["metadata"]["credits_consumed"], 2) << "1 credit per page fetched";
    for (std::size_t i = 0; i < 100; ++i) {
        EXPECT_EQ(pages["data"]["reactions"][i], total["data"]["reactions"][i + 50]) << i;
    }
    EXPECT_EQ(pages["data"]["pagination"]["start_page"], 2);
    EXPECT_EQ(pages["data"]["pagination"]["end_page"], 3);
    EXPECT_EQ(pages["data"]["pagination"]["pages_fetched"], 2);
    EXPECT_EQ(credits(), before - 1 - 15 - 2);
    // Pages past the end fetch nothing but the request still costs 1.
    auto past = call("get_reactions", {{"post_url", url}, {"start_page", 150}});
    EXPECT_EQ(past["data"]["total_results"], 0);
    EXPECT_EQ(past["data"]["pagination"]["pages_fetched"], 0);
    EXPECT_EQ(past["metadata"]["credits_consumed"], 1);
    expect_invalid("get_reactions", {{"post_url", url}, {"start_page", 0}}, "params.start_page");
    expect_invalid("get_reactions", {{"post_url", url}, {"total_results", 10001}}, "params.total_results");
}

// ---------------------------------------------------------------------------------------------
// comment, answer_comment, get_comments

TEST_F(SandboxContent, CommentsAndOneLevelThreads) {
    std::string word = unique_word();
    std::string url = call("create", {{"message", "Thread " + word}})["data"]["post_url"];
    auto before = credits();
    auto first = call("comment", {{"post_url", url}, {"message", "First! #one"}});
    EXPECT_EQ(first["metadata"]["credits_consumed"], 1);
    std::string c1 = first["data"]["comment_urn"];
    EXPECT_EQ(c1.rfind("urn:li:comment:(activity:", 0), 0u) << c1;
    auto answer = call("answer_comment", {{"post_url", url}, {"comment_urn", c1}, {"message", "Answer"}});
    EXPECT_EQ(answer["data"]["parent_comment_urn"], c1);
    // An answer to an answer joins the first comment's thread; post_url may be left out.
    auto deeper = call("answer_comment", {{"comment_urn", answer["data"]["comment_urn"]}, {"message", "Deeper"}});
    EXPECT_EQ(deeper["data"]["parent_comment_urn"], c1);
    EXPECT_EQ(deeper["data"]["answered_comment_urn"], answer["data"]["comment_urn"]);
    call("comment", {{"post_url", url}, {"message", "Second"}});
    EXPECT_EQ(credits(), before - 4);

    auto list = call("get_comments", {{"post_url", url}});
    EXPECT_EQ(list["metadata"]["credits_consumed"], 1);
    const json& d = list["data"];
    ASSERT_EQ(d["comments"].size(), 2u);
    EXPECT_EQ(d["total_available_results"], 2);
    EXPECT_EQ(d["total_comments"], 4);
    EXPECT_EQ(d["comments"][0]["comment_urn"], c1);
    EXPECT_EQ(d["comments"][0]["text"], "First! #one");
    EXPECT_EQ(d["comments"][0]["author"]["profile_url"], me()["network_url"]);
    ASSERT_EQ(d["comments"][0]["replies"].size(), 2u);
    EXPECT_EQ(d["comments"][0]["replies"][0]["text"], "Answer");
    EXPECT_EQ(d["comments"][0]["replies"][1]["text"], "Deeper");
    EXPECT_EQ(d["comments"][1]["text"], "Second");
    EXPECT_EQ(find_post(word)["num_comments"], 4);
    // Reacting to a comment.
    auto on_comment = call("react", {{"post_url", url}, {"comment_urn", c1}, {"reaction_type", "LOVE"}});
    EXPECT_EQ(on_comment["data"]["reaction_target"], "COMMENT");
    EXPECT_EQ(call("get_comments", {{"post_url", url}})["data"]["comments"][0]["num_reactions"], 1);
    EXPECT_EQ(find_post(word)["num_reactions"], 0) << "a reaction on a comment is not one on the post";

    std::string other = top_posts(1)[0]["post_url"];
    expect_invalid("comment", {{"post_url", url}}, "params.message");
    expect_invalid("comment", {{"post_url", url}, {"message", std::string(1251, 'x')}}, "params.message");
    expect_invalid("comment", {{"message", "x"}}, "params.post_url");
    expect_invalid("answer_comment", {{"post_url", other}, {"comment_urn", c1}, {"message", "x"}},
                   "params.comment_urn");
    expect_invalid("answer_comment", {{"post_url", url}, {"message", "x"}}, "params.comment_urn");
    expect_invalid("answer_comment", {{"post_url", url}, {"comment_urn", "comment-1"}, {"message", "x"}},
                   "params.comment_urn");
    expect_invalid("answer_comment", {{"post_url", url}, {"comment_urn", c1}}, "params.message");
}

TEST_F(SandboxContent, GetCommentsPagesOfSeededThreads) {
    json p = post_with(0, 25);
    std::string url = p["post_url"];
    auto all = call("get_comments", {{"post_url", url}, {"total_results", 100}});
    std::size_t threads = all["data"]["total_available_results"];
    ASSERT_GE(threads, 20u);
    EXPECT_EQ(all["data"]["comments"].size(), threads);
    EXPECT_EQ(all["metadata"]["credits_consumed"], (threads + 9) / 10);
    std::size_t with_replies = 0;
    for (std::size_t i = 0; i < threads; ++i) {
        const json& cm = all["data"]["comments"][i];
        if (i > 0) {
            EXPECT_GE(cm["created_at"].get<std::string>(),
                      all["data"]["comments"][i - 1]["created_at"].get<std::string>());
        }
        with_replies += cm["replies"].empty() ? 0 : 1;
        EXPECT_EQ(cm["num_replies"], cm["replies"].size());
    }
    EXPECT_GT(with_replies, 0u);
    auto page = call("get_comments", {{"post_url", url}, {"start_page", 2}});
    ASSERT_EQ(page["data"]["comments"].size(), 10u);
    EXPECT_EQ(page["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(page["data"]["comments"][0], all["data"]["comments"][10]);
    EXPECT_EQ(page["data"]["pagination"]["start_page"], 2);
}

// ---------------------------------------------------------------------------------------------
// repost, time_spent

TEST_F(SandboxContent, RepostPointsAtTheOriginal) {
    json p = post_with(0, 0);
    int reposts = p["num_reposts"];
    std::string word = unique_word();
    auto j = call("repost", {{"post_url", p["post_url"]}, {"message", "Worth reading " + word}});
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(j["data"]["reposted_from"]["post_urn"], p["post_urn"]);
    json mine = find_post(word);
    EXPECT_EQ(mine["reposted_from"]["post_urn"], p["post_urn"]);
    EXPECT_EQ(mine["author"]["profile_url"], me()["network_url"]);
    // A plain repost of the repost shares the original once more.
    auto again = call("repost", {{"post_url", j["data"]["post_url"]}});
    EXPECT_EQ(again["data"]["reposted_from"]["post_urn"], mine["post_urn"]) << "the repost has its own text";
    auto plain = call("repost", {{"post_url", p["post_url"]}});
    auto plain_again = call("repost", {{"post_url", plain["data"]["post_url"]}});
    EXPECT_EQ(plain_again["data"]["reposted_from"]["post_urn"], p["post_urn"]);
    auto top = call("search", {{"keyword", p["text"].get<std::string>().substr(0, 40)}, {"total_results", 50}});
    for (const auto& q : top["data"]["posts"]) {
        if (q["post_urn"] == p["post_urn"]) {
            EXPECT_EQ(q["num_reposts"], reposts + 3);
        }
    }
    expect_invalid("repost", {{"post_url", p["post_url"]}, {"message", 5}}, "params.message");
}

TEST_F(SandboxContent, TimeSpentAddsUp) {
    json p = post_with(0, 0);
    auto j = call("time_spent", {{"post_url", p["post_url"]}, {"duration_s", 30}});
    EXPECT_EQ(j["metadata"]["credits_consumed"], 1);
    EXPECT_EQ(j["data"]["duration_s"], 30);
    EXPECT_EQ(j["data"]["total_duration_s"], 30);
    EXPECT_EQ(call("time_spent", {{"post_url", p["post_url"]}, {"duration_s", 15}})["data"]["total_duration_s"], 45);
    EXPECT_EQ(call("time_spent", {{"post_url", p["post_url"]}})["data"]["duration_s"], 10) << "default";
    expect_invalid("time_spent", {{"post_url", p["post_url"]}, {"duration_s", 0}}, "params.duration_s");
    expect_invalid("time_spent", {{"post_url", p["post_url"]}, {"duration_s", 3601}}, "params.duration_s");
    expect_invalid("time_spent", {{"duration_s", 5}}, "params.post_url");
}

// ---------------------------------------------------------------------------------------------
// V1: profile reactions, post reactions

TEST_F(SandboxContent, V1ProfileReactionsPagesAndCursor) {
    // A person who reacted a lot: among the reactors of a viral post.
    json p = post_with(160, 0);
    auto reactors = call("get_reactions", {{"post_url", p["post_url"]}, {"total_results", 30}})["data"]["reactions"];
    json best;
    std::size_t most = 0;
    for (const auto& r : reactors) {
        auto j = v1("/v1/data/profile/reactions", {{"profile_url", r["actor"]["profile_url"]}, {"total_results", 100}});
        if (j["data"]["reactions"].size() > most) {
            most = j["data"]["reactions"].size();
            best = j;
        }
        if (most >= 25) break;
    }
    ASSERT_GE(most, 21u);
    const json& all = best["data"]["reactions"];
    std::string profile = best["data"]["profile_url"];
    EXPECT_EQ(best["status"], "success");
    EXPECT_EQ(best["data"]["total_results"], most);
    EXPECT_TRUE(best["data"]["entity_urn"].is_string());
    EXPECT_TRUE(best["data"]["profile_urn"].is_string());
    bool has_viral = false;
    for (const auto& r : all) {
        for (const char* k : {"reaction_id", "reaction_type", "reaction_target", "reaction_time"}) {
            EXPECT_TRUE(r[k].is_string()) << k;
        }
        EXPECT_EQ(r["reactor"]["profile_url"], profile);
        EXPECT_TRUE(r["post"]["urn"].is_string());
        EXPECT_TRUE(r["post"]["author"]["name"].is_string());
        EXPECT_EQ(r.contains("comment"), r["reaction_target"] == "COMMENT");
        has_viral = has_viral || r["post"]["urn"] == p["post_urn"];
    }
    EXPECT_TRUE(has_viral) << "the reaction seen on the post is listed for the profile";

    auto before = credits();
    auto pages = v1("/v1/data/profile/reactions", {{"profile_url", profile}, {"start_page", 2}, {"end_page", 3}});
    ASSERT_EQ(pages["data"]["reactions"].size(), std::min<std::size_t>(20, most - 10));
    EXPECT_EQ(pages["data"]["reactions"][0], all[10]);
    const json& pg = pages["data"]["pagination"];
    EXPECT_EQ(pg["start_page"], 2);
    EXPECT_EQ(pg["end_page"], 3);
    EXPECT_EQ(pg["results_per_page"], 10);
    EXPECT_EQ(credits(), before - 2) << "1 credit per 10 results";

    auto first = v1("/v1/data/profile/reactions", {{"profile_url", profile}});
    ASSERT_EQ(first["data"]["reactions"].size(), 10u);
    ASSERT_EQ(first["data"]["pagination"]["has_more"], true);
    std::string cursor = first["data"]["pagination"]["next_cursor"];
    ASSERT_FALSE(cursor.empty());
    auto next = v1("/v1/data/profile/reactions", {{"profile_url", profile}, {"cursor", cursor}, {"total_results", 5}});
    ASSERT_EQ(next["data"]["reactions"].size(), 5u);
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(next["data"]["reactions"][i], all[10 + i]);
    }
    EXPECT_EQ(next["data"]["pagination"]["start_page"], 2);

    std::string someone_else = people(1, 1)[0]["profile_url"];
    expect_v1_invalid("/v1/data/profile/reactions", json::object(), "profile_url is required");
    expect_v1_invalid("/v1/data/profile/reactions", {{"profile_url", "nope"}}, "profile_url");
    expect_v1_invalid("/v1/data/profile/reactions", {{"profile_url", profile}, {"proxy_country", "XX"}},
                      "proxy_country");
    expect_v1_invalid("/v1/data/profile/reactions", {{"profile_url", profile}, {"total_results", 0}},
                      "total_results must be a positive integer");
    expect_v1_invalid("/v1/data/profile/reactions", {{"profile_url", someone_else}, {"cursor", cursor}}, "cursor");
    expect_v1_invalid("/v1/data/profile/reactions", {{"profile_url", profile}, {"cursor", cursor}, {"start_page", 1}},
                      "cursor");
    EXPECT_EQ(v1("/v1/data/profile/reactions", {{"profile_url", profile}, {"proxy_country", "us"}})["status"],
              "success");
}

TEST_F(SandboxContent, V1ProfileReactionsOfTheAccountOwner) {
    std::string url = call("create", {{"message", "Mine " + unique_word()}})["data"]["post_url"];
    std::string cm = call("comment", {{"post_url", url}, {"message", "A comment"}})["data"]["comment_urn"];
    json target = post_with(0, 0);
    call("react", {{"post_url", target["post_url"]}, {"reaction_type", "INSIGHTFUL"}});
    call("react", {{"post_url", url}, {"comment_urn", cm}, {"reaction_type", "SUPPORT"}});
    auto j = v1("/v1/data/profile/reactions", {{"profile_url", me()["network_url"]}});
    const json& rs = j["data"]["reactions"];
    ASSERT_EQ(rs.size(), 2u);
    EXPECT_EQ(rs[0]["reaction_target"], "COMMENT");
    EXPECT_EQ(rs[0]["reaction_type"], "SUPPORT");
    EXPECT_EQ(rs[0]["comment"]["content"], "A comment");
    EXPECT_EQ(rs[1]["reaction_target"], "POST");
    EXPECT_EQ(rs[1]["reaction_type"], "INSIGHTFUL");
    EXPECT_EQ(rs[1]["post"]["urn"], target["post_urn"]);
    EXPECT_EQ(j["data"]["pagination"]["has_more"], false);
    EXPECT_EQ(j["data"]["pagination"]["next_cursor"], "");
}

TEST_F(SandboxContent, V1PostReactionsModesCreditsAndShapes) {
    json p = post_with(160, 0);
    std::string url = p["share_url"];
    auto before = credits();
    auto total =
        v1("/v1/data/post/reactions", {{"post_url", url}, {"login_token", "any-token"}, {"total_results", 25}});
    EXPECT_EQ(total["status"], "success");
    EXPECT_EQ(total["data"]["total_results"], 25);
    EXPECT_EQ(total["data"]["total_available_results"], p["num_reactions"]);
    EXPECT_EQ(total["data"]["pagination"]["results_per_page"], 50);
    EXPECT_EQ(credits(), before - 3) << "total-results mode: 1 credit per 10 results";
    before = credits();
    auto pages =
        v1("/v1/data/post/reactions",
           {{"post_url", url}, {"login_token", "any-token"}, {"start_page", 1}, {"end_page", 3}, {"total_results", 5}});
    ASSERT_EQ(pages["data"]["reactions"].size(), 150u) << "page mode ignores total_results";
    EXPECT_EQ(pages["data"]["pagination"]["pages_fetched"], 3);
    EXPECT_EQ(credits(), before - 3) << "page mode: 1 credit per page";
    for (std::size_t i = 0; i < 25; ++i) {
        EXPECT_EQ(pages["data"]["reactions"][i], total["data"]["reactions"][i]);
    }
    // The same reactions as the V2 action, seen from the account when its login token is given.
    auto v2 = call("get_reactions", {{"post_url", url}, {"total_results", 25}});
    auto as_me =
        v1("/v1/data/post/reactions",
           {{"post_url", url}, {"login_token", "V1PostReactionsModesCreditsAndShapes"}, {"total_results", 25}});
    EXPECT_EQ(as_me["data"]["reactions"], v2["data"]["reactions"]);

    // The flat sample shape, through the setting.
    ASSERT_EQ(ctl->post("/control/settings", {{"post_reaction_shape", "sample"}}).status, 200);
    auto flat = v1("/v1/data/post/reactions", {{"post_url", url}, {"login_token", "t"}, {"total_results", 3}});
    ASSERT_EQ(ctl->post("/control/settings", {{"post_reaction_shape", "documented"}}).status, 200);
    ASSERT_EQ(flat["data"]["reactions"].size(), 3u);
    for (const auto& r : flat["data"]["reactions"]) {
        for (const char* k : {"type", "name", "subtitle", "profile_url", "actor_urn"}) {
            EXPECT_TRUE(r[k].is_string()) << k;
        }
        EXPECT_FALSE(r.contains("actor"));
    }
    EXPECT_EQ(flat["data"]["reactions"][0]["profile_url"], total["data"]["reactions"][0]["actor"]["profile_url"]);
    EXPECT_EQ(ctl->post("/control/settings", {{"post_reaction_shape", "round"}}).status, 400);

    expect_v1_invalid("/v1/data/post/reactions", {{"post_url", url}}, "login_token is required");
    expect_v1_invalid("/v1/data/post/reactions", {{"login_token", "t"}}, "post_url is required");
    expect_v1_invalid("/v1/data/post/reactions",
                      {{"post_url", "https://www.network.example/in/x"}, {"login_token", "t"}}, "post_url");
    expect_v1_invalid("/v1/data/post/reactions", {{"post_url", url}, {"login_token", "t"}, {"country", "France"}},
                      "country");
    expect_v1_invalid("/v1/data/post/reactions", {{"post_url", url}, {"login_token", "t"}, {"total_results", -1}},
                      "total_results must be a positive integer");
    expect_v1_invalid("/v1/data/post/reactions",
                      {{"post_url", url}, {"login_token", "t"}, {"start_page", 4}, {"end_page", 2}}, "end_page");
}

} // namespace
