#include "engine/campaign_lifecycle.hpp"

#include "api/text.hpp"
#include "engine/ledger.hpp"
#include "engine/limits/limits.hpp"
#include "engine/limits_gate.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"

#include <pqxx/pqxx>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>

namespace orch::engine {

using json = nlohmann::json;

namespace {

std::string q(std::string_view name) { return std::string(schema::query(name)); }

json null_if_empty(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json step_targets(const json& s) {
    json next = json::object();
    for (const char* key : {"next", "on_accepted", "on_pending", "on_no_invitation", "on_timeout"}) {
        if (s.contains(key) && !s[key].get<std::string>().empty()) {
            next[key] = s[key];
        }
    }
    return next;
}

}  // namespace

std::optional<json> campaign_overview(pqxx::transaction_base& tx, const std::string& name) {
    auto r = tx.exec_params(q("campaigns/show"), name);
    if (r.empty()) {
        return std::nullopt;
    }
    const auto& row = r[0];
    const auto campaign_id = row[0].as<std::int64_t>();
    json c = {{"name", name},
              {"state", row[1].as<std::string>()},
              {"pause_reason", row[2].as<std::string>()},
              {"version", row[3].as<int>()},
              {"start_at", null_if_empty(row[4].as<std::string>())},
              {"end_at", null_if_empty(row[5].as<std::string>())},
              {"created_at", row[6].as<std::string>()},
              {"updated_at", row[7].as<std::string>()}};
    json budget = nullptr;
    for (const auto& b : ledger::campaign_budgets(tx, name)) {
        if (b.campaign_id != campaign_id) {
            continue;
        }
        auto cap = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); };
        if (b.limits) {
            budget = {{"total", b.limits->total},    {"per_day", cap(b.limits->per_day)},
                      {"per_account", cap(b.limits->per_account)}, {"available", b.available},
                      {"reserved", b.reserved},      {"spent", b.spent}};
            // Today's use of the day cap (the whole UTC day, as the cap counts it), as `budget show`.
            budget["today"] = cap_use_json(tx, campaign_id, b.limits->per_day, std::nullopt,
                                           std::chrono::system_clock::now())["today"];
        }
    }
    c["budget"] = std::move(budget);
    json steps = json::array();
    const json definition = json::parse(row[8].as<std::string>());
    for (const auto& s : definition.at("steps")) {
        json step = {{"id", s.at("id")}, {"kind", s.at("kind")}, {"next", step_targets(s)}};
        // A wait's timeout and where it leads (`end`, as the file says it, when the lead ends), a
        // delay's length: the overview showed a wait as `next` alone (a trial).
        if (s.value("kind", "") == "wait_accepted") {
            step["timeout_seconds"] = s.value("timeout_seconds", std::int64_t{0});
            const std::string on_timeout = s.value("on_timeout", "");
            step["next"]["on_timeout"] = on_timeout.empty() ? std::string("end") : on_timeout;
        } else if (s.value("kind", "") == "delay") {
            step["duration_seconds"] = s.value("duration_seconds", std::int64_t{0});
        }
        steps.push_back(std::move(step));
    }
    c["steps"] = std::move(steps);
    json by_status = json::object();
    std::int64_t total = 0, live = 0;
    for (const auto& s : tx.exec_params(q("campaigns/status_counts"), campaign_id)) {
        const auto status = s[0].as<std::string>();
        const auto n = s[1].as<std::int64_t>();
        by_status[status] = n;
        total += n;
        if (status == "ready" || status == "calling" || status == "waiting") {
            live += n;
        }
    }
    auto f = tx.exec_params(q("reports/funnel"), name)[0];
    json funnel = json::object();
    const char* stages[] = {"found", "skipped", "checked", "invited", "accepted",
                            "messaged", "replied", "failed", "live", "credits"};
    for (int i = 0; i < 10; ++i) {
        funnel[stages[i]] = f[i].as<std::int64_t>();
    }
    c["counts"] = {{"enrollments", total}, {"live", live}, {"by_status", std::move(by_status)},
                   {"funnel", std::move(funnel)}};
    return c;
}

std::optional<json> campaign_versions_list(pqxx::transaction_base& tx, const std::string& name) {
    auto id = tx.exec_params(q("admin/campaign_id"), name);
    if (id.empty()) {
        return std::nullopt;
    }
    json list = json::array();
    for (const auto& r : tx.exec_params(q("admin/versions"), id[0][0].as<std::int64_t>())) {
        list.push_back({{"version", r[0].as<int>()},
                        {"digest", r[1].as<std::string>()},
                        {"created_at", r[2].as<std::string>()},
                        {"current", r[3].as<bool>()},
                        {"enrollments", r[4].as<std::int64_t>()}});
    }
    return json{{"name", name}, {"versions", std::move(list)}};
}

namespace {

// A stored definition (JSON) as YAML, as campaign files are written: the diff reads as the file
// would. Keys come sorted (nlohmann::json keeps them so), so the same definition always gives the
// same lines. A string the loader would read as another type (a number, a bool, null, or with
// spaces at its ends) is double-quoted; yaml-cpp quotes what its plain style cannot hold.
void emit_yaml(YAML::Emitter& out, const json& v) {
    switch (v.type()) {
    case json::value_t::object:
    {
        out << (v.empty() ? YAML::Flow : YAML::Block) << YAML::BeginMap;  // "limits: {}" on its line
        // A step leads with its id and kind, as files write it; the rest sorted.
        const bool step = v.contains("id") && v.contains("kind");
        if (step) {
            for (const char* key : {"id", "kind"}) {
                out << YAML::Key << key << YAML::Value;
                emit_yaml(out, v[key]);
            }
        }
        for (const auto& [key, value] : v.items()) {
            if (step && (key == "id" || key == "kind")) {
                continue;
            }
            out << YAML::Key << key << YAML::Value;
            emit_yaml(out, value);
        }
        out << YAML::EndMap;
        break;
    }
    case json::value_t::array:
        out << (v.empty() ? YAML::Flow : YAML::Block) << YAML::BeginSeq;
        for (const auto& item : v) {
            emit_yaml(out, item);
        }
        out << YAML::EndSeq;
        break;
    case json::value_t::string: {
        const auto& text = v.get_ref<const std::string&>();
        static const std::regex other_type(
            R"(^([-+]?(\.?[0-9][0-9_.eE+-]*|0x[0-9a-fA-F]+|0o[0-7]+|\.inf|\.Inf|\.INF|\.nan|\.NaN|\.NAN)|)"
            R"(true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N|null|Null|NULL|~)$)");
        const bool quote = text.empty() || std::isspace(static_cast<unsigned char>(text.front())) ||
                           std::isspace(static_cast<unsigned char>(text.back())) ||
                           (text.size() <= 40 && std::regex_match(text, other_type));  // short: bounded recursion
        if (quote) {
            out << YAML::DoubleQuoted;
        }
        out << text;
        break;
    }
    case json::value_t::null:
        out << YAML::Null;
        break;
    case json::value_t::boolean:
        out << v.get<bool>();
        break;
    default:
        out << v.dump();  // numbers as JSON writes them (what was stored)
        break;
    }
}

// A step's keys its file could not have given or left at their defaults (the stored form has every
// key of every kind: an invite step's `on_accepted: ""` and `timeout_seconds: 0`), and an empty
// list of `exclude:`, are left out of the diff's text, which reads as the file would.
json without_unset_step_keys(json definition) {
    if (!definition.is_object()) {
        return definition;
    }
    // `exclude:` is stored with both its lists when the file gave either.
    if (auto ex = definition.find("exclude"); ex != definition.end() && ex->is_object()) {
        for (auto it = ex->begin(); it != ex->end();) {
            it = it.value().is_array() && it.value().empty() ? ex->erase(it) : std::next(it);
        }
    }
    if (!definition.contains("steps") || !definition["steps"].is_array()) {
        return definition;
    }
    for (auto& step : definition["steps"]) {
        if (!step.is_object()) {
            continue;
        }
        for (auto it = step.begin(); it != step.end();) {
            const json& v = it.value();
            const bool unset = it.key() != "id" && it.key() != "kind" &&
                               (v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty()) ||
                                (v.is_number() && v == 0) || (v.is_array() && v.empty()));
            it = unset ? step.erase(it) : std::next(it);
        }
    }
    return definition;
}

std::string definition_as_yaml(const json& definition) {
    YAML::Emitter out;
    out.SetIndent(2);
    out.SetMapFormat(YAML::Block);
    out.SetSeqFormat(YAML::Block);
    out.SetNullFormat(YAML::LowerNull);
    emit_yaml(out, definition);
    return std::string(out.c_str()) + "\n";
}

}  // namespace

version_diff campaign_diff(pqxx::transaction_base& tx, const std::string& name, std::optional<int> from,
                           std::optional<int> to) {
    version_diff out;
    auto r = tx.exec_params(q("campaigns/show"), name);
    if (r.empty()) {
        return out;
    }
    out.found = true;
    const auto campaign_id = r[0][0].as<std::int64_t>();
    const int current = r[0][3].as<int>();
    out.to = to.value_or(current);
    if (from) {
        out.from = *from;
    } else if (out.to > 1) {
        out.from = out.to - 1;
    } else {
        out.error = "campaign '" + name + "' has only version 1: there is no earlier version to compare with";
        return out;
    }
    std::string text_from, text_to;
    bool have_from = false, have_to = false;
    for (const auto& v : tx.exec_params(q("campaigns/version_definitions"), campaign_id, out.from, out.to)) {
        const int version = v[0].as<int>();
        std::string pretty = definition_as_yaml(without_unset_step_keys(json::parse(v[1].as<std::string>())));
        if (version == out.from) {
            text_from = pretty;
            have_from = true;
        }
        if (version == out.to) {
            text_to = pretty;
            have_to = true;
        }
    }
    for (auto [have, v] : {std::pair{have_from, out.from}, {have_to, out.to}}) {
        if (!have) {
            out.error = "campaign '" + name + "' has no version " + std::to_string(v) + " (versions 1 to " +
                        std::to_string(current) + ")";
            return out;
        }
    }
    out.text = unified_diff(text_from, text_to, name + " version " + std::to_string(out.from),
                            name + " version " + std::to_string(out.to));
    return out;
}

namespace {

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::string line;
    std::istringstream in(text);
    while (std::getline(in, line)) {
        lines.push_back(line);
    }
    return lines;
}

enum class op { same, del, add };
struct edit {
    op kind;
    std::size_t a, b;  // line indexes in a and b (the one that applies)
};

// The edit script from a to b: common head and tail kept, the middle by a longest common
// subsequence when it is small enough (at most 4 million cells), else all of it replaced (still a
// correct diff, only not the shortest: an audience of thousands of leads replaced by another).
std::vector<edit> edit_script(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    std::size_t head = 0;
    while (head < a.size() && head < b.size() && a[head] == b[head]) {
        ++head;
    }
    std::size_t tail = 0;
    while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) {
        ++tail;
    }
    std::vector<edit> out;
    for (std::size_t i = 0; i < head; ++i) {
        out.push_back({op::same, i, i});
    }
    const std::size_t n = a.size() - head - tail, m = b.size() - head - tail;
    if (n * m <= 4'000'000) {
        // lcs[i][j]: the LCS length of a[head+i..] and b[head+j..]
        std::vector<std::vector<std::uint32_t>> lcs(n + 1, std::vector<std::uint32_t>(m + 1, 0));
        for (std::size_t i = n; i-- > 0;) {
            for (std::size_t j = m; j-- > 0;) {
                lcs[i][j] = a[head + i] == b[head + j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
            }
        }
        std::size_t i = 0, j = 0;
        while (i < n || j < m) {
            if (i < n && j < m && a[head + i] == b[head + j]) {
                out.push_back({op::same, head + i, head + j});
                ++i;
                ++j;
            } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
                out.push_back({op::del, head + i, head + j});  // removals before additions, as diff -u
                ++i;
            } else {
                out.push_back({op::add, head + i, head + j});
                ++j;
            }
        }
    } else {
        for (std::size_t i = 0; i < n; ++i) {
            out.push_back({op::del, head + i, head});
        }
        for (std::size_t j = 0; j < m; ++j) {
            out.push_back({op::add, head + n, head + j});
        }
    }
    for (std::size_t k = 0; k < tail; ++k) {
        out.push_back({op::same, a.size() - tail + k, b.size() - tail + k});
    }
    return out;
}

std::string hunk_range(std::size_t start, std::size_t count) {
    // unified diff: 1-based start; an empty range names the line before it
    return std::to_string(count == 0 ? start : start + 1) + "," + std::to_string(count);
}

}  // namespace

std::string unified_diff(const std::string& a_text, const std::string& b_text, const std::string& a_label,
                         const std::string& b_label, int context) {
    if (a_text == b_text) {
        return "";
    }
    const auto a = split_lines(a_text), b = split_lines(b_text);
    const auto script = edit_script(a, b);
    const auto ctx = static_cast<std::size_t>(std::max(context, 0));
    std::string out = "--- " + a_label + "\n+++ " + b_label + "\n";
    std::vector<std::size_t> changes;
    for (std::size_t i = 0; i < script.size(); ++i) {
        if (script[i].kind != op::same) {
            changes.push_back(i);
        }
    }
    for (std::size_t g = 0; g < changes.size();) {
        // one hunk: changes less than 2 * ctx + 1 unchanged lines apart, with ctx lines around
        std::size_t last = changes[g];
        std::size_t h = g + 1;
        while (h < changes.size() && changes[h] - last - 1 <= 2 * ctx) {
            last = changes[h++];
        }
        const std::size_t begin = changes[g] >= ctx ? changes[g] - ctx : 0;
        const std::size_t end = std::min(script.size(), last + ctx + 1);
        g = h;
        std::size_t a_start = script[begin].a, b_start = script[begin].b, a_count = 0, b_count = 0;
        std::string body;
        for (std::size_t i = begin; i < end; ++i) {
            const auto& e = script[i];
            switch (e.kind) {
            case op::same:
                body += " " + a[e.a] + "\n";
                ++a_count;
                ++b_count;
                break;
            case op::del:
                body += "-" + a[e.a] + "\n";
                ++a_count;
                break;
            case op::add:
                body += "+" + b[e.b] + "\n";
                ++b_count;
                break;
            }
        }
        out += "@@ -" + hunk_range(a_start, a_count) + " +" + hunk_range(b_start, b_count) + " @@\n" + body;
    }
    return out;
}

namespace {

std::string upper(std::string s) {
    for (auto& ch : s) {
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    return s;
}

// The first step that calls the API (delays skipped), following `next` from the entry step.
const campaigns::step* first_call_step(const campaigns::campaign& c) {
    const campaigns::step* s = c.steps.empty() ? nullptr : &c.steps.front();
    for (int hops = 0; s != nullptr && hops < 100; ++hops) {
        if (s->kind != campaigns::step_kind::delay) {
            return s->kind == campaigns::step_kind::end ? nullptr : s;
        }
        s = s->next.empty() ? nullptr : campaigns::find_step(c, s->next);
    }
    return nullptr;
}

// How long the delays before the first call hold a new lead (the opening delays, in a row).
std::chrono::milliseconds opening_delay(const campaigns::campaign& c) {
    std::chrono::milliseconds total{0};
    const campaigns::step* s = c.steps.empty() ? nullptr : &c.steps.front();
    for (int hops = 0; s != nullptr && s->kind == campaigns::step_kind::delay && hops < 100; ++hops) {
        total += std::chrono::duration_cast<std::chrono::milliseconds>(s->duration);
        s = s->next.empty() ? nullptr : campaigns::find_step(c, s->next);
    }
    return total;
}

std::string hh_mm(int minute) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%02d:%02d", minute / 60, minute % 60);
    return buf;
}

std::string in_how_long(std::chrono::seconds d) {
    if (d.count() <= 60) {
        return "now";
    }
    const auto h = d.count() / 3600, m = (d.count() % 3600) / 60;
    if (h >= 48) {
        return "in " + std::to_string(h / 24) + " days";
    }
    return "in " + (h > 0 ? std::to_string(h) + " h " : std::string()) + std::to_string(m) + " min";
}

bool has_step(const campaigns::campaign& c, campaigns::step_kind k) {
    return std::any_of(c.steps.begin(), c.steps.end(), [k](const auto& st) { return st.kind == k; });
}

}  // namespace

bool uses_quota_today(const settings& s, const campaigns::campaign& c) {
    return (s.pacing || s.ramp_up) &&
           (has_step(c, campaigns::step_kind::invite) || has_step(c, campaigns::step_kind::send));
}

std::optional<apply_facts::quota_today> senders_quota_today(limits::limiter& limiter, const settings& s,
                                                            const campaigns::campaign& c,
                                                            const std::vector<account_row>& accounts,
                                                            const std::vector<std::string>& senders,
                                                            std::chrono::system_clock::time_point now) {
    const bool invites = has_step(c, campaigns::step_kind::invite);
    if (senders.empty() || (!invites && !has_step(c, campaigns::step_kind::send))) {
        return std::nullopt;
    }
    const auto what = invites ? limits::action::invite : limits::action::send;
    const auto defaults = limiter_settings(s).actions;
    apply_facts::quota_today out;
    for (const auto& a : accounts) {
        if (std::find(senders.begin(), senders.end(), a.account_id) == senders.end()) {
            continue;
        }
        const auto day = limits::day_in_zone(now, quota_time_zone(a.time_zone));
        if (!day) {
            continue;
        }
        const auto quotas = effective(a.quotas, defaults);
        const auto st = limiter.status(a.account_id, *day, quotas);
        if (!st) {
            return std::nullopt;  // Redis does not answer: nothing known
        }
        ++out.read;
        const auto i = static_cast<std::size_t>(what);
        const auto& use = st->actions[i];
        // As `accounts list` tells a ramp-up: today's limit below the sender's day quota.
        const std::int64_t per_day = quotas[i] ? quotas[i]->per_day : defaults[i].limit.per_day;
        if (use.limit_today >= 0 && (per_day < 0 || use.limit_today < per_day)) {
            ++out.ramping;
        }
        if (use.limit_today >= 0 && use.left_today <= 0) {
            const auto ends = now + std::chrono::duration_cast<std::chrono::system_clock::duration>(day->left);
            out.first_day_end = out.used_up == 0 ? ends : std::min(out.first_day_end, ends);
            ++out.used_up;
        }
    }
    return out;
}

std::vector<std::string> apply_warnings(const campaigns::campaign& c, const apply_facts& facts, const settings& s,
                                        std::chrono::system_clock::time_point now) {
    std::vector<std::string> out;
    if (!facts.audience_run) {
        // Nothing was searched: the audience warnings were said when it was.
    } else if (facts.audience == 0) {
        out.push_back("the audience matched nobody: no lead was enrolled" +
                      std::string(facts.state == "completed" ? " and the campaign is completed" : "") +
                      " (change the search or the file, and apply it again)");
    } else if (facts.enrolled == 0 && facts.state == "completed") {
        // The leads not skipped were this campaign's already (a re-apply): nothing new to run.
        const std::int64_t own = facts.audience - facts.skipped;
        std::string why = own <= 0 ? "each is owned by another campaign or on the do-not-contact list"
                          : facts.skipped == 0
                              ? "each is already this campaign's"
                              : std::to_string(own) + " already this campaign's, the other " +
                                    std::to_string(facts.skipped) +
                                    " owned by another campaign or on the do-not-contact list";
        out.push_back("no new lead of the " + std::to_string(facts.audience) + " in the audience was enrolled: " + why +
                      "; the campaign is completed");
    }

    const auto* first = first_call_step(c);
    if (first != nullptr && first->kind == campaigns::step_kind::send && facts.audience_run) {
        if (facts.hits != nullptr) {
            std::int64_t strangers = 0;
            for (const auto& h : *facts.hits) {
                const bool connected = (h.member_distance && *h.member_distance == 1) ||
                                       upper(h.invitation_state) == "CONNECTED";
                strangers += connected ? 0 : 1;
            }
            if (strangers > 0) {
                out.push_back("the first step ('" + first->id + "') sends a message, but " + std::to_string(strangers) +
                              " of the " + std::to_string(facts.hits->size()) +
                              " people found are not connections (network degree, invitation state): a message to "
                              "them fails; start with invite (or check_invitation) to connect first");
            }
        } else {
            out.push_back("the first step ('" + first->id +
                          "') sends a message: only connections can receive one, and the audience file does not say "
                          "who is a connection; the others fail at that step (start with invite or check_invitation "
                          "to connect first)");
        }
    }

    // The audience search's charge left nothing of today's day cap: no billed call goes out today.
    const bool capped_today = facts.search_charged > 0 && facts.caps.day_cap && facts.caps.day_cap_left <= 0;

    // Pacing and ramp-up, for the first action that has a day quota.
    if (first != nullptr && (s.ramp_up || s.pacing) && facts.enrolled > 0) {
        const bool invites = std::any_of(c.steps.begin(), c.steps.end(),
                                         [](const auto& st) { return st.kind == campaigns::step_kind::invite; });
        const bool sends = std::any_of(c.steps.begin(), c.steps.end(),
                                       [](const auto& st) { return st.kind == campaigns::step_kind::send; });
        const auto defaults = limiter_settings(s).actions;
        const auto what = invites ? limits::action::invite : limits::action::send;
        const auto& d = defaults[static_cast<std::size_t>(what)];
        std::int64_t cap = -1;
        const std::string action = invites ? "invite" : "send";
        if (auto it = c.limits.find(action); it != c.limits.end() && it->second.per_day) {
            cap = *it->second.per_day;
        }
        auto tighter = [](std::int64_t a, std::int64_t b) { return a < 0 ? b : (b < 0 ? a : std::min(a, b)); };
        // The senders with a day quota of their own for the action (`accounts limits`), and what
        // each may make a day with the campaign's cap. When every sender has one, the largest is
        // said and all are listed; otherwise the default's, and those that differ from it.
        std::vector<std::pair<std::string, std::int64_t>> own;
        std::int64_t largest_own = -1;
        if (facts.own_quotas != nullptr && (invites || sends)) {
            for (const auto& o : *facts.own_quotas) {
                if (const auto& per_day = o.quotas[static_cast<std::size_t>(what)].per_day) {
                    own.emplace_back(o.account, tighter(*per_day, cap));
                    largest_own = std::max(largest_own, *per_day);
                }
            }
        }
        const bool all_own = !own.empty() && facts.senders > 0 && own.size() >= facts.senders;
        // Ramp-up lowers the account's own day quota only; a campaign cap holds as it is.
        const std::int64_t account_quota = !(invites || sends) ? -1 : (all_own ? largest_own : d.limit.per_day);
        const std::int64_t quota = tighter(account_quota, cap);
        std::string own_text;
        if (const bool differ = std::any_of(own.begin(), own.end(), [&](const auto& o) { return o.second != quota; });
            differ) {
            own_text = all_own ? " (the largest of the senders' own day quotas, `accounts limits`: "
                               : " (senders with a day quota of their own, `accounts limits`: ";
            constexpr std::size_t listed = 5;
            std::size_t n = 0;
            for (const auto& [account, per_day] : own) {
                if (all_own || per_day != quota) {
                    own_text += n < listed ? (n > 0 ? ", " : "") + account + " " + std::to_string(per_day) : "";
                    ++n;
                }
            }
            if (n > listed) {
                own_text += ", and " + std::to_string(n - listed) + " more";
            }
            own_text += ")";
        } else if (all_own && quota != tighter(d.limit.per_day, cap)) {
            own_text = " (the senders' own day quota, `accounts limits`)";
        }
        // Senders read in Redis that are all past their ramp-up (facts.today) are not held back by it.
        const bool ramped_up = facts.today && facts.today->read > 0 && facts.today->ramping == 0;
        const bool ramps = s.ramp_up && account_quota >= 0 && d.ramp.start_per_day > 0 &&
                           d.ramp.start_per_day < account_quota && !ramped_up;
        // No day quota: neither ramp-up nor pacing holds anything back.
        if ((invites || sends) && quota >= 0 && (ramps || s.pacing)) {
            const std::string noun = invites ? "invitations" : "messages";
            const std::int64_t first_day = ramps ? tighter(d.ramp.start_per_day, cap) : quota;
            const int window = c.schedule.end_minute - c.schedule.start_minute;
            auto from = now;
            if (c.start_at && *c.start_at > from) {
                from = *c.start_at;
            }
            // A new lead first waits out the campaign's opening delays.
            const auto held = opening_delay(c);
            from += held;
            if (capped_today) {
                const std::chrono::system_clock::time_point next_day =
                    std::chrono::floor<std::chrono::days>(now) + std::chrono::days(1);
                from = std::max(from, next_day);
            }
            // Every sender has used up today's quota: nothing goes before the first of them has a
            // new day.
            // (A quota of 0 is no day's: "at most 0" says it.)
            const bool all_used_up = quota > 0 && facts.today && facts.today->read > 0 &&
                                     facts.today->used_up == facts.today->read;
            if (all_used_up) {
                from = std::max(from, facts.today->first_day_end);
            }
            const auto starts = campaigns::next_working_start(c.schedule, from);
            std::string text =
                std::string(ramps && s.pacing ? "pacing and ramp-up are" : (ramps ? "ramp-up is" : "pacing is")) + " on: ";
            if (ramps && first_day < quota) {
                // The gate's first day is the first on which the orchestrator saw the sender make
                // the action (again after 8 idle days), not the day it was connected.
                text += "a sender's first day of " + action + " calls through the orchestrator allows at most " +
                        std::to_string(first_day) + ", then " + std::to_string(d.ramp.step_per_day) +
                        " more each day up to " + std::to_string(quota) + " a day" + own_text;
                if (facts.today && facts.today->ramping < facts.today->read) {
                    text += " (" + std::to_string(facts.today->ramping) + " of the " +
                            std::to_string(facts.today->read) + " senders " +
                            (facts.today->ramping == 1 ? "is" : "are") + " new or still ramping up)";
                }
            } else {
                text += "at most " + std::to_string(quota) + " " + action + " calls a day per sender" + own_text;
            }
            if (s.pacing && first_day > 0 && window > 0) {
                text += ", spread over the working hours " + hh_mm(c.schedule.start_minute) + "-" +
                        hh_mm(c.schedule.end_minute) + " " + c.schedule.time_zone + " (about one every " +
                        std::to_string(std::max<std::int64_t>(1, window / first_day)) + " min" +
                        (own_text.empty() ? std::string() : " at " + std::to_string(first_day) + " a day") + ")";
            }
            text += ". The first " + noun + " may go out from " + campaigns::format_instant(starts) + " (" +
                    in_how_long(std::chrono::duration_cast<std::chrono::seconds>(starts - now)) + ")";
            if (c.start_at && *c.start_at > now) {
                text += ", after start_at";
            }
            if (held.count() > 0) {
                text += std::string(c.start_at && *c.start_at > now ? " and" : ",") + " after the opening delay";
            }
            if (capped_today) {
                text += ", once the day cap allows (below)";
            }
            if (all_used_up) {
                text += std::string(facts.today->read == 1 ? ", once the sender's" : ", once the first sender's") +
                        " day quota starts again (" +
                        (facts.today->read == 1 ? std::string("it has") : "each of the " + std::to_string(facts.today->read) + " has") +
                        " used up today's " + action + " quota)";
            }
            text += ", as the working hours allow";
            if (!facts.today) {
                text += "; a sender that has used up today's quota waits for its next day (`accounts list` shows "
                        "what each has left today)";
            } else if (facts.today->used_up > 0 && !all_used_up && quota > 0) {
                text += "; " + std::to_string(facts.today->used_up) + " of the " +
                        std::to_string(facts.today->read) + " senders " +
                        (facts.today->used_up == 1 ? "has" : "have") + " used up today's " + action +
                        " quota and " + (facts.today->used_up == 1 ? "waits for its" : "wait for their") +
                        " next day (`accounts list`)";
            }
            // How many days the new leads' first quota-limited action takes, as `campaign
            // estimate` counts it: a campaign of a few hundred leads runs for weeks at the ramp.
            campaigns::estimate_input in;
            in.leads = facts.enrolled;
            in.senders = static_cast<std::int64_t>(std::max<std::size_t>(1, facts.senders));
            std::optional<std::int64_t> cap_week;
            if (auto it = c.limits.find(action); it != c.limits.end()) {
                cap_week = it->second.per_week;
            }
            const std::int64_t week = tighter(d.limit.per_week, cap_week.value_or(-1));
            in.per_day[action] = tighter(d.limit.per_day, cap);
            in.per_week[action] = week;
            in.ramp[action] = {d.limit.per_day, s.ramp_up ? d.ramp.start_per_day : 0, d.ramp.step_per_day};
            if (facts.own_quotas != nullptr && !facts.own_quotas->empty()) {
                // One quota set per sender: those with their own, then the others at the defaults.
                for (const auto& o : *facts.own_quotas) {
                    const auto& q = o.quotas[static_cast<std::size_t>(what)];
                    campaigns::estimate_input::sender_quotas own_set;
                    own_set.per_day[action] = tighter(q.per_day.value_or(d.limit.per_day), cap);
                    own_set.per_week[action] = tighter(q.per_week.value_or(d.limit.per_week), cap_week.value_or(-1));
                    if (q.per_day) {
                        own_set.account_per_day[action] = *q.per_day;
                    }
                    in.per_sender.push_back(std::move(own_set));
                }
                while (in.per_sender.size() < static_cast<std::size_t>(in.senders)) {
                    campaigns::estimate_input::sender_quotas default_set;
                    default_set.per_day[action] = in.per_day[action];
                    default_set.per_week[action] = week;
                    in.per_sender.push_back(std::move(default_set));
                }
            }
            const auto forecast = campaigns::estimate(c, in);
            const auto f = std::find_if(forecast.actions.begin(), forecast.actions.end(),
                                        [&](const auto& a) { return a.action == action; });
            const double days = f == forecast.actions.end() ? 0.0
                                : ramps                      ? f->working_days_new_accounts
                                                             : f->working_days;
            if (days > 1.0 && days < 36'500.0) {
                const auto whole = [](double x) { return std::to_string(static_cast<std::int64_t>(std::ceil(x))); };
                text += ". At these quotas, the " + orch::text::counted(facts.enrolled, "new lead's", "new leads'") +
                        " " + action + " calls take about " + whole(days) + " working days over " +
                        orch::text::counted(in.senders, "sender", "senders") + " (to " +
                        campaigns::finish_date(c.schedule, starts, days, std::chrono::seconds(0));
                if (ramps && std::ceil(f->working_days) < std::ceil(days)) {
                    text += "; " + whole(f->working_days) + " for senders past their ramp-up";
                }
                text += "; `campaign estimate` gives the whole forecast)";
            }
            text += std::string(". Settings: ") + (ramps ? "ramp_up, " : "") + (s.pacing ? "pacing, " : "") + action +
                    "_per_day";
            out.push_back(std::move(text));
        }
    }

    if (capped_today) {
        const bool already = facts.caps.day_cap_used - facts.search_charged >= *facts.caps.day_cap;
        out.push_back("the audience search cost " + orch::text::counted(facts.search_charged, "credit", "credits") +
                      (already ? ", past today's day cap of " + std::to_string(*facts.caps.day_cap) +
                                     ", which was used up already (" + std::to_string(facts.caps.day_cap_used) +
                                     " used today, the search included)"
                               : ", which uses up today's day cap of " + std::to_string(*facts.caps.day_cap) +
                                     (facts.caps.day_cap_used > *facts.caps.day_cap
                                          ? " and goes " + std::to_string(facts.caps.day_cap_used - *facts.caps.day_cap) +
                                                " past it"
                                          : std::string())) +
                      " (budget_per_day_credits, UTC day): no lead makes a billed call before the next UTC day, "
                      "unless the cap is raised (`budget set " + c.name + " --per-day N`)");
    }

    // A search that went past the budget paused the campaign, which the apply says; one that
    // used it up exactly leaves it active, with nothing to spend.
    if (facts.search_charged > 0 && facts.caps.budget_total && facts.caps.budget_left <= 0 && facts.state == "active") {
        out.push_back("the audience search cost " + orch::text::counted(facts.search_charged, "credit", "credits") +
                      ", which uses up the campaign's budget of " +
                      orch::text::counted(*facts.caps.budget_total, "credit", "credits") +
                      " (budget_credits): no lead makes a billed call unless the budget is raised (`budget set " +
                      c.name + " --credits N`)");
    }

    if (facts.search_charged > 0 && facts.caps.sender_cap && facts.caps.sender_cap_left <= 0) {
        const std::int64_t over = facts.caps.sender_cap_used - *facts.caps.sender_cap;
        // The account as the file names it (a label, usually), and its id when that differs.
        const std::string named = c.accounts.empty() ? facts.caps.sender : c.accounts.front();
        out.push_back("the audience search cost " + orch::text::counted(facts.search_charged, "credit", "credits") +
                      ", which uses up the cap of " + orch::text::counted(*facts.caps.sender_cap, "credit", "credits") +
                      " per sender on account '" + orch::text::escaped(named) + "'" +
                      (named != facts.caps.sender ? " (" + orch::text::escaped(facts.caps.sender) + ")"
                                                    : std::string()) +
                      ", the first account, which the search goes through" +
                      (over > 0 ? ", and goes " + std::to_string(over) + " past it" : std::string()) +
                      " (budget_per_account_credits): the leads this sender serves make no billed call unless the "
                      "cap is raised (`budget set " + c.name + " --per-account N`)");
    }

    if (c.end_at && *c.end_at <= now) {
        out.push_back("end_at " + campaigns::format_instant(*c.end_at) +
                      " has passed: the campaign stops (paused, reason \"ended\") as soon as a worker picks up one of "
                      "its leads");
    }
    return out;
}

}  // namespace orch::engine
