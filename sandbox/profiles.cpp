// The /v2/profiles category: get_me, get, get_contact, visit, search_people, search_companies,
// get_company. Every handler validates its params first, computes the answer from the world,
// charges (spec, Limits: 1 credit, or 1 per 10 results for lists and searches) and only then
// records side effects (visit).
#include "sandbox/service.hpp"

#include "engine/time_format.hpp"

#include <algorithm>

namespace orch::sandbox {

namespace {

constexpr std::int64_t results_per_page = 10;
constexpr std::int64_t capped_results_per_page = 50; // dialect_search_page_cap: V1's page size
constexpr std::int64_t max_total_results = 50'000;
constexpr std::int64_t default_total_results = 10;

// Caller-supplied text quoted in an error message, cut so a huge value cannot bloat the answer.
std::string quote_value(std::string_view text) {
    constexpr std::size_t max_chars = 120;
    return "'" + std::string(text.substr(0, max_chars)) + (text.size() > max_chars ? "...'" : "'");
}

std::string field(const char* name) { return std::string("params.") + name; }

std::string_view trimmed(std::string_view s) {
    auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!s.empty() && is_space(s.front())) {
        s.remove_prefix(1);
    }
    while (!s.empty() && is_space(s.back())) {
        s.remove_suffix(1);
    }
    return s;
}

// The values of a string-or-array filter with the name to use for each in an error message
// ("params.x" for a plain string, "params.x[2]" inside an array).
std::vector<std::pair<std::string, std::string>> named_values(const json& params, const char* name) {
    auto values = string_or_array(params, name);
    bool array = params.contains(name) && params[name].is_array();
    std::vector<std::pair<std::string, std::string>> out;
    for (std::size_t i = 0; i < values.size(); ++i) {
        out.emplace_back(array ? field(name) + "[" + std::to_string(i) + "]" : field(name), std::move(values[i]));
    }
    return out;
}

// Free-text values of a filter, folded; blank values are dropped.
std::vector<std::string> folded_values(const json& params, const char* name) {
    std::vector<std::string> out;
    for (const auto& v : string_or_array(params, name)) {
        auto t = trimmed(v);
        if (!t.empty()) {
            out.push_back(fold_lower(t));
        }
    }
    return out;
}

std::string folded_text(const json& params, const char* name) {
    auto v = optional_string(params, name);
    return v ? fold_lower(trimmed(*v)) : std::string();
}

// ---------------------------------------------------------------------------------------------
// Naming one person: exactly one of profile_url (alias network_url), identifier, profile_urn.

// The account owner or a person of the world with this public id / urn; nullptr when none.
const person* person_by_public_id(const action_context& ctx, std::string_view public_id) {
    if (public_id == ctx.account.self.public_id) {
        return &ctx.account.self;
    }
    return ctx.svc.world().find_by_public_id(public_id);
}

const person* person_by_url(const action_context& ctx, const std::string& name, const std::string& url) {
    auto id = public_id_from_profile_url(url);
    if (!id) {
        throw invalid_params(name + " is not a profile URL of the network (" + std::string(network_base_url) +
                             "/in/<public_id>), got " + quote_value(url));
    }
    return person_by_public_id(ctx, *id);
}

const person& target_person(const action_context& ctx) {
    static constexpr const char* names[] = {"profile_url", "network_url", "identifier", "profile_urn"};
    std::vector<std::pair<const char*, std::string>> given;
    for (const char* name : names) {
        if (auto v = optional_string(ctx.params, name)) {
            if (trimmed(*v).empty()) {
                throw invalid_params(field(name) + " must not be empty");
            }
            given.emplace_back(name, std::string(trimmed(*v)));
        }
    }
    if (given.empty()) {
        throw invalid_params("params.profile_url is required (or one of params.network_url, params.identifier, "
                             "params.profile_urn)");
    }
    if (given.size() > 1) {
        throw invalid_params(std::string("give exactly one of params.profile_url, params.network_url, "
                                         "params.identifier, params.profile_urn; got params.") +
                             given[0].first + " and params." + given[1].first);
    }
    const auto& [name, value] = given[0];
    std::string where = field(name);
    const person* found = nullptr;
    if (std::string_view(name) == "identifier") {
        if (value.find('/') != std::string::npos) {
            throw invalid_params("params.identifier must be a public id such as ada-lovelace-3f2a1b, not a URL; got " +
                                 quote_value(value));
        }
        found = person_by_public_id(ctx, fold_lower(value));
    } else if (std::string_view(name) == "profile_urn") {
        if (!member_number_from_urn(value)) {
            throw invalid_params("params.profile_urn is not a member urn (urn:li:member:<digits>), got " +
                                 quote_value(value));
        }
        found = value == world::member_urn(ctx.account.self) ? &ctx.account.self
                                                             : ctx.svc.world().find_by_member_urn(value);
    } else {
        found = person_by_url(ctx, where, value);
    }
    if (found == nullptr) {
        throw invalid_params(where + ": profile not found: " + quote_value(value));
    }
    return *found;
}

// A person named by a profile URL in a filter (connection_of, follower_of); nullptr when absent.
const person* filter_person(const action_context& ctx, const char* name) {
    auto url = optional_string(ctx.params, name);
    if (!url || trimmed(*url).empty()) {
        return nullptr;
    }
    const person* p = person_by_url(ctx, field(name), std::string(trimmed(*url)));
    if (p == nullptr) {
        throw invalid_params(field(name) + ": profile not found: " + quote_value(*url));
    }
    return p;
}

bool is_self(const action_context& ctx, const person& p) { return &p == &ctx.account.self; }

// ---------------------------------------------------------------------------------------------
// get_me, get, get_contact, visit

json get_me(action_context& ctx) {
    json data = ctx.svc.world().profile_record(ctx.account.self);
    ctx.charge(1);
    return data;
}

json get_profile(action_context& ctx) {
    const person& p = target_person(ctx);
    json data = ctx.svc.world().profile_record(p);
    data["member_distance"] = ctx.svc.world().member_distance(ctx.account, p);
    ctx.charge(1);
    return data;
}

json get_contact(action_context& ctx) {
    const person& p = target_person(ctx);
    std::string url = world::profile_url(p);
    json data = {{"public_id", p.public_id}, {"profile_url", url}, {"network_url", url},
                 {"email", p.email},         {"phone", p.phone},   {"website", p.website}};
    ctx.charge(1);
    return data;
}

json visit(action_context& ctx) {
    const person& p = target_person(ctx);
    if (is_self(ctx, p)) {
        throw invalid_params("the account cannot visit its own profile");
    }
    std::string url = world::profile_url(p);
    std::string at = iso8601_ms(ctx.now);
    ctx.charge(1);
    ctx.side_effect = true;
    ctx.svc.visit_records().push_back(json{{"account_id", ctx.account.id}, {"profile_url", url}, {"at", at}});
    return json{{"visited", true},
                {"profile_url", url},
                {"public_id", p.public_id},
                {"first_name", p.first_name},
                {"last_name", p.last_name},
                {"headline", p.headline},
                {"entity_urn", world::member_urn(p)},
                {"member_distance", ctx.svc.world().member_distance(ctx.account, p)},
                {"visited_at", at}};
}

// ---------------------------------------------------------------------------------------------
// Result windows: total_results, or start_page..end_page of 10 results.

struct result_window {
    std::size_t offset = 0;
    std::size_t limit = 0;
    bool pages = false;
    std::int64_t start_page = 0;
    std::int64_t end_page = 0;
};

result_window parse_window(const json& params, std::int64_t page_size = results_per_page) {
    const std::int64_t max_page = max_total_results / page_size;
    auto total = optional_int(params, "total_results", 1, max_total_results);
    auto start = optional_int(params, "start_page", 1, max_page);
    auto end = optional_int(params, "end_page", 1, max_page);
    result_window w;
    if (!start && !end) {
        w.limit = static_cast<std::size_t>(total.value_or(default_total_results));
        return w;
    }
    // Page mode: total_results is ignored (it was still type-checked above).
    w.pages = true;
    w.start_page = start.value_or(1);
    w.end_page = end.value_or(w.start_page);
    if (w.end_page < w.start_page) {
        throw invalid_params("params.end_page (" + std::to_string(w.end_page) +
                             ") must not be less than params.start_page (" + std::to_string(w.start_page) + ")");
    }
    w.offset = static_cast<std::size_t>((w.start_page - 1) * page_size);
    w.limit = static_cast<std::size_t>((w.end_page - w.start_page + 1) * page_size);
    return w;
}

// dialect_search_page_cap (api-facts 2.1 shows no pagination object; this is the capped
// reading): the reply says how far it got and where the caller continues. A partly returned
// last page counts as fetched.
void describe_capped_window(json& data, const result_window& w, std::size_t returned, std::size_t available) {
    bool more = available > w.offset + returned;
    std::int64_t start_page = w.pages ? w.start_page : 1;
    auto pages = static_cast<std::int64_t>((returned + capped_results_per_page - 1) / capped_results_per_page);
    std::int64_t end_page = pages == 0 ? start_page : start_page + pages - 1;
    data["total_results"] = returned;
    data["total_available_results"] = available;
    data["has_more"] = more;
    data["pagination"] = json{{"start_page", start_page},
                              {"end_page", end_page},
                              {"results_per_page", capped_results_per_page},
                              {"pages_fetched", pages},
                              {"has_more", more},
                              {"next_start_page", more ? json(end_page + 1) : json(nullptr)}};
}

// Fills total_results, total_available_results and (page mode) pagination.
void describe_window(json& data, const result_window& w, std::size_t returned, std::size_t available) {
    data["total_results"] = returned;
    data["total_available_results"] = available;
    if (w.pages) {
        auto shown_until = static_cast<std::size_t>(w.end_page * results_per_page);
        data["pagination"] = json{{"start_page", w.start_page},
                                  {"end_page", w.end_page},
                                  {"results_per_page", results_per_page},
                                  {"pages_fetched", (returned + results_per_page - 1) / results_per_page},
                                  {"has_more", available > shown_until}};
    }
}

template <typename Id>
std::pair<std::size_t, std::size_t> slice(const std::vector<Id>& ids, const result_window& w) {
    std::size_t begin = std::min(w.offset, ids.size());
    return {begin, std::min(ids.size(), begin + w.limit)};
}

// ---------------------------------------------------------------------------------------------
// search_people

std::vector<company_id> companies_named(const action_context& ctx, const char* name, bool allow_names) {
    std::vector<company_id> ids;
    for (const auto& [where, value] : named_values(ctx.params, name)) {
        auto text = trimmed(value);
        if (auto slug = slug_from_company_url(text)) {
            if (const company* c = ctx.svc.world().find_company_by_slug(*slug)) {
                ids.push_back(c->id);
            }
            continue;
        }
        bool looks_like_url = text.find('/') != std::string_view::npos || text.find("www.") == 0;
        if (!allow_names || looks_like_url || text.empty()) {
            throw invalid_params(where + " is not a company page URL (" + std::string(network_base_url) +
                                 "/company/<universal_name>), got " + quote_value(value));
        }
        // A company name: every company whose name contains it.
        std::string folded = fold_lower(text);
        for (const company& c : ctx.svc.world().companies()) {
            if (c.name_key.find(folded) != std::string::npos) {
                ids.push_back(c.id);
            }
        }
    }
    return ids;
}

std::vector<int> network_distances(const json& params) {
    std::vector<int> out;
    for (const auto& [where, value] : named_values(params, "network")) {
        std::string letter = fold_lower(trimmed(value));
        int d = letter == "f" ? 1 : letter == "s" ? 2 : letter == "o" ? 3 : 0;
        if (d == 0) {
            throw invalid_params(where + " must be F (1st degree), S (2nd) or O (3rd and beyond), got " +
                                 quote_value(value));
        }
        out.push_back(d);
    }
    return out;
}

people_query parse_people_query(const action_context& ctx) {
    const json& params = ctx.params;
    people_query q;
    if (auto k = optional_string(params, "keyword")) {
        q.keywords = fold_words(*k);
    }
    q.first_name = folded_text(params, "first_name");
    q.last_name = folded_text(params, "last_name");
    q.title = folded_text(params, "title");
    q.company_name = folded_text(params, "company_name");
    if (params.contains("company_url") && !params["company_url"].is_null()) {
        q.current_companies = companies_named(ctx, "company_url", false);
    }
    if (params.contains("past_company") && !params["past_company"].is_null()) {
        q.past_companies = companies_named(ctx, "past_company", true);
    }
    for (const auto& v : string_or_array(params, "location")) {
        if (!trimmed(v).empty()) {
            q.locations.push_back(make_location_term(v));
        }
    }
    if (params.contains("school_url") && !params["school_url"].is_null()) {
        q.schools.emplace();
        for (const auto& [where, value] : named_values(params, "school_url")) {
            auto slug = slug_from_school_url(value);
            if (!slug) {
                throw invalid_params(where + " is not a school page URL (" + std::string(network_base_url) +
                                     "/school/<slug>), got " + quote_value(value));
            }
            q.schools->push_back(*slug);
        }
    }
    q.industries = folded_values(params, "industry");
    q.distances = network_distances(params);
    q.connection_of = filter_person(ctx, "connection_of");
    q.follower_of = filter_person(ctx, "follower_of");
    return q;
}

const char* invitation_state(const account_state& account, person_id id) {
    auto it = account.relations.find(id);
    if (it == account.relations.end()) {
        return "CAN_INVITE";
    }
    switch (it->second.state) {
    case relation_state::connected: return "CONNECTED";
    case relation_state::pending_sent:
    case relation_state::pending_received: return "PENDING";
    default: return "CAN_INVITE";
    }
}

json search_people(action_context& ctx) {
    people_query q = parse_people_query(ctx);
    const auto cap = static_cast<std::size_t>(ctx.svc.cfg().dialect_search_page_cap);
    result_window w = parse_window(ctx.params, cap > 0 ? capped_results_per_page : results_per_page);
    if (cap > 0) {
        w.limit = std::min(w.limit, cap);
    }
    bool with_state = optional_bool(ctx.params, "fetch_invitation_state").value_or(false);
    const world& wd = ctx.svc.world();
    auto ids = wd.search_people(q, ctx.account);
    auto [begin, end] = slice(ids, w);
    json results = json::array();
    for (std::size_t i = begin; i < end; ++i) {
        const person& p = wd.at(ids[i]);
        json item = {{"public_id", p.public_id},
                     {"first_name", p.first_name},
                     {"last_name", p.last_name},
                     {"headline", p.headline},
                     {"location", p.location},
                     {"profile_picture_url", p.profile_picture_url},
                     {"network_url", world::profile_url(p)},
                     {"member_distance", wd.member_distance(ctx.account, p)}};
        if (with_state) {
            item["invitation_state"] = invitation_state(ctx.account, p.id);
        }
        results.push_back(std::move(item));
    }
    json data = {{"results", std::move(results)}};
    if (cap > 0) {
        describe_capped_window(data, w, end - begin, ids.size());
    } else {
        describe_window(data, w, end - begin, ids.size());
    }
    ctx.charge(list_cost(end - begin)); // only what this call returned
    return data;
}

// ---------------------------------------------------------------------------------------------
// search_companies, get_company

std::vector<std::string> company_sizes(const json& params) {
    std::vector<std::string> out;
    const auto& allowed = company_size_ranges();
    for (const auto& [where, value] : named_values(params, "company_size")) {
        // "10,001+" and " 11 - 50 " name the same buckets as "10001+" and "11-50".
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
            throw invalid_params(where + " must be one of " + list + "; got " + quote_value(value));
        }
        out.push_back(size);
    }
    return out;
}

json search_companies(action_context& ctx) {
    company_query q;
    if (auto k = optional_string(ctx.params, "keyword")) {
        q.keywords = fold_words(*k);
    }
    q.industries = folded_values(ctx.params, "industry");
    for (const auto& v : string_or_array(ctx.params, "location")) {
        if (!trimmed(v).empty()) {
            q.locations.push_back(make_location_term(v));
        }
    }
    q.sizes = company_sizes(ctx.params);
    q.sectors = folded_values(ctx.params, "sector");
    result_window w = parse_window(ctx.params);
    const world& wd = ctx.svc.world();
    auto ids = wd.search_companies(q);
    auto [begin, end] = slice(ids, w);
    json results = json::array();
    for (std::size_t i = begin; i < end; ++i) {
        const company& c = wd.company_at(ids[i]);
        results.push_back(json{{"name", c.name},
                               {"universal_name", c.universal_name},
                               {"company_url", world::company_url(c)},
                               {"industry", c.industry},
                               {"employee_count_range", c.size_range},
                               {"location", c.city + ", " + c.region + ", " + c.offices[0].country_name},
                               {"description", c.description}});
    }
    json data = {{"results", std::move(results)}};
    describe_window(data, w, end - begin, ids.size());
    ctx.charge(list_cost(end - begin));
    return data;
}

json get_company(action_context& ctx) {
    auto url = optional_string(ctx.params, "company_url");
    auto universal_name = optional_string(ctx.params, "universal_name");
    if (url && universal_name) {
        throw invalid_params("give either params.company_url or params.universal_name, not both");
    }
    if (!url && !universal_name) {
        throw invalid_params("params.company_url is required (or params.universal_name)");
    }
    const char* name = url ? "company_url" : "universal_name";
    std::string value(trimmed(url ? *url : *universal_name));
    if (value.empty()) {
        throw invalid_params(field(name) + " must not be empty");
    }
    const company* c = nullptr;
    if (url) {
        auto slug = slug_from_company_url(value);
        if (!slug) {
            throw invalid_params("params.company_url is not a company page URL (" + std::string(network_base_url) +
                                 "/company/<universal_name>), got " + quote_value(value));
        }
        c = ctx.svc.world().find_company_by_slug(*slug);
    } else {
        c = ctx.svc.world().find_company_by_slug(value);
    }
    if (c == nullptr) {
        throw invalid_params(field(name) + ": company not found: " + quote_value(value));
    }
    json data = ctx.svc.world().company_record(*c);
    ctx.charge(1);
    return data;
}

} // namespace

void register_profiles_actions(action_table& table) {
    table.add("profiles", "get_me", get_me);
    table.add("profiles", "get", get_profile);
    table.add("profiles", "get_contact", get_contact);
    table.add("profiles", "visit", visit);
    table.add("profiles", "search_people", search_people);
    table.add("profiles", "search_companies", search_companies);
    table.add("profiles", "get_company", get_company);
}

} // namespace orch::sandbox
