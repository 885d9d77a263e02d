// The V1 data endpoints over the seeded world (spec "Data endpoints"): company info, info by
// domain, company search, funded-company search, profile search and profile enrichment. Each
// handler validates the whole body first, computes the answer, charges, and returns `data`.
//
// Credits (spec, Limits and Errors): company info, info by domain and a found enrichment cost 1;
// searches cost 1 per 10 results returned (+1 per company when enriched). The V1 rule "credits
// are deducted only on successful searches" is read as: an error, a search that finds nothing
// and an enrichment that finds nobody cost 0.
#include "sandbox/v1_params.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <unordered_map>

namespace orch::sandbox {

namespace {

constexpr std::int64_t default_total_results = 10;
constexpr std::int64_t max_total_results = 50'000;
constexpr std::size_t max_filter_values = 100;

bool looks_like_url(std::string_view text) {
    return text.find('/') != std::string_view::npos || text.starts_with("www.");
}

// ---------------------------------------------------------------------------------------------
// Company lookups and funding.

// Lookup tables over the world's companies, built on first use.
struct company_index {
    explicit company_index(service& svc) {
        for (const company& c : svc.world().companies()) {
            by_domain.emplace(c.domain, c.id);
            if (c.industry == "Venture Capital and Private Equity") {
                investors.push_back(c.id);
            }
        }
    }
    std::unordered_map<std::string, company_id> by_domain;
    std::vector<company_id> investors; // the world's investment firms, in id order
};

const company& company_from_url(const service& svc, const std::string& url) {
    auto slug = slug_from_company_url(url);
    if (!slug) {
        throw invalid_params("company_url is not a company page URL (" + std::string(network_base_url) +
                             "/company/<universal_name>), got " + v1::quoted(url));
    }
    const company* c = svc.world().find_company_by_slug(*slug);
    if (c == nullptr) {
        throw invalid_params("company not found: " + v1::quoted(url));
    }
    return *c;
}

// "https://www.Acme.example/about" -> "acme.example"; nullopt when the text is not a host name.
std::optional<std::string> normalize_domain(std::string_view text) {
    std::string d = fold_lower(v1::trim(text));
    for (std::string_view scheme : {"https://", "http://"}) {
        if (std::string_view(d).starts_with(scheme)) {
            d.erase(0, scheme.size());
        }
    }
    d = d.substr(0, d.find_first_of("/?#"));
    d = d.substr(0, d.find(':'));
    while (!d.empty() && d.back() == '.') {
        d.pop_back();
    }
    if (d.starts_with("www.")) {
        d.erase(0, 4);
    }
    bool chars_ok = std::all_of(d.begin(), d.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    });
    if (!chars_ok || d.find('.') == std::string::npos || d.front() == '.' || d.find("..") != std::string::npos) {
        return std::nullopt;
    }
    return d;
}

// The company of a domain or of a parent domain ("jobs.acme.example" -> acme.example).
const company* company_by_domain(service& svc, std::string domain) {
    const auto& index = svc.area<company_index>().by_domain;
    while (domain.find('.') != std::string::npos) {
        if (auto it = index.find(domain); it != index.end()) {
            return &svc.world().company_at(it->second);
        }
        domain.erase(0, domain.find('.') + 1);
    }
    return nullptr;
}

// Round amounts are written as the press writes them: "€12.5M", "$750K", in the currency of the
// headquarters (US dollars outside the euro zone, the UK and Canada).
std::string money(std::int64_t thousands, const std::string& country) {
    std::string symbol = "$";
    if (country == "GB") {
        symbol = "£";
    } else if (country == "CA") {
        symbol = "CA$";
    } else if (country == "FR" || country == "DE" || country == "ES" || country == "IT" || country == "NL") {
        symbol = "€";
    }
    if (thousands < 1000) {
        return symbol + std::to_string(thousands) + "K";
    }
    auto tenths = (thousands + 50) / 100; // millions with one decimal
    std::string text = std::to_string(tenths / 10);
    if (tenths % 10 != 0) {
        text += "." + std::to_string(tenths % 10);
    }
    return symbol + text + "M";
}

json investors_of(service& svc, const company& c, rng64& r, std::int64_t count) {
    static constexpr std::array<const char*, 10> outside = {
        "Northwind Angels",       "Harbor Seed Fund",  "Atlas Growth Partners", "Founders Syndicate",
        "Meridian Family Office", "Beacon Angels Club", "Summit Innovation Grant", "Lighthouse Capital Club",
        "Orchard Angel Network",  "Keystone Growth Fund"};
    const auto& firms = svc.area<company_index>().investors;
    json out = json::array();
    std::vector<std::string> used;
    for (std::int64_t i = 0; i < count * 3 && static_cast<std::int64_t>(used.size()) < count; ++i) {
        json investor;
        if (!firms.empty() && r.chance(0.6)) {
            const company& firm = svc.world().company_at(firms[r.next() % firms.size()]);
            if (firm.id == c.id) {
                continue;
            }
            investor = {{"name", firm.name}, {"company_url", world::company_url(firm)}};
        } else {
            investor = {{"name", r.pick(outside.data(), outside.size())}, {"company_url", nullptr}};
        }
        std::string name = investor["name"];
        if (std::find(used.begin(), used.end(), name) == used.end()) {
            used.push_back(name);
            out.push_back(std::move(investor));
        }
    }
    return out;
}

// The `funding` object of an enriched search result, drawn from the seed and the company alone,
// so a company always shows the same rounds.
json funding_of(service& svc, const company& c) {
    if (!c.funded) {
        return json{
            {"isFunded", false}, {"totalRounds", nullptr}, {"lastRound", nullptr}, {"investors", json::array()}};
    }
    static constexpr std::array<const char*, 7> stages = {"Pre-seed", "Seed",     "Series A", "Series B",
                                                          "Series C", "Series D", "Series E"};
    static constexpr std::array<std::pair<int, int>, 7> amount_k = {
        {{150, 900}, {800, 4'000}, {4'000, 20'000}, {15'000, 60'000}, {40'000, 150'000}, {80'000, 300'000},
         {150'000, 500'000}}};
    static constexpr std::array<std::pair<int, int>, 8> rounds_by_size = {
        {{1, 2}, {1, 3}, {1, 4}, {2, 5}, {2, 6}, {3, 7}, {3, 7}, {3, 7}}};
    rng64 r(hash64("funding:" + std::to_string(c.id), svc.cfg().seed));
    const auto& ranges = company_size_ranges();
    auto bucket = static_cast<std::size_t>(std::find(ranges.begin(), ranges.end(), c.size_range) - ranges.begin());
    auto [lo, hi] = rounds_by_size[std::min<std::size_t>(bucket, rounds_by_size.size() - 1)];
    int years = std::max(1, world_reference_year - c.founded_year + 1);
    hi = std::min(hi, years);
    lo = std::min(lo, hi);
    auto rounds = r.between(lo, hi);
    auto stage = static_cast<std::size_t>(rounds - 1);
    int year = static_cast<int>(r.between(std::max(c.founded_year, world_reference_year - 4), world_reference_year));
    char date[32];
    std::snprintf(date, sizeof date, "%04d-%02d-%02d", year, static_cast<int>(r.between(1, 12)),
                  static_cast<int>(r.between(1, 28)));
    auto amount = r.between(amount_k[stage].first, amount_k[stage].second);
    json last = {{"type", stages[stage]}, {"date", date}, {"amount", money(amount, c.country)}};
    return json{{"isFunded", true},
                {"totalRounds", rounds},
                {"lastRound", std::move(last)},
                {"investors", investors_of(svc, c, r, r.between(1, std::min<std::int64_t>(4, rounds + 1)))}};
}

// ---------------------------------------------------------------------------------------------
// Company info, info by domain

json company_info(v1_context& ctx) {
    std::string url = v1::require_text(ctx.body, "company_url");
    const company& c = company_from_url(ctx.svc, url);
    json data = ctx.svc.world().company_record(c);
    ctx.charge(1);
    return data;
}

json company_info_by_domain(v1_context& ctx) {
    std::string given = v1::require_text(ctx.body, "domain");
    auto domain = normalize_domain(given);
    if (!domain) {
        throw invalid_params("domain is not a domain name (such as acme.example), got " + v1::quoted(given));
    }
    const company* c = company_by_domain(ctx.svc, *domain);
    if (c == nullptr) {
        throw invalid_params("no company found for domain " + v1::quoted(*domain));
    }
    json data = ctx.svc.world().company_record(*c);
    data["network_url"] = world::company_url(*c);
    data["searched_domain"] = *domain;
    ctx.charge(1);
    return data;
}

// ---------------------------------------------------------------------------------------------
// Company search, funded-company search

std::vector<std::string> employee_ranges(const json& body) {
    const auto& allowed = company_size_ranges();
    std::vector<std::string> out;
    for (const auto& value : v1::text_list(body, "employee_range", max_filter_values)) {
        // "10,001+" and "11 - 50" name the buckets "10001+" and "11-50".
        std::string size;
        for (char c : value) {
            if (c != ',' && c != ' ') {
                size.push_back(c);
            }
        }
        if (std::find(allowed.begin(), allowed.end(), size) == allowed.end()) {
            std::string list;
            for (const auto& a : allowed) {
                list += (list.empty() ? "" : ", ") + a;
            }
            throw invalid_params("employee_range must be one of " + list + "; got " + v1::quoted(value));
        }
        out.push_back(size);
    }
    return out;
}

json search_companies(v1_context& ctx, bool funded_only) {
    company_query q;
    q.keywords = fold_words(v1::require_text(ctx.body, "keyword"));
    for (const auto& v : v1::text_list(ctx.body, "industry", max_filter_values)) {
        q.industries.push_back(fold_lower(v));
    }
    for (const auto& v : v1::text_list(ctx.body, "location", max_filter_values)) {
        q.locations.push_back(make_location_term(v));
    }
    q.sizes = employee_ranges(ctx.body);
    auto total = v1::optional_int(ctx.body, "total_results", 1, max_total_results).value_or(default_total_results);
    bool enrich = v1::optional_bool(ctx.body, "enrich").value_or(false);

    const world& wd = ctx.svc.world();
    auto ids = wd.search_companies(q);
    if (funded_only) {
        std::erase_if(ids, [&](company_id id) { return !wd.company_at(id).funded; });
    }
    auto returned = std::min(ids.size(), static_cast<std::size_t>(total));
    json companies = json::array();
    for (std::size_t i = 0; i < returned; ++i) {
        const company& c = wd.company_at(ids[i]);
        if (enrich) {
            json record = wd.company_record(c);
            record["funding"] = funding_of(ctx.svc, c);
            companies.push_back(std::move(record));
        } else {
            companies.push_back(
                json{{"url", world::company_url(c)}, {"title", c.name}, {"description", c.description}});
        }
    }
    json data = {{"total_results", ids.size()}, {"companies", std::move(companies)}, {"enriched", enrich}};
    if (funded_only) {
        data["funded_only"] = true;
    }
    ctx.charge(v1::per_ten_or_zero(returned) + (enrich ? static_cast<std::int64_t>(returned) : 0));
    return data;
}

// ---------------------------------------------------------------------------------------------
// Profile search and enrichment

// Folded copies of the fields profile search and enrichment match on, built on first use.
struct people_index {
    struct row {
        std::string first_name, last_name, title, location, industry, country, schools;
        std::vector<std::string> school_slugs;
    };
    explicit people_index(service& svc) {
        const auto& people = svc.world().people();
        rows.reserve(people.size());
        for (const person& p : people) {
            row r{fold_lower(p.first_name), fold_lower(p.last_name), fold_lower(p.title), fold_lower(p.location),
                  fold_lower(p.industry),   fold_lower(p.country),    {},                   {}};
            for (const auto& e : p.education) {
                r.schools += fold_lower(e.school) + "\n";
                if (auto slug = slug_from_school_url(e.school_url)) {
                    r.school_slugs.push_back(*slug);
                }
            }
            rows.push_back(std::move(r));
        }
    }
    std::vector<row> rows;
};

// The criteria of a profile search: each given criterion must hold (AND); the values of one
// criterion are alternatives (OR).
struct profile_criteria {
    std::vector<std::vector<std::string>> keywords; // per value, its words (all must occur)
    std::vector<std::string> titles;
    std::vector<std::string> industries;
    std::vector<std::string> school_names;
    std::vector<std::string> school_slugs;
    std::vector<location_term> locations;
    std::optional<std::vector<bool>> companies;     // by company id
    bool any() const {
        return !keywords.empty() || !titles.empty() || !industries.empty() || !school_names.empty() ||
               !school_slugs.empty() || !locations.empty() || companies.has_value();
    }
};

std::vector<bool> current_companies(const world& wd, const std::vector<std::string>& values) {
    std::vector<bool> set(wd.companies().size(), false);
    for (const auto& value : values) {
        if (auto slug = slug_from_company_url(value)) {
            if (const company* c = wd.find_company_by_slug(*slug)) {
                set[c->id] = true;
            }
            continue;
        }
        if (looks_like_url(value)) {
            throw invalid_params("current_company must be a company name or a company page URL (" +
                                 std::string(network_base_url) + "/company/<universal_name>), got " +
                                 v1::quoted(value));
        }
        std::string folded = fold_lower(value);
        for (const company& c : wd.companies()) {
            if (c.name_key.find(folded) != std::string::npos) {
                set[c.id] = true;
            }
        }
    }
    return set;
}

profile_criteria parse_profile_criteria(const v1_context& ctx) {
    profile_criteria q;
    for (const auto& v : v1::text_list(ctx.body, "keyword", max_filter_values)) {
        q.keywords.push_back(fold_words(v));
    }
    for (const auto& v : v1::text_list(ctx.body, "job_title", max_filter_values)) {
        q.titles.push_back(fold_lower(v));
    }
    for (const auto& v : v1::text_list(ctx.body, "industry", max_filter_values)) {
        q.industries.push_back(fold_lower(v));
    }
    for (const auto& v : v1::text_list(ctx.body, "school", max_filter_values)) {
        if (auto slug = slug_from_school_url(v)) {
            q.school_slugs.push_back(*slug);
        } else if (looks_like_url(v)) {
            throw invalid_params("school must be a school name or a school page URL (" + std::string(network_base_url) +
                                 "/school/<slug>), got " + v1::quoted(v));
        } else {
            q.school_names.push_back(fold_lower(v));
        }
    }
    for (const auto& v : v1::text_list(ctx.body, "location", max_filter_values)) {
        q.locations.push_back(make_location_term(v));
    }
    auto companies = v1::text_list(ctx.body, "current_company", max_filter_values);
    if (!companies.empty()) {
        q.companies = current_companies(ctx.svc.world(), companies);
    }
    return q;
}

bool any_substring(const std::string& text, const std::vector<std::string>& needles) {
    return std::any_of(needles.begin(), needles.end(),
                       [&](const std::string& n) { return text.find(n) != std::string::npos; });
}

bool profile_matches(const person& p, const people_index::row& row, const profile_criteria& q) {
    if (!q.keywords.empty() && std::none_of(q.keywords.begin(), q.keywords.end(), [&](const auto& words) {
            return v1::has_all_words(p.search_text, words);
        })) {
        return false;
    }
    if ((!q.titles.empty() && !any_substring(row.title, q.titles)) ||
        (!q.industries.empty() && !any_substring(row.industry, q.industries))) {
        return false;
    }
    if (!q.school_names.empty() || !q.school_slugs.empty()) {
        bool by_name = any_substring(row.schools, q.school_names);
        bool by_url = std::any_of(row.school_slugs.begin(), row.school_slugs.end(), [&](const std::string& s) {
            return std::find(q.school_slugs.begin(), q.school_slugs.end(), s) != q.school_slugs.end();
        });
        if (!by_name && !by_url) {
            return false;
        }
    }
    if (!q.locations.empty() && std::none_of(q.locations.begin(), q.locations.end(), [&](const location_term& t) {
            return t.country_code ? row.country == t.folded : row.location.find(t.folded) != std::string::npos;
        })) {
        return false;
    }
    return !q.companies || (*q.companies)[p.company];
}

// A profile as a search engine shows it: the page, a title and a snippet.
std::string profile_title(const world& wd, const person& p) {
    return p.first_name + " " + p.last_name + " - " + p.title + " - " + wd.company_at(p.company).name;
}
std::string profile_snippet(const person& p) { return p.headline + " · " + p.location; }

json search_profiles(v1_context& ctx) {
    profile_criteria q = parse_profile_criteria(ctx);
    auto total = v1::optional_int(ctx.body, "total_results", 1, max_total_results).value_or(default_total_results);
    if (!q.any()) {
        throw invalid_params("at least one of keyword, job_title, industry, school, location, current_company is "
                             "required");
    }
    const world& wd = ctx.svc.world();
    const auto& rows = ctx.svc.area<people_index>().rows;
    std::size_t matches = 0;
    json profiles = json::array();
    for (const person& p : wd.people()) {
        if (!profile_matches(p, rows[p.id], q)) {
            continue;
        }
        if (matches++ < static_cast<std::size_t>(total)) {
            profiles.push_back(json{
                {"url", world::profile_url(p)}, {"title", profile_title(wd, p)}, {"description", profile_snippet(p)}});
        }
    }
    auto returned = profiles.size();
    json data = {{"total_results", matches}, {"profiles", std::move(profiles)}};
    ctx.charge(v1::per_ten_or_zero(returned));
    return data;
}

// How well a person's employers match the searched company name: 3 current company by exact
// name, 2 current company containing it, 1 a past company containing it, 0 none.
int employer_match(const world& wd, const person& p, const std::string& folded_company) {
    const std::string& current = wd.company_at(p.company).name_key;
    if (current == folded_company) {
        return 3;
    }
    if (current.find(folded_company) != std::string::npos) {
        return 2;
    }
    bool past = std::any_of(p.past_companies.begin(), p.past_companies.end(), [&](company_id id) {
        return wd.company_at(id).name_key.find(folded_company) != std::string::npos;
    });
    return past ? 1 : 0;
}

json enrich_profile(v1_context& ctx) {
    std::string first = v1::require_text(ctx.body, "first_name");
    std::string last = v1::require_text(ctx.body, "last_name");
    std::string company_name = v1::require_text(ctx.body, "company_name");
    std::string first_f = fold_lower(first);
    std::string last_f = fold_lower(last);
    std::string company_f = fold_lower(company_name);
    const world& wd = ctx.svc.world();
    const auto& rows = ctx.svc.area<people_index>().rows;
    const person* best = nullptr;
    int best_score = 0;
    for (const person& p : wd.people()) {
        if (rows[p.id].first_name != first_f || rows[p.id].last_name != last_f) {
            continue;
        }
        int score = employer_match(wd, p, company_f);
        if (score > best_score) {
            best = &p;
            best_score = score;
        }
    }
    json data = {{"person_searched", {{"first_name", first}, {"last_name", last}, {"company_name", company_name}}},
                 {"network_profile", nullptr},
                 {"full_profile_data", nullptr}};
    if (best == nullptr) {
        ctx.message = "no profile found";
        return data; // nothing found: no charge (V1 rule)
    }
    data["network_profile"] = {{"network_url", world::profile_url(*best)},
                               {"profile_title", profile_title(wd, *best)},
                               {"profile_description", profile_snippet(*best)}};
    json full = wd.profile_record(*best);
    full["email"] = best->email;
    full["phone"] = best->phone;
    full["website"] = best->website;
    data["full_profile_data"] = std::move(full);
    ctx.charge(1);
    return data;
}

} // namespace

void register_v1_data_routes(v1_table& table) {
    table.add("POST", "/v1/data/company/info", "company_info", company_info);
    table.add("POST", "/v1/data/company/info-by-domain", "company_info_by_domain", company_info_by_domain);
    // Named apart from the V2 actions (search_companies) so per-action credit records stay distinct.
    table.add("POST", "/v1/data/search/companies", "data_search_companies",
              [](v1_context& ctx) { return search_companies(ctx, false); });
    table.add("POST", "/v1/data/search/funded-companies", "data_search_funded_companies",
              [](v1_context& ctx) { return search_companies(ctx, true); });
    table.add("POST", "/v1/data/search/profiles", "data_search_profiles", search_profiles);
    table.add("POST", "/v1/data/profile/enrich", "enrich_profile", enrich_profile);
}

} // namespace orch::sandbox
