// The credit-cost model of the Outreach API (spec "Limits", Credits 1-8, and api-facts where
// the spec is silent). Pure functions: an UPPER BOUND of what a call may consume, computed from
// its parameters before the call, so a caller can reserve budget. The API reports the actual
// charge in metadata.credits_consumed (errors cost 0).
//
// Rules (each unit-tested in tests/unit/outreach_cost_model_test.cpp):
//   R1  default: 1 credit per request                                         (Credits 1)
//   R2  list-returning actions and searches: max(1, ceil(n / 10)), n = the requested count
//       or total_results (API defaults: 10), or pages x 10 in page mode       (Credits 2: 25 results = 3)
//       n comes from the parameter the action actually reads: content get_feed and recruiter
//       get_posts/get_candidates `count` only (a total_results there is ignored by the API);
//       content search/get_comments/get_reactions `total_results` or pages
//   R3  company search and funded search with enrich: + 1 per company         (Credits 3)
//   R4  hiring companies: ceil(c/10) + (fetch_description ? ceil(c/10) : 0) + (enrich_company ? c : 0),
//       c = total_results (default 100) or pages x 10; fetch_description defaults to true (Credits 4)
//   R5  company jobs: ceil(jobs/10) + (fetch_description ? ceil(companies/10) : 0) + (enrich_company ?
//       companies : 0), jobs = companies x per-company total_results (default 100, max 2000) (Credits 5)
//   R6  post reactions in pagination mode: 1 per page (end - start + 1); otherwise R2 on total_results
//                                                                             (Credits 6)
//   R7  messaging send, decline, check_invitation, create_company, profile enrichment, company
//       info, info-by-domain: 1                                               (Credits 7)
//   R8  messages/send with a media: 2                                         (api-facts 2.11)
//   R9  checkpoint: 1; login, accounts, credits, webhooks (all calls), V1 webhook accounts: 0
//                                                                             (api-facts 3.x, 1.9)
//   R10 monitoring: 10 credits per day per monitored network account         (Limits)
#pragma once

#include "engine/outreach/types.hpp"

#include <cstdint>
#include <string_view>

namespace orch::outreach {

struct credit_estimate {
    std::int64_t credits = 0;
    std::string_view rule;             // "R2 list: ceil(25/10)" style id of the rule applied ("R2")
};

// The V1-shaped endpoints (their paths are client settings; several are not shown in the spec).
enum class v1_endpoint {
    company_info,
    company_info_by_domain,
    search_companies,
    search_funded_companies,
    search_profiles,
    enrich_profile,
    profile_reactions,
    post_reactions,
    hiring_companies,
    company_jobs,
    messaging_send,
    webhook_accounts
};

namespace cost {

inline constexpr std::int64_t monitoring_per_day = 10;
inline constexpr std::int64_t default_total_results = 10;       // searches (Limits)
inline constexpr std::int64_t default_list_count = 10;          // list actions without `count`
inline constexpr std::int64_t results_per_page = 10;            // page mode of searches and hiring pages
inline constexpr std::int64_t hiring_default_total_results = 100;
inline constexpr std::int64_t company_jobs_default_per_company = 100;
inline constexpr std::int64_t company_jobs_max_per_company = 2000;

// R2: max(1, ceil(n / 10)); n <= 0 counts as 0 results (still 1 credit).
std::int64_t per_ten(std::int64_t n);
// R2 + R3.
std::int64_t company_search(std::int64_t results, bool enrich);
// R4.
std::int64_t hiring_companies(std::int64_t companies, bool fetch_description, bool enrich_company);
// R5.
std::int64_t company_jobs(std::int64_t companies, std::int64_t jobs_per_company, bool fetch_description,
                          bool enrich_company);
// R10.
std::int64_t monitoring(std::int64_t days);

} // namespace cost

// Upper bound for a V2 action, from its params object (as sent). Unknown actions get R1.
credit_estimate estimate_v2(std::string_view category, std::string_view action, const json& params);
// Upper bound for a V1 endpoint from its body.
credit_estimate estimate_v1(v1_endpoint endpoint, const json& body);

// Typed conveniences (same rules).
credit_estimate estimate(const search_people_params& p);
credit_estimate estimate(const search_companies_params& p);
credit_estimate estimate(const send_message_params& p);
credit_estimate estimate(const list_invitations_params& p);  // list_invitations / list_sent
credit_estimate estimate(const list_connections_params& p);
credit_estimate estimate(const data_company_search_params& p, bool funded = false);
credit_estimate estimate(const data_profile_search_params& p);
credit_estimate estimate(const post_reactions_params& p);
credit_estimate estimate(const profile_reactions_params& p);
credit_estimate estimate(const hiring_companies_params& p);
credit_estimate estimate(const company_jobs_params& p);

} // namespace orch::outreach
