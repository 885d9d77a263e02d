#include "engine/account_view.hpp"

#include "engine/time_format.hpp"

namespace orch::engine {

using json = nlohmann::json;

json account_json(const account_row& a, const std::array<limits::action_defaults, limits::action_count>& defaults) {
    return {{"account_id", a.account_id},
            {"label", a.label},
            {"platform", a.platform},
            {"api_status", a.api_status},
            {"connected", a.connected},
            {"display_name", a.display_name},
            {"webhook_id", a.webhook_id},
            {"updated_at", a.updated_at},
            {"time_zone", a.time_zone.empty() ? json(nullptr) : json(a.time_zone)},
            {"quota_overrides", to_json(a.quotas)},
            {"effective_quotas", quotas_view(a.quotas, defaults)},
            {"limits", nullptr}};
}

json account_limits_json(const limits::account_status& status, const std::string& time_zone,
                         const limits::local_day& day) {
    const auto limit = [](std::int64_t v) { return v < 0 ? json(nullptr) : json(v); };
    const auto when = [](const std::optional<std::chrono::system_clock::time_point>& t) {
        return t ? json(iso8601_ms(*t)) : json(nullptr);
    };
    json actions = json::array();
    for (const auto& s : status.actions) {
        actions.push_back({{"action", limits::to_string(s.what)},
                           {"used_today", s.used_today},
                           {"limit_today", limit(s.limit_today)},
                           {"left_today", limit(s.left_today)},
                           {"used_week", s.used_week},
                           {"limit_week", limit(s.limit_week)},
                           {"left_week", limit(s.left_week)},
                           {"cooldown_until", when(s.cooldown_until)},
                           {"pace_until", when(s.pace_until)},
                           {"streak", s.streak}});
    }
    return {{"day", time_zone},  // as time_zone: the API's older clients read it
            {"time_zone", time_zone},
            {"date", limits::iso_date(day.day)},
            {"key_cooldown_until", when(status.key_cooldown_until)},
            {"actions", actions}};
}

}  // namespace orch::engine
