#include "engine/dnc.hpp"

#include "api/text.hpp"
#include "engine/admin_input.hpp"
#include "campaigns/detail/csv.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"

#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

namespace orch::engine::dnc {

namespace {

std::string q(std::string_view name) { return std::string(schema::query(name)); }

bool is_control(char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
}

// "<field>: has a control character (\x00) at byte 3", or "" when `s` has none.
std::string control_problem(const char* field, const std::string& s) {
    auto it = std::find_if(s.begin(), s.end(), is_control);
    if (it == s.end()) {
        return "";
    }
    return std::string(field) + ": has a control character (" +
           orch::text::code_point_name(static_cast<unsigned char>(*it)) + ") at byte " +
           std::to_string(it - s.begin() + 1);
}

std::string lower(std::string s) {
    for (auto& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

entry entry_of(const pqxx::row& r) {
    entry e;
    e.id = r[0].as<std::int64_t>();
    e.kind = r[1].as<std::string>();
    e.profile_url = r[2].as<std::string>();
    e.canonical_url = r[3].as<std::string>();
    e.company = r[4].as<std::string>();
    e.reason = r[5].as<std::string>();
    e.added_by = r[6].as<std::string>();
    e.added_at = r[7].as<std::string>();
    return e;
}

}  // namespace

json to_json(const entry& e) {
    json j = {{"id", e.id},
              {"kind", e.kind},
              {"reason", e.reason},
              {"added_by", e.added_by},
              {"created_at", e.added_at}};
    if (e.kind == "company") {
        j["company"] = e.company;
        j["value"] = e.company;
    } else {
        j["profile_url"] = e.profile_url;
        j["canonical_url"] = e.canonical_url;
        j["value"] = e.profile_url;
    }
    return j;
}

std::string normal_company(const std::string& name) {
    // The blanks at its ends only: a lead's company is matched as its field reads, trimmed of
    // spaces and in any case (leads/lock, company_key), so a run of blanks inside stays as typed.
    const auto first = name.find_first_not_of(" \t");
    if (first == std::string::npos) {
        return {};
    }
    const auto last = name.find_last_not_of(" \t");
    return name.substr(first, last - first + 1);
}

std::string reason_problem(const std::string& reason) {
    if (reason.size() > reason_max) {
        return "reason: longer than " + std::to_string(reason_max) + " characters";
    }
    return control_problem("reason", reason);
}

std::string check(const input& in) {
    // Every field's problem (the first of each), in one message.
    admin_input::problems found;
    const auto add = [&found](std::string p) { found.add(std::move(p)); };
    const bool url = !in.profile_url.empty();
    const bool company = !normal_company(in.company).empty();
    if (url == company) {
        add(url ? "give a profile_url or a company, not both" : "give a profile_url or a company");
    }
    add(reason_problem(in.reason));
    if (company) {
        add([&in]() -> std::string {
            if (in.company.size() > value_max) {
                return "company: longer than " + std::to_string(value_max) + " bytes";
            }
            if (auto p = control_problem("company", in.company); !p.empty()) {
                return p;
            }
            // An invisible or direction character would make the entry match no lead's company,
            // while it reads as the company it names.
            const std::string name = normal_company(in.company);
            if (auto p = campaigns::company_text_problem(name)) {
                return "company: '" + orch::text::escaped_clipped(name, 80) + "' has " + p->what + " at byte " +
                       std::to_string(p->where + 1) + ", which would match no lead's company";
            }
            return "";
        }());
    }
    if (url) {
        add([&in]() -> std::string {
            const auto& u = in.profile_url;
            if (u.size() > value_max) {
                return "profile_url: longer than " + std::to_string(value_max) + " bytes";
            }
            if (auto p = control_problem("profile_url", u); !p.empty()) {
                return p;
            }
            if (const auto blank = u.find(' '); blank != std::string::npos) {
                return "profile_url: '" + orch::text::escaped_clipped(u, 80) + "' has a space at byte " +
                       std::to_string(blank + 1) + " (a URL writes it %20)";
            }
            if (auto p = campaigns::profile_url_text_problem(u)) {
                return "profile_url: '" + orch::text::escaped_clipped(u, 80) + "' has " + p->what + " at byte " +
                       std::to_string(p->where + 1) + ", which would match no lead's profile";
            }
            if (auto shape = campaigns::profile_url_shape_problem(u)) {
                return "profile_url: '" + orch::text::escaped_clipped(u, 80) + "' " + *shape;
            }
            return "";
        }());
    }
    return found.joined();
}

add_outcome add(pqxx::connection& conn, const std::vector<input>& inputs, const std::string& added_by) {
    return again_after_deadlock("dnc add", [&] {
        return guarded("dnc/add", [&] {
            add_outcome out;
            pqxx::work tx(conn);
            json urls = json::array();
            json companies = json::array();
            std::map<std::string, int> seen;  // key -> first line that gave it
            for (const auto& in : inputs) {
                const bool is_company = in.profile_url.empty();
                const std::string company = is_company ? normal_company(in.company) : std::string();
                const std::string canonical = is_company ? std::string() : canonical_profile_url(in.profile_url);
                const std::string key = is_company ? "c:" + lower(company) : "u:" + canonical;
                const std::string shown = is_company ? company : in.profile_url;
                if (auto earlier = seen.find(key); earlier != seen.end()) {
                    out.duplicates.push_back({in.line, 0, earlier->second, shown});
                    continue;
                }
                seen[key] = in.line;
                auto url_param = is_company ? std::optional<std::string>() : std::optional<std::string>(canonical);
                auto given_param = is_company ? std::optional<std::string>() : std::optional<std::string>(in.profile_url);
                auto company_param = is_company ? std::optional<std::string>(company) : std::optional<std::string>();
                auto r = tx.exec_params(q("dnc/insert"), url_param, given_param, company_param, in.reason, added_by);
                if (r.empty()) {
                    auto f = tx.exec_params(q("dnc/find"), url_param, company_param);
                    out.duplicates.push_back({in.line, f.empty() ? 0 : f[0][0].as<std::int64_t>(), 0, shown});
                    continue;
                }
                out.added.push_back(entry_of(tx.exec_params1(q("dnc/get"), r[0][0].as<std::int64_t>())));
                (is_company ? companies : urls).push_back(is_company ? lower(company) : canonical);
            }
            if (!out.added.empty()) {
                out.cancelled = static_cast<std::int64_t>(
                    tx.exec_params(q("dnc/cancel_matching"), urls.dump(), companies.dump()).size());
                out.in_flight = tx.exec_params1(q("dnc/in_flight"), urls.dump(), companies.dump())[0].as<std::int64_t>();
            }
            if (!out.added.empty()) {
                tx.exec0(std::string("NOTIFY ") + changed_channel);
            }
            tx.commit();
            if (std::any_of(out.added.begin(), out.added.end(), [](const entry& e) { return e.kind == "company"; })) {
                // Read after the commit: a scan of every live lead need not hold the stopped leads'
                // locks, and the count is a note (an error reading it leaves it unknown, -1; the
                // entries are added whatever it says).
                try {
                    pqxx::nontransaction read(conn);
                    out.live_without_company = read.exec(q("dnc/live_without_company"))[0][0].as<std::int64_t>();
                } catch (const std::exception& e) {
                    spdlog::warn("dnc: the count of live leads without a company could not be read: {}",
                                 orch::text::escaped(e.what()));
                }
            }
            if (!out.added.empty()) {
                spdlog::info("dnc: {} added by {}; {} stopped, {} in a call stopped by their worker once its outcome is recorded",
                             orch::text::counted(static_cast<std::int64_t>(out.added.size()), "entry", "entries"),
                             orch::text::escaped(added_by), orch::text::counted(out.cancelled, "live lead", "live leads"),
                             out.in_flight);
            }
            return out;
        });
    });
}

std::optional<entry> remove(pqxx::connection& conn, std::int64_t id) {
    return guarded("dnc/delete", [&]() -> std::optional<entry> {
        pqxx::work tx(conn);
        auto r = tx.exec_params(q("dnc/get"), id);
        if (r.empty()) {
            return std::nullopt;
        }
        auto e = entry_of(r[0]);
        tx.exec_params(q("dnc/delete"), id);
        tx.exec0(std::string("NOTIFY ") + changed_channel);
        tx.commit();
        spdlog::info("dnc: entry {} ({}) removed", e.id, e.kind == "company" ? e.company : e.canonical_url);
        return e;
    });
}

std::optional<std::int64_t> find(pqxx::connection& conn, const std::string& profile_url, const std::string& company) {
    return guarded("dnc/find", [&]() -> std::optional<std::int64_t> {
        pqxx::nontransaction tx(conn);
        auto url = profile_url.empty() ? std::optional<std::string>() : std::optional(canonical_profile_url(profile_url));
        auto name = company.empty() ? std::optional<std::string>() : std::optional(normal_company(company));
        auto r = tx.exec_params(q("dnc/find"), url, name);
        if (r.empty()) {
            return std::nullopt;
        }
        return r[0][0].as<std::int64_t>();
    });
}

std::vector<entry> list(pqxx::connection& conn, std::int64_t cursor, std::int64_t limit) {
    return guarded("dnc/list", [&] {
        pqxx::nontransaction tx(conn);
        std::vector<entry> out;
        for (const auto& r : tx.exec_params(q("dnc/list"), cursor, limit)) {
            out.push_back(entry_of(r));
        }
        return out;
    });
}

csv_rows read_csv(const std::string& text, const std::string& default_reason) {
    csv_rows out;
    auto doc = campaigns::detail::parse_csv(text);
    for (const auto& e : doc.errors) {
        out.problems.push_back("line " + std::to_string(e.line) + ", column " + std::to_string(e.column) + ": " +
                               e.message);
    }
    if (!out.problems.empty()) {
        return out;
    }
    if (doc.records.empty()) {
        out.problems.push_back("line 1: the file is empty: expected a header row with a profile_url or company column");
        return out;
    }
    const auto& header = doc.records.front();
    int url_col = -1, company_col = -1, reason_col = -1;
    for (std::size_t i = 0; i < header.fields.size(); ++i) {
        auto name = lower(normal_company(header.fields[i].value));
        int* slot = name == "profile_url" ? &url_col : name == "company" ? &company_col : name == "reason" ? &reason_col : nullptr;
        if (slot != nullptr) {
            if (*slot >= 0) {
                out.problems.push_back("line " + std::to_string(header.line) + ": column '" + name + "' appears twice");
            }
            *slot = static_cast<int>(i);
        }
    }
    if (url_col < 0 && company_col < 0) {
        out.problems.push_back("line " + std::to_string(header.line) +
                               ": the header has no profile_url or company column");
        return out;
    }
    auto cell = [](const campaigns::detail::csv_record& r, int col) {
        return col >= 0 && static_cast<std::size_t>(col) < r.fields.size() ? r.fields[col].value : std::string();
    };
    for (std::size_t k = 1; k < doc.records.size(); ++k) {
        const auto& r = doc.records[k];
        if (r.fields.size() != header.fields.size()) {
            out.problems.push_back("line " + std::to_string(r.line) + ": " + std::to_string(r.fields.size()) +
                                   " fields, the header has " + std::to_string(header.fields.size()));
            continue;
        }
        auto url = normal_company(cell(r, url_col));
        auto company = cell(r, company_col);
        auto reason = reason_col >= 0 && !cell(r, reason_col).empty() ? cell(r, reason_col) : default_reason;
        if (url.empty() && normal_company(company).empty()) {
            out.problems.push_back("line " + std::to_string(r.line) + ": no profile_url or company");
            continue;
        }
        for (int part = 0; part < 2; ++part) {
            input in;
            in.line = r.line;
            in.reason = reason;
            if (part == 0) {
                in.profile_url = url;
            } else {
                in.company = company;
            }
            if (in.profile_url.empty() && normal_company(in.company).empty()) {
                continue;
            }
            if (auto why = check(in); !why.empty()) {
                out.problems.push_back("line " + std::to_string(r.line) + ": " + why);
                continue;
            }
            out.inputs.push_back(std::move(in));
        }
    }
    return out;
}

std::string company_key(const std::string& company_field) {
    const auto first = company_field.find_first_not_of(' ');
    if (first == std::string::npos) {
        return {};
    }
    const auto last = company_field.find_last_not_of(' ');
    return lower(company_field.substr(first, last - first + 1));
}

void mirror::load(pqxx::connection& conn) {
    people list;
    std::unordered_map<std::int64_t, people> excluded;
    pqxx::read_transaction tx(conn);
    for (const auto& r : tx.exec(q("dnc/mirror"))) {
        if (!r[0].is_null()) {
            list.urls.insert(r[0].as<std::string>());
        }
        if (!r[1].is_null()) {
            list.companies.insert(r[1].as<std::string>());
        }
    }
    for (const auto& r : tx.exec(q("dnc/mirror_exclusions"))) {
        auto& of = excluded[r[0].as<std::int64_t>()];
        const auto exclude = json::parse(r[1].as<std::string>());  // named: outlives the loops
        for (const auto& u : exclude.value("profile_urls", json::array())) {
            of.urls.insert(canonical_profile_url(u.get<std::string>()));
        }
        for (const auto& c : exclude.value("companies", json::array())) {
            if (auto key = company_key(c.get<std::string>()); !key.empty()) {
                of.companies.insert(std::move(key));
            }
        }
    }
    std::unordered_set<std::int64_t> halted;
    for (const auto& r : tx.exec(q("dnc/mirror_halted"))) {
        halted.insert(r[0].as<std::int64_t>());
    }
    tx.commit();
    std::unique_lock lock(mutex_);
    list_ = std::move(list);
    excluded_ = std::move(excluded);
    halted_ = std::move(halted);
    empty_ = list_.urls.empty() && list_.companies.empty() && excluded_.empty();
    none_halted_ = halted_.empty();
}

bool mirror::halted(std::int64_t campaign_id) const {
    if (none_halted_) {
        return false;
    }
    std::shared_lock lock(mutex_);
    return halted_.contains(campaign_id);
}

const char* mirror::stops(const std::string& profile_url, const std::string& company, std::int64_t campaign_id) const {
    if (empty_) {
        return nullptr;
    }
    const std::string canonical = canonical_profile_url(profile_url);
    const std::string key = company.empty() ? std::string() : company_key(company);
    std::shared_lock lock(mutex_);
    if (list_.has(canonical, key)) {
        return stopped_reason;
    }
    if (auto it = excluded_.find(campaign_id); it != excluded_.end() && it->second.has(canonical, key)) {
        return excluded_reason;
    }
    return nullptr;
}

std::size_t mirror::size() const {
    std::shared_lock lock(mutex_);
    return list_.urls.size() + list_.companies.size();
}

}  // namespace orch::engine::dnc
