// Source hiring companies and company jobs (spec "Source hiring companies", "Get all company
// jobs"): the job postings of the world's companies on the two boards (board_network,
// board_general), scraped and filtered, with the V1 envelope and the top-level pagination and
// counters the spec documents.
//
// The postings are generated once, at the first call of either endpoint, from the seed: titles
// come from the jobs people of the same industry hold in the world, places from the company's
// offices, and posting times are ages counted back from the service clock at that moment, so
// hours_old filters as a live board would. Descriptions are rendered on demand: markdown on the
// hiring-companies endpoint, HTML on the company-jobs endpoint (spec).
#include "sandbox/v1_params.hpp"

#include "engine/time_format.hpp"

#include <algorithm>
#include <array>
#include <unordered_map>

namespace orch::sandbox {

namespace {

constexpr std::int64_t page_size = 10;               // companies per hiring page; jobs per company-jobs page
constexpr std::int64_t hiring_default_companies = 100;
constexpr std::int64_t hiring_max_companies = 1'000;
constexpr std::int64_t company_jobs_default = 100;
constexpr std::int64_t company_jobs_max = 2'000;     // spec: up to 2000 jobs per company
constexpr std::size_t hiring_jobs_shown_max = 50;    // jobs listed per company on the hiring endpoint
constexpr std::size_t company_names_max = 100;
constexpr std::size_t keywords_max = 50;
constexpr std::int64_t hours_old_max = 24 * 365;
constexpr int network_jobs_max = 2'400;              // a few giants post more than a scrape returns

enum class board : std::uint8_t { network, general };
enum class job_kind : std::uint8_t { unknown, fulltime, parttime, internship, contract };

const char* board_name(board b) { return b == board::network ? "board_network" : "board_general"; }

json kind_json(job_kind k) {
    switch (k) {
    case job_kind::fulltime: return "fulltime";
    case job_kind::parttime: return "parttime";
    case job_kind::internship: return "internship";
    case job_kind::contract: return "contract";
    case job_kind::unknown: break;
    }
    return nullptr;
}

// The world's seniorities (person::seniority), lowest first, and the board's words for them.
constexpr std::array<const char*, 7> seniorities = {"intern", "entry", "senior", "manager", "director", "vp", "cxo"};
constexpr std::array<const char*, 7> seniority_labels = {"Internship", "Entry level", "Mid-Senior level",
                                                         "Mid-Senior level", "Director", "Executive", "Executive"};

struct title_entry {
    std::string title;
    std::string folded;
    std::string function;
    std::size_t level = 0; // index in `seniorities`
};

struct job {
    std::uint64_t number = 0;    // id in the board URL
    time_point posted_at{};
    std::uint32_t title = 0;     // index in jobs_area::titles
    std::int32_t salary_min = 0; // 0: no salary shown
    std::int32_t salary_max = 0;
    std::uint8_t office = 0;     // index in company::offices
    board where = board::network;
    job_kind kind = job_kind::fulltime;
    bool remote = false;
};

// ---------------------------------------------------------------------------------------------
// Generation

struct jobs_area {
    explicit jobs_area(service& svc);

    std::vector<title_entry> titles;
    std::unordered_map<std::string, std::vector<std::string>> skills; // function -> skills seen
    std::vector<std::vector<job>> by_company;                          // newest first
    std::vector<std::vector<std::string>> office_keys;                 // folded "city, region, country"
    std::vector<bool> on_general_board;

private:
    void build_catalog(const world& wd, std::unordered_map<std::string, std::vector<std::uint32_t>>& pools,
                       std::vector<std::uint32_t>& all);
    void generate(const company& c, std::uint64_t seed, time_point base, const std::vector<std::uint32_t>& pool);
    job make_job(rng64& r, const company& c, const std::vector<std::uint32_t>& pool, board where, time_point base);
};

jobs_area::jobs_area(service& svc) {
    const world& wd = svc.world();
    std::unordered_map<std::string, std::vector<std::uint32_t>> pools; // industry -> title ids, by frequency
    std::vector<std::uint32_t> all;
    build_catalog(wd, pools, all);
    time_point base = svc.now();
    by_company.resize(wd.companies().size());
    on_general_board.resize(wd.companies().size(), false);
    for (const company& c : wd.companies()) {
        std::vector<std::string> keys;
        for (const auto& o : c.offices) {
            keys.push_back(fold_lower(o.city + ", " + o.region + ", " + o.country_name));
        }
        office_keys.push_back(std::move(keys));
        auto it = pools.find(c.industry);
        generate(c, svc.cfg().seed, base, it != pools.end() ? it->second : all);
    }
}

// Titles are the ones people of the world hold (founders aside), so jobs read like the world.
void jobs_area::build_catalog(const world& wd, std::unordered_map<std::string, std::vector<std::uint32_t>>& pools,
                              std::vector<std::uint32_t>& all) {
    std::unordered_map<std::string, std::uint32_t> ids;
    for (const person& p : wd.people()) {
        auto level = static_cast<std::size_t>(std::find(seniorities.begin(), seniorities.end(), p.seniority) -
                                              seniorities.begin());
        if (p.function.empty() || level >= seniorities.size() || p.title.find("Founder") != std::string::npos) {
            continue;
        }
        auto [it, fresh] = ids.emplace(p.title, static_cast<std::uint32_t>(titles.size()));
        if (fresh) {
            titles.push_back({p.title, fold_lower(p.title), p.function, level});
        }
        pools[wd.company_at(p.company).industry].push_back(it->second);
        all.push_back(it->second);
        auto& known = skills[p.function];
        for (const auto& s : p.skills) {
            if (known.size() < 12 && std::find(known.begin(), known.end(), s) == known.end()) {
                known.push_back(s);
            }
        }
    }
}

void jobs_area::generate(const company& c, std::uint64_t seed, time_point base,
                         const std::vector<std::uint32_t>& pool) {
    rng64 r(hash64("jobs:" + std::to_string(c.id), seed));
    if (pool.empty() || !r.chance(c.employee_count <= 50 ? 0.5 : 0.85)) {
        return; // not hiring
    }
    auto per_job = r.between(15, 45);
    auto network = std::clamp<std::int64_t>(c.employee_count / per_job + r.between(0, 2), 1, network_jobs_max);
    auto general = network * r.between(20, 60) / 100;
    auto& jobs = by_company[c.id];
    jobs.reserve(static_cast<std::size_t>(network + general));
    for (std::int64_t i = 0; i < network + general; ++i) {
        jobs.push_back(make_job(r, c, pool, i < network ? board::network : board::general, base));
    }
    on_general_board[c.id] = general > 0;
    std::sort(jobs.begin(), jobs.end(), [](const job& a, const job& b) {
        return a.posted_at != b.posted_at ? a.posted_at > b.posted_at : a.number < b.number;
    });
}

// The currency of salaries in an office's country; nullptr where the sandbox shows no salary.
const char* currency_of(const std::string& country) {
    if (country == "US") return "USD";
    if (country == "CA") return "CAD";
    if (country == "GB") return "GBP";
    if (country == "FR" || country == "DE" || country == "ES" || country == "IT" || country == "NL") return "EUR";
    return nullptr;
}

// Salaries by seniority: yearly ranges in thousands, monthly amounts for interns.
void draw_salary(rng64& r, job& j, std::size_t level, const std::string& country) {
    static constexpr std::array<std::pair<int, int>, 7> yearly_k = {
        {{0, 0}, {30, 45}, {50, 80}, {60, 95}, {90, 140}, {130, 200}, {150, 250}}};
    if (currency_of(country) == nullptr || !r.chance(j.where == board::general ? 0.6 : 0.3)) {
        return;
    }
    if (level == 0) {
        j.salary_min = static_cast<std::int32_t>(r.between(9, 15) * 100);
        j.salary_max = j.salary_min + static_cast<std::int32_t>(r.between(1, 4) * 100);
        return;
    }
    double scale = country == "US" || country == "CA" ? 1.4 : 1.0;
    auto low_k = static_cast<double>(r.between(yearly_k[level].first, yearly_k[level].second)) * scale;
    j.salary_min = static_cast<std::int32_t>(low_k) * 1000;
    j.salary_max = static_cast<std::int32_t>(low_k * static_cast<double>(r.between(110, 140)) / 100.0) * 1000;
}

job jobs_area::make_job(rng64& r, const company& c, const std::vector<std::uint32_t>& pool, board where,
                        time_point base) {
    job j;
    j.where = where;
    j.number = r.next();
    j.title = pool[r.next() % pool.size()];
    const title_entry& t = titles[j.title];
    j.office = static_cast<std::uint8_t>(c.offices.size() == 1 || r.chance(0.6)
                                             ? 0
                                             : r.between(0, static_cast<std::int64_t>(c.offices.size()) - 1));
    double u = r.unit();
    j.kind = t.level == 0 ? job_kind::internship
             : u < 0.82   ? job_kind::fulltime
             : u < 0.90   ? job_kind::contract
             : u < 0.96   ? job_kind::parttime
                          : job_kind::unknown;
    bool tech = t.function == "Engineering" || t.function == "Data" || t.function == "Design" ||
                t.function == "Product" || t.function == "IT";
    j.remote = r.chance(tech ? 0.25 : 0.08);
    // Ages: 15 % from the last day, 30 % from the last week, the rest up to 30 days old.
    double age = r.unit();
    std::int64_t minutes = age < 0.15 ? r.between(0, 24 * 60)
                           : age < 0.45 ? r.between(24 * 60, 7 * 24 * 60)
                                        : r.between(7 * 24 * 60, 30 * 24 * 60);
    j.posted_at = base - std::chrono::minutes(minutes);
    draw_salary(r, j, t.level, c.offices[j.office].country);
    return j;
}

// ---------------------------------------------------------------------------------------------
// Descriptions: one structure, rendered as markdown or HTML.

struct section {
    std::string heading;
    std::string paragraph;
    std::vector<std::string> bullets;
};

const std::array<const char*, 4>& duties_of(const std::string& function) {
    static const std::unordered_map<std::string, std::array<const char*, 4>> table = {
        {"Engineering",
         {"Design, build and run the services behind our product", "Review code and raise the quality bar of the team",
          "Work with product and design to ship features customers love",
          "Improve the reliability, performance and cost of our platform"}},
        {"Sales",
         {"Own a pipeline of new business from first call to signature", "Run discovery calls and tailored demos",
          "Forecast accurately and keep the CRM up to date",
          "Work with marketing on campaigns that open new accounts"}},
        {"Marketing",
         {"Plan and run campaigns that generate qualified demand",
          "Write content for our website, newsletter and social channels",
          "Measure every channel and move budget to what works", "Work with sales on messaging and positioning"}},
        {"Product",
         {"Own the roadmap of a product area and its outcomes",
          "Talk to customers every week and turn insights into specs",
          "Work with engineering and design from discovery to launch",
          "Define success metrics and follow them after release"}},
        {"Design",
         {"Design flows, screens and prototypes from idea to release", "Run user research and usability tests",
          "Grow and maintain our design system", "Work closely with product managers and engineers"}},
        {"Data",
         {"Build the pipelines and models the business relies on",
          "Turn questions from the teams into analyses and dashboards", "Design experiments and measure their impact",
          "Keep our data accurate, documented and secure"}},
        {"Finance",
         {"Own the monthly close and the reporting to management", "Build the budget and the forecast with each team",
          "Model scenarios for pricing, hiring and investment", "Work with auditors, banks and tax advisers"}},
        {"People",
         {"Run the employee lifecycle from onboarding to departure", "Design performance reviews and career paths",
          "Advise managers on people questions", "Keep HR processes compliant with local law"}},
        {"Recruiting",
         {"Run hiring processes from sourcing to offer", "Partner with hiring managers on role definitions",
          "Build a diverse pipeline through sourcing and referrals", "Make every candidate's experience a good one"}},
        {"Operations",
         {"Run and improve the processes that keep the company moving", "Manage vendors, budgets and tools",
          "Build dashboards that show how the business runs", "Lead cross-team projects from plan to delivery"}},
        {"Customer Success",
         {"Onboard new customers and get them to value quickly", "Own a portfolio of accounts and their renewals",
          "Turn customer feedback into product improvements", "Spot expansion opportunities with the sales team"}},
        {"Legal",
         {"Draft and negotiate commercial agreements", "Advise the teams on privacy, compliance and risk",
          "Manage the company's intellectual property", "Work with outside counsel on disputes and corporate matters"}},
        {"IT",
         {"Run the laptops, accounts and tools of a growing team", "Secure our systems and manage access rights",
          "Automate provisioning and support tasks", "Plan and run migrations to cloud services"}}};
    static const std::array<const char*, 4> generic = {
        "Own your area and its results", "Work with teams across the company", "Improve how we work every quarter",
        "Share what you learn with the team"};
    auto it = table.find(function);
    return it != table.end() ? it->second : generic;
}

std::string requirement_for(std::size_t level) {
    static constexpr std::array<const char*, 7> lines = {
        "Currently studying in a related field, or graduated within the last year",
        "Up to 2 years of experience in a similar role",
        "3+ years of experience in a similar role",
        "5+ years of experience, including 2 leading a team",
        "8+ years of experience, including several years leading managers",
        "10+ years of experience and a record of building teams",
        "15+ years of experience, including time on an executive team"};
    return lines[std::min(level, lines.size() - 1)];
}

std::string language_line(const std::string& country) {
    static const std::unordered_map<std::string, const char*> local = {
        {"FR", "French"}, {"DE", "German"}, {"ES", "Spanish"}, {"IT", "Italian"},
        {"NL", "Dutch"},  {"BR", "Portuguese"}, {"SE", "Swedish"}, {"IL", "Hebrew"}};
    auto it = local.find(country);
    return it == local.end() ? "Fluent English" : std::string("Fluent ") + it->second + " and good English";
}

std::string join_words(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
    }
    return out;
}

std::string role_paragraph(const company& c, const title_entry& t, const job& j) {
    const company_office& o = c.offices[j.office];
    bool vowel = std::string_view("AEIOU").find(t.title.front()) != std::string_view::npos;
    std::string text = c.name + " is hiring " + (vowel ? "an " : "a ") + t.title + " to join its " +
                       fold_lower(t.function) + " team in " + o.city + ", " + o.country_name + ".";
    if (j.remote) {
        text += " The role is open to remote work.";
    }
    switch (j.kind) {
    case job_kind::parttime: text += " This is a part-time position."; break;
    case job_kind::contract: text += " This is a fixed-term contract."; break;
    case job_kind::internship: text += " This is an internship of 6 months."; break;
    default: break;
    }
    return text;
}

std::vector<section> describe(const jobs_area& area, const company& c, const job& j) {
    static constexpr std::array<const char*, 8> benefits = {
        "Flexible working hours and remote days", "A yearly learning budget",
        "Health insurance for you and your family", "Meal vouchers", "Equity for every employee",
        "A modern office in the city centre", "Five weeks of paid holiday", "A public transport pass"};
    rng64 r(splitmix64(j.number));
    const title_entry& t = area.titles[j.title];
    std::vector<std::string> duties;
    for (const char* d : duties_of(t.function)) {
        duties.emplace_back(d);
    }
    duties.erase(duties.begin() + static_cast<std::ptrdiff_t>(r.next() % duties.size()));
    std::vector<std::string> skills;
    if (auto it = area.skills.find(t.function); it != area.skills.end()) {
        for (std::size_t i = 0; i < it->second.size() && skills.size() < 3; ++i) {
            const auto& s = it->second[(i + r.next() % it->second.size()) % it->second.size()];
            if (std::find(skills.begin(), skills.end(), s) == skills.end()) {
                skills.push_back(s);
            }
        }
    }
    std::vector<std::string> bring = {requirement_for(t.level)};
    if (!skills.empty()) {
        bring.push_back("Hands-on experience with " + join_words(skills));
    }
    bring.push_back(language_line(c.offices[j.office].country));
    std::vector<std::string> offer;
    auto first = r.next() % benefits.size();
    for (std::size_t i = 0; i < 3; ++i) {
        offer.emplace_back(benefits[(first + i * 3) % benefits.size()]);
    }
    return {{"About " + c.name, c.description, {}},
            {"The role", role_paragraph(c, t, j), {}},
            {"What you will do", "", std::move(duties)},
            {"What you bring", "", std::move(bring)},
            {"What we offer", "", std::move(offer)}};
}

std::string lead_line_place(const company& c, const job& j) {
    const company_office& o = c.offices[j.office];
    return o.city + ", " + o.country_name;
}

std::string markdown(const jobs_area& area, const company& c, const job& j) {
    std::string out = "**" + area.titles[j.title].title + "** at **" + c.name + "** · " + lead_line_place(c, j) + "\n";
    for (const auto& s : describe(area, c, j)) {
        out += "\n### " + s.heading + "\n";
        if (!s.paragraph.empty()) {
            out += s.paragraph + "\n";
        }
        for (const auto& b : s.bullets) {
            out += "- " + b + "\n";
        }
    }
    return out;
}

std::string html_escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string html(const jobs_area& area, const company& c, const job& j) {
    std::string out = "<p><strong>" + html_escape(area.titles[j.title].title) + "</strong> at <strong>" +
                      html_escape(c.name) + "</strong> · " + html_escape(lead_line_place(c, j)) + "</p>";
    for (const auto& s : describe(area, c, j)) {
        out += "<h3>" + html_escape(s.heading) + "</h3>";
        if (!s.paragraph.empty()) {
            out += "<p>" + html_escape(s.paragraph) + "</p>";
        }
        if (!s.bullets.empty()) {
            out += "<ul>";
            for (const auto& b : s.bullets) {
                out += "<li>" + html_escape(b) + "</li>";
            }
            out += "</ul>";
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Records

std::string job_url(const job& j) {
    if (j.where == board::network) {
        auto id = 3'000'000'000ULL + j.number % 1'000'000'000ULL; // ten digits, like the network's job ids
        return std::string(network_base_url) + "/jobs/view/" + std::to_string(id);
    }
    return "https://www.board-general.example/viewjob?jk=" + hex(j.number);
}

enum class description_format { none, markdown, html };

json job_json(const jobs_area& area, const company& c, const job& j, description_format format) {
    const title_entry& t = area.titles[j.title];
    const company_office& o = c.offices[j.office];
    json salary = nullptr;
    if (j.salary_min > 0) {
        salary = {{"min", j.salary_min},
                  {"max", j.salary_max},
                  {"currency", currency_of(o.country)},
                  {"type", t.level == 0 ? "monthly" : "yearly"}};
    }
    json description = nullptr;
    if (format == description_format::markdown) {
        description = markdown(area, c, j);
    } else if (format == description_format::html) {
        description = html(area, c, j);
    }
    std::string posted = iso8601_ms(j.posted_at);
    return json{{"job_title", t.title},
                {"location", o.city + ", " + o.region + ", " + o.country_name},
                {"job_type", kind_json(j.kind)},
                {"job_seniority", seniority_labels[t.level]},
                {"job_board", board_name(j.where)},
                {"job_board_url", job_url(j)},
                {"date_posted", posted.substr(0, 10)},
                {"posted_at", posted},
                {"description", std::move(description)},
                {"is_remote", j.remote},
                {"salary", std::move(salary)},
                {"sectors", format == description_format::none ? json::array() : json::array({c.industry})}};
}

// The company page on the general board, when the company posts there.
constexpr const char* general_board_base = "https://www.board-general.example/cmp/";

// The hiring-company record; the fields the spec ties to enrich_company are null without it.
json company_json(const jobs_area& area, const company& c, bool enrich, json jobs, std::size_t jobs_count) {
    json headquarter = nullptr;
    json locations = nullptr;
    if (enrich) {
        headquarter = {{"country", c.offices[0].country}, {"city", c.offices[0].city}};
        locations = json::array();
        for (std::size_t i = 0; i < c.offices.size(); ++i) {
            const company_office& o = c.offices[i];
            json address = {
                {"line1", o.line1}, {"city", o.city}, {"country", o.country}, {"postal_code", o.postal_code}};
            locations.push_back(json{{"address", std::move(address)}, {"headquarter", i == 0}});
        }
    }
    return json{
        {"name", c.name},
        {"website", c.website},
        {"network_url", world::company_url(c)},
        {"indeed_url", area.on_general_board[c.id] ? json(general_board_base + c.universal_name) : json(nullptr)},
        {"tagline", enrich && !c.tagline.empty() ? json(c.tagline) : json(nullptr)},
        {"description", c.description},
        {"logo", c.logo_url},
        {"cover_image", c.cover_image_url.empty() ? json(nullptr) : json(c.cover_image_url)},
        {"industry", c.industry},
        {"employee_count", c.employee_count},
        {"employee_count_range", {{"start", c.size_start}, {"end", c.size_end > 0 ? json(c.size_end) : json(nullptr)}}},
        {"organization_type", c.organization_type},
        {"headquarter", std::move(headquarter)},
        {"locations", std::move(locations)},
        {"followers_count", enrich ? json(c.followers) : json(nullptr)},
        {"jobs_count", jobs_count},
        {"jobs", std::move(jobs)}};
}

// ---------------------------------------------------------------------------------------------
// Filters and windows

struct job_filters {
    std::vector<std::string> title_keywords;         // folded phrases
    bool include_all = false;
    std::vector<std::string> excluded;               // folded phrases
    std::vector<std::vector<std::string>> description_keywords; // per value, its words
    std::optional<location_term> location;
    bool remote_only = false;
    std::optional<job_kind> kind;
    std::optional<std::int64_t> hours_old;
    std::string country;                             // code; empty: any
    std::array<bool, 2> boards = {true, true};       // by board
};

std::vector<std::string> folded_list(const json& body, const char* name) {
    std::vector<std::string> out;
    for (const auto& v : v1::text_list(body, name, keywords_max)) {
        out.push_back(fold_lower(v));
    }
    return out;
}

job_kind parse_kind(const std::string& value) {
    std::string v = fold_lower(value);
    if (v == "fulltime") return job_kind::fulltime;
    if (v == "parttime") return job_kind::parttime;
    if (v == "internship") return job_kind::internship;
    if (v == "contract") return job_kind::contract;
    throw invalid_params("job_type must be one of fulltime, parttime, internship, contract; got " + v1::quoted(value));
}

// The filters both endpoints share.
job_filters parse_common_filters(const json& body) {
    job_filters f;
    f.title_keywords = folded_list(body, "job_title");
    f.include_all = v1::optional_bool(body, "job_title_include_all").value_or(false);
    f.excluded = folded_list(body, "job_title_excluded");
    if (auto loc = v1::optional_text(body, "location"); loc && !loc->empty()) {
        f.location = make_location_term(*loc);
    }
    f.remote_only = v1::optional_bool(body, "is_remote").value_or(false);
    if (auto kind = v1::optional_text(body, "job_type"); kind && !kind->empty()) {
        f.kind = parse_kind(*kind);
    }
    f.hours_old = v1::optional_int(body, "hours_old", 1, hours_old_max);
    return f;
}

std::string country_code(const json& body) {
    static constexpr std::array<std::pair<const char*, const char*>, 7> allowed = {
        {{"france", "FR"}, {"usa", "US"}, {"uk", "GB"}, {"germany", "DE"}, {"spain", "ES"}, {"italy", "IT"},
         {"canada", "CA"}}};
    auto given = v1::optional_text(body, "country");
    std::string value = fold_lower(given && !given->empty() ? *given : "france");
    for (const auto& [name, code] : allowed) {
        if (value == name) {
            return code;
        }
    }
    throw invalid_params("country must be one of france, usa, uk, germany, spain, italy, canada; got " +
                         v1::quoted(*given));
}

std::array<bool, 2> parse_boards(const json& body) {
    if (!body.contains("site_names") || body["site_names"].is_null()) {
        return {true, true};
    }
    std::array<bool, 2> boards = {false, false};
    for (const auto& name : v1::text_list(body, "site_names", keywords_max)) {
        if (name == "board_network") {
            boards[0] = true;
        } else if (name == "board_general") {
            boards[1] = true;
        } else {
            throw invalid_params("site_names may only contain board_network and board_general; got " +
                                 v1::quoted(name));
        }
    }
    if (!boards[0] && !boards[1]) {
        throw invalid_params("site_names must name at least one job board (board_network, board_general)");
    }
    return boards;
}

bool contains_phrase(const std::string& folded, const std::vector<std::string>& phrases, bool all) {
    auto hit = [&](const std::string& p) { return folded.find(p) != std::string::npos; };
    return all ? std::all_of(phrases.begin(), phrases.end(), hit) : std::any_of(phrases.begin(), phrases.end(), hit);
}

bool job_matches(const jobs_area& area, const company& c, const job& j, const job_filters& f, time_point now) {
    const title_entry& t = area.titles[j.title];
    const company_office& o = c.offices[j.office];
    if (!f.boards[static_cast<std::size_t>(j.where)] || (!f.country.empty() && o.country != f.country) ||
        (f.remote_only && !j.remote) || (f.kind && j.kind != *f.kind)) {
        return false;
    }
    if (f.hours_old && now - j.posted_at > std::chrono::hours(*f.hours_old)) {
        return false;
    }
    if ((!f.title_keywords.empty() && !contains_phrase(t.folded, f.title_keywords, f.include_all)) ||
        (!f.excluded.empty() && contains_phrase(t.folded, f.excluded, false))) {
        return false;
    }
    if (f.location) {
        bool hit = f.location->country_code ? fold_lower(o.country) == f.location->folded
                                            : area.office_keys[c.id][j.office].find(f.location->folded) !=
                                                  std::string::npos;
        if (!hit) {
            return false;
        }
    }
    if (!f.description_keywords.empty()) {
        std::string text = fold_lower(markdown(area, c, j));
        return std::any_of(f.description_keywords.begin(), f.description_keywords.end(),
                           [&](const auto& words) { return v1::has_all_words(text, words); });
    }
    return true;
}

// A window over a list: total_results from the first page, or the pages start_page..end_page
// (end_page defaults to start_page) of `page_size` items.
struct result_window {
    std::size_t offset = 0;
    std::size_t limit = 0;
    std::int64_t start_page = 1;
    std::int64_t end_page = 1;
};

result_window parse_window(const json& body, std::int64_t default_total, std::int64_t max_total) {
    auto total = v1::optional_int(body, "total_results", 1, max_total);
    auto start = v1::optional_int(body, "start_page", 1, max_total / page_size);
    auto end = v1::optional_int(body, "end_page", 1, max_total / page_size);
    result_window w;
    if (!start && !end) {
        w.limit = static_cast<std::size_t>(total.value_or(default_total));
        w.end_page = (static_cast<std::int64_t>(w.limit) + page_size - 1) / page_size;
        return w;
    }
    w.start_page = start.value_or(1);
    w.end_page = end.value_or(w.start_page);
    if (w.end_page < w.start_page) {
        throw invalid_params("end_page (" + std::to_string(w.end_page) + ") must not be less than start_page (" +
                             std::to_string(w.start_page) + ")");
    }
    w.offset = static_cast<std::size_t>((w.start_page - 1) * page_size);
    w.limit = static_cast<std::size_t>((w.end_page - w.start_page + 1) * page_size);
    return w;
}

json pagination_json(const result_window& w, std::size_t fetched_items, bool has_more) {
    return json{{"start_page", w.start_page},
                {"end_page", w.end_page},
                {"results_per_page", page_size},
                {"pages_fetched", (fetched_items + page_size - 1) / page_size},
                {"has_more", has_more}};
}

void put_counters(v1_context& ctx, json pagination, std::size_t companies, std::size_t jobs) {
    ctx.top_level["pagination"] = std::move(pagination);
    ctx.top_level["credits_cost"] = ctx.charged;
    ctx.top_level["credits_remaining"] = ctx.key.credits;
    ctx.top_level["nb_companies"] = companies;
    ctx.top_level["nb_jobs"] = jobs;
}

// ---------------------------------------------------------------------------------------------
// Source hiring companies

struct hiring_request {
    job_filters filters;
    result_window window;
    bool fetch_description = true;
    bool enrich = false;
};

hiring_request parse_hiring(const json& body) {
    hiring_request h;
    h.filters = parse_common_filters(body);
    for (const auto& v : v1::text_list(body, "job_description", keywords_max)) {
        h.filters.description_keywords.push_back(fold_words(v));
    }
    if (h.filters.title_keywords.empty() && h.filters.description_keywords.empty() && !h.filters.location) {
        throw invalid_params("at least one of job_title, job_description, location is required");
    }
    h.filters.country = country_code(body);
    h.filters.boards = parse_boards(body);
    h.window = parse_window(body, hiring_default_companies, hiring_max_companies);
    h.fetch_description = v1::optional_bool(body, "fetch_description").value_or(true);
    h.enrich = v1::optional_bool(body, "enrich_company").value_or(false);
    return h;
}

struct company_hits {
    company_id company = 0;
    std::vector<const job*> jobs; // newest first
};

json hiring_companies(v1_context& ctx) {
    hiring_request h = parse_hiring(ctx.body);
    const world& wd = ctx.svc.world();
    const auto& area = ctx.svc.area<jobs_area>();
    std::vector<company_hits> hits;
    for (const company& c : wd.companies()) {
        company_hits ch{c.id, {}};
        for (const job& j : area.by_company[c.id]) {
            if (job_matches(area, c, j, h.filters, ctx.now)) {
                ch.jobs.push_back(&j);
            }
        }
        if (!ch.jobs.empty()) {
            hits.push_back(std::move(ch));
        }
    }
    // The most recently hiring companies first, as a board's "newest" ordering shows them.
    std::stable_sort(hits.begin(), hits.end(), [](const company_hits& a, const company_hits& b) {
        return a.jobs.front()->posted_at > b.jobs.front()->posted_at;
    });
    std::size_t begin = std::min(h.window.offset, hits.size());
    std::size_t end = std::min(hits.size(), begin + h.window.limit);
    auto format = h.fetch_description ? description_format::markdown : description_format::none;
    json companies = json::array();
    std::size_t nb_jobs = 0;
    for (std::size_t i = begin; i < end; ++i) {
        const company& c = wd.company_at(hits[i].company);
        json jobs = json::array();
        for (std::size_t k = 0; k < hits[i].jobs.size() && k < hiring_jobs_shown_max; ++k) {
            jobs.push_back(job_json(area, c, *hits[i].jobs[k], format));
        }
        nb_jobs += jobs.size();
        companies.push_back(company_json(area, c, h.enrich, std::move(jobs), hits[i].jobs.size()));
    }
    std::size_t n = end - begin;
    auto n_credits = static_cast<std::int64_t>(n);
    ctx.charge(v1::per_ten_or_zero(n) + (h.fetch_description ? v1::per_ten_or_zero(n) : 0) +
               (h.enrich ? n_credits : 0));
    put_counters(ctx, pagination_json(h.window, n, hits.size() > end), n, nb_jobs);
    return json{{"companies", std::move(companies)}};
}

// ---------------------------------------------------------------------------------------------
// Company jobs

// A company named by its name (exact, any case or accents), its universal name, its page URL,
// or else the first company (in id order) whose name contains the text.
const company* company_named(const world& wd, const std::string& text) {
    if (auto slug = slug_from_company_url(text)) {
        return wd.find_company_by_slug(*slug);
    }
    std::string folded = fold_lower(text);
    for (const company& c : wd.companies()) {
        if (c.name_key == folded) {
            return &c;
        }
    }
    if (const company* c = wd.find_company_by_slug(folded)) {
        return c;
    }
    for (const company& c : wd.companies()) {
        if (c.name_key.find(folded) != std::string::npos) {
            return &c;
        }
    }
    return nullptr;
}

std::vector<const company*> requested_companies(v1_context& ctx) {
    auto it = ctx.body.find("company_names");
    if (it == ctx.body.end() || it->is_null()) {
        throw invalid_params("company_names is required");
    }
    auto names = v1::text_list(ctx.body, "company_names", company_names_max);
    if (names.empty()) {
        throw invalid_params("company_names must name at least one company");
    }
    std::vector<const company*> out;
    std::vector<std::string> unknown;
    for (const auto& name : names) {
        const company* c = company_named(ctx.svc.world(), name);
        if (c == nullptr) {
            unknown.push_back(v1::quoted(name));
        } else if (std::find(out.begin(), out.end(), c) == out.end()) {
            out.push_back(c);
        }
    }
    if (!unknown.empty()) {
        std::string list;
        for (const auto& u : unknown) {
            list += (list.empty() ? "" : ", ") + u;
        }
        ctx.message = "company not found: " + list;
    }
    return out;
}

json company_jobs(v1_context& ctx) {
    auto wanted = requested_companies(ctx);
    job_filters filters = parse_common_filters(ctx.body);
    filters.boards = {true, false}; // only the network's board is scraped (spec)
    result_window w = parse_window(ctx.body, company_jobs_default, company_jobs_max);
    bool fetch_description = v1::optional_bool(ctx.body, "fetch_description").value_or(true);
    bool enrich = v1::optional_bool(ctx.body, "enrich_company").value_or(false);
    const auto& area = ctx.svc.area<jobs_area>();
    auto format = fetch_description ? description_format::html : description_format::none;
    json companies = json::array();
    std::size_t nb_jobs = 0;
    std::size_t most_fetched = 0;
    bool has_more = false;
    for (const company* c : wanted) {
        std::vector<const job*> matching;
        for (const job& j : area.by_company[c->id]) {
            if (matching.size() < static_cast<std::size_t>(company_jobs_max) &&
                job_matches(area, *c, j, filters, ctx.now)) {
                matching.push_back(&j);
            }
        }
        std::size_t begin = std::min(w.offset, matching.size());
        std::size_t end = std::min(matching.size(), begin + w.limit);
        json jobs = json::array();
        for (std::size_t k = begin; k < end; ++k) {
            jobs.push_back(job_json(area, *c, *matching[k], format));
        }
        nb_jobs += end - begin;
        most_fetched = std::max(most_fetched, end - begin);
        has_more = has_more || matching.size() > end;
        companies.push_back(company_json(area, *c, enrich, std::move(jobs), matching.size()));
    }
    auto n = wanted.size();
    if (nb_jobs > 0) {
        ctx.charge(v1::per_ten_or_zero(nb_jobs) + (fetch_description ? v1::per_ten_or_zero(n) : 0) +
                   (enrich ? static_cast<std::int64_t>(n) : 0));
    }
    put_counters(ctx, pagination_json(w, most_fetched, has_more), n, nb_jobs);
    return json{{"companies", std::move(companies)}};
}

} // namespace

void register_v1_jobs_routes(v1_table& table) {
    table.add("POST", "/v1/data/jobs/hiring-companies", "hiring_companies", hiring_companies);
    table.add("POST", "/v1/data/jobs/company-jobs", "company_jobs", company_jobs);
}

} // namespace orch::sandbox
