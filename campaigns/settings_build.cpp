// Phase 3 of the loader: the schema-valid document -> a campaign, with the semantic checks of each
// part (accounts, audience, schedule, limits, durations, templates, variants). The step graph is
// checked in graph.cpp, the audience file read in audience.cpp.
#include "api/text.hpp"
#include "campaigns/detail/load_context.hpp"
#include "campaigns/detail/template.hpp"
#include "campaigns/detail/time_rules.hpp"
#include "campaigns/loader.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace orch::campaigns::detail {

namespace {

using json = nlohmann::json;

constexpr const char* day_keys[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
// The variant name given to a send step written with a single message_text.
constexpr const char* single_variant_name = "default";

std::string join(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) {
        out += (out.empty() ? "" : ", ") + w;
    }
    return out;
}

std::vector<std::string> as_list(const json& v) {
    return v.is_string() ? std::vector<std::string>{v.get<std::string>()} : v.get<std::vector<std::string>>();
}

void build_accounts(load_context& ctx, const json& doc, campaign& c) {
    const json& accounts = doc["accounts"];
    c.accounts = as_list(accounts);
    if (!ctx.options.account_lookup) {
        return;  // validating without a database
    }
    // One account named twice (by its id and its label: the schema's uniqueness sees two names)
    // would be two senders, and get twice the leads.
    std::map<std::string, std::string> named_as;  // account id -> the name first given for it
    // A disconnected sender beside a connected one is a warning: its live leads wait for it as
    // they would anyway, new leads go to the connected senders (store's assign_senders), and an
    // outage must not block a fix of the file. With none connected, no lead could go anywhere.
    std::vector<std::pair<std::string, std::string>> disconnected;  // pointer, name
    bool any_connected = false;
    for (std::size_t i = 0; i < c.accounts.size(); ++i) {
        const std::string& id = c.accounts[i];
        std::string pointer = accounts.is_string() ? "/accounts" : pointer_append("/accounts", i);
        const account_found found = ctx.options.account_lookup(id);
        if (found.status != account_status::unknown) {
            const std::string key = found.account_id.empty() ? id : found.account_id;
            if (auto [first, fresh] = named_as.emplace(key, id); !fresh) {
                ctx.error(pointer, "accounts: '" + id + "' is account " + key + ", named already as '" + first->second +
                                       "': name each sender once");
                continue;
            }
        }
        switch (found.status) {
        case account_status::connected:
            any_connected = true;
            break;
        case account_status::unknown:
            ctx.error(pointer,
                      "accounts: unknown account '" + id + "' (orchestrator accounts list shows the ids)");
            break;
        case account_status::disconnected:
            disconnected.emplace_back(pointer, id);
            break;
        }
    }
    for (const auto& [pointer, id] : disconnected) {
        if (!any_connected) {
            ctx.error(pointer, "accounts: account '" + id + "' is disconnected (log it in again, or remove it)");
            continue;
        }
        const bool first = !c.accounts.empty() && c.accounts.front() == id;
        ctx.warning(pointer, "accounts: account '" + id +
                                 "' is disconnected: its live leads wait until it logs in again (accounts connect), "
                                 "and new leads go to the connected senders" +
                                 (first && doc.contains("audience") && doc.at("audience").is_object() &&
                                          doc.at("audience").contains("search")
                                      ? std::string("; an audience search goes through the first account, and "
                                                    "fails until it is back: list a connected account first to "
                                                    "search now")
                                      : std::string()));
    }
}

void build_search_audience(const json& a, audience& who) {
    who.kind = audience::source::search;
    who.search = a["search"];
    who.total_results = a.value("total_results", std::int64_t{25});
    // What a search hit carries (api-facts 2.1): names and the URL always; headline and location
    // may be empty; company is not in the hit (the engine may derive it), so it may be missing.
    who.fields_always = {"first_name", "last_name", "full_name", "profile_url"};
    who.fields_optional = {"headline", "location", "company"};
}

// False when the audience is unusable (then template fields are not checked against it).
bool build_audience(load_context& ctx, const json& doc, campaign& c) {
    const json& a = doc["audience"];
    bool search = a.contains("search");
    bool file = a.contains("file");
    if (search == file) {
        ctx.error("/audience",
                  search ? "audience: give either search or file, not both"
                         : "audience: needs search (a search_people query) or file (a CSV/JSON file)");
        return false;
    }
    if (file && a.contains("total_results")) {
        ctx.error("/audience/total_results", "audience.total_results: applies to a search audience only",
                  at::key);
    }
    if (search) {
        build_search_audience(a, c.who);
        return true;
    }
    std::size_t errors_before = ctx.errors.size();
    load_audience_file(ctx, c.who, "/audience/file");
    return ctx.errors.size() == errors_before;
}

void build_schedule(load_context& ctx, const json& doc, campaign& c) {
    const json& s = doc["schedule"];
    c.schedule.time_zone = s["time_zone"].get<std::string>();
    if (const auto problem = time_zone_problem(c.schedule.time_zone); !problem.empty()) {
        ctx.error("/schedule/time_zone", "schedule.time_zone: " + problem);
    }
    if (s.contains("days")) {
        c.schedule.days.fill(false);
        for (const json& d : s["days"]) {
            auto it = std::find(std::begin(day_keys), std::end(day_keys), d.get<std::string>());
            c.schedule.days[static_cast<std::size_t>(it - std::begin(day_keys))] = true;
        }
    }
    if (s.contains("hours")) {
        std::string error;
        if (auto hours = parse_hours(s["hours"].get<std::string>(), error)) {
            c.schedule.start_minute = hours->start_minute;
            c.schedule.end_minute = hours->end_minute;
        } else {
            ctx.error("/schedule/hours", "schedule.hours: " + error);
        }
    }
}

void build_limits(load_context& ctx, const json& doc, campaign& c) {
    if (!doc.contains("limits")) {
        return;
    }
    for (const auto& [action, l] : doc["limits"].items()) {
        action_limit limit;
        if (l.contains("per_day")) {
            limit.per_day = l["per_day"].get<std::int64_t>();
        }
        if (l.contains("per_week")) {
            limit.per_week = l["per_week"].get<std::int64_t>();
        }
        if (limit.per_day && limit.per_week && *limit.per_week < *limit.per_day) {
            ctx.error("/limits/" + action + "/per_week",
                      "limits." + action + ".per_week: " + std::to_string(*limit.per_week) +
                          " is below per_day (" + std::to_string(*limit.per_day) + ")");
        }
        c.limits[action] = limit;
    }
}

// The optional caps inside the budget: each at most budget_credits (the schema checked >= 1).
void build_budget(load_context& ctx, const json& doc, campaign& c) {
    c.budget_credits = doc["budget_credits"].get<std::int64_t>();
    auto cap = [&](const char* key, std::optional<std::int64_t>& out) {
        if (!doc.contains(key)) {
            return;
        }
        out = doc[key].get<std::int64_t>();
        if (*out > c.budget_credits) {
            ctx.error(std::string("/") + key, std::string(key) + ": " + std::to_string(*out) +
                                                  " is above budget_credits (" + std::to_string(c.budget_credits) +
                                                  ")");
        }
    };
    cap("budget_per_day_credits", c.budget_per_day_credits);
    cap("budget_per_account_credits", c.budget_per_account_credits);
}

// The optional dates: ISO 8601 with a zone; end_at after start_at.
void build_dates(load_context& ctx, const json& doc, campaign& c) {
    auto date = [&](const char* key, std::optional<time_point>& out) {
        if (!doc.contains(key)) {
            return;
        }
        std::string error;
        out = parse_instant(doc[key].get<std::string>(), error);
        if (!out) {
            ctx.error(std::string("/") + key, std::string(key) + ": " + error);
        }
    };
    date("start_at", c.start_at);
    date("end_at", c.end_at);
    if (c.start_at && c.end_at && *c.end_at <= *c.start_at) {
        ctx.error("/end_at", "end_at: " + format_instant(*c.end_at) + " is not after start_at (" +
                                 format_instant(*c.start_at) + ")");
    }
}

seconds build_duration(load_context& ctx, const json& s, const std::string& pointer, const char* key) {
    std::string text = s[key].get<std::string>();
    std::string where = "step '" + s["id"].get<std::string>() + "': " + key + " ";
    std::optional<std::int64_t> value = parse_duration(text);
    if (!value) {
        // The schema checked the shape, so only the bound can fail here.
        ctx.error(pointer_append(pointer, key),
                  where + "'" + text + "' is longer than " + format_duration(seconds{duration_seconds_max}));
        return seconds{0};
    }
    if (*value == 0) {
        ctx.error(pointer_append(pointer, key), where + "'" + text + "' must be longer than zero");
    }
    return seconds{*value};
}

// The variants of a send step (message_text is one variant named "default").
void build_variants(load_context& ctx, const json& s, const std::string& pointer, step& out) {
    bool single = s.contains("message_text");
    bool several = s.contains("variants");
    std::string where = "step '" + out.id + "': ";
    if (single == several) {
        ctx.error(pointer, where + (single ? "give message_text or variants, not both"
                                           : "a send step needs message_text (or variants)"));
        return;
    }
    if (single) {
        out.variants.push_back({single_variant_name, {s["message_text"].get<std::string>()}});
        return;
    }
    std::map<std::string, std::size_t> seen;
    const json& variants = s["variants"];
    for (std::size_t i = 0; i < variants.size(); ++i) {
        std::string name = variants[i]["name"].get<std::string>();
        std::string name_pointer =
            pointer_append(pointer_append(pointer_append(pointer, "variants"), i), "name");
        if (!seen.emplace(name, i).second) {
            ctx.error(name_pointer, where + "duplicate variant name '" + name + "'");
        }
        out.variants.push_back({name, {variants[i]["message_text"].get<std::string>()}});
    }
}

std::string target_of(const json& s, const char* key, const std::string& fallback) {
    if (!s.contains(key)) {
        return fallback;
    }
    std::string target = s[key].get<std::string>();
    return target == "end" ? "" : target;
}

step build_step(load_context& ctx, const json& steps, std::size_t i) {
    const json& s = steps[i];
    std::string pointer = pointer_append("/steps", i);
    step out;
    out.id = s["id"].get<std::string>();
    out.kind = *step_kind_from_string(s["kind"].get<std::string>());
    // Without `next`, a step continues with the one below it; the last step ends.
    std::string below =
        i + 1 < steps.size() && steps[i + 1].contains("id") ? steps[i + 1]["id"].get<std::string>() : "";
    if (out.kind != step_kind::end && out.kind != step_kind::check_invitation) {
        out.next = target_of(s, "next", below);
    }
    out.on_accepted = target_of(s, "on_accepted", "");
    out.on_pending = target_of(s, "on_pending", "");
    out.on_no_invitation = target_of(s, "on_no_invitation", "");
    out.on_timeout = target_of(s, "on_timeout", "");
    if (s.contains("note")) {
        out.note = text_template{s["note"].get<std::string>()};
    }
    if (out.kind == step_kind::wait_accepted) {
        out.timeout = build_duration(ctx, s, pointer, "timeout");
    }
    if (out.kind == step_kind::delay) {
        out.duration = build_duration(ctx, s, pointer, "duration");
    }
    if (out.kind == step_kind::send) {
        build_variants(ctx, s, pointer, out);
    }
    return out;
}

// Templates are checked once the audience (and so the available fields) is known.
void check_step_templates(load_context& ctx, const campaign& c, const json& steps) {
    for (std::size_t i = 0; i < c.steps.size(); ++i) {
        const step& s = c.steps[i];
        std::string pointer = pointer_append("/steps", i);
        if (s.note) {
            check_template(ctx, *s.note, pointer_append(pointer, "note"), c.who);
            // The API states no limit (api-facts: "max length NOT FOUND"), but the platform's
            // notes are short: a longer one fails each invite at the API, found only at run time.
            constexpr std::size_t note_chars_commonly_allowed = 300;
            const auto chars = static_cast<std::size_t>(std::count_if(
                s.note->source.begin(), s.note->source.end(),
                [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
            if (chars > note_chars_commonly_allowed) {
                ctx.warning(pointer_append(pointer, "note"),
                            "the note is " + std::to_string(chars) + " characters long before its fields are filled "
                            "in: the platform commonly refuses invitation notes over " +
                                std::to_string(note_chars_commonly_allowed) +
                                " characters (fewer on some accounts), and an invite the API refuses for it fails");
            }
        }
        bool single = steps[i].contains("message_text");
        bool several = steps[i].contains("variants");
        if (single == several) {
            continue;  // neither or both: build_variants reported it, and built no variant
        }
        if (single) {
            check_template(ctx, s.variants.front().text, pointer_append(pointer, "message_text"), c.who);
        } else {
            for (std::size_t v = 0; v < s.variants.size(); ++v) {
                std::string variant_pointer = pointer_append(pointer_append(pointer, "variants"), v);
                check_template(ctx, s.variants[v].text, pointer_append(variant_pointer, "message_text"),
                               c.who);
            }
        }
    }
}

// The file's `exclude:` (the schema checked its shape): each profile URL must look like one
// (profile_url_shape_problem, no blanks), each company must not be blank; a value listed twice is a warning.
void build_exclude(load_context& ctx, const json& doc, campaign& c) {
    if (!doc.contains("exclude")) {
        return;
    }
    const json& ex = doc["exclude"];
    std::map<std::string, std::string> seen;  // key -> the pointer that gave it first
    // "is listed twice", with where it was first (a flow list is on one line: its column too).
    auto twice = [&ctx](const std::string& first) {
        const source_pos at = ctx.position(first);
        if (at.line == 0) {
            return std::string(" is listed twice");
        }
        return " is listed twice (first at line " + std::to_string(at.line) + ", column " + std::to_string(at.column) +
               ")";
    };
    const json urls = ex.value("profile_urls", json::array());
    for (std::size_t i = 0; i < urls.size(); ++i) {
        auto url = urls[i].get<std::string>();
        const std::string pointer = "/exclude/profile_urls/" + std::to_string(i);
        bool blank = url.find_first_of(" \t\r\n") != std::string::npos;
        if (blank) {
            ctx.error(pointer, "'" + orch::text::escaped(url) +
                                   "' is not a profile URL (it has a blank; expected e.g. https://network.example/in/jane-doe)");
            continue;
        }
        if (auto shape = profile_url_shape_problem(url)) {
            ctx.error(pointer, "'" + orch::text::escaped(url) + "' " + *shape);
            continue;
        }
        // An invisible or direction character would make the exclusion match nobody.
        if (auto p = profile_url_text_problem(url)) {
            ctx.error(pointer, "'" + orch::text::escaped(url) + "' has " + p->what + " at byte " +
                                   std::to_string(p->where + 1) + ", which would exclude nobody");
            continue;
        }
        // One person however spelled (case, www., a trailing slash, %XX), as the leads are keyed.
        if (auto [it, fresh] = seen.emplace("u:" + canonical_profile_url(url), pointer); !fresh) {
            ctx.warning(pointer, "'" + orch::text::escaped(url) + "'" + twice(it->second));
        }
        c.exclude.profile_urls.push_back(url);
    }
    const json companies = ex.value("companies", json::array());
    for (std::size_t i = 0; i < companies.size(); ++i) {
        auto name = companies[i].get<std::string>();
        auto first = name.find_first_not_of(" \t");
        auto last = name.find_last_not_of(" \t");
        name = first == std::string::npos ? std::string() : name.substr(first, last - first + 1);
        const std::string pointer = "/exclude/companies/" + std::to_string(i);
        if (name.empty()) {
            ctx.error(pointer, "a company name cannot be blank");
            continue;
        }
        if (auto p = company_text_problem(name)) {
            ctx.error(pointer, "company '" + orch::text::escaped(name) + "' has " + p->what + " at byte " +
                                   std::to_string(p->where + 1) + ", which would exclude nobody");
            continue;
        }
        if (auto [it, fresh] = seen.emplace("c:" + orch::text::ascii_lower(name), pointer); !fresh) {
            ctx.warning(pointer, "company '" + name + "'" + twice(it->second));
        }
        c.exclude.companies.push_back(name);
    }
}

}  // namespace

campaign build_campaign(load_context& ctx) {
    const json& doc = ctx.doc.value;
    campaign c;
    c.name = doc["name"].get<std::string>();
    build_accounts(ctx, doc, c);
    std::string unavailable = doc.value("on_account_unavailable", std::string("wait"));
    c.unavailable =
        unavailable == "reassign" ? on_account_unavailable::reassign : on_account_unavailable::wait;
    bool audience_known = build_audience(ctx, doc, c);
    build_schedule(ctx, doc, c);
    build_limits(ctx, doc, c);
    build_budget(ctx, doc, c);
    build_dates(ctx, doc, c);
    c.stop_on_reply = doc.value("stop_on_reply", true);
    c.max_attempts = doc.value("max_attempts", 5);
    build_exclude(ctx, doc, c);
    const json& steps = doc["steps"];
    for (std::size_t i = 0; i < steps.size(); ++i) {
        c.steps.push_back(build_step(ctx, steps, i));
    }
    if (audience_known) {
        check_step_templates(ctx, c, steps);
    }
    check_step_graph(ctx, c);
    return c;
}

namespace {

// How many times `needle` occurs in `hay` (without overlap) before `offset`.
std::size_t occurrences_before(std::string_view hay, std::string_view needle, std::size_t offset) {
    std::size_t count = 0;
    for (std::size_t at = hay.find(needle); at != std::string_view::npos && at < offset;
         at = hay.find(needle, at + needle.size())) {
        ++count;
    }
    return count;
}

// Where the text of a template problem is in the definition: the same occurrence of `raw`
// after the template node starts. Block scalars and plain text keep placeholders verbatim; an
// escape inside the placeholder (rare) falls back to the node's position.
void report_in_template(load_context& ctx, const std::string& pointer, const text_template& t,
                        std::size_t offset_in_template, const std::string& raw, std::string message) {
    int start = ctx.position(pointer).offset;
    std::size_t n = occurrences_before(t.source, raw, offset_in_template);
    std::size_t at = start < 0 ? std::string_view::npos : ctx.text.find(raw, static_cast<std::size_t>(start));
    while (at != std::string_view::npos && n-- > 0) {
        at = ctx.text.find(raw, at + raw.size());
    }
    if (at == std::string_view::npos) {
        ctx.error(pointer, std::move(message));
    } else {
        ctx.error_at_offset(at, std::move(message));
    }
}

}  // namespace

void check_template(load_context& ctx, const text_template& t, const std::string& pointer,
                    const audience& who) {
    // What is sent is text: a control character other than a line break or a tab would reach the
    // person as it is (as `inbox reply` refuses it too).
    for (std::size_t i = 0; i < t.source.size(); ++i) {
        const auto c = static_cast<unsigned char>(t.source[i]);
        if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f) {
            report_in_template(ctx, pointer, t, i, std::string(1, static_cast<char>(c)),
                               "the text holds a control character (" + orch::text::code_point_name(c) +
                                   ") at byte " + std::to_string(i + 1) + ": only line breaks and tabs are allowed");
            return;
        }
    }
    parsed_template parsed = parse_template(t.source);
    for (const template_error& e : parsed.errors) {
        report_in_template(ctx, pointer, t, e.offset, e.raw, e.message);
    }
    std::vector<std::string> all = who.fields_always;
    all.insert(all.end(), who.fields_optional.begin(), who.fields_optional.end());
    for (const placeholder& p : parsed.placeholders) {
        bool optional = std::count(who.fields_optional.begin(), who.fields_optional.end(), p.name) > 0;
        if (std::count(all.begin(), all.end(), p.name) == 0) {
            report_in_template(ctx, pointer, t, p.offset, p.raw,
                               "unknown field '" + p.name + "' in " + p.raw + " (fields of this audience: " +
                                   join(all) + ")" + did_you_mean(p.name, all));
        } else if (optional && !p.has_default) {
            report_in_template(ctx, pointer, t, p.offset, p.raw,
                               "field '" + p.name + "' may be missing for some leads and " + p.raw +
                                   " has no default: write {{" + p.name + "|...}}");
        }
    }
}

}  // namespace orch::campaigns::detail
