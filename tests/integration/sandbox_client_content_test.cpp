// The outreach client against the real sandbox: /v2/content (posts, company posts and their
// admin rule, search, feed, likes, reactions, comments and answers, reposts, time spent, the
// reactions and comments lists), /v2/recruiter (with and without a seat), the e-mail actions
// and the V1 reaction endpoints. For each call: the typed result parses, errors map to the
// documented disposition, and what the API charged (metadata.credits_consumed, or the balance
// for V1 calls) is at most the cost model's upper-bound estimate for the params as sent.
//
// Calls are never co_awaited here: fixture::run drives each awaitable with named params that
// outlive it (GCC 12 double-destroys temporaries inside co_await expressions).
#include "tests/integration/sandbox_client_common.hpp"

#include "engine/outreach/detail/request.hpp"

#include <set>

using namespace orch::test;
using namespace orch::outreach;

namespace {

struct SandboxClientContent : ::testing::Test {
    // One sandbox for the whole suite; each test logs in its own accounts.
    static void SetUpTestSuite() { fx = new client_fixture({"--world-people", "3000"}); }
    static void TearDownTestSuite() {
        delete fx;
        fx = nullptr;
    }

    static std::string login_messaging(const std::string& token) {
        login_params p;
        p.platform = platform::messaging;
        p.country = "FR";
        p.login_token = token;
        auto r = fx->run(fx->api->login(p));
        if (!r) {
            throw std::runtime_error(describe(r.error()));
        }
        return r->account_id;
    }

    static std::int64_t credits() {
        auto c = fx->run(fx->api->get_credits());
        EXPECT_TRUE(c) << describe(c.error());
        return c ? c->credits : -1;
    }

    // A V2 success: the metadata names the action, the charge is `expected` (the README's rule),
    // is within the cost model's estimate, and is what left the balance.
    template <typename R>
    static void expect_charge(const R& r, std::string_view action, const credit_estimate& est, std::int64_t before,
                              std::int64_t expected) {
        EXPECT_EQ(r.meta.action, action);
        ASSERT_TRUE(r.meta.credits_consumed) << action << ": no credits_consumed";
        const std::int64_t charged = *r.meta.credits_consumed;
        EXPECT_EQ(charged, expected) << action;
        EXPECT_LE(charged, est.credits) << action << ": charge above the cost model's upper bound (" << est.rule
                                        << ")";
        EXPECT_EQ(credits(), before - charged) << action << ": metadata differs from the balance change";
    }

    // An API error as the client reports it; nothing was charged.
    static void expect_api_error(const error& e, const std::string& code, int status, disposition what_to_do,
                                 std::int64_t before, const std::string& message_part = {}) {
        EXPECT_EQ(e.kind, error_kind::api_error) << describe(e);
        EXPECT_EQ(e.code, code) << describe(e);
        EXPECT_EQ(e.http_status, status) << describe(e);
        EXPECT_EQ(e.what_to_do, what_to_do) << describe(e);
        EXPECT_FALSE(e.may_have_taken_effect) << describe(e);
        EXPECT_FALSE(e.retryable()) << describe(e);
        if (!message_part.empty()) {
            EXPECT_NE(e.message.find(message_part), std::string::npos) << describe(e);
        }
        EXPECT_EQ(credits(), before) << "errors cost 0: " << describe(e);
    }

    // The most engaged seeded posts (relevance order) with enough reactions and comment threads.
    static json post_with(const std::string& account, std::size_t min_reactions, std::size_t min_comments) {
        content_search_params p;
        p.keyword = "#";
        p.total_results = 40;
        auto r = fx->run(fx->api->search_posts(account, p));
        EXPECT_TRUE(r) << describe(r.error());
        if (r) {
            for (const auto& post : r->raw["posts"]) {
                if (post["num_reactions"].get<std::size_t>() >= min_reactions &&
                    post["num_comments"].get<std::size_t>() >= min_comments) {
                    return post;
                }
            }
        }
        ADD_FAILURE() << "no post with " << min_reactions << " reactions and " << min_comments << " comments";
        return json::object();
    }

    static client_fixture* fx;
};

client_fixture* SandboxClientContent::fx = nullptr;

// ---------------------------------------------------------------------------------------------
// create, create_company (FORBIDDEN), search

TEST_F(SandboxClientContent, CreateCreateCompanyAndForbiddenPages) {
    const std::string account = fx->login("client-content-create");
    auto me = fx->run(fx->api->get_me(account));
    ASSERT_TRUE(me) << describe(me.error());
    ASSERT_TRUE(me->raw["experience"].is_array() && !me->raw["experience"].empty());
    const std::string own = me->raw["experience"][0].value("company_url", "");
    ASSERT_FALSE(own.empty());

    create_post_params post;
    post.message = "Client post zqclientcreate1 #ClientTest";
    auto est = estimate_v2("content", "create", detail::to_json(post));
    auto before = credits();
    auto made = fx->run(fx->api->create_post(account, post));
    ASSERT_TRUE(made) << describe(made.error());
    expect_charge(*made, "create", est, before, 1);
    EXPECT_EQ(made->meta.account_id, account);
    EXPECT_EQ(made->post_urn.rfind("urn:li:activity:", 0), 0u) << made->post_urn;
    EXPECT_EQ(made->post_urn.size(), 16u + 19u) << "19-digit activity ids";
    EXPECT_EQ(made->post_url, "https://www.network.example/feed/update/" + made->post_urn + "/");

    // search finds it (and charges 1 per 10 returned).
    content_search_params find;
    find.keyword = "zqclientcreate1";
    est = estimate_v2("content", "search", detail::to_json(find));
    before = credits();
    auto found = fx->run(fx->api->search_posts(account, find));
    ASSERT_TRUE(found) << describe(found.error());
    expect_charge(*found, "search", est, before, 1);
    ASSERT_EQ(found->raw["posts"].size(), 1u);
    EXPECT_EQ(found->raw["posts"][0]["post_urn"], made->post_urn);
    EXPECT_EQ(found->raw["posts"][0]["author"]["type"], "person");

    // A post on the page of the owner's company.
    create_company_post_params company_post;
    company_post.company_url = own;
    company_post.message = "Company news zqclientcreate2";
    est = estimate_v2("content", "create_company", detail::to_json(company_post));
    EXPECT_EQ(est.rule, "R7");
    before = credits();
    auto page_post = fx->run(fx->api->create_company_post(account, company_post));
    ASSERT_TRUE(page_post) << describe(page_post.error());
    expect_charge(*page_post, "create_company", est, before, 1);
    EXPECT_EQ(page_post->post_urn.rfind("urn:li:activity:", 0), 0u) << page_post->post_urn;
    content_search_params find_company;
    find_company.keyword = "zqclientcreate2";
    auto found_company = fx->run(fx->api->search_posts(account, find_company));
    ASSERT_TRUE(found_company) << describe(found_company.error());
    ASSERT_EQ(found_company->raw["posts"].size(), 1u);
    EXPECT_EQ(found_company->raw["posts"][0]["post_urn"], page_post->post_urn);
    EXPECT_EQ(found_company->raw["posts"][0]["author"]["type"], "company");
    EXPECT_EQ(found_company->raw["posts"][0]["author"]["company_url"], own);

    // Most other pages are not administered by the account: 403 FORBIDDEN -> give_up, nothing charged.
    search_companies_params companies;
    companies.total_results = 30;
    auto list = fx->run(fx->api->search_companies(account, companies));
    ASSERT_TRUE(list) << describe(list.error());
    bool refused = false;
    for (const auto& co : list->results) {
        if (co.company_url.empty() || co.company_url == own) {
            continue;
        }
        create_company_post_params other;
        other.company_url = co.company_url;
        other.message = "Not my page";
        before = credits();
        auto r = fx->run(fx->api->create_company_post(account, other));
        if (!r) {
            expect_api_error(r.error(), "FORBIDDEN", 403, disposition::give_up, before);
            refused = true;
            break;
        }
        EXPECT_EQ(r->meta.credits_consumed, 1) << "an administered page: " << co.company_url;
    }
    EXPECT_TRUE(refused) << "no page refused among " << list->results.size();

    // INVALID_PARAMS: create without text or file.
    create_post_params empty;
    before = credits();
    auto bad = fx->run(fx->api->create_post(account, empty));
    ASSERT_FALSE(bad);
    expect_api_error(bad.error(), "INVALID_PARAMS", 400, disposition::give_up, before);
}

// ---------------------------------------------------------------------------------------------
// get_feed: the charge follows `count` (1 per 10 returned), and so must the estimate.

TEST_F(SandboxClientContent, FeedChargeStaysWithinTheCountBasedEstimate) {
    const std::string account = fx->login("client-content-feed");
    feed_params big;
    big.count = 100;
    const credit_estimate est = estimate_v2("content", "get_feed", detail::to_json(big));
    EXPECT_EQ(est.credits, 10);
    auto before = credits();
    auto feed = fx->run(fx->api->get_feed(account, big));
    ASSERT_TRUE(feed) << describe(feed.error());
    const json posts = feed->raw["posts"];
    ASSERT_TRUE(posts.is_array());
    const auto returned = static_cast<std::int64_t>(posts.size());
    EXPECT_EQ(feed->raw["total_results"], returned);
    // With more than 10 posts the charge exceeds 1, the old (total_results-based) estimate.
    EXPECT_GT(returned, 10) << "the feed should be long enough to exercise the bug";
    EXPECT_LE(returned, 100);
    expect_charge(*feed, "get_feed", est, before, cost::per_ten(returned));

    // A short page and its cursor: the next page continues the same newest-first list.
    feed_params small;
    small.count = 5;
    const credit_estimate small_est = estimate_v2("content", "get_feed", detail::to_json(small));
    before = credits();
    auto first = fx->run(fx->api->get_feed(account, small));
    ASSERT_TRUE(first) << describe(first.error());
    expect_charge(*first, "get_feed", small_est, before, 1);
    ASSERT_EQ(first->raw["posts"].size(), 5u);
    ASSERT_TRUE(first->raw["next_cursor"].is_string());
    feed_params next;
    next.count = 5;
    next.extra = json{{"cursor", first->raw["next_cursor"]}};
    auto second = fx->run(fx->api->get_feed(account, next));
    ASSERT_TRUE(second) << describe(second.error());
    ASSERT_FALSE(second->raw["posts"].empty());
    if (posts.size() > 5) {
        EXPECT_EQ(second->raw["posts"][0]["post_urn"], posts[5]["post_urn"]);
    }

    feed_params too_many;
    too_many.count = 101;
    before = credits();
    auto refused = fx->run(fx->api->get_feed(account, too_many));
    ASSERT_FALSE(refused);
    expect_api_error(refused.error(), "INVALID_PARAMS", 400, disposition::give_up, before, "params.count");
    feed_params forged;
    forged.extra = json{{"cursor", "not-a-cursor"}};
    auto bad_cursor = fx->run(fx->api->get_feed(account, forged));
    ASSERT_FALSE(bad_cursor);
    expect_api_error(bad_cursor.error(), "INVALID_PARAMS", 400, disposition::give_up, before, "params.cursor");
}

// ---------------------------------------------------------------------------------------------
// like, react, get_reactions (both modes), comment, answer_comment, get_comments, repost, time_spent

TEST_F(SandboxClientContent, EngagementOnASeededPost) {
    const std::string account = fx->login("client-content-engage");
    auto me = fx->run(fx->api->get_me(account));
    ASSERT_TRUE(me) << describe(me.error());
    const std::string my_url = me->profile.profile_url;
    ASSERT_FALSE(my_url.empty());
    const json p = post_with(account, 120, 20);
    ASSERT_TRUE(p.contains("post_url"));
    const std::string url = p["post_url"];
    const auto reactions_before = p["num_reactions"].get<std::int64_t>();

    post_target_params like;
    like.post_url = url;
    auto est = estimate_v2("content", "like", detail::to_json(like));
    auto before = credits();
    auto liked = fx->run(fx->api->like_post(account, like));
    ASSERT_TRUE(liked) << describe(liked.error());
    expect_charge(*liked, "like", est, before, 1);
    EXPECT_EQ(liked->raw["reaction_type"], "LIKE");
    EXPECT_EQ(liked->raw["post_urn"], p["post_urn"]);

    react_params react;
    react.post_url = p["share_url"].get<std::string>();
    react.reaction_type = "CELEBRATE";
    est = estimate_v2("content", "react", detail::to_json(react));
    before = credits();
    auto reacted = fx->run(fx->api->react_to_post(account, react));
    ASSERT_TRUE(reacted) << describe(reacted.error());
    expect_charge(*reacted, "react", est, before, 1);
    EXPECT_EQ(reacted->raw["reaction_type"], "CELEBRATE");

    // The newest reaction is ours, replaced (one per member), in the typed shape.
    post_list_params newest;
    newest.post_url = url;
    newest.total_results = 1;
    est = estimate_v2("content", "get_reactions", detail::to_json(newest));
    before = credits();
    auto top = fx->run(fx->api->get_post_reactions(account, newest));
    ASSERT_TRUE(top) << describe(top.error());
    expect_charge(*top, "get_reactions", est, before, 1);
    ASSERT_EQ(top->reactions.size(), 1u);
    EXPECT_EQ(top->total_results, 1);
    EXPECT_EQ(top->total_available_results, reactions_before + 1);
    EXPECT_EQ(top->reactions[0].reaction_type, "CELEBRATE");
    EXPECT_EQ(top->reactions[0].profile_url, my_url);

    // Total-results mode: 1 per 10 returned.
    post_list_params many;
    many.post_url = url;
    many.total_results = 115;
    est = estimate_v2("content", "get_reactions", detail::to_json(many));
    EXPECT_EQ(est.credits, 12);
    before = credits();
    auto total = fx->run(fx->api->get_post_reactions(account, many));
    ASSERT_TRUE(total) << describe(total.error());
    ASSERT_EQ(total->reactions.size(), 115u);
    EXPECT_EQ(total->total_results, 115);
    expect_charge(*total, "get_reactions", est, before, 12);
    for (const auto& r : total->reactions) {
        EXPECT_FALSE(r.reaction_type.empty());
        EXPECT_FALSE(r.profile_url.empty());
    }

    // Page mode (pages of 50): 1 per page, total_results ignored.
    post_list_params pages;
    pages.post_url = url;
    pages.start_page = 1;
    pages.end_page = 2;
    pages.total_results = 3;
    est = estimate_v2("content", "get_reactions", detail::to_json(pages));
    EXPECT_EQ(est.rule, "R6");
    EXPECT_EQ(est.credits, 2);
    before = credits();
    auto paged = fx->run(fx->api->get_post_reactions(account, pages));
    ASSERT_TRUE(paged) << describe(paged.error());
    ASSERT_EQ(paged->reactions.size(), 100u);
    EXPECT_EQ(paged->pagination.results_per_page, 50);
    EXPECT_EQ(paged->pagination.pages_fetched, 2);
    expect_charge(*paged, "get_reactions", est, before, 2);
    EXPECT_EQ(paged->reactions[5].profile_url, total->reactions[5].profile_url);

    // A comment and an answer in its thread.
    comment_params comment;
    comment.post_url = url;
    comment.message = "Client comment zqclientthread";
    est = estimate_v2("content", "comment", detail::to_json(comment));
    before = credits();
    auto commented = fx->run(fx->api->comment_post(account, comment));
    ASSERT_TRUE(commented) << describe(commented.error());
    expect_charge(*commented, "comment", est, before, 1);
    ASSERT_TRUE(commented->raw["comment_urn"].is_string());
    const std::string c1 = commented->raw["comment_urn"];
    EXPECT_EQ(c1.rfind("urn:li:comment:(activity:", 0), 0u) << c1;
    EXPECT_EQ(commented->raw["post_urn"], p["post_urn"]);

    answer_comment_params answer;
    answer.post_url = url;
    answer.comment_urn = c1;
    answer.message = "Client answer";
    est = estimate_v2("content", "answer_comment", detail::to_json(answer));
    before = credits();
    auto answered = fx->run(fx->api->answer_comment(account, answer));
    ASSERT_TRUE(answered) << describe(answered.error());
    expect_charge(*answered, "answer_comment", est, before, 1);
    EXPECT_EQ(answered->raw["parent_comment_urn"], c1);

    // get_comments: threads oldest first, ours last, with its reply.
    post_list_params comments;
    comments.post_url = url;
    comments.total_results = 100;
    est = estimate_v2("content", "get_comments", detail::to_json(comments));
    EXPECT_EQ(est.credits, 10);
    before = credits();
    auto threads = fx->run(fx->api->get_comments(account, comments));
    ASSERT_TRUE(threads) << describe(threads.error());
    const json& list = threads->raw["comments"];
    ASSERT_TRUE(list.is_array());
    ASSERT_GE(list.size(), 21u);
    EXPECT_EQ(threads->raw["total_results"], list.size());
    expect_charge(*threads, "get_comments", est, before, cost::per_ten(static_cast<std::int64_t>(list.size())));
    const json& mine = list.back();
    EXPECT_EQ(mine["comment_urn"], c1);
    EXPECT_EQ(mine["text"], "Client comment zqclientthread");
    ASSERT_EQ(mine["replies"].size(), 1u);
    EXPECT_EQ(mine["replies"][0]["text"], "Client answer");

    post_list_params comment_pages;
    comment_pages.post_url = url;
    comment_pages.start_page = 1;
    comment_pages.end_page = 2;
    est = estimate_v2("content", "get_comments", detail::to_json(comment_pages));
    EXPECT_EQ(est.credits, 2);
    before = credits();
    auto two_pages = fx->run(fx->api->get_comments(account, comment_pages));
    ASSERT_TRUE(two_pages) << describe(two_pages.error());
    EXPECT_EQ(two_pages->raw["comments"].size(), 20u);
    expect_charge(*two_pages, "get_comments", est, before, 2);

    // repost: a new post pointing at the original.
    comment_params share;
    share.post_url = url;
    share.message = "Worth reading zqclientrepost";
    est = estimate_v2("content", "repost", detail::to_json(share));
    before = credits();
    auto reposted = fx->run(fx->api->repost(account, share));
    ASSERT_TRUE(reposted) << describe(reposted.error());
    expect_charge(*reposted, "repost", est, before, 1);
    EXPECT_EQ(reposted->post_urn.rfind("urn:li:activity:", 0), 0u) << reposted->post_urn;
    EXPECT_NE(reposted->post_urn, p["post_urn"].get<std::string>());
    EXPECT_EQ(reposted->raw["reposted_from"]["post_urn"], p["post_urn"]);

    time_spent_params spent;
    spent.post_url = url;
    spent.duration_s = 30;
    est = estimate_v2("content", "time_spent", detail::to_json(spent));
    before = credits();
    auto timed = fx->run(fx->api->time_spent(account, spent));
    ASSERT_TRUE(timed) << describe(timed.error());
    expect_charge(*timed, "time_spent", est, before, 1);
    EXPECT_EQ(timed->raw["duration_s"], 30);

    // INVALID_PARAMS -> give_up, nothing charged (also for side-effecting calls).
    post_target_params missing;
    missing.post_url = "urn:li:activity:7000000000000000001";
    before = credits();
    auto no_post = fx->run(fx->api->like_post(account, missing));
    ASSERT_FALSE(no_post);
    expect_api_error(no_post.error(), "INVALID_PARAMS", 400, disposition::give_up, before, "post not found");
    react_params angry;
    angry.post_url = url;
    angry.reaction_type = "ANGRY";
    auto bad_type = fx->run(fx->api->react_to_post(account, angry));
    ASSERT_FALSE(bad_type);
    expect_api_error(bad_type.error(), "INVALID_PARAMS", 400, disposition::give_up, before, "params.reaction_type");
}

TEST_F(SandboxClientContent, MessagingAccountGetsChannelErrorOnContent) {
    const std::string reader = fx->login("client-content-reader");
    const json p = post_with(reader, 0, 0);
    ASSERT_TRUE(p.contains("post_url"));
    const std::string wa = login_messaging("wa-client-content");
    post_target_params like;
    like.post_url = p["post_url"].get<std::string>();
    auto before = credits();
    auto r = fx->run(fx->api->like_post(wa, like));
    ASSERT_FALSE(r);
    expect_api_error(r.error(), "CHANNEL_ERROR", 422, disposition::give_up, before);
    feed_params feed;
    auto f = fx->run(fx->api->get_feed(wa, feed));
    ASSERT_FALSE(f);
    expect_api_error(f.error(), "CHANNEL_ERROR", 422, disposition::give_up, before);
}

// ---------------------------------------------------------------------------------------------
// V1 reaction endpoints (no metadata: the charge is read from the balance)

TEST_F(SandboxClientContent, V1PostAndProfileReactions) {
    const std::string account = fx->login("client-content-v1");
    const json p = post_with(account, 120, 0);
    ASSERT_TRUE(p.contains("share_url"));

    post_reactions_params total;
    total.post_url = p["share_url"].get<std::string>();
    total.login_token = "any-token";
    total.total_results = 25;
    auto est = estimate(total);
    EXPECT_EQ(est.credits, 3);
    auto before = credits();
    auto by_total = fx->run(fx->api->post_reactions(total));
    ASSERT_TRUE(by_total) << describe(by_total.error());
    ASSERT_EQ(by_total->reactions.size(), 25u);
    EXPECT_EQ(by_total->total_results, 25);
    EXPECT_EQ(by_total->total_available_results, p["num_reactions"].get<std::int64_t>());
    EXPECT_EQ(by_total->pagination.results_per_page, 50);
    auto charged = before - credits();
    EXPECT_EQ(charged, 3);
    EXPECT_LE(charged, est.credits);

    post_reactions_params pages;
    pages.post_url = p["post_url"].get<std::string>();
    pages.login_token = "any-token";
    pages.start_page = 1;
    pages.end_page = 2;
    pages.total_results = 5; // ignored in page mode
    est = estimate(pages);
    EXPECT_EQ(est.rule, "R6");
    before = credits();
    auto by_page = fx->run(fx->api->post_reactions(pages));
    ASSERT_TRUE(by_page) << describe(by_page.error());
    ASSERT_EQ(by_page->reactions.size(), 100u);
    EXPECT_EQ(by_page->pagination.pages_fetched, 2);
    charged = before - credits();
    EXPECT_EQ(charged, 2);
    EXPECT_LE(charged, est.credits);
    EXPECT_EQ(by_page->reactions[0].profile_url, by_total->reactions[0].profile_url);

    // The reactions of one of the reactors.
    const std::string reactor = by_total->reactions[0].profile_url;
    ASSERT_FALSE(reactor.empty());
    profile_reactions_params of;
    of.profile_url = reactor;
    of.total_results = 100;
    est = estimate(of);
    EXPECT_EQ(est.credits, 10);
    before = credits();
    auto theirs = fx->run(fx->api->profile_reactions(of));
    ASSERT_TRUE(theirs) << describe(theirs.error());
    ASSERT_FALSE(theirs->reactions.empty()) << "the reactor reacted at least to this post";
    EXPECT_EQ(theirs->total_results, static_cast<std::int64_t>(theirs->reactions.size()));
    bool this_post = false;
    for (const auto& r : theirs->reactions) {
        EXPECT_FALSE(r.reaction_type.empty());
        this_post = this_post || r.post_urn == p["post_urn"].get<std::string>();
    }
    EXPECT_TRUE(this_post) << "the reaction to the post should be among the reactor's";
    charged = before - credits();
    EXPECT_EQ(charged, cost::per_ten(static_cast<std::int64_t>(theirs->reactions.size())));
    EXPECT_LE(charged, est.credits);

    // V1 errors come as {status: "error"} with HTTP 200: v1_error, give_up, nothing charged.
    post_reactions_params no_token;
    no_token.post_url = p["post_url"].get<std::string>();
    before = credits();
    auto refused = fx->run(fx->api->post_reactions(no_token));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, error_kind::v1_error) << describe(refused.error());
    EXPECT_EQ(refused.error().code, "INVALID_PARAMS") << describe(refused.error());
    EXPECT_EQ(refused.error().http_status, 200);
    EXPECT_EQ(refused.error().what_to_do, disposition::give_up);
    EXPECT_FALSE(refused.error().may_have_taken_effect);
    profile_reactions_params bad_country;
    bad_country.profile_url = reactor;
    bad_country.proxy_country = "XX";
    auto refused_country = fx->run(fx->api->profile_reactions(bad_country));
    ASSERT_FALSE(refused_country);
    EXPECT_EQ(refused_country.error().kind, error_kind::v1_error) << describe(refused_country.error());
    EXPECT_EQ(refused_country.error().what_to_do, disposition::give_up) << describe(refused_country.error());
    EXPECT_EQ(credits(), before);
}

// ---------------------------------------------------------------------------------------------
// /v2/recruiter

TEST_F(SandboxClientContent, RecruiterWithASeat) {
    const std::string seat = fx->login("Recruiter-client-content");
    recruiter_params all;
    auto est = estimate_v2("recruiter", "get_posts", detail::to_json(all));
    auto before = credits();
    auto posts = fx->run(fx->api->recruiter_get_posts(seat, all));
    ASSERT_TRUE(posts) << describe(posts.error());
    expect_charge(*posts, "get_posts", est, before, 1);
    const json jobs = posts->raw["posts"];
    ASSERT_EQ(jobs.size(), 3u) << "two OPEN and one CLOSED seeded postings";
    json open_job;
    for (const auto& j : jobs) {
        if (j["state"] == "OPEN" && open_job.is_null()) {
            open_job = j;
        }
    }
    ASSERT_TRUE(open_job.is_object());
    const std::string job_id = open_job["job_id"];

    recruiter_params two;
    two.extra = json{{"count", 2}};
    auto page = fx->run(fx->api->recruiter_get_posts(seat, two));
    ASSERT_TRUE(page) << describe(page.error());
    EXPECT_EQ(page->raw["posts"].size(), 2u);

    recruiter_params candidates;
    candidates.job_id = job_id;
    candidates.extra = json{{"count", 100}};
    est = estimate_v2("recruiter", "get_candidates", detail::to_json(candidates));
    EXPECT_EQ(est.credits, 10);
    before = credits();
    auto applied = fx->run(fx->api->recruiter_get_candidates(seat, candidates));
    ASSERT_TRUE(applied) << describe(applied.error());
    const json list = applied->raw["candidates"];
    ASSERT_GE(list.size(), 5u);
    ASSERT_LE(list.size(), 25u);
    EXPECT_EQ(static_cast<std::size_t>(open_job["applicants_count"].get<int>()), list.size());
    expect_charge(*applied, "get_candidates", est, before, cost::per_ten(static_cast<std::int64_t>(list.size())));
    std::set<std::string> applicants;
    for (const auto& c : list) {
        applicants.insert(c["profile_url"].get<std::string>());
    }

    recruiter_params cv;
    cv.profile_url = list[0]["profile_url"].get<std::string>();
    cv.job_id = job_id;
    est = estimate_v2("recruiter", "get_cv", detail::to_json(cv));
    before = credits();
    auto got_cv = fx->run(fx->api->recruiter_get_cv(seat, cv));
    ASSERT_TRUE(got_cv) << describe(got_cv.error());
    expect_charge(*got_cv, "get_cv", est, before, 1);
    EXPECT_EQ(got_cv->raw["job_id"], job_id);
    EXPECT_TRUE(got_cv->raw["cv"]["filename"].is_string());
    EXPECT_TRUE(got_cv->raw["cv"]["url"].is_string());
    EXPECT_TRUE(got_cv->raw["resume"].is_object());

    // Someone who did not apply: INVALID_PARAMS "no application".
    std::string stranger;
    for (const auto& url : fx->people(0, 50)) {
        if (stranger.empty() && !applicants.contains(url)) {
            stranger = url;
        }
    }
    ASSERT_FALSE(stranger.empty());
    recruiter_params no_cv;
    no_cv.profile_url = stranger;
    no_cv.job_id = job_id;
    before = credits();
    auto refused_cv = fx->run(fx->api->recruiter_get_cv(seat, no_cv));
    ASSERT_FALSE(refused_cv);
    expect_api_error(refused_cv.error(), "INVALID_PARAMS", 400, disposition::give_up, before, "no application");

    publish_job_params job;
    job.title = "Client Engineer";
    job.description = "Build the client.";
    job.location = "Lyon, France";
    est = estimate_v2("recruiter", "publish_job", detail::to_json(job));
    before = credits();
    auto published = fx->run(fx->api->recruiter_publish_job(seat, job));
    ASSERT_TRUE(published) << describe(published.error());
    expect_charge(*published, "publish_job", est, before, 1);
    EXPECT_EQ(published->raw["state"], "OPEN");
    EXPECT_EQ(published->raw["title"], "Client Engineer");
    ASSERT_TRUE(published->raw["job_id"].is_string());
    const std::string new_id = published->raw["job_id"];

    recruiter_params close;
    close.job_id = new_id;
    est = estimate_v2("recruiter", "close_job", detail::to_json(close));
    before = credits();
    auto closed = fx->run(fx->api->recruiter_close_job(seat, close));
    ASSERT_TRUE(closed) << describe(closed.error());
    expect_charge(*closed, "close_job", est, before, 1);
    EXPECT_EQ(closed->raw["state"], "CLOSED");
    auto again = fx->run(fx->api->recruiter_close_job(seat, close));
    ASSERT_TRUE(again) << "closing a closed job is idempotent: " << describe(again.error());
    EXPECT_EQ(again->raw["state"], "CLOSED");
    ASSERT_TRUE(again->meta.credits_consumed);
    EXPECT_LE(*again->meta.credits_consumed, est.credits);

    recruiter_params unknown;
    unknown.job_id = "999";
    before = credits();
    auto not_found = fx->run(fx->api->recruiter_close_job(seat, unknown));
    ASSERT_FALSE(not_found);
    expect_api_error(not_found.error(), "INVALID_PARAMS", 400, disposition::give_up, before, "job not found");
}

TEST_F(SandboxClientContent, RecruiterWithoutASeatGetsChannelError) {
    const std::string seat = fx->login("recruiter-client-seat-holder");
    const std::string plain = fx->login("plain-client-content");
    const std::string wa = login_messaging("recruiter-wa-client");
    recruiter_params all;
    auto posts = fx->run(fx->api->recruiter_get_posts(seat, all));
    ASSERT_TRUE(posts) << describe(posts.error());
    const std::string job_id = posts->raw["posts"][0]["job_id"];
    recruiter_params by_job;
    by_job.job_id = job_id;
    auto applied = fx->run(fx->api->recruiter_get_candidates(seat, by_job));
    ASSERT_TRUE(applied) << describe(applied.error());
    ASSERT_FALSE(applied->raw["candidates"].empty());
    recruiter_params cv;
    cv.profile_url = applied->raw["candidates"][0]["profile_url"].get<std::string>();
    publish_job_params job;
    job.title = "Engineer";
    job.description = "Build things";

    for (const std::string& account : {plain, wa}) {
        SCOPED_TRACE(account);
        auto before = credits();
        auto a = fx->run(fx->api->recruiter_get_posts(account, all));
        ASSERT_FALSE(a);
        expect_api_error(a.error(), "CHANNEL_ERROR", 422, disposition::give_up, before, "recruiter seat");
        auto b = fx->run(fx->api->recruiter_get_candidates(account, by_job));
        ASSERT_FALSE(b);
        expect_api_error(b.error(), "CHANNEL_ERROR", 422, disposition::give_up, before, "recruiter seat");
        auto c = fx->run(fx->api->recruiter_get_cv(account, cv));
        ASSERT_FALSE(c);
        expect_api_error(c.error(), "CHANNEL_ERROR", 422, disposition::give_up, before, "recruiter seat");
        auto d = fx->run(fx->api->recruiter_publish_job(account, job));
        ASSERT_FALSE(d);
        expect_api_error(d.error(), "CHANNEL_ERROR", 422, disposition::give_up, before, "recruiter seat");
        auto e = fx->run(fx->api->recruiter_close_job(account, by_job));
        ASSERT_FALSE(e);
        expect_api_error(e.error(), "CHANNEL_ERROR", 422, disposition::give_up, before, "recruiter seat");
    }
    // The refused close changed nothing for the seat holder.
    auto after = fx->run(fx->api->recruiter_get_posts(seat, all));
    ASSERT_TRUE(after) << describe(after.error());
    EXPECT_EQ(after->raw["posts"][0], posts->raw["posts"][0]);
}

// ---------------------------------------------------------------------------------------------
// E-mail: find, reverse, validate (1 credit each, found or not)

TEST_F(SandboxClientContent, EmailFindReverseValidate) {
    const std::string account = fx->login("client-content-mail");
    auto person = fx->control.get("/control/people?offset=3&limit=1").body_json()["people"][0];
    const std::string profile_url = person["profile_url"];

    find_email_params by_profile;
    by_profile.extra = json{{"profile_url", profile_url}};
    auto est = estimate_v2("mail", "find_email", detail::to_json(by_profile));
    auto before = credits();
    auto found = fx->run(fx->api->find_email(account, by_profile));
    ASSERT_TRUE(found) << describe(found.error());
    expect_charge(*found, "find_email", est, before, 1);
    EXPECT_EQ(found->raw["found"], true);
    ASSERT_NE(found->email.find('@'), std::string::npos) << found->email;
    EXPECT_TRUE(found->status == "valid" || found->status == "catch_all") << found->status;
    EXPECT_EQ(found->profile_url, profile_url);
    const std::string email = found->email;
    const std::string domain = email.substr(email.find('@') + 1);

    find_email_params by_name;
    by_name.first_name = person["first_name"].get<std::string>();
    by_name.last_name = person["last_name"].get<std::string>();
    by_name.domain = domain;
    est = estimate_v2("mail", "find_email", detail::to_json(by_name));
    before = credits();
    auto by_domain = fx->run(fx->api->find_email(account, by_name));
    ASSERT_TRUE(by_domain) << describe(by_domain.error());
    expect_charge(*by_domain, "find_email", est, before, 1);
    EXPECT_EQ(by_domain->email, email);

    find_email_params nobody;
    nobody.first_name = "Nobody";
    nobody.last_name = "Nowhere";
    nobody.domain = domain;
    before = credits();
    auto not_found = fx->run(fx->api->find_email(account, nobody));
    ASSERT_TRUE(not_found) << describe(not_found.error());
    expect_charge(*not_found, "find_email", est, before, 1);
    EXPECT_EQ(not_found->status, "not_found");

    email_params reverse;
    reverse.email = email;
    est = estimate_v2("mail", "reverse_email", detail::to_json(reverse));
    before = credits();
    auto who = fx->run(fx->api->reverse_email(account, reverse));
    ASSERT_TRUE(who) << describe(who.error());
    expect_charge(*who, "reverse_email", est, before, 1);
    EXPECT_EQ(who->email, email);
    EXPECT_EQ(who->profile_url, profile_url);
    EXPECT_EQ(who->raw["found"], true);

    email_params check;
    check.email = email;
    est = estimate_v2("mail", "validate_email", detail::to_json(check));
    before = credits();
    auto valid = fx->run(fx->api->validate_email(account, check));
    ASSERT_TRUE(valid) << describe(valid.error());
    expect_charge(*valid, "validate_email", est, before, 1);
    EXPECT_EQ(valid->email, email);
    EXPECT_EQ(valid->status, found->status);
    ASSERT_TRUE(valid->valid);
    EXPECT_EQ(*valid->valid, valid->status == "valid");

    email_params syntax;
    syntax.email = "not an address";
    before = credits();
    auto invalid = fx->run(fx->api->validate_email(account, syntax));
    ASSERT_TRUE(invalid) << describe(invalid.error());
    expect_charge(*invalid, "validate_email", est, before, 1);
    EXPECT_EQ(invalid->valid, false);
    EXPECT_EQ(invalid->status, "invalid");

    // INVALID_PARAMS -> give_up, nothing charged.
    email_params malformed;
    malformed.email = "not-an-address";
    before = credits();
    auto refused = fx->run(fx->api->reverse_email(account, malformed));
    ASSERT_FALSE(refused);
    expect_api_error(refused.error(), "INVALID_PARAMS", 400, disposition::give_up, before, "params.email");
    email_params none;
    auto refused_validate = fx->run(fx->api->validate_email(account, none));
    ASSERT_FALSE(refused_validate);
    expect_api_error(refused_validate.error(), "INVALID_PARAMS", 400, disposition::give_up, before, "params.email");
    find_email_params half;
    half.first_name = "Ada";
    auto refused_find = fx->run(fx->api->find_email(account, half));
    ASSERT_FALSE(refused_find);
    expect_api_error(refused_find.error(), "INVALID_PARAMS", 400, disposition::give_up, before, "params.last_name");
}

} // namespace
