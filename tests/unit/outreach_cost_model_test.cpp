// The credit-cost model, rule by rule (engine/outreach/cost_model.hpp R1-R10).
#include "engine/outreach/cost_model.hpp"
#include "engine/outreach/detail/request.hpp"

#include <gtest/gtest.h>

using namespace orch::outreach;

namespace {

TEST(OutreachCostModel, R1DefaultIsOneCredit) {
    EXPECT_EQ(estimate_v2("profiles", "get", json::object()).credits, 1);
    EXPECT_EQ(estimate_v2("profiles", "visit", json::object()).credits, 1);
    EXPECT_EQ(estimate_v2("network", "invite", json::object()).credits, 1);
    EXPECT_EQ(estimate_v2("network", "withdraw", json::object()).credits, 1);
    EXPECT_EQ(estimate_v2("content", "like", json::object()).credits, 1);
    EXPECT_EQ(estimate_v2("mail", "find_email", json::object()).credits, 1);
    EXPECT_EQ(estimate_v2("some_future_category", "x", json::object()).rule, "R1");
}

TEST(OutreachCostModel, R2OneCreditPerTenResultsRoundedUp) {
    EXPECT_EQ(cost::per_ten(25), 3); // the spec's example
    EXPECT_EQ(cost::per_ten(10), 1);
    EXPECT_EQ(cost::per_ten(11), 2);
    EXPECT_EQ(cost::per_ten(1), 1);
    EXPECT_EQ(cost::per_ten(0), 1);   // a list call costs at least 1
    EXPECT_EQ(cost::per_ten(50'000), 5'000);

    search_people_params people;
    people.total_results = 25;
    EXPECT_EQ(estimate(people).credits, 3);
    EXPECT_EQ(estimate(people).rule, "R2");
    search_people_params people_default; // API default total_results 10
    EXPECT_EQ(estimate(people_default).credits, 1);
    search_people_params pages;
    pages.start_page = 2;
    pages.end_page = 4; // 3 pages x 10
    pages.total_results = 500; // ignored in page mode
    EXPECT_EQ(estimate(pages).credits, 3);
    search_people_params one_page;
    one_page.start_page = 5; // end defaults to start
    EXPECT_EQ(estimate(one_page).credits, 1);

    list_invitations_params sent;
    sent.count = 25;
    EXPECT_EQ(estimate(sent).credits, 3);
    EXPECT_EQ(estimate(list_invitations_params{}).credits, 1);
    list_connections_params connections;
    connections.count = 100;
    EXPECT_EQ(estimate(connections).credits, 10);
    EXPECT_EQ(estimate_v2("messages", "list_inbox", json{{"count", 40}}).credits, 4);
    EXPECT_EQ(estimate_v2("network", "recommendations", json{{"count", 5}}).credits, 1);

    data_profile_search_params v1_profiles;
    v1_profiles.total_results = 95;
    EXPECT_EQ(estimate(v1_profiles).credits, 10);
}

TEST(OutreachCostModel, R3CompanySearchEnrichmentAddsOnePerCompany) {
    data_company_search_params p;
    p.keyword = "robots";
    p.total_results = 25;
    EXPECT_EQ(estimate(p).credits, 3);
    p.enrich = true;
    EXPECT_EQ(estimate(p).credits, 3 + 25);
    EXPECT_EQ(estimate(p, true).credits, 3 + 25); // funded search: same rule
    EXPECT_EQ(estimate(p).rule, "R3");
    EXPECT_EQ(cost::company_search(10, true), 11);
}

TEST(OutreachCostModel, R4HiringCompanies) {
    EXPECT_EQ(cost::hiring_companies(25, false, false), 3);
    EXPECT_EQ(cost::hiring_companies(25, true, false), 6);
    EXPECT_EQ(cost::hiring_companies(25, true, true), 31);
    hiring_companies_params defaults; // 100 companies, fetch_description defaults to true
    defaults.filter.job_title = {"engineer"};
    EXPECT_EQ(estimate(defaults).credits, 20);
    EXPECT_EQ(estimate(defaults).rule, "R4");
    hiring_companies_params lean;
    lean.filter.total_results = 30;
    lean.filter.fetch_description = false;
    lean.filter.enrich_company = true;
    EXPECT_EQ(estimate(lean).credits, 3 + 30);
    hiring_companies_params paged;
    paged.filter.start_page = 1;
    paged.filter.end_page = 2; // 2 pages x 10 companies
    paged.filter.fetch_description = false;
    EXPECT_EQ(estimate(paged).credits, 2);
}

TEST(OutreachCostModel, R5CompanyJobs) {
    // 3 companies x 25 jobs = 75 jobs -> 8; descriptions +ceil(3/10) = 1; enrichment +3.
    EXPECT_EQ(cost::company_jobs(3, 25, false, false), 8);
    EXPECT_EQ(cost::company_jobs(3, 25, true, false), 9);
    EXPECT_EQ(cost::company_jobs(3, 25, true, true), 12);
    EXPECT_EQ(cost::company_jobs(1, 5'000, false, false), 200); // capped at 2000 jobs per company
    company_jobs_params p;
    p.company_names = {"Acme", "Globex"};
    // Defaults: 100 jobs per company, fetch_description true: ceil(200/10) + 1 = 21.
    EXPECT_EQ(estimate(p).credits, 21);
    EXPECT_EQ(estimate(p).rule, "R5");
}

TEST(OutreachCostModel, R6PostReactionsPaginationModeIsOnePerPage) {
    post_reactions_params paged;
    paged.post_url = "https://network.example/posts/1";
    paged.start_page = 2;
    paged.end_page = 5;
    paged.total_results = 1000; // ignored in pagination mode
    EXPECT_EQ(estimate(paged).credits, 4);
    EXPECT_EQ(estimate(paged).rule, "R6");
    post_reactions_params by_total;
    by_total.total_results = 25;
    EXPECT_EQ(estimate(by_total).credits, 3);
    EXPECT_EQ(estimate_v2("content", "get_reactions", json{{"start_page", 1}, {"end_page", 3}}).credits, 3);
}

// The feed returns up to `count` posts (1..100) at 1 credit per 10 returned; the estimate used
// to read total_results (default 10) and so said 1 credit for a 100-post feed.
TEST(OutreachCostModel, R2GetFeedUsesCount) {
    feed_params big;
    big.count = 100;
    EXPECT_EQ(estimate_v2("content", "get_feed", detail::to_json(big)).credits, 10);
    EXPECT_EQ(estimate_v2("content", "get_feed", json{{"count", 25}}).credits, 3);
    EXPECT_EQ(estimate_v2("content", "get_feed", json{{"count", 25}}).rule, "R2");
    EXPECT_EQ(estimate_v2("content", "get_feed", json::object()).credits, 1); // default count 10
    // total_results and pages are not feed parameters: they must not lower the estimate.
    EXPECT_EQ(estimate_v2("content", "get_feed", json{{"count", 100}, {"total_results", 1}}).credits, 10);
    EXPECT_EQ(estimate_v2("content", "get_feed", json{{"count", 50}, {"start_page", 1}}).credits, 5);
    EXPECT_EQ(estimate_v2("content", "get_feed", json{{"total_results", 1}}).credits, 1);
}

// Same flaw elsewhere: each list action's estimate reads the one parameter the API reads.
TEST(OutreachCostModel, R2ContentAndRecruiterListsReadTheirOwnWindowParameter) {
    // get_reactions (total-results mode) reads total_results; a `count` is ignored by the API.
    EXPECT_EQ(estimate_v2("content", "get_reactions", json{{"count", 1}, {"total_results", 150}}).credits, 15);
    EXPECT_EQ(estimate_v2("content", "get_reactions", json{{"total_results", 150}}).credits, 15);
    EXPECT_EQ(estimate_v2("content", "get_reactions", json::object()).credits, 1);
    // search and get_comments: total_results, or pages of 10.
    EXPECT_EQ(estimate_v2("content", "search", json{{"keyword", "x"}, {"total_results", 30}}).credits, 3);
    EXPECT_EQ(estimate_v2("content", "get_comments", json{{"total_results", 100}}).credits, 10);
    EXPECT_EQ(estimate_v2("content", "get_comments", json{{"start_page", 2}, {"end_page", 3}}).credits, 2);
    // Recruiter lists read count (1..100, default 10); total_results/limit are not theirs.
    EXPECT_EQ(estimate_v2("recruiter", "get_posts", json{{"count", 100}}).credits, 10);
    EXPECT_EQ(estimate_v2("recruiter", "get_candidates", json{{"job_id", "1"}, {"count", 35}}).credits, 4);
    EXPECT_EQ(estimate_v2("recruiter", "get_candidates", json{{"count", 100}, {"total_results", 1}}).credits, 10);
    EXPECT_EQ(estimate_v2("recruiter", "get_posts", json{{"total_results", 1}}).credits, 1);
    EXPECT_EQ(estimate_v2("recruiter", "get_posts", json{{"limit", 1}, {"count", 50}}).credits, 5);
    EXPECT_EQ(estimate_v2("recruiter", "get_cv", json::object()).credits, 1);
    EXPECT_EQ(estimate_v2("recruiter", "publish_job", json::object()).credits, 1);
}

TEST(OutreachCostModel, R7FixedOneCreditCalls) {
    EXPECT_EQ(estimate_v2("network", "decline", json::object()).credits, 1);
    EXPECT_EQ(estimate_v2("network", "check_invitation", json::object()).rule, "R7");
    EXPECT_EQ(estimate_v2("content", "create_company", json::object()).credits, 1);
    EXPECT_EQ(estimate_v1(v1_endpoint::enrich_profile, json::object()).credits, 1);
    EXPECT_EQ(estimate_v1(v1_endpoint::company_info, json::object()).credits, 1);
    EXPECT_EQ(estimate_v1(v1_endpoint::company_info_by_domain, json::object()).credits, 1);
    EXPECT_EQ(estimate_v1(v1_endpoint::messaging_send, json::object()).credits, 1);
}

TEST(OutreachCostModel, R8SendWithMediaCostsTwo) {
    send_message_params text;
    text.message_text = "hi";
    EXPECT_EQ(estimate(text).credits, 1);
    send_message_params link = text;
    link.media_link = "https://example.com/a.png";
    EXPECT_EQ(estimate(link).credits, 2);
    EXPECT_EQ(estimate(link).rule, "R8");
    send_message_params file = text;
    file.media_file = media_file{"a.png", "aGk="};
    EXPECT_EQ(estimate(file).credits, 2);
}

TEST(OutreachCostModel, R9FreeCallsAndCheckpoint) {
    EXPECT_EQ(estimate_v2("login", "login", json::object()).credits, 0);
    EXPECT_EQ(estimate_v2("accounts", "list_accounts", json::object()).credits, 0);
    EXPECT_EQ(estimate_v2("credits", "get_credits", json::object()).credits, 0);
    EXPECT_EQ(estimate_v2("webhooks", "create", json::object()).credits, 0);
    EXPECT_EQ(estimate_v1(v1_endpoint::webhook_accounts, json::object()).credits, 0);
    EXPECT_EQ(estimate_v2("checkpoint", "checkpoint", json::object()).credits, 1);
}

TEST(OutreachCostModel, R10MonitoringTenPerDay) {
    EXPECT_EQ(cost::monitoring(1), 10);
    EXPECT_EQ(cost::monitoring(30), 300);
    EXPECT_EQ(cost::monitoring(0), 0);
}

} // namespace
