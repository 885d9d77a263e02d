// The campaign model: names of kinds, the canonical JSON form stored per campaign version.
#include "campaigns/detail/assert.hpp"
#include "campaigns/model.hpp"

#include "api/text.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace orch::campaigns {

namespace {

// Version of the canonical form; campaign_from_json refuses others so that a worker never runs a
// definition it would misread.
constexpr int canonical_format = 1;

constexpr const char* step_kind_names[] = {
    "check_invitation", "invite", "wait_accepted", "send", "delay", "visit", "withdraw", "end",
};
constexpr const char* day_names[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};

json optional_text(const std::optional<text_template>& t) {
    return t ? json(t->source) : json(nullptr);
}

json step_to_json(const step& s) {
    json variants = json::array();
    for (const message_variant& v : s.variants) {
        variants.push_back({{"name", v.name}, {"text", v.text.source}});
    }
    return {
        {"id", s.id},
        {"kind", to_string(s.kind)},
        {"next", s.next},
        {"on_accepted", s.on_accepted},
        {"on_pending", s.on_pending},
        {"on_no_invitation", s.on_no_invitation},
        {"note", optional_text(s.note)},
        {"timeout_seconds", s.timeout.count()},
        {"on_timeout", s.on_timeout},
        {"duration_seconds", s.duration.count()},
        {"variants", std::move(variants)},
    };
}

step step_from_json(const json& j) {
    step s;
    s.id = j.at("id").get<std::string>();
    auto kind = step_kind_from_string(j.at("kind").get<std::string>());
    ORCH_CAMPAIGNS_ASSERT(kind.has_value(), "canonical campaign: unknown step kind");
    s.kind = *kind;
    s.next = j.at("next").get<std::string>();
    s.on_accepted = j.at("on_accepted").get<std::string>();
    s.on_pending = j.at("on_pending").get<std::string>();
    s.on_no_invitation = j.at("on_no_invitation").get<std::string>();
    if (!j.at("note").is_null()) {
        s.note = text_template{j.at("note").get<std::string>()};
    }
    s.timeout = seconds{j.at("timeout_seconds").get<std::int64_t>()};
    s.on_timeout = j.at("on_timeout").get<std::string>();
    s.duration = seconds{j.at("duration_seconds").get<std::int64_t>()};
    for (const json& v : j.at("variants")) {
        s.variants.push_back({v.at("name").get<std::string>(), {v.at("text").get<std::string>()}});
    }
    return s;
}

json audience_to_json(const audience& a) {
    return {
        {"source", a.kind == audience::source::search ? "search" : "file"},
        {"search", a.search},
        {"total_results", a.total_results},
        {"file", a.file},
        {"leads", a.leads},
        {"fields_always", a.fields_always},
        {"fields_optional", a.fields_optional},
    };
}

audience audience_from_json(const json& j) {
    audience a;
    std::string source = j.at("source").get<std::string>();
    ORCH_CAMPAIGNS_ASSERT(source == "search" || source == "file", "canonical campaign: audience source");
    a.kind = source == "search" ? audience::source::search : audience::source::file;
    a.search = j.at("search");
    a.total_results = j.at("total_results").get<std::int64_t>();
    a.file = j.at("file").get<std::string>();
    a.leads = j.at("leads").get<std::vector<std::map<std::string, std::string>>>();
    a.fields_always = j.at("fields_always").get<std::vector<std::string>>();
    a.fields_optional = j.at("fields_optional").get<std::vector<std::string>>();
    return a;
}

json schedule_to_json(const schedule& s) {
    json days = json::array();
    for (std::size_t i = 0; i < s.days.size(); ++i) {
        if (s.days[i]) {
            days.push_back(day_names[i]);
        }
    }
    return {{"time_zone", s.time_zone},
            {"days", days},
            {"start_minute", s.start_minute},
            {"end_minute", s.end_minute}};
}

schedule schedule_from_json(const json& j) {
    schedule s;
    s.time_zone = j.at("time_zone").get<std::string>();
    s.days.fill(false);
    for (const json& d : j.at("days")) {
        std::string name = d.get<std::string>();
        auto it = std::find(std::begin(day_names), std::end(day_names), name);
        ORCH_CAMPAIGNS_ASSERT(it != std::end(day_names), "canonical campaign: unknown day");
        s.days[static_cast<std::size_t>(it - std::begin(day_names))] = true;
    }
    s.start_minute = j.at("start_minute").get<int>();
    s.end_minute = j.at("end_minute").get<int>();
    return s;
}

json limits_to_json(const std::map<std::string, action_limit>& limits) {
    json out = json::object();
    for (const auto& [action, limit] : limits) {
        json l = json::object();
        if (limit.per_day) {
            l["per_day"] = *limit.per_day;
        }
        if (limit.per_week) {
            l["per_week"] = *limit.per_week;
        }
        out[action] = std::move(l);
    }
    return out;
}

std::map<std::string, action_limit> limits_from_json(const json& j) {
    std::map<std::string, action_limit> out;
    for (const auto& [action, l] : j.items()) {
        action_limit limit;
        if (l.contains("per_day")) {
            limit.per_day = l.at("per_day").get<std::int64_t>();
        }
        if (l.contains("per_week")) {
            limit.per_week = l.at("per_week").get<std::int64_t>();
        }
        out[action] = limit;
    }
    return out;
}

campaign campaign_from_json_unchecked(const json& j) {
    ORCH_CAMPAIGNS_ASSERT(j.at("format").get<int>() == canonical_format,
                          "canonical campaign: unknown format");
    campaign c;
    c.name = j.at("name").get<std::string>();
    c.accounts = j.at("accounts").get<std::vector<std::string>>();
    c.who = audience_from_json(j.at("audience"));
    c.schedule = schedule_from_json(j.at("schedule"));
    c.limits = limits_from_json(j.at("limits"));
    c.budget_credits = j.at("budget_credits").get<std::int64_t>();
    if (j.contains("budget_per_day_credits")) {
        c.budget_per_day_credits = j.at("budget_per_day_credits").get<std::int64_t>();
    }
    if (j.contains("budget_per_account_credits")) {
        c.budget_per_account_credits = j.at("budget_per_account_credits").get<std::int64_t>();
    }
    c.stop_on_reply = j.at("stop_on_reply").get<bool>();
    std::string unavailable = j.at("on_account_unavailable").get<std::string>();
    ORCH_CAMPAIGNS_ASSERT(unavailable == "wait" || unavailable == "reassign",
                          "canonical campaign: on_account_unavailable");
    c.unavailable = unavailable == "wait" ? on_account_unavailable::wait : on_account_unavailable::reassign;
    c.max_attempts = j.at("max_attempts").get<int>();
    for (const char* key : {"start_at", "end_at"}) {
        if (j.contains(key)) {
            std::string error;
            auto t = parse_instant(j.at(key).get<std::string>(), error);
            ORCH_CAMPAIGNS_ASSERT(t.has_value(), "canonical campaign: start_at/end_at");
            (std::string_view(key) == "start_at" ? c.start_at : c.end_at) = t;
        }
    }
    for (const json& s : j.at("steps")) {
        c.steps.push_back(step_from_json(s));
    }
    ORCH_CAMPAIGNS_ASSERT(!c.steps.empty(), "canonical campaign: no steps");
    if (j.contains("exclude")) {
        c.exclude.profile_urls = j.at("exclude").value("profile_urls", std::vector<std::string>{});
        c.exclude.companies = j.at("exclude").value("companies", std::vector<std::string>{});
    }
    return c;
}

}  // namespace

const char* to_string(step_kind k) {
    auto index = static_cast<std::size_t>(k);
    ORCH_CAMPAIGNS_ASSERT(index < std::size(step_kind_names), "step_kind out of range");
    return step_kind_names[index];
}

std::optional<step_kind> step_kind_from_string(std::string_view name) {
    for (std::size_t i = 0; i < std::size(step_kind_names); ++i) {
        if (name == step_kind_names[i]) {
            return static_cast<step_kind>(i);
        }
    }
    return std::nullopt;
}

json to_json(const campaign& c) {
    json steps = json::array();
    for (const step& s : c.steps) {
        steps.push_back(step_to_json(s));
    }
    json out = {
        {"format", canonical_format},
        {"name", c.name},
        {"accounts", c.accounts},
        {"audience", audience_to_json(c.who)},
        {"schedule", schedule_to_json(c.schedule)},
        {"limits", limits_to_json(c.limits)},
        {"budget_credits", c.budget_credits},
        {"stop_on_reply", c.stop_on_reply},
        {"on_account_unavailable", c.unavailable == on_account_unavailable::wait ? "wait" : "reassign"},
        {"max_attempts", c.max_attempts},
        {"steps", std::move(steps)},
    };
    // Written only when set, so that the canonical form (and its digest) of a campaign without
    // caps is what it was before the caps existed: re-applying it makes no new version.
    if (c.budget_per_day_credits) {
        out["budget_per_day_credits"] = *c.budget_per_day_credits;
    }
    if (c.budget_per_account_credits) {
        out["budget_per_account_credits"] = *c.budget_per_account_credits;
    }
    // The same for the dates.
    if (c.start_at) {
        out["start_at"] = format_instant(*c.start_at);
    }
    if (c.end_at) {
        out["end_at"] = format_instant(*c.end_at);
    }
    // Only when there is one, for the same reason.
    if (!c.exclude.profile_urls.empty() || !c.exclude.companies.empty()) {
        out["exclude"] = {{"profile_urls", c.exclude.profile_urls}, {"companies", c.exclude.companies}};
    }
    return out;
}

campaign campaign_from_json(const json& j) {
    try {
        return campaign_from_json_unchecked(j);
    } catch (const json::exception& e) {
        // The canonical form is written by to_json only; a shape error is a corrupt store.
        detail::assert_failed("campaign_from_json", __FILE__, __LINE__, e.what());
    }
}

namespace {

// Digits text[at, at + n) as a number; -1 when any is not a digit (or it runs past the end).
int digits(const std::string& text, std::size_t at, std::size_t n) {
    if (at + n > text.size()) {
        return -1;
    }
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
        if (text[i] < '0' || text[i] > '9') {
            return -1;
        }
        v = v * 10 + (text[i] - '0');
    }
    return v;
}

}  // namespace

std::optional<time_point> parse_instant(const std::string& text, std::string& error) {
    const std::string shape = "'" + text + "' is not an ISO 8601 date and time with a zone, such as "
                              "2026-12-01T09:00:00Z or 2026-12-01T09:00+01:00";
    // YYYY-MM-DDTHH:MM
    if (text.size() < 16 || text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != 't') ||
        text[13] != ':') {
        error = shape;
        return std::nullopt;
    }
    int y = digits(text, 0, 4), mo = digits(text, 5, 2), d = digits(text, 8, 2), h = digits(text, 11, 2),
        mi = digits(text, 14, 2), sec = 0;
    if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0) {
        error = shape;
        return std::nullopt;
    }
    std::size_t at = 16;
    if (at < text.size() && text[at] == ':') {
        sec = digits(text, at + 1, 2);
        if (sec < 0) {
            error = shape;
            return std::nullopt;
        }
        at += 3;
        if (at < text.size() && (text[at] == '.' || text[at] == ',')) {
            std::size_t f = at + 1;
            while (f < text.size() && text[f] >= '0' && text[f] <= '9') {
                ++f;
            }
            if (f == at + 1) {
                error = shape;
                return std::nullopt;
            }
            at = f;  // fractions of a second are dropped: the engine works to the second
        }
    }
    int offset_minutes = 0;
    if (at < text.size() && (text[at] == 'Z' || text[at] == 'z') && at + 1 == text.size()) {
        at += 1;
    } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
        int oh = digits(text, at + 1, 2);
        std::size_t m_at = at + 3 < text.size() && text[at + 3] == ':' ? at + 4 : at + 3;
        int om = digits(text, m_at, 2);
        if (oh < 0 || om < 0 || m_at + 2 != text.size() || oh > 23 || om > 59) {
            error = shape;
            return std::nullopt;
        }
        offset_minutes = (oh * 60 + om) * (text[at] == '-' ? -1 : 1);
        at = text.size();
    } else {
        error = at == text.size() ? "'" + text + "' has no zone: end it with Z (UTC) or an offset such as +01:00"
                                  : shape;
        return std::nullopt;
    }
    using namespace std::chrono;
    const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
    if (y < 2000 || y > 2999) {
        error = "'" + text + "' is not a date between the years 2000 and 2999";
        return std::nullopt;
    }
    if (!ymd.ok()) {
        // 2026-02-30: the year is fine, the day is not one of its month's.
        error = "'" + text + "' names a day that does not exist" +
                (ymd.month().ok() ? " (" + std::to_string(static_cast<unsigned>(year_month_day_last{year{y}, month_day_last{ymd.month()}}.day())) +
                                        " days in that month)"
                                  : " (no month " + std::to_string(mo) + ")");
        return std::nullopt;
    }
    if (h > 23 || mi > 59 || sec > 59) {
        error = "'" + text + "' has no such time of day";
        return std::nullopt;
    }
    return sys_days{ymd} + hours{h} + minutes{mi} + seconds{sec} - minutes{offset_minutes};
}

std::string format_instant(time_point t) {
    using namespace std::chrono;
    auto s = floor<seconds>(t);
    auto dp = floor<days>(s);
    year_month_day ymd{dp};
    hh_mm_ss<seconds> tod{s - dp};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02ld:%02ld:%02lldZ", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                  static_cast<long>(tod.hours().count()), static_cast<long>(tod.minutes().count()),
                  static_cast<long long>(tod.seconds().count()));
    return buf;
}

const step* find_step(const campaign& c, const std::string& id) {
    for (const step& s : c.steps) {
        if (s.id == id) {
            return &s;
        }
    }
    return nullptr;
}

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

bool is_unreserved(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

char lower_ascii(unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); }

// Whether `s` starts with `prefix` (lower case), ignoring ASCII case.
bool starts_ci(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), s.begin(), [](char p, char c) {
               return p == lower_ascii(static_cast<unsigned char>(c));
           });
}

}  // namespace

std::optional<std::string_view> after_web_scheme(std::string_view url) {
    for (std::string_view scheme : {"https://", "http://"}) {
        if (starts_ci(url, scheme)) {
            return url.substr(scheme.size());
        }
    }
    return std::nullopt;
}

std::optional<text_problem> profile_url_text_problem(std::string_view url) {
    if (auto p = orch::text::find_space(url)) {
        return text_problem{p->offset, p->what};
    }
    if (auto p = orch::text::check_name(url)) {
        return text_problem{p->offset, p->what};
    }
    // The same checks on the percent-decoded text, each decoded byte mapped to its %XX.
    std::string decoded;
    std::vector<std::size_t> from;
    for (std::size_t i = 0; i < url.size(); ++i) {
        if (url[i] == '%' && i + 2 < url.size() && hex_value(url[i + 1]) >= 0 && hex_value(url[i + 2]) >= 0) {
            decoded.push_back(static_cast<char>(hex_value(url[i + 1]) * 16 + hex_value(url[i + 2])));
            from.push_back(i);
            i += 2;
        } else {
            decoded.push_back(url[i]);
            from.push_back(i);
        }
    }
    if (decoded.size() == url.size() || orch::text::check_text(decoded)) {
        return std::nullopt;  // nothing encoded, or bytes that are not text (not a name's characters)
    }
    // Not find_space: %20 is how a URL writes a space (the audience's message for a blank says
    // so); what it checks is a character that shows as nothing, or one that reorders or forges.
    auto p = orch::text::check_name(decoded);
    if (!p) {
        return std::nullopt;
    }
    return text_problem{from[p->offset], p->what + ", percent-encoded"};
}

std::optional<std::string> profile_url_shape_problem(std::string_view url) {
    // A '%' that starts no %XX escape, or escapes that spell bytes which are not UTF-8 text: the
    // canonical form keeps them as written, and no profile's URL has them.
    std::string decoded;
    for (std::size_t i = 0; i < url.size(); ++i) {
        if (url[i] != '%') {
            decoded.push_back(url[i]);
        } else if (i + 2 < url.size() && hex_value(url[i + 1]) >= 0 && hex_value(url[i + 2]) >= 0) {
            decoded.push_back(static_cast<char>(hex_value(url[i + 1]) * 16 + hex_value(url[i + 2])));
            i += 2;
        } else {
            return "has a '%' at byte " + std::to_string(i + 1) +
                   " that starts no escape (a URL writes '%' as %25, and an escape as % and two hex digits)";
        }
    }
    if (auto p = orch::text::check_text(decoded)) {
        return "percent-encodes bytes that are not text: " + p->what;
    }
    const std::string c = canonical_profile_url(url);
    const auto slash = c.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 >= c.size() || c.find('.') > slash) {
        return "is not a profile URL (expected a host and a path, e.g. https://network.example/in/jane-doe)";
    }
    // A host spelled with more than its name would be a second key for the same person.
    const std::string_view host(c.data(), slash);
    if (host.find('@') != std::string_view::npos) {
        return "has user information before its host ('…@'): a profile URL names only the host";
    }
    if (host.find(':') != std::string_view::npos) {
        return "has a port after its host (':'): a profile URL names only the host";
    }
    if (host.back() == '.') {
        return "has a host that ends with a dot: write it without";
    }
    if (c.substr(slash + 1) == "in") {
        return "names no profile: nothing follows /in/ (expected e.g. https://network.example/in/jane-doe)";
    }
    return std::nullopt;
}

std::optional<text_problem> company_text_problem(std::string_view company) {
    if (auto p = orch::text::check_name(company)) {
        return text_problem{p->offset, p->what};
    }
    return std::nullopt;
}

std::string canonical_profile_url(std::string_view url) {
    if (auto rest = after_web_scheme(url)) {
        url = *rest;
    }
    if (starts_ci(url, "www.")) {
        url.remove_prefix(4);
    }
    url = url.substr(0, url.find_first_of("?#"));
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    s.reserve(url.size());
    for (std::size_t i = 0; i < url.size(); ++i) {
        const auto c = static_cast<unsigned char>(url[i]);
        if (c == '%' && i + 2 < url.size() && hex_value(url[i + 1]) >= 0 && hex_value(url[i + 2]) >= 0) {
            const auto byte = static_cast<unsigned char>(hex_value(url[i + 1]) * 16 + hex_value(url[i + 2]));
            if (is_unreserved(byte)) {
                s.push_back(lower_ascii(byte));
            } else {
                s += '%';
                s += digits[byte >> 4];
                s += digits[byte & 0xF];
            }
            i += 2;
        } else if (c >= 0x80) {
            s += '%';
            s += digits[c >> 4];
            s += digits[c & 0xF];
        } else {
            s.push_back(lower_ascii(c));
        }
    }
    while (!s.empty() && s.back() == '/') {
        s.pop_back();
    }
    return s;
}

}  // namespace orch::campaigns
