// One account as `accounts list --format json` and GET /v1/accounts show it: the same fields and
// shapes from both, so a script written against one reads the other.
#pragma once

#include "engine/account_quotas.hpp"
#include "engine/limits/limits.hpp"
#include "engine/store.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace orch::engine {

// The stored account: account_id, label, platform, api_status, connected, display_name,
// webhook_id, updated_at, time_zone (null when none is chosen), quota_overrides and
// effective_quotas (quotas_view), and "limits": null until account_limits_json fills it.
nlohmann::json account_json(const account_row& a,
                            const std::array<limits::action_defaults, limits::action_count>& defaults);

// The account's quota use on its quota day (`time_zone`, `day`), as the workers' gate counts it:
//   {"day": "UTC", "time_zone": "UTC", "date": "2026-12-03", "key_cooldown_until": null,
//    "actions": [{"action": "invite", "used_today": 3, "limit_today": 20, "left_today": 17,
//                 "used_week": 3, "limit_week": 200, "left_week": 197, "cooldown_until": null,
//                 "pace_until": "2026-12-03T16:40:00.000Z", "streak": 0}, ...]}
// (null: no limit; times ISO 8601 UTC with milliseconds; `day` repeats time_zone for the admin
// API's older clients).
nlohmann::json account_limits_json(const limits::account_status& status, const std::string& time_zone,
                                   const limits::local_day& day);

}  // namespace orch::engine
