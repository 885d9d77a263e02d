#include "engine/outreach/cost_model.hpp"

#include "engine/outreach/detail/json_read.hpp"
#include "engine/outreach/detail/request.hpp"

#include <algorithm>
#include <array>

namespace orch::outreach {

namespace cost {

std::int64_t per_ten(std::int64_t n) { return std::max<std::int64_t>(1, (std::max<std::int64_t>(0, n) + 9) / 10); }

std::int64_t company_search(std::int64_t results, bool enrich) {
    return per_ten(results) + (enrich ? std::max<std::int64_t>(0, results) : 0);
}

std::int64_t hiring_companies(std::int64_t companies, bool fetch_description, bool enrich_company) {
    companies = std::max<std::int64_t>(0, companies);
    return per_ten(companies) + (fetch_description ? per_ten(companies) : 0) + (enrich_company ? companies : 0);
}

std::int64_t company_jobs(std::int64_t companies, std::int64_t jobs_per_company, bool fetch_description,
                          bool enrich_company) {
    companies = std::max<std::int64_t>(0, companies);
    jobs_per_company = std::clamp<std::int64_t>(jobs_per_company, 0, company_jobs_max_per_company);
    return per_ten(companies * jobs_per_company) + (fetch_description ? per_ten(companies) : 0) +
           (enrich_company ? companies : 0);
}

std::int64_t monitoring(std::int64_t days) { return monitoring_per_day * std::max<std::int64_t>(0, days); }

} // namespace cost

namespace {

using detail::opt_bool;
using detail::opt_int;

// Pages of a page-range request (start_page..end_page, end defaulting to start); 0 when the
// request is not in page mode.
std::int64_t pages_of(const json& p) {
    auto start = opt_int(p, {"start_page"});
    auto end = opt_int(p, {"end_page"});
    if (!start && !end) {
        return 0;
    }
    std::int64_t s = std::max<std::int64_t>(1, start.value_or(1));
    std::int64_t e = std::max<std::int64_t>(s, end.value_or(s));
    return e - s + 1;
}

// R2 for searches: total_results, or pages x 10 in page mode.
std::int64_t search_results(const json& p, std::int64_t default_total) {
    if (auto pages = pages_of(p); pages > 0) {
        return pages * cost::results_per_page;
    }
    return opt_int(p, {"total_results"}).value_or(default_total);
}

std::int64_t list_count(const json& p) {
    return opt_int(p, {"count", "total_results", "limit"}).value_or(cost::default_list_count);
}

bool is_one_of(std::string_view action, std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), action) != names.end();
}

credit_estimate v2_profiles(std::string_view action, const json& p) {
    if (action == "search_people" || action == "search_companies") {
        return {cost::per_ten(search_results(p, cost::default_total_results)), "R2"};
    }
    if (is_one_of(action, {"get_reactions", "get_viewers"})) {
        return {cost::per_ten(list_count(p)), "R2"};
    }
    return {1, "R1"};
}

credit_estimate v2_network(std::string_view action, const json& p) {
    if (is_one_of(action, {"list_connections", "list_invitations", "list_sent", "recommendations"})) {
        return {cost::per_ten(list_count(p)), "R2"};
    }
    if (is_one_of(action, {"decline", "check_invitation"})) {
        return {1, "R7"};
    }
    return {1, "R1"};
}

credit_estimate v2_messages(std::string_view action, const json& p) {
    if (action == "send") {
        bool media = detail::find_any(p, {"media_link", "media_file", "media_path"}) != nullptr;
        return media ? credit_estimate{2, "R8"} : credit_estimate{1, "R7"};
    }
    if (action == "list_inbox" || action == "get_conversation") {
        return {cost::per_ten(list_count(p)), "R2"};
    }
    return {1, "R1"};
}

// The window size an action reads from exactly one parameter (the API ignores the others), so
// an estimate must not take a different field that happens to be present.
std::int64_t only(const json& p, std::string_view field, std::int64_t fallback) {
    return opt_int(p, {field}).value_or(fallback);
}

credit_estimate v2_content(std::string_view action, const json& p) {
    if (action == "create_company") {
        return {1, "R7"};
    }
    if (action == "get_reactions") {
        if (auto pages = pages_of(p); pages > 0) {
            return {pages, "R6"};
        }
        // Total-results mode reads `total_results` only (1..10,000, default 10).
        return {cost::per_ten(only(p, "total_results", cost::default_total_results)), "R2"};
    }
    if (action == "get_feed") {
        // The feed has no page mode and no total_results: it returns up to `count` posts
        // (1..100, default 10) and costs 1 per 10 returned.
        return {cost::per_ten(only(p, "count", cost::default_list_count)), "R2"};
    }
    if (is_one_of(action, {"search", "get_comments"})) {
        return {cost::per_ten(search_results(p, cost::default_total_results)), "R2"};
    }
    return {1, "R1"};
}

credit_estimate v2_recruiter(std::string_view action, const json& p) {
    if (is_one_of(action, {"get_posts", "get_candidates"})) {
        // Offset lists: `count` (1..100, default 10) only.
        return {cost::per_ten(only(p, "count", cost::default_list_count)), "R2"};
    }
    return {1, "R1"};
}

} // namespace

credit_estimate estimate_v2(std::string_view category, std::string_view action, const json& params) {
    if (category == "accounts" || category == "login" || category == "credits" || category == "webhooks") {
        return {0, "R9"};
    }
    if (category == "checkpoint") {
        return {1, "R9"};
    }
    if (category == "profiles") {
        return v2_profiles(action, params);
    }
    if (category == "network") {
        return v2_network(action, params);
    }
    if (category == "messages") {
        return v2_messages(action, params);
    }
    if (category == "content") {
        return v2_content(action, params);
    }
    if (category == "recruiter") {
        return v2_recruiter(action, params);
    }
    return {1, "R1"};
}

namespace {

credit_estimate hiring(const json& b) {
    std::int64_t companies = pages_of(b) > 0 ? pages_of(b) * cost::results_per_page
                                             : opt_int(b, {"total_results"}).value_or(cost::hiring_default_total_results);
    return {cost::hiring_companies(companies, opt_bool(b, {"fetch_description"}).value_or(true),
                                   opt_bool(b, {"enrich_company"}).value_or(false)),
            "R4"};
}

credit_estimate jobs(const json& b) {
    std::int64_t companies = 0;
    if (const json* names = detail::find_any(b, {"company_names"}); names != nullptr && names->is_array()) {
        companies = static_cast<std::int64_t>(names->size());
    }
    std::int64_t per_company = pages_of(b) > 0
                                   ? pages_of(b) * cost::results_per_page
                                   : opt_int(b, {"total_results"}).value_or(cost::company_jobs_default_per_company);
    return {cost::company_jobs(companies, per_company, opt_bool(b, {"fetch_description"}).value_or(true),
                               opt_bool(b, {"enrich_company"}).value_or(false)),
            "R5"};
}

} // namespace

credit_estimate estimate_v1(v1_endpoint endpoint, const json& b) {
    switch (endpoint) {
    case v1_endpoint::company_info:
    case v1_endpoint::company_info_by_domain:
    case v1_endpoint::enrich_profile:
    case v1_endpoint::messaging_send: return {1, "R7"};
    case v1_endpoint::search_companies:
    case v1_endpoint::search_funded_companies:
        return {cost::company_search(opt_int(b, {"total_results"}).value_or(cost::default_total_results),
                                     opt_bool(b, {"enrich"}).value_or(false)),
                "R3"};
    case v1_endpoint::search_profiles:
        return {cost::per_ten(opt_int(b, {"total_results"}).value_or(cost::default_total_results)), "R2"};
    case v1_endpoint::profile_reactions:
        return {cost::per_ten(search_results(b, cost::default_total_results)), "R2"};
    case v1_endpoint::post_reactions:
        if (auto pages = pages_of(b); pages > 0) {
            return {pages, "R6"};
        }
        return {cost::per_ten(opt_int(b, {"total_results"}).value_or(cost::default_total_results)), "R2"};
    case v1_endpoint::hiring_companies: return hiring(b);
    case v1_endpoint::company_jobs: return jobs(b);
    case v1_endpoint::webhook_accounts: return {0, "R9"};
    }
    return {1, "R1"};
}

credit_estimate estimate(const search_people_params& p) {
    return estimate_v2("profiles", "search_people", detail::to_json(p));
}
credit_estimate estimate(const search_companies_params& p) {
    return estimate_v2("profiles", "search_companies", detail::to_json(p));
}
credit_estimate estimate(const send_message_params& p) { return estimate_v2("messages", "send", detail::to_json(p)); }
credit_estimate estimate(const list_invitations_params& p) {
    return estimate_v2("network", "list_invitations", detail::to_json(p));
}
credit_estimate estimate(const list_connections_params& p) {
    return estimate_v2("network", "list_connections", detail::to_json(p));
}
credit_estimate estimate(const data_company_search_params& p, bool funded) {
    return estimate_v1(funded ? v1_endpoint::search_funded_companies : v1_endpoint::search_companies,
                       detail::to_json(p));
}
credit_estimate estimate(const data_profile_search_params& p) {
    return estimate_v1(v1_endpoint::search_profiles, detail::to_json(p));
}
credit_estimate estimate(const post_reactions_params& p) {
    return estimate_v1(v1_endpoint::post_reactions, detail::to_json(p));
}
credit_estimate estimate(const profile_reactions_params& p) {
    return estimate_v1(v1_endpoint::profile_reactions, detail::to_json(p));
}
credit_estimate estimate(const hiring_companies_params& p) {
    return estimate_v1(v1_endpoint::hiring_companies, detail::to_json(p));
}
credit_estimate estimate(const company_jobs_params& p) {
    return estimate_v1(v1_endpoint::company_jobs, detail::to_json(p));
}

} // namespace orch::outreach
