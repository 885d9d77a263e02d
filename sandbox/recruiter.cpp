// /v2/recruiter: get_posts, get_candidates, get_cv, publish_job, close_job.
//
// Only accounts with a recruiter seat may use it; others get CHANNEL_ERROR (spec: "missing
// premium seat"). The sandbox's rule: a network account has a seat when its login token (or
// e-mail, for e-mail logins) contains "recruiter", in any case. A seat holder has job postings
// at its owner's company, seeded on first use (two open, one closed, each with applicants drawn
// from the world), plus the ones it publishes. Handlers validate params, check the seat, look
// the target up, charge (1 credit; lists 1 per 10 results) and only then change anything.
#include "sandbox/service.hpp"

#include "engine/time_format.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

namespace orch::sandbox {

namespace {

constexpr std::uint64_t jobs_salt = 0x6a6f6273'00000011ULL;
constexpr std::size_t title_max_chars = 100;
constexpr std::size_t description_max_chars = 10'000;
constexpr std::int64_t count_max = 100;
constexpr std::int64_t offset_max = 1'000'000;

constexpr std::array<std::string_view, 8> seeded_titles = {
    "Software Engineer",     "Account Executive", "Product Manager",    "Data Analyst",
    "Marketing Manager",     "DevOps Engineer",   "HR Business Partner", "Customer Success Manager",
};
constexpr std::array<std::string_view, 4> application_statuses = {"NEW", "REVIEWED", "SHORTLISTED", "REJECTED"};
constexpr std::array<std::string_view, 3> workplace_types = {"ON_SITE", "HYBRID", "REMOTE"};
constexpr std::array<std::string_view, 7> employment_types = {"FULL_TIME", "PART_TIME", "CONTRACT", "TEMPORARY",
                                                              "INTERNSHIP", "VOLUNTEER", "OTHER"};

struct applicant {
    person_id who = 0;
    time_point applied_at{};
    std::string status;
};

struct job_posting {
    std::string job_id;              // 10 digits, as on the network
    std::string title;
    std::string description;
    std::string location;
    std::optional<company_id> company; // a page of the world, or none for a free-text company name
    std::string company_name;
    std::string workplace_type = "ON_SITE";
    std::string employment_type = "FULL_TIME";
    bool open = true;
    time_point created_at{};
    time_point closed_at{};
    std::vector<applicant> applicants; // oldest first
};

std::string in_quotes(std::string_view text) {
    constexpr std::size_t max_chars = 120;
    return "'" + std::string(text.substr(0, max_chars)) + (text.size() > max_chars ? "...'" : "'");
}

std::string lower(std::string s) {
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

std::size_t utf8_length(std::string_view text) {
    std::size_t n = 0;
    for (unsigned char c : text) {
        n += (c & 0xC0) != 0x80 ? 1 : 0;
    }
    return n;
}

// Job postings per account, seeded on an account's first recruiter request.
struct recruiter_state {
    explicit recruiter_state(service& s) : svc(s) {}

    std::vector<job_posting>& jobs_of(const account_state& account) {
        auto [it, inserted] = jobs.try_emplace(account.id);
        if (inserted) {
            seed_jobs(account, it->second);
        }
        return it->second;
    }

    std::string next_job_id() {
        ++counter;
        return std::to_string(3'900'000'000ULL + counter * 1'000 +
                              splitmix64(svc.cfg().seed ^ jobs_salt ^ counter) % 1'000);
    }

    service& svc;
    std::map<std::string, std::vector<job_posting>> jobs;
    std::uint64_t counter = 0;

private:
    void seed_jobs(const account_state& account, std::vector<job_posting>& out) {
        const world& wd = svc.world();
        const company& employer = wd.company_at(account.self.company);
        rng64 r(hash64("jobs:" + account.id, svc.cfg().seed ^ jobs_salt));
        auto now = svc.now();
        for (int k = 0; k < 3; ++k) {
            job_posting j;
            j.job_id = std::to_string(3'700'000'000ULL + r.next() % 100'000'000ULL);
            j.title = std::string(seeded_titles[r.next() % seeded_titles.size()]);
            j.company = employer.id;
            j.company_name = employer.name;
            j.location = employer.city + ", " + employer.offices[0].country_name;
            j.workplace_type = std::string(workplace_types[r.next() % workplace_types.size()]);
            j.description = employer.name + " is looking for a " + j.title + " in " + employer.city + ". " +
                            employer.description;
            j.created_at = now - std::chrono::hours(24 * r.between(5, 40));
            j.open = k < 2;
            if (!j.open) {
                j.closed_at = j.created_at + std::chrono::hours(24 * 3);
            }
            auto age_h = std::chrono::duration_cast<std::chrono::hours>(now - j.created_at).count();
            auto n = r.between(5, 25);
            for (std::int64_t a = 0; a < n; ++a) {
                applicant ap;
                ap.who = static_cast<person_id>(r.next() % wd.people().size());
                if (std::any_of(j.applicants.begin(), j.applicants.end(),
                                [&](const applicant& x) { return x.who == ap.who; })) {
                    continue;
                }
                ap.applied_at = j.created_at + std::chrono::hours(1 + (age_h - 1) * (a + 1) / (n + 1));
                ap.status = std::string(application_statuses[r.next() % application_statuses.size()]);
                j.applicants.push_back(std::move(ap));
            }
            out.push_back(std::move(j));
        }
    }
};

bool has_seat(const account_state& account) {
    if (account.platform != "network") {
        return false;
    }
    return lower(account.login_token).find("recruiter") != std::string::npos ||
           lower(account.email).find("recruiter") != std::string::npos;
}

void require_seat(const action_context& ctx) {
    if (!has_seat(ctx.account)) {
        throw channel_error("account '" + ctx.account.id + "' has no recruiter seat; the recruiter functions need one");
    }
}

// A job id as given: a string of digits or an integer.
std::optional<std::string> job_id_param(const json& params) {
    auto it = params.find("job_id");
    if (it == params.end() || it->is_null()) {
        return std::nullopt;
    }
    if (it->is_number_unsigned() || (it->is_number_integer() && it->get<std::int64_t>() >= 0)) {
        return std::to_string(it->get<std::uint64_t>());
    }
    if (it->is_string()) {
        const auto& s = it->get_ref<const std::string&>();
        if (!s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos) {
            return s;
        }
        throw invalid_params("params.job_id must be a job id (digits), got " + in_quotes(s));
    }
    throw invalid_params("params.job_id must be a job id (a string of digits or an integer)");
}

std::string require_job_id(const json& params) {
    auto id = job_id_param(params);
    if (!id) {
        throw invalid_params("params.job_id is required");
    }
    return *id;
}

job_posting& find_job(std::vector<job_posting>& jobs, const std::string& id) {
    for (auto& j : jobs) {
        if (j.job_id == id) {
            return j;
        }
    }
    throw invalid_params("params.job_id: job not found among this account's job postings: " + in_quotes(id));
}

json job_json(const service& svc, const job_posting& j) {
    json company = {{"name", j.company_name}, {"company_url", nullptr}};
    if (j.company) {
        company["company_url"] = world::company_url(svc.world().company_at(*j.company));
    }
    return json{{"job_id", j.job_id},
                {"job_url", std::string(network_base_url) + "/jobs/view/" + j.job_id},
                {"title", j.title},
                {"company", std::move(company)},
                {"location", j.location},
                {"workplace_type", j.workplace_type},
                {"employment_type", j.employment_type},
                {"description", j.description},
                {"state", j.open ? "OPEN" : "CLOSED"},
                {"created_at", iso8601_s(j.created_at)},
                {"closed_at", j.open ? json(nullptr) : json(iso8601_s(j.closed_at))},
                {"applicants_count", j.applicants.size()}};
}

// count (1..100, default 10) and offset, as the network's list actions.
std::pair<std::size_t, std::size_t> read_page(const json& params) {
    auto count = static_cast<std::size_t>(optional_int(params, "count", 1, count_max).value_or(10));
    auto offset = static_cast<std::size_t>(optional_int(params, "offset", 0, offset_max).value_or(0));
    return {offset, count};
}

json pagination(std::size_t offset, std::size_t count, std::size_t returned, std::size_t available) {
    bool more = offset + returned < available;
    return json{{"offset", offset},
                {"count", count},
                {"next_offset", more ? json(offset + returned) : json(nullptr)},
                {"has_more", more},
                {"results_per_page", count},
                {"pages_fetched", returned > 0 ? 1 : 0}};
}

// ---------------------------------------------------------------------------------------------
// Handlers

json get_posts(action_context& ctx) {
    auto state = optional_string(ctx.params, "state").value_or("ALL");
    std::string upper = state;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    if (upper != "ALL" && upper != "OPEN" && upper != "CLOSED") {
        throw invalid_params("params.state must be OPEN, CLOSED or ALL, got " + in_quotes(state));
    }
    auto [offset, count] = read_page(ctx.params);
    require_seat(ctx);
    auto& jobs = ctx.svc.area<recruiter_state>().jobs_of(ctx.account);
    std::vector<const job_posting*> listed;
    for (const auto& j : jobs) {
        if (upper == "ALL" || (upper == "OPEN") == j.open) {
            listed.push_back(&j);
        }
    }
    std::stable_sort(listed.begin(), listed.end(),
                     [](const job_posting* a, const job_posting* b) { return a->created_at > b->created_at; });
    json items = json::array();
    for (std::size_t i = offset; i < listed.size() && i < offset + count; ++i) {
        items.push_back(job_json(ctx.svc, *listed[i]));
    }
    std::size_t returned = items.size();
    ctx.charge(list_cost(returned));
    return json{{"posts", std::move(items)},
                {"total_results", returned},
                {"total_available_results", listed.size()},
                {"pagination", pagination(offset, count, returned, listed.size())}};
}

json candidate_json(const service& svc, const applicant& a) {
    const person& p = svc.world().at(a.who);
    return json{{"candidate_id", std::to_string(p.urn_number)},
                {"profile_url", world::profile_url(p)},
                {"public_id", p.public_id},
                {"first_name", p.first_name},
                {"last_name", p.last_name},
                {"headline", p.headline},
                {"location", p.location},
                {"applied_at", iso8601_s(a.applied_at)},
                {"status", a.status},
                {"has_cv", true}};
}

json get_candidates(action_context& ctx) {
    std::string id = require_job_id(ctx.params);
    auto [offset, count] = read_page(ctx.params);
    require_seat(ctx);
    const job_posting& j = find_job(ctx.svc.area<recruiter_state>().jobs_of(ctx.account), id);
    json items = json::array();
    // Newest applications first, as a recruiter inbox shows them.
    for (std::size_t k = offset; k < j.applicants.size() && k < offset + count; ++k) {
        items.push_back(candidate_json(ctx.svc, j.applicants[j.applicants.size() - 1 - k]));
    }
    std::size_t returned = items.size();
    ctx.charge(list_cost(returned));
    return json{{"job_id", j.job_id},
                {"candidates", std::move(items)},
                {"total_results", returned},
                {"total_available_results", j.applicants.size()},
                {"pagination", pagination(offset, count, returned, j.applicants.size())}};
}

json get_cv(action_context& ctx) {
    const std::string& url = require_string(ctx.params, "profile_url");
    auto job = job_id_param(ctx.params);
    const person* p = ctx.svc.world().find_by_profile_url(url);
    if (p == nullptr && !public_id_from_profile_url(url)) {
        throw invalid_params("params.profile_url is not a profile URL of the network (" +
                             std::string(network_base_url) + "/in/<public_id>), got " + in_quotes(url));
    }
    if (p == nullptr) {
        throw invalid_params("params.profile_url: profile not found: " + in_quotes(url));
    }
    require_seat(ctx);
    auto& jobs = ctx.svc.area<recruiter_state>().jobs_of(ctx.account);
    if (job) {
        find_job(jobs, *job); // an unknown job is named as such, before "no application"
    }
    const job_posting* applied_to = nullptr;
    const applicant* application = nullptr;
    for (const auto& j : jobs) {
        if (job && j.job_id != *job) {
            continue;
        }
        for (const auto& a : j.applicants) {
            if (a.who == p->id && application == nullptr) {
                applied_to = &j;
                application = &a;
            }
        }
    }
    if (application == nullptr) {
        throw invalid_params("params.profile_url: no application from this profile to " +
                             (job ? "job " + *job : std::string("this account's job postings")) +
                             "; a CV is only available for candidates");
    }
    json profile = ctx.svc.world().profile_record(*p);
    std::string file_stem = p->first_name + "_" + p->last_name + "_CV";
    json cv = {{"filename", file_stem + ".pdf"},
               {"content_type", "application/pdf"},
               {"url", "https://media.network.example/cv/" + applied_to->job_id + "/" + p->public_id + ".pdf"},
               {"size_bytes", 40'000 + hash64(p->public_id, ctx.svc.cfg().seed) % 200'000}};
    json resume = {{"first_name", p->first_name}, {"last_name", p->last_name}, {"headline", p->headline},
                   {"location", p->location},     {"email", p->email},         {"phone", p->phone},
                   {"summary", p->summary},       {"experience", profile["experience"]},
                   {"education", profile["education"]}, {"skills", profile["skills"]}};
    ctx.charge(1);
    return json{{"job_id", applied_to->job_id},
                {"profile_url", world::profile_url(*p)},
                {"applied_at", iso8601_s(application->applied_at)},
                {"cv", std::move(cv)},
                {"resume", std::move(resume)}};
}

std::string one_of(const json& params, const char* name, const auto& allowed, std::string_view fallback) {
    auto v = optional_string(params, name);
    if (!v) {
        return std::string(fallback);
    }
    std::string upper = *v;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    for (auto a : allowed) {
        if (upper == a) {
            return upper;
        }
    }
    std::string list;
    for (auto a : allowed) {
        list += (list.empty() ? "" : ", ") + std::string(a);
    }
    throw invalid_params(std::string("params.") + name + " must be one of " + list + "; got " + in_quotes(*v));
}

void check_length(const char* name, const std::string& text, std::size_t max) {
    if (utf8_length(text) > max) {
        throw invalid_params(std::string("params.") + name + " is too long: " + std::to_string(utf8_length(text)) +
                             " characters, at most " + std::to_string(max));
    }
}

// `company`: a company page URL, or a name (a page of the world with that exact name, else free
// text); the owner's current company when absent.
void set_company(const action_context& ctx, job_posting& j) {
    const world& wd = ctx.svc.world();
    auto given = optional_string(ctx.params, "company");
    if (!given || given->find_first_not_of(" \t") == std::string::npos) {
        const company& c = wd.company_at(ctx.account.self.company);
        j.company = c.id;
        j.company_name = c.name;
        return;
    }
    if (given->find('/') != std::string::npos) {
        auto slug = slug_from_company_url(*given);
        const company* c = slug ? wd.find_company_by_slug(*slug) : nullptr;
        if (!slug) {
            throw invalid_params("params.company is neither a company name nor a company page URL (" +
                                 std::string(network_base_url) + "/company/<universal_name>): " + in_quotes(*given));
        }
        if (c == nullptr) {
            throw invalid_params("params.company: company not found: " + in_quotes(*given));
        }
        j.company = c->id;
        j.company_name = c->name;
        return;
    }
    std::string key = fold_lower(*given);
    for (const company& c : wd.companies()) {
        if (c.name_key == key) {
            j.company = c.id;
            j.company_name = c.name;
            return;
        }
    }
    j.company_name = *given;
}

json publish_job(action_context& ctx) {
    job_posting j;
    j.title = require_string(ctx.params, "title");
    check_length("title", j.title, title_max_chars);
    j.description = require_string(ctx.params, "description");
    check_length("description", j.description, description_max_chars);
    set_company(ctx, j);
    auto location = optional_string(ctx.params, "location");
    j.location = location && !location->empty() ? *location : ctx.account.self.location;
    j.workplace_type = one_of(ctx.params, "workplace_type", workplace_types, "ON_SITE");
    j.employment_type = one_of(ctx.params, "employment_type", employment_types, "FULL_TIME");
    require_seat(ctx);
    auto& state = ctx.svc.area<recruiter_state>();
    auto& jobs = state.jobs_of(ctx.account);
    ctx.charge(1);
    ctx.side_effect = true;
    j.job_id = state.next_job_id();
    j.created_at = ctx.now;
    jobs.push_back(std::move(j));
    return job_json(ctx.svc, jobs.back());
}

json close_job(action_context& ctx) {
    std::string id = require_job_id(ctx.params);
    require_seat(ctx);
    job_posting& j = find_job(ctx.svc.area<recruiter_state>().jobs_of(ctx.account), id);
    ctx.charge(1);
    bool was_open = j.open;
    if (was_open) {
        // Closing is idempotent: a closed job stays closed, with its first closing time.
        ctx.side_effect = true;
        j.open = false;
        j.closed_at = ctx.now;
    }
    json data = job_json(ctx.svc, j);
    data["was_open"] = was_open;
    return data;
}

} // namespace

void register_recruiter_actions(action_table& table) {
    table.add("recruiter", "get_posts", get_posts);
    table.add("recruiter", "get_candidates", get_candidates);
    table.add("recruiter", "get_cv", get_cv);
    table.add("recruiter", "publish_job", publish_job);
    table.add("recruiter", "close_job", close_job);
}

} // namespace orch::sandbox
