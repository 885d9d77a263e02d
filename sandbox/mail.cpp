// /v2/mail (and its alias /v2/enrich): find_email, reverse_email, validate_email, over the
// world's people and company domains.
//
// Every person has a work address "<first>.<last>@<employer domain>" (names folded to ASCII
// letters and digits, the same rule as the world's public e-mails), and some have a public
// address (person.email, at work or at the personal provider mail.example). About one company
// domain in seven accepts every address (catch-all). Domains outside the world cannot be
// checked. Each action costs 1 credit (spec, Credits 1), found or not; errors cost nothing.
#include "sandbox/service.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <unordered_map>

namespace orch::sandbox {

namespace {

constexpr std::uint64_t catch_all_salt = 0x63617463'68000021ULL;
constexpr double catch_all_share = 0.15;
constexpr std::string_view personal_domain = "mail.example";
constexpr std::array<std::string_view, 6> disposable_domains = {
    "mailinator.com", "yopmail.com", "10minutemail.com", "guerrillamail.com", "trashmail.com", "tempmail.example"};
constexpr std::array<std::string_view, 6> free_providers = {"gmail.com",   "yahoo.com",   "outlook.com",
                                                            "hotmail.com", "icloud.com", "mail.example"};

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

std::string trimmed(std::string_view s) {
    auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) {
        return {};
    }
    return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

// A name as it appears in an address: folded to ASCII, letters and digits only.
std::string local_part_of(std::string_view name) {
    std::string out;
    for (char c : fold_lower(name)) {
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            out.push_back(c);
        }
    }
    return out;
}

bool valid_domain(std::string_view d) {
    if (d.empty() || d.size() > 253 || d.find('.') == std::string_view::npos) {
        return false;
    }
    std::size_t start = 0;
    while (start <= d.size()) {
        auto end = d.find('.', start);
        std::string_view label = d.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
        if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
            return false;
        }
        for (char c : label) {
            if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-') {
                return false;
            }
        }
        if (end == std::string_view::npos) {
            // The top-level label is letters only, at least two.
            return label.size() >= 2 && std::all_of(label.begin(), label.end(), [](char c) {
                       return std::isalpha(static_cast<unsigned char>(c)) != 0;
                   });
        }
        start = end + 1;
    }
    return false;
}

// RFC 5321-ish syntax: a dot-atom local part of 1..64 characters, '@', a domain name.
bool valid_address(std::string_view email) {
    auto at = email.rfind('@');
    if (at == std::string_view::npos || at == 0 || at > 64 || email.size() > 254) {
        return false;
    }
    std::string_view local = email.substr(0, at);
    if (local.front() == '.' || local.back() == '.' || local.find("..") != std::string_view::npos) {
        return false;
    }
    constexpr std::string_view specials = ".!#$%&'*+/=?^_`{|}~-";
    for (char c : local) {
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && specials.find(c) == std::string_view::npos) {
            return false;
        }
    }
    return valid_domain(email.substr(at + 1));
}

// The address index, built on the first mail request.
struct mail_index {
    explicit mail_index(service& s) : svc(s) {
        const world& wd = svc.world();
        for (const company& c : wd.companies()) {
            by_domain.emplace(c.domain, c.id);
        }
        for (const person& p : wd.people()) {
            // Lower ids win a shared address, so every address names one person.
            by_address.try_emplace(work_address(p), p.id);
            if (!p.email.empty()) {
                by_address.try_emplace(lower(p.email), p.id);
            }
        }
    }

    std::string work_address(const person& p) const {
        return local_part_of(p.first_name) + "." + local_part_of(p.last_name) + "@" +
               svc.world().company_at(p.company).domain;
    }
    const person* person_at(const std::string& address) const {
        auto it = by_address.find(address);
        return it == by_address.end() ? nullptr : &svc.world().at(it->second);
    }
    const company* company_at(const std::string& domain) const {
        auto it = by_domain.find(domain);
        return it == by_domain.end() ? nullptr : &svc.world().company_at(it->second);
    }
    bool catch_all(const std::string& domain) const {
        return company_at(domain) != nullptr &&
               unit_from_hash(hash64(domain, svc.cfg().seed ^ catch_all_salt)) < catch_all_share;
    }

    service& svc;
    std::unordered_map<std::string, person_id> by_address;
    std::unordered_map<std::string, company_id> by_domain;
};

json company_brief(const company* c) {
    if (c == nullptr) {
        return nullptr;
    }
    return json{{"name", c->name}, {"company_url", world::company_url(*c)}, {"domain", c->domain}};
}

// "https://www.Acme.example/about" -> "acme.example".
std::string normalized_domain(const std::string& given) {
    std::string d = lower(trimmed(given));
    for (std::string_view scheme : {"https://", "http://"}) {
        if (d.starts_with(scheme)) {
            d.erase(0, scheme.size());
        }
    }
    d = d.substr(0, d.find_first_of("/?#"));
    if (d.starts_with("www.")) {
        d.erase(0, 4);
    }
    if (!valid_domain(d)) {
        throw invalid_params("params.domain is not a domain name, got " + in_quotes(given));
    }
    return d;
}

// A company of the world by name: an exact (case- and accent-insensitive) match, else the first
// whose name contains the text; nullptr when none.
const company* company_named(const world& wd, const std::string& name) {
    std::string key = fold_lower(trimmed(name));
    const company* partial = nullptr;
    for (const company& c : wd.companies()) {
        if (c.name_key == key) {
            return &c;
        }
        if (partial == nullptr && !key.empty() && c.name_key.find(key) != std::string::npos) {
            partial = &c;
        }
    }
    return partial;
}

json person_brief(const person& p) {
    return json{{"profile_url", world::profile_url(p)}, {"public_id", p.public_id},
                {"first_name", p.first_name},         {"last_name", p.last_name},
                {"headline", p.headline},             {"location", p.location}};
}

// ---------------------------------------------------------------------------------------------
// find_email

struct find_request {
    const person* by_profile = nullptr; // profile_url given
    std::string first_name;
    std::string last_name;
    std::string domain;                 // empty when the company is unknown
    const sandbox::company* employer = nullptr;
};

find_request read_find_request(const service& svc, const json& params) {
    find_request q;
    if (auto url = optional_string(params, "profile_url")) {
        q.by_profile = svc.world().find_by_profile_url(*url);
        if (q.by_profile == nullptr && !public_id_from_profile_url(*url)) {
            throw invalid_params("params.profile_url is not a profile URL of the network (" +
                                 std::string(network_base_url) + "/in/<public_id>), got " + in_quotes(*url));
        }
        if (q.by_profile == nullptr) {
            throw invalid_params("params.profile_url: profile not found: " + in_quotes(*url));
        }
        return q;
    }
    q.first_name = require_string(params, "first_name");
    q.last_name = require_string(params, "last_name");
    auto domain = optional_string(params, "domain");
    auto company_name = optional_string(params, "company_name");
    bool has_domain = domain && !trimmed(*domain).empty();
    bool has_company = company_name && !trimmed(*company_name).empty();
    if (!has_domain && !has_company) {
        throw invalid_params("params.domain or params.company_name is required (or params.profile_url)");
    }
    if (has_domain) {
        q.domain = normalized_domain(*domain);
    } else if ((q.employer = company_named(svc.world(), *company_name)) != nullptr) {
        q.domain = q.employer->domain;
    }
    return q;
}

json find_email(action_context& ctx) {
    const auto& index = ctx.svc.area<mail_index>();
    find_request q = read_find_request(ctx.svc, ctx.params);
    const person* found = q.by_profile;
    if (found != nullptr) {
        q.domain = ctx.svc.world().company_at(found->company).domain;
        q.first_name = found->first_name;
        q.last_name = found->last_name;
    } else if (!q.domain.empty()) {
        const person* p =
            index.person_at(local_part_of(q.first_name) + "." + local_part_of(q.last_name) + "@" + q.domain);
        // Only a current employee of the domain's company has a work address there.
        if (p != nullptr && ctx.svc.world().company_at(p->company).domain == q.domain) {
            found = p;
        }
    }
    const company* c = q.domain.empty() ? q.employer : index.company_at(q.domain);
    json data = {{"first_name", q.first_name}, {"last_name", q.last_name},
                 {"domain", q.domain.empty() ? json(nullptr) : json(q.domain)}, {"company", company_brief(c)}};
    if (found == nullptr) {
        data.update(json{{"found", false}, {"email", nullptr}, {"status", "not_found"}, {"confidence", 0},
                         {"profile_url", nullptr}});
    } else {
        bool catch_all = index.catch_all(q.domain);
        data.update(json{{"found", true},
                         {"email", index.work_address(*found)},
                         {"status", catch_all ? "catch_all" : "valid"},
                         {"confidence", catch_all ? 75 : 95},
                         {"profile_url", world::profile_url(*found)}});
    }
    ctx.charge(1);
    return data;
}

// ---------------------------------------------------------------------------------------------
// reverse_email, validate_email

std::string require_address(const json& params) {
    return lower(trimmed(require_string(params, "email")));
}

json reverse_email(action_context& ctx) {
    std::string email = require_address(ctx.params);
    if (!valid_address(email)) {
        throw invalid_params("params.email is not an e-mail address, got " + in_quotes(email));
    }
    const auto& index = ctx.svc.area<mail_index>();
    const person* p = index.person_at(email);
    json data = {{"email", email}, {"found", p != nullptr}};
    if (p == nullptr) {
        data.update(json{{"profile_url", nullptr}, {"person", nullptr}, {"company", nullptr}});
    } else {
        data["profile_url"] = world::profile_url(*p);
        data["person"] = person_brief(*p);
        data["company"] = company_brief(&ctx.svc.world().company_at(p->company));
    }
    ctx.charge(1);
    return data;
}

json validate_email(action_context& ctx) {
    std::string email = require_address(ctx.params);
    const auto& index = ctx.svc.area<mail_index>();
    json data = {{"email", email}};
    if (!valid_address(email)) {
        data.update(json{{"valid", false}, {"status", "invalid"}, {"reason", "syntax"}, {"domain", nullptr},
                         {"mx_found", false}, {"disposable", false}, {"free_provider", false}, {"catch_all", false}});
        ctx.charge(1);
        return data;
    }
    std::string domain = email.substr(email.rfind('@') + 1);
    bool disposable =
        std::find(disposable_domains.begin(), disposable_domains.end(), domain) != disposable_domains.end();
    bool free = std::find(free_providers.begin(), free_providers.end(), domain) != free_providers.end();
    bool known = index.company_at(domain) != nullptr || domain == personal_domain;
    bool catch_all = index.catch_all(domain);
    std::string status;
    std::string reason;
    if (disposable) {
        status = "invalid";
        reason = "disposable address";
    } else if (!known) {
        status = "unknown";
        reason = "the domain cannot be checked (outside the simulated network)";
    } else if (catch_all) {
        status = "catch_all";
        reason = "the domain accepts every address";
    } else if (index.person_at(email) != nullptr) {
        status = "valid";
        reason = "mailbox exists";
    } else {
        status = "invalid";
        reason = "mailbox not found";
    }
    data.update(json{{"valid", status == "valid"},
                     {"status", status},
                     {"reason", reason},
                     {"domain", domain},
                     {"mx_found", known || disposable},
                     {"disposable", disposable},
                     {"free_provider", free},
                     {"catch_all", catch_all}});
    ctx.charge(1);
    return data;
}

} // namespace

void register_mail_actions(action_table& table) {
    table.add("mail", "find_email", find_email);
    table.add("mail", "reverse_email", reverse_email);
    table.add("mail", "validate_email", validate_email);
}

} // namespace orch::sandbox
