// orch::engine account_quotas: per-account overrides of the quotas (issue 6). The settings give
// every account the same quota per action (invite_per_day, invite_per_week, ...); an override
// replaces, for one account, the day and/or week number of one action. A campaign file's
// `limits` still tightens further for that campaign (the limiter takes the smaller of both).
//
// Stored in accounts.quotas (jsonb, migration 0007, which CHECKs the same shape):
//   {"invite": {"per_day": 40, "per_week": 150}, "send": {"per_day": 90}}
// An action or field that is absent uses the default. Values are integers 0..quota_value_max.
// Only the five actions with a quota can be overridden (invite, send, visit, withdraw, search).
//
// Set with `orchestrator accounts limits ACCOUNT --invite-per-day N ...` or
// PUT /v1/accounts/{id}/limits; read by the worker's claim (engine/claim_due) and turned into the
// limiter's check::account_quota by the limits gate; shown by `accounts list` and
// GET /v1/accounts.
//
// Pure functions (no I/O), except the store methods declared in store.hpp.
#pragma once

#include "engine/limits/limits.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch::engine {

inline constexpr std::int64_t quota_value_max = 1'000'000;

// The actions an account may override, in the order they are shown.
inline constexpr std::array<limits::action, 5> quota_actions = {limits::action::invite, limits::action::send,
                                                                limits::action::visit, limits::action::withdraw,
                                                                limits::action::search};
// The actions with a quota, by name: "invite, send, visit, withdraw, search".
std::string action_list();
bool has_quota(limits::action a);

struct quota_override {
    std::optional<std::int64_t> per_day;   // nullopt: the default
    std::optional<std::int64_t> per_week;
    bool empty() const { return !per_day && !per_week; }
    bool operator==(const quota_override&) const = default;
};

// Index = limits::action. Entries of actions without a quota stay empty.
using quota_overrides = std::array<quota_override, limits::action_count>;

// An account's own quotas, as an apply reads its senders' (store::apply_outcome::own_quotas).
struct account_overrides {
    std::string account;   // its label, or its id when it has none
    quota_overrides quotas;
};

bool no_overrides(const quota_overrides& q);

// The stored form (see above). nullopt with `error` naming the field ("invite.per_day: ...")
// when `j` is not that shape. JSON null means no overrides.
std::optional<quota_overrides> overrides_from_json(const nlohmann::json& j, std::string& error);
// Same, from text (accounts.quotas::text); "" means no overrides.
std::optional<quota_overrides> parse_overrides(std::string_view text, std::string& error);
// The stored form: only the fields set; {} when there are none.
nlohmann::json to_json(const quota_overrides& q);

// A change request of PUT /v1/accounts/{id}/limits:
//   {"invite": {"per_day": 40, "per_week": 150}, "send": null}
// Each action named is replaced by the object given (a field absent or null: the default); null
// clears the action; actions not named keep their override. Returns the new overrides, or
// nullopt with `error` naming the field ("invite.per_day: must be an integer from 0 to 1000000",
// "bogus: unknown action; ...").
std::optional<quota_overrides> apply_patch(quota_overrides current, const nlohmann::json& patch, std::string& error);

// The first of `changed`'s actions whose effective week (its override, else the default) is below
// its effective day, as a message naming both and where each comes from; "" when none is. Checked
// on a change only, for the actions it names: a stored pair stays readable, and an action the
// change leaves alone is not its concern.
std::string week_below_day(const quota_overrides& q,
                           const std::array<limits::action_defaults, limits::action_count>& defaults,
                           const std::vector<limits::action>& changed);

// What the limiter gets (check::account_quota, limiter::status's `quotas`): for each action with
// an override, the full quota (the override's fields, the defaults' for the others); nullopt for
// actions without one.
using effective_quotas = std::array<std::optional<limits::quota>, limits::action_count>;
effective_quotas effective(const quota_overrides& q,
                           const std::array<limits::action_defaults, limits::action_count>& defaults);

// The view of `accounts limits` and GET /v1/accounts: per action with a quota,
//   {"per_day": 40, "per_week": 200, "per_day_source": "override", "per_week_source": "default"}
// (null: no limit; ramp-up is not applied here, see limits.action_status for today's number).
nlohmann::json quotas_view(const quota_overrides& q,
                           const std::array<limits::action_defaults, limits::action_count>& defaults);

// The time zone of an account's quota day: its own (accounts.time_zone, migration 0032), UTC when
// none is chosen yet ("").
const std::string& quota_time_zone(const std::string& account_zone);

// What moving an account's quota day from `from` to `to` (time zones; "" is UTC) does at `now`:
// "" when the date stays; else the new date and what it means for today's quotas (a later date
// starts a new day's quotas at once; an earlier one counts the later date's calls as today's).
std::string quota_day_move_note(const std::string& from, const std::string& to,
                                std::chrono::system_clock::time_point now);

}  // namespace orch::engine
