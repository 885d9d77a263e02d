#include "engine/account_quotas.hpp"

#include <algorithm>

namespace orch::engine {

using json = nlohmann::json;

std::string action_list() {
    std::string out;
    for (auto a : quota_actions) {
        out += (out.empty() ? "" : ", ") + std::string(limits::to_string(a));
    }
    return out;
}

namespace {

// The action named `name`, if it is one with a quota; else nullopt and `error` set.
std::optional<limits::action> quota_action(const std::string& name, std::string& error) {
    auto a = limits::parse_action(name);
    if (!a || !has_quota(*a)) {
        error = name + ": unknown action; one of " + action_list();
        return std::nullopt;
    }
    return a;
}

bool read_value(const json& v, const std::string& where, std::optional<std::int64_t>& out, std::string& error) {
    if (v.is_null()) {
        out.reset();
        return true;
    }
    const std::string range = "must be an integer from 0 to " + std::to_string(quota_value_max) + " (or null for the default)";
    if (!v.is_number_integer()) {
        error = where + ": " + range + ", got " + v.dump();
        return false;
    }
    if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(quota_value_max)
                               : (v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > quota_value_max)) {
        error = where + ": " + range + ", got " + v.dump();
        return false;
    }
    out = v.get<std::int64_t>();
    return true;
}

// One action's object {"per_day": N, "per_week": N}; absent or null fields: the default. Every
// field's problem is said, joined by "; ".
std::optional<quota_override> read_override(const json& o, const std::string& name, std::string& error) {
    if (!o.is_object()) {
        error = name + ": must be an object with per_day and/or per_week (an override is removed with clear), got " +
                o.dump();
        return std::nullopt;
    }
    quota_override q;
    std::string all;
    for (auto it = o.begin(); it != o.end(); ++it) {
        const std::string where = name + "." + it.key();
        std::string why;
        if (it.key() == "per_day") {
            read_value(it.value(), where, q.per_day, why);
        } else if (it.key() == "per_week") {
            read_value(it.value(), where, q.per_week, why);
        } else {
            why = where + ": unknown field; per_day or per_week";
        }
        if (!why.empty()) {
            all += (all.empty() ? "" : "; ") + why;
        }
    }
    if (!all.empty()) {
        error = all;
        return std::nullopt;
    }
    return q;
}

json number_or_null(std::int64_t v) { return v < 0 ? json(nullptr) : json(v); }

}  // namespace

bool has_quota(limits::action a) { return std::find(quota_actions.begin(), quota_actions.end(), a) != quota_actions.end(); }

bool no_overrides(const quota_overrides& q) {
    return std::all_of(q.begin(), q.end(), [](const quota_override& o) { return o.empty(); });
}

std::optional<quota_overrides> overrides_from_json(const json& j, std::string& error) {
    quota_overrides out{};
    if (j.is_null()) {
        return out;
    }
    if (!j.is_object()) {
        error = "quotas must be an object of actions, got " + j.dump();
        return std::nullopt;
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
        auto a = quota_action(it.key(), error);
        if (!a) {
            return std::nullopt;
        }
        auto o = read_override(it.value(), it.key(), error);
        if (!o) {
            return std::nullopt;
        }
        out[static_cast<std::size_t>(*a)] = *o;
    }
    return out;
}

std::optional<quota_overrides> parse_overrides(std::string_view text, std::string& error) {
    if (text.empty()) {
        return quota_overrides{};
    }
    auto j = json::parse(text, nullptr, false);
    if (j.is_discarded()) {
        error = "quotas: not JSON";
        return std::nullopt;
    }
    return overrides_from_json(j, error);
}

json to_json(const quota_overrides& q) {
    json out = json::object();
    for (auto a : quota_actions) {
        const auto& o = q[static_cast<std::size_t>(a)];
        if (o.empty()) {
            continue;
        }
        json j = json::object();
        if (o.per_day) {
            j["per_day"] = *o.per_day;
        }
        if (o.per_week) {
            j["per_week"] = *o.per_week;
        }
        out[limits::to_string(a)] = std::move(j);
    }
    return out;
}

std::optional<quota_overrides> apply_patch(quota_overrides current, const json& patch, std::string& error) {
    if (!patch.is_object()) {
        error = "the body must be a JSON object of actions (" + action_list() + "), got " +
                std::string(patch.type_name());
        return std::nullopt;
    }
    for (auto it = patch.begin(); it != patch.end(); ++it) {
        auto a = quota_action(it.key(), error);
        if (!a) {
            return std::nullopt;
        }
        auto& slot = current[static_cast<std::size_t>(*a)];
        if (it.value().is_null()) {
            slot = {};
            continue;
        }
        auto o = read_override(it.value(), it.key(), error);
        if (!o) {
            return std::nullopt;
        }
        slot = *o;
    }
    return current;
}

std::string week_below_day(const quota_overrides& q,
                           const std::array<limits::action_defaults, limits::action_count>& defaults,
                           const std::vector<limits::action>& changed) {
    for (auto a : changed) {
        const auto i = static_cast<std::size_t>(a);
        const auto& o = q[i];
        const std::int64_t day = o.per_day.value_or(defaults[i].limit.per_day);
        const std::int64_t week = o.per_week.value_or(defaults[i].limit.per_week);
        if (day < 0 || week < 0 || week >= day) {
            continue;  // a negative default is no limit
        }
        const auto name = std::string(limits::to_string(a));
        return name + ": a week of " + std::to_string(week) + (o.per_week ? "" : " (the default)") +
               " is below a day of " + std::to_string(day) + (o.per_day ? "" : " (the default)") +
               ", whose quota could then never be reached";
    }
    return "";
}

effective_quotas effective(const quota_overrides& q,
                           const std::array<limits::action_defaults, limits::action_count>& defaults) {
    effective_quotas out{};
    for (std::size_t i = 0; i < limits::action_count; ++i) {
        if (q[i].empty()) {
            continue;
        }
        out[i] = limits::quota{q[i].per_day.value_or(defaults[i].limit.per_day),
                               q[i].per_week.value_or(defaults[i].limit.per_week)};
    }
    return out;
}

json quotas_view(const quota_overrides& q, const std::array<limits::action_defaults, limits::action_count>& defaults) {
    json out = json::object();
    for (auto a : quota_actions) {
        const auto i = static_cast<std::size_t>(a);
        const auto& o = q[i];
        out[limits::to_string(a)] = {
            {"per_day", number_or_null(o.per_day.value_or(defaults[i].limit.per_day))},
            {"per_week", number_or_null(o.per_week.value_or(defaults[i].limit.per_week))},
            {"per_day_source", o.per_day ? "override" : "default"},
            {"per_week_source", o.per_week ? "override" : "default"}};
    }
    return out;
}

const std::string& quota_time_zone(const std::string& account_zone) {
    static const std::string utc = "UTC";
    return account_zone.empty() ? utc : account_zone;
}

std::string quota_day_move_note(const std::string& from, const std::string& to,
                                std::chrono::system_clock::time_point now) {
    const auto before = limits::day_in_zone(now, quota_time_zone(from));
    const auto after = limits::day_in_zone(now, quota_time_zone(to));
    if (!before || !after || before->day == after->day) {
        return "";
    }
    const std::string moved = "its quota day is now " + orch::limits::iso_date(after->day) + " (it was " + orch::limits::iso_date(before->day) + ")";
    if (after->day > before->day) {
        return moved + ": a new day's quotas start now, so up to a day quota more may go out today (the rolling "
                       "week quota still holds)";
    }
    return moved + ": the calls counted on " + orch::limits::iso_date(before->day) + " count as today's too";
}

}  // namespace orch::engine
